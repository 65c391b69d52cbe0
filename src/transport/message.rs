//! One client message, read once (spec WIRE-001, WIRE-002, WIRE-006,
//! HARD-005): what it is, or the JSON-RPC error it gets instead. No I/O and
//! no state, so each door (stdio's lines, HTTP's bodies) applies the same
//! rules to each message it frames, and a refusal names the message as its
//! door frames it. The bounds come first ([`bounds`](super::bounds)), then
//! the common request decoded by its own type ([`typed`](super::typed)),
//! then the rules through a tree ([`tree`](super::tree)); ids are
//! [`client_id`](super::client_id)'s.

use rmcp::model::ClientJsonRpcMessage;
use serde_json::value::RawValue;

use super::{bounds, tree, typed};

pub use super::client_id::{ClientId, IdKey};

/// What frames a message: the words its refusals name it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// A line of stdio, without its newline (WIRE-001).
    Line,
    /// The body of an HTTP request (HTTP-006).
    Body,
}

impl Framing {
    /// The message as its framing names it: "the line is not JSON".
    pub(super) fn the_message(self) -> &'static str {
        match self {
            Framing::Line => "the line",
            Framing::Body => "the request body",
        }
    }

    /// What carries one message each: "send one message per line".
    pub(super) fn each(self) -> &'static str {
        match self {
            Framing::Line => "line",
            Framing::Body => "request",
        }
    }
}

/// A JSON-RPC error the transport answers itself; `id` is `None` when the
/// request's id could not be read (written as `null`).
#[derive(Debug)]
pub struct Refusal {
    pub id: Option<Box<RawValue>>,
    pub code: i32,
    pub message: String,
}

/// What one client message is.
#[derive(Debug)]
pub enum Incoming {
    /// A request for rmcp; its id is still the client's (the caller gives
    /// rmcp its own, WIRE-006).
    Request {
        id: ClientId,
        message: Box<ClientJsonRpcMessage>,
    },
    /// A notification; `cancels` is the id a `notifications/cancelled` names.
    Notification {
        message: Box<ClientJsonRpcMessage>,
        cancels: Option<IdKey>,
    },
    /// The client's answer to a request of the server's.
    Response(Box<ClientJsonRpcMessage>),
    /// Answered here with this error; nothing goes to rmcp.
    Refuse(Refusal),
    /// Neither answered nor passed on (logged): a message that is never
    /// answered, and that rmcp could not take.
    Drop(String),
}

pub(super) fn refuse(id: Option<Box<RawValue>>, code: i32, message: impl Into<String>) -> Incoming {
    Incoming::Refuse(Refusal {
        id,
        code,
        message: message.into(),
    })
}

/// Reads one message framed by `framing`. A well-formed request rmcp
/// types is decoded by its own type straight from the text
/// (`typed::read_typed`); anything else by the tree (`tree::read_value`),
/// whose refusals and messages are the rules.
pub fn read(text: &[u8], framing: Framing) -> Incoming {
    read_decoding(text, framing).0
}

