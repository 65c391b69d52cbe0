//! One client line, as the server loop sees it: the transport's read of
//! one message, then rmcp's own decode of a client message. Neither may
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;
use skill_mcp::transport::message::{Framing, Incoming, read};

fuzz_target!(|data: &[u8]| {
    if let Incoming::Refuse(r) = read(data, Framing::Line) {
        // The error the transport writes must carry a legal id.
        let id: Value = r
            .id
            .as_ref()
            .map_or(Value::Null, |raw| serde_json::from_str(raw.get()).unwrap_or(Value::Bool(false)));
        assert!(
            matches!(id, Value::Null | Value::String(_) | Value::Number(_)),
            "refused with id {id}"
        );
        assert!(matches!(r.code, -32700 | -32600 | -32601 | -32602), "code {}", r.code);
        // Whatever the line, the transport's own words are bounded: it
        // quotes no more than an excerpt of it (HARD-005).
        assert!(
            r.message.len() + id.to_string().len() < 1024,
            "a refusal of {} bytes",
            r.message.len()
        );
    }
    if let Ok(msg) = serde_json::from_slice::<ClientJsonRpcMessage>(data) {
        let _ = serde_json::to_vec(&msg);
    }
});
