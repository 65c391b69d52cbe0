//! What a request must be before rmcp sees it (spec HTTP-002, HTTP-006,
//! HTTP-008, HTTP-009, HTTP-011, HTTP-012): a head whose MCP headers are
//! no longer than an excerpt and whose session id names a session; an id
//! rmcp answers under exactly as written; a lifecycle (a session or
//! 2026-07-28 `_meta`); room for another session; `skill_run` only where
//! its owner offers it; no method 2026-07-28 removed under that version;
//! no name longer than any `Mcp-Name` header could match. Each refusal's
//! words are [`replies`](super::replies)'.

use http::request::Parts;
use http::{HeaderMap, Method};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta, ProtocolVersion};
use serde_json::value::RawValue;

use super::door::Answer;
use super::replies;
use super::sessions::Sessions;
use crate::echo::EXCERPT_BYTES;
use crate::limits::MAX_HTTP_SESSIONS;
use crate::transport::client_id::MAX_ID_BYTES;
use crate::transport::message::{ClientId, IdKey};

/// The method of a 2026-07-28 subscription: a stream, not a request in
/// flight (HTTP-012).
const LISTEN: &str = "subscriptions/listen";

/// Methods the 2026-07-28 revision removed (SEP-2575): a request for one
/// under that version's `MCP-Protocol-Version` header is HTTP 404 with
/// -32601, as that revision says, rather than a lifecycle error (HTTP-011).
pub(super) const REMOVED_IN_2026: [&str; 5] = [
    "initialize",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    // rmcp serves no ping under 2026-07-28 and says only "ping".
    "ping",
];

/// The head's MCP headers, before the request is routed. rmcp quotes
/// MCP's own headers whole in its refusals; one longer than an excerpt is
/// refused here instead (HARD-005). A session id is visible ASCII (rmcp
/// hands out UUIDs): one that is not names no session, and rmcp, unable to
/// read it, would treat the request as sessionless and open a new session
/// past the cap the door counts (HTTP-008).
pub(super) fn head(parts: &Parts, sessions: &Sessions) -> Result<(), Box<Answer>> {
    if let Some((name, value)) = parts
        .headers
        .iter()
        .find(|(k, v)| k.as_str().starts_with("mcp-") && v.len() > EXCERPT_BYTES)
    {
        return Err(Box::new(replies::mcp_header_too_long(name, value.len())));
    }
    if let Some(v) = parts.headers.get("mcp-session-id") {
        let known = match v.to_str() {
            Ok(id) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_graphic()) => {
                // DELETE of a session that is gone is 404, as every other
                // request naming it is (rmcp answers 202 to any).
                parts.method != Method::DELETE || sessions.is_open(id)
            }
            _ => false,
        };
        if !known {
            return Err(Box::new(replies::no_session()));
        }
    }
    Ok(())
}

/// What a request must pass before rmcp sees it: an id rmcp can carry
/// (HTTP-006), room for another session (HTTP-008), and `skill_run`
/// only when the owner offers it (HTTP-009).
pub(super) fn admit(
    id: &ClientId,
    message: &ClientJsonRpcMessage,
    in_session: bool,
    sessions: &Sessions,
    allow_run: bool,
) -> Result<(), Box<Answer>> {
    if !rmcp_holds(id) {
        return Err(Box::new(replies::id_rmcp_cannot_hold(id)));
    }
    let ClientJsonRpcMessage::Request(req) = message else {
        return Ok(());
    };
    let per_request = req
        .request
        .get_meta()
        .missing_required_keys(&ProtocolVersion::V_2026_07_28)
        .is_empty();
    match &req.request {
        ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_) => {}
        _ if !in_session && !per_request => {
            return Err(Box::new(replies::no_lifecycle(id)));
        }
        _ => {}
    }
    match &req.request {
        ClientRequest::InitializeRequest(_) if !in_session => {
            let open = sessions.count();
            if open >= MAX_HTTP_SESSIONS && !sessions.make_room() {
                return Err(Box::new(replies::sessions_full(id, open)));
            }
        }
        ClientRequest::CallToolRequest(call) if !allow_run && call.params.name == "skill_run" => {
            return Err(Box::new(replies::runs_off(id)));
        }
        _ => {}
    }
    Ok(())
}

