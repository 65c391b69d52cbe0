//! `skill-mcp --http` from the outside (spec HTTP-*): the built binary is
//! started on a free port, and spoken to with hand-written HTTP/1.1 over a
//! plain `TcpStream` — a request a connection (`Connection: close`), its
//! answer read to the end — so what is checked is the bytes on the wire.
//!
//! One module a room of src/http/ holds the tests of that room's rules:
//! who may connect (`access`), the head (`headers`), bodies (`bodies`),
//! the byte budgets (`budget`), connections (`connections`), streams at
//! their cap (`streams`), sessions (`sessions`), the endpoint's methods
//! (`methods`) and a connection's first bytes (`h2`).

mod access;
mod bodies;
mod budget;
mod connections;
mod h2;
mod headers;
mod methods;
mod sessions;
mod streams;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

use common::BIN;
use common::http::*;
use serde_json::{Value, json};

#[test]
fn a_session_lists_loads_and_reads_as_stdio_does() {
    let s = start("127.0.0.1:0", &[], &[]);
    let mut session = HttpSession::open(s.port);

    let tools = session.request("tools/list", json!({}));
    let names = tool_names(&tools);
    for t in ["skill_list", "skill_load", "skill_file"] {
        assert!(names.contains(&t), "{t} missing: {names:?}");
    }
    // HTTP-009: no runs over HTTP unless the owner turns them on.
    assert!(!names.contains(&"skill_run"), "{names:?}");

    let list = session.call("skill_list", json!({}));
    let skills = &list["result"]["structuredContent"]["skills"];
    assert_eq!(skills[0]["name"], "demo", "{list}");
    // HTTP-009: where no run is offered, no script is listed as runnable;
    // the declared one is unavailable, saying why and what turns runs on.
    assert_eq!(skills[0]["executable"], false, "{list}");
    assert_eq!(skills[0]["scripts"], json!([]), "{list}");
    let why = skills[0]["unavailableScripts"][0]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.contains("HTTP-009") && why.contains("--http-allow-run"),
        "{list}"
    );
    let load = session.call("skill_load", json!({"name": "demo"}));
    let script = &load["result"]["structuredContent"]["scripts"][0];
    assert_eq!(script["script"], "scripts/hi.js", "{load}");
    assert_eq!(script["runnableHere"], false, "{load}");

    let read = session.request("resources/read", json!({"uri": "skill://demo/notes.md"}));
    assert_eq!(
        read["result"]["contents"][0]["text"], "the notes\n",
        "{read}"
    );

    let prompts = session.request("prompts/list", json!({}));
    assert!(
        prompts["result"]["prompts"].to_string().contains("demo"),
        "{prompts}"
    );

    let skx = session.request("skills/list", json!({}));
    assert!(
        skx["result"]["skills"].to_string().contains("demo"),
        "{skx}"
    );

    // A call to skill_run is refused naming the rule, not as an unknown tool.
    let run = session.call(
        "skill_run",
        json!({"name": "demo", "script": "scripts/hi.js", "args": []}),
    );
    assert_eq!(run["id"], 8, "{run}");
    let why = run["error"]["message"].as_str().unwrap_or_default();
    assert!(
        why.contains("HTTP-009") && why.contains("--http-allow-run"),
        "{run}"
    );
    assert_eq!(session.close().status, 204);
}

