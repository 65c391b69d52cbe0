//! RUN-009, RUN-010: the bounds of a run, measured from outside; and the
//! HARD-003 fault of a script that ignores SIGTERM (RUN-008's SIGKILL 2 s
//! after it, the call back within timeout + 3.25 s). Figures are printed
//! (run with --nocapture) for the note; the asserted bounds are the
//! spec's, not benchmarks.

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
    assert!(took.as_millis() < 3000, "took {took:?}");
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
    assert!(took.as_millis() < 1000 + 3250 + 500, "took {took:?}");
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
