//! What a message may be before it is decoded (spec WIRE-009, WIRE-010,
//! HARD-005): how deep it nests and how many values it holds, read in one
//! pass over its bytes; how large a request that outlives its answer may
//! be; and how long the method and URI rmcp quotes whole may be. A message
//! refused here is refused unread, by its role alone.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::client_id::MAX_ID_BYTES;
use super::message::{Incoming, refuse};
use crate::limits::{
    MAX_LASTING_MESSAGE_BYTES, MAX_MESSAGE_DEPTH, MAX_MESSAGE_VALUES, MAX_RUN_MESSAGE_BYTES,
    MAX_SKILL_NAME_BYTES,
};
use crate::uri;

pub(crate) use crate::limits::{MAX_METHOD_BYTES, MAX_SKILL_URI_BYTES};

// The URI bound is that of the longest name under this server's scheme.
const _: () =
    assert!(MAX_SKILL_URI_BYTES == uri::PREFIX.len() + MAX_SKILL_NAME_BYTES + "/SKILL.md".len());

/// The refusal of a message over a bound, read without building a tree of
/// it; `None` when it is within them all.
pub(super) fn refused_unread(text: &[u8]) -> Option<Incoming> {
    if let Some(why) = too_complex(text) {
        return Some(match role_alone(text) {
            // A notification or a client's answer is never answered
            // (WIRE-001): an error under a response's id would be a
            // second answer to one of the client's own requests.
            Role::NotRequest => {
                Incoming::Drop(format!("a notification or response refused unread: {why}"))
            }
            Role::Request(id) => refuse(id, -32600, why),
            Role::Unknown => refuse(None, -32600, why),
        });
    }
    let why = too_long_to_keep(text)?;
    Some(refuse(role_alone(text).id(), -32600, why))
}

