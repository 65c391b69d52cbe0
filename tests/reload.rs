//! RELOAD-*: reloading without restart, opt-in. The Python SDK (a real
//! client) watches notifications and listings under --watch; SIGHUP,
//! hosted refusal, a vanished root and memory across 100 reloads are
//! driven from here.

mod common;
use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn python() -> PathBuf {
    std::env::var_os("SKILL_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.venv/bin/python")))
}

#[test]
fn under_watch_a_real_client_sees_add_edit_rename_delete_break_and_a_burst() {
    let py = python();
    assert!(
        py.exists(),
        "no Python with the MCP SDK at {}: run .ci/test (which creates it)",
        py.display()
    );
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "alpha");
    let out = Command::new(py)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/clients/python_reload.py"
        ))
        .arg(BIN)
        .arg(root.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn generation(s: &mut Session) -> u64 {
    s.tool("skill_list", json!({}))["generation"]
        .as_u64()
        .unwrap()
}

fn hup(s: &Session) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.pid() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
}

fn wait_generation(s: &mut Session, want: u64) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        if generation(s) >= want {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn sighup_rescans_without_watch_and_only_swaps_a_change() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "alpha");
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    assert_eq!(generation(&mut s), 1);
    skill(root.path(), "beta");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        names(&s.tool("skill_list", json!({}))),
        ["alpha"],
        "without --watch nothing changes by itself"
    );
    hup(&s);
    assert!(wait_generation(&mut s, 2), "SIGHUP did not rescan");
    assert_eq!(names(&s.tool("skill_list", json!({}))), ["alpha", "beta"]);
    hup(&s);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        generation(&mut s),
        2,
        "a rescan that changed nothing is not swapped in"
    );
    s.finish();
}

#[test]
fn a_vanished_root_is_not_swapped_in() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("skills");
    skill(&root, "alpha");
    let dir = root.to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    std::fs::rename(&root, base.path().join("moved")).unwrap();
    hup(&s);
    let t = Instant::now();
    let list = loop {
        let list = s.tool("skill_list", json!({}));
        if list.get("reloadRefused").is_some() || t.elapsed() > Duration::from_secs(10) {
            break list;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(names(&list), ["alpha"], "{list}");
    assert!(
        list["reloadRefused"]
            .as_str()
            .is_some_and(|r| r.contains("could not be read")),
        "{list}"
    );
    std::fs::rename(base.path().join("moved"), &root).unwrap();
    skill(&root, "beta");
    hup(&s);
    assert!(wait_generation(&mut s, 2));
    let list = s.tool("skill_list", json!({}));
    assert_eq!(names(&list), ["alpha", "beta"]);
    assert!(list.get("reloadRefused").is_none(), "{list}");
    s.finish();
}

#[test]
fn watching_is_refused_under_a_host() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "alpha");
    let dir = root.path().to_str().unwrap().to_owned();
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SKILLS_DIR", &dir)
        .env("SKILL_MCP_WATCH", "1")
        .env("MCP_DATA_DIR", root.path())
        .env("SKILL_MCP_LOG", "warn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    skill(root.path(), "beta");
    std::thread::sleep(Duration::from_millis(1000));
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"skill_list","arguments":{{}}}}}}"#).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--watch refused"), "{stderr}");
    let list: serde_json::Value = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["id"] == 2)
        .unwrap();
    assert_eq!(
        list["result"]["structuredContent"]["generation"], 1,
        "a hosted server kept its boot scan"
    );
}

#[test]
fn memory_is_flat_across_a_hundred_reloads() {
    let root = tempfile::tempdir().unwrap();
    for i in 0..50 {
        skill(root.path(), &format!("s{i:02}"));
    }
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let rss = |pid: u32| proc_kib(pid, "VmRSS");
    let mut samples = Vec::new();
    for round in 0..100u64 {
        std::fs::write(
            root.path().join("s00/SKILL.md"),
            format!("---\nname: s00\ndescription: round {round}\n---\nbody\n"),
        )
        .unwrap();
        hup(&s);
        assert!(
            wait_generation(&mut s, round + 2),
            "reload {round} did not happen"
        );
        s.request("skills/list", json!({}));
        if round % 10 == 9 {
            samples.push(rss(s.pid()));
        }
    }
    eprintln!("VmRSS every 10 reloads (KiB): {samples:?}");
    let (first, last) = (samples[0], *samples.last().unwrap());
    assert!(
        last <= first + 2 * 1024,
        "RSS grew from {first} to {last} KiB over 100 reloads"
    );
    s.finish();
}