/// HTTP-009 with RUN-028: `--http-allow-run` offers skill_run, and every
/// confirmed run is a human's to approve through elicitation — a session
/// that did not declare it is refused and nothing starts; one that did is
/// sent the plan on the POST's SSE stream and runs once it accepts.
#[test]
fn the_owner_can_offer_runs() {
    let s = start("127.0.0.1:0", &["--http-allow-run"], &[]);
    let started = s._dir.path().join("started");
    let call = hi_run(&started);

    // No elicitation declared: refused, naming the rule, nothing started.
    let mute = initialize(s.port, &[]);
    let tools = post(
        s.port,
        &rpc(2, "tools/list", json!({})),
        &[("Mcp-Session-Id", &mute)],
    )
    .json();
    assert!(tool_names(&tools).contains(&"skill_run"), "{tools}");
    let list = post(
        s.port,
        &rpc(
            3,
            "tools/call",
            json!({"name": "skill_list", "arguments": {}}),
        ),
        &[("Mcp-Session-Id", &mute)],
    )
    .json();
    let demo = &list["result"]["structuredContent"]["skills"][0];
    assert_eq!(demo["scripts"][0]["script"], "scripts/hi.js", "{list}");
    let refused = post(s.port, &call, &[("Mcp-Session-Id", &mute)]).json();
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let why = refused["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.contains("HTTP-009")
            && why.contains("elicitation")
            && why.contains("Nothing was started"),
        "{refused}"
    );
    // A 2026-07-28 request cannot carry a server-to-client request.
    let stateless = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "skill_run",
        "arguments": {"name": "demo", "script": "scripts/hi.js", "confirm": true,
            "args": [started.to_string_lossy()]},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
    }});
    let alone = post(
        s.port,
        &stateless.to_string(),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "skill_run"),
        ],
    )
    .json();
    assert_eq!(alone["result"]["isError"], true, "{alone}");
    assert!(alone.to_string().contains("HTTP-009"), "{alone}");
    std::thread::sleep(Duration::from_millis(1000));
    assert!(!started.exists(), "a run started without approval");

    // Declared: the plan arrives on the call's own stream; accept runs it.
    let session = initialize_declaring(s.port, &[], json!({"elicitation": {}}));
    let h = [("Mcp-Session-Id", session.as_str())];
    let mut run = open_post(s.port, &call, &h);
    let mut got = Vec::new();
    let ask = event_with(&mut run, &mut got, "elicitation/create");
    let message = ask["params"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("hi.js") && message.contains("interpreter: node"),
        "{ask}"
    );
    assert!(!started.exists(), "ran before the user answered");
    let accepted = post(
        s.port,
        &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}).to_string(),
        &h,
    );
    assert_eq!(accepted.status, 202, "{accepted:?}");

    // The run of two seconds holds its id; the same id again in the same
    // session is refused while it runs, and free once it has answered.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let again = post(s.port, &rpc(5, "tools/list", json!({})), &h);
    assert_eq!(again.status, 400, "{again:?}");
    let v = again.json();
    assert_eq!(v["id"], 5, "{v}");
    assert!(
        v["error"]["message"].to_string().contains("HTTP-007"),
        "{v}"
    );
    run.read_to_end(&mut got)
        .expect("the rest of the run's stream");
    let ran = parse(&got).json();
    assert_eq!(ran["id"], 5, "{ran}");
    assert!(ran.to_string().contains("hi"), "{ran}");
    let free = post(s.port, &rpc(5, "tools/list", json!({})), &h);
    assert_eq!(free.status, 200, "{free:?}");

    // Declined: nothing runs, and the answer says so.
    std::fs::remove_file(&started).expect("remove the marker");
    let mut run = open_post(s.port, &call, &h);
    let mut got = Vec::new();
    let ask = event_with(&mut run, &mut got, "elicitation/create");
    post(
        s.port,
        &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}).to_string(),
        &h,
    );
    run.read_to_end(&mut got)
        .expect("the rest of the run's stream");
    let declined = parse(&got).json();
    assert_eq!(
        declined["result"]["structuredContent"]["dryRun"], true,
        "{declined}"
    );
    assert!(declined.to_string().contains("RUN-028"), "{declined}");
    std::thread::sleep(Duration::from_millis(1000));
    assert!(!started.exists(), "a declined run started");
}

/// A confirmed run of the `demo` skill's `scripts/hi.js`, id 5, which
/// writes the file `started` when it runs.
pub(crate) fn hi_run(started: &std::path::Path) -> String {
    rpc(
        5,
        "tools/call",
        json!({"name": "skill_run", "arguments": {
            "name": "demo", "script": "scripts/hi.js", "confirm": true,
            "args": [started.to_string_lossy()]
        }}),
    )
}

