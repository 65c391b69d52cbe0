//! The one typed transport through the real binary (issue 28, spec
//! WIRE-006..WIRE-008): every id JSON-RPC allows is answered under itself
//! and wedges nothing; a repeated id in flight is refused and costs no
//! memory; end of input loses and tears no answer; the lifecycle is one
//! state machine. Inputs that once went wrong, found by attacking the
//! transport from outside, are tests here too.

use crate::common;
use common::{BIN, Raw, proc_kib, sleeping_skill};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A skill with a 300 KB file and a script that sleeps until killed.
fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    sleeping_skill(root.path());
    std::fs::write(
        root.path().join("s/big.txt"),
        "0123456789abcdef\n".repeat(300_000 / 17),
    )
    .unwrap();
    root
}

fn command(root: &std::path::Path) -> Command {
    let mut c = Command::new(BIN);
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SKILLS_DIR", root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    c
}

/// Writes `input` whole, closes stdin, and returns everything the server
/// wrote and its exit code.
fn pipe_through(root: &std::path::Path, input: &str) -> (Vec<u8>, Option<i32>, Duration) {
    let mut child = command(root).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let t = Instant::now();
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let status = child.wait().unwrap();
    let _ = writer.join();
    (out, status.code(), t.elapsed())
}

/// Every line of `out`, each of which must be whole JSON ending in a
/// newline.
fn whole_lines(out: &[u8]) -> Vec<Value> {
    assert!(
        out.is_empty() || out.ends_with(b"\n"),
        "the output ends mid-line: {} bytes",
        out.len()
    );
    out.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice(l)
                .unwrap_or_else(|e| panic!("a torn line ({e}): {} bytes", l.len()))
        })
        .collect()
}

#[test]
fn end_of_input_loses_and_tears_no_answer() {
    let root = tree();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"skill_list","arguments":{}}}"#;
    let mut slowest = Duration::ZERO;
    for run in 0..100 {
        let (out, code, took) =
            pipe_through(root.path(), &format!("{INIT}\n{INITIALIZED}\n{list}\n"));
        slowest = slowest.max(took);
        let lines = whole_lines(&out);
        let ids: Vec<Value> = lines.iter().map(|v| v["id"].clone()).collect();
        assert_eq!(ids, [json!(1), json!(2)], "run {run}");
        assert_eq!(
            lines[1]["result"]["structuredContent"]["skills"][0]["name"],
            "s"
        );
        assert_eq!(code, Some(0), "run {run}");
    }
    // Pipelined: a list, then a 300 KB file, twice over, then the input ends.
    for run in 0..20 {
        let mut input = format!("{INIT}\n{INITIALIZED}\n");
        for i in 0..4 {
            input.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\",\"params\":{{\"name\":\"skill_list\",\"arguments\":{{}}}}}}\n",
                10 + 2 * i
            ));
            input.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\",\"params\":{{\"name\":\"skill_file\",\"arguments\":{{\"name\":\"s\",\"path\":\"big.txt\"}}}}}}\n",
                11 + 2 * i
            ));
        }
        let (out, code, took) = pipe_through(root.path(), &input);
        slowest = slowest.max(took);
        let lines = whole_lines(&out);
        let mut ids: Vec<i64> = lines.iter().filter_map(|v| v["id"].as_i64()).collect();
        ids.sort_unstable();
        assert_eq!(ids, [1, 10, 11, 12, 13, 14, 15, 16, 17], "run {run}");
        for v in &lines {
            if v["id"].as_i64().is_some_and(|i| i % 2 == 1 && i > 10) {
                let text = v["result"]["structuredContent"]["files"][0]["content"]
                    .as_str()
                    .unwrap_or_default();
                assert_eq!(text.len(), 300_000 / 17 * 17, "run {run}: the file whole");
            }
        }
        assert_eq!(code, Some(0));
    }
    eprintln!(
        "120 sessions whose input ended at once: every answer whole; the slowest exit {slowest:?}"
    );
}

