//! Every answer the door gives instead of rmcp's: its status, its headers
//! and its words, each naming the rule it enforces and what to do (spec
//! HTTP-001, HTTP-002, HTTP-003, HTTP-005, HTTP-006, HTTP-007, HTTP-008,
//! HTTP-009, HTTP-011, HTTP-015). A refusal of a JSON-RPC request is a
//! JSON-RPC error under the request's id exactly as the client wrote it;
//! one before any request is read is plain text. Nothing here decides:
//! the door and its policies pick the answer.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde::Serialize;
use serde_json::value::RawValue;

use super::access::Refused;
use super::door::{Answer, PATH};
use crate::echo::{EXCERPT_BYTES, excerpt};
use crate::limits::{
    HTTP_BUDGET_WAIT_SECS, HTTP_READ_TIMEOUT_SECS, MAX_HTTP_ANSWER_BYTES, MAX_HTTP_BODIES_BYTES,
    MAX_HTTP_BODY_BYTES, MAX_HTTP_IN_FLIGHT, MAX_HTTP_SESSIONS, MAX_HTTP_STREAMS,
};
use crate::transport::ids::MAX_IN_FLIGHT;
use crate::transport::message::ClientId;

#[derive(Serialize)]
struct ErrorBody<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RawValue>,
    error: ErrorData,
}

#[derive(Serialize)]
struct ErrorData {
    code: i32,
    message: String,
}

/// A JSON-RPC error as the whole answer, under the request's id exactly
/// as the client wrote it (or `null`).
pub(crate) fn jsonrpc_error(
    status: StatusCode,
    id: Option<&RawValue>,
    code: i32,
    message: String,
) -> Answer {
    let body = serde_json::to_vec(&ErrorBody {
        jsonrpc: "2.0",
        id,
        error: ErrorData { code, message },
    })
    .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}").into_bytes());
    let mut a = Response::new(Full::new(Bytes::from(body)).boxed());
    *a.status_mut() = status;
    a.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    a
}

/// A plain-text answer.
pub(crate) fn text(status: StatusCode, message: String) -> Answer {
    let mut a = Response::new(Full::new(Bytes::from(message)).boxed());
    *a.status_mut() = status;
    a.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    a
}

/// `a` with one more header.
fn with(mut a: Answer, name: HeaderName, value: &'static str) -> Answer {
    a.headers_mut()
        .insert(name, HeaderValue::from_static(value));
    a
}

/// The raw id of a request, for an error under it.
fn raw(id: &ClientId) -> Option<&RawValue> {
    Some(&id.raw)
}

/// Whether a refusal with `status` is said at warn now: the first, and
/// then one a minute.
fn owner_hears(status: StatusCode) -> bool {
    use std::sync::OnceLock;
    use std::time::Instant;
    static LAST: OnceLock<Mutex<HashMap<u16, Instant>>> = OnceLock::new();
    let mut last = LAST
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = Instant::now();
    match last.get(&status.as_u16()) {
        Some(t) if now.duration_since(*t) < Duration::from_secs(60) => false,
        _ => {
            last.insert(status.as_u16(), now);
            true
        }
    }
}

/// A refusal of [`Access`](super::access::Access): 401 carries
/// `WWW-Authenticate: Bearer`. The owner hears of it at the default log
/// level, once a minute for each status at most: a teammate refused for
/// their Host or token is what an owner must see (a newcomer saw only
/// "listening" while teammates got 403 and 401), and a stranger's flood of
/// them must not fill the log.
pub(super) fn refused(r: Refused) -> Answer {
    if owner_hears(r.status) {
        tracing::warn!(
            "{} (refused with {}; more such refusals this minute are logged at info, SKILL_MCP_LOG=info)",
            r.message,
            r.status
        );
    } else {
        tracing::info!(status = %r.status, message = %r.message, "refused an HTTP request");
    }
    let unauthorized = r.status == StatusCode::UNAUTHORIZED;
    let a = text(r.status, r.message);
    if unauthorized {
        return with(a, header::WWW_AUTHENTICATE, "Bearer realm=\"skill-mcp\"");
    }
    a
}

