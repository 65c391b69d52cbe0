//! One client line, as the server loop sees it: the stdio guard's classify
//! (before and after the handshake), then rmcp's own decode of a client
//! message. Neither may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rmcp::model::ClientJsonRpcMessage;
use serde_json::Value;
use skill_mcp::stdio::{Verdict, classify};

fuzz_target!(|data: &[u8]| {
    for started in [false, true] {
        if let Verdict::Refuse { id, code, message } = classify(data, started) {
            // The error line the guard writes must carry a legal id.
            assert!(
                matches!(id, Value::Null | Value::String(_) | Value::Number(_)),
                "refused with id {id}"
            );
            assert!(
                matches!(code, -32700 | -32600 | -32601 | -32602),
                "code {code}"
            );
            // Whatever the line, the guard's own words are bounded: it
            // quotes no more than an excerpt of it (HARD-005).
            assert!(
                message.len() + id.to_string().len() < 1024,
                "a refusal of {} bytes",
                message.len()
            );
        }
    }
    if let Ok(msg) = serde_json::from_slice::<ClientJsonRpcMessage>(data) {
        let _ = serde_json::to_vec(&msg);
    }
});
