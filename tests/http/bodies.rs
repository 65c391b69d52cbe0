//! Bodies read by the stdio transport's rules (HTTP-006, WIRE-009): what
//! a large, deep, odd or non-UTF-8 body costs and how it is answered.
//!
//! A test marked FOUND says what an outside attack found when it was
//! written (figures from a debug build on a 2-core machine) and may fail
//! on the code it was written against: that is what it records; HELD
//! records what held. The helpers are tests/common/http.rs's.

use crate::common;
use crate::common::http::*;
use serde_json::{Value, json};
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// 19,000 arrays, each nested 100 deep (under serde_json's 128), joined
/// by commas: 3.8 MB of JSON, under the 4 MiB body limit (HTTP-006).
fn nested_arrays() -> String {
    let one = format!("{}{}", "[".repeat(100), "]".repeat(100));
    vec![one; 19_000].join(",")
}

/// HTTP-006 bounds a body at 4 MiB and HTTP-007 the bytes of bodies being
/// read at 64 MiB, and HTTP-015 says the process's peak stays within the
/// answers' budget (128 MiB) plus its idle footprint, "well under the
/// 256 MiB a hosted tier allows". A careful owner expects one request under
/// the body limit to cost the server a few times its size, not hundreds of
/// MiB.
///
/// FOUND: one stateless `tools/list` whose params carry 3.8 MB of arrays
/// nested 100 deep (19,000 of them) is answered 200 after 7.2 s, and the
/// server's VmHWM goes from 22 MB to 737 MB (VmRSS stays at 730 MB after
/// the answer). The body is parsed into a tree at the door, then again by
/// rmcp, each tree ~100 times the bytes. Flat shapes do it too: 2,000,000
/// zeros in one array (4.0 MB) peak at 403 MB; 1,300,000 `[]` at 271 MB.
/// A 3.8 MB notification of the same arrays peaks at 917 MB, and even a
/// request the door refuses for having no session (HTTP-002) peaks at
/// 737 MB, since it is refused only after the whole tree is built.
///
/// Issue 40: the door's second outside attack.
#[test]
fn one_request_under_the_body_limit_does_not_cost_hundreds_of_mib() {
    let s = start("127.0.0.1:0", &[], &[]);
    let idle = common::proc_kib(s.child.id(), "VmHWM");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{},"x":[{}]}}}}"#,
        meta(),
        nested_arrays()
    );
    assert!(body.len() < 4 * 1024 * 1024, "{} bytes", body.len());
    let t = Instant::now();
    let a = post(s.port, &body, &headers("tools/list"));
    let took = t.elapsed();
    let peak = common::proc_kib(s.child.id(), "VmHWM");
    eprintln!(
        "a {}-byte body: status {} after {took:?}; VmHWM {idle} KiB idle, {peak} KiB after",
        body.len(),
        a.status
    );
    assert!(
        peak < 256 * 1024,
        "one {}-byte request took the server's peak from {idle} KiB to {peak} KiB, past the 256 MiB \
         HTTP-015 keeps it under",
        body.len()
    );
}

/// Issue 40: "every HTTP request answered at once". A careful user expects
/// a small request from a fresh client to be answered within a few seconds
/// while others send bodies within the limits.
///
/// FOUND: two clients each send one 3.8 MB notification (no session; the
/// params hold 19,000 arrays nested 100 deep). The door parses each body on
/// the async runtime's worker threads, which then serve nobody: a fresh
/// client's stateless `tools/list` sent 0.5 s later is answered after
/// 26.8 s (the server's RSS at 1.7 GB meanwhile). With eight clients
/// looping 3.8 MB bodies of nested arrays, a fresh client waited up to 29 s;
/// with sixteen, no answer came within 30 s.
///
/// Issue 40: the door's second outside attack.
#[test]
fn a_fresh_client_is_answered_while_others_send_large_bodies() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let body = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/foo","params":{{"x":[{}]}}}}"#,
        nested_arrays()
    );
    let request = post_request(port, &body, &[]);
    let mut heavy = Vec::new();
    for _ in 0..2 {
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        c.write_all(request.as_bytes()).expect("send a large body");
        heavy.push(c);
    }
    std::thread::sleep(Duration::from_millis(500));
    let (status, _, took) = timed_tools_list(port);
    eprintln!("a fresh tools/list while two 3.8 MB bodies are read: {status:?} after {took:?}");
    assert_eq!(status, Some(200), "no answer within {took:?}");
    assert!(
        took < Duration::from_secs(10),
        "a fresh client's tools/list took {took:?} while two clients' bodies were being read"
    );
    drop(heavy);
}

