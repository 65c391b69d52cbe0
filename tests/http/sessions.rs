//! The sessions (src/http/sessions.rs, HTTP-002, HTTP-008): their cap, ids
//! that name nothing, DELETE, idle expiry, GET streams and resumption, and
//! a second session trying to reach into the first. A doc comment says
//! what was found where something was.
//!
//! A test marked FOUND says what an outside attack found when it was
//! written (figures from a debug build on a 2-core machine) and may fail
//! on the code it was written against: that is what it records; HELD
//! records what held. The helpers are tests/common/http.rs's.

use crate::common;
use crate::common::http::*;
use crate::http::{event_with, hi_run, open_post};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

/// A POST of `body` whose `Mcp-Session-Id` header is the raw bytes `sid`
/// (which need not be UTF-8: HTTP allows obs-text in a header value).
fn post_with_raw_session(port: u16, body: &str, sid: &[u8]) -> Answer {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\
         Mcp-Session-Id: ",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(sid);
    req.extend_from_slice(b"\r\n\r\n");
    req.extend_from_slice(body.as_bytes());
    raw(port, &req)
}

/// A GET of the session's stream (with `Last-Event-ID` when given), its
/// connection returned unread; `Connection: close` so its end is EOF.
fn open_get(port: u16, session: &str, last: Option<&str>) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut req = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\
         Connection: close\r\nMcp-Session-Id: {session}\r\n"
    );
    if let Some(l) = last {
        req.push_str(&format!("Last-Event-ID: {l}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("GET");
    s
}

/// Reads `s` to its end, failing after `secs`.
fn to_end(s: &mut TcpStream, secs: u64) -> String {
    s.set_read_timeout(Some(Duration::from_secs(secs)))
        .expect("timeout");
    let mut got = Vec::new();
    let r = s.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got).into_owned();
    assert!(r.is_ok(), "did not end within {secs} s: {r:?} {text}");
    text
}

/// Adds a skill to the served tree and sends SIGHUP: every session's GET
/// stream is told `list_changed` (HTTP-010).
fn reload(s: &Server, name: &str) {
    let skill = s._dir.path().join(name);
    std::fs::create_dir(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Added after boot.\n---\nbody\n"),
    )
    .expect("SKILL.md");
    let hup = Command::new("kill")
        .args(["-HUP", &s.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(hup.success());
}

/// Reads `s` into `got` until `needle` shows, failing after `secs` or at
/// the stream's end.
fn until(s: &mut TcpStream, got: &mut Vec<u8>, needle: &str, secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(got).contains(needle) {
        assert!(
            Instant::now() < deadline,
            "no {needle} in {secs} s: {}",
            String::from_utf8_lossy(got)
        );
        s.set_read_timeout(Some(
            deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(10)),
        ))
        .expect("timeout");
        match s.read(&mut chunk) {
            Ok(0) => panic!(
                "the stream ended before {needle}: {}",
                String::from_utf8_lossy(got)
            ),
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("{e}: {}", String::from_utf8_lossy(got)),
        }
    }
}

/// HTTP-008: a session "that no message of its client has touched for
/// 300 s … and that has no request in flight and no GET stream its client
/// holds open is closed", and an `initialize` past the 1,024 sessions is
/// told "wait for an idle one to expire". A careful user expects a
/// stranger not to be able to keep everyone else from opening a session
/// for good.
///
/// FOUND: with the idle time set to 2 s (`SKILL_MCP_HTTP_SESSION_IDLE_SECS`),
/// one client opens 1,024 sessions and a GET stream on each (2 s in all),
/// then sends nothing. 8 s later none has expired: a fresh `initialize` is
/// 503 "1024 sessions are open … wait for an idle one to expire" (none
/// ever will) with `Retry-After: 10`, and a `subscriptions/listen` is 503
/// too (the 1,024 streams are the stranger's). It stays so for as long as
/// the stranger keeps 1,024 sockets open.
///
/// Issue 40: the door's third outside attack.
#[test]
fn a_stranger_cannot_hold_every_session_for_good() {
    let s = start(
        "127.0.0.1:0",
        &[],
        &[("SKILL_MCP_HTTP_SESSION_IDLE_SECS", "2")],
    );
    let port = s.port;
    let mut streams = Vec::new();
    for _ in 0..1024 {
        let session = initialize(port, &[]);
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        c.write_all(get_request(port, &session).as_bytes())
            .expect("open a GET stream");
        read_until(&mut c, "retry:");
        streams.push(c);
    }
    std::thread::sleep(Duration::from_secs(8));
    let a = post(
        port,
        &rpc(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fresh", "version": "0"}}),
        ),
        &[],
    );
    eprintln!(
        "a fresh initialize 8 s after 1,024 sessions went quiet: {} {}",
        a.status, a.body
    );
    assert_eq!(
        a.status, 200,
        "1,024 sessions quiet for 8 s (idle time 2 s) but each holding a GET stream keep a fresh \
         initialize out: {}",
        a.body
    );
    drop(streams);
}

/// Every refusal of the door names its rule and what to do; HTTP-008
/// closes a session left idle (300 s), after which "a later request
/// naming it is 404". The door's own 404 for an unreadable session id
/// says "HTTP-008: the Mcp-Session-Id header names no open session of
/// this server; send initialize without one to open a new session". A
/// careful user whose session expired, or was ended, expects that same
/// sentence.
///
/// FOUND: a `tools/list` or a GET naming a session that was open and has
/// been ended with DELETE (or any visible-ASCII id never issued) is 404
/// with rmcp's body "Not Found: Session not found" — no rule, and nothing
/// said of `initialize`. Only DELETE gets the door's sentence.
///
/// Issue 40: the door's fifth outside attack (after 9687292).
#[test]
fn a_request_naming_a_session_that_is_gone_is_told_in_words() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let session = initialize(port, &[]);
    let gone = delete(port, &session);
    assert_eq!(gone.status, 204, "{gone:?}");
    let listed = post(
        port,
        &rpc(2, "tools/list", json!({})),
        &[("Mcp-Session-Id", &session)],
    );
    let get = raw(
        port,
        format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\
             Mcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    let again = delete(port, &session);
    for (what, a) in [("tools/list", &listed), ("GET", &get), ("DELETE", &again)] {
        eprintln!("{what} naming an ended session: {} {:?}", a.status, a.body);
        assert_eq!(a.status, 404, "{what}: {a:?}");
    }
    for (what, a) in [("tools/list", &listed), ("GET", &get)] {
        assert!(
            a.body.contains("HTTP-008") && a.body.contains("initialize"),
            "{what} naming an ended session is told {:?}",
            a.body
        );
    }
}

/// HTTP-012: a request "with complete 2026-07-28 `_meta` is served without
/// a session even under an `Mcp-Session-Id` (rmcp's routing)"; the door
/// now answers rmcp's every 404 under a session id with "names no open
/// session". A careful user expects the rewrite to hide no other answer:
/// a stateless request under an unknown id served as before, and a
/// message that needs the session (a notification) told in words.
///
/// HELD: the stateless `tools/list` under `Mcp-Session-Id: nope-123` is
/// 200 with the tools (a7f325c, before aa63bd5, answered it 200 too: the
/// rewrite touches only 404s);
/// a `notifications/initialized` under it is 404 naming HTTP-008 and
/// `initialize`.
///
/// Issue 40: the door's sixth outside attack (after aa63bd5).
#[test]
fn a_stateless_request_under_an_unknown_session_is_served_and_a_notification_told() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let mut extra = headers("tools/list");
    extra.push(("Mcp-Session-Id", "nope-123"));
    let a = post(port, &stateless(1, "tools/list", json!({})), &extra);
    eprintln!("stateless under an unknown session: {}", a.status);
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.json()["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{a:?}"
    );
    let n = post(
        port,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        &[
            ("Mcp-Session-Id", "nope-123"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
    );
    eprintln!(
        "a notification under an unknown session: {} {:?}",
        n.status, n.body
    );
    assert_eq!(n.status, 404, "{n:?}");
    assert!(
        n.body.contains("HTTP-008") && n.body.contains("initialize"),
        "{n:?}"
    );
}

/// FOUND: an `initialize` carrying an `Mcp-Session-Id` header that is not
/// UTF-8 (e.g. the single byte 0xFF) opens a brand-new session. The door
/// treats any request with the header as "in a session" and so skips the
/// HTTP-008 session cap (`admit`: `InitializeRequest(_) if !in_session`),
/// while rmcp cannot read the value (`to_str()` fails), treats the request
/// as having no session, and creates one. Result: the 1,024-session cap —
/// the bound that keeps 10,000 `initialize` calls from exhausting memory —
/// is bypassed by any unauthenticated-to-the-cap client with one odd byte.
/// Expected: a request naming a session the server does not have is never
/// answered with a fresh session (HTTP-002: unknown session → 404; or 400),
/// and in any case no session past the cap opens.
#[test]
fn a_session_id_header_that_is_not_utf8_never_opens_a_session_past_the_cap() {
    let s = start("127.0.0.1:0", &[], &[]);
    // Fill the cap the honest way.
    let mut opened = 0;
    loop {
        let a = post(s.port, &init_body(1), &[]);
        if a.status != 200 {
            assert_eq!(a.status, 503, "{a:?}");
            break;
        }
        opened += 1;
        assert!(opened <= 1_024, "a session past the cap opened");
    }
    // Now past the cap, with a session header rmcp cannot read.
    let mut extra = 0;
    for _ in 0..20 {
        let a = post_with_raw_session(s.port, &init_body(1), b"\xff");
        if a.status == 200 && a.header("mcp-session-id").is_some() {
            extra += 1;
        }
    }
    assert_eq!(
        extra, 0,
        "{extra} sessions opened past the 1,024 cap through an `Mcp-Session-Id: \\xff` header"
    );
}

/// FOUND: the same hole without filling the cap first: an `initialize`
/// whose `Mcp-Session-Id` names no session the server has — here because
/// it is not UTF-8 — is answered 200 with a new `Mcp-Session-Id`, where a
/// readable unknown id is 404 (HTTP-002, "an unknown or expired session id
/// is rmcp's 404"). Two spellings of "a session I don't have" get
/// different answers, and one of them escapes the door's session bound.
#[test]
fn an_unreadable_session_id_is_refused_like_an_unknown_one() {
    let s = start("127.0.0.1:0", &[], &[]);
    let unknown = post_with_raw_session(s.port, &init_body(1), b"no-such-session");
    assert_eq!(unknown.status, 404, "{unknown:?}");
    let unreadable = post_with_raw_session(s.port, &init_body(1), b"\xff\xfe");
    assert!(
        unreadable.header("mcp-session-id").is_none() && unreadable.status >= 400,
        "an initialize naming an unreadable session id opened a new session: {unreadable:?}"
    );
}

/// FOUND: DELETE of a session that is already gone (or never existed) is
/// answered 202 Accepted, as if it had ended something, while every other
/// request naming it is 404. The MCP transport spec (2025-11-25, Session
/// Management): once a session is terminated the server "MUST respond to
/// requests containing that session ID with HTTP 404 Not Found". A client
/// cannot tell from the answer whether its DELETE ended anything (and a
/// client probing ids learns nothing either way, so 404 costs nothing).
#[test]
fn deleting_a_session_that_is_gone_is_404() {
    let s = start("127.0.0.1:0", &[], &[]);
    let session = initialize(s.port, &[]);
    let first = delete(s.port, &session);
    assert_eq!(first.status, 204, "{first:?}");
    let gone = post(
        s.port,
        &rpc(2, "ping", json!({})),
        &[("Mcp-Session-Id", &session)],
    );
    assert_eq!(gone.status, 404, "{gone:?}");
    let again = delete(s.port, &session);
    let never = delete(s.port, "00000000-0000-0000-0000-000000000000");
    assert_eq!(
        (again.status, never.status),
        (404, 404),
        "DELETE of a gone session: {again:?}; of one that never was: {never:?}"
    );
}

/// Found by the attack of 2026-12-06: every request's stream is primed
/// with an event id (`0/N`) and a retry, which tells a client whose POST
/// connection drops to resume it with a GET and `Last-Event-ID: 1/N`. The
/// server answered that GET with a new standalone stream: it ended the
/// client's live GET stream (a newer GET takes it), so the client's
/// notifications went to a stream it holds as a request's resumption,
/// where the answer it waits for never comes. Now a `Last-Event-ID` of a
/// request's stream (whose request was cancelled when its connection
/// closed, HTTP-009) is 405 (issue 40 §9), one the server never gave is an
/// empty stream that ends at once, and the GET stream stays open and keeps
/// its notifications.
#[test]
fn resuming_a_request_stream_ends_at_once_and_leaves_the_get_stream_open() {
    let s = start("127.0.0.1:0", &[], &[]);
    let sid = initialize(s.port, &[]);
    let h = [("Mcp-Session-Id", sid.as_str())];
    let mut get = open_get(s.port, &sid, None);
    let mut seen = head_of(&mut get).into_bytes();
    // A request's stream: its events are `0/N` then `1/N`.
    let ping = post(s.port, &rpc(2, "ping", json!({})), &h);
    let last = ping
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("id:"))
        .map(str::trim)
        .next_back()
        .expect("an event id")
        .to_owned();
    assert!(last.contains('/'), "{ping:?}");
    // A request's stream, issued: never resumed, and 405 says so, which
    // both SDKs take as the end (tests/http_clients.rs).
    for issued in [last.as_str(), "0/1"] {
        let mut again = open_get(s.port, &sid, Some(issued));
        let text = to_end(&mut again, 30);
        assert!(text.starts_with("HTTP/1.1 405"), "{issued}: {text}");
        assert!(text.contains("HTTP-008"), "{issued}: {text}");
    }
    // Ids never issued, whatever their bytes: an empty stream that ends.
    for resumed in [
        "garbage",
        "-1/-1",
        "99999999999999999999/1",
        "1/999",
        // Not ASCII: rmcp cannot read it and took it for no id at all,
        // opening the stream anew and ending the client's (issue 40 §6).
        "é",
        "0\u{1F600}",
    ] {
        let mut again = open_get(s.port, &sid, Some(resumed));
        let text = to_end(&mut again, 30);
        assert!(text.starts_with("HTTP/1.1 200"), "{resumed}: {text}");
        assert!(!text.contains("data: {"), "{resumed}: {text}");
    }
    // The GET stream was never ended, and still hears the session's
    // notifications.
    reload(&s, "added");
    until(
        &mut get,
        &mut seen,
        "notifications/resources/list_changed",
        30,
    );
    // A resume of the GET stream's own priming id takes it over, as a
    // newer GET does.
    let mut resumed = open_get(s.port, &sid, Some("0"));
    head_of(&mut resumed);
    to_end(&mut get, 30);
}

/// Held: a second GET of a session ends the first (HTTP-008), and the
/// second hears the session's notifications.
#[test]
fn a_newer_get_ends_the_older_and_takes_its_notifications() {
    let s = start("127.0.0.1:0", &[], &[]);
    let sid = initialize(s.port, &[]);
    let mut first = open_get(s.port, &sid, None);
    head_of(&mut first);
    let mut second = open_get(s.port, &sid, None);
    let mut seen = head_of(&mut second).into_bytes();
    let rest = to_end(&mut first, 30);
    assert!(!rest.contains("data: {"), "{rest}");
    reload(&s, "added");
    until(
        &mut second,
        &mut seen,
        "notifications/resources/list_changed",
        30,
    );
}

/// Held: messages of the client that answer or cancel nothing — a result
/// and an error for ids the server never sent, a cancel of an unknown
/// request, `notifications/initialized` twice — are taken (202) and
/// change nothing; a batch is refused naming why; the session still
/// answers.
#[test]
fn client_messages_about_nothing_are_harmless() {
    let s = start("127.0.0.1:0", &[], &[]);
    let sid = initialize(s.port, &[]);
    let h = [("Mcp-Session-Id", sid.as_str())];
    for body in [
        r#"{"jsonrpc":"2.0","id":999,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"x\"y","error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\u0000"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
    ] {
        let a = post(s.port, body, &h);
        assert_eq!(a.status, 202, "{body}: {a:?}");
    }
    let batch = post(s.port, &format!("[{}]", rpc(3, "ping", json!({}))), &h);
    assert_eq!(batch.status, 400, "{batch:?}");
    assert_eq!(batch.json()["error"]["code"], -32600, "{batch:?}");
    assert!(batch.body.contains("batch"), "{batch:?}");
    // Ids as written: a string with escapes comes back as the same string.
    let odd = post(
        s.port,
        r#"{"jsonrpc":"2.0","id":"a\"b\u00e9\n","method":"ping"}"#,
        &h,
    );
    assert_eq!(odd.json()["id"], json!("a\"b\u{e9}\n"), "{odd:?}");
    let low = post(
        s.port,
        r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#,
        &h,
    );
    assert!(low.body.contains(r#""id":-9223372036854775808"#), "{low:?}");
    let ping = post(s.port, &rpc(9, "ping", json!({})), &h).json();
    assert_eq!(ping["result"], json!({}), "{ping}");
}

/// Held: another session can neither approve nor cancel a session's call:
/// its `accept` for the same elicitation id and its cancel of the same
/// request id reach only its own session. The owner's accept (sent twice)
/// then runs the script once and the answer comes on the call's stream.
#[test]
fn another_session_can_neither_approve_nor_cancel_a_call() {
    let s = start("127.0.0.1:0", &["--http-allow-run"], &[]);
    let started = s._dir.path().join("started");
    let call = hi_run(&started);
    let a_sid = initialize_declaring(s.port, &[], json!({"elicitation": {}}));
    let b_sid = initialize_declaring(s.port, &[], json!({"elicitation": {}}));
    let ha = [("Mcp-Session-Id", a_sid.as_str())];
    let hb = [("Mcp-Session-Id", b_sid.as_str())];
    let mut run = open_post(s.port, &call, &ha);
    let mut got = Vec::new();
    let ask = event_with(&mut run, &mut got, "elicitation/create");
    let accept =
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}).to_string();
    assert_eq!(post(s.port, &accept, &hb).status, 202);
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
            .to_string();
    assert_eq!(post(s.port, &cancel, &hb).status, 202);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!started.exists(), "another session's accept ran the script");
    assert_eq!(post(s.port, &accept, &ha).status, 202);
    assert_eq!(post(s.port, &accept, &ha).status, 202);
    run.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    run.read_to_end(&mut got)
        .expect("the rest of the run's stream");
    let ran = parse(&got).json();
    assert_eq!(ran["id"], 5, "{ran}");
    assert!(ran.to_string().contains("hi"), "{ran}");
    assert!(started.exists());
}

/// Held: a DELETE while a call waits for its approval ends the call's
/// stream at once, and an `accept` sent after is 404 and runs nothing.
#[test]
fn deleting_a_session_during_an_approval_ends_the_call_and_runs_nothing() {
    let s = start("127.0.0.1:0", &["--http-allow-run"], &[]);
    let started = s._dir.path().join("started");
    let sid = initialize_declaring(s.port, &[], json!({"elicitation": {}}));
    let h = [("Mcp-Session-Id", sid.as_str())];
    let mut run = open_post(s.port, &hi_run(&started), &h);
    let mut got = Vec::new();
    let ask = event_with(&mut run, &mut got, "elicitation/create");
    let gone = delete(s.port, &sid);
    assert!(gone.status < 300, "{gone:?}");
    run.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    run.read_to_end(&mut got).expect("the call's stream ends");
    let accept =
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}).to_string();
    let late = post(s.port, &accept, &h);
    assert_eq!(late.status, 404, "{late:?}");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!started.exists(), "a deleted session's call ran");
}