#[test]
fn every_id_json_rpc_allows_is_answered_under_itself_and_wedges_nothing() {
    let root = tree();
    let mut s = Raw::start(root.path());
    s.send(INIT);
    assert!(s.answer_line().contains(r#""id":1,"#));
    s.send(INITIALIZED);
    // More of each than there are slots (64): a slot taken under one
    // spelling and never freed would stop the server reading.
    for id in [
        "1.0",
        "1.5",
        "-2",
        "9223372036854775808",
        "18446744073709551616",
        "1e3",
        r#""a\"b""#,
        r#""\u00e9\\n""#,
        r#""""#,
    ] {
        for _ in 0..70 {
            s.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
            let line = s.answer_line();
            let v: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(v["result"], json!({}), "{id}: {line}");
            let expected: Value = serde_json::from_str(id).unwrap();
            assert_eq!(v["id"], expected, "{id}: {line}");
            if !id.starts_with('"') {
                assert!(
                    line.contains(&format!(r#""id":{id},"#)),
                    "a number is echoed as written: {line}"
                );
            }
        }
    }
    // null and other types are refused, under id null, and take no slot.
    for id in ["null", "[1]", r#"{"a":1}"#, "true"] {
        s.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (Value::Null, json!(-32600)),
            "{id}"
        );
    }
    s.send(r#"{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"skill_list","arguments":{}}}"#);
    let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
    assert_eq!(
        v["result"]["structuredContent"]["skills"][0]["name"], "s",
        "{v}"
    );
}

#[test]
fn a_repeated_id_in_flight_is_refused_and_a_cancel_frees_it() {
    let root = tree();
    let mut s = Raw::start(root.path());
    s.send(INIT);
    s.answer_line();
    s.send(INITIALIZED);
    s.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"skill_run","arguments":{"name":"s","script":"sleep.js","confirm":true}}}"#);
    std::thread::sleep(Duration::from_millis(300));
    // 7 and 7.0 are one id to JSON-RPC.
    for same in ["7", "7.0"] {
        s.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{same},"method":"ping"}}"#
        ));
        let line = s.answer_line();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["error"]["code"], -32600, "{line}");
        assert!(line.contains(&format!(r#""id":{same},"#)), "{line}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("still in flight"),
            "{line}"
        );
    }
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#);
    std::thread::sleep(Duration::from_millis(200));
    s.send(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
    let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
    assert_eq!(
        (v["id"].clone(), v["result"].clone()),
        (json!(7), json!({})),
        "{v}"
    );
}

#[test]
fn a_client_repeating_one_id_and_never_reading_costs_bounded_memory() {
    let root = tree();
    let mut child = command(root.path()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _never_read = child.stdout.take().unwrap();
    let pid = child.id();
    writeln!(stdin, "{INIT}\n{INITIALIZED}").unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for n in 0..400_000u64 {
            if writeln!(stdin, r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"skill_load","arguments":{{"name":"s"}}}}}}"#).is_err() {
                break;
            }
            let _ = tx.send(n);
        }
    });
    std::thread::sleep(Duration::from_secs(3));
    let first = proc_kib(pid, "VmRSS");
    std::thread::sleep(Duration::from_secs(2));
    let sent = rx.try_iter().last().unwrap_or(0);
    let second = proc_kib(pid, "VmRSS");
    eprintln!(
        "one id repeated, never read: {sent} requests written before the pipe filled; RSS {first} then {second} KiB"
    );
    assert!(
        sent < 100_000,
        "the server kept reading: {sent} requests accepted"
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
fn a_lone_surrogate_is_refused_under_the_requests_own_id() {
    let root = tree();
    let mut s = Raw::start(root.path());
    s.send(INIT);
    s.answer_line();
    s.send(INITIALIZED);
    s.send(r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"skill_load","arguments":{"name":"\ud800"}}}"#);
    let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(42), json!(-32700)),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("surrogate"),
        "{v}"
    );
    s.send(r#"{"jsonrpc":"2.0","id":43,"method":"ping"}"#);
    assert!(s.answer_line().contains(r#""id":43,"#));
}

/// WIRE-001: a leading byte-order mark and a number past a 64-bit float
/// (`1e400`) are refused -32700 with a message naming that cause, not a
/// bare "expected value at column 1"; the session goes on.
#[test]
fn a_byte_order_mark_and_a_number_too_large_are_named_in_the_refusal() {
    let root = tree();
    let mut s = Raw::start(root.path());
    s.send(INIT);
    s.answer_line();
    s.send(INITIALIZED);
    for (line, says) in [
        (
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
            "byte-order mark",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
            "too large",
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":-1e999}}"#,
            "too large",
        ),
    ] {
        s.send(line);
        let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
        assert_eq!(v["error"]["code"], json!(-32700), "{line}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains(says),
            "{line}: {v}"
        );
    }
    s.send(r#"{"jsonrpc":"2.0","id":43,"method":"ping"}"#);
    assert!(s.answer_line().contains(r#""id":43,"#));
}

const INLINE_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[test]
fn the_lifecycle_a_connection_starts_in_is_the_one_it_keeps() {
    let root = tree();
    // Per-request first: a later initialize is refused, saying why, and
    // per-request messages go on being served.
    let mut s = Raw::start(root.path());
    s.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{INLINE_META}}}}}"#
    ));
    let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
    assert!(v["result"]["tools"].is_array(), "{v}");
    s.send(INIT);
    let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(1), json!(-32600)),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("2026-07-28"),
        "{v}"
    );
    s.send(&format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"skill_list","arguments":{{}},{INLINE_META}}}}}"#));
    let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
    assert_eq!(
        v["result"]["structuredContent"]["skills"][0]["name"], "s",
        "{v}"
    );
    drop(s);

    // A request with half the _meta starts nothing: initialize still works.
    let mut s = Raw::start(root.path());
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
    let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
    assert!(v["error"].is_object(), "{v}");
    s.send(INIT);
    let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
    assert_eq!(v["result"]["serverInfo"]["name"], "skill-mcp", "{v}");
    s.send(INITIALIZED);
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    let v: Value = serde_json::from_str(&s.answer_line()).unwrap();
    assert_eq!(v["result"], json!({}), "{v}");
}

