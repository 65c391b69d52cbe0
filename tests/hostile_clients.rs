//! Hardening: hostile clients (spec WIRE-001..WIRE-005). Every bad line
//! gets a JSON-RPC error or a tool error, and the server keeps serving;
//! closing stdin mid-run ends the session cleanly and kills the script.

use crate::common;
use common::proc_kib;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_skill-mcp");

struct Raw {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Raw {
    fn start(skills: &std::path::Path) -> Raw {
        let mut child = Command::new(BIN)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SKILLS_DIR", skills)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&l)
                    .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {l}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Raw {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let s = self.stdin.as_mut().unwrap();
        s.write_all(line.as_bytes()).unwrap();
        s.write_all(b"\n").unwrap();
        s.flush().unwrap();
    }

    fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a reply within 20 s")
    }

    fn reply_to(&self, id: u64) -> Value {
        loop {
            let v = self.next();
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    fn init(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"0"}}}"#);
        assert_eq!(
            self.reply_to(1)["result"]["serverInfo"]["name"],
            "skill-mcp"
        );
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    fn still_serves(&mut self, id: u64) {
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"skill_list","arguments":{{}}}}}}"#));
        let r = self.reply_to(id);
        assert_eq!(
            r["result"]["structuredContent"]["skills"][0]["name"], "s",
            "{r}"
        );
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("s")).unwrap();
    std::fs::write(
        root.path().join("s/SKILL.md"),
        "---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: sleep.js\n      interpreter: node\n      timeout: 60\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(root.path().join("s/sleep.js"), "require('fs').writeFileSync(process.argv[2], String(process.pid)); setInterval(() => {}, 1000);").unwrap();
    root
}

#[test]
fn bad_lines_get_errors_and_the_server_keeps_serving() {
    let root = tree();
    let mut s = Raw::start(root.path());
    // Before the handshake: garbage, a notification, a request without _meta.
    s.send("{not json");
    assert_eq!(s.next()["error"]["code"], -32700);
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert!(
        s.reply_to(2)["error"].is_object(),
        "a request before initialize is refused, not fatal"
    );
    s.init();
    for (line, code) in [
        ("{not json", -32700),
        ("[1,2,3]", -32600),
        ("\"just a string\"", -32600),
        (r#"{"jsonrpc":"1.0","id":9,"method":"tools/list"}"#, -32600),
        (
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}"#,
            -32600,
        ),
    ] {
        s.send(line);
        assert_eq!(s.next()["error"]["code"], code, "{line}");
    }
    s.send(r#"{"jsonrpc":"2.0","id":10,"method":"no/such"}"#);
    assert_eq!(s.reply_to(10)["error"]["code"], -32601);
    s.send(r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"skill_load","arguments":{"name":[1]}}}"#);
    assert_eq!(s.reply_to(11)["result"]["isError"], true);
    s.send(r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":"not an object"}"#);
    assert_eq!(s.reply_to(12)["error"]["code"], -32602);
    s.send(r#"{"jsonrpc":"2.0","id":15,"method":"resources/read","params":{}}"#);
    assert_eq!(
        s.reply_to(15)["error"]["code"],
        -32602,
        "a served method with bad params is invalid params, not unknown"
    );
    // A 9 KiB argument: refused by the argument cap (8 KiB).
    let long = "x".repeat(9 * 1024);
    s.send(&format!(r#"{{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{{"name":"skill_run","arguments":{{"name":"s","script":"sleep.js","args":["{long}"]}}}}}}"#));
    let r = s.reply_to(13);
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("8192"),
        "{r}"
    );
    // A 10 MiB one: the request is past what a skill_run may be (WIRE-010,
    // 1 MiB), refused before it is decoded, not by the line limit.
    let huge = "x".repeat(10 * 1024 * 1024);
    s.send(&format!(r#"{{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{{"name":"skill_run","arguments":{{"name":"s","script":"sleep.js","args":["{huge}"]}}}}}}"#));
    let r = s.reply_to(16);
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("WIRE-010")),
        "{r}"
    );
    // A line over 16 MiB: refused without being held.
    s.send(&"y".repeat(17 * 1024 * 1024));
    assert_eq!(s.next()["error"]["code"], -32700);
    s.still_serves(14);
}

#[test]
fn ten_thousand_pipelined_requests_are_all_answered() {
    let root = tree();
    let mut s = Raw::start(root.path());
    s.init();
    let mut batch = String::new();
    for id in 100..10_100u64 {
        batch.push_str(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"skill_load","arguments":{{"name":"s"}}}}}}"#));
        batch.push('\n');
    }
    let stdin = s.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut stdin = stdin;
        stdin.write_all(batch.as_bytes()).unwrap();
        stdin
    });
    let t = Instant::now();
    let mut seen = std::collections::HashSet::new();
    while seen.len() < 10_000 {
        let v = s.next();
        if let Some(id) = v["id"].as_u64() {
            assert_eq!(v["result"]["structuredContent"]["name"], "s", "{v}");
            seen.insert(id);
        }
    }
    eprintln!(
        "10,000 pipelined skill_load requests answered in {} ms",
        t.elapsed().as_millis()
    );
    s.stdin = Some(writer.join().unwrap());
    s.still_serves(1);
}

#[test]
fn a_client_that_never_reads_does_not_grow_memory() {
    let root = tree();
    let mut child = Command::new(BIN)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SKILLS_DIR", root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _stdout_never_read = child.stdout.take().unwrap();
    let pid = child.id();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"h","version":"0"}}}}}}"#).unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // Keep sending until the server stops reading (its stdout is full).
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for id in 2..200_000u64 {
            if writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"skill_load","arguments":{{"name":"s"}}}}}}"#).is_err() {
                break;
            }
            let _ = tx.send(id);
        }
    });
    std::thread::sleep(Duration::from_secs(3));
    let sent_then = rx.try_iter().last().unwrap_or(0);
    let rss = |pid: u32| proc_kib(pid, "VmRSS");
    let first = rss(pid);
    std::thread::sleep(Duration::from_secs(2));
    let sent_later = rx.try_iter().last().unwrap_or(sent_then);
    let second = rss(pid);
    eprintln!(
        "a client that never reads: {sent_later} requests written before the pipe filled; RSS {first} KiB then {second} KiB"
    );
    assert!(
        sent_later < 100_000,
        "the server kept reading: {sent_later} requests accepted"
    );
    assert!(second < 64 * 1024, "RSS {second} KiB");
    assert!(
        second <= first + 4 * 1024,
        "memory grew from {first} to {second} KiB"
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn closing_stdin_mid_run_exits_cleanly_and_kills_the_script() {
    let root = tree();
    let marker = root.path().join("pid");
    let mut s = Raw::start(root.path());
    s.init();
    s.send(&format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"skill_run","arguments":{{"name":"s","script":"sleep.js","args":["{}"],"confirm":true}}}}}}"#,
        marker.display()
    ));
    let t = Instant::now();
    while !marker.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the script never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    let pid: i32 = std::fs::read_to_string(&marker)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    drop(s.stdin.take());
    let t = Instant::now();
    let status = loop {
        if let Some(st) = s.child.try_wait().unwrap() {
            break st;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the server did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    eprintln!(
        "stdin closed mid-run: the server exited in {} ms ({status})",
        t.elapsed().as_millis()
    );
    // The kill is sent before the server exits; the script may take a
    // moment to finish dying on a loaded machine. It would otherwise sleep
    // far longer than this deadline, so a missing kill still fails.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| !st.contains(") Z "))
    };
    let t = Instant::now();
    while alive() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(), "the script (pid {pid}) outlived the server");
}