/// Held: the cap of 1,024 sessions frees as sessions are deleted.
#[test]
fn the_session_cap_frees_when_a_session_is_deleted() {
    let s = start("127.0.0.1:0", &[], &[]);
    let mut ids = Vec::new();
    loop {
        let a = post(s.port, &init_body(1), &[]);
        if a.status != 200 {
            assert_eq!(a.status, 503, "{a:?}");
            assert!(a.body.contains("HTTP-008"), "{a:?}");
            break;
        }
        ids.push(a.header("mcp-session-id").expect("a session id").to_owned());
        assert!(ids.len() <= 1_024, "a session past the cap opened");
    }
    assert_eq!(ids.len(), 1_024);
    for sid in &ids[..2] {
        let gone = delete(s.port, sid);
        assert!(gone.status < 300, "{gone:?}");
    }
    for _ in 0..2 {
        let a = post(s.port, &init_body(1), &[]);
        assert_eq!(a.status, 200, "{a:?}");
    }
    assert_eq!(post(s.port, &init_body(1), &[]).status, 503);
}

/// Found by the attack of 2026-12-06: the idle time (HTTP-008) could only
/// be seen in a unit test, 300 s being too long for one through HTTP.
/// With `SKILL_MCP_HTTP_SESSION_IDLE_SECS=2` a session nobody touches is
/// closed no sooner than its idle time after its last message, and is then
/// gone (404), while one its client keeps using stays.
///
/// The idle time is the behaviour, so it is what decides; when the closing
/// is seen is told by order — the server's own line saying it closed the
/// quiet session (at debug) — not by a fixed wait, which a busy machine's
/// slow sweep could outlast (spec README, "Timing in tests"). 2 s, not 1:
/// the busy session is touched about every 200 ms, ten times within it.
#[test]
fn a_session_nobody_touches_closes_after_the_owner_s_idle_time() {
    let (s, lines) = start_logged(
        skills(),
        "127.0.0.1:0",
        &[],
        &[
            ("SKILL_MCP_HTTP_SESSION_IDLE_SECS", "2"),
            ("SKILL_MCP_LOG", "skill_mcp=debug"),
        ],
    );
    // Before the quiet session's first message: its last is later.
    let asked = Instant::now();
    let quiet = initialize(s.port, &[]);
    let busy = initialize(s.port, &[]);
    let ping = rpc(7, "ping", json!({}));
    let closed = loop {
        let a = post(s.port, &ping, &[("Mcp-Session-Id", busy.as_str())]);
        assert_eq!(a.status, 200, "a session in use was closed: {a:?}");
        if let Some(line) = lines
            .try_iter()
            .find(|l| l.contains("closing an idle HTTP session"))
        {
            break line;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(60),
            "no idle session was closed within 60 s of a 2 s idle time"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let seen_after = asked.elapsed();
    eprintln!("a session idle for 2 s: its closing seen {seen_after:?} after its first message");
    assert!(
        closed.contains(&quiet) && !closed.contains(&busy),
        "the first session closed is not the quiet one: {closed}"
    );
    assert!(
        seen_after >= Duration::from_secs(2),
        "closed {seen_after:?} after its first message, before its 2 s idle time"
    );
    let gone = post(s.port, &ping, &[("Mcp-Session-Id", quiet.as_str())]);
    assert_eq!(
        gone.status, 404,
        "the closed idle session still answers: {gone:?}"
    );
    let kept = post(s.port, &ping, &[("Mcp-Session-Id", busy.as_str())]);
    assert_eq!(kept.status, 200, "{kept:?}");
}

/// An idle time out of range is a `problems` entry naming HTTP-008, and
/// the default of 300 s holds (sessions stay open past a second).
#[test]
fn an_idle_time_out_of_range_is_a_setting_problem() {
    for bad in ["0", "86401", "soon"] {
        let s = start(
            "127.0.0.1:0",
            &[],
            &[("SKILL_MCP_HTTP_SESSION_IDLE_SECS", bad)],
        );
        let session = initialize(s.port, &[]);
        let h = [("Mcp-Session-Id", session.as_str())];
        let list = post(
            s.port,
            &rpc(
                2,
                "tools/call",
                json!({"name": "skill_list", "arguments": {}}),
            ),
            &h,
        )
        .json();
        let detail = common::setting_problem(
            &list["result"]["structuredContent"],
            "SKILL_MCP_HTTP_SESSION_IDLE_SECS",
            bad,
        );
        assert!(
            detail.contains("HTTP-008") && detail.contains("300 seconds"),
            "{detail}"
        );
        if bad == "0" {
            std::thread::sleep(Duration::from_millis(1500));
            let a = post(s.port, &rpc(3, "ping", json!({})), &h);
            assert_eq!(a.status, 200, "the default idle time did not hold: {a:?}");
        }
    }
}
