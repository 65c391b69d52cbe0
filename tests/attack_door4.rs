//! A fifth outside attack on the team door (issue 40), after the fourth
//! round's fixes (commit 9687292): the oldest stream giving way at the
//! 1,024 cap on streams (HTTP-008), other methods refused 405 in words
//! (HTTP-001), and an HTTP/2 preface answered with SETTINGS and a GOAWAY
//! (HTTP-019). The built binary is driven over plain sockets (and curl,
//! when installed) as a hostile client, a careless one and a real HTTP
//! client would drive it. Each test names what a careful user of an MCP
//! server expects; a test marked FOUND says what was found when it was
//! written (figures from a debug build on a 2-core machine) and may fail
//! on the code it was written against: that is what it records. The
//! others, marked HELD, record what held.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

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

/// The 2026-07-28 headers of a request for `method`.
fn headers(method: &str) -> Vec<(&str, &str)> {
    vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ]
}

/// A stateless `tools/list` under `id`, its connection closed after.
fn tools_list(port: u16, id: u64) -> Answer {
    post(
        port,
        &stateless(id, "tools/list", json!({})),
        &headers("tools/list"),
    )
}

/// Everything `c` sends until it closes or `secs` pass.
fn read_all(c: &mut TcpStream, secs: u64) -> Vec<u8> {
    c.set_read_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    while Instant::now() < deadline {
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break,
        }
    }
    got
}

