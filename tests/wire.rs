//! The wire as both doors read it (spec WIRE-*): the same bytes get the
//! same JSON-RPC answer over stdio and HTTP, and a request kept after it
//! is read is small on both (WIRE-010). Each test drives the built binary.

use crate::common;
use crate::common::http::*;
use serde_json::{Value, json};
use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

/// The server's resident memory, in KiB, once it has had a second to
/// settle.
fn settled_rss(pid: u32) -> u64 {
    std::thread::sleep(Duration::from_secs(1));
    common::proc_kib(pid, "VmRSS")
}

/// A string of `n` bytes, for requests that carry a lot in one value (one
/// JSON value: WIRE-009 counts values, not bytes).
fn junk(n: usize) -> String {
    "j".repeat(n)
}

fn ping_with_meta(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"_meta":{META}}}}}"#)
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

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

/// HTTP-008 measures a session at "about 23 KiB resident" and bounds them
/// at 1,024 "so 10,000 `initialize` calls cannot exhaust memory"; HTTP-015
/// keeps the process's peak "well under the 256 MiB a hosted tier
/// allows". A careful owner expects an open session to cost about that,
/// whatever its `initialize` carried.
///
/// FOUND: each session keeps the whole of the `initialize` it was opened
/// with. 20 sessions whose `capabilities.experimental` carry one 4 MB
/// string (one JSON value, under WIRE-009's bounds and the 4 MiB body
/// limit) took the server's VmRSS from 23 MB to 108 MB, 4.2 MB a session
/// (this test: 48 sessions, 21.5 MB to 214 MB), held until each expires
/// (300 s idle; never while its client holds a GET stream open); the 1,024
/// sessions allowed would hold 4.3 GB. Now such an `initialize` is refused
/// for its size (WIRE-010: at most 64 KiB) and nothing of it is kept.
///
/// Issue 40: the door's third outside attack.
#[test]
fn an_open_session_does_not_keep_what_its_initialize_carried() {
    let s = start("127.0.0.1:0", &[], &[]);
    let before = settled_rss(s.child.id());
    let filler = junk(4_000_000);
    let mut sessions = 0;
    for i in 0..48 {
        let body = rpc(
            i,
            "initialize",
            json!({"protocolVersion": "2025-11-25",
                   "capabilities": {"experimental": {"x": {"y": filler}}},
                   "clientInfo": {"name": "tests", "version": "0"}}),
        );
        // Refused for its size, as WIRE-010 now says: nothing is kept.
        let a = post(s.port, &body, &[]);
        assert_eq!(a.status, 400, "{}", &a.body[..a.body.len().min(300)]);
        assert!(
            a.body.contains("WIRE-010"),
            "{}",
            &a.body[..a.body.len().min(300)]
        );
        assert!(a.header("mcp-session-id").is_none(), "{a:?}");
        sessions += 1;
    }
    // A plain initialize still opens a session.
    initialize(s.port, &[]);
    let after = settled_rss(s.child.id());
    eprintln!(
        "{sessions} sessions of a 4 MB initialize: VmRSS {before} KiB before, {after} KiB after"
    );
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "{sessions} open sessions took the server's VmRSS from {before} KiB to {after} KiB"
    );
}

/// HTTP-012: "A listen ends when its request is cancelled … and holds
/// nothing after"; while open it is a stream (HTTP-008 allows 1,024 of
/// them). A careful owner expects an open listen to hold its id and its
/// filter, not the bytes of the request that opened it.
///
/// FOUND: each open `subscriptions/listen` keeps its whole request: 20
/// listens whose `_meta` carries one 4 MB string took the server's VmRSS
/// from 23 MB to 111 MB (4.4 MB a listen, given back only when each
/// connection closes; this test: 48 listens, 21.8 MB to 220 MB); the 1,024
/// streams allowed would hold 4.5 GB, for as long as their client keeps
/// them open (a listen never expires). Now refused for its size
/// (WIRE-010).
///
/// Issue 40: the door's third outside attack.
#[test]
fn an_open_listen_does_not_keep_what_its_request_carried() {
    let s = start("127.0.0.1:0", &[], &[]);
    let before = settled_rss(s.child.id());
    let filler = junk(4_000_000);
    let mut listens = Vec::new();
    for i in 0..48 {
        let mut m = meta();
        m["junk"] = json!(filler);
        let body = rpc(
            i,
            "subscriptions/listen",
            json!({"_meta": m, "notifications": {"promptsListChanged": true}}),
        );
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
        c.write_all(post_request(s.port, &body, &headers("subscriptions/listen")).as_bytes())
            .expect("send a listen");
        // Refused for its size (WIRE-010): nothing of it is kept.
        read_until(&mut c, "WIRE-010");
        listens.push(c);
    }
    let after = settled_rss(s.child.id());
    eprintln!(
        "{} open listens of a 4 MB _meta: VmRSS {before} KiB before, {after} KiB after",
        listens.len()
    );
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "{} open listens took the server's VmRSS from {before} KiB to {after} KiB",
        listens.len()
    );
    drop(listens);
}