/// Any method but the three Streamable HTTP uses is refused in words with
/// the methods served (HTTP-001); rmcp's own 405 said "Method Not
/// Allowed" and no rule.
pub(super) fn method_not_served(method: &Method) -> Answer {
    let a = text(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "HTTP-001: {} is not a method this server serves; {PATH} takes POST (a JSON-RPC message), GET \
             (a session's stream) and DELETE (a session's end)",
            excerpt(method.as_str())
        ),
    );
    with(a, header::ALLOW, "GET, POST, DELETE")
}

/// A path other than the endpoint's (HTTP-001).
pub(super) fn nothing_at(path: &str) -> Answer {
    text(
        StatusCode::NOT_FOUND,
        format!(
            "HTTP-001: nothing is served at {}; the MCP endpoint is {PATH}",
            excerpt(path)
        ),
    )
}

/// An MCP header longer than any this server reads (HTTP-006), which rmcp
/// would quote whole (HARD-005).
pub(super) fn mcp_header_too_long(name: &HeaderName, len: usize) -> Answer {
    text(
        StatusCode::BAD_REQUEST,
        format!(
            "HTTP-006: the {name} header is {len} bytes long; no MCP header this server reads is longer \
             than {EXCERPT_BYTES}"
        ),
    )
}

/// An `Mcp-Session-Id` naming no open session (HTTP-008), in place of
/// rmcp's "Session not found".
pub(super) fn no_session() -> Answer {
    text(
        StatusCode::NOT_FOUND,
        "HTTP-008: the Mcp-Session-Id header names no open session of this server; send initialize \
         without one to open a new session"
            .to_owned(),
    )
}

/// A GET that can open no stream: 405 with what to send (HTTP-008).
fn no_stream(why: &str) -> Answer {
    let a = text(StatusCode::METHOD_NOT_ALLOWED, format!("HTTP-008: {why}"));
    with(a, header::ALLOW, "POST, DELETE")
}

/// A GET without a session: there is no stream to open (HTTP-008).
pub(super) fn get_without_session() -> Answer {
    no_stream(
        "a GET opens the stream of a session: send initialize first and then GET with its \
                     Mcp-Session-Id (a 2026-07-28 client listens with subscriptions/listen)",
    )
}

/// A GET resuming a request's stream, which is never resumed (HTTP-008).
pub(super) fn request_stream_not_resumed() -> Answer {
    no_stream(
        "a request's stream is never resumed: this server keeps no events, and the request \
                 was answered or cancelled (a request whose connection closes is cancelled, HTTP-009); \
                 send it again under a new id",
    )
}

/// A notification or a client's answer outside a session (HTTP-002), in
/// place of rmcp's "Session ID is required".
pub(super) fn notification_without_session() -> Answer {
    text(
        StatusCode::BAD_REQUEST,
        "HTTP-002: a notification or a client's answer belongs to a session: send it with \
         the Mcp-Session-Id of the session it is for (a 2026-07-28 request needs none, and \
         its client sends no notification)"
            .to_owned(),
    )
}

/// The server's requests in flight are at their cap (HTTP-007).
pub(super) fn server_full(id: &ClientId) -> Answer {
    let a = jsonrpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        raw(id),
        -32000,
        format!(
            "HTTP-007: {MAX_HTTP_IN_FLIGHT} requests are in flight on this server, its limit; \
             wait for an answer and send this again"
        ),
    );
    with(a, header::RETRY_AFTER, "1")
}

