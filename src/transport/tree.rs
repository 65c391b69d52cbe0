//! The rules for every message, read through a `Value` tree (spec
//! WIRE-001, WIRE-002, WIRE-006, HARD-005): what is not a JSON-RPC message
//! and why, in words for its framing (a line, a request body); bounded
//! ids and methods; params that are no object; a request of a method rmcp
//! types whose params do not decode as it. A member given twice counts
//! its last, as a tree keeps it.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::bounds::{MAX_METHOD_BYTES, MAX_SKILL_URI_BYTES};
use super::client_id::{ClientId, IdKey, MAX_ID_BYTES, client_id, head_id};
use super::message::{Framing, Incoming, refuse};
use super::typed::why_not_typed;
use crate::echo::excerpt;

/// Reads one message through a `Value`: the rules for every message. The
/// text is parsed once; only a message that is not JSON, or whose id is a
/// number with a fraction or past 2^64, is looked at again, for the id
/// alone. Its refusals name the message by its `framing`.
pub(super) fn read_value(text: &[u8], framing: Framing) -> Incoming {
    let v: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => return not_json(text, &e, framing),
    };
    let Value::Object(obj) = v else {
        let message = if v.is_array() {
            format!(
                "Invalid Request: batches are not part of MCP; send one message per {}",
                framing.each()
            )
        } else {
            "Invalid Request: a JSON-RPC message is a JSON object".to_owned()
        };
        return refuse(None, -32600, message);
    };
    let id = match obj.get("id") {
        None => None,
        Some(v) => match client_id(v, text) {
            Ok(id) => Some(id),
            Err(why) => return refuse(None, -32600, why),
        },
    };
    let raw = |id: &Option<ClientId>| id.as_ref().map(|i| i.raw.clone());
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return refuse(
            raw(&id),
            -32600,
            "Invalid Request: expected {\"jsonrpc\": \"2.0\", \"method\": …} with a string or number id",
        );
    }
    let method = obj.get("method").and_then(Value::as_str).map(str::to_owned);
    if obj.get("params").is_some_and(|p| !p.is_object()) {
        // Only a request is answered: a notification or a response never
        // is (JSON-RPC), not even to refuse it, and a response's id is the
        // id of a request of the server's, not one the client waits on.
        return match (&method, id) {
            (Some(_), Some(id)) => refuse(
                Some(id.raw),
                -32602,
                "Invalid params: \"params\" must be an object",
            ),
            _ => Incoming::Drop("a notification or response whose params are no object".into()),
        };
    }
    let is_response = obj.contains_key("result") || obj.contains_key("error");
    match (method, id) {
        (Some(m), Some(id)) => read_request(obj, &m, id),
        (Some(m), None) => {
            let cancels = (m == "notifications/cancelled")
                .then(|| {
                    obj.get("params")
                        .and_then(|p| p.get("requestId"))
                        .and_then(IdKey::of)
                })
                .flatten();
            match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(obj)) {
                Ok(message) => Incoming::Notification {
                    message: Box::new(message),
                    cancels,
                },
                // A notification is never answered, not even to refuse it.
                Err(e) => Incoming::Drop(format!(
                    "a notification rmcp cannot take: {}",
                    excerpt(&e.to_string())
                )),
            }
        }
        (None, _) if is_response => {
            match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(obj)) {
                Ok(message) => Incoming::Response(Box::new(message)),
                // Nor is a response answered.
                Err(e) => Incoming::Drop(format!(
                    "a response rmcp cannot take: {}",
                    excerpt(&e.to_string())
                )),
            }
        }
        (None, id) => refuse(
            raw(&id),
            -32600,
            "Invalid Request: no \"method\" (and not a response)",
        ),
    }
}