/// An id spelled one of several ways, some of them the same id.
fn spelled_id() -> impl proptest::strategy::Strategy<Value = &'static str> {
    proptest::sample::select(vec![
        "1",
        "1.0",
        "1e0",
        "2",
        "-3",
        "1.5",
        "18446744073709551616",
        r#""a""#,
        r#""\u0061""#,
        r#""b\"c""#,
    ])
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]
    /// Whatever ids a pipelined session uses, repeated or not, and then
    /// however its input ends, every request gets exactly one whole
    /// answer under its own id (WIRE-006, WIRE-007).
    #[test]
    fn every_request_gets_exactly_one_answer_under_its_id(
        reqs in proptest::collection::vec((spelled_id(), 0u8..4), 1..40)
    ) {
        let root = tree();
        let mut input = format!("{INIT}\n{INITIALIZED}\n");
        let mut sent: Vec<Value> = Vec::new();
        for (id, kind) in &reqs {
            let line = match kind {
                0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
                1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"skill_list","arguments":{{}}}}}}"#),
                2 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":5}}}}"#),
                _ => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"no/such"}}"#),
            };
            input.push_str(&line);
            input.push('\n');
            sent.push(serde_json::from_str(id).unwrap());
        }
        let (out, code, _) = pipe_through(root.path(), &input);
        let lines = whole_lines(&out);
        proptest::prop_assert_eq!(code, Some(0));
        proptest::prop_assert_eq!(lines.len(), sent.len() + 1, "one answer a request");
        // The answers' ids, as values (1 and 1.0 compare equal as f64).
        let key = |v: &Value| v.as_f64().map(|f| f.to_string()).unwrap_or_else(|| v.to_string());
        let mut want: Vec<String> = sent.iter().map(key).collect();
        want.push(key(&json!(1)));
        let mut got: Vec<String> = lines.iter().map(|v| key(&v["id"])).collect();
        want.sort();
        got.sort();
        proptest::prop_assert_eq!(got, want);
    }
}