/// Sends a POST and returns its connection unread, for an SSE answer that
/// carries a request of the server's before its end.
pub(crate) fn open_post(port: u16, body: &str, extra: &[(&str, &str)]) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    s.write_all(post_request(port, body, extra).as_bytes())
        .expect("send");
    s
}

/// Reads `s` into `got` until an SSE event whose JSON has `method`.
pub(crate) fn event_with(s: &mut TcpStream, got: &mut Vec<u8>, method: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(got).into_owned();
        if let Some((_, body)) = text.split_once("\r\n\r\n") {
            let found = unchunk(body)
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|v| v["method"] == method);
            if let Some(v) = found {
                return v;
            }
        }
        assert!(Instant::now() < deadline, "no {method}: {text}");
        let n = s.read(&mut chunk).expect("read the stream");
        assert!(n > 0, "the stream ended without {method}: {text}");
        got.extend_from_slice(&chunk[..n]);
    }
}

/// HTTP-011: under a 2026-07-28 header, a method that revision removed is
/// 404 with -32601 (SEP-2575), saying why; under 2025-11-25 `initialize`
/// still opens a session.
#[test]
fn a_method_2026_07_28_removed_is_404_under_its_header() {
    let s = start("0", &[], &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    for (method, params) in [
        (
            "initialize",
            json!({"protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}, "_meta": meta}),
        ),
        // Params the method never had: refused for the method all the same.
        ("initialize", json!({"_meta": meta})),
        ("logging/setLevel", json!({"level": "info", "_meta": meta})),
        (
            "resources/subscribe",
            json!({"uri": "skill://a/SKILL.md", "_meta": meta}),
        ),
        (
            "resources/unsubscribe",
            json!({"uri": "skill://a/SKILL.md", "_meta": meta}),
        ),
    ] {
        let a = post(
            s.port,
            &rpc(9, method, params),
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", method),
            ],
        );
        assert_eq!(a.status, 404, "{method}: {a:?}");
        let v = a.json();
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(9), json!(-32601)),
            "{method}: {v}"
        );
        let why = v["error"]["message"].as_str().unwrap_or_default();
        assert!(why.contains("HTTP-011") && why.contains(method), "{why}");
    }
    // The 2025-11-25 lifecycle is untouched.
    initialize(s.port, &[]);
}

#[test]
fn a_2026_07_28_request_needs_no_session() {
    // A bare port listens on 127.0.0.1 (port 0: a free one).
    let s = start("0", &[], &[]);
    let meta = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    }});
    let a = post(
        s.port,
        &rpc(7, "tools/list", meta),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.header("mcp-session-id").is_none(), "{a:?}");
    let v = a.json();
    assert_eq!(v["id"], 7, "{v}");
    assert!(tool_names(&v).contains(&"skill_list"), "{v}");

    // Neither a session nor _meta: refused, saying how to do either.
    let b = post(s.port, &rpc(8, "tools/list", json!({})), &[]);
    assert_eq!(b.status, 400, "{b:?}");
    let why = b.json()["error"]["message"].to_string();
    assert!(
        why.contains("HTTP-002") && why.contains("Mcp-Session-Id"),
        "{why}"
    );
}

#[test]
fn a_foreign_host_or_origin_is_forbidden_and_told_why() {
    let s = start("127.0.0.1:0", &["--http-allow-host", "skills.example"], &[]);
    let body = rpc(1, "ping", json!({}));
    let req = |host: &str, origin: Option<&str>| {
        let mut r = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if let Some(o) = origin {
            r.push_str(&format!("Origin: {o}\r\n"));
        }
        r.push_str("\r\n");
        r.push_str(&body);
        raw(s.port, r.as_bytes())
    };
    let a = req("attacker.example", None);
    assert_eq!(a.status, 403, "{a:?}");
    assert!(
        a.body.contains("HTTP-003")
            && a.body.contains("Host")
            && a.body.contains("--http-allow-host"),
        "{a:?}"
    );
    let b = req("127.0.0.1", Some("https://attacker.example"));
    assert_eq!(b.status, 403, "{b:?}");
    assert!(b.body.contains("Origin"), "{b:?}");
    // A name the owner added passes, as Host and as Origin.
    let c = req("skills.example", Some("https://skills.example"));
    assert_ne!(c.status, 403, "{c:?}");
}

