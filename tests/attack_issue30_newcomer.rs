//! A newcomer's attack on issue 30 (a fresh pair of eyes followed the
//! README, then tried to break what issue 30 added): each module is one
//! finding, its tests driving the built binary from outside.

use crate::common;

mod many_roots_fit_the_answer_budget {
    //! Newcomer attack (issue 30, LIST-005/LIST-016): every answer fits the
    //! answer budget, whatever the configuration holds. `roots` is a top-level
    //! field of `skill_list`, and LIST-005's source says "`problems` and the
    //! other top-level fields are bounded the same way". A host that gives
    //! each skill its own slot (`MCP_SKILLS_PATH=/slots/a:/slots/b:…`, one
    //! root per skill) makes `roots` grow with the catalog; so does a long
    //! root path in the handshake's unreadable-roots sentence.

    #[allow(unused_imports)]
    use super::common;

    use std::process::Command;

    use super::common::{BIN, Session};
    use serde_json::json;

    const ANSWER_BUDGET: usize = 40_000;

    /// 500 roots, each one skill (layout 1), each path about 120 characters:
    /// every `skill_list` page must still fit 40,000 characters of compact
    /// JSON, and hold more than one skill.
    #[test]
    fn many_roots_still_fit_the_answer_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let mut roots = Vec::new();
        for i in 0..500 {
            let slot = base.join(format!("slot-{i:03}-{}", "p".repeat(80)));
            common::skill(&slot, &format!("skill-{i:03}"));
            roots.push(slot.join(format!("skill-{i:03}")).display().to_string());
        }
        let path = roots.join(":");
        let mut s = Session::start(std::path::Path::new(BIN), &[("SKILLS_DIR", &path)]);
        let list = s.tool("skill_list", json!({}));
        let size = serde_json::to_string(&list).unwrap().len();
        let skills = list["skills"].as_array().unwrap().len();
        assert!(
            size <= ANSWER_BUDGET,
            "skill_list's answer is {size} characters (roots: {} entries), over the {ANSWER_BUDGET} budget",
            list["roots"].as_array().map_or(0, Vec::len)
        );
        assert!(skills > 1, "a page holds {skills} skill(s) of 500");
        let found = s.tool("skill_list", json!({"query": "skill-001"}));
        let size = serde_json::to_string(&found).unwrap().len();
        assert!(
            size <= ANSWER_BUDGET,
            "a query's answer is {size} characters"
        );
        assert!(s.finish().success());
    }

    /// One mistyped root of 50,000 characters (a pasted blob, a generated
    /// path): the handshake names it (LIST-016) but the instructions still
    /// fit the answer budget, an excerpt standing for the path.
    #[test]
    fn a_long_unreadable_root_keeps_the_instructions_within_the_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let long = format!("/nonexistent/{}", "x".repeat(50_000));
        let mut cmd = Command::new(BIN);
        cmd.current_dir(tmp.path());
        let out = common::run_lines(
            cmd,
            &[("SKILLS_DIR", &long)],
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
            ],
        );
        let first = String::from_utf8_lossy(&out.stdout);
        let reply: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        let instructions = reply["result"]["instructions"].as_str().unwrap();
        assert!(
            instructions.starts_with("Serves 0 Agent Skills: /nonexistent/xxx"),
            "{}",
            &instructions[..200]
        );
        assert!(
            instructions.len() <= ANSWER_BUDGET,
            "the instructions are {} characters: the unreadable root's path is quoted whole",
            instructions.len()
        );
    }
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
    use super::common;

    use std::process::Command;

    use super::common::BIN;

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
    use super::common;

    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::common::{BIN, Session};
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
    use super::common;

    use std::process::Command;

    use super::common::BIN;

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

mod odd_frontmatter_keys_are_named {
    //! Newcomer attack (issue 30 §3, FM-007, CHECK-018): a skill author's odd
    //! top-level keys. FM-007: "Any other top-level key, a key that is not a
    //! string included, gives an `unknown-key` problem naming it, placed at
    //! its value". A key that is not a string (`1:`, `true:`, `~:`, `? [a, b]`)
    //! is reported by an anonymous message with no line: four identical
    //! warnings, and the author cannot tell which key. And a key spelt with a
    //! lookalike letter (Cyrillic `а` in `nаme`) is told `did you mean
    //! "name"?` in a message that shows the two as the same word.

    use std::path::Path;
    use std::process::Command;

    use serde_json::Value;

    const BIN: &str = env!("CARGO_BIN_EXE_skill-mcp");

    fn check_json(root: &Path) -> Value {
        let out = Command::new(BIN)
            .env_clear()
            .args(["check", "--format", "json"])
            .arg(root)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn unknown_keys(report: &Value) -> Vec<Value> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "unknown-key")
            .cloned()
            .collect()
    }

    /// `check`'s unknown-key findings for one skill `name` whose SKILL.md
    /// is `md`.
    fn unknown_keys_of(name: &str, md: &str) -> Vec<Value> {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), md).unwrap();
        unknown_keys(&check_json(tmp.path()))
    }

    #[test]
    fn a_key_that_is_not_a_string_is_named_and_placed() {
        let found = unknown_keys_of(
            "nonstr",
            "---\nname: nonstr\ndescription: d\n1: x\ntrue: y\n---\nbody\n",
        );
        assert_eq!(found.len(), 2, "{found:?}");
        // Placed: line 4 for `1`, line 5 for `true`.
        let lines: Vec<&Value> = found.iter().map(|f| &f["line"]).collect();
        assert_eq!(lines, [4, 5], "{found:?}");
        // Named: the message says which key.
        assert!(
            found[0]["message"].as_str().unwrap().contains('1'),
            "{found:?}"
        );
        assert!(
            found[1]["message"].as_str().unwrap().contains("true"),
            "{found:?}"
        );
        assert_ne!(found[0]["message"], found[1]["message"], "{found:?}");
    }

    #[test]
    fn a_lookalike_key_says_which_letter_is_not_the_one_it_looks_like() {
        // `nаme` with U+0430 CYRILLIC SMALL LETTER A.
        let found = unknown_keys_of(
            "lookalike",
            "---\nn\u{430}me: lookalike\ndescription: d\n---\nbody\n",
        );
        assert_eq!(found.len(), 1, "{found:?}");
        let message = found[0]["message"].as_str().unwrap();
        assert!(message.contains("did you mean \"name\""), "{message}");
        // Shown as `"nаme" … did you mean "name"?`, the two look the same; the
        // message must point at the letter that differs.
        assert!(
            message.contains("U+0430") || message.contains("\\u{430}"),
            "the message does not say which letter is not ASCII: {message}"
        );
    }
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