/// [`read`], and whether the message was decoded straight from its text
/// as rmcp decodes it (`true`), or through a tree whose reading rmcp's
/// may not share — a member given twice, say, where the tree keeps the
/// last and rmcp refuses. The HTTP door, which hands rmcp the body, hands
/// it the message written again from the tree in the second case, so both
/// doors answer alike (HTTP-006).
pub fn read_decoding(text: &[u8], framing: Framing) -> (Incoming, bool) {
    if let Some(refused) = bounds::refused_unread(text) {
        return (refused, false);
    }
    match typed::read_typed(text) {
        Some(incoming) => (incoming, true),
        None => (tree::read_value(text, framing), false),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::super::bounds::{MAX_METHOD_BYTES, MAX_SKILL_URI_BYTES};
    use super::super::client_id::MAX_ID_BYTES;
    use super::super::tree::read_value;
    use super::super::typed::read_typed;
    use super::*;
    use crate::limits::{MAX_MESSAGE_DEPTH, MAX_MESSAGE_VALUES, MAX_SKILL_NAME_BYTES};

    /// A message as stdio frames it.
    fn read_line(text: &[u8]) -> Incoming {
        read(text, Framing::Line)
    }

    #[test]
    fn a_refusal_names_the_message_as_its_door_frames_it() {
        for (framing, not_json, batch) in [
            (
                Framing::Line,
                "Parse error: the line is not JSON (",
                "send one message per line",
            ),
            (
                Framing::Body,
                "Parse error: the request body is not JSON (",
                "send one message per request",
            ),
        ] {
            let words = |text: &[u8]| match read(text, framing) {
                Incoming::Refuse(r) => r.message,
                other => panic!("{other:?}"),
            };
            assert!(words(b"{not json").starts_with(not_json), "{framing:?}");
            assert!(words(b"[1,2]").ends_with(batch), "{framing:?}");
        }
    }

    #[test]
    fn a_message_too_deep_or_too_many_values_is_refused_before_decoding() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{"x":{}1{}}}}}"#,
            "[".repeat(MAX_MESSAGE_DEPTH),
            "]".repeat(MAX_MESSAGE_DEPTH)
        );
        let many = format!(
            r#"{{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{{"x":[{}0]}}}}"#,
            "0,".repeat(MAX_MESSAGE_VALUES)
        );
        for (text, id) in [(deep, "7"), (many, "\"a\"")] {
            match read_line(text.as_bytes()) {
                Incoming::Refuse(r) => {
                    assert_eq!(r.code, -32600);
                    assert!(r.message.contains("WIRE-009"), "{}", r.message);
                    assert_eq!(r.id.as_deref().map(RawValue::get), Some(id));
                }
                other => panic!("not refused: {other:?}"),
            }
        }
        // Brackets and commas inside strings are text, not structure.
        let quoted = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"x":"{}\"{}"}}}}"#,
            "[,".repeat(MAX_MESSAGE_VALUES),
            "{".repeat(100)
        );
        assert!(matches!(
            read_line(quoted.as_bytes()),
            Incoming::Request { .. }
        ));
        // Just within both bounds: read as usual.
        let within = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"x":{}1{}}}}}"#,
            "[".repeat(MAX_MESSAGE_DEPTH - 2),
            "]".repeat(MAX_MESSAGE_DEPTH - 2)
        );
        assert!(matches!(
            read_line(within.as_bytes()),
            Incoming::Request { .. }
        ));
    }

    fn code(line: &str) -> Option<i32> {
        match read_line(line.as_bytes()) {
            Incoming::Refuse(r) => Some(r.code),
            _ => None,
        }
    }

    #[test]
    fn lines_are_classified() {
        assert_eq!(code("{not json"), Some(-32700));
        assert_eq!(code("[1,2]"), Some(-32600));
        assert_eq!(code("42"), Some(-32600));
        assert_eq!(code(r#"{"id":1,"method":"x"}"#), Some(-32600));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#),
            Some(-32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#),
            Some(-32602)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}"#),
            Some(-32602)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":4,"method":"no/such","params":{}}"#),
            None
        );
        assert!(matches!(
            read_line(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#),
            Incoming::Request { .. }
        ));
        assert!(matches!(
            read_line(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.0}}"#),
            Incoming::Notification { cancels: Some(IdKey::Whole(1)), .. }
        ));
    }

    /// The direct decode answers only what the tree would answer, and the
    /// same way: over requests of each kind, odd ids, odd params and
    /// refusals, wherever [`read_typed`] answers its answer is
    /// [`read_value`]'s, and it answers the common requests.
    #[test]
    fn the_direct_decode_equals_the_decode_through_a_tree() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let answered = [
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"skill://a/assets/logo.png",{meta}}}}}"#
            ),
            format!(
                r#"{{"id":"x-\u0041","method":"tools/call","jsonrpc":"2.0","params":{{"name":"skill_file","arguments":{{"name":"a","path":"SKILL.md"}},{meta}}}}}"#
            ),
            r#"{"jsonrpc":"2.0","id":-7,"method":"ping"}"#.to_owned(),
            r#" {"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/list"} "#.to_owned(),
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/list","extra":[1,2.5e3]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"a","arguments":{"k":"v"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":5,"method":"prompts/list"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":6,"method":"resources/templates/list"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"a"},"argument":{"name":"x","value":"y"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"info"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":9,"method":"resources/subscribe","params":{"uri":"skill://a/SKILL.md"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"skill_run","arguments":{},"_meta":{"progressToken":3}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":11,"method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}"#.to_owned(),
            format!(
                r#"{{"jsonrpc":"2.0","id":12,"method":"skills/get","params":{{"uri":"skill://{}/SKILL.md",{meta}}}}}"#,
                "a".repeat(MAX_SKILL_URI_BYTES - "skill:///SKILL.md".len())
            ),
        ];
        let passed_on = [
            // Optional params: rmcp drops them whole on an error inside
            // (a member twice), where the tree keeps the last.
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"abc"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"cursor":"z","cursor":"z"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.1","id":1,"method":"ping"}"#.to_owned(),
            r#"{"id":1,"method":"ping"}"#.to_owned(),
            r#"["2.0",1,"ping"]"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}"#.to_owned(),
            // One byte past the bound: the tree refuses it in its words.
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{{"uri":"skill://{}/SKILL.md"}}}}"#,
                "a".repeat(MAX_SKILL_URI_BYTES + 1 - "skill:///SKILL.md".len())
            ),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","error":null}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a","uri":"b"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":7}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#, "i".repeat(MAX_ID_BYTES + 1)),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{}"}}"#, "m".repeat(MAX_METHOD_BYTES + 1)),
        ];
        for text in &answered {
            let direct = read_typed(text.as_bytes())
                .unwrap_or_else(|| panic!("not decoded directly: {text}"));
            assert_eq!(
                format!("{direct:?}"),
                format!("{:?}", read_value(text.as_bytes(), Framing::Line)),
                "{text}"
            );
        }
        for text in &passed_on {
            if let Some(direct) = read_typed(text.as_bytes()) {
                assert_eq!(
                    format!("{direct:?}"),
                    format!("{:?}", read_value(text.as_bytes(), Framing::Line)),
                    "{text}"
                );
            }
            assert_eq!(
                format!("{:?}", read_line(text.as_bytes())),
                format!("{:?}", read_value(text.as_bytes(), Framing::Line)),
                "{text}"
            );
        }
    }

    #[test]
    fn every_id_json_rpc_allows_is_kept_as_written() {
        for (id, key) in [
            ("1", IdKey::Whole(1)),
            ("1.0", IdKey::Whole(1)),
            ("1e0", IdKey::Whole(1)),
            ("-7", IdKey::Whole(-7)),
            ("18446744073709551615", IdKey::Whole(1i128 << 64)),
            ("1.5", IdKey::Fraction(1.5f64.to_bits())),
            (r#""a\"b""#, IdKey::Text("a\"b".into())),
            (r#""\u0041""#, IdKey::Text("A".into())),
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            match read_line(line.as_bytes()) {
                Incoming::Request { id: got, .. } => {
                    assert_eq!(got.key, key, "{id}");
                    if id.contains('.') || id.contains('e') || id.len() > 19 {
                        assert_eq!(got.raw.get(), id, "a number is echoed as written");
                    }
                }
                other => panic!("{id}: {other:?}"),
            }
        }
    }

    #[test]
    fn what_a_reply_would_echo_whole_is_bounded_here() {
        let big = "x".repeat(10 * 1024 * 1024);
        let refused = |v: Value| match read_line(v.to_string().as_bytes()) {
            Incoming::Refuse(r) => r,
            other => panic!("passed on: {other:?}"),
        };
        let r = refused(serde_json::json!({"jsonrpc": "2.0", "id": big, "method": "ping"}));
        assert_eq!((r.id.is_none(), r.code), (true, -32600));
        assert!(
            r.message.contains("10485760 bytes") && r.message.len() < 300,
            "{}",
            r.message
        );
        let r = refused(serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": big}));
        assert_eq!(r.code, -32601);
        assert_eq!(r.id.map(|i| i.get().to_owned()).as_deref(), Some("3"));
        assert!(
            r.message.contains("(10485560 more bytes)") && r.message.len() < 400,
            "{}",
            r.message
        );
        let uri = format!("skill://{big}/SKILL.md");
        let r = refused(
            serde_json::json!({"jsonrpc": "2.0", "id": "a", "method": "skills/get", "params": {"uri": uri}}),
        );
        assert_eq!(r.code, -32602);
        let digits = "9".repeat(300);
        let r = match read_line(
            format!(r#"{{"jsonrpc":"2.0","id":{digits},"method":"ping"}}"#).as_bytes(),
        ) {
            Incoming::Refuse(r) => r,
            other => panic!("passed on: {other:?}"),
        };
        assert_eq!((r.id.is_none(), r.code), (true, -32600));
        // At the bounds, everything passes on to rmcp as before.
        let longest = format!("skill://{}/SKILL.md", "n".repeat(MAX_SKILL_NAME_BYTES));
        assert_eq!(longest.len(), MAX_SKILL_URI_BYTES);
        for v in [
            serde_json::json!({"jsonrpc": "2.0", "id": "i".repeat(MAX_ID_BYTES), "method": "ping"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "m".repeat(MAX_METHOD_BYTES)}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "skills/get", "params": {"uri": longest}}),
            serde_json::json!({"jsonrpc": "2.0", "method": big}),
        ] {
            assert!(!matches!(
                read_line(v.to_string().as_bytes()),
                Incoming::Refuse(_)
            ));
        }
    }

    #[test]
    fn a_lone_surrogate_keeps_the_id_it_spoils_the_message_of() {
        let r = match read_line(
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"\ud800"}}"#,
        ) {
            Incoming::Refuse(r) => r,
            other => panic!("{other:?}"),
        };
        assert_eq!(r.code, -32700);
        assert_eq!(r.id.map(|i| i.get().to_owned()).as_deref(), Some("5"));
        assert!(r.message.contains("surrogate"), "{}", r.message);
        let r = match read_line(br#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#) {
            Incoming::Refuse(r) => r,
            other => panic!("{other:?}"),
        };
        assert!(
            r.id.is_none(),
            "an id that is itself no string is not echoed"
        );
    }
}