/// Reads from `c` until `needle` shows (within 20 s a read), failing when
/// the connection ends first; what was read.
fn read_until(c: &mut TcpStream, needle: &str) -> String {
    c.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    while !String::from_utf8_lossy(&got).contains(needle) {
        let n = c.read(&mut buf).unwrap_or(0);
        assert!(
            n > 0,
            "the connection ended before {needle:?}: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
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

/// The bytes of a `subscriptions/listen` under `id` on a kept connection.
fn listen_request(port: u16, id: u64) -> String {
    let body = stateless(
        id,
        "subscriptions/listen",
        json!({"notifications": {"promptsListChanged": true}}),
    );
    post_request(port, &body, &headers("subscriptions/listen")).replace("Connection: close\r\n", "")
}

/// The head of the answer on `c` (read until the blank line, 20 s at most).
fn head_of(c: &mut TcpStream) -> String {
    c.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("\r\n\r\n") {
        let n = c.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// A `subscriptions/listen` opened on a connection of its own and held,
/// once its head is read; its head when it was not served.
fn open_listen(port: u16, id: u64) -> Result<TcpStream, String> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(listen_request(port, id).as_bytes())
        .expect("send the listen");
    let head = head_of(&mut c);
    if head.starts_with("HTTP/1.1 200") {
        Ok(c)
    } else {
        Err(head)
    }
}

/// `n` listens, each acknowledged, under ids from `first`.
fn listens(port: u16, first: u64, n: u64) -> Vec<TcpStream> {
    (first..first + n)
        .map(|id| open_listen(port, id).unwrap_or_else(|h| panic!("listen {id} refused: {h}")))
        .collect()
}

/// A session's GET stream, held once its head is read; its head when it
/// was not served.
fn open_get(port: u16, session: &str) -> Result<TcpStream, String> {
    open_get_from(
        TcpStream::connect(("127.0.0.1", port)).expect("connect"),
        port,
        session,
    )
}

/// A connection to the server from another loopback address than the
/// tests' own, as a client on another machine has.
fn connect_from(source: [u8; 4], port: u16) -> TcpStream {
    use socket2::{Domain, SockAddr, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).expect("a socket");
    s.bind(&SockAddr::from(std::net::SocketAddr::from((source, 0))))
        .expect("bind the source address");
    s.connect(&SockAddr::from(std::net::SocketAddr::from((
        [127, 0, 0, 1],
        port,
    ))))
    .expect("connect");
    s.into()
}

fn open_get_from(mut c: TcpStream, port: u16, session: &str) -> Result<TcpStream, String> {
    c.write_all(
        format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\
             Mcp-Session-Id: {session}\r\n\r\n"
        )
        .as_bytes(),
    )
    .expect("open a GET stream");
    let head = head_of(&mut c);
    if head.starts_with("HTTP/1.1 200") {
        Ok(c)
    } else {
        Err(head)
    }
}

/// Whether the server has closed `c`: what it sent is read and dropped,
/// without waiting.
fn ended(c: &mut TcpStream) -> bool {
    c.set_nonblocking(true).expect("nonblocking");
    let mut buf = [0u8; 65536];
    let gone = loop {
        match c.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    c.set_nonblocking(false).expect("blocking");
    gone
}

/// How many of `held` the server has closed.
fn count_ended(held: &mut [TcpStream]) -> usize {
    held.iter_mut().map(ended).filter(|&gone| gone).count()
}

/// HTTP-008: "A new stream past the cap closes the stream open longest".
/// A careful user expects only a new *stream* to cost someone theirs: a
/// request the door or rmcp refuses, or one that opens no stream, should
/// cost nobody anything.
///
/// FOUND: with 1,024 listens open (the cap), each of these closes the
/// listen open longest — its client cut off — and then holds the slot it
/// freed for the moment its own refusal takes: a GET naming a session
/// that is not open (404 "Not Found: Session not found"), a GET with a
/// `Last-Event-ID` never issued (an empty stream that ends at once), a GET
/// without `Accept: text/event-stream` (406), a `subscriptions/listen` in
/// a 2025-11-25 session (-32601), one whose `Mcp-Method` names another
/// method (400 -32020) and one without `MCP-Protocol-Version` (400
/// -32020). The slot is taken (and the oldest closed) before rmcp has
/// looked at the request. When the cap is held by a team's own streams
/// (or refilled by their clients opening them again), a stranger holding
/// nothing closes one of them with every such one-shot request.
#[test]
fn a_request_that_opens_no_stream_closes_no_ones_stream() {
    room_for_descriptors(8_192);
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let session = initialize(port, &[]);
    let mut held = listens(port, 1000, 1024);
    let get = |extra: &str| {
        format!("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n{extra}\r\n")
    };
    let listen_body = |id: u64, stateless: bool| {
        let mut params = json!({"notifications": {"promptsListChanged": true}});
        if stateless {
            params["_meta"] = meta();
        }
        rpc(id, "subscriptions/listen", params)
    };
    let kinds: Vec<(&str, String)> = vec![
        (
            "a GET naming no open session",
            get("Accept: text/event-stream\r\nMcp-Session-Id: no-such-session\r\n"),
        ),
        (
            "a GET with a Last-Event-ID never issued",
            get(&format!(
                "Accept: text/event-stream\r\nMcp-Session-Id: {session}\r\nLast-Event-ID: 77/77\r\n"
            )),
        ),
        (
            "a GET without Accept: text/event-stream",
            get(&format!("Mcp-Session-Id: {session}\r\n")),
        ),
        (
            "a listen in a 2025-11-25 session",
            post_request(
                port,
                &listen_body(7, false),
                &[("Mcp-Session-Id", &session)],
            ),
        ),
        (
            "a listen whose Mcp-Method names another method",
            post_request(
                port,
                &listen_body(8, true),
                &[
                    ("MCP-Protocol-Version", "2026-07-28"),
                    ("Mcp-Method", "tools/list"),
                ],
            ),
        ),
        (
            "a listen without MCP-Protocol-Version",
            post_request(port, &listen_body(9, true), &[]),
        ),
    ];
    let mut costly = Vec::new();
    for (next, (what, request)) in (5000..).zip(kinds) {
        // The cap full again (a listen closed for this one is fine).
        held.push(open_listen(port, next).unwrap_or_else(|h| panic!("{h}")));
        std::thread::sleep(Duration::from_millis(200));
        let before = count_ended(&mut held);
        let a = raw(port, request.as_bytes());
        std::thread::sleep(Duration::from_millis(300));
        let cut = count_ended(&mut held) - before;
        eprintln!(
            "{what}: {} {:?}; streams it closed: {cut}",
            a.status,
            a.body.chars().take(120).collect::<String>()
        );
        if cut > 0 {
            costly.push(format!("{what} ({} {:?})", a.status, a.body));
        }
    }
    assert!(
        costly.is_empty(),
        "at the stream cap, requests that open no stream each closed someone's stream: {costly:#?}"
    );
    drop(held);
}

/// HTTP-008's decision: "a client that opens streams faster than others
/// can only churn them, and every client's own stream comes back when it
/// opens it again". A careful teammate expects to keep the one GET stream
/// their client holds while a stranger who already holds every other slot
/// keeps opening more: the stranger's own streams are the ones to go.
///
/// FOUND: a stranger holds 1,023 listens; a teammate's GET stream takes
/// the 1,024th slot; the stranger then opens 1,100 more listens, one after
/// another (about 1.2 s in all), each closing the stream open longest —
/// first its own older ones, then the teammate's, which ends. A stranger
/// looping like that cuts every other client's stream about once a second;
/// whatever `list_changed` falls in the gap before each client opens its
/// stream again (the SDKs wait the 3 s `retry`) is lost, as no events are
/// kept. (Oldest-first picks exactly the long-lived streams of patient
/// clients, and spares the churner's fresh ones.)
///
/// Now: the stream that goes is the oldest of the address holding the
/// most streams (HTTP-008), so the stranger's loop closes its own; the
/// teammate connects from another address (127.0.0.2), as one on another
/// machine does. From one address — loopback, or behind a shared proxy —
/// no request tells a stranger from a teammate, and the oldest goes.
#[test]
fn a_teammates_stream_outlives_a_stranger_churning_listens() {
    room_for_descriptors(8_192);
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let mut stranger = listens(port, 1000, 1023);
    let session = initialize(port, &[]);
    let mut teammate = open_get_from(connect_from([127, 0, 0, 2], port), port, &session)
        .unwrap_or_else(|h| panic!("{h}"));
    // 1,100, not 1,024: streams opened in the same millisecond are equally
    // old, and which of them goes first is the registry's pick.
    let t = Instant::now();
    stranger.extend(listens(port, 3000, 1100));
    eprintln!(
        "the stranger opened 1,100 more listens in {:?}; of its own, {} were closed",
        t.elapsed(),
        count_ended(&mut stranger)
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !ended(&mut teammate),
        "a stranger opening listens in a loop closed a teammate's GET stream"
    );
    drop(stranger);
}

/// Every refusal of the door names its rule and what to do. A careful
/// user whose stream the server closes for a newcomer (HTTP-008) expects
/// to be told so on it — an SSE comment or event naming the rule, or at
/// least a stream that ends as an HTTP message ends — and the owner
/// expects the log to say it happened.
///
/// FOUND: the listen open longest, when a newcomer past the cap closes it,
/// gets its acknowledgement and then the connection's end in the middle of
/// its chunked body (no last chunk, no event, no word of HTTP-008): to its
/// client, a network failure. The server's log says nothing of it at its
/// default level (a debug line only).
#[test]
fn a_stream_closed_for_a_newcomer_is_told_why() {
    room_for_descriptors(8_192);
    let (s, log) = start_logged(skills(), "127.0.0.1:0", &[], &[]);
    let port = s.port;
    let mut oldest = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    oldest
        .write_all(listen_request(port, 1).as_bytes())
        .expect("send the listen");
    let acknowledged = read_until(&mut oldest, "acknowledged");
    let others = listens(port, 1000, 1023);
    let _newcomer = open_listen(port, 9).unwrap_or_else(|h| panic!("{h}"));
    let got = acknowledged + &String::from_utf8_lossy(&read_all(&mut oldest, 5));
    eprintln!("the oldest listen, after a newcomer past the cap: {got:?}");
    let said: Vec<String> = log.try_iter().collect();
    eprintln!("the server's log meanwhile: {said:?}");
    assert!(
        got.contains("HTTP-008"),
        "a listen closed for a newcomer was cut without a word: {got:?}"
    );
    assert!(
        got.ends_with("0\r\n\r\n"),
        "a listen closed for a newcomer ended mid-body: {got:?}"
    );
    drop(others);
}

/// HELD: a session whose GET stream is closed for a newcomer (the spec:
/// "a GET stream's client opens it again") is kept: its requests are
/// answered, its GET opened again is served (closing the oldest listen in
/// turn), and a reload's `list_changed` reaches the stream opened again.
#[test]
fn a_session_whose_stream_was_closed_opens_it_again_and_hears_reloads() {
    room_for_descriptors(8_192);
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let session = initialize(port, &[]);
    let mut first = open_get(port, &session).unwrap_or_else(|h| panic!("{h}"));
    let others = listens(port, 1000, 1024);
    std::thread::sleep(Duration::from_millis(300));
    assert!(ended(&mut first), "the GET stream open longest was kept");
    let listed = post(
        port,
        &rpc(2, "tools/list", json!({})),
        &[("Mcp-Session-Id", &session)],
    );
    assert_eq!(listed.status, 200, "{listed:?}");
    let mut again = open_get(port, &session).unwrap_or_else(|h| panic!("{h}"));
    let skill = s._dir.path().join("added");
    std::fs::create_dir_all(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: added\ndescription: Added after a stream was closed.\n---\nBody.\n",
    )
    .expect("SKILL.md");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.child.id() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .expect("SIGHUP");
    let heard = read_until(&mut again, "notifications/prompts/list_changed");
    assert!(heard.contains("list_changed"), "{heard}");
    drop(others);
}

/// HELD: many newcomers past the cap at once. With 1,024 listens held,
/// 600 listens sent from 600 threads at once are each answered 200 (every
/// one closing a stream open longer), the slowest in about 0.2 s; none is
/// left without an answer and none waits near the 5 s
/// `HTTP_BUDGET_WAIT_SECS`.
#[test]
fn many_newcomers_at_the_cap_are_each_answered() {
    room_for_descriptors(8_192);
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let held = listens(port, 1000, 1024);
    let newcomers: Vec<_> = (0..600u64)
        .map(|i| {
            std::thread::spawn(move || {
                let t = Instant::now();
                let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
                c.write_all(listen_request(port, 5000 + i).as_bytes())
                    .expect("send the listen");
                let head = head_of(&mut c);
                (head, t.elapsed(), c)
            })
        })
        .collect();
    let mut slowest = Duration::ZERO;
    let mut kept = Vec::new();
    for n in newcomers {
        let (head, took, c) = n.join().expect("a newcomer");
        slowest = slowest.max(took);
        assert!(
            head.starts_with("HTTP/1.1 200")
                || (head.starts_with("HTTP/1.1 503") && head.contains("HTTP-008")),
            "a newcomer at the cap got {head:?} after {took:?}"
        );
        kept.push(c);
    }
    eprintln!("600 newcomers at once at the cap: the slowest answered in {slowest:?}");
    assert!(
        slowest < Duration::from_secs(10),
        "a newcomer waited {slowest:?}"
    );
    drop((held, kept));
}

/// HELD: a request mid-answer is never closed for a stream. A confirmed
/// `skill_run` waiting on its client's approval (an `elicitation/create`
/// on the call's own stream) stays open while 2,048 listens are opened
/// past the cap (every stream then open closed at least once), and the
/// approval, sent after, gets the run's answer on that stream.
#[test]
fn an_elicitation_mid_answer_is_never_closed_for_a_stream() {
    room_for_descriptors(8_192);
    let s = start("127.0.0.1:0", &["--http-allow-run"], &[]);
    let port = s.port;
    let session = initialize_declaring(port, &[], json!({"elicitation": {}}));
    let h = [("Mcp-Session-Id", session.as_str())];
    let call = rpc(
        5,
        "tools/call",
        json!({"name": "skill_run", "arguments": {"name": "demo", "script": "scripts/hi.js", "confirm": true}}),
    );
    let mut run = crate::http::open_post(port, &call, &h);
    let mut got = Vec::new();
    let ask = crate::http::event_with(&mut run, &mut got, "elicitation/create");
    let held = listens(port, 1000, 2048);
    let accepted = post(
        port,
        &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}).to_string(),
        &h,
    );
    assert_eq!(accepted.status, 202, "{accepted:?}");
    run.read_to_end(&mut got)
        .expect("the rest of the run's stream");
    let ran = parse(&got).json();
    assert_eq!(ran["id"], 5, "{ran}");
    assert!(ran.to_string().contains("hi"), "{ran}");
    drop(held);
}

/// HELD: HTTP-001's 405 in every form a hostile or odd client sends, and
/// its place among the checks. Without a token: `HEAD` (the head only,
/// with `Allow`), `OPTIONS` without `Origin` and in asterisk form
/// (`OPTIONS *`), a lowercase `get` (methods are case-sensitive), a
/// method of every token character, a 4,000-byte method (an excerpt in a
/// short body), a `PUT` in absolute form at another path, `CONNECT /mcp`
/// and `CONNECT host:port` (a request pipelined after it answered) — each
/// 405 with `Allow: GET, POST, DELETE` and words naming HTTP-001. With a
/// token: 401 first for `PUT`, `OPTIONS`, `HEAD` and `CONNECT`; 405 once
/// the token is sent. From an origin named by `--http-allow-origin`: the
/// preflight (and an `OPTIONS` without `Access-Control-Request-Method`)
/// answered 200 before the token, for the methods served; a `PUT` with
/// the token 405 with `Allow` and `Access-Control-Allow-Origin`. A foreign
/// origin's preflight is 403 (HTTP-003), a loopback origin's 401.
#[test]
fn other_methods_are_405_in_words_in_every_form() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let host = format!("Host: 127.0.0.1:{port}\r\nConnection: close\r\n");
    let long = "M".repeat(4000);
    for (line, shown) in [
        ("OPTIONS /mcp".to_owned(), "OPTIONS"),
        ("OPTIONS *".to_owned(), "OPTIONS"),
        ("get /mcp".to_owned(), "get"),
        ("X!#$%&'*+-.^_`|~ /mcp".to_owned(), "X!#$%&'*+-.^_`|~"),
        (format!("{long} /mcp"), "MMMM"),
        (format!("PUT http://127.0.0.1:{port}/other"), "PUT"),
        ("CONNECT /mcp".to_owned(), "CONNECT"),
        (format!("CONNECT 127.0.0.1:{port}"), "CONNECT"),
    ] {
        let a = raw(port, format!("{line} HTTP/1.1\r\n{host}\r\n").as_bytes());
        let what = line.chars().take(40).collect::<String>();
        assert_eq!(a.status, 405, "{what}: {a:?}");
        assert_eq!(
            a.header("allow"),
            Some("GET, POST, DELETE"),
            "{what}: {a:?}"
        );
        assert!(
            a.body.contains("HTTP-001") && a.body.contains(shown) && a.body.len() < 1024,
            "{what}: {:?}",
            a.body
        );
    }
    let a = raw(port, format!("HEAD /mcp HTTP/1.1\r\n{host}\r\n").as_bytes());
    assert_eq!(a.status, 405, "{a:?}");
    assert_eq!(a.header("allow"), Some("GET, POST, DELETE"), "{a:?}");
    assert!(a.body.is_empty(), "a HEAD answer carried a body: {a:?}");
    // CONNECT leaves the connection as it was: a request after it is served.
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(
        format!(
            "CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n\
             GET /other HTTP/1.1\r\n{host}\r\n"
        )
        .as_bytes(),
    )
    .expect("send");
    let both = String::from_utf8_lossy(&read_all(&mut c, 10)).into_owned();
    assert!(
        both.starts_with("HTTP/1.1 405") && both.contains("HTTP/1.1 404"),
        "{both}"
    );
    drop(s);

    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).expect("token");
    let mut perms = std::fs::metadata(&file).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o600);
    std::fs::set_permissions(&file, perms).expect("chmod");
    let s = start(
        "127.0.0.1:0",
        &[
            "--http-token-file",
            file.to_str().expect("utf-8"),
            "--http-allow-origin",
            "https://app.example",
        ],
        &[],
    );
    let port = s.port;
    let host = format!("Host: 127.0.0.1:{port}\r\nConnection: close\r\n");
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    for line in [
        "PUT /mcp".to_owned(),
        "OPTIONS /mcp".to_owned(),
        "HEAD /mcp".to_owned(),
        format!("CONNECT 127.0.0.1:{port}"),
    ] {
        let a = raw(port, format!("{line} HTTP/1.1\r\n{host}\r\n").as_bytes());
        assert_eq!(a.status, 401, "{line} without the token: {a:?}");
        let a = raw(
            port,
            format!("{line} HTTP/1.1\r\n{host}{auth}\r\n").as_bytes(),
        );
        assert_eq!(a.status, 405, "{line} with the token: {a:?}");
        assert_eq!(a.header("allow"), Some("GET, POST, DELETE"), "{a:?}");
    }
    let named = "Origin: https://app.example\r\n";
    let preflight = format!(
        "{named}Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type, mcp-session-id, authorization\r\n"
    );
    for extra in [preflight.as_str(), named] {
        let a = raw(
            port,
            format!("OPTIONS /mcp HTTP/1.1\r\n{host}{extra}\r\n").as_bytes(),
        );
        assert_eq!(a.status, 200, "a named origin's OPTIONS: {a:?}");
        assert_eq!(
            a.header("access-control-allow-origin"),
            Some("https://app.example"),
            "{a:?}"
        );
        assert!(
            a.header("access-control-allow-methods")
                .is_some_and(|m| m.contains("POST") && !m.contains("PUT")),
            "{a:?}"
        );
    }
    let a = raw(
        port,
        format!("PUT /mcp HTTP/1.1\r\n{host}{named}{auth}Content-Length: 0\r\n\r\n").as_bytes(),
    );
    assert_eq!(a.status, 405, "{a:?}");
    assert_eq!(a.header("allow"), Some("GET, POST, DELETE"), "{a:?}");
    assert_eq!(
        a.header("access-control-allow-origin"),
        Some("https://app.example"),
        "{a:?}"
    );
    let a = raw(
        port,
        format!(
            "OPTIONS /mcp HTTP/1.1\r\n{host}Origin: https://evil.example\r\n\
             Access-Control-Request-Method: POST\r\n\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(a.status, 403, "{a:?}");
    assert!(a.body.contains("HTTP-003"), "{a:?}");
    let a = raw(
        port,
        format!(
            "OPTIONS /mcp HTTP/1.1\r\n{host}Origin: http://127.0.0.1:{port}\r\n\
             Access-Control-Request-Method: POST\r\n\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(a.status, 401, "{a:?}");
    assert!(a.header("access-control-allow-origin").is_none(), "{a:?}");
}

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
        let got = read_all(&mut c, 5);
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
    seen.push(("a byte at a time".to_owned(), read_all(&mut c, 5)));
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
#[test]
fn an_http2_preface_in_other_shapes_is_answered() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(PREFACE).expect("send the preface");
    let more = [0u8, 0, 0, 4, 0, 0, 0, 0, 0].repeat(20_000);
    let _ = c.write_all(&more);
    std::thread::sleep(Duration::from_millis(500));
    let got = read_all(&mut c, 5);
    assert!(
        goaway_words(&got).is_some(),
        "the preface with more after it: {got:?}"
    );
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(format!("PRI * HTTP/2.0\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes())
        .expect("send");
    let got = read_all(&mut c, 5);
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
    let got = read_all(&mut c, 5);
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
#[test]
fn a_request_naming_a_session_that_is_gone_is_told_in_words() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let session = initialize(port, &[]);
    let gone = raw(
        port,
        format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {session}\r\n\
             Connection: close\r\n\r\n"
        )
        .as_bytes(),
    );
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
    let again = raw(
        port,
        format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {session}\r\n\
             Connection: close\r\n\r\n"
        )
        .as_bytes(),
    );
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
