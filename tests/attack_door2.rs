//! A third outside attack on the team door (issue 40), after its second
//! hardening: the shape check before decoding (WIRE-009), the write
//! timeout that counts the client's reading, the answers' budget that
//! reserves no run output before approval, the transfer codings, the Host
//! form, the eviction of the quietest connection at the cap, and bodies
//! read before any slot against a 64 MiB budget. The built binary is
//! driven over plain sockets (and stdio) as a hostile client, a hostile
//! skill author and a careless owner. Each test names what a careful user
//! of an MCP server expects; its doc comment says what was FOUND when it
//! was written (figures from a debug build on a 2-core machine). These
//! tests may fail on the code they were written against: that is what
//! they record.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;
use crate::common::http::*;

/// What a 2026-07-28 request carries instead of a session.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A stateless (2026-07-28) request under `id`, with its `_meta`.
fn stateless(id: u64, method: &str, mut params: Value) -> String {
    params["_meta"] = meta();
    rpc(id, method, params)
}

/// The 2026-07-28 headers of a request for `method` (and `name`, for the
/// methods that carry `Mcp-Name`).
fn headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(n) = name {
        h.push(("Mcp-Name", n));
    }
    h
}

/// A plain stateless `tools/list` on a connection of its own, timed: its
/// status (`None` when no answer came within 60 s) and its body.
fn timed_tools_list(port: u16) -> (Option<u16>, String, Duration) {
    let t = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let req = post_request(
        port,
        &stateless(9, "tools/list", json!({})),
        &headers("tools/list", None),
    );
    s.write_all(req.as_bytes()).expect("send");
    let mut bytes = Vec::new();
    match s.read_to_end(&mut bytes) {
        Ok(_) if !bytes.is_empty() => {
            let a = parse(&bytes);
            (Some(a.status), a.body, t.elapsed())
        }
        _ => (None, String::new(), t.elapsed()),
    }
}

/// Reads from `c` until `needle` shows (within 20 s a read), failing when
/// the connection ends first; what was read.
fn read_until(c: &mut TcpStream, needle: &str) -> String {
    c.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let n = c.read(&mut buf).expect("more of the answer");
        assert!(
            n > 0,
            "the connection ended before {needle:?}: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen).into_owned()
}

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

/// Everything `c` sends until it closes or 30 s pass.
fn read_all(c: &mut TcpStream) -> Vec<u8> {
    c.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut bytes = Vec::new();
    let _ = c.read_to_end(&mut bytes);
    bytes
}

/// A tree with the `demo` skill and a skill `big` bundling four text
/// files of 1,048,476 bytes each (a skill author's large references).
fn big_files() -> tempfile::TempDir {
    let dir = skills();
    let big = dir.path().join("big");
    std::fs::create_dir_all(&big).expect("mkdir");
    std::fs::write(
        big.join("SKILL.md"),
        "---\nname: big\ndescription: Large reference files.\n---\nRead f0.md to f3.md.\n",
    )
    .expect("SKILL.md");
    let alphabet = b"abcdefghij \n";
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..4 {
        let text: Vec<u8> = (0..1_048_476)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize]
            })
            .collect();
        std::fs::write(big.join(format!("f{i}.md")), text).expect("a big file");
    }
    dir
}

/// `n` connections, each sending a POST head (`Content-Length: 1000`) and
/// the first byte of its body, then nothing: a stranger's requests whose
/// bodies are "still being sent".
fn flood(port: u16, n: usize) -> Vec<TcpStream> {
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        conns.push(TcpStream::connect(("127.0.0.1", port)).expect("connect"));
    }
    start_bodies(port, &mut conns);
    conns
}

