//! skill-mcp --http attacked from outside (a hostile client, a hostile skill
//! author, a careless owner). Each test here names the behaviour a careful
//! user of an MCP server would expect and, in its doc comment, what was found.
//! The helpers are tests/common/http.rs's: the built binary on a free
//! port, spoken to with hand-written HTTP/1.1 over a plain `TcpStream`.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::common;

use common::http::*;
use serde_json::json;

fn init_body(id: u64) -> String {
    rpc(
        id,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "attack", "version": "0"}}),
    )
}

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

/// Spawns the server with `args` and waits until it says it listens or
/// exits; returns whether it listens and what it said on stderr.
fn starts(args: &[&str]) -> (bool, String, Option<Child>) {
    let dir = skills();
    let (mut child, rx) = spawn(dir.path(), args, &[]);
    let mut said = String::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                said.push_str(&line);
                said.push('\n');
                if line.contains("listening on http://") {
                    std::mem::forget(dir);
                    return (true, said, Some(child));
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(_) => {}
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    (false, said, None)
}

/// FOUND: spec HTTP-005 says "the token is the first line of
/// `--http-token-file PATH` (a trailing newline is not part of it)", but a
/// token file with anything after its first line (a comment, a second
/// line an editor or `echo >>` left) is refused as a token with
/// whitespace: the server does not start (exit 2, "must be at least 16
/// bytes with no spaces or control characters (this one is N bytes)", N
/// counting the whole file). An owner following the spec cannot start the
/// server, and the message misleads them about why.
#[test]
fn a_token_file_s_first_line_is_the_token() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(
        &file,
        "a-test-token-0123456789\n# made with openssl rand -hex 32\n",
    )
    .expect("token file");
    let file = file.to_string_lossy().into_owned();
    let (listening, said, child) = starts(&["--http", "127.0.0.1:0", "--http-token-file", &file]);
    if let Some(mut c) = child {
        let _ = c.kill();
        let _ = c.wait();
    }
    assert!(
        listening,
        "a token file whose first line is a good token did not start the server: {said}"
    );
}

// ---- a raw socket with a tiny receive buffer (no libc crate: declare it) ----

#[repr(C)]
struct SockaddrIn {
    family: u16,
    port: u16,
    addr: u32,
    zero: [u8; 8],
}

unsafe extern "C" {
    fn socket(domain: i32, ty: i32, protocol: i32) -> i32;
    fn setsockopt(fd: i32, level: i32, name: i32, value: *const std::ffi::c_void, len: u32) -> i32;
    fn connect(fd: i32, addr: *const SockaddrIn, len: u32) -> i32;
}

/// A loopback connection whose receive buffer is as small as Linux allows,
/// set before connecting so the window it advertises stays small: a client
/// that reads slowly, or not at all.
fn tiny_window(port: u16) -> TcpStream {
    use std::os::fd::FromRawFd;
    const AF_INET: i32 = 2;
    const SOCK_STREAM: i32 = 1;
    const SOL_SOCKET: i32 = 1;
    const SO_RCVBUF: i32 = 8;
    // SAFETY: plain POSIX calls on a descriptor this function owns; the
    // descriptor is handed to TcpStream, which closes it.
    unsafe {
        let fd = socket(AF_INET, SOCK_STREAM, 0);
        assert!(fd >= 0, "socket");
        let one: i32 = 1;
        let r = setsockopt(
            fd,
            SOL_SOCKET,
            SO_RCVBUF,
            std::ptr::from_ref(&one).cast(),
            4,
        );
        assert_eq!(r, 0, "setsockopt");
        let addr = SockaddrIn {
            family: AF_INET as u16,
            port: port.to_be(),
            addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
            zero: [0; 8],
        };
        let r = connect(
            fd,
            &raw const addr,
            std::mem::size_of::<SockaddrIn>() as u32,
        );
        assert_eq!(r, 0, "connect");
        TcpStream::from_raw_fd(fd)
    }
}

/// Opens a session's GET stream on `s` and reads its answer's head.
fn open_stream(mut s: TcpStream, session: &str) -> TcpStream {
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        s,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\n\r\n"
    )
    .expect("GET");
    let mut seen = Vec::new();
    let mut buf = [0u8; 1];
    while !seen.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut buf).expect("the stream opens");
        assert!(n > 0, "the stream closed");
        seen.extend_from_slice(&buf[..n]);
    }
    assert!(
        String::from_utf8_lossy(&seen).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&seen)
    );
    s
}

