//! The team door (issue 40): every HTTP request answered at once, and
//! nothing a stranger sends decides for the owner. Each test drives the
//! built binary from outside over plain sockets: a session on one kept
//! connection (HTTP-013), a header given twice (HTTP-014), bounds that hold
//! however the bytes arrive (HTTP-006, HTTP-007, HTTP-008), answers nobody
//! reads (HTTP-015), token sources (HTTP-005), encodings (HTTP-016),
//! browsers of origins the owner named (HTTP-017), and what the owner is
//! told at start (HTTP-018).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common;

use common::http::*;
use serde_json::{Value, json};

/// One kept-alive connection: requests written one after another, each
/// answer read whole before the next is sent, as an SDK client does.
struct Kept {
    port: u16,
    r: BufReader<TcpStream>,
}

impl Kept {
    fn open(port: u16) -> Kept {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        Kept {
            port,
            r: BufReader::new(s),
        }
    }

    fn post(&mut self, body: &str, extra: &[(&str, &str)]) -> Answer {
        let req = post_request(self.port, body, extra).replace("Connection: close\r\n", "");
        self.r.get_mut().write_all(req.as_bytes()).expect("send");
        read_one(&mut self.r)
    }
}

/// One HTTP answer off a kept connection: its head, then its body by
/// `Content-Length` or in chunks.
fn read_one(r: &mut BufReader<TcpStream>) -> Answer {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let n = r.read_line(&mut line).expect("an answer's head");
        assert!(n > 0, "the connection closed mid-answer: {head:?}");
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let (status, headers) = head_fields(head.trim_end_matches("\r\n"));
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if let Some(n) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        r.read_exact(&mut body).expect("the body");
    } else if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).expect("a chunk size");
            let n = usize::from_str_radix(size.trim(), 16).expect("a hex chunk size");
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).expect("a chunk");
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn init_body() -> String {
    rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "door", "version": "0"}}),
    )
}

/// `_meta` of a 2026-07-28 request, with the headers that revision asks.
fn stateless(id: u64, method: &str, mut params: Value) -> (String, Vec<(&'static str, String)>) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    (
        rpc(id, method, params),
        vec![
            ("MCP-Protocol-Version", "2026-07-28".to_owned()),
            ("Mcp-Method", method.to_owned()),
        ],
    )
}

fn with<'a>(h: &'a [(&'static str, String)]) -> Vec<(&'a str, &'a str)> {
    h.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Raises this process's open-file limit for a flood of connections.
fn room_for_descriptors(n: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < n
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, n.min(hard), hard);
    }
}

/// HTTP-013: in a session on one kept connection, each answer is sent as
/// soon as it is built. Before, no socket set `TCP_NODELAY` and an answer
/// in a session goes out in several writes, so each waited out Nagle's
/// algorithm and the client's delayed ACK: 44 ms a request (issue 40).
/// The bound is generous: 100 requests at the stall's 40 ms each take 4 s
/// however fast the machine is, while they take about 0.15 s unstalled.
#[test]
fn a_session_on_one_kept_connection_is_answered_at_once() {
    let s = start("127.0.0.1:0", &[], &[]);
    let mut c = Kept::open(s.port);
    let init = c.post(&init_body(), &[]);
    assert_eq!(init.status, 200, "{init:?}");
    let sid = init.header("mcp-session-id").expect("a session").to_owned();
    let h = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(c.post(&note, &h).status, 202);
    let read = |id| {
        rpc(
            id,
            "resources/read",
            json!({"uri": "skill://demo/notes.md"}),
        )
    };
    let started = Instant::now();
    for id in 0..100 {
        let a = c.post(&read(10 + id), &h);
        assert_eq!(a.status, 200, "{a:?}");
        assert!(a.body.contains("the notes"), "{a:?}");
    }
    let took = started.elapsed();
    eprintln!("100 requests of a session on one kept connection: {took:?}");
    // The stall is the behaviour under test: 3 s is twenty times the
    // unstalled time and under the stall's 4 s.
    assert!(
        took < Duration::from_secs(3),
        "100 requests of a session on one connection took {took:?}: each answer waited for the client's \
         delayed ACK"
    );
}