/// WIRE-004: "a client that never reads its stdout costs a bounded amount
/// of memory"; HTTP-012: a listen is served on stdio as over HTTP. A
/// careful user expects an open listen on stdio to hold its id and filter,
/// not its request's bytes.
///
/// FOUND: over stdio (lines up to 16 MiB), 10 listens whose `_meta` carries
/// one 16 MB string took the server's VmRSS from 25 MB to 206 MB (this
/// test: 8 listens, 24 MB to 165 MB); the 64 requests a connection may
/// hold open would keep about 1.1 GB. Now refused for its size under its
/// id (WIRE-010).
///
/// Issue 40: the door's third outside attack.
#[test]
fn an_open_listen_over_stdio_does_not_keep_what_its_request_carried() {
    let dir = skills();
    let mut raw = common::Raw::start(dir.path());
    raw.send(&stateless(1, "tools/list", json!({})));
    let first = raw.next_line();
    assert!(first.contains(r#""tools""#), "{first}");
    let before = settled_rss(raw.process.pid());
    let filler = junk(16_000_000);
    for i in 0..8 {
        let mut m = meta();
        m["junk"] = json!(filler);
        raw.send(&rpc(
            100 + i,
            "subscriptions/listen",
            json!({"_meta": m, "notifications": {"promptsListChanged": true}}),
        ));
        // Refused for its size (WIRE-010), under its id.
        let ack = raw.next_line();
        assert!(
            ack.contains("WIRE-010") && ack.contains(&format!("\"id\":{}", 100 + i)),
            "{}",
            &ack[..ack.len().min(300)]
        );
    }
    let after = settled_rss(raw.process.pid());
    eprintln!(
        "8 listens of a 16 MB _meta over stdio: VmRSS {before} KiB before, {after} KiB after"
    );
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "8 open listens over stdio took the server's VmRSS from {before} KiB to {after} KiB"
    );
}

/// HTTP-015 keeps the process's peak "well under the 256 MiB a hosted tier
/// allows", and HTTP-007 gives a body's bytes back "once rmcp has read the
/// message". A careful owner expects a confirmed run waiting for a
/// person's approval to hold its plan, not every byte its request carried.
///
/// FOUND: 128 confirmed `skill_run` calls (two sessions of 64) whose
/// `_meta` carries one 4 MB string, each waiting for approval, took the
/// server's VmRSS from 23 MB to 542 MB (this test: 48 in one session,
/// 21.5 MB to 219 MB), held for the 120 s each approval waits and renewed
/// as often as the client sends them again. Now a `skill_run` is at most
/// 1 MiB (WIRE-010), and at most 8 wait at once (RUN-028).
///
/// Issue 40: the door's third outside attack.
#[test]
fn approvals_waiting_do_not_keep_what_their_requests_carried() {
    let s = start("127.0.0.1:0", &["--http-allow-run"], &[]);
    let before = settled_rss(s.child.id());
    let session = initialize_declaring(s.port, &[], json!({"elicitation": {}}));
    let filler = junk(4_000_000);
    let mut pending = Vec::new();
    for i in 0..48 {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
        let call = rpc(
            100 + i,
            "tools/call",
            json!({"name": "skill_run", "_meta": {"junk": filler},
                   "arguments": {"name": "demo", "script": "scripts/hi.js", "confirm": true}}),
        );
        c.write_all(post_request(s.port, &call, &[("Mcp-Session-Id", &session)]).as_bytes())
            .expect("send a run");
        // Refused for its size (WIRE-010): a skill_run is at most 1 MiB.
        read_until(&mut c, "WIRE-010");
        pending.push(c);
    }
    let after = settled_rss(s.child.id());
    eprintln!(
        "48 approvals pending with a 4 MB _meta: VmRSS {before} KiB before, {after} KiB after"
    );
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "48 pending approvals took the server's VmRSS from {before} KiB to {after} KiB"
    );
    drop(pending);
}

/// `ping` carrying 2026-07-28 `_meta`, on each door and in each lifecycle.
///
/// Found by the attack of 2026-12-06 (second pass): rmcp treats `ping` as
/// a method the 2026-07-28 revision does not serve — a ping whose `_meta`
/// names that version is answered -32601 with the bare message "ping" —
/// except before any lifecycle on stdio, where it answers it (WIRE-008).
/// So the same request gets a result as the first line over stdio, and
/// -32601 "ping" (HTTP 404) as a 2026-07-28 POST, and -32601 "ping" inside
/// a 2025-11-25 session, where WIRE-008 said "everything passes (… a
/// request with `_meta` is served in the session)". A client was told
/// neither which rule refused it nor what to send instead, which HTTP-011
/// gives every other method 2026-07-28 dropped. Decided: 2026-07-28 has no
/// ping (the official suite's sep-2575 404 case), so HTTP-011 now explains
/// it over HTTP and WIRE-008 names the exception.
///
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

/// The same finding as `a_ping_with_2026_meta_in_a_2025_session_is_refused_under_its_id_over_stdio`, over HTTP (HTTP-011).
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

/// A request that names a member twice, sent over stdio and over HTTP
/// (spec HTTP-006: a body is read by the stdio transport's rules; WIRE-002:
/// a method rmcp types is never "method not found").
///
/// Found by the attack of 2026-12-06 (second pass): the HTTP door checks a
/// body with `transport::message::read`, which reads JSON through a
/// `serde_json::Value` (a member given twice: the last one counts) and
/// accepts it, and then hands rmcp the body's bytes, which rmcp decodes
/// again with its typed structs — and those refuse a field given twice. So
/// the same bytes that stdio answers get, over HTTP, either a plain-text
/// 415 "fail to deserialize request body unrecognized JSON-RPC message"
/// (a member of the envelope twice: no JSON-RPC answer, no id), or -32601
/// with the bare method name as its message (a typed method's param
/// twice: rmcp fell back to its custom request) — what WIRE-002 forbids.
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

/// The same finding as `a_member_of_the_envelope_twice_gets_a_json_rpc_answer_over_http_as_over_stdio`, for a typed method's param (WIRE-002).
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
