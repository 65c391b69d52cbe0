//! A request that names a member twice, sent over stdio and over HTTP
//! (spec HTTP-006: a body is read by the stdio transport's rules; WIRE-002:
//! a method rmcp types is never "method not found").
//!
//! Found by the attack of 2026-12-06 (second pass): the HTTP door checks a
//! body with `transport::message::read`, which reads JSON through a
//! `serde_json::Value` (a member given twice: the last one counts) and
//! accepts it, and then hands rmcp the body's bytes, which rmcp decodes
//! again with its typed structs — and those refuse a field given twice. So
//! the same bytes that stdio answers get, over HTTP, either a plain-text
//! 415 "fail to deserialize request body unrecognized JSON-RPC message"
//! (a member of the envelope twice: no JSON-RPC answer, no id), or -32601
//! with the bare method name as its message (a typed method's param
//! twice: rmcp fell back to its custom request) — what WIRE-002 forbids.

use std::time::Duration;

use crate::common;

use common::http::*;
use serde_json::Value;

/// What a door answered, reduced to what must agree: the id as written
/// and either "a result" or the error's code.
fn kind(answer: &Value) -> (Value, Result<(), i64>) {
    let id = answer["id"].clone();
    match answer.get("error") {
        Some(e) => (id, Err(e["code"].as_i64().unwrap_or(0))),
        None => {
            assert!(answer.get("result").is_some(), "{answer}");
            (id, Ok(()))
        }
    }
}

/// Sends each line over stdio (after a handshake) and as a POST in an HTTP
/// session, and returns both answers.
fn both(lines: &[&str]) -> Vec<(String, Value, Answer)> {
    let dir = skills();
    let mut stdio = common::Raw::in_session(dir.path());
    let s = start("127.0.0.1:0", &[], &[]);
    let session = initialize(s.port, &[]);
    let h = [("Mcp-Session-Id", session.as_str())];
    lines
        .iter()
        .map(|line| {
            stdio.send(line);
            let over_stdio: Value = serde_json::from_str(
                &stdio
                    .line_within(Duration::from_secs(20))
                    .unwrap_or_else(|| panic!("stdio did not answer {line}")),
            )
            .expect("a JSON line");
            (line.to_string(), over_stdio, post(s.port, line, &h))
        })
        .collect()
}

#[test]
fn a_member_of_the_envelope_twice_gets_a_json_rpc_answer_over_http_as_over_stdio() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":"a","id":"b","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{},"params":{"cursor":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{},"_meta":{}}}"#,
    ];
    for (line, over_stdio, over_http) in both(&lines) {
        assert_ne!(
            over_http.status, 415,
            "HTTP refused as no JSON-RPC message what stdio answers as {over_stdio}: {line}\n{over_http:?}"
        );
        let over_http = over_http.json();
        assert_eq!(
            kind(&over_http),
            kind(&over_stdio),
            "{line}\nstdio: {over_stdio}\nhttp:  {over_http}"
        );
    }
}

#[test]
fn a_param_of_a_typed_method_twice_is_never_method_not_found_over_http() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"nope","name":"skill_file","arguments":{"name":"demo","path":"notes.md"}}}"#,
        r#"{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"skill://demo/SKILL.md","uri":"skill://demo/notes.md"}}"#,
    ];
    for (line, over_stdio, over_http) in both(&lines) {
        let over_http = over_http.json();
        assert_ne!(
            over_http["error"]["code"], -32601,
            "WIRE-002: a method rmcp types answered as not found over HTTP: {line}\nstdio: {over_stdio}\nhttp:  {over_http}"
        );
        assert_eq!(
            kind(&over_http),
            kind(&over_stdio),
            "{line}\nstdio: {over_stdio}\nhttp:  {over_http}"
        );
    }
}

/// Found the same day, by comparing `read_typed` with `read_value` over
/// generated requests: a list request whose params name `cursor` twice
/// lost its params in the direct decode — rmcp's optional params are a
/// flattened `Option`, which serde turns into `None` on any error, and a
/// field given twice is one — where the decode through a `Value` (the
/// last member counts) kept `cursor`. So over stdio, since `read_typed`,
/// `resources/list` with `{"cursor":"zzz","cursor":"zzz"}` is served the
/// first page (its `_meta`, a progress token say, dropped with it), where
/// the same cursor given once is -32602 "invalid cursor", as it was for
/// both before. ("No answer changes", says `read_typed`'s doc.) HTTP
/// answers the first page too: rmcp decodes the raw body the same way.
#[test]
fn a_cursor_given_twice_is_not_dropped_over_stdio() {
    let dir = skills();
    let mut stdio = common::Raw::in_session(dir.path());
    for method in ["resources/list", "prompts/list"] {
        let mut answers = Vec::new();
        for params in [r#"{"cursor":"zzz"}"#, r#"{"cursor":"zzz","cursor":"zzz"}"#] {
            stdio.send(&format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"{method}","params":{params}}}"#
            ));
            let answer: Value = serde_json::from_str(
                &stdio
                    .line_within(Duration::from_secs(20))
                    .expect("an answer"),
            )
            .expect("JSON");
            answers.push(answer);
        }
        assert_eq!(
            answers[0]["error"]["code"], -32602,
            "{method}: {}",
            answers[0]
        );
        assert_eq!(
            kind(&answers[1]),
            kind(&answers[0]),
            "{method}: the cursor given twice was dropped: {}",
            answers[1]
        );
    }
}
