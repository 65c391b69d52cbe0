//! `ping` carrying 2026-07-28 `_meta`, on each door and in each lifecycle.
//!
//! Found by the attack of 2026-12-06 (second pass): rmcp treats `ping` as
//! a method the 2026-07-28 revision does not serve — a ping whose `_meta`
//! names that version is answered -32601 with the bare message "ping" —
//! except before any lifecycle on stdio, where it answers it (WIRE-008).
//! So the same request gets a result as the first line over stdio, and
//! -32601 "ping" (HTTP 404) as a 2026-07-28 POST, and -32601 "ping" inside
//! a 2025-11-25 session, where WIRE-008 said "everything passes (… a
//! request with `_meta` is served in the session)". A client was told
//! neither which rule refused it nor what to send instead, which HTTP-011
//! gives every other method 2026-07-28 dropped. Decided: 2026-07-28 has no
//! ping (the official suite's sep-2575 404 case), so HTTP-011 now explains
//! it over HTTP and WIRE-008 names the exception.

use std::time::Duration;

use crate::common;

use common::http::*;
use serde_json::{Value, json};

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn ping_with_meta(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"_meta":{META}}}}}"#)
}

/// A refusal of `ping` says why; a bare method name says nothing.
fn served_or_explained(answer: &Value, door: &str) {
    if answer.get("result").is_some() {
        return;
    }
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("2026-07-28") && message.len() > "ping".len(),
        "{door}: a ping carrying 2026-07-28 _meta was refused without a reason: {answer}"
    );
}

/// WIRE-008's exception, as decided after the attack: inside a 2025-11-25
/// session a `ping` whose `_meta` names 2026-07-28 is rmcp's -32601 under
/// its id (that revision has no ping), while the same session's plain
/// `ping` is served. Whatever the answer, it comes, under the right id.
#[test]
fn a_ping_with_2026_meta_in_a_2025_session_is_refused_under_its_id_over_stdio() {
    let dir = skills();
    let mut s = common::Raw::in_session(dir.path());
    s.send(&ping_with_meta(2));
    let answer: Value = serde_json::from_str(
        &s.line_within(Duration::from_secs(20))
            .expect("an answer to ping"),
    )
    .expect("JSON");
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["error"]["code"], -32601, "WIRE-008: {answer}");
    s.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    let plain: Value = serde_json::from_str(
        &s.line_within(Duration::from_secs(20))
            .expect("an answer to the plain ping"),
    )
    .expect("JSON");
    assert_eq!(plain["id"], 3, "{plain}");
    assert_eq!(plain.get("result"), Some(&json!({})), "{plain}");
}

#[test]
fn a_2026_ping_over_http_is_served_or_refused_with_a_reason() {
    let s = start("127.0.0.1:0", &[], &[]);
    let a = post(
        s.port,
        &ping_with_meta(3),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "ping"),
        ],
    );
    let answer = a.json();
    assert_eq!(answer["id"], 3, "{a:?}");
    served_or_explained(&answer, "HTTP");
}