#[test]
fn a_non_loopback_address_without_a_token_does_not_start() {
    let dir = skills();
    let out = Command::new(BIN)
        .args(["--http", "0.0.0.0:0"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SKILLS_DIR", dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("the server runs");
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("HTTP-004") && err.contains("--http-token-file"),
        "{err}"
    );
    assert!(!err.contains("listening"), "{err}");

    // A token that cannot be read is said before anything is bound.
    let out = Command::new(BIN)
        .args([
            "--http",
            "0.0.0.0:0",
            "--http-token-file",
            "/nonexistent/token",
        ])
        .env_clear()
        .env("SKILLS_DIR", dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("the server runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("HTTP-005") && err.contains("/nonexistent/token"),
        "{err}"
    );
}

#[test]
fn a_token_is_required_of_every_request() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).expect("token file");
    let file = file.to_string_lossy().into_owned();
    let s = start("0.0.0.0:0", &["--http-token-file", &file], &[]);
    let body = rpc(1, "ping", json!({}));

    let none = post(s.port, &body, &[]);
    assert_eq!(none.status, 401, "{none:?}");
    assert!(
        none.header("www-authenticate")
            .is_some_and(|v| v.starts_with("Bearer")),
        "{none:?}"
    );
    assert!(none.body.contains("HTTP-005"), "{none:?}");
    let wrong = post(
        s.port,
        &body,
        &[("Authorization", "Bearer a-test-token-0123456788")],
    );
    assert_eq!(wrong.status, 401, "{wrong:?}");

    let bearer = format!("Bearer {TOKEN}");
    let session = initialize(s.port, &[("Authorization", &bearer)]);
    let tools = post(
        s.port,
        &rpc(2, "tools/list", json!({})),
        &[("Authorization", &bearer), ("Mcp-Session-Id", &session)],
    );
    assert_eq!(tools.status, 200, "{tools:?}");
    assert!(tool_names(&tools.json()).contains(&"skill_load"));
}

#[test]
fn a_token_can_come_from_the_environment() {
    let s = start("127.0.0.1:0", &[], &[("SKILL_MCP_HTTP_TOKEN", TOKEN)]);
    let body = rpc(1, "ping", json!({}));
    assert_eq!(post(s.port, &body, &[]).status, 401);
    let bearer = format!("Bearer {TOKEN}");
    initialize(s.port, &[("Authorization", &bearer)]);
}

