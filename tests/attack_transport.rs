//! The typed transport (spec WIRE-*) attacked from outside, through the
//! real binary: each test is an input that once went wrong.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;
use common::{Raw, sleeping_skill};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// How long a script is given to appear, or to be gone once its run is
/// ended: a deadline against a hang, not a measure (spec README, "Timing
/// in tests"). Either takes milliseconds; the script would otherwise run
/// until its 60 s timeout.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(30);

/// A skill whose script sleeps until killed.
fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    sleeping_skill(root.path());
    root
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

fn handshake(s: &mut Raw) {
    s.send(INIT);
    assert_eq!(s.answer()["id"], 1);
    s.send(INITIALIZED);
}

/// A `ping` before anything is answered by rmcp without its `_meta`
/// starting a lifecycle; the transport took it for the start of the
/// 2026-07-28 lifecycle and passed the next notification on, which rmcp,
/// still waiting for a lifecycle, took as the end of the session: every
/// later request went unanswered.
#[test]
fn a_ping_carrying_meta_starts_no_lifecycle_and_a_notification_after_it_ends_nothing() {
    let root = tree();
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
    let root = tree();
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
    let root = tree();
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
    let root = tree();
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
    let root = tree();
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
    let root = tree();
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