/// Why a message is refused for its shape before any tree of it is built
/// (WIRE-009), from one pass over its bytes: how deep it nests, and how
/// many values it holds (each container and each `,` outside strings).
/// Every decoder of a message builds a tree whose nodes cost tens of bytes
/// each, so a 4 MiB body of arrays nested 100 deep took the server from
/// 22 MB to 737 MB and its worker threads for seconds; no MCP message
/// nests deeper than a few levels or holds more than a few hundred values.
fn too_complex(text: &[u8]) -> Option<String> {
    let (mut depth, mut values) = (0usize, 1usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                values += 1;
                if depth > MAX_MESSAGE_DEPTH {
                    return Some(format!(
                        "Invalid Request: WIRE-009: the message nests deeper than {MAX_MESSAGE_DEPTH} arrays and \
                         objects; no MCP message needs more than a few levels: send its values flatter"
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => continue,
        }
        if values > MAX_MESSAGE_VALUES {
            return Some(format!(
                "Invalid Request: WIRE-009: the message holds more than {MAX_MESSAGE_VALUES} JSON values; no MCP \
                 message needs that many: send fewer, or one long string instead of many small ones"
            ));
        }
    }
    None
}

/// What a message refused unread is: a request (with its id, when that is
/// short), something else, or unknown (serde could not even skip through
/// it, so `null` answers it as an unreadable request's error does).
enum Role {
    Request(Option<Box<RawValue>>),
    NotRequest,
    Unknown,
}

impl Role {
    fn id(self) -> Option<Box<RawValue>> {
        match self {
            Role::Request(id) => id,
            Role::NotRequest | Role::Unknown => None,
        }
    }
}

/// The role and id of a message, read without building a tree: serde skips
/// every other member without allocating.
fn role_alone(text: &[u8]) -> Role {
    #[derive(Deserialize)]
    struct Head {
        id: Option<Box<RawValue>>,
        method: Option<serde::de::IgnoredAny>,
    }
    let Ok(head) = serde_json::from_slice::<Head>(text) else {
        return Role::Unknown;
    };
    match (head.method, head.id) {
        (Some(_), Some(id)) => {
            let t = id.get();
            let short = t.len() <= MAX_ID_BYTES
                && (t.starts_with('"')
                    || t.starts_with('-')
                    || t.starts_with(|c: char| c.is_ascii_digit()));
            Role::Request(short.then_some(id))
        }
        _ => Role::NotRequest,
    }
}

/// Why a request is refused for its size although under the transport's
/// bound (WIRE-010): one that can outlive its answer keeps what it carried
/// — an `initialize` for its session's life, a `subscriptions/listen` for
/// its stream's, a confirmed `skill_run` while a person is asked — so 48
/// sessions opened with 4 MB of `capabilities.experimental` held 193 MB.
fn too_long_to_keep(text: &[u8]) -> Option<String> {
    if text.len() <= MAX_LASTING_MESSAGE_BYTES {
        return None;
    }
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: Option<std::borrow::Cow<'a, str>>,
    }
    let head = serde_json::from_slice::<Head>(text).ok()?;
    let method = head.method?;
    let (what, limit) = match method.as_ref() {
        "initialize" => (
            "an initialize is kept for as long as its session lasts",
            MAX_LASTING_MESSAGE_BYTES,
        ),
        "subscriptions/listen" => (
            "a subscriptions/listen is kept for as long as it listens",
            MAX_LASTING_MESSAGE_BYTES,
        ),
        "tools/call"
            if head
                .params
                .and_then(|p| p.name)
                .is_some_and(|n| n == "skill_run") =>
        {
            (
                "a skill_run is kept while a person is asked to approve it",
                MAX_RUN_MESSAGE_BYTES,
            )
        }
        _ => return None,
    };
    (text.len() > limit).then(|| {
        format!(
            "Invalid Request: WIRE-010: {what}, so it is at most {limit} bytes, and this one is {}; send it \
             without bulk (in _meta, capabilities or arguments)",
            text.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `head` (a request whose params are open) padded to `size` bytes.
    fn padded(head: &str, size: usize) -> String {
        let pad = size.saturating_sub(head.len() + r#","x":""}}"#.len());
        let text = format!(r#"{head},"x":"{}"}}}}"#, "p".repeat(pad));
        assert_eq!(text.len(), size);
        text
    }

    #[test]
    fn only_a_request_that_outlives_its_answer_is_held_to_the_lasting_bound() {
        let over = MAX_LASTING_MESSAGE_BYTES + 1;
        let init = padded(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":1"#,
            over,
        );
        let why = too_long_to_keep(init.as_bytes()).unwrap_or_default();
        assert!(
            why.contains("WIRE-010") && why.contains("its session lasts"),
            "{why}"
        );
        let list = padded(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":1"#,
            over,
        );
        assert_eq!(too_long_to_keep(list.as_bytes()), None);
        // A skill_run may be larger: a person approves it while it waits.
        let run = padded(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"skill_run""#,
            over,
        );
        assert_eq!(too_long_to_keep(run.as_bytes()), None);
    }

    #[test]
    fn a_notification_too_deep_is_dropped_and_a_request_refused_under_its_id() {
        let deep = format!(
            "{}{}",
            "[".repeat(MAX_MESSAGE_DEPTH + 1),
            "]".repeat(MAX_MESSAGE_DEPTH + 1)
        );
        let note = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{deep}}}}}"#);
        assert!(matches!(
            refused_unread(note.as_bytes()),
            Some(Incoming::Drop(_))
        ));
        let request =
            format!(r#"{{"jsonrpc":"2.0","id":"r","method":"x","params":{{"a":{deep}}}}}"#);
        match refused_unread(request.as_bytes()) {
            Some(Incoming::Refuse(r)) => {
                assert_eq!(r.code, -32600);
                assert_eq!(r.id.as_deref().map(RawValue::get), Some("\"r\""));
            }
            other => panic!("{other:?}"),
        }
        // Unreadable even to skip through: no id can be told.
        let unclosed = format!(r#"{{"jsonrpc":"2.0","id":"r","method":"x","params":{deep}"#);
        match refused_unread(unclosed.as_bytes()) {
            Some(Incoming::Refuse(r)) => assert!(r.id.is_none()),
            other => panic!("{other:?}"),
        }
        assert!(refused_unread(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none());
    }
}