/// The session's requests in flight are at their cap (HTTP-007).
pub(super) fn session_full(id: &ClientId) -> Answer {
    jsonrpc_error(
        StatusCode::TOO_MANY_REQUESTS,
        raw(id),
        -32000,
        format!(
            "HTTP-007: {MAX_IN_FLIGHT} requests of this session are in flight, its limit; \
             wait for an answer before sending more"
        ),
    )
}

/// A request of the session in flight has this id (HTTP-007, WIRE-006).
pub(super) fn id_in_flight(id: &ClientId) -> Answer {
    jsonrpc_error(
        StatusCode::BAD_REQUEST,
        raw(id),
        -32600,
        format!(
            "Invalid Request: HTTP-007: id {} is the id of a request of this session still in \
             flight; give each request an id of its own",
            // Bounded already: a longer id is refused (MAX_ID_BYTES).
            id.raw.get()
        ),
    )
}

/// An id rmcp could not answer under exactly as written (HTTP-006).
pub(super) fn id_rmcp_cannot_hold(id: &ClientId) -> Answer {
    jsonrpc_error(
        StatusCode::BAD_REQUEST,
        raw(id),
        -32600,
        format!(
            "Invalid Request: HTTP-006: over HTTP a request's id is an integer between -2^63 and 2^63 \
             or a string, and {} is neither; send the request again under such an id",
            // Bounded already: a longer id is refused (MAX_ID_BYTES).
            id.raw.get()
        ),
    )
}

/// A request of no lifecycle: no session and no 2026-07-28 `_meta`
/// (HTTP-002).
pub(super) fn no_lifecycle(id: &ClientId) -> Answer {
    jsonrpc_error(
        StatusCode::BAD_REQUEST,
        raw(id),
        -32600,
        "Invalid Request: HTTP-002: this request has no Mcp-Session-Id header and no 2026-07-28 \
         _meta, so it belongs to no lifecycle: send initialize first and then the Mcp-Session-Id it \
         answers with on every request, or give each request _meta with \
         io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities"
            .to_owned(),
    )
}

/// An `initialize` with `open` sessions open, at the cap, and none to
/// close for it (HTTP-008).
pub(super) fn sessions_full(id: &ClientId, open: usize) -> Answer {
    let a = jsonrpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        raw(id),
        -32000,
        format!(
            "HTTP-008: {open} sessions are open on this server, its limit of \
             {MAX_HTTP_SESSIONS}; close one (DELETE with its Mcp-Session-Id), wait for an idle \
             one to expire, or send requests with 2026-07-28 _meta, which need no session"
        ),
    );
    with(a, header::RETRY_AFTER, "10")
}

/// A `skill_run` where its owner has not offered runs (HTTP-009).
pub(super) fn runs_off(id: &ClientId) -> Answer {
    jsonrpc_error(
        StatusCode::OK,
        raw(id),
        -32602,
        "HTTP-009: skill_run is not offered over HTTP on this server: anyone who can reach the URL \
         could run a skill's scripts. Its owner can turn runs on with --http-allow-run; skill_list, \
         skill_load and skill_file work as always"
            .to_owned(),
    )
}

/// A method 2026-07-28 removed, asked for under that version (HTTP-011).
pub(super) fn removed_in_2026(id: Option<&RawValue>, method: &str) -> Answer {
    jsonrpc_error(
        StatusCode::NOT_FOUND,
        id,
        -32601,
        format!(
            "Method not found: HTTP-011: {method} is not part of protocol 2026-07-28, which this request's \
             MCP-Protocol-Version header names; a 2026-07-28 client needs no initialize (each request carries \
             _meta), and a 2025-11-25 client sends MCP-Protocol-Version: 2025-11-25"
        ),
    )
}

