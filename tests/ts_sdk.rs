//! RUN-021, RUN-022 through a real client: the official MCP TypeScript SDK
//! (`@modelcontextprotocol/client`, installed into `.npm-tools` by the
//! README's test command) cancels a run with an `AbortSignal`, and runs a
//! 5 s script under a 2 s request timeout that resets on progress.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[test]
fn the_typescript_sdk_cancels_a_run_and_outlives_its_own_timeout_on_progress() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tools = root.join(".npm-tools");
    assert!(
        tools
            .join("node_modules/@modelcontextprotocol/client")
            .is_dir(),
        "no TypeScript SDK in .npm-tools: run the README's test command (.ci/test), which installs it"
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new("node")
        .arg(root.join("tests/clients/ts_sdk_run.mjs"))
        .arg(&tools)
        .arg(env!("CARGO_BIN_EXE_skill-mcp"))
        // The skill RUN-021 cancels: wait.js and alive.js.
        .arg(root.join("conformance/RUN-021/tree"))
        .arg(tmp.path())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the SDK script failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    eprintln!("measured: {v}");

    // RUN-022: the 5 s script beat the SDK's 2 s timeout, because progress
    // kept resetting it, and progress grew, with the timeout as total.
    let p = &v["progress"];
    assert_eq!(p["ok"], true, "{p}");
    assert_eq!(p["exitCode"], 0, "{p}");
    assert_eq!(p["stdout"], "waited\n", "{p}");
    let ticks = p["ticks"].as_array().unwrap();
    assert!(
        ticks.len() >= 5,
        "{} progress notifications in 5 s",
        ticks.len()
    );
    let mut last_at = 0;
    let mut last_progress = -1.0;
    for t in ticks {
        let at = t["at"].as_u64().unwrap();
        assert!(
            at - last_at <= 1000,
            "a gap of {} ms between notifications",
            at - last_at
        );
        let progress = t["progress"].as_f64().unwrap();
        assert!(
            progress > last_progress,
            "progress went from {last_progress} to {progress}"
        );
        assert_eq!(t["total"], 30000.0, "{t}");
        assert!(
            t["message"].as_str().unwrap().contains("scripts/wait.js"),
            "{t}"
        );
        (last_at, last_progress) = (at, progress);
    }

    // RUN-021: the cancelled call was abandoned, its script killed within a
    // second, and the next run ran (once the cancelled one settled) and saw
    // it gone.
    let c = &v["cancel"];
    assert_eq!(c["rejected"], true, "{c}");
    let gone = c["goneAfterMs"]
        .as_u64()
        .expect("the script's process went away");
    assert!(
        gone < 1000,
        "the script was still running {gone} ms after the cancel"
    );
    assert_eq!(c["next"]["exitCode"], 0, "{c}");
    assert_eq!(c["next"]["stdout"], "gone\n", "{c}");
    // The lock is free within a second of the cancel: at most a few busy
    // refusals while the cancelled run settles.
    let next_after = c["nextDoneAfterMs"].as_u64().expect("a time");
    assert!(
        next_after < 1500,
        "the next run ran {next_after} ms after the cancel: {c}"
    );
}