#[test]
fn bad_bodies_get_json_rpc_errors() {
    let s = start("127.0.0.1:0", &[], &[]);
    let a = post(s.port, "{not json", &[]);
    assert_eq!(a.status, 400, "{a:?}");
    let v = a.json();
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert!(v["id"].is_null(), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("request body is not JSON")),
        "{v}"
    );

    // An id rmcp could not carry back exactly is refused under itself.
    let b = post(
        s.port,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}"#,
        &[],
    );
    assert_eq!(b.status, 400, "{b:?}");
    assert!(
        b.body.contains(r#""id":1.5"#) && b.body.contains("HTTP-006"),
        "{b:?}"
    );

    // An MCP header longer than an excerpt is refused, not quoted back.
    let long = "x".repeat(5_000);
    let e = post(
        s.port,
        &rpc(3, "tools/list", json!({})),
        &[("Mcp-Method", &long)],
    );
    assert_eq!(e.status, 400, "{e:?}");
    assert!(e.body.contains("HTTP-006") && e.body.len() < 400, "{e:?}");

    // A body announced past the limit is refused without being read.
    let big = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        5 * 1024 * 1024
    );
    let c = raw(s.port, big.as_bytes());
    assert_eq!(c.status, 413, "{c:?}");
    assert!(
        c.body.contains("HTTP-006") && c.body.contains("-32700"),
        "{c:?}"
    );

    // A body streamed past the limit (no length given) is refused too.
    let mut stream = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nConnection: close\r\n\
              Transfer-Encoding: chunked\r\n\r\n",
        )
        .expect("headers");
    let mut writer = stream.try_clone().expect("clone");
    let feeder = std::thread::spawn(move || {
        let chunk = vec![b' '; 64 * 1024];
        for _ in 0..80 {
            let mut c = format!("{:x}\r\n", chunk.len()).into_bytes();
            c.extend_from_slice(&chunk);
            c.extend_from_slice(b"\r\n");
            if writer.write_all(&c).is_err() {
                return;
            }
        }
        let _ = writer.write_all(b"0\r\n\r\n");
    });
    let mut bytes = Vec::new();
    let mut buf = [0u8; 8192];
    // Read until the answer is whole or the server closes (it may reset
    // the connection once it has answered).
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&buf[..n]);
        if String::from_utf8_lossy(&bytes).contains("HTTP-006") {
            break;
        }
    }
    let _ = feeder.join();
    let d = parse(&bytes);
    assert_eq!(d.status, 413, "{d:?}");

    // And the server goes on serving.
    initialize(s.port, &[]);
}

#[test]
fn the_help_names_the_http_options() {
    let out = Command::new(BIN).arg("--help").output().expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    for opt in [
        "--http",
        "--http-token-file",
        "--http-allow-host",
        "--http-allow-origin",
        "--http-allow-run",
    ] {
        assert!(help.contains(opt), "{opt}: {help}");
    }
}

#[test]
fn open_sessions_are_capped() {
    let s = start("127.0.0.1:0", &[], &[]);
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}}),
    );
    let mut opened = 0;
    let refused = loop {
        let a = post(s.port, &init, &[]);
        if a.status != 200 {
            break a;
        }
        opened += 1;
        assert!(opened <= 1_024, "a session past the cap of 1,024 opened");
    };
    assert_eq!(opened, 1_024, "{refused:?}");
    assert_eq!(refused.status, 503, "{refused:?}");
    let v = refused.json();
    assert_eq!(v["id"], 1, "{v}");
    assert!(
        v["error"]["message"].to_string().contains("HTTP-008"),
        "{v}"
    );
    // Requests that need no session are still served.
    let meta = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    }});
    let a = post(
        s.port,
        &rpc(2, "tools/list", meta),
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
    );
    assert_eq!(a.status, 200, "{a:?}");
}