/// WIRE-009 on stdio: a line of arrays nested 100 deep, 19,000 times over
/// (3.8 MB), is refused under its own id for its shape, at once and without
/// the hundreds of MiB its tree would take; the session goes on.
#[test]
fn a_message_too_complex_to_decode_is_refused_and_costs_nothing() {
    let root = tree();
    let mut s = Raw::in_session(root.path());
    let pid = s.process.pid();
    let arrays = vec![format!("{}0{}", "[".repeat(100), "]".repeat(100)); 19_000].join(",");
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":"deep","method":"tools/list","params":{{"x":[{arrays}]}}}}"#
    );
    s.send(&line);
    let answer: Value = serde_json::from_str(&s.answer_line()).expect("a JSON answer");
    assert_eq!(answer["id"], "deep", "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("WIRE-009")),
        "{answer}"
    );
    let peak = proc_kib(pid, "VmHWM");
    assert!(
        peak > 0 && peak < 128 * 1024,
        "the server's peak was {peak} KiB"
    );
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert!(s.answer_line().contains("skill_list"));
}

/// The readers these attacks need, on `common::Raw`.
impl Raw {
    /// The next line, or `None` when there is none within 10 s (or the
    /// server has ended).
    fn next(&mut self) -> Option<Value> {
        let line = self.line_within(Duration::from_secs(10))?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("a torn line ({e}): {line}")))
    }

    fn answer(&mut self) -> Value {
        self.next().expect("an answer within 10 s")
    }

    /// The server's children running node (a script in progress).
    fn scripts(&self) -> usize {
        let me = self.process.pid().to_string();
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                // pid (comm) state ppid …
                let after = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or("");
                after.split(' ').nth(1) == Some(me.as_str())
                    && std::fs::read_to_string(e.path().join("cmdline"))
                        .unwrap_or_default()
                        .contains("sleep.js")
            })
            .count()
    }

    fn finish(mut self) -> Option<i32> {
        self.process.close_stdin();
        let t = Instant::now();
        loop {
            if let Some(s) = self.process.try_wait().unwrap() {
                return s.code();
            }
            if t.elapsed() > Duration::from_secs(15) {
                // Dropping `self` kills and reaps the server.
                panic!("the server did not exit within 15 s of its input ending");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A skill whose script sleeps until killed.
fn sleeping_tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    sleeping_skill(root.path());
    root
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn handshake(s: &mut Raw) {
    s.send(INIT);
    assert_eq!(s.answer()["id"], 1);
    s.send(INITIALIZED);
}

/// How long a script is given to appear, or to be gone once its run is
/// ended: a deadline against a hang, not a measure (spec README, "Timing
/// in tests"). Either takes milliseconds; the script would otherwise run
/// until its 60 s timeout.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(30);

/// A `ping` before anything is answered by rmcp without its `_meta`
/// starting a lifecycle; the transport took it for the start of the
/// 2026-07-28 lifecycle and passed the next notification on, which rmcp,
/// still waiting for a lifecycle, took as the end of the session: every
/// later request went unanswered.
#[test]
fn a_ping_carrying_meta_starts_no_lifecycle_and_a_notification_after_it_ends_nothing() {
    let root = sleeping_tree();
    let mut s = Raw::start(root.path());
    s.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"p","method":"ping","params":{{"_meta":{META}}}}}"#
    ));
    assert_eq!(
        s.answer(),
        json!({"jsonrpc": "2.0", "id": "p", "result": {}})
    );
    s.send(INITIALIZED);
    s.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{META}}}}}"#
    ));
    let v = s
        .next()
        .expect("the session goes on after the notification");
    assert_eq!(v["id"], 2, "{v}");
    assert!(v["result"]["tools"].is_array(), "{v}");
    // The same with a handshake after the ping.
    let mut s = Raw::start(root.path());
    s.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"p","method":"ping","params":{{"_meta":{META}}}}}"#
    ));
    s.answer();
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#);
    s.send(INIT);
    let v = s.next().expect("the handshake after a ping is answered");
    assert_eq!(v["id"], 1, "{v}");
    assert!(v["result"]["protocolVersion"].is_string(), "{v}");
    assert_eq!(s.finish(), Some(0));
}