/// A name longer than any `Mcp-Name` header can be (HTTP-006), said with
/// an excerpt as rmcp's -32020 says a mismatch.
pub(super) fn name_no_header_can_match(id: &ClientId, name: &str) -> Answer {
    jsonrpc_error(
        StatusCode::BAD_REQUEST,
        raw(id),
        -32020,
        format!(
            "Header mismatch: HTTP-006: the request names {} ({} bytes), which no Mcp-Name header can \
             match (an MCP header is at most {EXCERPT_BYTES} bytes); no tool, prompt or resource of this \
             server has such a name: call tools/list, prompts/list or resources/list for theirs",
            excerpt(name),
            name.len()
        ),
    )
}

/// A body whose frames could not be read (HTTP-006).
pub(super) fn body_unreadable(e: &str) -> Answer {
    text(
        StatusCode::BAD_REQUEST,
        format!(
            "HTTP-006: the request body could not be read: {}",
            excerpt(e)
        ),
    )
}

/// A body that did not arrive in time (HTTP-008).
pub(super) fn body_too_slow() -> Answer {
    text(
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "HTTP-008: the request body did not arrive within {HTTP_READ_TIMEOUT_SECS} s; send it whole"
        ),
    )
}

/// A body over the limit, announced or read (HTTP-006).
pub(super) fn too_large() -> Answer {
    jsonrpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        None,
        -32700,
        format!(
            "Parse error: HTTP-006: the request body is over the {MAX_HTTP_BODY_BYTES}-byte limit; no MCP \
             request this server answers needs more"
        ),
    )
}

/// 503 with `Retry-After`, naming the budget that is full.
pub(super) fn busy(id: Option<&ClientId>, retry: &'static str, message: String) -> Answer {
    let a = jsonrpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id.map(|i| &*i.raw),
        -32000,
        message,
    );
    with(a, header::RETRY_AFTER, retry)
}

/// A request whose body was still arriving when its connection was
/// closed to make room: the quietest connection at the cap, or the body
/// stalled longest while another waited for the bodies' budget.
pub(super) fn closed_for_room() -> Answer {
    let a = busy(
        None,
        "1",
        "HTTP-008: this request's connection was closed to make room while its body was still arriving \
         (the quietest connection when the server was full, or the body stalled longest while others \
         waited); send it again, whole"
            .to_owned(),
    );
    with(a, header::CONNECTION, "close")
}

/// The bodies' budget stayed full (HTTP-007).
pub(super) fn bodies_full() -> Answer {
    busy(
        None,
        "5",
        format!(
            "HTTP-007: request bodies being read hold the server's {} MiB for them, and none was given back \
             within {HTTP_BUDGET_WAIT_SECS} s; send this again shortly",
            MAX_HTTP_BODIES_BYTES >> 20
        ),
    )
}

/// The answers' budget stayed full (HTTP-015).
pub(super) fn answers_full(id: &ClientId) -> Answer {
    busy(
        Some(id),
        "5",
        format!(
            "HTTP-015: answers being built or not yet read by their clients hold the server's {} MiB for \
             them, and none was given back within {HTTP_BUDGET_WAIT_SECS} s; send this again shortly",
            MAX_HTTP_ANSWER_BYTES >> 20
        ),
    )
}

/// Every stream's slot is taken and none came free (HTTP-008).
pub(super) fn too_many_streams(id: Option<&ClientId>) -> Answer {
    busy(
        id,
        "10",
        format!(
            "HTTP-008: {MAX_HTTP_STREAMS} streams (GET streams and subscriptions/listen) are open on this \
             server, its limit; close one, or open this one again later"
        ),
    )
}