/// HTTP-014: a header the door decides on, given twice, is 400 whatever
/// the order and the case of its names. Before, the first decided: two
/// `Origin` headers (one foreign) passed, and `Authorization: Bearer
/// <right>` then `Bearer wrong` passed while the other order was 401.
#[test]
fn a_header_the_door_decides_on_given_twice_is_refused_whatever_the_order() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).expect("token file");
    let file = file.to_string_lossy().into_owned();
    let s = start("127.0.0.1:0", &["--http-token-file", &file], &[]);
    let bearer = format!("Bearer {TOKEN}");
    let port = s.port;
    let host = format!("127.0.0.1:{port}");
    let pairs: [(&str, &str, &str); 9] = [
        ("Host", &host, "evil.example"),
        ("Origin", "http://127.0.0.1", "https://evil.example"),
        ("Authorization", &bearer, "Bearer wrong-token-0123456789"),
        ("Mcp-Session-Id", "a", "b"),
        ("MCP-Protocol-Version", "2025-11-25", "2026-07-28"),
        ("Mcp-Method", "initialize", "tools/call"),
        ("Mcp-Name", "a", "b"),
        ("Content-Type", "application/json", "text/plain"),
        ("Last-Event-ID", "0", "1/1"),
    ];
    let body = init_body();
    for (name, good, bad) in pairs {
        for (first, second) in [(good, bad), (bad, good)] {
            let mut req = format!(
                "POST /mcp HTTP/1.1\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n\
                 Content-Length: {}\r\n{name}: {first}\r\n{}: {second}\r\n",
                body.len(),
                name.to_ascii_lowercase()
            );
            for (k, v) in [
                ("Host", host.as_str()),
                ("Authorization", bearer.as_str()),
                ("Content-Type", "application/json"),
            ] {
                if k != name {
                    req.push_str(&format!("{k}: {v}\r\n"));
                }
            }
            req.push_str("\r\n");
            req.push_str(&body);
            let a = raw(port, req.as_bytes());
            assert_eq!(a.status, 400, "{name}: {first} then {second}: {a:?}");
            assert!(
                a.body.contains("HTTP-014") && a.body.contains(name),
                "{name}: {a:?}"
            );
            assert!(a.header("mcp-session-id").is_none(), "{a:?}");
        }
    }
    // Lists are combined: Accept in two headers is one list, and serves.
    let two_accepts = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: {bearer}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nAccept: text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let a = raw(port, two_accepts.as_bytes());
    assert_eq!(a.status, 200, "{a:?}");
}

