//! `skill-mcp check` from the outside (spec CHECK-*): the built binary, run
//! over the fixture trees in tests/fixtures/check/ — a corpus laid out like
//! the public anthropics/skills repository, a broken tree and a tree that
//! only earns warnings — plus what git cannot hold, generated here.

use crate::common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_skill-mcp");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn fixture(name: &str) -> PathBuf {
    Path::new(ROOT).join("tests/fixtures/check").join(name)
}

/// A directory holding a stand-in `node`, so which scripts are runnable
/// does not depend on the machine running the tests.
fn fake_path() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().unwrap();
    let node = bin.path().join("node");
    std::fs::write(&node, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Runs `skill-mcp <args>` in `cwd` with exactly `env` (and a PATH holding
/// only the stand-in node).
fn run_in(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let bin = fake_path();
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", bin.path())
        .current_dir(cwd)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("skill-mcp runs")
}

fn run(args: &[&str]) -> Output {
    run_in(Path::new(ROOT), args, &[])
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

/// Copies a fixture tree into a fresh temporary directory.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The broken tree, plus what git cannot hold: a symlink leading out of
/// the root, and a SKILL.md that is not UTF-8.
fn broken_tree() -> (tempfile::TempDir, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&fixture("broken"), tmp.path());
    let outside = tempfile::tempdir().unwrap();
    common::skill(outside.path(), "elsewhere");
    std::os::unix::fs::symlink(outside.path().join("elsewhere"), tmp.path().join("escape"))
        .unwrap();
    std::fs::create_dir(tmp.path().join("latin1")).unwrap();
    std::fs::write(
        tmp.path().join("latin1/SKILL.md"),
        b"---\nname: latin1\ndescription: caf\xe9\n---\n",
    )
    .unwrap();
    (tmp, outside)
}

// CHECK-001, CHECK-004 — the bundled skills pass with the server's own roots.
#[test]
fn the_bundled_skills_pass() {
    let o = run(&["check"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(out.contains("roots (default): skills"), "{out}");
    assert!(
        out.contains("served skill-mcp-demo: 3 files,")
            && out.contains("runnable: scripts/report.js"),
        "{out}"
    );
    assert!(out.contains("check passed: 1 skill served; 0 errors, 0 warnings"));
}

// CHECK-001 — with no DIR the roots are the server's: SKILLS_DIR here.
#[test]
fn with_no_dir_the_roots_are_the_servers() {
    let o = run_in(
        Path::new(ROOT),
        &["check"],
        &[("SKILLS_DIR", "tests/fixtures/check/anthropic-like/skills")],
    );
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(
        out.contains("roots (SKILLS_DIR): tests/fixtures/check/anthropic-like/skills"),
        "{out}"
    );
    assert!(out.contains("check passed: 5 skills served"), "{out}");
}

// CHECK-001, CHECK-002 — the anthropics/skills layout, as the server sees it:
// from its skills/ directory everything passes; from the repository root,
// the server also meets spec/ (no SKILL.md) and template/ (served under its
// directory name, unlike its frontmatter's), and says so.
#[test]
fn an_anthropics_skills_layout() {
    let o = run(&["check", "tests/fixtures/check/anthropic-like/skills"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    for name in [
        "algorithmic-art",
        "brand-guidelines",
        "mcp-builder",
        "pdf",
        "webapp-testing",
    ] {
        assert!(out.contains(&format!("served {name}: ")), "{name}: {out}");
    }
    assert!(
        out.contains(
            "served webapp-testing: 5 files, 3.1 KiB; runnable: scripts/wait_for_port.js; unavailable: scripts/with_server.py (declares the interpreter \"python3\""
        ),
        "{out}"
    );
    assert!(out.contains("served pdf: 6 files, 2.1 KiB; no scripts declared"));

    let o = run(&["check", "tests/fixtures/check/anthropic-like"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains("tests/fixtures/check/anthropic-like/spec: error[no-skill-md]: no SKILL.md in this directory, so it is not a skill; this root keeps its skills in skills/: point SKILLS_DIR at that directory to serve only them\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "tests/fixtures/check/anthropic-like/template/SKILL.md:2:7: error[name-mismatch]: the frontmatter says name \"template-skill\", but the folder is \"template\""
        ),
        "{out}"
    );
    assert!(out.contains("served template: 1 file"), "{out}");
}

// CHECK-002 — the text report for that corpus, line for line.
#[cfg(not(feature = "python3"))]
#[test]
fn the_text_report_of_the_corpus() {
    let o = run(&["check", "tests/fixtures/check/anthropic-like"]);
    insta::assert_snapshot!("anthropic_like_text", stdout(&o));
}

// CHECK-003, CHECK-004 — every problem of the broken tree, with its
// location, the offending line and a caret where it has a position; exit 1.
#[test]
fn a_broken_tree_prints_each_problem_with_its_location() {
    let (tmp, _outside) = broken_tree();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let o = run_in(&root, &["check", "."], &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    for want in [
        "notes: error[no-skill-md]: no SKILL.md in this directory, so it is not a skill: add a SKILL.md to it if it is \
         meant as a skill, or move it out of this folder of skills\n",
        "alias/SKILL.md:3:14: error[malformed-frontmatter]: SKILL.md frontmatter uses a YAML anchor, which is refused: \
         write the value out in full at each place it is used\n  |\n3 | description: &desc Uses a YAML anchor, which the \
         strict reader refuses.\n  |              ^\n",
        "bad-yaml/SKILL.md:3:14: error[malformed-frontmatter]: SKILL.md frontmatter is not valid YAML: the value of \
         \"description\" opens a quote (\") that is never closed; close it at the end of the value: description: \
         \"a description whose quote never closes\"\n",
        "3 | description: \"a description whose quote never closes\n  |              ^\n",
        "bad-block/SKILL.md:9:6: error[declaration]: the \"mcp-host\" block is not valid YAML, so it is ignored and the \
         skill has no scripts (its instructions are still served): this line is indented 5 spaces, which lines up \
         with no key it can belong to; indent it 6 spaces, as \"interpreter\" on line 8 is\n",
        "9 |      timeout: 30\n  |      ^\n",
        "future-version/SKILL.md:5:12: error[declaration]: \"mcp-host\" declares major version 2, and this server reads \
         version 1 only, so the block is ignored and the skill has no scripts: write version: 1 if the block is \
         written as version 1 is",
        "5 |   version: 2\n  |            ^\n",
        "unknown-key/SKILL.md:4:7: warning[unknown-key]: unknown frontmatter key \"tags\" (ignored): neither the Agent Skills spec nor Claude Code defines it; keep fields of your own under \"metadata\"\n  |\n4 | tags: [demo, fixtures]\n  |       ^\n",
        "missing-script/SKILL.md:7:15: error[declared-script-missing]: \"mcp-host.run[0]\" declares \"scripts/gone.js\", \
         which is not a file in this skill, so it can never run: add the file at \"scripts/gone.js\" in the skill's \
         folder, or change this line to the path of a file that is there\n",
        "renamed/SKILL.md:2:7: error[name-mismatch]: the frontmatter says name \"renamed-skill\", but the folder is \"renamed\"",
        "unclosed/SKILL.md:1:1: error[malformed-frontmatter]: SKILL.md frontmatter is never closed by a \"---\" line: \
         the \"---\" on line 1 opens it and no line of exactly \"---\" follows; add one after the frontmatter's last \
         line, before the instructions\n",
        "escape: error[symlink-escape]: ",
        "latin1/SKILL.md:3:17: error[unreadable-skill-md]: SKILL.md is not valid UTF-8 (first bad byte at offset 33), \
         so the skill is not served: save the file as UTF-8 (a Latin-1 file converts with iconv -f latin1 -t utf-8)\n",
        "Loud_Name/SKILL.md:2:7: error[skills-extension]: the name \"Loud_Name\" (the folder's, and its name:) is not one SEP-2640 takes",
        "no-description/SKILL.md:4:1: error[skills-extension]: no \"description\" in the frontmatter: add a line description: ",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    // The position is said once, by the location, not again in the message.
    assert!(!out.contains("(line 3, column 14)"), "{out}");
    // One bad skill costs only itself.
    assert!(out.contains("served good: 1 file"), "{out}");
    assert!(
        out.contains("served missing-script: 1 file, 189 B; unavailable: scripts/gone.js (declared, but it is not a file in this skill)"),
        "{out}"
    );
    // What the skills door already refused is not warned again: the one
    // warning is the unknown key (CHECK-018).
    assert_eq!(out.matches("warning[").count(), 1, "{out}");
    assert!(!out.contains("warning[agentskills-"), "{out}");
    // The summary says which served skills failed, which were refused,
    // and the errors by code (CHECK-002).
    assert!(
        out.contains(
            "check failed: 8 skills served (6 with errors: Loud_Name, bad-block, future-version, missing-script, \
             no-description, and 1 more); 4 skills refused (alias, bad-yaml, latin1, unclosed); 12 errors \
             (3 malformed-frontmatter, 2 declaration, 2 skills-extension, 1 declared-script-missing, 1 name-mismatch, \
             1 no-skill-md, 1 symlink-escape, 1 unreadable-skill-md), 1 warning\n"
        ),
        "{out}"
    );
}

// CHECK-007 — the JSON report, pinned as printed (field order and all);
// temporary paths replaced.
#[test]
fn the_json_report_of_the_broken_tree() {
    let (tmp, outside) = broken_tree();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let o = run_in(
        &root,
        &["check", "--format", "json", root.to_str().unwrap()],
        &[],
    );
    assert_eq!(code(&o), 1);
    let mut json = stdout(&o);
    for (path, label) in [
        (root.clone(), "[ROOT]"),
        (std::fs::canonicalize(outside.path()).unwrap(), "[OUTSIDE]"),
    ] {
        json = json.replace(&*path.to_string_lossy(), label);
    }
    let v: Value = serde_json::from_str(&json).expect("one JSON document");
    assert_eq!(
        (v["format"].clone(), v["passed"].clone()),
        (1.into(), false.into())
    );
    insta::assert_snapshot!("broken_json", json);
}

// CHECK-004, CHECK-016 — usage errors exit 2; --help and --version exit 0.
#[test]
fn usage_errors_exit_2() {
    for args in [
        &["check", "--format", "yaml"][..],
        &["check", "--bogus"],
        &["check", ""],
        &["frobnicate"],
        &["--bogus"],
    ] {
        let o = run(args);
        assert_eq!(
            code(&o),
            2,
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(!o.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn help_and_version_follow_cli_conventions() {
    let o = run(&["--help"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(
        out.contains("Usage: skill-mcp [OPTIONS] [COMMAND]"),
        "{out}"
    );
    assert!(out.contains("check") && out.contains("serve"), "{out}");
    let o = run(&["check", "--help"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(
        out.contains("Usage: skill-mcp check [OPTIONS] [DIR]..."),
        "{out}"
    );
    assert!(
        out.contains("--strict") && out.contains("--format"),
        "{out}"
    );
    assert!(out.contains("Exit status: 0"), "{out}");
    let o = run(&["--version"]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        stdout(&o).trim(),
        format!("skill-mcp {}", env!("CARGO_PKG_VERSION"))
    );
}

// CHECK-016 — `--watch` is serving's option: listed where serving is,
// refused with `check`, and it watches with or without `serve`.
#[test]
fn watch_is_an_option_of_serving_only() {
    for args in [&["--help"][..], &["serve", "--help"]] {
        let o = run(args);
        assert_eq!(code(&o), 0);
        assert!(stdout(&o).contains("--watch"), "{args:?}: {}", stdout(&o));
    }
    let o = run(&["check", "--help"]);
    assert!(!stdout(&o).contains("--watch"), "{}", stdout(&o));
    for args in [
        &["check", "--watch"][..],
        &["--watch", "check"],
        &["check", "--watch", "skills"],
    ] {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(
            o.stdout.is_empty() && err.contains("--watch"),
            "{args:?}: {err}"
        );
    }
    for args in [&["--watch"][..], &["serve", "--watch"]] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skills");
        common::skill(&root, "first");
        let mut cmd = Command::new(BIN);
        cmd.args(args);
        let dir = root.to_str().unwrap();
        let mut s = common::Session::start_command(cmd, &[("SKILLS_DIR", dir)]);
        let list = s.tool("skill_list", serde_json::json!({}));
        assert_eq!(common::names(&list), ["first"], "{args:?}");
        // The watch is set up once the session has started; give it the
        // time tests/reload_roots.rs gives it (two debounce windows).
        std::thread::sleep(std::time::Duration::from_secs(2));
        common::skill(&root, "second");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let list = s.tool("skill_list", serde_json::json!({}));
            if common::names(&list) == ["first", "second"] {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{args:?}: a skill added under --watch never appeared: {list}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert!(s.finish().success(), "{args:?}");
    }
}

// CHECK-016 — with no arguments (and with `serve`) it is the MCP server.
#[test]
fn no_arguments_still_serves() {
    let mut s = common::Session::start(Path::new(BIN), &[]);
    let list = s.tool("skill_list", serde_json::json!({}));
    assert_eq!(common::names(&list), ["skill-mcp-demo"]);
    assert!(s.finish().success());

    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(BIN)
        .arg("serve")
        .env_clear()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["result"]["serverInfo"]["name"], "skill-mcp", "{line}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

// CHECK-013 — warnings pass, unless --strict.
#[test]
fn strict_turns_warnings_into_failures() {
    let o = run(&["check", "tests/fixtures/check/warnings"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(
        out.contains("check passed: 3 skills served; 0 errors, 5 warnings"),
        "{out}"
    );
    let o = run(&["check", "--strict", "tests/fixtures/check/warnings"]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains("check failed: 3 skills served; 0 errors, 5 warnings (--strict: warnings fail the check)"),
        "{out}"
    );
    let o = run(&[
        "check",
        "--strict",
        "--format",
        "json",
        "tests/fixtures/check/warnings",
    ]);
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (v["strict"].clone(), v["passed"].clone()),
        (true.into(), false.into())
    );
    assert_eq!(v["counts"]["warnings"], 5);
}

// CHECK-008..CHECK-012 — each Agent Skills warning, with its position.
#[test]
fn the_agent_skills_warnings() {
    let o = run(&["check", "tests/fixtures/check/warnings"]);
    let out = stdout(&o);
    let w = "tests/fixtures/check/warnings";
    for want in [
        format!(
            "{w}/long-body/SKILL.md:505:1: warning[agentskills-body]: the SKILL.md body is 523 lines"
        ),
        format!(
            "{w}/long-fields/SKILL.md:3:14: warning[agentskills-description]: \"description\" is 1139 characters"
        ),
        format!(
            "{w}/long-fields/SKILL.md:4:16: warning[agentskills-compatibility]: \"compatibility\" is 714 characters"
        ),
        format!(
            "{w}/metadata-numbers/SKILL.md:6:12: warning[agentskills-metadata]: \"metadata.version\" is a number"
        ),
        "6 |   version: 1.0\n  |            ^\n".to_owned(),
        format!(
            "{w}/metadata-numbers/SKILL.md:7:9: warning[agentskills-metadata]: \"metadata.tags\" is a list"
        ),
    ] {
        assert!(out.contains(&want), "missing {want:?} in\n{out}");
    }
}

// CHECK-014 — the server itself reports none of those warnings.
#[test]
fn warnings_never_enter_the_servers_problems() {
    let dir = fixture("warnings");
    let mut s = common::Session::start(Path::new(BIN), &[("SKILLS_DIR", dir.to_str().unwrap())]);
    let list = s.tool("skill_list", serde_json::json!({}));
    assert_eq!(list["problems"], serde_json::json!([]), "{list}");
    assert_eq!(common::names(&list).len(), 3);
}

// CHECK-005 — no escape codes when stdout is not a terminal, NO_COLOR or not.
#[test]
fn no_escape_codes_off_a_terminal() {
    for env in [&[][..], &[("NO_COLOR", "1")], &[("TERM", "xterm-256color")]] {
        for args in [
            &["check", "tests/fixtures/check/broken"][..],
            &["check", "--format", "json", "tests/fixtures/check/broken"],
        ] {
            let o = run_in(Path::new(ROOT), args, env);
            assert!(!o.stdout.contains(&0x1b), "{env:?} {args:?}");
        }
    }
}

// CHECK-005 — on a terminal there is colour, and NO_COLOR removes it. A
// terminal is made with util-linux `script`; where it is missing the case
// is skipped (the decision itself is unit-tested in src/check/tests.rs).
#[test]
fn colour_on_a_terminal_unless_no_color() {
    let has_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script || !cfg!(target_os = "linux") {
        eprintln!("skipped: no util-linux `script` to give the check a terminal");
        return;
    }
    let under_tty = |env: &[(&str, &str)]| {
        let line = format!("{BIN} check tests/fixtures/check/broken");
        let mut cmd = Command::new("script");
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("TERM", "xterm-256color")
            .current_dir(ROOT)
            .args(["-qec", &line, "/dev/null"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("script runs")
    };
    let o = under_tty(&[]);
    assert!(
        o.stdout.contains(&0x1b),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = under_tty(&[("NO_COLOR", "1")]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("error[no-skill-md]"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        !o.stdout.contains(&0x1b),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = under_tty(&[("TERM", "dumb")]);
    assert!(!o.stdout.contains(&0x1b));
}

// CHECK-006 — a name built to drive the terminal is printed inert.
#[test]
fn untrusted_names_cannot_drive_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    common::skill(tmp.path(), "ok");
    let evil = "evil\u{1b}[2J\u{1b}]0;pwned\u{7}\u{202e}name";
    common::skill(tmp.path(), evil);
    let o = run_in(tmp.path(), &["check", "."], &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("error[unusable-name]"), "{out}");
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'));
}

// CHECK-015 — an empty tree fails, naming the layouts it looked for
// (issue 41 §4: it said "check passed: 0 skills served" and exited 0).
#[test]
fn no_skills_fails_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_in(tmp.path(), &["check", "."], &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains(": error[no-skills]: no skill was found"),
        "{out}"
    );
    for layout in [
        "<root>/SKILL.md",
        "<root>/<name>/SKILL.md",
        "<root>/skills/<name>/SKILL.md",
    ] {
        assert!(out.contains(layout), "{layout}: {out}");
    }
    assert!(!out.contains("check passed"), "{out}");
    let o = run_in(tmp.path(), &["check", "--strict", "."], &[]);
    assert_eq!(code(&o), 1);
}

// CHECK-001 — the grant and the hosted markers are the environment's, as
// the server's are: a script becomes ungranted, a broken grant fails.
#[test]
fn the_grant_is_the_environments() {
    let dir = "tests/fixtures/check/anthropic-like/skills";
    let o = run_in(Path::new(ROOT), &["check", dir], &[("MCP_SKILL_RUN", "[]")]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(out.contains("grant: MCP_SKILL_RUN"), "{out}");
    assert!(out.contains("ungranted: scripts/wait_for_port.js"), "{out}");
    let o = run_in(Path::new(ROOT), &["check", dir], &[("MCP_DATA_DIR", "/x")]);
    assert!(stdout(&o).contains("grant: hosted-default"));
    let o = run_in(Path::new(ROOT), &["check", dir], &[("MCP_SKILL_RUN", "{")]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains("MCP_SKILL_RUN: error[grant]: MCP_SKILL_RUN is not a JSON list"),
        "{out}"
    );
}

// CHECK-017 — the check runs nothing and writes nothing.
#[test]
fn the_check_runs_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("marker");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: marker\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: scripts/touch.js\n      interpreter: node\n---\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("scripts/touch.js"),
        "require('fs').writeFileSync('ran', '')\n",
    )
    .unwrap();
    let before = listing(tmp.path());
    // A real node, where there is one, so a run would have happened.
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(tmp.path())
        .args(["check", "."]);
    let o = cmd.output().unwrap();
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(listing(tmp.path()), before);
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(listing(&p));
        }
        out.push(p);
    }
    out.sort();
    out
}

/// Writes `<root>/<dir>/<file>` holding `text`, creating directories.
fn write(root: &Path, rel: &str, text: &str) {
    let at = root.join(rel);
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::fs::write(at, text).unwrap();
}

/// The server's `problems` for `root`, through MCP.
fn server_problems(root: &Path) -> Vec<Value> {
    let mut s = common::Session::start(Path::new(BIN), &[("SKILLS_DIR", root.to_str().unwrap())]);
    let list = s.tool("skill_list", serde_json::json!({}));
    assert!(s.finish().success());
    list["problems"].as_array().cloned().unwrap_or_default()
}

// CHECK-018, FM-007 — a skill written for Claude Code, with every key its
// docs define, is no finding: exit 0, nothing warned, nothing in the
// server's problems, and served.
#[test]
fn claude_code_keys_are_no_finding() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "review/SKILL.md",
        "---\nname: review\ndescription: Reviews a change.\nwhen_to_use: When a diff is ready.\n\
         model: sonnet\neffort: high\nallowed-tools: Read, Grep\ndisable-model-invocation: true\n\
         user-invocable: false\nargument-hint: \"[file]\"\narguments: [file]\ncontext: fork\n\
         agent: Explore\npaths: [\"src/**\"]\nshell: bash\nhooks:\n  PreToolUse: []\n\
         license: MIT\ncompatibility: any\nmetadata:\n  author: me\nversion: 1.0.0\n---\nReview it.\n",
    );
    let o = run_in(tmp.path(), &["check", "--strict", "."], &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(
        out.contains("check passed: 1 skill served; 0 errors, 0 warnings"),
        "{out}"
    );
    assert_eq!(server_problems(tmp.path()), Vec::<Value>::new());
}

// CHECK-018, FM-007 — a key nobody defines is a warning under its own code
// (never `declaration`), naming the key a near miss means; the skill is
// served, the check passes unless --strict, and the server reports it.
#[test]
fn a_misspelt_key_is_a_warning_that_names_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "near/SKILL.md",
        "---\nname: near\ndescription: d\nlicence: MIT\nauthor: me\n---\nbody\n",
    );
    let o = run_in(tmp.path(), &["check", "."], &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}");
    for want in [
        "near/SKILL.md:4:10: warning[unknown-key]: unknown frontmatter key \"licence\" (ignored): did you mean \"license\"?\n  |\n4 | licence: MIT\n  |          ^\n",
        "near/SKILL.md:5:9: warning[unknown-key]: unknown frontmatter key \"author\" (ignored): neither the Agent Skills spec nor Claude Code defines it; keep fields of your own under \"metadata\"",
        "check passed: 1 skill served; 0 errors, 2 warnings",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    assert!(!out.contains("error[declaration]"), "{out}");
    assert_eq!(
        code(&run_in(tmp.path(), &["check", "--strict", "."], &[])),
        1
    );

    // The typo the issue met: the warning names "description"; the missing
    // description is the skills door's own error, as before.
    write(
        tmp.path(),
        "typo/SKILL.md",
        "---\nname: typo\ndescripton: Misspelt.\n---\nbody\n",
    );
    let o = run_in(tmp.path(), &["check", "--format", "json", "."], &[]);
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let findings = v["findings"].as_array().unwrap();
    let typo: Vec<&Value> = findings
        .iter()
        .filter(|f| f["path"].as_str().unwrap().ends_with("typo/SKILL.md"))
        .collect();
    assert_eq!(typo.len(), 2, "{typo:?}");
    assert_eq!(
        (&typo[0]["severity"], &typo[0]["kind"], &typo[0]["line"]),
        (&"warning".into(), &"unknown-key".into(), &3.into()),
        "{typo:?}"
    );
    assert!(
        typo[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("(ignored): did you mean \"description\"? (line 3, column 13)"),
        "{typo:?}"
    );
    assert_eq!(
        (&typo[1]["severity"], &typo[1]["kind"]),
        (&"error".into(), &"skills-extension".into())
    );
    assert_eq!(v["counts"]["warnings"], 3);

    let problems = server_problems(tmp.path());
    let reasons: Vec<&str> = problems
        .iter()
        .map(|p| p["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "unknown-key",
            "unknown-key",
            "unknown-key",
            "skills-extension"
        ],
        "{problems:?}"
    );
    assert!(
        problems[2]["detail"]
            .as_str()
            .unwrap()
            .contains("did you mean \"description\"?"),
        "{problems:?}"
    );
}

// DISC-018 — `skill.md` and `Skill.md` are no SKILL.md, and the problem
// says that the name is case-sensitive, for a directory of skills and for
// a root meant as one skill; in the check and in the server's problems.
#[test]
fn a_skill_md_in_another_case_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let skills = tmp.path().join("skills-dir");
    write(
        &skills,
        "lower/skill.md",
        "---\nname: lower\ndescription: d\n---\n",
    );
    write(
        &skills,
        "upper/Skill.md",
        "---\nname: upper\ndescription: d\n---\n",
    );
    write(&skills, "plain/notes.md", "notes\n");
    let one = tmp.path().join("one");
    write(&one, "skill.md", "---\nname: one\ndescription: d\n---\n");
    let o = run_in(tmp.path(), &["check", "skills-dir", "one"], &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    for want in [
        "skills-dir/lower: error[no-skill-md]: no SKILL.md in this directory, so it is not a skill: it holds \"skill.md\", and the name is case-sensitive; rename it SKILL.md\n",
        "skills-dir/upper: error[no-skill-md]: no SKILL.md in this directory, so it is not a skill: it holds \"Skill.md\", and the name is case-sensitive; rename it SKILL.md\n",
        "skills-dir/plain: error[no-skill-md]: no SKILL.md in this directory, so it is not a skill: add a SKILL.md to it \
         if it is meant as a skill, or move it out of this folder of skills\n",
        "one: error[no-skill-md]: no SKILL.md in this root, so it is not a skill: it holds \"skill.md\", and the name is case-sensitive; rename it SKILL.md\n",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    let problems = server_problems(&skills);
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(
        problems[0]["detail"]
            .as_str()
            .unwrap()
            .contains("it holds \"skill.md\", and the name is case-sensitive"),
        "{problems:?}"
    );
    let problems = server_problems(&one);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["reason"], "no-skill-md");
    assert!(
        problems[0]["path"].as_str().unwrap().ends_with("/one"),
        "{problems:?}"
    );
}

// DISC-019 — a repository root with its skills in skills/ beside folders
// that are no skills: each of those says to point at skills/, hidden
// folders stay silent, and pointed at skills/ the tree passes. A root
// without skills/ gets no such hint.
#[test]
fn a_repository_root_points_at_its_skills() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    common::skill(&repo.join("skills"), "alpha");
    common::skill(&repo.join("skills"), "beta");
    write(&repo, "docs/guide.md", "# guide\n");
    write(&repo, ".github/workflows/ci.yml", "on: push\n");
    write(&repo, "README.md", "# repo\n");
    let hint = "; this root keeps its skills in skills/: point SKILLS_DIR at that directory to serve only them";
    let o = run_in(tmp.path(), &["check", "repo"], &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains(&format!(
            "repo/docs: error[no-skill-md]: no SKILL.md in this directory, so it is not a skill{hint}\n"
        )),
        "{out}"
    );
    assert!(!out.contains(".github"), "{out}");
    assert!(
        out.contains("check failed: 2 skills served; 1 error (no-skill-md), 0 warnings"),
        "{out}"
    );
    let problems = server_problems(&repo);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0]["detail"].as_str().unwrap().ends_with(hint),
        "{problems:?}"
    );

    let o = run_in(tmp.path(), &["check", "repo/skills"], &[]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));

    // No skills/ (or an empty one): nothing to point at.
    std::fs::remove_dir_all(repo.join("skills/alpha")).unwrap();
    std::fs::remove_dir_all(repo.join("skills/beta")).unwrap();
    common::skill(&repo, "gamma");
    let o = run_in(tmp.path(), &["check", "repo"], &[]);
    let out = stdout(&o);
    assert!(
        out.contains(
            "repo/docs: error[no-skill-md]: no SKILL.md in this directory, so it is not a skill: add a SKILL.md to \
             it if it is meant as a skill, or move it out of this folder of skills\n"
        ),
        "{out}"
    );
}

// CHECK-016 (issue 41 §4) — a mistaken command line is answered with its
// fix: a folder given as an argument says how to serve it and how to check
// it; a serving option given to `check` says it is one of serving; no tip
// of the argument library's that no command here takes ("use '-- --watch'").
#[test]
fn a_mistaken_command_line_is_answered_with_its_fix() {
    let tmp = tempfile::tempdir().unwrap();
    common::skill(tmp.path(), "ok");
    let dir = tmp.path().to_string_lossy().into_owned();
    let err = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let o = run(&[&dir]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(stdout(&o).is_empty());
    assert!(
        err(&o).contains(&format!("SKILLS_DIR={dir} skill-mcp"))
            && err(&o).contains(&format!("skill-mcp check {dir}")),
        "{}",
        err(&o)
    );
    for flag in ["--watch", "--http-allow-run"] {
        let o = run(&["check", flag, &dir]);
        assert_eq!(code(&o), 2, "{}", err(&o));
        assert!(
            err(&o).contains("applies to serving") && !err(&o).contains("use '--"),
            "{flag}: {}",
            err(&o)
        );
    }
    let o = run(&["check", "--strct", &dir]);
    assert_eq!(code(&o), 2);
    assert!(
        err(&o).contains("did you mean --strict") && !err(&o).contains("use '--"),
        "{}",
        err(&o)
    );
    let o = run(&["chek"]);
    assert_eq!(code(&o), 2);
    assert!(
        err(&o).contains("serve") && err(&o).contains("check"),
        "{}",
        err(&o)
    );
}

/// One tree as its author meets it (issue 41 §3): `check`'s text report
/// and JSON findings, `skill_list`'s `problems` through MCP, and the lines
/// the server logs to stderr at boot.
struct Seen {
    text: String,
    findings: Vec<Value>,
    problems: Vec<Value>,
    log: String,
}

/// `check` run in `cwd` over `roots` (relative to it), and the server
/// started with those roots as SKILLS_DIR.
fn seen(cwd: &Path, roots: &[&str]) -> Seen {
    let mut args = vec!["check"];
    args.extend(roots);
    let text = stdout(&run_in(cwd, &args, &[]));
    let mut args = vec!["check", "--format", "json"];
    args.extend(roots);
    let report: Value = serde_json::from_str(&stdout(&run_in(cwd, &args, &[]))).unwrap();
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let dirs: Vec<String> = roots
        .iter()
        .map(|r| cwd.join(r).to_string_lossy().into_owned())
        .collect();
    let log_file = tempfile::NamedTempFile::new().unwrap();
    let mut s = common::Session::start_logging(
        Command::new(BIN),
        &[("SKILLS_DIR", &dirs.join(":"))],
        log_file.reopen().unwrap().into(),
    );
    let list = s.tool("skill_list", serde_json::json!({}));
    assert!(s.finish().success());
    Seen {
        text,
        findings,
        problems: list["problems"].as_array().cloned().unwrap_or_default(),
        log: std::fs::read_to_string(log_file.path()).unwrap(),
    }
}

impl Seen {
    /// Each of the four says `detail` (which ends with its position) about
    /// `path` (absolute; `shown` as the text report shows it) at
    /// `line:column`, as the one `reason` entry there is, an error.
    fn says_once(
        &self,
        reason: &str,
        path: &Path,
        shown: &str,
        at: Option<(u64, u64)>,
        detail: &str,
    ) {
        self.says_once_as("error", reason, path, shown, at, detail);
    }

    /// [`Seen::says_once`], the check's finding of `severity`.
    fn says_once_as(
        &self,
        severity: &str,
        reason: &str,
        path: &Path,
        shown: &str,
        at: Option<(u64, u64)>,
        detail: &str,
    ) {
        let path = path.to_str().unwrap();
        let about: Vec<&Value> = self.problems.iter().filter(|p| p["path"] == path).collect();
        assert_eq!(
            about.len(),
            1,
            "one problem for {path}: {:#?}",
            self.problems
        );
        let p = about[0];
        assert_eq!(p["reason"], reason, "{p:#}");
        assert_eq!(p["detail"], detail, "{p:#}");
        assert_eq!(
            (p["line"].as_u64(), p["column"].as_u64()),
            at.map_or((None, None), |(l, c)| (Some(l), Some(c))),
            "{p:#}"
        );
        let about: Vec<&Value> = self.findings.iter().filter(|f| f["path"] == path).collect();
        assert_eq!(
            about.len(),
            1,
            "one finding for {path}: {:#?}",
            self.findings
        );
        let f = about[0];
        assert_eq!(
            (
                &f["severity"],
                &f["kind"],
                &f["message"],
                &f["line"],
                &f["column"]
            ),
            (
                &severity.into(),
                &reason.into(),
                &detail.into(),
                &p["line"],
                &p["column"]
            ),
            "{f:#}"
        );
        // The text report leads with the place and says the rest once.
        let heading = match at {
            Some((l, c)) => format!(
                "{shown}:{l}:{c}: {severity}[{reason}]: {}\n",
                detail
                    .strip_suffix(&format!(" (line {l}, column {c})"))
                    .unwrap()
            ),
            None => format!("{shown}: {severity}[{reason}]: {detail}\n"),
        };
        assert!(
            self.text.contains(&heading),
            "missing {heading:?} in\n{}",
            self.text
        );
        assert_eq!(
            self.text.matches(&format!("{shown}:")).count(),
            1,
            "{}",
            self.text
        );
        // The log says it in the same words, once.
        let logged = format!("{reason}: {path}: {detail}\n");
        assert_eq!(
            self.log.matches(&logged).count(),
            1,
            "{logged:?} in\n{}",
            self.log
        );
        assert_eq!(
            self.log.matches(&format!(": {path}: ")).count(),
            1,
            "{}",
            self.log
        );
    }
}

// FM-005 (issue 41 §3) — a description holding an unquoted ": " is refused
// with the parser's position, and the message says what is wrong in the
// author's words and the line to write instead; the check shows the line
// with a caret under the colon.
#[test]
fn a_colon_in_a_description_says_to_quote_the_value() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    write(
        &cwd,
        "skills/forms/SKILL.md",
        "---\nname: forms\ndescription: Fill PDF forms. Use when: the user has a form\n---\nbody\n",
    );
    let s = seen(&cwd, &["skills"]);
    let detail = "SKILL.md frontmatter is not valid YAML: the value of \"description\" holds \": \" (a colon and \
                  a space), which an unquoted value cannot: YAML reads it as the start of another key; quote the \
                  value: description: \"Fill PDF forms. Use when: the user has a form\" (line 3, column 38)";
    s.says_once(
        "malformed-frontmatter",
        &cwd.join("skills/forms/SKILL.md"),
        "skills/forms/SKILL.md",
        Some((3, 38)),
        detail,
    );
    assert!(
        s.text.contains(
            "3 | description: Fill PDF forms. Use when: the user has a form\n  |                                      ^\n"
        ),
        "{}",
        s.text
    );
}

// DISC-002, SKX-006 (issue 41 §3) — a folder named unlike its skill is one
// report at the `name:` value, with both fixes, and the Skills extension's
// consequence is part of it, not a second `skills-extension` problem.
#[test]
fn a_folder_named_unlike_its_skill_is_one_report_with_its_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    write(
        &cwd,
        "skills/postgresql/SKILL.md",
        "---\nname: postgresql-table-design\ndescription: Designs tables.\n---\nbody\n",
    );
    let s = seen(&cwd, &["skills"]);
    let detail = "the frontmatter says name \"postgresql-table-design\", but the folder is \"postgresql\", and a skill \
                  is served under its folder's name: it is served as \"postgresql\" (the name skill_load and a grant \
                  use); make the two agree: change this line to name: postgresql, or rename the folder to \
                  \"postgresql-table-design\"; this is also why the MCP Skills extension (SEP-2640) leaves it out of \
                  skills/list and skills/get (line 2, column 7)";
    s.says_once(
        "name-mismatch",
        &cwd.join("skills/postgresql/SKILL.md"),
        "skills/postgresql/SKILL.md",
        Some((2, 7)),
        detail,
    );
    assert!(!s.text.contains("skills-extension"), "{}", s.text);
    // Served, and still failing the check: the summary says which skill
    // and which error.
    assert!(
        s.text.contains(
            "check failed: 1 skill served (1 with errors: postgresql); 1 error (name-mismatch), 0 warnings"
        ),
        "{}",
        s.text
    );
}

// SKX-006 (issue 41 §3) — a skill with no description is told to add one,
// at the line that closes its frontmatter, and why it matters.
#[test]
fn a_missing_description_says_to_add_one_and_where() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    write(
        &cwd,
        "skills/notes/SKILL.md",
        "---\nname: notes\nlicense: MIT\n---\nbody\n",
    );
    let s = seen(&cwd, &["skills"]);
    let detail = "no \"description\" in the frontmatter: add a line description: <what the skill does, and when to \
                  use it> before the closing \"---\"; until then the MCP Skills extension (SEP-2640) leaves it out of \
                  skills/list and skills/get (the tools, prompts and resources still serve it) (line 4, column 1)";
    s.says_once(
        "skills-extension",
        &cwd.join("skills/notes/SKILL.md"),
        "skills/notes/SKILL.md",
        Some((4, 1)),
        detail,
    );
    assert!(s.text.contains("4 | ---\n  | ^\n"), "{}", s.text);
    // The Agent Skills warning would say the same again (CHECK-014).
    assert!(
        !s.text.contains("warning[agentskills-description]"),
        "{}",
        s.text
    );
}

// DISC-005 (issue 41 §3) — two roots that share a name (as K-Dense and
// anthropics/skills share pdf): neither is served, and the name is one
// report, at the first folder, listing both and saying to rename one or
// drop a root.
#[test]
fn a_name_two_roots_share_is_one_report_listing_both() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    common::skill(&cwd.join("kdense"), "pdf");
    common::skill(&cwd.join("anthropics"), "pdf");
    common::skill(&cwd.join("anthropics"), "docx");
    let s = seen(&cwd, &["kdense", "anthropics"]);
    let (a, b) = (cwd.join("kdense"), cwd.join("anthropics"));
    let detail = format!(
        "the skill name \"pdf\" comes from 2 folders, {}/pdf and {}/pdf, so neither is served: a grant names a \
         skill, and no scan order may choose between them; rename one of them (the folder, and the name: in its \
         SKILL.md), or drop one of the roots {} and {}",
        a.display(),
        b.display(),
        a.display(),
        b.display()
    );
    s.says_once(
        "duplicate-name",
        &a.join("pdf"),
        "kdense/pdf",
        None,
        &detail,
    );
    // Nothing is said at the second folder: the one report names it.
    let second = b.join("pdf");
    assert!(
        s.problems
            .iter()
            .all(|p| p["path"] != second.to_str().unwrap()),
        "{:#?}",
        s.problems
    );
    assert!(!s.text.contains("anthropics/pdf:"), "{}", s.text);
    assert!(s.text.contains("served docx: "), "{}", s.text);
}

// CHECK-015 — skills that were all refused are said by their refusals, not
// contradicted by "no skill was found" (found with two roots sharing a name).
#[test]
fn skills_all_refused_are_not_said_to_be_missing() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    common::skill(a.path(), "pdf");
    common::skill(b.path(), "pdf");
    let roots = format!("{}:{}", a.path().display(), b.path().display());
    let o = run_in(a.path(), &["check"], &[("SKILLS_DIR", &roots)]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(out.contains("error[duplicate-name]"), "{out}");
    assert!(!out.contains("no-skills"), "{out}");
}

// CONF-002, CONF-004, CONF-009 (found by a newcomer, issue 41): a blank
// SKILLS_DIR serving the bundled skills is said as a `setting` problem; an
// unreadable relative root says what it was read as; a quoted `~` given
// to check says it is not expanded, as SKILLS_DIR's does.
#[test]
fn roots_written_as_a_newcomer_writes_them_say_what_they_were_read_as() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_in(tmp.path(), &["check"], &[("SKILLS_DIR", " ")]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains("error[setting]") && out.contains("SKILLS_DIR is set but empty"),
        "{out}"
    );
    let o = run_in(tmp.path(), &["check"], &[("SKILLS_DIR", "myskills/here")]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains("root-unreadable")
            && out.contains("a relative path")
            && out.contains("write the path out in full"),
        "{out}"
    );
    let o = run_in(
        tmp.path(),
        &["check", "~/skills-nowhere"],
        &[("HOME", "/home/me")],
    );
    let out = stdout(&o);
    assert!(
        out.contains("`~` is not expanded") && out.contains("/home/me/skills-nowhere"),
        "{out}"
    );
    let err = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let o = run(&["serve", "/tmp/my-skills"]);
    assert_eq!(code(&o), 2);
    assert!(
        err(&o).contains("SKILLS_DIR=/tmp/my-skills skill-mcp"),
        "{}",
        err(&o)
    );
}

// DECL-003 (issue 41 §3) — an `mcp-host:` block with no `version:` is one
// report at the block's first key, where the line goes, saying to add it.
#[test]
fn a_block_with_no_version_says_to_add_it_and_where() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    write(
        &cwd,
        "skills/typo-script/SKILL.md",
        "---\nname: typo-script\ndescription: Runs a script.\nmcp-host:\n  run:\n    - script: scripts/run.js\n      interpreter: node\n---\nbody\n",
    );
    write(&cwd, "skills/typo-script/scripts/run.js", "1\n");
    let s = seen(&cwd, &["skills"]);
    s.says_once(
        "declaration",
        &cwd.join("skills/typo-script/SKILL.md"),
        "skills/typo-script/SKILL.md",
        Some((5, 3)),
        "\"mcp-host\" has no \"version\", so the block is ignored and the skill has no scripts: add the line \
         version: 1 under mcp-host:, indented as the keys below it are (line 5, column 3)",
    );
    assert!(s.text.contains("5 |   run:\n  |   ^\n"), "{}", s.text);
}

// DISC-010 (issue 41 §3) — a typo in a declared script's path is one
// report at its `script:` line, naming the skill's own file it likely
// means, said once (it said "not a regular file in this skill: it is not a
// file in this skill", with no line).
#[test]
fn a_typo_in_a_script_path_names_the_file_it_means() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    write(
        &cwd,
        "skills/runner/SKILL.md",
        "---\nname: runner\ndescription: Runs a script.\nmcp-host:\n  version: 1\n  run:\n    - script: script/run.js\n      interpreter: node\n---\nbody\n",
    );
    write(&cwd, "skills/runner/scripts/run.js", "1\n");
    let s = seen(&cwd, &["skills"]);
    s.says_once(
        "declared-script-missing",
        &cwd.join("skills/runner/SKILL.md"),
        "skills/runner/SKILL.md",
        Some((7, 15)),
        "\"mcp-host.run[0]\" declares \"script/run.js\", which is not a file in this skill, so it can never run: \
         did you mean \"scripts/run.js\"? change this line to script: scripts/run.js (line 7, column 15)",
    );
    assert!(
        s.text
            .contains("7 |     - script: script/run.js\n  |               ^\n"),
        "{}",
        s.text
    );
}

// RUN-007 (issue 41 §3) — a python3 script in a default build is
// unavailable, a fact of the deployment (no problem, the check passes),
// and its reason says which build runs it, or to use node.
#[cfg(not(feature = "python3"))]
#[test]
fn a_python3_script_says_which_build_runs_it() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    write(
        &cwd,
        "skills/py/SKILL.md",
        "---\nname: py\ndescription: Runs a Python script.\nmcp-host:\n  version: 1\n  run:\n    - script: tool.py\n      interpreter: python3\n---\nbody\n",
    );
    write(&cwd, "skills/py/tool.py", "print(1)\n");
    let s = seen(&cwd, &["skills"]);
    let reason = "declares the interpreter \"python3\"; this deployment runs: node; a build with --features python3 \
                  runs python3 scripts (cargo install --features python3, or the Nix package with-python); or declare \
                  interpreter: node for a script node can run";
    assert!(
        s.text.contains("served py: 2 files, ")
            && s.text
                .contains(&format!("unavailable: tool.py ({reason})\n")),
        "{}",
        s.text
    );
    assert!(
        s.problems.is_empty() && s.findings.is_empty(),
        "{:?}",
        s.problems
    );
    assert!(
        s.text
            .contains("check passed: 1 skill served; 0 errors, 0 warnings"),
        "{}",
        s.text
    );
    let o = run_in(&cwd, &["check", "--format", "json", "skills"], &[]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["skills"][0]["unavailableScripts"][0]["reason"], reason);
}

// DECL-001, CHECK-004 (issue 41 §3) — a timeout over the ceiling is served
// at the ceiling: one `timeout-clamped` report at the value, with the fix,
// a warning in the check, which passes (it failed the check as an error).
#[test]
fn a_timeout_over_the_ceiling_is_a_warning_with_its_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    write(
        &cwd,
        "skills/slow/SKILL.md",
        "---\nname: slow\ndescription: Runs a slow script.\nmcp-host:\n  version: 1\n  run:\n    - script: run.js\n      interpreter: node\n      timeout: 600\n---\nbody\n",
    );
    write(&cwd, "skills/slow/run.js", "1\n");
    let s = seen(&cwd, &["skills"]);
    s.says_once_as(
        "warning",
        "timeout-clamped",
        &cwd.join("skills/slow/SKILL.md"),
        "skills/slow/SKILL.md",
        Some((9, 16)),
        "\"mcp-host.run[0]\" asks for a 600s timeout, over the 300s ceiling, so it is clamped: the script runs \
         with 300s; set timeout: 300 or less (line 9, column 16)",
    );
    assert!(
        s.text
            .contains("served slow: 2 files, 153 B; runnable: run.js\n"),
        "{}",
        s.text
    );
    assert!(
        s.text
            .contains("check passed: 1 skill served; 0 errors, 1 warning\n"),
        "{}",
        s.text
    );
    let o = run_in(&cwd, &["check", "skills"], &[]);
    assert_eq!(code(&o), 0);
    let o = run_in(&cwd, &["check", "--strict", "skills"], &[]);
    assert_eq!(code(&o), 1);
}

// FM-001..FM-006 (issue 41 §3) — frontmatter mistakes, each one report at
// the line to edit, with what to write: never closed, a first line that
// is not "---", a value starting with "*", a quote never closed, an empty
// frontmatter, and a SKILL.md that is not UTF-8.
#[test]
fn frontmatter_mistakes_say_where_and_what_to_write() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    // (folder, SKILL.md, line and column, reason, detail)
    type Case<'a> = (&'a str, &'a [u8], (u64, u64), &'a str, &'a str);
    let cases: &[Case] = &[
        (
            "unclosed",
            b"---\nname: unclosed\ndescription: d\n\n# Unclosed\n",
            (1, 1),
            "malformed-frontmatter",
            "SKILL.md frontmatter is never closed by a \"---\" line: the \"---\" on line 1 opens it and no line of \
             exactly \"---\" follows; add one after the frontmatter's last line, before the instructions",
        ),
        (
            "dashes",
            b"---\nname: dashes\ndescription: d\n----\n# Dashes\n",
            (4, 1),
            "malformed-frontmatter",
            "SKILL.md frontmatter is never closed by a \"---\" line: this line is \"----\", and only a line of exactly \
             \"---\" closes it; make it \"---\"",
        ),
        (
            "heading",
            b"# Heading\n\nname: heading\n",
            (1, 1),
            "malformed-frontmatter",
            "SKILL.md does not begin with a \"---\" frontmatter line: start the file with a line \"---\", then name: \
             <the folder's name> and description: <what the skill does, and when to use it>, then a line \"---\", \
             then the instructions",
        ),
        (
            "star",
            b"---\nname: star\ndescription: *Bold* forms\n---\n",
            (3, 14),
            "malformed-frontmatter",
            "SKILL.md frontmatter is not valid YAML: the value of \"description\" starts with \"*\", which YAML reads \
             as an alias (a reference to an anchor), not as text; quote the value: description: \"*Bold* forms\"",
        ),
        (
            "quote",
            b"---\nname: quote\ndescription: \"Fills forms\nlicense: MIT\n---\n",
            (3, 14),
            "malformed-frontmatter",
            "SKILL.md frontmatter is not valid YAML: the value of \"description\" opens a quote (\") that is never \
             closed; close it at the end of the value: description: \"Fills forms\"",
        ),
        (
            "empty",
            b"---\n---\nbody\n",
            (2, 1),
            "malformed-frontmatter",
            "SKILL.md frontmatter is empty, so it is not a mapping: add the lines name: <the folder's name> and \
             description: <what the skill does, and when to use it> between the two \"---\" lines",
        ),
        (
            "latin",
            b"---\nname: latin\ndescription: caf\xe9\n---\n",
            (3, 17),
            "unreadable-skill-md",
            "SKILL.md is not valid UTF-8 (first bad byte at offset 32), so the skill is not served: save the file as \
             UTF-8 (a Latin-1 file converts with iconv -f latin1 -t utf-8)",
        ),
    ];
    for (name, text, _, _, _) in cases {
        let dir = cwd.join("skills").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), text).unwrap();
    }
    let s = seen(&cwd, &["skills"]);
    for (name, _, (l, c), reason, detail) in cases {
        s.says_once(
            reason,
            &cwd.join(format!("skills/{name}/SKILL.md")),
            &format!("skills/{name}/SKILL.md"),
            Some((*l, *c)),
            &format!("{detail} (line {l}, column {c})"),
        );
    }
    // Each was refused, and the summary says so.
    assert!(
        s.text.contains(
            "check failed: 0 skills served; 7 skills refused (dashes, empty, heading, latin, quote, and 2 more); \
             7 errors (6 malformed-frontmatter, 1 unreadable-skill-md), 0 warnings\n"
        ),
        "{}",
        s.text
    );
}

// CHECK-002, CHECK-004 (issue 41 §3) — the summary says which skills are
// served, which of them fail the check, and which were refused: a skill
// served under its folder's name with a mismatched name: fails as surely
// as one whose YAML is refused, and both are named.
#[test]
fn the_summary_names_the_skills_that_failed_and_the_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(tmp.path()).unwrap();
    write(
        &cwd,
        "skills/postgresql/SKILL.md",
        "---\nname: postgresql-table-design\ndescription: d\n---\n",
    );
    write(
        &cwd,
        "skills/broken/SKILL.md",
        "---\nname: broken\ndescription: \"d\n---\n",
    );
    write(
        &cwd,
        "skills/fine/SKILL.md",
        "---\nname: fine\ndescription: d\n---\n",
    );
    let o = run_in(&cwd, &["check", "skills"], &[]);
    let out = stdout(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.ends_with(
            "\ncheck failed: 2 skills served (1 with errors: postgresql); 1 skill refused (broken); 2 errors \
             (1 malformed-frontmatter, 1 name-mismatch), 0 warnings\n"
        ),
        "{out}"
    );
    let o = run_in(&cwd, &["check", "--format", "json", "skills"], &[]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["failing"], serde_json::json!(["postgresql"]));
    assert_eq!(
        v["refused"],
        serde_json::json!([{
            "name": "broken",
            "path": cwd.join("skills/broken/SKILL.md").to_str().unwrap(),
            "kind": "malformed-frontmatter"
        }])
    );
}

mod check_dir_reads_like_skills_dir {
    //! Newcomer attack (issue 30 §1/§3, CHECK-*): `skill-mcp check --help`
    //! says each DIR is "read as SKILLS_DIR would read it", and the natural
    //! way to check what one configured is `skill-mcp check "$SKILLS_DIR"`.
    //! SKILLS_DIR splits on `:`; a DIR does not, so a two-folder SKILLS_DIR
    //! that serves every skill fails `check` with `root-unreadable` on the
    //! joined path and "no skill was found", with no word about the `:`.
    //! Either the DIR is read as SKILLS_DIR is (split), or the error says the
    //! path holds a `:` and that folders are given as separate arguments.

    use std::process::Command;

    use serde_json::Value;

    const BIN: &str = env!("CARGO_BIN_EXE_skill-mcp");

    fn skill(dir: &std::path::Path, name: &str) {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(
            dir.join(name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n---\nbody\n"),
        )
        .unwrap();
    }

    fn check(args: &[&str], env: &[(&str, &str)]) -> Value {
        let mut cmd = Command::new(BIN);
        cmd.env_clear()
            .args(["check", "--format", "json"])
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap()
    }

    #[test]
    fn check_of_a_skills_dir_value_agrees_with_the_server_or_says_why_not() {
        let one = tempfile::tempdir().unwrap();
        let two = tempfile::tempdir().unwrap();
        skill(one.path(), "alpha");
        skill(two.path(), "beta");
        let value = format!("{}:{}", one.path().display(), two.path().display());
        // What the server would serve: both skills.
        let served = check(&[], &[("SKILLS_DIR", &value)]);
        assert_eq!(served["counts"]["skills"], 2, "{served}");
        assert_eq!(served["passed"], true, "{served}");
        // The same value given as DIR.
        let given = check(&[&value], &[]);
        if given["passed"] == true {
            assert_eq!(given["counts"]["skills"], 2, "{given}");
            return;
        }
        let said: Vec<&str> = given["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["message"].as_str())
            .collect();
        assert!(
            said.iter()
                .any(|m| m.contains("separate") || m.contains("`:`") || m.contains("\":\"")),
            "check \"$SKILLS_DIR\" fails while the server serves every skill, and nothing mentions the `:`: {said:?}"
        );
    }
}
