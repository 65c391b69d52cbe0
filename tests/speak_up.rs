//! Mistakes speak up (issue 30 §2; spec SRV-010, LIST-016, CONF-009): a
//! root that cannot be read, or a skill that cannot be served, is said on
//! stderr — by default, one line each, bounded — and a root that cannot be
//! read is named in the `initialize` instructions, with the `~` that no
//! shell expanded pointed out. Through the built binary, as a client
//! starts it.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{BIN, Session, skill};
use serde_json::{Value, json};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// One session as a client runs it: the handshake, then `skill_list`, then
/// end of input. Started in `cwd` with exactly `env` (plus PATH), the log
/// filter left at its default. The instructions, `skill_list`'s problems,
/// and every line written to stderr.
fn session(cwd: &Path, env: &[(&str, &str)]) -> (String, Vec<Value>, Vec<String>) {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INIT}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"skill_list","arguments":{{}}}}}}"#
    )
    .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    // SRV-006: the log lines went to stderr; stdout is JSON-RPC alone.
    let replies: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {l}"))
        })
        .collect();
    let reply = |id: u64| {
        replies
            .iter()
            .find(|r| r["id"] == json!(id))
            .unwrap_or_else(|| panic!("no reply {id}: {replies:?}"))
    };
    let instructions = reply(1)["result"]["instructions"]
        .as_str()
        .unwrap()
        .to_owned();
    let problems = reply(2)["result"]["structuredContent"]["problems"]
        .as_array()
        .unwrap()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::to_owned)
        .collect();
    (instructions, problems, stderr)
}

/// The warn lines among `stderr`.
fn warnings(stderr: &[String]) -> Vec<&String> {
    stderr.iter().filter(|l| l.contains(" WARN ")).collect()
}

#[test]
fn a_missing_root_is_said_on_stderr_and_in_the_handshake() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nonexistent");
    let missing = missing.to_str().unwrap();
    let (instructions, problems, stderr) = session(tmp.path(), &[("SKILLS_DIR", missing)]);
    assert_eq!(problems.len(), 1, "{problems:?}");
    // LIST-016: the path and the reason, where the model reads first,
    // and what to do about it.
    let said = format!(
        "Serves 0 Agent Skills: {missing} could not be read: No such file or directory (os error 2); no such \
         folder: correct the path, or create the folder. Tell the user, who can correct the path in this server's \
         configuration"
    );
    assert!(instructions.starts_with(&said), "{instructions}");
    // LIST-009: with nothing served, the model is not sent to call tools
    // on skills that are not there.
    assert!(
        !instructions.contains("Call skill_list to see them")
            && instructions.contains("skill_list's problems say what could not be served"),
        "{instructions}"
    );
    // SRV-010: one warn line, shown by default, with its reason and path.
    let warned = warnings(&stderr);
    assert_eq!(warned.len(), 1, "{stderr:?}");
    assert!(
        warned[0].ends_with(&format!(
            "root-unreadable: {missing}: this root could not be read: No such file or directory (os error 2); no \
             such folder: correct the path, or create the folder"
        )),
        "{stderr:?}"
    );
}

#[test]
fn a_root_written_with_a_tilde_says_the_tilde_is_not_expanded() {
    let tmp = tempfile::tempdir().unwrap();
    let (instructions, problems, stderr) = session(
        tmp.path(),
        &[("SKILLS_DIR", "~/skills"), ("HOME", "/home/someone")],
    );
    let hint = "it was written \"~/skills\", and `~` is not expanded here (no shell reads this setting, \
                so `~` is taken as a directory's name): write the path out in full, /home/someone/skills";
    // CONF-006: taken as written, relative to the working directory.
    let root = tmp.path().canonicalize().unwrap().join("~/skills");
    let root = root.to_str().unwrap();
    assert_eq!(problems[0]["reason"], "root-unreadable", "{problems:?}");
    assert!(
        problems[0]["detail"].as_str().unwrap().ends_with(hint),
        "{problems:?}"
    );
    assert!(
        instructions.starts_with(&format!(
            "Serves 0 Agent Skills: {root} could not be read: No such file or directory (os error 2); {hint}. Tell the user"
        )),
        "{instructions}"
    );
    let warned = warnings(&stderr);
    assert_eq!(warned.len(), 1, "{stderr:?}");
    assert!(warned[0].ends_with(hint), "{stderr:?}");

    // A root that is read is not hinted at, whatever its name.
    std::fs::create_dir_all(tmp.path().join("~/skills")).unwrap();
    skill(&tmp.path().join("~/skills"), "alpha");
    let (instructions, problems, stderr) = session(tmp.path(), &[("SKILLS_DIR", "~/skills")]);
    assert!(problems.is_empty(), "{problems:?}");
    assert!(
        instructions.starts_with("Serves 1 Agent Skill. Call skill_list"),
        "{instructions}"
    );
    assert!(warnings(&stderr).is_empty(), "{stderr:?}");
}