/// The server's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("/proc status")
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// FOUND: a client that asks for a large answer and never reads it makes
/// the server hold that answer in memory for as long as the client keeps
/// the connection open — there is no write timeout to match the 30 s read
/// bounds (HTTP-008). A `skill_file` of a skill's four ~1 MB reference
/// files answers ~7.8 MB (the text twice: `content` and
/// `structuredContent`); 60 connections that each send one such request
/// with a tiny receive window pinned ~450 MiB (23 MiB → 472 MiB RSS, still
/// so 45 s later), about 7.5 MiB a connection, freed only when they close.
/// The connection cap (2,048) lets one client pin roughly 2,048 × 7.5 MiB
/// ≈ 15 GiB: the "bounded so 10,000 initialize calls
/// cannot exhaust memory" design has no bound on answers a client leaves
/// unread. Expected: past the server's own timeouts, a connection whose
/// client does not read is closed and its answer freed.
#[test]
fn answers_a_client_never_reads_are_not_held_past_the_timeouts() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let skill = dir.path().join("big");
    std::fs::create_dir_all(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: big\ndescription: A skill with four large references.\n---\nRead ref1.md to ref4.md.\n",
    )
    .expect("SKILL.md");
    let line = format!("{}\n", "lorem ipsum dolor sit amet ".repeat(40));
    for i in 1..=4 {
        std::fs::write(skill.join(format!("ref{i}.md")), line.repeat(900)).expect("ref");
    }
    let s = start_in(dir, "127.0.0.1:0", &[], &[]);
    let pid = s.child.id();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "skill_file",
        "arguments": {"name": "big", "paths": ["ref1.md", "ref2.md", "ref3.md", "ref4.md"]},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }})
    .to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: skill_file\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    // One honest call first, so the baseline includes whatever a first
    // answer leaves behind.
    let honest = raw(
        s.port,
        req.replacen("\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1)
            .as_bytes(),
    );
    assert_eq!(
        honest.status,
        200,
        "{}",
        &honest.body[..200.min(honest.body.len())]
    );
    std::thread::sleep(Duration::from_secs(1));
    let base = rss_kib(pid);
    let mut held = Vec::new();
    for _ in 0..60 {
        let mut c = tiny_window(s.port);
        c.write_all(req.as_bytes()).expect("send");
        held.push(c);
    }
    std::thread::sleep(Duration::from_secs(5));
    let soon = rss_kib(pid);
    // Freed once the write timeout (30 s without progress: the behaviour
    // under test) has closed the connections, about 26 s from here. Polled
    // rather than read once at a fixed time: on a loaded machine the 60
    // answers take longer to build, so the timeouts start later. The 180 s
    // deadline, six times that, only ends a test whose memory is never
    // freed (spec README, "Timing in tests").
    let began = Instant::now();
    let mut late = rss_kib(pid);
    while late >= base + 100 * 1024 && began.elapsed() < Duration::from_secs(180) {
        std::thread::sleep(Duration::from_secs(1));
        late = rss_kib(pid);
    }
    eprintln!(
        "60 unread answers: {} MiB held 5 s in, freed {:?} later",
        soon.saturating_sub(base) / 1024,
        began.elapsed()
    );
    assert!(
        late < base + 100 * 1024,
        "60 connections that never read their answers still pin {} MiB of the server's memory 185 s later \
         (RSS {} MiB before, {} MiB 5 s after, {} MiB 185 s after); nothing ever frees it while they stay open",
        (late.saturating_sub(base)) / 1024,
        base / 1024,
        soon / 1024,
        late / 1024
    );
    drop(held);
}

/// FOUND: a request with two `Host` headers is served when the first names
/// an allowed host, whatever the second names: the HTTP-003 check reads
/// only the first (`headers.get(HOST)`). RFC 9112 §3.2: "A server MUST
/// respond with a 400 (Bad Request) status code to any HTTP/1.1 request
/// message that … contains more than one Host header field line". Two
/// readers of one request (a proxy that keeps the last, this door the
/// first) then disagree about which host it is for — the ambiguity a Host
/// allowlist exists to remove. Low severity (a browser sends one Host).
#[test]
fn a_request_with_two_host_headers_is_refused() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = init_body(1);
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nHost: evil.example\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        s.port,
        body.len()
    );
    let a = raw(s.port, req.as_bytes());
    assert!(
        a.status == 400 || a.status == 403,
        "two Host headers, the second foreign, were served: {} {:?}",
        a.status,
        a.header("mcp-session-id")
    );
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
    let delete = |id: &str| {
        raw(
            s.port,
            format!(
                "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {id}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
    };
    let first = delete(&session);
    assert_eq!(first.status, 204, "{first:?}");
    let gone = post(
        s.port,
        &rpc(2, "ping", json!({})),
        &[("Mcp-Session-Id", &session)],
    );
    assert_eq!(gone.status, 404, "{gone:?}");
    let again = delete(&session);
    let never = delete("00000000-0000-0000-0000-000000000000");
    assert_eq!(
        (again.status, never.status),
        (404, 404),
        "DELETE of a gone session: {again:?}; of one that never was: {never:?}"
    );
}

/// FOUND: a token file saved with a UTF-8 byte-order mark (as Windows
/// editors write it) starts the server — U+FEFF is neither whitespace nor a
/// control character, so HTTP-005's check passes — but the mark becomes
/// part of the token, and no client can ever authenticate: the token in
/// the file sent as `Authorization: Bearer <token>` is 401, and a header
/// holding the mark's bytes is not ASCII, which the door reads as no
/// token at all. The same holds for any non-ASCII token. The server looks
/// healthy and refuses everyone. Expected: either the token is what the
/// owner sees (the mark is not part of it), or the server refuses to start
/// naming the problem, as it does for a short token. Low severity.
#[test]
fn a_token_file_with_a_byte_order_mark_either_works_or_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, "\u{feff}a-test-token-0123456789\r\n").expect("token file");
    let file = file.to_string_lossy().into_owned();
    let (listening, said, child) = starts(&["--http", "127.0.0.1:0", "--http-token-file", &file]);
    let Some(mut child) = child else {
        // Refused at start: acceptable if it says why.
        assert!(said.contains("HTTP-005"), "{said}");
        return;
    };
    assert!(listening);
    let port: u16 = said
        .split("listening on http://")
        .nth(1)
        .and_then(|a| a.split('/').next())
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .expect("a port");
    let a = post(
        port,
        &init_body(1),
        &[("Authorization", "Bearer a-test-token-0123456789")],
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        a.status, 200,
        "the server started with a BOM-prefixed token file, and the token the file shows is refused: {a:?}"
    );
}
