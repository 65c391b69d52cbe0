//! The byte budgets (src/http/budget.rs; HTTP-007, HTTP-015): bodies
//! being read and answers not yet taken never lock a fresh client out.
//!
//! A test marked FOUND says what an outside attack found when it was
//! written (figures from a debug build on a 2-core machine) and may fail
//! on the code it was written against: that is what it records; HELD
//! records what held. The helpers are tests/common/http.rs's.

use crate::common::http::*;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Reads `c` until it has sent `a` or `b`.
fn read_until_either(c: &mut TcpStream, a: &str, b: &str) -> String {
    c.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let text = String::from_utf8_lossy(&seen);
        if text.contains(a) || text.contains(b) {
            return text.into_owned();
        }
        let n = c.read(&mut buf).expect("more of the answer");
        assert!(n > 0, "the connection ended before {a:?} or {b:?}: {text}");
        seen.extend_from_slice(&buf[..n]);
    }
}

/// HTTP-015 reserves room for an answer "before it is built" and HTTP-009
/// makes every confirmed run wait for a person's approval (up to 120 s).
/// A careful user expects approvals a person has not yet given to hold no
/// room that another client's small read needs: nothing is waiting unread.
///
/// FOUND: one session declaring elicitation sends 12 confirmed `skill_run`
/// calls and leaves their approvals pending. Each reserves 10 MiB + 64 KiB
/// of the answers' 128 MiB for as long as it waits. Another client's
/// `skill_file` batch of two tiny files (notes.md, SKILL.md) is then 503
/// after 5 s: "HTTP-015: answers not yet read by their clients hold the
/// server's 128 MiB for them" — no answer is waiting unread. One file alone
/// still passes; the batch passes again once the calls are dropped.
///
/// Issue 40: the door's second outside attack.
#[test]
fn approvals_waiting_for_a_person_do_not_lock_others_out_of_reading_files() {
    let s = start("127.0.0.1:0", &["--http-allow-run"], &[]);
    let session = initialize_declaring(s.port, &[], json!({"elicitation": {}}));
    let mut pending = Vec::new();
    for i in 0..12 {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
        let call = rpc(
            100 + i,
            "tools/call",
            json!({"name": "skill_run", "arguments": {"name": "demo", "script": "scripts/hi.js", "confirm": true}}),
        );
        c.write_all(post_request(s.port, &call, &[("Mcp-Session-Id", &session)]).as_bytes())
            .expect("send a run");
        c.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        // Asked for, or past the 8 approvals that may wait at once
        // (RUN-028), refused at once with nothing started.
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&seen);
            if text.contains("elicitation/create") || text.contains("RUN-028") {
                break;
            }
            let n = c.read(&mut buf).expect("the approval request");
            assert!(n > 0, "{text}");
            seen.extend_from_slice(&buf[..n]);
        }
        pending.push(c);
    }
    let t = Instant::now();
    let a = post(
        s.port,
        &stateless(
            5,
            "tools/call",
            json!({"name": "skill_file", "arguments": {"name": "demo", "paths": ["notes.md", "SKILL.md"]}}),
        ),
        &headers_named("tools/call", "skill_file"),
    );
    eprintln!(
        "a batch of two small files while 12 approvals wait: {} after {:?}",
        a.status,
        t.elapsed()
    );
    assert_eq!(
        a.status, 200,
        "with 12 approvals pending, another client's read of two small files was refused: {}",
        a.body
    );
    assert_eq!(a.json()["result"]["isError"], false, "{}", a.body);
    drop(pending);
}

