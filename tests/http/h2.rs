//! A connection's first bytes (src/http/h2.rs, HTTP-019): an HTTP/2 client
//! is told in its framing that the port speaks HTTP/1.1, and an HTTP/1.1
//! head however late or pipelined passes the first read.
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

/// The preface's frames as HTTP-019 sends them: an empty SETTINGS, then a
/// GOAWAY with HTTP_1_1_REQUIRED naming the rule; `None` when `got` is
/// not that.
fn goaway_words(got: &[u8]) -> Option<String> {
    if got.len() < 26 || got[..9] != [0, 0, 0, 4, 0, 0, 0, 0, 0] || got[12] != 7 {
        return None;
    }
    if got[18..26] != [0, 0, 0, 0, 0, 0, 0, 0xd] {
        return None;
    }
    let words = String::from_utf8_lossy(&got[26..]).into_owned();
    words.contains("HTTP-019").then_some(words)
}

/// The HTTP/2 client preface and an empty SETTINGS frame.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// HTTP-019: the plain port speaks HTTP/1.1 only. A client configured for HTTP/2
/// with prior knowledge (`curl --http2-prior-knowledge`, an h2c upstream
/// of a proxy) opens with the HTTP/2 preface. A careful user expects an
/// answer that says the server speaks HTTP/1.1 (RFC 9113 §3.3 leaves the
/// server to answer in HTTP/1.1; 505, or any answer in words) rather than
/// silence.
///
/// FOUND: the preface `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n` and an empty
/// SETTINGS frame get 0 bytes and a closed connection; curl says "HTTP/2
/// stream 1 was not closed cleanly before end of the underlying stream"
/// (exit 18), and the server's log says nothing at its default level.
/// (`Upgrade: h2c` on an HTTP/1.1 request is ignored and served 200, as
/// RFC 9110 allows.)
///
/// Issue 40: the door's fourth outside attack.
#[test]
fn an_http2_client_on_the_plain_port_is_answered() {
    let s = start("127.0.0.1:0", &[], &[]);
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    c.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .expect("send the preface");
    let got = read_for(&mut c, 10);
    eprintln!(
        "the HTTP/2 preface got {} bytes: {:?}",
        got.len(),
        String::from_utf8_lossy(&got)
    );
    assert!(
        !got.is_empty(),
        "an HTTP/2 client with prior knowledge gets a closed connection and no answer at all"
    );
    // HTTP-019: the server's preface (an empty SETTINGS frame), then a
    // GOAWAY on no stream with HTTP_1_1_REQUIRED (0xd), its debug data in
    // words.
    assert_eq!(
        &got[..9],
        &[0, 0, 0, 4, 0, 0, 0, 0, 0],
        "no SETTINGS frame: {got:?}"
    );
    let len = (usize::from(got[9]) << 16) | (usize::from(got[10]) << 8) | usize::from(got[11]);
    assert_eq!(got[12], 7, "the second frame is no GOAWAY: {got:?}");
    assert_eq!(
        got.len(),
        18 + len,
        "one GOAWAY after the SETTINGS: {got:?}"
    );
    assert_eq!(
        &got[18..26],
        &[0, 0, 0, 0, 0, 0, 0, 0xd],
        "not HTTP_1_1_REQUIRED"
    );
    let words = String::from_utf8_lossy(&got[26..]);
    assert!(
        words.contains("HTTP-019") && words.contains("HTTP/1.1"),
        "the GOAWAY's words: {words}"
    );
    // The server still serves HTTP/1.1.
    let a = raw(s.port, tools_list_bytes(s.port, 1, true).as_bytes());
    assert_eq!(a.status, 200, "{a:?}");
}