/// `n` connections that send nothing yet, opened from four threads.
fn bare(port: u16, n: usize) -> Vec<TcpStream> {
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let count = n / 4 + usize::from(t < n % 4);
            std::thread::spawn(move || {
                (0..count)
                    .map(|_| TcpStream::connect(("127.0.0.1", port)).expect("connect"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    threads
        .into_iter()
        .flat_map(|t| t.join().expect("a thread"))
        .collect()
}

/// A POST head (`Content-Length: 1000`) and the first byte of its body on
/// each of `conns`.
fn start_bodies(port: u16, conns: &mut [TcpStream]) {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: 1000\r\n\r\n{{"
    );
    for c in conns {
        let _ = c.write_all(head.as_bytes());
    }
}

/// A string of `n` bytes, for requests that carry a lot in one value (one
/// JSON value: WIRE-009 counts values, not bytes).
fn junk(n: usize) -> String {
    "j".repeat(n)
}

/// The server's resident memory, in KiB, once it has had a second to
/// settle.
fn settled_rss(pid: u32) -> u64 {
    std::thread::sleep(Duration::from_secs(1));
    common::proc_kib(pid, "VmRSS")
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
        c.write_all(post_request(s.port, &body, &headers("subscriptions/listen", None)).as_bytes())
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

/// HTTP-008: at the 2,048 connections a new one closes one "that holds
/// nothing a client waits on … A request in flight and a stream are never
/// closed for it"; HTTP-007: "Only a request read whole takes a slot. It
/// is in flight from then"; HTTP-015: a request that finds no room for its
/// answer "waits up to 5 s, then is 503 with `Retry-After: 5`". A careful
/// user expects a request it sent whole to get an answer — served, or
/// refused in words — however many connections a stranger opens.
///
/// FOUND: 13 clients that never read hold the answers' budget with
/// `skill_file` batches of four 1 MiB files; an honest client's batch,
/// sent whole, waits for room (on its own it is 503 naming HTTP-015 after
/// 5 s). A stranger holding 2,020 connections that have sent nothing
/// then starts a request on each (a POST head and one byte of a
/// 1,000-byte body) and opens 60 more, 20 ms apart: the honest client's
/// connection is closed with no answer at all (0 bytes, in each of five
/// runs), while the stranger's, none with its body sent, are kept. The
/// request read whole and waiting for room counts as a connection that
/// may be closed, and as the quietest one.
#[test]
fn a_request_sent_whole_is_answered_when_a_stranger_fills_the_connections() {
    let s = start_in(big_files(), "127.0.0.1:0", &[], &[]);
    let port = s.port;
    let batch = stateless(
        1,
        "tools/call",
        json!({"name": "skill_file", "arguments": {"name": "big", "paths": ["f0.md", "f1.md", "f2.md", "f3.md"]}}),
    );
    let request = post_request(port, &batch, &headers("tools/call", Some("skill_file")));
    let mut holders = Vec::new();
    for _ in 0..13 {
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        c.write_all(request.as_bytes()).expect("send a batch");
        holders.push(c);
        std::thread::sleep(Duration::from_millis(300));
    }
    // The stranger's connections, sending nothing yet: with the 13, just
    // under the 2,048.
    let t = Instant::now();
    let mut stranger = bare(port, 2_020);
    eprintln!("2,020 connections opened in {:?}", t.elapsed());
    std::thread::sleep(Duration::from_secs(1));
    let mut honest = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    honest
        .write_all(request.as_bytes())
        .expect("send the honest batch");
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    start_bodies(port, &mut stranger);
    for _ in 0..60 {
        stranger.extend(flood(port, 1));
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "2,020 requests started and 60 connections opened in {:?}",
        t.elapsed()
    );
    let got = read_all(&mut honest);
    let text = String::from_utf8_lossy(&got[..got.len().min(400)]).into_owned();
    eprintln!("the honest batch got {} bytes: {text}", got.len());
    assert!(
        got.starts_with(b"HTTP/1.1 200") || String::from_utf8_lossy(&got).contains("HTTP-015"),
        "an honest request sent whole, waiting for room for its answer, got {} bytes when a \
         stranger's connections passed the cap: {text:?}",
        got.len()
    );
    drop(stranger);
    drop(holders);
}

/// HTTP-008 closes a connection "still sending its body" to make room at
/// the 2,048 connections; every other refusal of the door is an answer
/// naming its rule (the 408 for a body that does not arrive names
/// HTTP-008). A careful user expects a request closed to make room to be
/// told so — a 503 naming the rule, with a `Retry-After` — rather than a
/// connection that just ends.
///
/// FOUND: a stranger holds 2,040 connections that have sent nothing; an
/// honest client sends its head and the first 10 bytes of a `tools/list`
/// body and pauses half a second (a slow link); the stranger then starts a
/// request on each of its connections (a POST head and one byte of body)
/// and opens 60 more, 20 ms apart. The honest connection is closed with no
/// answer (0 bytes read, the rest of its body refused): nothing says why.
/// (Python, 2,100 connections opened one by one after the honest head: the
/// same, 0 bytes.)
#[test]
fn a_request_closed_to_make_room_is_told_why() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let body = stateless(3, "tools/list", json!({}));
    let request = post_request(port, &body, &headers("tools/list", None));
    let split = request.len() - body.len() + 10;
    let mut stranger = bare(port, 2_040);
    std::thread::sleep(Duration::from_secs(1));
    let mut honest = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    honest
        .write_all(&request.as_bytes()[..split])
        .expect("send the head and 10 bytes");
    std::thread::sleep(Duration::from_millis(500));
    start_bodies(port, &mut stranger);
    for _ in 0..60 {
        stranger.extend(flood(port, 1));
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(1));
    let _ = honest.write_all(&request.as_bytes()[split..]);
    let got = read_all(&mut honest);
    let text = String::from_utf8_lossy(&got[..got.len().min(400)]).into_owned();
    eprintln!("the honest request got {} bytes: {text}", got.len());
    assert!(
        got.starts_with(b"HTTP/1.1 200") || text.contains("HTTP-008"),
        "a request whose body was being sent was closed with {} bytes of answer: {text:?}",
        got.len()
    );
    drop(stranger);
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
        c.write_all(
            format!(
                "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\
                 Mcp-Session-Id: {session}\r\n\r\n"
            )
            .as_bytes(),
        )
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

/// HARD-005: "No reply quotes more than an excerpt of what the client
/// sent … Sent a 10 MiB string, each door answers in under 4 KiB".
///
/// FOUND: a stateless `tools/call` whose `name` is 3.9 MB and whose
/// `Mcp-Name` header says `skill_list` is answered 400 -32020 "Mcp-Name
/// header `skill_list` does not match body value `jjjj…`" quoting the whole
/// 3.9 MB name: a body of 3,900,118 bytes. A `resources/read` with a 3.9 MB
/// `uri` and a `prompts/get` with a 3.9 MB `name` are quoted whole the same
/// way (rmcp's check of the 2026-07-28 headers, after the door's).
#[test]
fn a_name_header_that_does_not_match_the_body_is_answered_with_an_excerpt() {
    let s = start("127.0.0.1:0", &[], &[]);
    let long = junk(3_900_000);
    for (method, params, name) in [
        (
            "tools/call",
            json!({"name": long, "arguments": {}}),
            "skill_list",
        ),
        (
            "resources/read",
            json!({"uri": long}),
            "skill://demo/notes.md",
        ),
        ("prompts/get", json!({"name": long}), "demo"),
    ] {
        let a = post(
            s.port,
            &stateless(1, method, params),
            &headers(method, Some(name)),
        );
        eprintln!(
            "{method} with a 3.9 MB value and Mcp-Name {name}: {} with a {}-byte body",
            a.status,
            a.body.len()
        );
        assert!(
            a.body.len() < 4096,
            "{method}: a 3.9 MB value was answered with {} bytes: {}…",
            a.body.len(),
            &a.body[..a.body.len().min(200)]
        );
    }
}

/// HTTP-016: a body in a transfer coding the server does not decode is
/// never read as plain bytes: `gzip, chunked` (chunked last) reaches the
/// door and is 501 naming the rule; a coding list whose last is not
/// `chunked` (`gzip`, `chunked, gzip`, `identity`) leaves the body's length
/// unknown (RFC 9112 §6.3), and hyper refuses it with 400 before there is a
/// request to answer in words — as HTTP-016 now writes down.
///
/// FOUND: those three were 400 with an empty body while the rule promised
/// 501 naming it for every coding but chunked; the rule now says which
/// answer each gets, and this holds both: never served, and in words
/// wherever a request exists.
#[test]
fn a_transfer_coding_the_server_does_not_decode_is_refused_in_words() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    for coding in ["gzip, chunked", "gzip", "chunked, gzip", "identity"] {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: tools/list\r\nConnection: close\r\nTransfer-Encoding: {coding}\r\n\r\n\
             {:x}\r\n{body}\r\n0\r\n\r\n",
            s.port,
            body.len()
        );
        let a = raw(s.port, request.as_bytes());
        eprintln!("Transfer-Encoding: {coding}: {} {:?}", a.status, a.body);
        assert!(
            !a.body.contains("\"result\""),
            "{coding}: served: {}",
            a.body
        );
        if coding.ends_with("chunked") {
            assert_eq!(a.status, 501, "{coding}: {a:?}");
            assert!(a.body.contains("HTTP-016"), "{coding}: {}", a.body);
        } else {
            assert_eq!(a.status, 400, "{coding}: {a:?}");
        }
    }
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
#[test]
fn a_body_that_is_not_utf8_is_told_so() {
    let s = start("127.0.0.1:0", &[], &[]);
    // "café" in Latin-1: the é is the one byte 0xE9, no UTF-8 sequence.
    let text = stateless(1, "tools/list", json!({"note": "cafX"}));
    let at = text.find("cafX").expect("the note") + 3;
    let mut body = text.into_bytes();
    body[at] = 0xE9;
    let mut request = post_request(s.port, "", &headers("tools/list", None))
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

/// HTTP-003: a request's `Host` must name `localhost` (among others),
/// "compared without case, any port", and a refusal names "`--http-allow-host`
/// as the owner's remedy". `localhost.` is the same name written absolute
/// (RFC 1034 §3.1), which a resolver answers as `localhost` and a client
/// such as curl sends as written. A careful user expects it served — or,
/// if refused, a remedy that works.
///
/// FOUND: `Host: localhost.:PORT` is 403 "HTTP-003: the Host header names
/// \"localhost.\", which this server does not answer to (it answers to
/// localhost, 127.0.0.1, ::1) … if this name is yours, start the server
/// with --http-allow-host \"localhost.\"" — and the server started so
/// exits with status 2: "\"localhost.\" is not a host name". No owner can
/// allow a name written with its trailing dot (`devbox.` the same).
#[test]
fn a_host_written_with_its_trailing_dot_is_served_or_its_remedy_works() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    let request = post_request(s.port, &body, &headers("tools/list", None)).replace(
        &format!("Host: 127.0.0.1:{}", s.port),
        &format!("Host: localhost.:{}", s.port),
    );
    let a = raw(s.port, request.as_bytes());
    eprintln!("Host: localhost.: {} {}", a.status, a.body);
    if a.status == 200 {
        return;
    }
    let remedy = a
        .body
        .split("--http-allow-host ")
        .nth(1)
        .map(|r| r.trim().trim_matches('"').to_owned())
        .unwrap_or_else(|| panic!("the refusal names no remedy: {}", a.body));
    let dir = skills();
    let (mut child, lines) = spawn(
        dir.path(),
        &["--http", "127.0.0.1:0", "--http-allow-host", &remedy],
        &[],
    );
    let mut said = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let listening = loop {
        match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.contains("listening on http://") => break true,
            Ok(line) => said.push(line),
            Err(_) => break false,
        }
    };
    let _ = child.kill();
    let status = child.wait().expect("the server's status");
    assert!(
        listening,
        "the 403 for Host: localhost. says to start with --http-allow-host {remedy:?}; so \
         started, the server {status}: {said:?}"
    );
}
