//! Mistakes speak up (issue 30 §2; spec SRV-010, LIST-016, CONF-009): a
//! root that cannot be read, or a skill that cannot be served, is said on
//! stderr — by default, one line each, bounded — and a root that cannot be
//! read is named in the `initialize` instructions, with the `~` that no
//! shell expanded pointed out. Through the built binary, as a client
//! starts it.

use crate::common;
use common::{BIN, Session, skill};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// Finding 6 (SRV-010, RELOAD-003). Problems are logged through the one
/// escaping rule (`\n`, `\u{1b}` escaped, one line), but a refused
/// rescan's line is logged raw (`tracing::warn!("{why}")` in
/// src/reload.rs): a root whose name holds a newline, once unreadable,
/// writes a forged second log line ("  INFO … all skills served") to
/// whoever reads stderr. (The escape itself is neutralized by the log
/// formatter; the newline is not.)
///
/// Issues 27 and 30: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_refused_rescan_is_one_escaped_line_whatever_the_root_is_called() {
    let base = tempfile::tempdir().unwrap();
    let root = base
        .path()
        .join("r\n  INFO skill_mcp forged \u{1b}[32mall skills served");
    std::fs::create_dir_all(&root).unwrap();
    skill(&root, "a");
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut s = Session::start_logging(
        Command::new(BIN),
        &[("SKILLS_DIR", root.to_str().unwrap())],
        Stdio::from(log.reopen().unwrap()),
    );
    s.tool("skill_list", json!({}));
    std::fs::rename(&root, base.path().join("gone")).unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.pid() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    let t = Instant::now();
    let stderr = loop {
        let text = std::fs::read_to_string(log.path()).unwrap();
        if text.contains("was not swapped in") || t.elapsed() > Duration::from_secs(10) {
            break text;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        stderr.contains("was not swapped in"),
        "no refusal logged:\n{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains("\n  INFO skill_mcp forged"),
        "the refusal line is logged raw:\n{stderr}"
    );
}

/// Finding 7 (SRV-010, low). The log's escaping takes only `Cc` controls:
/// a bidirectional override (U+202E) in a directory's name reaches the
/// terminal as it is, and reorders the rest of the line it is shown on
/// ("Trojan Source"). `skill-mcp check` neutralizes the same characters
/// (CHECK-006); the serving log does not.
///
/// Issues 27 and 30: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_bidirectional_override_in_a_path_is_not_logged_raw() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "a");
    std::fs::create_dir_all(root.path().join("notes\u{202e}dm.LLIKS")).unwrap();
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut s = Session::start_logging(
        Command::new(BIN),
        &[("SKILLS_DIR", root.path().to_str().unwrap())],
        Stdio::from(log.reopen().unwrap()),
    );
    let all = s.tool("skill_list", json!({}));
    assert_eq!(all["problems"].as_array().unwrap().len(), 1, "{all}");
    drop(s);
    let stderr = std::fs::read_to_string(log.path()).unwrap();
    assert!(stderr.contains("no-skill-md"), "{stderr}");
    assert!(
        !stderr.contains('\u{202e}'),
        "a right-to-left override is logged raw:\n{stderr:?}"
    );
}

mod client_errors_stay_off_the_problems_log {
    //! Newcomer attack (issue 30 §2, SRV-010): stderr at its default level is
    //! where a mistyped folder or a broken skill speaks up, one bounded line
    //! each. But every JSON-RPC error answer is also logged there at warn
    //! level (rmcp's own "response error" line), so:
    //! - Claude Code (2.1.x) probes `subscriptions/listen` on every connection
    //!   and each start of the server writes a WARN that is no problem of the
    //!   user's (Claude Code files server stderr under "error" in its MCP log);
    //! - any client writes as many WARN lines as it sends bad requests, with
    //!   no bound, beside the 50-line bound SRV-010 keeps for problems.
    //!
    //! A client's mistake is answered to the client; it is not the owner's
    //! problem (at most an info line, like the transport's own refusals).

    #[allow(unused_imports)]
    use crate::common;

    use std::process::Command;

    use crate::common::BIN;

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

    #[test]
    fn a_clients_unknown_method_is_no_warning_on_stderr() {
        let tmp = tempfile::tempdir().unwrap();
        common::skill(tmp.path(), "good");
        let mut lines = vec![
            INIT.to_owned(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            // What Claude Code sends on connecting.
            r#"{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{}}"#.to_owned(),
        ];
        // A client that keeps sending what the server does not serve.
        for id in 3..203 {
            lines.push(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"no/such/method","params":{{}}}}"#
            ));
        }
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let out = common::run_lines(
            Command::new(BIN),
            &[("SKILLS_DIR", tmp.path().to_str().unwrap())],
            &lines,
        );
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout.lines().count(), 202, "every request is answered");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warned: Vec<&str> = stderr.lines().filter(|l| l.contains(" WARN ")).collect();
        assert!(
            warned.is_empty(),
            "{} WARN lines for a client's requests, none of them a problem of the owner's; first: {:?}",
            warned.len(),
            warned.first()
        );
    }
}

mod mistyped_settings_speak_up {
    //! Newcomer attack (issue 30 §2, "mistakes speak up"; SRV-010): a mistyped
    //! *setting* is as silent as a mistyped folder was.
    //! - `SKILL_MCP_LOG=warning` (or `verbose`) — a natural slip for the
    //!   README's `warn`/`debug` — is a valid EnvFilter naming a *target*, so
    //!   every other line is filtered out: the problems log SRV-010 added
    //!   disappears, and a mistyped folder is silent again.
    //! - `SKILL_MCP_WATCH=yes` (or `on`) is read as off, with no word, while
    //!   `SKILL_MCP_ANSWER_BUDGET=abc` is a `setting` problem.