/// What a stream closed for a newer one is told before it ends, as an SSE
/// comment (HTTP-008).
pub(super) fn stream_closed_for_newer() -> Bytes {
    Bytes::from(format!(
        ": HTTP-008: this stream was closed for a newer one: {MAX_HTTP_STREAMS} streams are open \
         on this server, its limit; open it again to go on listening\n\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> ClientId {
        ClientId::written(text)
    }

    /// The answer's status, one header's value, and its body.
    async fn parts(a: Answer, name: HeaderName) -> (StatusCode, Option<String>, String) {
        let header = a
            .headers()
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let status = a.status();
        let body = a
            .into_body()
            .collect()
            .await
            .unwrap_or_else(|e| match e {})
            .to_bytes();
        (status, header, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn a_json_rpc_error_echoes_the_id_as_written() {
        let (status, kind, body) = parts(
            jsonrpc_error(
                StatusCode::BAD_REQUEST,
                raw(&id("1.0")),
                -32600,
                "no".into(),
            ),
            header::CONTENT_TYPE,
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(kind.as_deref(), Some("application/json"));
        assert_eq!(
            body,
            r#"{"jsonrpc":"2.0","id":1.0,"error":{"code":-32600,"message":"no"}}"#
        );
        let (_, _, body) = parts(too_large(), header::CONTENT_TYPE).await;
        assert!(body.starts_with(r#"{"jsonrpc":"2.0","id":null,"#), "{body}");
    }

    #[tokio::test]
    async fn each_busy_answer_says_when_to_come_back() {
        for (a, status, retry, words) in [
            (server_full(&id("7")), 503, "1", "HTTP-007"),
            (
                sessions_full(&id("7"), 1024),
                503,
                "10",
                "1024 sessions are open",
            ),
            (bodies_full(), 503, "5", "HTTP-007"),
            (answers_full(&id("7")), 503, "5", "HTTP-015"),
            (too_many_streams(None), 503, "10", "HTTP-008"),
            (closed_for_room(), 503, "1", "closed to make room"),
        ] {
            let (got, after, body) = parts(a, header::RETRY_AFTER).await;
            assert_eq!(got.as_u16(), status, "{body}");
            assert_eq!(after.as_deref(), Some(retry), "{body}");
            assert!(body.contains(words), "{body}");
        }
        let (_, connection, _) = parts(closed_for_room(), header::CONNECTION).await;
        assert_eq!(connection.as_deref(), Some("close"));
    }

    #[tokio::test]
    async fn a_method_or_get_not_served_names_what_is() {
        let (status, allow, body) = parts(method_not_served(&Method::PUT), header::ALLOW).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(allow.as_deref(), Some("GET, POST, DELETE"));
        assert!(
            body.starts_with("HTTP-001: \"PUT\" is not a method"),
            "{body}"
        );
        for a in [get_without_session(), request_stream_not_resumed()] {
            let (status, allow, body) = parts(a, header::ALLOW).await;
            assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
            assert_eq!(allow.as_deref(), Some("POST, DELETE"));
            assert!(body.starts_with("HTTP-008: "), "{body}");
        }
    }

    #[tokio::test]
    async fn what_a_client_sent_is_quoted_as_an_excerpt() {
        let long = "n".repeat(10_000);
        let (status, _, body) = parts(nothing_at(&format!("/{long}")), header::ALLOW).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(body.len() < 600, "{body}");
        let (status, _, body) =
            parts(name_no_header_can_match(&id("\"a\""), &long), header::ALLOW).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            body.contains("-32020") && body.contains("(10000 bytes)"),
            "{body}"
        );
        assert!(body.len() < 1000, "{body}");
    }

    #[tokio::test]
    async fn a_refused_token_asks_for_a_bearer() {
        let r = Refused {
            status: StatusCode::UNAUTHORIZED,
            message: "HTTP-005: no token".into(),
        };
        let (status, challenge, body) = parts(refused(r), header::WWW_AUTHENTICATE).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(challenge.as_deref(), Some("Bearer realm=\"skill-mcp\""));
        assert_eq!(body, "HTTP-005: no token");
        let r = Refused {
            status: StatusCode::FORBIDDEN,
            message: "HTTP-003: not here".into(),
        };
        let (status, challenge, _) = parts(refused(r), header::WWW_AUTHENTICATE).await;
        assert_eq!((status, challenge), (StatusCode::FORBIDDEN, None));
    }
}
