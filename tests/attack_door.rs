//! An outside attack on the team door (issue 40), after its rework: the
//! built binary driven over plain sockets as a hostile client (with and
//! without the token), a hostile skill author, and a careless owner. Each
//! test names what a careful user of an MCP server expects; its doc comment
//! says what was FOUND when it was written (figures from a debug build on a
//! 2-core machine). These tests may fail on the code they were written
//! against: that is what they record.

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

/// 19,000 arrays, each nested 100 deep (under serde_json's 128), joined
/// by commas: 3.8 MB of JSON, under the 4 MiB body limit (HTTP-006).
fn nested_arrays() -> String {
    let one = format!("{}{}", "[".repeat(100), "]".repeat(100));
    vec![one; 19_000].join(",")
}

/// A plain stateless `tools/list`, timed, on a connection of its own;
/// `None` when no answer came within 60 s.
fn timed_tools_list(port: u16) -> (Option<u16>, Duration) {
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
    let status = match s.read_to_end(&mut bytes) {
        Ok(_) if !bytes.is_empty() => Some(parse(&bytes).status),
        _ => None,
    };
    (status, t.elapsed())
}

/// A tree with the `demo` skill and a skill `big` bundling four text
/// files of 1,048,476 bytes each (a skill author's large references):
/// together just under the 4 MiB a `skill_file` batch returns.
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
    let a = post(s.port, &body, &headers("tools/list", None));
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
    let (status, took) = timed_tools_list(port);
    eprintln!("a fresh tools/list while two 3.8 MB bodies are read: {status:?} after {took:?}");
    assert_eq!(status, Some(200), "no answer within {took:?}");
    assert!(
        took < Duration::from_secs(10),
        "a fresh client's tools/list took {took:?} while two clients' bodies were being read"
    );
    drop(heavy);
}