/// rmcp starts the per-request lifecycle on complete `_meta` naming any
/// version it serves, a handshake version such as 2025-11-25 included;
/// the transport stayed fresh, so a later `initialize` was answered with a
/// success after which every request without `_meta` was refused, and a
/// cancel was dropped as coming "before the session started".
#[test]
fn complete_meta_naming_a_handshake_version_starts_the_per_request_lifecycle_for_both() {
    let root = sleeping_tree();
    let old = META.replace("2026-07-28", "2025-11-25");
    let mut s = Raw::start(root.path());
    s.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{old}}}}}"#
    ));
    let v = s.answer();
    assert!(v["result"]["tools"].is_array(), "{v}");
    s.send(INIT);
    let v = s.answer();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(1), json!(-32600)),
        "an initialize on a connection rmcp serves per request is refused, not answered as if a session began: {v}"
    );
    // A cancel is passed on: the run it names ends.
    s.send(&format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"skill_run","arguments":{{"name":"s","script":"sleep.js","confirm":true}},"_meta":{old}}}}}"#
    ));
    let t = Instant::now();
    while s.scripts() == 0 && t.elapsed() < SCRIPT_DEADLINE {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.scripts(), 1, "the run started");
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#);
    let t = Instant::now();
    while s.scripts() > 0 && t.elapsed() < SCRIPT_DEADLINE {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.scripts(), 0, "the cancelled run was not ended");
}

/// rmcp holds an id only as an i64 or a string, so a cancel naming `1.5`
/// (or an integer past i64, or a whole number past 2^53 written `….0`) did
/// not decode as a cancel for rmcp: the transport freed the slot and
/// dropped the answer, but the run went on — the script kept running to
/// its timeout and every later skill_run was refused as "already running".
#[test]
fn a_cancel_naming_an_id_rmcp_cannot_hold_ends_the_run() {
    let root = sleeping_tree();
    let mut s = Raw::start(root.path());
    handshake(&mut s);
    for (n, id) in ["1.5", "18446744073709551616", "9007199254740993.0", "7"]
        .into_iter()
        .enumerate()
    {
        // The previous run holds the one-at-a-time lock until what it
        // left behind is reaped (RUN-027): a run sent before that is
        // refused at once, and is sent again. Which of the two happened is
        // told by order — an answer (the refusal) or a script appearing,
        // whichever comes first — however slowly node starts.
        let t = Instant::now();
        loop {
            s.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"skill_run","arguments":{{"name":"s","script":"sleep.js","confirm":true}}}}}}"#
            ));
            let refused = loop {
                if s.scripts() > 0 {
                    break None;
                }
                if let Some(line) = s.line_within(Duration::from_millis(50)) {
                    break Some(line);
                }
                assert!(
                    t.elapsed() < SCRIPT_DEADLINE,
                    "{id}: neither an answer nor a script within {SCRIPT_DEADLINE:?}"
                );
            };
            let Some(refused) = refused else { break };
            let refused: Value = serde_json::from_str(&refused).unwrap();
            assert_eq!(refused["result"]["isError"], true, "{id}: {refused}");
        }
        assert_eq!(s.scripts(), 1, "{id}: the run started");
        s.send(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"changed my mind"}}}}"#
        ));
        let t = Instant::now();
        while s.scripts() > 0 && t.elapsed() < SCRIPT_DEADLINE {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(s.scripts(), 0, "{id}: the cancelled run is still going");
        // Nothing is written for the cancelled request.
        s.send(&format!(
            r#"{{"jsonrpc":"2.0","id":"after{n}","method":"ping"}}"#
        ));
        let v = s.answer();
        assert_eq!(v["id"], format!("after{n}"), "{id}: {v}");
    }
    assert_eq!(s.finish(), Some(0));
}