/// WIRE-001: "a notification or response rmcp cannot decode … is dropped
/// and logged (neither is ever answered)"; WIRE-006: "Every request thus
/// gets exactly one answer". A careful user expects its answer to a
/// server's request, however malformed, never to produce an answer under
/// the id of one of its own requests.
///
/// FOUND: over stdio a client sends a confirmed `skill_run` under id 5
/// (the script runs 2 s), then a response `{"id":5,"result":{…}}` whose
/// result nests 40 deep. The server writes
/// `{"id":5,"error":{"code":-32600,"message":"… WIRE-009: the message
/// nests deeper than 32 …"}}` at once, and the run's result under id 5
/// 2 s later: two answers for one request, the first of them an error the
/// request never had. (A notification too deep or with too many values is
/// answered too, under `id: null`, where one with params that are no
/// object is dropped; in a session that declared elicitation, a deep
/// answer to `elicitation/create` — id 0 — is answered with an error
/// under id 0.)
///
/// Issue 40: the door's third outside attack.
#[test]
fn a_clients_answer_too_deep_to_read_is_never_answered_under_its_id() {
    let dir = skills();
    let mut raw = common::Raw::in_session(dir.path());
    raw.send(
        &rpc(
            5,
            "tools/call",
            json!({"name": "skill_run", "arguments": {"name": "demo", "script": "scripts/hi.js", "confirm": true}}),
        ),
    );
    std::thread::sleep(Duration::from_millis(300));
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":5,"result":{{"x":{}{}}}}}"#,
        "[".repeat(40),
        "]".repeat(40)
    ));
    let mut under_5 = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        let Some(line) = raw.line_within(Duration::from_secs(4)) else {
            break;
        };
        let v: Value = serde_json::from_str(&line).expect("a JSON line");
        if v["id"] == 5 {
            under_5.push(line);
        }
    }
    eprintln!("lines under id 5: {under_5:#?}");
    assert_eq!(
        under_5.len(),
        1,
        "request 5 was answered {} times: {under_5:#?}",
        under_5.len()
    );
    assert!(
        under_5[0].contains(r#""result""#) && !under_5[0].contains("WIRE-009"),
        "{}",
        under_5[0]
    );
}

/// WIRE-001 names the cause of a line that is not JSON where a client can
/// fix it ("a line that starts with a byte-order mark, or holds a number
/// past a 64-bit float …, is -32700 too, its message naming that cause"),
/// and every refusal says what to do. A careful user expects a body that
/// is not UTF-8 — text from a client that wrote Latin-1 — to be told so.
///
/// FOUND: a body whose params carry `"café"` written in Latin-1 (one byte
/// 0xE9) is 400 -32700 "Parse error: the request body is not JSON (invalid
/// unicode code point at line 1 column 181)" — neither "UTF-8" nor what to
/// send; over stdio the same line is "the line is not JSON (invalid unicode
/// code point …)".
///
/// Issue 40: the door's third outside attack.
#[test]
fn a_body_that_is_not_utf8_is_told_so() {
    let s = start("127.0.0.1:0", &[], &[]);
    // "café" in Latin-1: the é is the one byte 0xE9, no UTF-8 sequence.
    let text = stateless(1, "tools/list", json!({"note": "cafX"}));
    let at = text.find("cafX").expect("the note") + 3;
    let mut body = text.into_bytes();
    body[at] = 0xE9;
    let mut request = post_request(s.port, "", &headers("tools/list"))
        .replace(
            "Content-Length: 0",
            &format!("Content-Length: {}", body.len()),
        )
        .into_bytes();
    request.extend_from_slice(&body);
    let a = raw(s.port, &request);
    eprintln!("a Latin-1 body: {} {}", a.status, a.body);
    assert_eq!(a.status, 400, "{a:?}");
    assert!(
        a.body.contains("UTF-8"),
        "a body that is not UTF-8 was refused without saying so: {}",
        a.body
    );
}