/// HTTP-007: "a client that sends its head and one chunk and stalls holds
/// that chunk and its connection, nothing else … from outside, what a
/// client sees: stalled bodies do not lock anyone out"; issue 40 §3: "A
/// request whose body has not arrived must not hold the capacity others
/// need". A careful user expects a fresh client's small request to be
/// answered while a stranger's large bodies are stalled.
///
/// FOUND: 16 connections each announce a 4 MiB body, send all of it but
/// its last byte, and stall: 64 MiB, the whole budget of bodies being
/// read. Every other client's request — a small stateless `tools/list` — then
/// waits 5.0 s and is 503 "HTTP-007: request bodies being read hold the
/// server's 64 MiB for them, and none was given back within 5 s", until
/// the stalled bodies are cut off by their 408 at 30 s; the stranger
/// simply sends them again. With 16 such loops running for 95 s, a fresh
/// client asking without pause spent 80 s of it refused.
///
/// Issue 40: the door's third outside attack.
#[test]
fn stalled_bodies_do_not_lock_a_fresh_client_out() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let length = 4 * 1024 * 1024;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    );
    let mut stalled = Vec::new();
    for _ in 0..16 {
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let mut bytes = head.clone().into_bytes();
        bytes.extend(std::iter::repeat_n(b' ', length - 1));
        c.write_all(&bytes).expect("send all but the last byte");
        stalled.push(c);
    }
    std::thread::sleep(Duration::from_secs(1));
    for round in 0..2 {
        let (status, body, took) = timed_tools_list(port);
        eprintln!(
            "round {round}: a fresh tools/list while 16 bodies stall: {status:?} after {took:?}"
        );
        assert_eq!(
            status,
            Some(200),
            "with 16 stalled 4 MiB bodies, a fresh client's tools/list was answered {status:?} \
             after {took:?}: {body}"
        );
        std::thread::sleep(Duration::from_secs(5));
    }
    drop(stalled);
}

/// HTTP-009 makes every confirmed run over HTTP wait for a person's
/// approval (up to 120 s, RUN-028), and HTTP-015 was changed so that
/// "approvals left waiting must not hold room others' reads need". A
/// careful user expects approvals nobody has given yet not to keep every
/// other client of the server from being served at all.
///
/// FOUND: one client opens two sessions declaring elicitation and sends 64
/// confirmed `skill_run` calls in each (0.1 s in all), leaving every
/// approval pending. Each pending call is a request in flight, and they
/// are 128, HTTP-007's cap: every other client's request — a stateless
/// `tools/list` — is 503 "HTTP-007: 128 requests are in flight on this
/// server, its limit; wait for an answer and send this again" with
/// `Retry-After: 1`, at once and still 40 s later, for the whole 120 s the
/// approvals wait (and again when the client sends them again). Approvals
/// do not take the run lock (RUN-011) until accepted, so nothing else
/// bounds them. Now at most 8 approvals wait at once (RUN-028); a confirmed
/// call past them is refused at once, nothing started.
///
/// Issue 40: the door's third outside attack.
#[test]
fn approvals_waiting_for_a_person_do_not_lock_everyone_out() {
    let s = start("127.0.0.1:0", &["--http-allow-run"], &[]);
    let mut pending = Vec::new();
    let mut refused = 0;
    for _ in 0..2 {
        let session = initialize_declaring(s.port, &[], json!({"elicitation": {}}));
        for i in 0..64 {
            let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
            let call = rpc(
                100 + i,
                "tools/call",
                json!({"name": "skill_run", "arguments": {"name": "demo", "script": "scripts/hi.js", "confirm": true}}),
            );
            c.write_all(post_request(s.port, &call, &[("Mcp-Session-Id", &session)]).as_bytes())
                .expect("send a run");
            // Asked for, or, past the approvals that may wait at once
            // (RUN-028's 8), refused at once with nothing started.
            let seen = read_until_either(&mut c, "elicitation/create", "RUN-028");
            if seen.contains("RUN-028") {
                refused += 1;
            }
            pending.push(c);
        }
    }
    assert_eq!(
        refused,
        128 - 8,
        "approvals past the 8 that may wait were not refused"
    );
    let (status, body, took) = timed_tools_list(s.port);
    eprintln!("a fresh tools/list while 128 approvals wait: {status:?} after {took:?}: {body}");
    assert_eq!(
        status,
        Some(200),
        "with 128 approvals pending, another client's tools/list was refused: {body}"
    );
    drop(pending);
}