/// JSON-RPC: "The Server MUST NOT reply to a Notification"; WIRE-001: a
/// notification or response is never answered. One whose params are no
/// object (an array, which JSON-RPC allows, or the `null` some clients
/// write for "no params") was answered with -32602 under `id: null`, and a
/// response carrying such params was answered under the response's id —
/// which the client reads as the answer to its own request of that id.
#[test]
fn a_notification_or_response_with_params_that_are_no_object_is_never_answered() {
    let root = sleeping_tree();
    let mut s = Raw::start(root.path());
    handshake(&mut s);
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":null}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":"x","result":{},"params":5}"#,
        r#"{"jsonrpc":"2.0","id":"y","error":{"code":1,"message":"m"},"params":[]}"#,
    ] {
        s.send(line);
    }
    s.send(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    assert_eq!(
        s.answer(),
        json!({"jsonrpc": "2.0", "id": "p", "result": {}}),
        "the first line written is the ping's answer"
    );
    // A request with such params is still refused, under its id.
    s.send(r#"{"jsonrpc":"2.0","id":"q","method":"tools/list","params":null}"#);
    let v = s.answer();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!("q"), json!(-32602))
    );
}

/// WIRE-002: bad params of a method rmcp types are -32602. A `_meta` that
/// is no object fails even rmcp's catch-all custom request, and came back
/// as -32600 "unrecognized JSON-RPC message", which names nothing wrong.
#[test]
fn a_meta_that_is_no_object_is_invalid_params_of_a_known_method() {
    let root = sleeping_tree();
    let mut s = Raw::start(root.path());
    handshake(&mut s);
    for (id, line) in [
        (
            "a",
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"skill_list","arguments":{},"_meta":5}}"#,
        ),
        (
            "b",
            r#"{"jsonrpc":"2.0","id":"b","method":"tools/list","params":{"_meta":"x"}}"#,
        ),
        (
            "c",
            r#"{"jsonrpc":"2.0","id":"c","method":"ping","params":{"_meta":[]}}"#,
        ),
    ] {
        s.send(line);
        let v = s.answer();
        assert_eq!(v["id"], id, "{v}");
        assert_eq!(v["error"]["code"], -32602, "{line}: {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.contains("unrecognized"), "{message}");
    }
}

/// WIRE-006: "numbers past 2^53 compare as the doubles such a client
/// holds", so 9007199254740993, 9007199254740993.0 and 9007199254740992
/// are one id. The integer spelling was compared exactly, so the three
/// were taken as three requests in flight.
#[test]
fn ids_past_two_to_the_53_compare_as_doubles_whatever_their_spelling() {
    let root = sleeping_tree();
    let mut s = Raw::start(root.path());
    handshake(&mut s);
    s.send(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"skill_run","arguments":{"name":"s","script":"sleep.js","confirm":true}}}"#);
    let t = Instant::now();
    while s.scripts() == 0 && t.elapsed() < SCRIPT_DEADLINE {
        std::thread::sleep(Duration::from_millis(50));
    }
    for same in [
        "9007199254740993.0",
        "9007199254740992",
        "9.007199254740993e15",
    ] {
        s.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{same},"method":"ping"}}"#
        ));
        let v = s.answer();
        assert_eq!(v["error"]["code"], -32600, "{same}: {v}");
    }
    // A cancel spelled the other way ends the run.
    s.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740992.0}}"#);
    let t = Instant::now();
    while s.scripts() > 0 && t.elapsed() < SCRIPT_DEADLINE {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.scripts(), 0);
    s.send(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#);
    let v = s.answer();
    assert_eq!(v["result"], json!({}), "{v}");
}