/// HTTP-014: a request target in absolute form names the host the server
/// must use; naming another host than `Host` is refused, and so is a
/// `Host` with userinfo, which one reader reads as one host and another as
/// the other. A browser's `Sec-Fetch-Site: cross-site` with no `Origin`
/// (a form or a navigation from another site) is refused; a request that
/// says nothing of where it comes from (no browser) is served.
#[test]
fn a_target_or_host_naming_another_host_and_a_cross_site_navigation_are_refused() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let body = init_body();
    let send = |target: &str, host: &str, extra: &str| {
        raw(
            port,
            format!(
                "POST {target} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nConnection: close\r\n{extra}\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
    };
    let here = format!("127.0.0.1:{port}");
    let other = send("http://evil.example/mcp", &here, "");
    assert_eq!(other.status, 400, "{other:?}");
    assert!(other.body.contains("HTTP-014"), "{other:?}");
    let same = send(&format!("http://{here}/mcp"), &here, "");
    assert_eq!(same.status, 200, "{same:?}");
    let userinfo = send("/mcp", &format!("evil.example:{port}@localhost"), "");
    assert_eq!(userinfo.status, 400, "{userinfo:?}");
    assert!(userinfo.body.contains("userinfo"), "{userinfo:?}");
    let cross = send("/mcp", &here, "Sec-Fetch-Site: cross-site\r\n");
    assert_eq!(cross.status, 403, "{cross:?}");
    assert!(cross.body.contains("HTTP-014"), "{cross:?}");
    let same_origin = send("/mcp", &here, "Sec-Fetch-Site: same-origin\r\n");
    assert_eq!(same_origin.status, 200, "{same_origin:?}");
}

/// HTTP-006: the head limit holds for a head sent in one write. Before, a
/// head of up to ~114 KB passed when it arrived at once and was 431 when
/// it came in 4 KiB writes.
#[test]
fn a_head_over_64_kib_in_one_write_is_431() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = init_body();
    let filler = "a".repeat(8_000);
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        s.port,
        body.len()
    );
    for i in 0..12 {
        req.push_str(&format!("X-Filler-{i}: {filler}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    assert!(req.len() > 90_000);
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let _ = c.write_all(req.as_bytes());
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 431"), "{text}");
    assert!(!text.contains("mcp-session-id"), "{text}");
}

/// HTTP-007: a request whose body has not arrived holds no capacity
/// another client needs. Before, 128 clients that sent their headers and
/// one chunk of body and stalled held every in-flight slot, and every
/// other client got 503 for 30 s. 200 such clients now leave a fresh one
/// served at once (the wait asserted is far under the 30 s they stall).
#[test]
fn clients_whose_bodies_stall_do_not_lock_out_a_fresh_client() {
    let s = start("127.0.0.1:0", &[], &[]);
    let stalled: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
            c.write_all(
                format!(
                    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
                     Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
                    s.port
                )
                .as_bytes(),
            )
            .expect("send");
            c
        })
        .collect();
    // Let the server read every one of them.
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let a = post(s.port, &init_body(), &[]);
    let waited = started.elapsed();
    eprintln!("a fresh client behind 200 stalled bodies waited {waited:?}");
    assert_eq!(a.status, 200, "{a:?}");
    let (body, h) = stateless(2, "tools/list", json!({}));
    let b = post(s.port, &body, &with(&h));
    assert_eq!(b.status, 200, "{b:?}");
    assert!(
        waited < Duration::from_secs(10),
        "a fresh client waited {waited:?} behind 200 stalled bodies"
    );
    drop(stalled);
}

/// HTTP-008: a flood of connections that send nothing, or send their head
/// a byte at a time, does not keep a fresh client out: at the cap of
/// 2,048 a new connection closes the longest quiet one. Before, 2,100 idle
/// connections made a fresh client wait 23–26 s.
#[test]
fn a_flood_of_quiet_connections_leaves_a_fresh_client_served() {
    room_for_descriptors(8_192);
    let s = start("127.0.0.1:0", &[], &[]);
    for partial in ["", "POST /mcp HTTP/1.1\r\nHo"] {
        let flood: Vec<TcpStream> = (0..2_100)
            .filter_map(|_| {
                let mut c = TcpStream::connect(("127.0.0.1", s.port)).ok()?;
                c.write_all(partial.as_bytes()).ok()?;
                Some(c)
            })
            .collect();
        assert!(
            flood.len() > 2_048,
            "only {} connections opened",
            flood.len()
        );
        std::thread::sleep(Duration::from_millis(500));
        let started = Instant::now();
        let a = post(s.port, &init_body(), &[]);
        let waited = started.elapsed();
        eprintln!("{partial:?}: a fresh client behind 2,100 quiet connections waited {waited:?}");
        assert_eq!(a.status, 200, "{partial:?}: {a:?}");
        assert!(
            waited < Duration::from_secs(10),
            "{partial:?}: a fresh client waited {waited:?} behind 2,100 quiet connections"
        );
        drop(flood);
    }
}

