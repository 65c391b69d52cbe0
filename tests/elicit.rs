//! RUN-028 over stdio: a client that declared `elicitation` is asked to
//! approve each confirmed run with its exact plan, and the script starts
//! only on `accept`; `--no-elicit` and a client that did not declare it
//! run on `confirm: true` alone. The script writes a marker file, so
//! "nothing ran" is seen on disk, not taken from the answer.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{BIN, Session};
use serde_json::{Value, json};

/// A skill `m` whose script `mark.js` writes its first argument's file,
/// and is granted `GRANTED` (its name must appear in the prompt, its
/// value never).
fn tree() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().expect("a temp dir");
    let s = root.path().join("m");
    std::fs::create_dir_all(&s).expect("mkdir");
    std::fs::write(
        s.join("SKILL.md"),
        "---\nname: m\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: mark.js\n      interpreter: node\n      timeout: 20\n      env: [GRANTED]\n---\nbody\n",
    )
    .expect("SKILL.md");
    std::fs::write(
        s.join("mark.js"),
        "require('fs').writeFileSync(process.argv[2], 'ran'); console.log('marked');",
    )
    .expect("mark.js");
    let marker = root.path().join("marker");
    (root, marker)
}

fn session(root: &Path, args: &[&str], caps: Value) -> Session {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    let dir = root.to_string_lossy().into_owned();
    Session::start_declaring(
        cmd,
        &[("SKILLS_DIR", &dir), ("GRANTED", "s3cr3t-value")],
        Stdio::null(),
        caps,
    )
}

fn run_args(marker: &Path) -> Value {
    json!({"name": "skill_run", "arguments": {
        "name": "m", "script": "mark.js", "confirm": true,
        "args": [marker.to_string_lossy()]
    }})
}

/// Sends a confirmed run and returns the elicitation request it causes,
/// and the run's id.
fn asked(s: &mut Session, marker: &Path) -> (Value, u64) {
    let id = s.send_request("tools/call", run_args(marker));
    let line = s.next_line();
    let req: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(req["method"], "elicitation/create", "{req}");
    assert!(!marker.exists(), "the script ran before the user answered");
    (req, id)
}

fn answer(s: &mut Session, req: &Value, action: &str) -> Value {
    s.send_message(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": action}}));
    let line = s.next_line();
    serde_json::from_str(&line).expect("JSON")
}

#[test]
fn accept_runs_exactly_the_plan_shown() {
    let (root, marker) = tree();
    let mut s = session(root.path(), &[], json!({"elicitation": {}}));
    // A preview never asks: its answer is the next line.
    let mut preview = run_args(&marker);
    preview["arguments"]["confirm"] = json!(false);
    let pid = s.send_request("tools/call", preview);
    let first: Value = serde_json::from_str(&s.next_line()).expect("JSON");
    assert_eq!(first["id"], pid, "{first}");
    assert_eq!(
        first["result"]["structuredContent"]["dryRun"], true,
        "{first}"
    );
    let (req, id) = asked(&mut s, &marker);
    let message = req["params"]["message"].as_str().expect("a message");
    let real = std::fs::canonicalize(root.path().join("m")).expect("real dir");
    for part in [
        "interpreter: node",
        &real.to_string_lossy(),
        &marker.to_string_lossy(),
        "timeout: 20 s",
        "GRANTED",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    assert!(
        !message.contains("s3cr3t-value"),
        "a value was shown: {message}"
    );
    assert_eq!(req["params"]["mode"], "form", "{req}");
    assert_eq!(req["params"]["requestedSchema"]["type"], "object", "{req}");
    let reply = answer(&mut s, &req, "accept");
    assert_eq!(reply["id"], id, "{reply}");
    assert_ne!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(
        reply["result"]["structuredContent"]["exitCode"], 0,
        "{reply}"
    );
    assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "ran");
}

#[test]
fn decline_and_cancel_run_nothing_and_say_so() {
    let (root, marker) = tree();
    let mut s = session(root.path(), &[], json!({"elicitation": {"form": {}}}));
    for (action, word) in [("decline", "declined"), ("cancel", "dismissed")] {
        let (req, id) = asked(&mut s, &marker);
        let reply = answer(&mut s, &req, action);
        assert_eq!(reply["id"], id, "{reply}");
        assert_ne!(reply["result"]["isError"], true, "{reply}");
        let out = &reply["result"]["structuredContent"];
        assert_eq!(out["dryRun"], true, "{reply}");
        assert!(out.get("exitCode").is_none(), "{reply}");
        let note = out["note"].as_str().expect("a note");
        assert!(note.contains("RUN-028") && note.contains(word), "{note}");
        assert!(note.contains("nothing was started"), "{note}");
        // Longer than a node start: a run would have written it by now.
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "{action}: the script ran");
    }
}

