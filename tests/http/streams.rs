//! Streams at their cap (HTTP-008): GET streams and `subscriptions/listen`,
//! which one gives way to a newcomer, and that nobody else pays for it.
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
    c.write_all(get_request(port, session).as_bytes())
        .expect("open a GET stream");
    let head = head_of(&mut c);
    if head.starts_with("HTTP/1.1 200") {
        Ok(c)
    } else {
        Err(head)
    }
}

/// HTTP-008: "a session … that has no request in flight and no GET stream
/// its client holds open is closed", and an `initialize` past the cap
/// closes the quietest session "even one holding a GET stream open (one
/// client holding every session with a GET stream each kept everyone else
/// out for good)". Streams — GET streams and `subscriptions/listen` — are
/// capped at 1,024. A careful user expects a stranger not to be able to
/// keep everyone else from listening for good, with listens as with
/// sessions.
///
/// FOUND: one client opens 1,024 `subscriptions/listen` (4.4 s in all,
/// each on its own connection, each acknowledged) and then sends nothing.
/// With the idle time set to 2 s, 8 s later (and 15 s later, by hand) a
/// fresh session's GET stream is 503 "HTTP-008: 1024 streams (GET streams
/// and subscriptions/listen) are open on this server, its limit; close
/// one, or open this one again later" with `Retry-After: 10`, and a fresh
/// listen is 503 the same: no listen ever expires and none is closed for a
/// newcomer, so no other client hears of a reload for as long as the
/// stranger keeps 1,024 sockets open.
///
/// Issue 40: the door's fourth outside attack.
#[test]
fn a_stranger_cannot_hold_every_stream_for_good() {
    room_for_descriptors(8_192);
    let s = start(
        "127.0.0.1:0",
        &[],
        &[("SKILL_MCP_HTTP_SESSION_IDLE_SECS", "2")],
    );
    let port = s.port;
    let mut listens = Vec::new();
    for i in 0..1024 {
        match open_listen(port, 1000 + i) {
            Ok(c) => listens.push(c),
            Err(head) => panic!("listen {i} of the stranger's was refused: {head}"),
        }
    }
    std::thread::sleep(Duration::from_secs(8));
    // A teammate's session and its GET stream, for the reload it waits on.
    let session = initialize(port, &[]);
    let mut get = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    get.write_all(get_request(port, &session).as_bytes())
        .expect("open a GET stream");
    let head = String::from_utf8_lossy(&read_for(&mut get, 3)).into_owned();
    eprintln!("a teammate's GET stream 8 s after 1,024 quiet listens: {head:?}");
    assert!(
        head.starts_with("HTTP/1.1 200"),
        "1,024 listens a stranger opened and left quiet keep a teammate's GET stream out: {head}"
    );
    let fresh = open_listen(port, 1);
    assert!(
        fresh.is_ok(),
        "1,024 listens a stranger opened and left quiet keep a fresh listen out: {}",
        fresh.err().unwrap_or_default()
    );
    drop(listens);
}

/// HELD: a newer GET takes a session's stream and the older ends
/// (HTTP-008), and the older one's stream slot goes with it: 1,100 GETs on
/// one session, each held open, are all served, and another session's
/// GET is served after them.
///
/// Issue 40: the door's fourth outside attack.
#[test]
fn getting_a_sessions_stream_again_and_again_holds_one_slot() {
    room_for_descriptors(8_192);
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let session = initialize(port, &[]);
    let get = |session: &str| {
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        c.write_all(get_request(port, session).as_bytes())
            .expect("open a GET stream");
        let head = read_until(&mut c, "\r\n\r\n");
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        c
    };
    let mut held = Vec::new();
    for _ in 0..1100 {
        held.push(get(&session));
    }
    let other = initialize(port, &[]);
    let _c = get(&other);
    drop(held);
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
///
/// Issue 40: the door's fifth outside attack (after 9687292).
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
///
/// Issue 40: the door's fifth outside attack (after 9687292).
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
///
/// Issue 40: the door's fifth outside attack (after 9687292).
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
    let got = acknowledged + &String::from_utf8_lossy(&read_for(&mut oldest, 5));
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
///
/// Issue 40: the door's fifth outside attack (after 9687292).
#[test]
fn a_session_whose_stream_was_closed_opens_it_again_and_hears_reloads() {
    room_for_descriptors(8_192);
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let session = initialize(port, &[]);
    let mut first = open_get(port, &session).unwrap_or_else(|h| panic!("{h}"));
    let others = listens(port, 1000, 1024);
    // Polled, not slept on: a busy machine may close it late (spec README,
    // "Timing in tests").
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ended(&mut first) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
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
///
/// Issue 40: the door's fifth outside attack (after 9687292).
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
///
/// Issue 40: the door's fifth outside attack (after 9687292).
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

/// A `subscriptions/listen` from the loopback address `source`, held once
/// acknowledged.
fn listen_from(source: [u8; 4], port: u16, id: u64) -> TcpStream {
    let mut c = connect_from(source, port);
    c.write_all(listen_request(port, id).as_bytes())
        .expect("send the listen");
    let head = head_of(&mut c);
    assert!(
        head.starts_with("HTTP/1.1 200"),
        "listen {id} from {source:?}: {head}"
    );
    c
}

/// HELD: at 1,024 streams a newcomer closes the oldest stream of the
/// address holding the most (HTTP-008). 512 listens from 127.0.0.3, then
/// 512 from 127.0.0.2 (the cap), then 20 newcomers from 127.0.0.4: each
/// address loses its ten oldest and no newcomer is closed. (Whichever way
/// a tie between the two addresses went, they alternate; which address
/// gives way at a tie — the one whose oldest stream is older — is held by
/// `at_a_tie_between_addresses_the_older_address_gives_way` in
/// src/http/connections.rs, written after this attack read the tie as the
/// map's order.)
///
/// Outside attack of 2026-12-07 on the day's changes.
#[test]
fn each_address_loses_its_oldest_streams_first() {
    room_for_descriptors(8_192);
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let mut older: Vec<_> = (0..512)
        .map(|i| listen_from([127, 0, 0, 3], port, 10_000 + i))
        .collect();
    let mut younger: Vec<_> = (0..512)
        .map(|i| listen_from([127, 0, 0, 2], port, 20_000 + i))
        .collect();
    let mut newcomers: Vec<_> = (0..20)
        .map(|i| listen_from([127, 0, 0, 4], port, 30_000 + i))
        .collect();
    // Polled, not slept on: a busy machine may close them late.
    let closed = |v: &mut Vec<TcpStream>| -> Vec<usize> {
        v.iter_mut()
            .enumerate()
            .filter_map(|(i, c)| ended(c).then_some(i))
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let (mut o, mut y) = (closed(&mut older), closed(&mut younger));
    while o.len() + y.len() < 20 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        o.extend(closed(&mut older));
        y.extend(closed(&mut younger));
        o.sort_unstable();
        o.dedup();
        y.sort_unstable();
        y.dedup();
    }
    assert_eq!(
        (o.clone(), y.clone()),
        ((0..10).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>()),
        "closed of 127.0.0.3 (opened first): {o:?}; of 127.0.0.2: {y:?}"
    );
    assert_eq!(closed(&mut newcomers), Vec::<usize>::new());
}