#[test]
fn a_reload_reaches_sessions_and_later_requests() {
    let s = start("127.0.0.1:0", &[], &[]);
    let session = initialize(s.port, &[]);
    // The session's own stream, where the server's notifications go.
    let mut events = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    events
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        events,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\n\r\n"
    )
    .expect("GET");
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("\r\n\r\n") {
        let n = events.read(&mut buf).expect("the stream opens");
        assert!(n > 0, "the stream closed");
        seen.extend_from_slice(&buf[..n]);
    }
    assert!(String::from_utf8_lossy(&seen).starts_with("HTTP/1.1 200"));

    let skill = s._dir.path().join("added");
    std::fs::create_dir(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: added\ndescription: Added after boot.\n---\nbody\n",
    )
    .expect("SKILL.md");
    let hup = Command::new("kill")
        .args(["-HUP", &s.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(hup.success());

    let deadline = Instant::now() + Duration::from_secs(20);
    while !String::from_utf8_lossy(&seen).contains("notifications/resources/list_changed") {
        assert!(
            Instant::now() < deadline,
            "no list_changed: {:?}",
            String::from_utf8_lossy(&seen)
        );
        match events.read(&mut buf) {
            Ok(0) => panic!("the stream closed: {:?}", String::from_utf8_lossy(&seen)),
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(e) => panic!("{e}: {:?}", String::from_utf8_lossy(&seen)),
        }
    }
    let list = post(
        s.port,
        &rpc(
            3,
            "tools/call",
            json!({"name": "skill_list", "arguments": {}}),
        ),
        &[("Mcp-Session-Id", &session)],
    )
    .json();
    assert!(list.to_string().contains("\"added\""), "{list}");
}

#[test]
fn sigterm_ends_the_server_with_status_0() {
    let mut s = start("127.0.0.1:0", &[], &[]);
    initialize(s.port, &[]);
    let term = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(term.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(st) = s.child.try_wait().expect("wait") {
            break st;
        }
        assert!(Instant::now() < deadline, "still running after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn the_token_variable_never_reaches_a_script() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let skill = dir.path().join("env");
    std::fs::create_dir_all(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: env\ndescription: Prints its environment.\nmcp-host:\n  version: 1\n  run:\n    - script: env.js\n      interpreter: node\n      env: [GOOD, SKILL_MCP_HTTP_TOKEN]\n---\nbody\n",
    )
    .expect("SKILL.md");
    std::fs::write(
        skill.join("env.js"),
        "console.log(JSON.stringify(process.env));\n",
    )
    .expect("env.js");
    let s = start_in(
        dir,
        "127.0.0.1:0",
        &["--http-allow-run"],
        &[("SKILL_MCP_HTTP_TOKEN", TOKEN), ("GOOD", "g00d")],
    );
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("Authorization", bearer.as_str())];
    let session = initialize_declaring(s.port, &auth, json!({"elicitation": {}}));
    let h = [auth[0], ("Mcp-Session-Id", session.as_str())];
    let call = rpc(
        2,
        "tools/call",
        json!({"name": "skill_run", "arguments": {"name": "env", "script": "env.js", "confirm": true}}),
    );
    let mut stream = open_post(s.port, &call, &h);
    let mut got = Vec::new();
    let ask = event_with(&mut stream, &mut got, "elicitation/create");
    // The prompt names the token's variable, never its value.
    assert!(!ask.to_string().contains(TOKEN), "{ask}");
    let accepted = post(
        s.port,
        &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}).to_string(),
        &h,
    );
    assert_eq!(accepted.status, 202, "{accepted:?}");
    stream
        .read_to_end(&mut got)
        .expect("the rest of the run's stream");
    let run = parse(&got).json();
    let out = run.to_string();
    // The declared variable the owner set reaches the script; the token,
    // though declared and set, does not.
    assert!(out.contains("g00d"), "{out}");
    assert!(!out.contains(TOKEN), "{out}");
}

/// Found by the attack of 2026-12-06: a call whose connection went while
/// its approval was asked could still be approved by a later POST, and
/// the script ran with nobody to see its result (RUN-028: a transport
/// failure starts nothing).
#[test]
fn a_call_whose_client_went_away_cannot_be_approved_later() {
    let s = start("127.0.0.1:0", &["--http-allow-run"], &[]);
    let started = s._dir.path().join("started");
    let call = hi_run(&started);
    let session = initialize_declaring(s.port, &[], json!({"elicitation": {}}));
    let h = [("Mcp-Session-Id", session.as_str())];
    let mut run = open_post(s.port, &call, &h);
    let mut got = Vec::new();
    let ask = event_with(&mut run, &mut got, "elicitation/create");
    // The client gives up on the call (say, its own HTTP timeout).
    run.shutdown(std::net::Shutdown::Both).expect("shutdown");
    drop(run);
    std::thread::sleep(Duration::from_millis(500));
    post(
        s.port,
        &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}).to_string(),
        &h,
    );
    std::thread::sleep(Duration::from_millis(2000));
    assert!(!started.exists(), "a call nobody waits for was run");
    // The session is still served.
    let ping = post(s.port, &rpc(6, "ping", json!({})), &h).json();
    assert_eq!(ping["result"], json!({}), "{ping}");
}
