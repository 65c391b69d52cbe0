//! RELOAD-*: reloading without restart, opt-in. The Python SDK (a real
//! client) watches notifications and listings under --watch; SIGHUP,
//! hosted refusal, a vanished root, memory across 100 reloads, a
//! skill_run in flight across a swap (RELOAD-002's "keeps its plan") and
//! one-snapshot replies while swaps go back and forth are driven from here.

use crate::common;
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

/// hold.js writes `started` into the directory it is given, waits (at most
/// 20 s) for `release` to appear there, then prints and exits 0.
const HOLD_JS: &str = r#"const fs = require('fs'), path = require('path');
const dir = process.argv[2];
fs.writeFileSync(path.join(dir, 'started'), '');
const t0 = Date.now();
const tick = () => {
  if (fs.existsSync(path.join(dir, 'release'))) { process.stdout.write('held to the end'); process.exit(0); }
  if (Date.now() - t0 > 20000) { process.stdout.write('never released'); process.exit(3); }
  setTimeout(tick, 20);
};
tick();
"#;

fn declaring(entries: &[(&str, u32)]) -> String {
    let mut s = String::from("---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n");
    for (script, timeout) in entries {
        s +=
            &format!("    - script: {script}\n      interpreter: node\n      timeout: {timeout}\n");
    }
    s + "---\nbody\n"
}