/// HELD: ids of every JSON type over HTTP: `null`, an object, an array and
/// `true` are 400 -32600 under `id: null`; 1.5 and 2^70 are 400 -32600
/// under themselves (HTTP-006); an id past 200 bytes is refused for its
/// length; `""`, `-1`, `0`, i64's bounds, `"\u0000"` and `"é"` are served
/// under themselves. JSON-RPC batches (an empty one too) are 400 -32600
/// under either lifecycle.
///
/// Issue 40: the door's fourth outside attack.
#[test]
fn ids_of_every_json_type_and_batches_are_answered_in_words() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let with_id = |id: Value| {
        let mut m: Value =
            serde_json::from_str(&stateless(0, "tools/list", json!({}))).expect("json");
        m["id"] = id;
        post(port, &m.to_string(), &headers("tools/list"))
    };
    for id in [Value::Null, json!({"a": 1}), json!([1]), json!(true)] {
        let a = with_id(id.clone());
        assert_eq!(a.status, 400, "{id}: {a:?}");
        assert_eq!(a.json()["error"]["code"], -32600, "{id}: {a:?}");
        assert_eq!(a.json()["id"], Value::Null, "{id}: {a:?}");
    }
    for raw_id in ["1.5", "1180591620717411303424"] {
        let body = stateless(0, "tools/list", json!({})).replacen(
            "\"id\":0",
            &format!("\"id\":{raw_id}"),
            1,
        );
        let a = post(port, &body, &headers("tools/list"));
        assert_eq!(a.status, 400, "{raw_id}: {a:?}");
        assert!(
            a.body.contains(&format!("\"id\":{raw_id},")),
            "{raw_id}: {a:?}"
        );
        assert!(a.body.contains("HTTP-006"), "{raw_id}: {a:?}");
    }
    let a = with_id(json!("x".repeat(300)));
    assert_eq!(a.status, 400, "{a:?}");
    assert!(a.body.len() < 4096, "{a:?}");
    for id in [
        json!(""),
        json!(-1),
        json!(0),
        json!(i64::MAX),
        json!(i64::MIN),
        json!("\u{0}"),
        json!("é"),
    ] {
        let a = with_id(id.clone());
        assert_eq!(a.status, 200, "{id}: {a:?}");
        assert_eq!(a.json()["id"], id, "{id}: {a:?}");
    }
    let session = initialize(port, &[]);
    for (batch, extra) in [
        (
            json!([{"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {}}]).to_string(),
            vec![("Mcp-Session-Id", session.as_str())],
        ),
        (
            format!("[{}]", stateless(12, "tools/list", json!({}))),
            headers("tools/list"),
        ),
        ("[]".to_owned(), headers("tools/list")),
    ] {
        let a = post(port, &batch, &extra);
        assert_eq!(a.status, 400, "{batch}: {a:?}");
        assert_eq!(a.json()["error"]["code"], -32600, "{batch}: {a:?}");
        assert!(a.body.contains("batches"), "{a:?}");
    }
}

/// FOUND: HTTP-006 says an id rmcp cannot carry exactly is refused "rather
/// than answered under an id the client did not send", and refuses `7.0`
/// and `7e0` for that reason; but the id `-0` passes the door's check
/// (`"-0".parse::<i64>()` is `Ok(0)`) and is answered under `0`. A client
/// that matches answers to requests by the id it wrote never sees its
/// answer. Low severity; the rule's own reasoning covers it.
#[test]
fn an_id_of_minus_zero_is_answered_as_written_or_refused() {
    let s = start("127.0.0.1:0", &[], &[]);
    let session = initialize(s.port, &[]);
    let a = post(
        s.port,
        r#"{"jsonrpc":"2.0","id":-0,"method":"ping"}"#,
        &[("Mcp-Session-Id", &session)],
    );
    let text = a.body.clone();
    assert!(
        a.status == 400 || text.contains("\"id\":-0"),
        "id -0 was answered under another id: {} {text}",
        a.status
    );
}