/// The refusal of a method 2026-07-28 removed, asked for under that
/// version's header (HTTP-011), read from the body alone: a removed
/// method's params need not be that method's.
pub(super) fn removed_in_2026(headers: &HeaderMap, body: &[u8]) -> Option<Answer> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Box<RawValue>>,
        method: Option<String>,
    }
    if !under_2026(headers) {
        return None;
    }
    let head: Head = serde_json::from_slice(body).ok()?;
    let method = head.method?;
    if !REMOVED_IN_2026.contains(&method.as_str()) {
        return None;
    }
    // Echoed only when it is an id (a string or a number) of bounded size.
    let id = head.id.filter(|raw| {
        let t = raw.get();
        t.len() <= MAX_ID_BYTES
            && t.starts_with(|c: char| c == '"' || c == '-' || c.is_ascii_digit())
    });
    Some(replies::removed_in_2026(id.as_deref(), &method))
}

/// A 2026-07-28 request names its tool, prompt or resource in `Mcp-Name`
/// too, which rmcp checks against the body and, on a mismatch, answers
/// quoting the body's value whole (a 3.9 MB tool name answered with a
/// 3.9 MB error). An `Mcp-*` header is at most [`EXCERPT_BYTES`]
/// (HTTP-006), so a longer name can match none: said here, with an
/// excerpt (HARD-005), as rmcp's -32020 says it.
pub(super) fn name_no_header_can_match(
    headers: &HeaderMap,
    id: &ClientId,
    message: &ClientJsonRpcMessage,
) -> Option<Answer> {
    if !under_2026(headers) {
        return None;
    }
    let ClientJsonRpcMessage::Request(r) = message else {
        return None;
    };
    let name: &str = match &r.request {
        ClientRequest::CallToolRequest(c) => &c.params.name,
        ClientRequest::GetPromptRequest(p) => &p.params.name,
        ClientRequest::ReadResourceRequest(p) => &p.params.uri,
        _ => return None,
    };
    (name.len() > EXCERPT_BYTES).then(|| replies::name_no_header_can_match(id, name))
}

/// Whether the request's `MCP-Protocol-Version` header names 2026-07-28.
fn under_2026(headers: &HeaderMap) -> bool {
    headers
        .get("mcp-protocol-version")
        .is_some_and(|v| v.as_bytes() == b"2026-07-28")
}

/// A `subscriptions/listen` rmcp serves as a stream: one with complete
/// 2026-07-28 `_meta` (HTTP-012). Without it, it is answered at once (an
/// error), as any request is.
pub(super) fn is_listen(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r)
        if r.request.method() == LISTEN
            && r.request
                .get_meta()
                .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty())
}

pub(super) fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

/// Whether rmcp's id (an i64 or a string) holds this id exactly, so its
/// answer carries the id as the client wrote it (HTTP-006). An integer
/// spelled `7.0` or `7e0` would come back as `7`.
fn rmcp_holds(id: &ClientId) -> bool {
    match &id.key {
        IdKey::Text(_) => true,
        IdKey::Whole(_) => {
            let raw = id.raw.get();
            // `-0` parses, but rmcp would answer it as `0`: an id the
            // client did not send (as `7.0` would be `7`).
            raw != "-0"
                && raw.bytes().all(|b| b.is_ascii_digit() || b == b'-')
                && raw.parse::<i64>().is_ok()
        }
        IdKey::Fraction(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use http::{HeaderValue, StatusCode};

    use super::*;

    fn id(text: &str) -> ClientId {
        ClientId::written(text)
    }

    #[test]
    fn rmcp_holds_only_an_id_it_would_echo_as_written() {
        for held in ["7", "-7", "9223372036854775807", "\"a\""] {
            assert!(rmcp_holds(&id(held)), "{held}");
        }
        for not in ["7.0", "7e0", "-0", "1.5", "9223372036854775808"] {
            assert!(!rmcp_holds(&id(not)), "{not}");
        }
    }

    #[test]
    fn a_removed_method_is_404_only_under_2026_07_28() {
        let ping = br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
        let mut headers = HeaderMap::new();
        assert!(removed_in_2026(&headers, ping).is_none());
        headers.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2026-07-28"),
        );
        let a = removed_in_2026(&headers, ping).unwrap_or_else(|| panic!("not refused"));
        assert_eq!(a.status(), StatusCode::NOT_FOUND);
        let list = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
        assert!(removed_in_2026(&headers, list).is_none());
    }
}