fn wait_for(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let t = Instant::now();
    while !done() {
        assert!(t.elapsed() < within, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run_refusal(s: &mut Session, script: &str, confirm: bool) -> String {
    let r = s.request(
        "tools/call",
        json!({"name": "skill_run", "arguments": {"name": "s", "script": script, "confirm": confirm}}),
    );
    assert_eq!(
        r["result"]["isError"], true,
        "{script} was not refused: {r}"
    );
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_run_in_flight_keeps_its_plan_and_the_next_run_uses_the_new_declaration_and_grant() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("skills");
    let state = base.path().join("state");
    std::fs::create_dir_all(root.join("s")).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(root.join("s/SKILL.md"), declaring(&[("hold.js", 30)])).unwrap();
    std::fs::write(root.join("s/hold.js"), HOLD_JS).unwrap();
    std::fs::write(root.join("s/later.js"), "process.stdout.write('later ran')").unwrap();
    std::fs::write(root.join("s/other.js"), "process.stdout.write('other ran')").unwrap();
    let dir = root.to_str().unwrap().to_owned();
    // later.js is granted before the skill declares it: that row grants
    // nothing until a rescan re-intersects it with the new declaration.
    let grant = r#"[{"skill":"s","script":"hold.js"},{"skill":"s","script":"later.js"}]"#;
    let mut s = Session::start(
        Path::new(BIN),
        &[("SKILLS_DIR", &dir), ("MCP_SKILL_RUN", grant)],
    );
    assert!(run_refusal(&mut s, "later.js", false).contains("not declared"));

    let state_arg = state.to_str().unwrap().to_owned();
    let run = s.send_request(
        "tools/call",
        json!({"name": "skill_run", "arguments": {"name": "s", "script": "hold.js", "args": [state_arg], "confirm": true}}),
    );
    let mut kept = Vec::new();
    wait_for("hold.js started", Duration::from_secs(20), || {
        state.join("started").exists()
    });
    let started = Instant::now();

    // While it runs: hold.js's timeout drops to 1 s, later.js and other.js
    // are declared, and a SIGHUP swaps that in.
    std::fs::write(
        root.join("s/SKILL.md"),
        declaring(&[("hold.js", 1), ("later.js", 30), ("other.js", 30)]),
    )
    .unwrap();
    hup(&s);
    let t = Instant::now();
    let list = loop {
        let list = s.tool_keeping("skill_list", json!({}), &mut kept);
        if list["generation"] == 2 {
            break list;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no swap: {list}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        !kept.iter().any(|v| v["id"] == json!(run)),
        "hold.js ended before the swap was seen; the test proves nothing: {kept:?}"
    );
    let skill = &list["skills"][0];
    let runnable: Vec<(&str, u64)> = skill["scripts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["script"].as_str().unwrap(),
                e["timeoutMs"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(runnable, [("hold.js", 1000), ("later.js", 30000)], "{list}");
    assert_eq!(skill["ungrantedScripts"][0]["script"], "other.js", "{list}");

    // Hold the run well past the new 1 s timeout, then release it: it
    // finishes on the plan it started with (30 s), not the new one.
    wait_for("2.5 s of running", Duration::from_secs(5), || {
        started.elapsed() >= Duration::from_millis(2500)
    });
    std::fs::write(state.join("release"), "").unwrap();
    let r = s
        .reply_to(run, &mut kept, Duration::from_secs(25))
        .expect("the run in flight replies");
    let out = &r["result"]["structuredContent"];
    assert_ne!(r["result"]["isError"], true, "{r}");
    assert_eq!(out["stdout"], "held to the end", "{r}");
    assert_eq!(out["exitCode"], 0, "{r}");
    assert_eq!(out["timedOut"], false, "{r}");
    assert_eq!(out["timeoutMs"], 30000, "the run kept its plan: {r}");
    let held_ms = out["durationMs"].as_u64().unwrap();
    assert!(held_ms >= 2500, "ran {held_ms} ms");
    eprintln!("hold.js ran {held_ms} ms across the swap to generation 2 (new timeout 1000 ms)");

    // The next runs use the new declaration and the re-intersected grant.
    let preview = s.tool("skill_run", json!({"name": "s", "script": "hold.js"}));
    assert_eq!(preview["willRun"]["timeoutMs"], 1000, "{preview}");
    let later = s.tool(
        "skill_run",
        json!({"name": "s", "script": "later.js", "confirm": true}),
    );
    assert_eq!(later["stdout"], "later ran", "{later}");
    let msg = run_refusal(&mut s, "other.js", true);
    assert!(msg.contains("not granted"), "{msg}");

    // A third generation drops hold.js: the next run of it is refused as
    // undeclared, and nothing starts.
    std::fs::write(
        root.join("s/SKILL.md"),
        declaring(&[("later.js", 30), ("other.js", 30)]),
    )
    .unwrap();
    std::fs::remove_file(state.join("started")).unwrap();
    std::fs::remove_file(state.join("release")).unwrap();
    hup(&s);
    assert!(wait_generation(&mut s, 3), "no third swap");
    let r = s.request(
        "tools/call",
        json!({"name": "skill_run", "arguments": {"name": "s", "script": "hold.js", "args": [state.to_str().unwrap()], "confirm": true}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let msg = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        msg.contains("not declared") && msg.contains("later.js, other.js"),
        "{msg}"
    );
    assert!(!state.join("started").exists(), "a refused run started");
    s.finish();
}

/// State A: alpha, and beta as itself. State B: beta's frontmatter names
/// another skill (so a `name-mismatch` problem saying it leaves
/// skills/list, which it does), beta gains extra.md, and gamma appears.
fn write_state(root: &Path, b: bool) {
    let beta = if b {
        "---\nname: beta-b\ndescription: state B\n---\nbody\n"
    } else {
        "---\nname: beta\ndescription: state A\n---\nbody\n"
    };
    std::fs::write(root.join("beta/SKILL.md"), beta).unwrap();
    if b {
        std::fs::write(root.join("beta/extra.md"), "extra\n").unwrap();
        skill(root, "gamma");
    } else {
        let _ = std::fs::remove_file(root.join("beta/extra.md"));
        let _ = std::fs::remove_dir_all(root.join("gamma"));
    }
}

/// Which state one skill_list reply shows, by each of four independent
/// signs; all four must agree, or the reply mixed two snapshots.
fn state_of(list: &serde_json::Value) -> bool {
    let skills = list["skills"].as_array().unwrap();
    let beta = skills.iter().find(|s| s["name"] == "beta").expect("beta");
    let by_description = beta["description"] == "state B";
    let by_files = beta["files"] == 2;
    let by_gamma = skills.iter().any(|s| s["name"] == "gamma");
    let on_beta = |reason: &str, says: &str| {
        list["problems"].as_array().unwrap().iter().any(|p| {
            p["reason"] == reason
                && p["path"]
                    .as_str()
                    .is_some_and(|q| q.ends_with("/beta/SKILL.md"))
                && p["detail"].as_str().is_some_and(|d| d.contains(says))
        })
    };
    let by_problems = on_beta("name-mismatch", "leaves it out of skills/list");
    let signs = [by_description, by_files, by_gamma, by_problems];
    assert!(
        signs.iter().all(|s| *s == by_description),
        "one skill_list reply mixes two snapshots (description, files, gamma, problems = {signs:?}): {list}"
    );
    by_description
}

#[test]
fn every_reply_comes_from_one_snapshot_while_rescans_swap_back_and_forth() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    const FLIPS: u64 = 20;
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "alpha");
    skill(root.path(), "beta");
    write_state(root.path(), false);
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let pid = nix::unistd::Pid::from_raw(s.pid() as i32);
    let seen = AtomicU64::new(1);
    let done = AtomicBool::new(false);
    // Set when the reader stops, even by a failed assertion, so the writer
    // does not wait out its deadline for a reader that is gone.
    let reader_gone = AtomicBool::new(false);
    struct Gone<'a>(&'a AtomicBool);
    impl Drop for Gone<'_> {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let started = Instant::now();
    let (replies, by_generation) = std::thread::scope(|scope| {
        // The writer flips the tree and sends SIGHUP, then waits until the
        // reader has seen that swap, so the tree never changes mid-scan and
        // generation g shows state B exactly when g is even.
        let writer = scope.spawn(|| {
            let result = (1..=FLIPS).try_for_each(|flip| {
                write_state(root.path(), flip % 2 == 1);
                nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
                let t = Instant::now();
                while seen.load(Ordering::SeqCst) < flip + 1 {
                    if reader_gone.load(Ordering::SeqCst) {
                        return Err("the reader stopped".to_owned());
                    }
                    if t.elapsed() > Duration::from_secs(20) {
                        return Err(format!("flip {flip}: generation {} not seen", flip + 1));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(())
            });
            done.store(true, Ordering::SeqCst);
            result
        });
        let gone = Gone(&reader_gone);
        let mut replies = 0u64;
        let mut by_generation = std::collections::BTreeMap::new();
        let mut last = 1;
        while !done.load(Ordering::SeqCst) {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the writer never finished"
            );
            let list = s.tool("skill_list", json!({}));
            let generation = list["generation"].as_u64().unwrap();
            let b = state_of(&list);
            assert_eq!(
                b,
                generation.is_multiple_of(2),
                "generation {generation} reports the other generation's tree: {list}"
            );
            assert!(
                generation >= last,
                "generation went back from {last} to {generation}"
            );
            last = generation;
            *by_generation.entry(generation).or_insert(0u64) += 1;
            seen.fetch_max(generation, Ordering::SeqCst);
            replies += 1;

            // The other doors' listings are each one state or the other,
            // never a mix.
            let prompts = s.request("prompts/list", json!({}));
            let prompts: Vec<(&str, &str)> = prompts["result"]["prompts"]
                .as_array()
                .unwrap_or_else(|| panic!("{prompts}"))
                .iter()
                .map(|p| {
                    (
                        p["name"].as_str().unwrap(),
                        p["description"].as_str().unwrap_or_default(),
                    )
                })
                .collect();
            assert!(
                prompts == [("alpha", "d"), ("beta", "state A")]
                    || prompts == [("alpha", "d"), ("beta", "state B"), ("gamma", "d")],
                "prompts/list mixes two snapshots: {prompts:?}"
            );
            let res = s.request("resources/list", json!({}));
            let res_names: Vec<&str> = res["result"]["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["uri"].as_str().unwrap())
                .collect();
            assert!(
                res_names == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]
                    || res_names
                        == [
                            "skill://alpha/SKILL.md",
                            "skill://beta/SKILL.md",
                            "skill://beta/extra.md",
                            "skill://gamma/SKILL.md"
                        ],
                "resources/list mixes two snapshots: {res_names:?}"
            );
        }
        drop(gone);
        writer.join().unwrap().unwrap();
        (replies, by_generation)
    });
    eprintln!(
        "{replies} skill_list replies over {FLIPS} swaps in {} ms; replies per generation: {by_generation:?}",
        started.elapsed().as_millis()
    );
    assert_eq!(
        by_generation.keys().copied().collect::<Vec<_>>(),
        (1..=FLIPS + 1).collect::<Vec<_>>(),
        "every generation was seen, in order"
    );
    s.finish();
}

/// SKX-011: a served skill whose SKILL.md was edited since the scan (here
/// its frontmatter `name`, in boot-once mode, so no rescan will come) costs
/// only its own entry: skills/list leaves it out and still lists the rest,
/// and skills/get refuses it in the server's own words, naming the rule and
/// the way out, rather than handing rmcp an entry whose URI disagrees with
/// its name (which once failed the whole list with "invalid result").
#[test]
fn skills_list_answers_from_its_snapshot_when_a_skill_md_changes_before_the_rescan() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "alpha");
    skill(root.path(), "beta");
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    std::fs::write(
        root.path().join("beta/SKILL.md"),
        "---\nname: beta-b\ndescription: d\n---\nbody\n",
    )
    .unwrap();
    let ext = s.request("skills/list", json!({}));
    assert!(ext.get("error").is_none(), "{ext}");
    let uris: Vec<&str> = ext["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["uri"].as_str())
        .collect();
    assert_eq!(uris, ["skill://alpha/SKILL.md"], "{ext}");
    let get = s.request("skills/get", json!({"uri": "skill://beta/SKILL.md"}));
    let message = get["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("changed since the catalog was scanned")
            && message.contains("beta-b")
            && message.contains("SKX-011"),
        "skills/get refuses in its own words: {get}"
    );
    let alpha = s.request("skills/get", json!({"uri": "skill://alpha/SKILL.md"}));
    assert!(alpha.get("error").is_none(), "{alpha}");
    assert_eq!(generation(&mut s), 1);
    s.finish();
}

/// RELOAD-013: a change made after the boot scan but before the watch is
/// set up (the watch starts with the session, after `initialize`) is not
/// missed: the first rescan under the watch catches up. Here the skill is
/// added once the server has logged its boot scan and before the client
/// says `initialize`; it must be listed without any later change.
#[test]
fn a_change_between_the_boot_scan_and_the_watch_is_picked_up() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "first");
    let mut child = Command::new(BIN)
        .arg("--watch")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("SKILLS_DIR", root.path())
        .env("SKILL_MCP_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, scanned) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("catalog scanned") {
                let _ = tx.send(());
            }
        }
    });
    scanned
        .recv_timeout(Duration::from_secs(20))
        .expect("the server logs its boot scan");
    skill(root.path(), "second");
    let mut stdin = child.stdin.take().unwrap();
    let (out_tx, out) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = out_tx.send(line);
        }
    });
    let mut send = |v: serde_json::Value| writeln!(stdin, "{v}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut listed = Vec::new();
    for id in 1.. {
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "skill_list", "arguments": {}}}),
        );
        let reply = loop {
            let line = out
                .recv_timeout(Duration::from_secs(10))
                .expect("an answer");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                break v;
            }
        };
        listed = names(&reply["result"]["structuredContent"]);
        if listed.len() == 2 || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        listed,
        ["first", "second"],
        "a skill added between the boot scan and the watch was never listed"
    );
}