/// HTTP-008 and HTTP-015: a connection is closed when its answer "makes no
/// progress for 30 s because the client reads none of it". A client on a
/// slow link that reads steadily reads some of it every second; a careful
/// user expects it to get the whole answer, however long it takes.
///
/// FOUND: a client asks for a `skill_file` batch of four 1 MiB files
/// (an answer of 9,437,005 bytes with its head) and reads it at 2, 8 or
/// 20 KB every second. After 30 s the server closes the connection: the
/// client, reading on, gets 3,919,872 bytes (what the kernel's buffers held)
/// and then end of file, with no error said anywhere (this test, reading
/// 8 KiB a second: 315,392 bytes in 40 s, then 4,253,184 of 9,438,286 in
/// all). The write timeout
/// counts time since the server's last write, and the kernel lets the
/// server write again only after a third of its send buffer drained, which
/// a reader of less than ~60 KB/s does not do within 30 s. A reader of
/// 60 KB/s got the whole answer.
#[test]
fn a_client_reading_steadily_gets_the_whole_answer() {
    let s = start_in(big_files(), "127.0.0.1:0", &[], &[]);
    let body = stateless(
        1,
        "tools/call",
        json!({"name": "skill_file", "arguments": {"name": "big", "paths": ["f0.md", "f1.md", "f2.md", "f3.md"]}}),
    );
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    c.write_all(post_request(s.port, &body, &headers("tools/call", Some("skill_file"))).as_bytes())
        .expect("send");
    // 8 KiB a second for 40 s: a slow link, read without pause.
    c.set_read_timeout(Some(Duration::from_secs(1)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = vec![0u8; 8 * 1024];
    let start = Instant::now();
    let mut eof = false;
    while start.elapsed() < Duration::from_secs(40) {
        let tick = Instant::now();
        match c.read(&mut buf) {
            Ok(0) => {
                eof = true;
                break;
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
        if let Some(rest) = Duration::from_secs(1).checked_sub(tick.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    let slow = got.len();
    // Then the rest, as fast as it comes.
    c.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut big = vec![0u8; 1 << 20];
    let expected = loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .expect("a Content-Length");
            if got.len() >= end + 4 + length || eof {
                break end + 4 + length;
            }
        } else if eof {
            break usize::MAX;
        }
        match c.read(&mut big) {
            Ok(0) | Err(_) => eof = true,
            Ok(n) => got.extend_from_slice(&big[..n]),
        }
    };
    eprintln!(
        "read {slow} bytes slowly in 40 s, {} in all, of {expected}",
        got.len()
    );
    assert!(
        got.len() >= expected,
        "a client reading 8 KiB every second got {} bytes of an answer of {expected}, then the \
         connection closed",
        got.len()
    );
    let a = parse(&got);
    assert_eq!(a.status, 200, "{}", &a.body[..a.body.len().min(300)]);
    assert_eq!(a.json()["result"]["isError"], false);
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
        &headers("tools/call", Some("skill_file")),
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

/// HTTP-016 refuses a body in any content coding but identity, since "a
/// gateway that decodes bodies to inspect them would otherwise judge other
/// bytes than the server runs"; RFC 9112 §6.1 says a server that receives a
/// transfer coding it does not understand should answer 501. A careful user
/// expects the same of a transfer coding the server does not decode.
///
/// FOUND: `Transfer-Encoding: gzip, chunked` with a plain (not gzipped)
/// JSON body in chunks is served 200: the gzip coding is ignored and the
/// bytes are run as identity.
#[test]
fn a_body_in_a_transfer_coding_the_server_does_not_decode_is_refused() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/list\r\nConnection: close\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
         {:x}\r\n{body}\r\n0\r\n\r\n",
        s.port,
        body.len()
    );
    let a = raw(s.port, request.as_bytes());
    assert!(
        a.status >= 400 && !a.body.contains("\"result\""),
        "a body sent as gzip was run as it came: {} {}",
        a.status,
        &a.body[..a.body.len().min(200)]
    );
}

/// HTTP-003 compares a Host's name "any port"; RFC 9112 §3.2 says a server
/// must answer 400 to a Host whose value is invalid. A careful user expects
/// a Host whose port is not a number to be refused, as a Host with userinfo
/// is (HTTP-014).
///
/// FOUND: `Host: localhost:abc`, `Host: localhost:-1`, `Host: [::1]x` and
/// `Host: 127.0.0.1:99999999999` are all served 200.
#[test]
fn a_host_whose_port_is_no_port_is_refused() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    for host in ["localhost:abc", "[::1]x", "127.0.0.1:99999999999"] {
        let req = post_request(s.port, &body, &headers("tools/list", None)).replace(
            &format!("Host: 127.0.0.1:{}", s.port),
            &format!("Host: {host}"),
        );
        let a = raw(s.port, req.as_bytes());
        assert_eq!(
            a.status,
            400,
            "Host: {host} was answered {}: {}",
            a.status,
            &a.body[..a.body.len().min(120)]
        );
    }
}

/// Every refusal names the rule and what to do, in a sentence a person
/// reads (issue 40's refusals, HARD-005's excerpts).
///
/// FOUND: the HTTP-014 refusal of a request target naming another host
/// reads "which is not the Host header's (or not                      one
/// this server answers to)": a run of 22 spaces from a line break in its
/// source string.
#[test]
fn the_refusal_of_a_target_naming_another_host_reads_as_one_sentence() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    let req = post_request(s.port, &body, &headers("tools/list", None)).replacen(
        "POST /mcp ",
        "POST http://evil.test/mcp ",
        1,
    );
    let a = raw(s.port, req.as_bytes());
    assert_eq!(a.status, 400, "{a:?}");
    assert!(a.body.contains("HTTP-014"), "{}", a.body);
    assert!(
        !a.body.contains("  "),
        "the refusal carries a run of spaces: {:?}",
        a.body
    );
}

/// HTTP-006: a request's head is at most 64 KiB and at most 100 fields,
/// hyper's own count (past it hyper answers 431 before there is a request
/// to answer with words; a heap of slots per request, which raising it
/// would cost, is not worth fields no client sends).
///
/// FOUND: a request with 101 header fields (1,052 bytes of head) was 431
/// with an empty body while the limit was written nowhere; now HTTP-006
/// says it, and this holds it: 100 fields are served, 101 are 431.
#[test]
fn a_head_of_a_hundred_small_headers_is_served_or_told_the_limit() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    let head_with = |fields: usize| {
        let base = headers("tools/list", None);
        // post_request's own fields: Host, Content-Type, Accept,
        // Connection, Content-Length.
        let names: Vec<String> = (0..fields - base.len() - 5)
            .map(|i| format!("X-{i}"))
            .collect();
        let mut extra = base;
        extra.extend(names.iter().map(|n| (n.as_str(), "a")));
        let req = post_request(s.port, &body, &extra);
        let head = req.split("\r\n\r\n").next().expect("a head").to_owned();
        assert_eq!(head.lines().count() - 1, fields, "{head}");
        raw(s.port, req.as_bytes())
    };
    let hundred = head_with(100);
    assert_eq!(hundred.status, 200, "{hundred:?}");
    let more = head_with(101);
    assert_eq!(more.status, 431, "{more:?}");
}

/// HTTP-017: `--http-allow-origin` takes `scheme://host[:port]`, "anything
/// else is a usage error, exit 2". A careful owner expects an origin no
/// browser can have to be refused at start, as one with a path is.
///
/// FOUND: `--http-allow-origin https://app.example.com:99999` starts the
/// server (it listens); no page can ever match it.
#[test]
fn an_origin_with_a_port_past_65535_is_a_usage_error() {
    let dir = skills();
    let (mut child, lines) = spawn(
        dir.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--http-allow-origin",
            "https://app.example.com:99999",
        ],
        &[],
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break Some(st);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let said: Vec<String> = lines.try_iter().collect();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(2),
        "the server started with an origin of port 99999: {said:?}"
    );
}