#[test]
fn a_broken_skill_is_one_warn_line_naming_it_and_the_handshake_stays_plain() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    skill(&root, "good");
    std::fs::create_dir(root.join("broken")).unwrap();
    // A block never closed: it does not split (FM-*).
    std::fs::write(root.join("broken/SKILL.md"), "---\nname: broken\n").unwrap();
    let (instructions, problems, stderr) =
        session(&root, &[("SKILLS_DIR", root.to_str().unwrap())]);
    assert_eq!(problems.len(), 1, "{problems:?}");
    let warned = warnings(&stderr);
    assert_eq!(warned.len(), 1, "{stderr:?}");
    let path = problems[0]["path"].as_str().unwrap();
    assert!(path.contains("broken"), "{problems:?}");
    assert!(
        warned[0].ends_with(&format!(
            "{}: {path}: {}",
            problems[0]["reason"].as_str().unwrap(),
            problems[0]["detail"].as_str().unwrap()
        )),
        "{stderr:?}"
    );
    // Every root was read: the handshake has nothing to tell the user.
    assert!(
        instructions.starts_with("Serves 1 Agent Skill. Call skill_list"),
        "{instructions}"
    );
    // `check` reports the same problem itself, so it does not log it too.
    let out = Command::new(BIN)
        .env_clear()
        .arg("check")
        .arg(&root)
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains(" WARN "),
        "{out:?}"
    );
}

#[test]
fn ten_thousand_broken_skills_log_fifty_lines_and_a_count() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    // Directories without SKILL.md: 10,000 `no-skill-md` problems.
    for i in 0..10_000 {
        std::fs::create_dir(root.join(format!("d{i:05}"))).unwrap();
    }
    let (instructions, _, stderr) = session(&root, &[("SKILLS_DIR", root.to_str().unwrap())]);
    let warned = warnings(&stderr);
    assert_eq!(warned.len(), 51, "{stderr:?}");
    for (i, line) in warned[..50].iter().enumerate() {
        assert!(
            line.contains(&format!(
                "no-skill-md: {}: ",
                root.join(format!("d{i:05}")).display()
            )),
            "{line}"
        );
    }
    assert!(
        warned[50].ends_with("… and 9950 more problems: skill_list's \"problems\" lists every one"),
        "{}",
        warned[50]
    );
    assert!(
        instructions.starts_with("Serves 0 Agent Skills. "),
        "{instructions}"
    );
}

#[test]
fn a_reload_logs_only_the_problems_it_adds() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let root = root.canonicalize().unwrap();
    skill(&root, "good");
    std::fs::create_dir(root.join("first")).unwrap();
    let log = tmp.path().join("stderr.log");
    let mut s = Session::start_logging(
        Command::new(BIN),
        &[("SKILLS_DIR", root.to_str().unwrap())],
        std::fs::File::create(&log).unwrap().into(),
    );
    std::fs::create_dir(root.join("second")).unwrap();
    s.rescan_after_hangup(1);
    // One more rescan that adds nothing new to say.
    skill(&root, "other");
    s.rescan_after_hangup(2);
    assert!(s.finish().success());
    let stderr: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let warned = warnings(&stderr);
    let about = |name: &str| {
        warned
            .iter()
            .filter(|l| l.contains(&format!("no-skill-md: {}: ", root.join(name).display())))
            .count()
    };
    // Said once at boot, never again; the reload's own problem said once.
    assert_eq!((about("first"), about("second")), (1, 1), "{stderr:?}");
    assert_eq!(warned.len(), 2, "{stderr:?}");
}

/// LOAD-004 (found by a newcomer, issue 41): a skill whose SKILL.md was
/// refused, asked for by its folder's name, is said to be refused and why,
/// not "no skill named …" as if it did not exist.
#[test]
fn a_refused_skill_asked_for_by_name_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    skill(tmp.path(), "ok");
    let bad = tmp.path().join("sql-format");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("SKILL.md"),
        "---\nname: sql-format\ndescription: Formats SQL. Use it when: the user asks\n---\nbody\n",
    )
    .unwrap();
    let dir = tmp.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let r = s.request(
        "tools/call",
        json!({"name": "skill_load", "arguments": {"name": "sql-format"}}),
    );
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        text.contains("was refused")
            && text.contains("malformed-frontmatter")
            && text.contains("sql-format"),
        "{text}"
    );
    let other = s.request(
        "tools/call",
        json!({"name": "skill_load", "arguments": {"name": "nothere"}}),
    );
    let text = other["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("This server serves: ok"), "{text}");
    s.finish();
}