/// HTTP-019: "A connection whose first bytes are the HTTP/2 preface … is
/// answered in HTTP/2's own framing". TCP keeps no write boundaries: a
/// proxy relaying an h2c client's bytes, or a client on a slow link, may
/// deliver the preface in pieces. A careful user expects the same answer
/// however the first bytes arrive, as HTTP-006 bounds a head "however its
/// bytes arrive".
///
/// FOUND: the preface written in two parts with `TCP_NODELAY` — `PRI *
/// HTTP/2` (12 bytes) up to `PRI * HTTP/2.0\r` (15 bytes) first, the rest
/// 300 ms later — is answered
/// `HTTP/1.1 400 Bad Request` with an empty body and the connection
/// closed: hyper rejects the version as soon as it reads `HTTP/2`, before
/// the 16 bytes the door waits for have arrived. No SETTINGS, no GOAWAY,
/// no word of HTTP-019. (Cut at byte 5 or 17, the answer is the GOAWAY;
/// and, oddly, a byte at a time 30 ms apart is too.)
///
/// Issue 40: the door's fifth outside attack (after 9687292).
#[test]
fn an_http2_preface_in_pieces_is_answered_the_same() {
    let s = start("127.0.0.1:0", &[], &[]);
    let mut seen = Vec::new();
    for cut in [5, 12, 14, 15, 17] {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
        c.set_nodelay(true).expect("nodelay");
        c.write_all(&PREFACE[..cut]).expect("send the first part");
        std::thread::sleep(Duration::from_millis(300));
        let _ = c.write_all(&PREFACE[cut..]);
        let got = read_for(&mut c, 5);
        seen.push((format!("cut at {cut}"), got));
    }
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    c.set_nodelay(true).expect("nodelay");
    for b in PREFACE {
        if c.write_all(&[*b]).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    seen.push(("a byte at a time".to_owned(), read_for(&mut c, 5)));
    let mut wrong = Vec::new();
    for (how, got) in &seen {
        eprintln!("the preface {how}: {:?}", String::from_utf8_lossy(got));
        if goaway_words(got).is_none() {
            wrong.push(format!("{how}: {:?}", String::from_utf8_lossy(got)));
        }
    }
    assert!(
        wrong.is_empty(),
        "an HTTP/2 preface that arrived in pieces was not told HTTP-019: {wrong:#?}"
    );
}

/// HELD: the HTTP/2 answer in other shapes. The preface followed by 180 KB
/// of SETTINGS frames the client sends at once and reads only 0.5 s later
/// still gets the two frames whole (no reset ate them); `PRI * HTTP/2.0`
/// with a `Host` line after it is told the same; `PRI /mcp HTTP/1.1` and
/// `PRI * HTTP/1.1` (an HTTP/1.1 request with an odd method) are 405
/// naming HTTP-001; and the server serves HTTP/1.1 after. (Outside the
/// rule, which names a connection's first bytes: the preface sent after a
/// first HTTP/1.1 request on a kept connection gets that request's answer
/// and then a close with no byte more.)
///
/// Issue 40: the door's fifth outside attack (after 9687292).
#[test]
fn an_http2_preface_in_other_shapes_is_answered() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(PREFACE).expect("send the preface");
    let more = [0u8, 0, 0, 4, 0, 0, 0, 0, 0].repeat(20_000);
    let _ = c.write_all(&more);
    std::thread::sleep(Duration::from_millis(500));
    let got = read_for(&mut c, 5);
    assert!(
        goaway_words(&got).is_some(),
        "the preface with more after it: {got:?}"
    );
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(format!("PRI * HTTP/2.0\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes())
        .expect("send");
    let got = read_for(&mut c, 5);
    assert!(
        goaway_words(&got).is_some(),
        "PRI * HTTP/2.0 with a Host line: {got:?}"
    );
    for target in ["/mcp", "*"] {
        let a = raw(
            port,
            format!("PRI {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(a.status, 405, "PRI {target} HTTP/1.1: {a:?}");
        assert!(a.body.contains("HTTP-001"), "{a:?}");
    }
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut kept = format!("DELETE /other HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").into_bytes();
    kept.extend_from_slice(PREFACE);
    c.write_all(&kept).expect("send");
    let got = read_for(&mut c, 5);
    eprintln!(
        "the preface after a first request on a kept connection: {:?}",
        String::from_utf8_lossy(&got)
    );
    assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 404"));
    let a = tools_list(port, 1);
    assert_eq!(a.status, 200, "{a:?}");
}

/// HTTP-019's decision: "`HTTP_1_1_REQUIRED` is the code that protocol has
/// for exactly this, and curl and proxies report it by name". A careful
/// user running `curl --http2-prior-knowledge` at the server expects curl
/// to say that HTTP/1.1 is required — or, as curl does for that code on a
/// stream, to retry over HTTP/1.1 and get the answer.
///
/// FOUND: curl 7.88.1 (nghttp2 1.52.0) prints `curl: (16) Error in the
/// HTTP2 framing layer` and exits 16; only with `-v` does it show
/// `recveived GOAWAY, error=13, last_stream=0`. Neither the code's name
/// nor the GOAWAY's words (HTTP-019) reach its user. Against a stand-in
/// server that answers the same preface with SETTINGS and a RST_STREAM on
/// stream 1 with HTTP_1_1_REQUIRED (once the client's HEADERS for stream 1
/// have arrived), the same curl retries by itself over HTTP/1.1 and prints
/// the answer, exit 0. Skipped when curl is not installed.
///
/// Issue 40: the door's fifth outside attack (after 9687292).
#[test]
fn curl_with_http2_prior_knowledge_is_told_or_served() {
    let s = start("127.0.0.1:0", &[], &[]);
    let out = match std::process::Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "20",
            "--http2-prior-knowledge",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "-H",
            "Accept: application/json, text/event-stream",
            "-H",
            "MCP-Protocol-Version: 2026-07-28",
            "-H",
            "Mcp-Method: tools/list",
            "--data",
            &stateless(1, "tools/list", json!({})),
            &format!("http://127.0.0.1:{}/mcp", s.port),
        ])
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("curl is not installed ({e}): skipped");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!(
        "curl --http2-prior-knowledge: {:?}, stdout {stdout:?}, stderr {stderr:?}",
        out.status.code()
    );
    let served = out.status.success() && stdout.contains("\"skill_list\"");
    let told = stderr.contains("HTTP_1_1_REQUIRED")
        || stderr.contains("HTTP/1.1")
        || stderr.contains("HTTP-019");
    assert!(
        served || told,
        "curl with HTTP/2 prior knowledge was neither served nor told HTTP/1.1 is required: {stderr}"
    );
}

/// HTTP-008: "A client has 30 s (`HTTP_READ_TIMEOUT_SECS`) to send a
/// request's headers — past it the connection is closed with no answer";
/// HTTP-019: the first bytes are read before hyper "within the header
/// timeout". A careful user (or an operator sizing the connection cap
/// against slowloris clients) expects a head that is not whole 30 s after
/// its connection opened to be closed then, however its bytes arrive.
///
/// FOUND: a client that connects, waits 20 s, then sends
/// `POST /mcp HTTP/1.1\r\n` and nothing more, keeps its connection open
/// until 50 s: the pre-hyper read (`h2::first`) spends up to 30 s of its
/// own waiting for the first bytes, and hyper's header timeout then
/// starts its 30 s afresh when it is handed them. (Measured: first bytes
/// at 25 s, closed at 55 s; a lone `P` at 25 s, which could still be the
/// HTTP/2 preface, is closed at 30 s as it should be.) A head may so take
/// up to 60 s, twice the rule's. Before aa63bd5 (a7f325c, built apart)
/// the same client was closed at 30 s: hyper's timer ran from the start.
///
/// Issue 40: the door's sixth outside attack (after aa63bd5).
#[test]
fn a_head_whose_first_bytes_come_late_still_has_30_s_in_all() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let opened = Instant::now();
    std::thread::sleep(Duration::from_secs(20));
    c.write_all(b"POST /mcp HTTP/1.1\r\n")
        .expect("send the request line");
    // 30 s after the connection opened, and 4 s of slack for a busy machine.
    let left = Duration::from_secs(34).saturating_sub(opened.elapsed());
    let (got, closed) = read_for_closing(&mut c, left.as_secs_f64());
    let at = opened.elapsed().as_secs_f64();
    eprintln!(
        "first bytes at 20 s: closed {closed} at {at:.1} s, sent {:?}",
        String::from_utf8_lossy(&got)
    );
    assert!(
        closed,
        "a head begun 20 s in and never finished is still open {at:.1} s after its connection opened \
         (HTTP-008 gives 30 s)"
    );
}

/// HTTP-019: "an HTTP/1 request differs at its first or second byte, and
/// its bytes are handed to hyper unchanged". A careful user expects a
/// client that pipelines two requests in its first packet (what the
/// pre-hyper read reads at once) to get both answers, in order, and one
/// that sends its head and then its body on `Expect: 100-continue` to be
/// told to go on and served.
///
/// HELD: both pipelined `tools/list` are answered 200 under their ids;
/// `Expect: 100-continue` gets `100 Continue`, then the answer.
///
/// Issue 40: the door's sixth outside attack (after aa63bd5).
#[test]
fn pipelined_requests_and_expect_continue_pass_the_first_read() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let first = post_request(
        port,
        &stateless(1, "tools/list", json!({})),
        &headers("tools/list"),
    )
    .replace("Connection: close\r\n", "");
    let second = post_request(
        port,
        &stateless(2, "tools/list", json!({})),
        &headers("tools/list"),
    );
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(format!("{first}{second}").as_bytes())
        .expect("send both in one write");
    let (got, closed) = read_for_closing(&mut c, 20.0);
    let text = String::from_utf8_lossy(&got);
    assert!(closed, "the second asked to close: {text:?}");
    assert_eq!(text.matches("HTTP/1.1 200").count(), 2, "{text:?}");
    let one = text.find("\"id\":1").expect("the first answer");
    let two = text.find("\"id\":2").expect("the second answer");
    assert!(one < two, "answered in order: {text:?}");

    let body = stateless(3, "tools/list", json!({}));
    let head = post_request(port, "", &headers("tools/list"))
        .replace(
            "Content-Length: 0",
            &format!("Content-Length: {}", body.len()),
        )
        .replace("\r\n\r\n", "\r\nExpect: 100-continue\r\n\r\n");
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(head.as_bytes()).expect("send the head");
    let (told, _) = read_for_closing(&mut c, 2.0);
    assert!(
        String::from_utf8_lossy(&told).starts_with("HTTP/1.1 100 Continue\r\n\r\n"),
        "{:?}",
        String::from_utf8_lossy(&told)
    );
    c.write_all(body.as_bytes()).expect("send the body");
    let (got, _) = read_for_closing(&mut c, 20.0);
    let a = parse(&got);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["id"], 3, "{a:?}");
}

