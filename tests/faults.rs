//! HARD-003: faults in scripts and in the machine. Each gives a clear
//! result or error, the one-at-a-time lock is released, and the next call
//! is served.

mod common;
use common::*;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

fn skill_with(dir: &Path, scripts: &[(&str, &str, u32)]) {
    std::fs::create_dir_all(dir.join("s")).unwrap();
    let mut run = String::new();
    for (name, _, timeout) in scripts {
        run.push_str(&format!(
            "    - script: {name}\n      interpreter: node\n      timeout: {timeout}\n"
        ));
    }
    run.push_str("    - script: ok.js\n      interpreter: node\n");
    std::fs::write(
        dir.join("s/SKILL.md"),
        format!("---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n{run}---\nbody\n"),
    )
    .unwrap();
    for (name, body, _) in scripts {
        std::fs::write(dir.join("s").join(name), body).unwrap();
    }
    std::fs::write(dir.join("s/ok.js"), "process.stdout.write('ok')").unwrap();
}

fn run(s: &mut Session, script: &str, args: &[&str]) -> serde_json::Value {
    s.request("tools/call", json!({"name": "skill_run", "arguments": {"name": "s", "script": script, "args": args, "confirm": true}}))["result"].clone()
}

fn next_call_served(s: &mut Session) {
    let r = run(s, "ok.js", &[]);
    assert_eq!(
        r["structuredContent"]["stdout"], "ok",
        "the next call was not served: {r}"
    );
}

#[test]
fn script_faults_are_results_and_release_the_lock() {
    let root = tempfile::tempdir().unwrap();
    let marker = root.path().join("children");
    skill_with(
        root.path(),
        &[
            (
                "early.js",
                "process.stdout.end(); setTimeout(() => { process.stderr.write('after close'); process.exit(4); }, 300);",
                10,
            ),
            (
                "forks.js",
                "const { spawn } = require('child_process'); const pids = []; for (let i = 0; i < 200; i++) { pids.push(spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' }).pid); } require('fs').writeFileSync(process.argv[2], pids.join(' ')); setTimeout(() => process.exit(0), 500);",
                20,
            ),
            (
                "full.js",
                "try { require('fs').writeFileSync('/dev/full', 'x'.repeat(1000)); } catch (e) { process.stderr.write(e.code); process.exit(5); }",
                10,
            ),
            (
                "killed.js",
                "setTimeout(() => process.kill(process.pid, 'SIGSEGV'), 100); setInterval(() => {}, 1000);",
                10,
            ),
        ],
    );
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);

    let r = run(&mut s, "early.js", &[])["structuredContent"].clone();
    assert_eq!(
        (r["exitCode"].clone(), r["stderr"].clone()),
        (json!(4), json!("after close")),
        "{r}"
    );
    next_call_served(&mut s);

    let t = Instant::now();
    let r = run(&mut s, "forks.js", &[marker.to_str().unwrap()])["structuredContent"].clone();
    eprintln!(
        "200 children: the run returned in {} ms",
        t.elapsed().as_millis()
    );
    assert_eq!(r["exitCode"], 0, "{r}");
    let pids: Vec<i32> = std::fs::read_to_string(&marker)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 200);
    // SIGKILL is sent when the run settles, but 200 node processes take a
    // while to finish exiting on a loaded 2-core machine. Poll for a few
    // seconds: the children would otherwise live 60 s, so a server that
    // never signalled the group still fails here.
    let living = || {
        pids.iter()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .is_ok_and(|st| !st.contains(") Z "))
            })
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut alive = living();
    while alive > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        alive = living();
    }
    assert_eq!(
        alive, 0,
        "{alive} of the 200 children outlived the run (they were in its process group)"
    );
    next_call_served(&mut s);

    let r = run(&mut s, "full.js", &[])["structuredContent"].clone();
    assert_eq!(
        (r["exitCode"].clone(), r["stderr"].clone()),
        (json!(5), json!("ENOSPC")),
        "{r}"
    );
    next_call_served(&mut s);

    let r = run(&mut s, "killed.js", &[])["structuredContent"].clone();
    assert_eq!(
        (
            r["exitCode"].clone(),
            r["signal"].clone(),
            r["timedOut"].clone()
        ),
        (json!(null), json!("SIGSEGV"), json!(false)),
        "{r}"
    );
    next_call_served(&mut s);
    s.finish();
}

#[test]
fn node_missing_at_run_time_is_a_clear_error() {
    let root = tempfile::tempdir().unwrap();
    skill_with(root.path(), &[]);
    let bin_dir = tempfile::tempdir().unwrap();
    let node = which_node();
    std::os::unix::fs::symlink(&node, bin_dir.path().join("node")).unwrap();
    let dir = root.path().to_str().unwrap().to_owned();
    let path = format!("{}:/usr/bin:/bin", bin_dir.path().display());
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir), ("PATH", &path)]);
    next_call_served(&mut s);
    std::fs::remove_file(bin_dir.path().join("node")).unwrap();
    let r = run(&mut s, "ok.js", &[]);
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("could not start"),
        "{r}"
    );
    std::os::unix::fs::symlink(&node, bin_dir.path().join("node")).unwrap();
    next_call_served(&mut s);
    s.finish();
}

fn which_node() -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("node"))
        .find(|p| p.exists())
        .expect("node on PATH")
}

#[test]
fn running_out_of_file_descriptors_is_an_error_not_a_crash() {
    let root = tempfile::tempdir().unwrap();
    skill_with(root.path(), &[]);
    for i in 0..8 {
        std::fs::write(root.path().join(format!("s/f{i}.md")), "x").unwrap();
    }
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    // Lower the server's own descriptor limit to what it holds plus a few.
    let pid = nix::unistd::Pid::from_raw(s.pid() as i32);
    let open_now = std::fs::read_dir(format!("/proc/{}/fd", s.pid()))
        .unwrap()
        .count() as u64;
    let status = std::process::Command::new("prlimit")
        .arg(format!("--pid={pid}"))
        .arg(format!("--nofile={}:", open_now + 3))
        .status()
        .expect("prlimit runs");
    assert!(status.success());
    let mut errors = 0;
    for _ in 0..3 {
        let r = s.request("tools/call", json!({"name": "skill_file", "arguments": {"name": "s", "paths": ["f0.md", "f1.md", "f2.md", "f3.md", "f4.md", "f5.md", "f6.md", "f7.md"]}}));
        let text = r.to_string();
        if text.contains("Too many open files") || text.contains("EMFILE") {
            errors += 1;
        }
        let r = run(&mut s, "ok.js", &[]);
        if r["isError"] == true {
            errors += 1;
        }
    }
    eprintln!(
        "with the fd limit at {} descriptors: {errors} calls answered with a clear error",
        open_now + 3
    );
    assert!(errors > 0, "the lowered limit was never hit");
    let list = s.tool("skill_list", json!({}));
    assert_eq!(names(&list), ["s"], "the server still answers");
    let status = std::process::Command::new("prlimit")
        .arg(format!("--pid={pid}"))
        .arg("--nofile=1024:")
        .status()
        .unwrap();
    assert!(status.success());
    next_call_served(&mut s);
    s.finish();
}