/// A request's rules past its envelope (WIRE-002, HARD-005): a method and
/// a `skills/get` URI no longer than rmcp may quote whole, and params that
/// decode as the method's own, so a method rmcp types is never "not
/// found" for its params.
fn read_request(mut obj: Map<String, Value>, m: &str, id: ClientId) -> Incoming {
    if m.len() > MAX_METHOD_BYTES {
        return refuse(
            Some(id.raw),
            -32601,
            format!(
                "Method not found: {} (no method this server answers is longer than {MAX_METHOD_BYTES} bytes)",
                excerpt(m)
            ),
        );
    }
    if m == "skills/get"
        && let Some(u) = obj
            .get("params")
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
        && u.len() > MAX_SKILL_URI_BYTES
    {
        return refuse(
            Some(id.raw),
            -32602,
            format!(
                "no skill at {}: the URI is {} bytes long, and no SKILL.md URI this server serves is longer than \
                 {MAX_SKILL_URI_BYTES}; skills/get takes the SKILL.md URI skills/list gives",
                excerpt(u),
                u.len()
            ),
        );
    }
    // rmcp's own id type holds an i64 or a string; the caller
    // replaces this one with its own before rmcp sees it.
    obj.insert("id".into(), Value::from(0));
    // Decoded from the value by reference: the value is kept, to say
    // why a request rmcp types did not decode, without a copy of
    // every request.
    let v = Value::Object(obj);
    let message = match ClientJsonRpcMessage::deserialize(&v) {
        Ok(m) => m,
        // Even rmcp's catch-all custom request failed (a `_meta`
        // that is no object, say): for a method rmcp types, its
        // params are what is wrong (WIRE-002).
        Err(e) => {
            return match why_not_typed(m, &v) {
                Some(why) => bad_params(id, m, &why),
                None => refuse(
                    Some(id.raw),
                    -32600,
                    format!("Invalid Request: {}", excerpt(&e.to_string())),
                ),
            };
        }
    };
    if let ClientJsonRpcMessage::Request(r) = &message
        && let ClientRequest::CustomRequest(custom) = &r.request
        && let Some(why) = why_not_typed(&custom.method, &v)
    {
        // A method rmcp types whose params did not decode as it:
        // rmcp would call it unknown (WIRE-002).
        return bad_params(id, m, &why);
    }
    Incoming::Request {
        id,
        message: Box::new(message),
    }
}

/// The refusal of a request to a method rmcp types whose params do not
/// decode as that method's (WIRE-002): -32602, with the decoding error.
fn bad_params(id: ClientId, method: &str, why: &str) -> Incoming {
    refuse(
        Some(id.raw),
        -32602,
        format!(
            "Invalid params: the parameters of {method} do not match its schema ({})",
            excerpt(why)
        ),
    )
}

/// The refusal of a message that is not JSON (WIRE-001): -32700, with the
/// request's id when the rest of the text still shows one that decodes on
/// its own — a lone surrogate escape elsewhere in a request spoils the
/// message, not its id.
fn not_json(text: &[u8], e: &serde_json::Error, framing: Framing) -> Incoming {
    let id = head_id(text).filter(|raw| {
        raw.get().len() <= MAX_ID_BYTES
            && serde_json::from_str::<Value>(raw.get())
                .ok()
                .as_ref()
                .and_then(IdKey::of)
                .is_some()
    });
    let surrogate = e.to_string().contains("escape");
    let message = if let Err(bad) = std::str::from_utf8(text) {
        // serde says "invalid unicode code point", which names neither the
        // encoding nor what to send (a client that wrote Latin-1, say).
        let at = bad.valid_up_to();
        format!(
            "Parse error: the message is not UTF-8 (byte 0x{:02X} at byte {at} starts no UTF-8 character); \
             JSON-RPC messages are UTF-8 text: send it encoded as UTF-8",
            text.get(at).copied().unwrap_or(0)
        )
    } else if text.starts_with("\u{feff}".as_bytes()) {
        // JSON (RFC 8259 §8.1) is sent without a byte-order mark; say so
        // rather than "expected value at column 1", which points nowhere.
        // It says "the line" through either door, as it always has.
        "Parse error: the line starts with a byte-order mark (U+FEFF); send each JSON-RPC message without one".to_owned()
    } else if e.to_string().contains("number out of range") {
        // Valid JSON, but a number past what a 64-bit float holds
        // (`1e400`): no JSON-RPC peer can mean it as an id or a value.
        format!(
            "Parse error: the message holds a number too large to read ({e}); ids and values are numbers a 64-bit float holds, or strings"
        )
    } else if surrogate {
        format!(
            "Parse error: the message holds a \\u escape that is no character, such as a lone UTF-16 surrogate ({e}); \
             send text as UTF-8 or as a surrogate pair"
        )
    } else {
        format!("Parse error: {} is not JSON ({e})", framing.the_message())
    };
    refuse(id, -32700, message)
}