/// HTTP-019: the client's first HEADERS is "waited for up to 2 s, and 64
/// KiB of frames read at most", then the connection closes. A careful
/// user expects a hostile HTTP/2 client to hold nothing for long: not one
/// that declares a frame of 16 MiB and trickles it, nor one that sends
/// frames and never a HEADERS, nor one that floods past 64 KiB.
///
/// HELD: each is sent SETTINGS and a GOAWAY naming HTTP-019 (last stream
/// 0) and closed within about 3 s (2 s for HEADERS, 1 s to leave).
///
/// Issue 40: the door's sixth outside attack (after aa63bd5).
#[test]
fn an_http2_client_that_never_sends_headers_is_let_go() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    // A SETTINGS frame declaring 16 MiB - 1 of payload, then a trickle.
    let huge = [&preface[..], &[0xff, 0xff, 0xff, 4, 0, 0, 0, 0, 0]].concat();
    // PING frames, never a HEADERS.
    let mut pings = preface.clone();
    for _ in 0..100 {
        pings.extend_from_slice(&[0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    }
    // 200 KiB of DATA frames on stream 1, past the 64 KiB read.
    let mut flood = preface.clone();
    for _ in 0..50 {
        flood.extend_from_slice(&[0, 0x10, 0, 0, 0, 0, 0, 0, 1]);
        flood.extend_from_slice(&[b'x'; 4096]);
    }
    for (what, bytes, trickle) in [
        ("huge", huge, true),
        ("pings", pings, false),
        ("flood", flood, false),
    ] {
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        c.set_nodelay(true).expect("nodelay");
        let opened = Instant::now();
        c.write_all(&bytes).expect("send");
        let mut got = Vec::new();
        let mut closed = false;
        c.set_read_timeout(Some(Duration::from_millis(100)))
            .expect("timeout");
        let mut buf = [0u8; 4096];
        while opened.elapsed() < Duration::from_secs(10) {
            if trickle {
                // A byte of the declared payload every 100 ms.
                if c.write_all(b"z").is_err() {
                    closed = true;
                }
            }
            match c.read(&mut buf) {
                Ok(0) => closed = true,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        || e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => closed = true,
            }
            if closed {
                break;
            }
        }
        let at = opened.elapsed().as_secs_f64();
        eprintln!("{what}: closed {closed} at {at:.1} s, {} bytes", got.len());
        assert!(closed && at < 6.0, "{what}: still open at {at:.1} s");
        let words = String::from_utf8_lossy(&got);
        assert!(
            got.starts_with(&[0, 0, 0, 4, 0, 0, 0, 0, 0]) && words.contains("HTTP-019"),
            "{what}: {got:?}"
        );
    }
}
