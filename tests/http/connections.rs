//! The open connections (src/http/connections.rs; HTTP-008): the cap and
//! who gives way at it, write timeouts, pipelining, HTTP/1.0.
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

/// The ids of the JSON-RPC answers in `bytes`, in order.
fn ids(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    text.match_indices("{\"jsonrpc\":\"2.0\",\"id\":")
        .map(|(i, m)| {
            text[i + m.len()..]
                .split([',', '}'])
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// The status lines of every answer in `bytes`, in order.
fn statuses(bytes: &[u8]) -> Vec<u16> {
    let text = String::from_utf8_lossy(bytes);
    text.match_indices("HTTP/1.")
        .filter_map(|(i, _)| {
            let line = &text[i..];
            let status = line.split(' ').nth(1)?;
            (status.len() == 3).then(|| status.parse().ok()).flatten()
        })
        .collect()
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

/// The server's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("/proc status")
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
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
///
/// Issue 40: the door's second outside attack.
#[test]
fn a_client_reading_steadily_gets_the_whole_answer() {
    let s = start_in(big_files(), "127.0.0.1:0", &[], &[]);
    let body = stateless(
        1,
        "tools/call",
        json!({"name": "skill_file", "arguments": {"name": "big", "paths": ["f0.md", "f1.md", "f2.md", "f3.md"]}}),
    );
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    c.write_all(post_request(s.port, &body, &headers_named("tools/call", "skill_file")).as_bytes())
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
///
/// Issue 40: the door's third outside attack.
#[test]
fn a_request_sent_whole_is_answered_when_a_stranger_fills_the_connections() {
    let s = start_in(big_files(), "127.0.0.1:0", &[], &[]);
    let port = s.port;
    let batch = stateless(
        1,
        "tools/call",
        json!({"name": "skill_file", "arguments": {"name": "big", "paths": ["f0.md", "f1.md", "f2.md", "f3.md"]}}),
    );
    let request = post_request(port, &batch, &headers_named("tools/call", "skill_file"));
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
    let got = read_to_close(&mut honest);
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
///
/// Issue 40: the door's third outside attack.
#[test]
fn a_request_closed_to_make_room_is_told_why() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let body = stateless(3, "tools/list", json!({}));
    let request = post_request(port, &body, &headers("tools/list"));
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
    let got = read_to_close(&mut honest);
    let text = String::from_utf8_lossy(&got[..got.len().min(400)]).into_owned();
    eprintln!("the honest request got {} bytes: {text}", got.len());
    assert!(
        got.starts_with(b"HTTP/1.1 200") || text.contains("HTTP-008"),
        "a request whose body was being sent was closed with {} bytes of answer: {text:?}",
        got.len()
    );
    drop(stranger);
}

/// HELD: requests pipelined on one kept connection — three in one write,
/// and one after each kind of refusal the door gives before or without
/// reading a body (400 no session, 403 Host, 404 path, 405 method with a
/// body, 415 coding, 400 a header twice) — are each answered, in order,
/// under their own ids; two pipelined in a session too.
///
/// Issue 40: the door's fourth outside attack.
#[test]
fn pipelined_requests_are_answered_in_order_after_refusals() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let send = |bytes: String| {
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        c.write_all(bytes.as_bytes()).expect("send");
        read_for(&mut c, 30)
    };
    let three = tools_list_bytes(port, 1, false)
        + &tools_list_bytes(port, 2, false)
        + &tools_list_bytes(port, 3, true);
    let got = send(three);
    assert_eq!(
        statuses(&got),
        [200, 200, 200],
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert_eq!(ids(&got), ["1", "2", "3"]);

    let next = tools_list_bytes(port, 9, true);
    let no_session = post_request(port, &rpc(1, "tools/list", json!({})), &[])
        .replace("Connection: close\r\n", "");
    let foreign = tools_list_bytes(port, 1, false)
        .replace(&format!("Host: 127.0.0.1:{port}"), "Host: evil.test");
    let path = tools_list_bytes(port, 1, false).replace("POST /mcp ", "POST /other ");
    let put = format!(
        "PUT /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 50\r\n\r\n{}",
        "x".repeat(50)
    );
    let coded = tools_list_bytes(port, 1, false).replace(
        "Content-Type: application/json\r\n",
        "Content-Type: application/json\r\nContent-Encoding: gzip\r\n",
    );
    let twice = tools_list_bytes(port, 1, false).replace(
        "Mcp-Method: tools/list\r\n",
        "Mcp-Method: tools/list\r\nMcp-Method: tools/list\r\n",
    );
    for (refused, status) in [
        (no_session, 400),
        (foreign, 403),
        (path, 404),
        (put, 405),
        (coded, 415),
        (twice, 400),
    ] {
        let got = send(refused + &next);
        assert_eq!(
            statuses(&got),
            [status, 200],
            "{}",
            String::from_utf8_lossy(&got)
        );
        assert!(
            ids(&got).contains(&"9".to_owned()),
            "{}",
            String::from_utf8_lossy(&got)
        );
    }

    let session = initialize(port, &[]);
    let one = |id: u64, close: bool| {
        let r = post_request(
            port,
            &rpc(id, "tools/list", json!({})),
            &[("Mcp-Session-Id", &session)],
        );
        if close {
            r
        } else {
            r.replace("Connection: close\r\n", "")
        }
    };
    let got = send(one(21, false) + &one(22, true));
    assert_eq!(
        statuses(&got),
        [200, 200],
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert_eq!(ids(&got), ["21", "22"]);
}

/// HELD: an HTTP/1.0 request (no keep-alive) is answered in HTTP/1.0 —
/// a stateless request as JSON, an `initialize` as an event stream
/// carrying `Mcp-Session-Id` — and the connection then closes.
///
/// Issue 40: the door's fourth outside attack.
#[test]
fn an_http_1_0_client_is_served() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let req = tools_list_bytes(port, 4, true)
        .replace(" HTTP/1.1\r\n", " HTTP/1.0\r\n")
        .replace("Connection: close\r\n", "");
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(req.as_bytes()).expect("send");
    let got = read_for(&mut c, 30);
    let a = parse(&got);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["id"], 4, "{a:?}");
    assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.0 200"));
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