/// A tree whose `big` skill bundles four files of 1 MiB: one `skill_file`
/// batch of them answers about 11 MiB.
fn big_skills() -> tempfile::TempDir {
    let dir = skills();
    let big = dir.path().join("big");
    std::fs::create_dir_all(&big).expect("mkdir");
    std::fs::write(
        big.join("SKILL.md"),
        "---\nname: big\ndescription: Four large files.\n---\nRead them.\n",
    )
    .expect("SKILL.md");
    for i in 0..4 {
        std::fs::write(big.join(format!("f{i}.txt")), "a".repeat(1024 * 1024)).expect("a file");
    }
    dir
}

/// HTTP-015: the bytes of answers that clients do not read are bounded in
/// total. Before, 100 clients that never read an 11 MiB batch answer held
/// about 1.08 GiB. Now, past the budget a request is refused with 503,
/// `Retry-After` and a message naming the rule, a small request is still
/// answered, and once the readers go away the room comes back.
#[test]
fn answers_nobody_reads_are_bounded_in_bytes() {
    let s = start_in(big_skills(), "127.0.0.1:0", &[], &[]);
    let (batch, h) = stateless(
        1,
        "tools/call",
        json!({"name": "skill_file", "arguments": {"name": "big", "paths": ["f0.txt", "f1.txt", "f2.txt", "f3.txt"]}}),
    );
    let mut h = h;
    h.push(("Mcp-Name", "skill_file".to_owned()));
    let req = post_request(s.port, &batch, &with(&h));
    // One read whole, to see what such an answer is.
    let whole = raw(s.port, req.as_bytes());
    assert_eq!(
        whole.status,
        200,
        "{}",
        &whole.body[..200.min(whole.body.len())]
    );
    assert!(whole.body.len() > 8 << 20, "{}", whole.body.len());
    // Clients that send the request and never read.
    let mut unread = Vec::new();
    let mut refused = None;
    for _ in 0..40 {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
        c.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        c.write_all(req.as_bytes()).expect("send");
        // Its answer's head comes when its answer is built, or its refusal.
        let mut head = [0u8; 12];
        c.read_exact(&mut head).expect("an answer begins");
        if head.starts_with(b"HTTP/1.1 503") {
            let mut rest = Vec::new();
            let _ = c.read_to_end(&mut rest);
            refused = Some(String::from_utf8_lossy(&rest).into_owned());
            break;
        }
        assert!(head.starts_with(b"HTTP/1.1 200"), "{head:?}");
        unread.push(c);
    }
    let refused = refused.unwrap_or_else(|| {
        panic!("40 clients each hold an unread ~11 MiB answer and none was refused")
    });
    assert!(
        refused.contains("HTTP-015") && refused.to_ascii_lowercase().contains("retry-after"),
        "{refused}"
    );
    // A small request still goes through.
    let (body, h) = stateless(2, "tools/list", json!({}));
    assert_eq!(post(s.port, &body, &with(&h)).status, 200);
    // The readers go away: their answers' room comes back.
    let held = unread.len();
    drop(unread);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let a = raw(s.port, req.as_bytes());
        if a.status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the room of {held} unread answers never came back: {}",
            a.status
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The server's stderr until it exits, or `None` if it is still running
/// after `secs`.
fn exits_with(args: &[&str], env: &[(&str, &str)], secs: u64) -> Option<(i32, String)> {
    let dir = skills();
    let (mut child, lines) = spawn(dir.path(), args, env);
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            std::thread::sleep(Duration::from_millis(100));
            let text: Vec<String> = lines.try_iter().collect();
            return Some((status.code().unwrap_or(-1), text.join("\n")));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// HTTP-005: a token file that is no regular file, or whose first line is
/// no token a client could send, is refused at start, naming the file and
/// why. Before, a FIFO hung the start forever with no message, `/dev/zero`
/// was read until memory ran out, and a first line of 8 MiB started a
/// server no client could authenticate to. A bad `SKILL_MCP_HTTP_TOKEN`
/// names the variable, not "the first line of the file".
#[test]
fn a_token_source_that_is_no_token_is_refused_at_start_naming_it() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let long = dir.path().join("long");
    std::fs::write(&long, "a".repeat(8 << 20)).expect("a long line");
    let cases = [
        (fifo.to_string_lossy().into_owned(), "not a regular file"),
        ("/dev/zero".to_owned(), "not a regular file"),
        (dir.path().to_string_lossy().into_owned(), "a directory"),
        (long.to_string_lossy().into_owned(), "longer than"),
    ];
    for (path, why) in cases {
        let said = exits_with(
            &["--http", "127.0.0.1:0", "--http-token-file", &path],
            &[],
            20,
        )
        .unwrap_or_else(|| panic!("{path}: the server did not stop"));
        assert_eq!(said.0, 2, "{path}: {said:?}");
        assert!(
            said.1.contains("HTTP-005") && said.1.contains(&path) && said.1.contains(why),
            "{path}: {said:?}"
        );
        assert!(!said.1.contains("listening"), "{path}: {said:?}");
    }
    let said = exits_with(
        &["--http", "127.0.0.1:0"],
        &[("SKILL_MCP_HTTP_TOKEN", "short")],
        20,
    )
    .expect("the server stops");
    assert_eq!(said.0, 2, "{said:?}");
    assert!(
        said.1.contains("SKILL_MCP_HTTP_TOKEN") && !said.1.contains("file"),
        "{said:?}"
    );
    // A variable of several lines is a file's text pasted in: refused,
    // where a file's first line is the token by decision.
    let pasted = format!("{TOKEN}\n# made on the laptop\n");
    let said = exits_with(
        &["--http", "127.0.0.1:0"],
        &[("SKILL_MCP_HTTP_TOKEN", &pasted)],
        20,
    )
    .expect("the server stops");
    assert_eq!(said.0, 2, "{said:?}");
    assert!(
        said.1.contains("SKILL_MCP_HTTP_TOKEN") && said.1.contains("more than one line"),
        "{said:?}"
    );
}

/// HTTP-016: a body in any encoding but identity is 415 and never parsed.
/// Before, `Content-Encoding: gzip` on a plain JSON body was executed as if
/// identity, so a gateway that decodes bodies to inspect them judged other
/// bytes than the server ran.
#[test]
fn a_body_in_an_encoding_is_415_and_never_run() {
    let s = start("127.0.0.1:0", &[], &[]);
    for coding in [
        vec!["gzip"],
        vec!["br"],
        vec!["identity", "deflate"],
        vec!["identity, gzip"],
    ] {
        let h: Vec<(&str, &str)> = coding.iter().map(|c| ("Content-Encoding", *c)).collect();
        let a = post(s.port, &init_body(), &h);
        assert_eq!(a.status, 415, "{coding:?}: {a:?}");
        assert!(
            a.body.contains("HTTP-016") && a.body.contains("identity"),
            "{a:?}"
        );
        assert!(a.header("mcp-session-id").is_none(), "{a:?}");
    }
    let plain = post(s.port, &init_body(), &[("Content-Encoding", "identity")]);
    assert_eq!(plain.status, 200, "{plain:?}");
}

/// HTTP-017: a page of an origin the owner named gets CORS answers — its
/// preflight before the token is checked (a browser never sends one on a
/// preflight), with exactly its origin, the methods and the headers MCP
/// sends, and `Mcp-Session-Id` exposed — and every other origin, loopback
/// ones included, gets no CORS header at all. Before, the preflight was
/// 405 with none, whatever the owner allowed.
#[test]
fn only_origins_the_owner_named_get_cors_answers() {
    let s = start(
        "127.0.0.1:0",
        &["--http-allow-origin", "http://app.test:3000"],
        &[("SKILL_MCP_HTTP_TOKEN", TOKEN)],
    );
    let port = s.port;
    let preflight = |origin: &str| {
        raw(
            port,
            format!(
                "OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\n\
                 Access-Control-Request-Method: POST\r\n\
                 Access-Control-Request-Headers: authorization, content-type, mcp-session-id\r\n\
                 Connection: close\r\n\r\n"
            )
            .as_bytes(),
        )
    };
    let ok = preflight("http://app.test:3000");
    assert!(ok.status < 300, "{ok:?}");
    assert_eq!(
        ok.header("access-control-allow-origin"),
        Some("http://app.test:3000"),
        "{ok:?}"
    );
    let methods = ok.header("access-control-allow-methods").unwrap_or("");
    for m in ["GET", "POST", "DELETE"] {
        assert!(methods.contains(m), "{ok:?}");
    }
    let allowed = ok
        .header("access-control-allow-headers")
        .unwrap_or("")
        .to_ascii_lowercase();
    for h in [
        "authorization",
        "content-type",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "last-event-id",
    ] {
        assert!(allowed.contains(h), "{h}: {ok:?}");
    }
    for other in [
        "http://evil.test",
        "http://127.0.0.1:3000",
        "http://localhost",
    ] {
        let a = preflight(other);
        assert!(
            a.headers
                .iter()
                .all(|(k, _)| !k.to_ascii_lowercase().starts_with("access-control-")),
            "{other}: {a:?}"
        );
    }
    // The real request still needs the token, and its answer names the
    // origin and exposes the session id.
    let from_app = [("Origin", "http://app.test:3000")];
    let no_token = post(port, &init_body(), &from_app);
    assert_eq!(no_token.status, 401, "{no_token:?}");
    let bearer = format!("Bearer {TOKEN}");
    let a = post(
        port,
        &init_body(),
        &[
            ("Origin", "http://app.test:3000"),
            ("Authorization", &bearer),
        ],
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.header("access-control-allow-origin"),
        Some("http://app.test:3000")
    );
    assert!(
        a.header("access-control-expose-headers")
            .is_some_and(|v| v.to_ascii_lowercase().contains("mcp-session-id")),
        "{a:?}"
    );
    let local = post(
        port,
        &init_body(),
        &[
            ("Origin", "http://127.0.0.1:3000"),
            ("Authorization", &bearer),
        ],
    );
    assert_eq!(local.status, 200, "{local:?}");
    assert!(
        local.header("access-control-allow-origin").is_none(),
        "{local:?}"
    );
    // An origin that is not one is a usage error at start.
    let said = exits_with(
        &["--http", "127.0.0.1:0", "--http-allow-origin", "app.test"],
        &[],
        20,
    )
    .expect("the server stops");
    assert_eq!(said.0, 2, "{said:?}");
    assert!(said.1.contains("scheme://host"), "{said:?}");
}

/// HTTP-018: bound beyond loopback with no name allowed, the owner is told
/// at start that teammates' requests will be refused, and how to allow
/// them; with a name allowed, nothing is said. A port in use says another
/// process holds it and what to do.
#[test]
fn the_owner_is_told_at_start_what_teammates_will_meet() {
    // Everything the server says on stderr up to a second after it listens.
    let said_at_start = |args: &[&str]| {
        let dir = skills();
        let (mut child, lines) = spawn(dir.path(), args, &[("SKILL_MCP_HTTP_TOKEN", TOKEN)]);
        let mut said = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut listening = None;
        loop {
            let until = listening.unwrap_or(deadline);
            let Ok(line) = lines.recv_timeout(until.saturating_duration_since(Instant::now()))
            else {
                break;
            };
            if line.contains("listening on") {
                listening = Some(Instant::now() + Duration::from_secs(1));
            }
            said.push(line);
        }
        assert!(listening.is_some(), "it never listened: {said:?}");
        let _ = child.kill();
        let _ = child.wait();
        said.join("\n")
    };
    let open = said_at_start(&["--http", "0.0.0.0:0"]);
    assert!(
        open.contains("refused") && open.contains("--http-allow-host NAME"),
        "{open}"
    );
    let named = said_at_start(&[
        "--http",
        "0.0.0.0:0",
        "--http-allow-host",
        "skills.team.test",
    ]);
    assert!(!named.contains("--http-allow-host NAME"), "{named}");

    let s = start("127.0.0.1:0", &[], &[]);
    let taken = format!("127.0.0.1:{}", s.port);
    let said = exits_with(&["--http", &taken], &[], 20).expect("the second server stops");
    assert_ne!(said.0, 0, "{said:?}");
    assert!(
        said.1.contains("another process holds") && said.1.contains("port 0"),
        "{said:?}"
    );
}

/// HTTP-003, HTTP-005 (found by the README's newcomer run): a host name
/// with a port or a scheme could never match a `Host` header, and started
/// a server that refused every teammate; it is a usage error naming the
/// fix. A token file other users can read is said at start.
#[test]
fn an_allowed_host_that_can_never_match_and_a_readable_token_file_are_said() {
    for bad in ["devbox:8080", "http://devbox", "dev box", "", ".", "a..b"] {
        let said = exits_with(
            &["--http", "127.0.0.1:0", "--http-allow-host", bad],
            &[],
            20,
        )
        .unwrap_or_else(|| panic!("{bad:?}: the server did not stop"));
        assert_eq!(said.0, 2, "{bad:?}: {said:?}");
        assert!(said.1.contains("not a host name"), "{bad:?}: {said:?}");
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).expect("token file");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let path = file.to_string_lossy().into_owned();
    let (mut child, lines) = spawn(
        dir.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--http-token-file",
            &path,
            "--http-allow-host",
            "DevBox",
        ],
        &[],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut said = Vec::new();
    while !said.iter().any(|l: &String| l.contains("listening on")) {
        let left = deadline.saturating_duration_since(Instant::now());
        said.push(lines.recv_timeout(left).expect("the server starts"));
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = said.join("\n");
    assert!(
        text.contains("readable by other users") && text.contains(&format!("chmod 600 {path}")),
        "{text}"
    );
}

/// HTTP-003, HTTP-005 (found by a newcomer, issue 41): the owner hears of
/// a refused teammate at the default log level — once a minute for each
/// kind — where before only "listening" was said while teammates got 403
/// and 401; and a token file whose second line looks like a token too is
/// said at start (only the first line is the token).
#[test]
fn the_owner_hears_of_refusals_and_of_a_second_token_line() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\nanother-token-0123456789\n")).expect("token file");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let path = file.to_string_lossy().into_owned();
    let (mut child, lines) = spawn(
        dir.path(),
        &["--http", "127.0.0.1:0", "--http-token-file", &path],
        &[],
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut said = Vec::new();
    let port: u16 = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).expect("the server starts");
        if let Some(at) = line.find("listening on http://") {
            break line[at + "listening on http://".len()..]
                .split('/')
                .next()
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| p.parse().ok())
                .expect("a port");
        }
        said.push(line);
    };
    assert!(
        said.iter()
            .any(|l| l.contains("1 more line") && l.contains("only the first line is the token")),
        "{said:?}"
    );
    for _ in 0..3 {
        assert_eq!(post(port, &init_body(), &[]).status, 401);
    }
    let bad_host = post_request(port, &init_body(), &[])
        .replace(&format!("Host: 127.0.0.1:{port}"), "Host: teammate.example");
    assert_eq!(raw(port, bad_host.as_bytes()).status, 403);
    let mut heard = Vec::new();
    let until = Instant::now() + Duration::from_secs(20);
    while heard.len() < 2 && Instant::now() < until {
        if let Ok(l) = lines.recv_timeout(Duration::from_millis(200))
            && l.contains("WARN")
            && l.contains("refused with")
        {
            heard.push(l);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    // One line for the three 401s, one for the 403.
    assert_eq!(heard.len(), 2, "{heard:?}");
    assert!(heard.iter().any(|l| l.contains("HTTP-005")), "{heard:?}");
    assert!(heard.iter().any(|l| l.contains("HTTP-003")), "{heard:?}");
}