    #[allow(unused_imports)]
    use crate::common;

    use std::process::Command;
    use std::time::{Duration, Instant};

    use crate::common::{BIN, Session};
    use serde_json::json;

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

    fn stderr_of(env: &[(&str, &str)]) -> String {
        let out = common::run_lines(Command::new(BIN), env, &[INIT]);
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    #[test]
    fn a_log_filter_that_names_no_level_still_lets_a_missing_folder_speak() {
        for filter in ["warning", "verbose"] {
            let stderr = stderr_of(&[("SKILLS_DIR", "/nonexistent"), ("SKILL_MCP_LOG", filter)]);
            assert!(
                stderr.contains("/nonexistent") || stderr.contains("SKILL_MCP_LOG"),
                "SKILL_MCP_LOG={filter}: a missing folder, and nothing on stderr at all: {stderr:?}"
            );
        }
    }

    #[test]
    fn a_watch_setting_that_is_neither_on_nor_off_is_said() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        common::skill(&root, "first");
        let mut s = Session::start(
            std::path::Path::new(BIN),
            &[
                ("SKILLS_DIR", root.to_str().unwrap()),
                ("SKILL_MCP_WATCH", "yes"),
            ],
        );
        let list = s.tool("skill_list", json!({}));
        let said = list["problems"].as_array().unwrap().iter().any(|p| {
            p["path"] == "SKILL_MCP_WATCH"
                || p["detail"]
                    .as_str()
                    .unwrap_or("")
                    .contains("SKILL_MCP_WATCH")
        });
        if !said {
            // Or it is read as on: a skill added now is seen (a rescan
            // takes about a second; 60 s only stops a watch that never
            // sees it).
            common::skill(&root, "second");
            let t = Instant::now();
            loop {
                let names = common::names(&s.tool("skill_list", json!({})));
                if names.iter().any(|n| n == "second") {
                    break;
                }
                assert!(
                    t.elapsed() < Duration::from_secs(60),
                    "SKILL_MCP_WATCH=yes neither watches nor is reported as a setting problem: {names:?}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        assert!(s.finish().success());
    }
}

mod log_hides_no_line_breaks {
    //! Newcomer attack (issue 30 §2, SRV-010, CHECK-006): a line of the
    //! problems log stays one line, and invisible characters are shown, not
    //! passed through. `one_line` escapes C0/C1 controls and a list of format
    //! characters, but U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR
    //! (line breaks to every Unicode-aware viewer, editor and JS-based log UI)
    //! and the invisible tag characters U+E0000..U+E007F ("ASCII smuggling")
    //! reach stderr raw from a directory name, as they reach `check`'s text
    //! report.

    #[allow(unused_imports)]
    use crate::common;

    use std::process::Command;

    use crate::common::BIN;

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

    const RAW: [char; 3] = ['\u{2028}', '\u{2029}', '\u{e0041}'];

    /// A root holding three directories that are no skills, named with a line
    /// separator, a paragraph separator and a tag character.
    fn tree() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for name in [
            "a\u{2028}WARN forged: line",
            "b\u{2029}c",
            "tag\u{e0041}\u{e0042}x",
        ] {
            std::fs::create_dir(tmp.path().join(name)).unwrap();
        }
        common::skill(tmp.path(), "good");
        tmp
    }

    #[test]
    fn a_line_or_paragraph_separator_or_tag_character_is_escaped_in_the_log() {
        let tmp = tree();
        let out = common::run_lines(
            Command::new(BIN),
            &[("SKILLS_DIR", tmp.path().to_str().unwrap())],
            &[INIT],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warned: Vec<&str> = stderr.lines().filter(|l| l.contains(" WARN ")).collect();
        assert_eq!(warned.len(), 3, "{stderr}");
        for line in warned {
            assert!(
                !line.contains(RAW),
                "a raw line/paragraph separator or tag character in the log: {}",
                line.escape_debug()
            );
        }
    }

    #[test]
    fn a_line_or_paragraph_separator_or_tag_character_is_neutralized_in_checks_report() {
        let tmp = tree();
        let out = Command::new(BIN)
            .env_clear()
            .arg("check")
            .arg(tmp.path())
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("error[no-skill-md]"), "{text}");
        assert!(
            !text.contains(RAW),
            "a raw line/paragraph separator or tag character in check's report: {}",
            text.escape_debug()
        );
    }
}

mod claude_project_layout_is_hinted {
    //! Newcomer attack (issue 30 §3: "a tree whose skills sit under `skills/`
    //! next to non-skill folders gets a hint to point at `skills/`"; README:
    //! "One catalog for several hosts. Point Claude Code, Claude Desktop and
    //! anything else at the same folder"). The folder a Claude Code user
    //! already has is a project's `.claude/skills/` (or `~/.claude/skills/`).
    //! Pointed at the project root, the server skips `.claude` as hidden
    //! (DISC-004) and says only "no skill was found", while `check` fails on
    //! the project's `src/` — nothing points at `.claude/skills`, where the
    //! skills are.

    use std::process::Command;

    const BIN: &str = env!("CARGO_BIN_EXE_skill-mcp");

    #[test]
    fn a_project_root_with_claude_skills_is_pointed_at_them() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join(".claude/skills/foo");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::create_dir_all(tmp.path().join("src")).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: foo\ndescription: d\n---\nbody\n",
        )
        .unwrap();
        let out = Command::new(BIN)
            .env_clear()
            .arg("check")
            .arg(tmp.path())
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("0 skills served"), "{text}");
        assert!(
            text.contains(".claude/skills"),
            "skills under .claude/skills, and nothing says to point there:\n{text}"
        );
    }
}
