//! RUN-009, RUN-010: the bounds of a run, measured from outside; and the
//! HARD-003 fault of a script that ignores SIGTERM (RUN-008's SIGKILL 2 s
//! after it, the call back within timeout + 3.25 s). Figures are printed
//! (run with --nocapture) for the note; the asserted bounds are the
//! spec's, not benchmarks, each on the clock that the spec's promise is
//! about and with room for a busy machine (spec README, "Timing in
//! tests").

use crate::common;
use common::*;
use serde_json::json;
use std::time::Instant;

fn skill_with(dir: &std::path::Path, script: &str, body: &str, timeout: u32) {
    std::fs::create_dir_all(dir.join("s")).unwrap();
    std::fs::write(
        dir.join("s/SKILL.md"),
        format!("---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: {script}\n      interpreter: node\n      timeout: {timeout}\n    - script: quick.js\n      interpreter: node\n---\nbody\n"),
    )
    .unwrap();
    std::fs::write(dir.join("s").join(script), body).unwrap();
    std::fs::write(dir.join("s/quick.js"), "process.stdout.write('ok')").unwrap();
}

fn vm_hwm_kib(pid: u32) -> u64 {
    proc_kib(pid, "VmHWM")
}

#[test]
fn a_detached_grandchild_holding_the_pipes_does_not_hold_the_call() {
    let root = tempfile::tempdir().unwrap();
    skill_with(
        root.path(),
        "detach.js",
        "const c = require('child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'], { detached: true, stdio: 'inherit' }); c.unref(); process.stdout.write('leader done');",
        10,
    );
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(std::path::Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let t = Instant::now();
    let r = s.tool(
        "skill_run",
        json!({"name": "s", "script": "detach.js", "confirm": true}),
    );
    let took = t.elapsed();
    eprintln!(
        "detached grandchild: the call returned in {} ms (timeout 10000 ms)",
        took.as_millis()
    );
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["stdout"], "leader done");
    assert_eq!(r["timedOut"], false, "{r}");
    // The stall this catches is the call held until the pipes close (the
    // grandchild's 20 s) or the 10 s timeout; it returns in about 0.35 s.
    // 8 s is under both and over twenty times that.
    assert!(took.as_millis() < 8000, "took {took:?}");
    let t = Instant::now();
    let r = s.tool(
        "skill_run",
        json!({"name": "s", "script": "quick.js", "confirm": true}),
    );
    assert_eq!(r["stdout"], "ok", "the lock was freed");
    eprintln!("the next run returned in {} ms", t.elapsed().as_millis());
    s.finish();
}

#[test]
fn a_timeout_returns_within_its_budget_even_when_sigterm_is_ignored() {
    let root = tempfile::tempdir().unwrap();
    skill_with(
        root.path(),
        "stubborn.js",
        "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);",
        1,
    );
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(std::path::Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let t = Instant::now();
    let r = s.tool(
        "skill_run",
        json!({"name": "s", "script": "stubborn.js", "confirm": true}),
    );
    let took = t.elapsed();
    eprintln!(
        "SIGTERM ignored: returned in {} ms (timeout 1000 + grace 2000)",
        took.as_millis()
    );
    assert_eq!(r["timedOut"], true);
    assert_eq!(r["signal"], "SIGKILL");
    // RUN-008's promise — back within timeout + 3.25 s — is the behaviour,
    // so it is checked, on the server's own clock (`durationMs`, from the
    // spawn to the settled run): about 3,000 ms (SIGKILL 2 s after the
    // SIGTERM), with 1,750 ms of room. What the call spends outside the
    // run (the request, the plan, the reply: milliseconds) gets 5 s, only
    // against a reply held back; a busy machine's scheduling of this test
    // is no part of the promise.
    let ran = r["durationMs"].as_u64().expect("durationMs");
    assert!(ran >= 2900, "SIGKILL before the 2 s grace was over: {r}");
    assert!(ran < 1000 + 3250 + 500, "the run took {ran} ms: {r}");
    assert!(
        took.as_millis() < u128::from(ran) + 5000,
        "the call took {took:?} for a run of {ran} ms"
    );
    s.finish();
}

#[test]
fn a_flood_keeps_memory_bounded() {
    let root = tempfile::tempdir().unwrap();
    skill_with(
        root.path(),
        "flood.js",
        "const b = Buffer.alloc(1024 * 1024, 'x'); for (let i = 0; i < 50; i++) { process.stdout.write(b); process.stderr.write(b); }",
        60,
    );
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(std::path::Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    s.tool("skill_list", json!({}));
    let idle = vm_hwm_kib(s.pid());
    let t = Instant::now();
    let r = s.tool(
        "skill_run",
        json!({"name": "s", "script": "flood.js", "confirm": true}),
    );
    let peak = vm_hwm_kib(s.pid());
    eprintln!(
        "100 MiB flood (50 MiB per stream): {} ms, VmHWM idle {idle} KiB, peak {peak} KiB (+{} KiB)",
        t.elapsed().as_millis(),
        peak - idle
    );
    assert_eq!(
        r["timedOut"], false,
        "the flood was not blocked into a timeout"
    );
    assert_eq!(r["truncated"], json!({"stdout": true, "stderr": true}));
    assert_eq!(r["stdout"].as_str().unwrap().len(), 1024 * 1024);
    assert!(peak - idle < 32 * 1024, "peak grew by {} KiB", peak - idle);
    s.finish();
}