#[test]
fn an_error_answer_runs_nothing_and_is_an_error() {
    let (root, marker) = tree();
    let mut s = session(root.path(), &[], json!({"elicitation": {}}));
    let (req, id) = asked(&mut s, &marker);
    s.send_message(json!({"jsonrpc": "2.0", "id": req["id"],
        "error": {"code": -32603, "message": "no human here"}}));
    let reply: Value = serde_json::from_str(&s.next_line()).expect("JSON");
    assert_eq!(reply["id"], id, "{reply}");
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(
        text.contains("RUN-028") && text.contains("nothing was started"),
        "{text}"
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!marker.exists(), "the script ran");
}

#[test]
fn no_elicit_or_no_capability_runs_on_confirm_alone() {
    for (args, caps) in [
        (&["--no-elicit"][..], json!({"elicitation": {}})),
        (&[][..], json!({})),
    ] {
        let (root, marker) = tree();
        let mut s = session(root.path(), args, caps.clone());
        let id = s.send_request("tools/call", run_args(&marker));
        let reply: Value = serde_json::from_str(&s.next_line()).expect("JSON");
        assert_eq!(reply["id"], id, "{args:?} {caps}: asked instead: {reply}");
        assert_eq!(
            reply["result"]["structuredContent"]["exitCode"], 0,
            "{reply}"
        );
        assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "ran");
    }
}

#[test]
fn no_elicit_is_refused_with_http() {
    let out = Command::new(BIN)
        .args(["--no-elicit", "--http", "0"])
        .env_clear()
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// A session whose server waits `secs` (a raw value) for an approval.
fn session_waiting(root: &Path, secs: &str) -> Session {
    let dir = root.to_string_lossy().into_owned();
    Session::start_declaring(
        Command::new(BIN),
        &[
            ("SKILLS_DIR", &dir),
            ("GRANTED", "s3cr3t-value"),
            ("SKILL_MCP_ELICIT_TIMEOUT_SECS", secs),
        ],
        Stdio::null(),
        json!({"elicitation": {}}),
    )
}

#[test]
fn an_unanswered_approval_times_out_and_runs_nothing() {
    let (root, marker) = tree();
    let mut s = session_waiting(root.path(), "1");
    let (req, id) = asked(&mut s, &marker);
    // Nobody answers: after the owner's 1 s the client is told to drop
    // the prompt, and the call is an error.
    let cancel: Value = serde_json::from_str(&s.next_line()).expect("JSON");
    assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
    assert_eq!(cancel["params"]["requestId"], req["id"], "{cancel}");
    let reply: Value = serde_json::from_str(&s.next_line()).expect("JSON");
    assert_eq!(reply["id"], id, "{reply}");
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(
        text.contains("RUN-028")
            && text.contains("no answer within 1 s")
            && text.contains("waits 1 s")
            && text.contains("nothing was started"),
        "{text}"
    );
    // An answer that comes too late starts nothing either.
    s.send_message(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}}));
    let pong = s.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!marker.exists(), "the script ran after the wait was over");
}

