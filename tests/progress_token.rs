//! RUN-026: every echo is bounded, `progressToken` included. Each progress
//! notification repeats the request's token whole, twice a second while a
//! script runs, so a 1 MiB token on a 4 s run was 8.4 MB of output. A token
//! over the id bound, or one no notification can carry exactly, is refused
//! before anything starts; a token within it still gets its progress.
//! Output volume over a real run is what is checked, so this is a test.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{BIN, Session};
use serde_json::{Value, json};

fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let s = root.path().join("s");
    std::fs::create_dir_all(&s).unwrap();
    std::fs::write(
        s.join("SKILL.md"),
        "---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: wait.js\n      interpreter: node\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(
        s.join("wait.js"),
        "setTimeout(() => console.log('done'), 1500);\n",
    )
    .unwrap();
    root
}

/// Sends a confirmed run of wait.js with `token` as its progress token;
/// returns the reply and every byte the server wrote until 1.5 s after it.
fn run_with(s: &mut Session, id: u64, token: Value) -> (Value, usize, usize) {
    s.send_message(json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": "skill_run",
            "arguments": {"name": "s", "script": "wait.js", "confirm": true},
            "_meta": {"progressToken": token}
        }
    }));
    let (mut bytes, mut progress) = (0, 0);
    let reply = loop {
        let line = s.next_line();
        bytes += line.len() + 1;
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == json!(id) {
            break v;
        }
        if v["method"] == "notifications/progress" {
            progress += 1;
        }
    };
    let quiet = Instant::now() + Duration::from_millis(1500);
    while let Some(line) = s.line_within(quiet.saturating_duration_since(Instant::now())) {
        bytes += line.len() + 1;
    }
    (reply, bytes, progress)
}

fn refusal(reply: &Value) -> &str {
    assert_eq!(reply["result"]["isError"], json!(true), "{reply}");
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn a_token_over_the_id_bound_is_refused_and_costs_a_few_hundred_bytes() {
    let root = tree();
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    for (id, size) in [(10, 201), (11, 512 << 10), (12, 8 << 20)] {
        let (reply, bytes, progress) = run_with(&mut s, id, json!("t".repeat(size)));
        if size > 1 << 20 {
            // Past what a skill_run request may be at all (WIRE-010):
            // refused before it is decoded, as cheaply.
            let m = reply["error"]["message"].as_str().unwrap_or_default();
            assert!(m.contains("WIRE-010"), "{reply}");
        } else {
            let text = refusal(&reply);
            assert!(
                text.contains(&format!("a string of {size} bytes")) && text.contains("RUN-026"),
                "{text}"
            );
        }
        assert_eq!(progress, 0, "no notification repeats a refused token");
        eprintln!("a {size}-byte token: {bytes} bytes written in all");
        assert!(
            bytes < 4096,
            "a {size}-byte token cost {bytes} bytes of output"
        );
    }
    for (id, token) in [
        (20, json!(1.5)),
        (21, json!(u64::MAX)),
        (22, json!(1e300)),
        (23, json!({"a": "b".repeat(512 << 10)})),
        (24, json!(null)),
    ] {
        let (reply, bytes, progress) = run_with(&mut s, id, token);
        assert!(refusal(&reply).contains("RUN-026"), "{reply}");
        assert_eq!(progress, 0);
        assert!(bytes < 4096, "{bytes}");
    }
    // A token within the bound, a string or a number, still hears progress.
    for (id, token) in [(30, json!("p".repeat(200))), (31, json!(i64::MAX))] {
        let (reply, bytes, progress) = run_with(&mut s, id, token.clone());
        assert_eq!(reply["result"]["isError"], json!(false), "{reply}");
        assert_eq!(reply["result"]["structuredContent"]["stdout"], "done\n");
        assert!(progress >= 1, "a 1.5 s run with a token hears progress");
        eprintln!(
            "token {:.12}…: {progress} notifications, {bytes} bytes",
            token.to_string()
        );
    }
}