#[test]
fn a_wait_out_of_range_is_a_setting_problem() {
    for bad in ["0", "3601", "soon"] {
        let (root, _) = tree();
        let mut s = session_waiting(root.path(), bad);
        let list = s.tool("skill_list", json!({}));
        let detail =
            common::setting_problem(&list, "SKILL_MCP_ELICIT_TIMEOUT_SECS", &format!("{bad:?}"));
        assert!(
            detail.contains("RUN-028") && detail.contains("120 seconds"),
            "{detail}"
        );
    }
}

/// Found by the attack of 2026-12-06: input that ended while the user was
/// being asked lost the call's answer (dropped after the 5 s drain).
#[test]
fn input_ending_while_the_user_is_asked_answers_the_call_and_runs_nothing() {
    let (root, marker) = tree();
    let mut s = session(root.path(), &[], json!({"elicitation": {}}));
    let (_req, id) = asked(&mut s, &marker);
    let asked_at = std::time::Instant::now();
    s.close_stdin();
    // "At once" is the behaviour (RUN-028): the answer comes in
    // milliseconds, where the bug this catches lost it after the 5 s drain
    // (WIRE-005) and a server that waited for the user would take the 120 s
    // wait. 3 s sits under both and is hundreds of times the typical.
    let line = s
        .line_within(Duration::from_secs(3))
        .expect("the call is answered when input ends");
    eprintln!(
        "input ended while the user was asked: answered in {} ms",
        asked_at.elapsed().as_millis()
    );
    let reply: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(reply["id"], id, "{reply}");
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(
        text.contains("RUN-028")
            && text.contains("input ended")
            && text.contains("nothing was started"),
        "{text}"
    );
    assert!(asked_at.elapsed() < Duration::from_secs(3));
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!marker.exists(), "the script ran");
}

/// Found by the attack of 2026-12-06: a client that declared only URL
/// elicitation was sent a form, which MCP 2025-11-25 forbids. It cannot
/// be asked, so on stdio `confirm: true` alone runs, as for a client that
/// declared nothing.
#[test]
fn a_client_that_only_opens_urls_is_not_sent_a_form() {
    let (root, marker) = tree();
    let mut s = session(root.path(), &[], json!({"elicitation": {"url": {}}}));
    let id = s.send_request("tools/call", run_args(&marker));
    let reply: Value = serde_json::from_str(&s.next_line()).expect("JSON");
    assert_eq!(reply["id"], id, "asked instead: {reply}");
    assert_eq!(
        reply["result"]["structuredContent"]["exitCode"], 0,
        "{reply}"
    );
    assert!(marker.exists());
}

/// Found by the attack of 2026-12-06: an argument holding a line
/// separator or a bidirectional override reached the prompt raw, so the
/// text a person approves could show what will not run.
#[test]
fn the_prompt_shows_invisible_characters_escaped() {
    let (root, marker) = tree();
    let mut s = session(root.path(), &[], json!({"elicitation": {}}));
    let mut args = run_args(&marker);
    args["arguments"]["args"] =
        json!(["x\u{2028}Nothing will run; this is a preview.\u{202e}\u{200b}"]);
    let id = s.send_request("tools/call", args);
    let req: Value = serde_json::from_str(&s.next_line()).expect("JSON");
    assert_eq!(req["method"], "elicitation/create", "{req}");
    let message = req["params"]["message"].as_str().expect("a message");
    for raw in ['\u{2028}', '\u{202e}', '\u{200b}'] {
        assert!(!message.contains(raw), "{raw:?} shown raw: {message:?}");
    }
    assert!(
        message.contains("\\u{2028}") && message.contains("\\u{202e}"),
        "{message}"
    );
    let reply = answer(&mut s, &req, "decline");
    assert_eq!(reply["id"], id, "{reply}");
}
