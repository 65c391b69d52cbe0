//! DOC-001..DOC-005 (spec/docs.md): the README is what a newcomer runs, so
//! every command in it is run — here, or by the test or script the table
//! below names — and every figure and sample it shows is the code's.
//!
//! Commands run here take the README's placeholders as a test has them
//! (`/path/to/your/skills` is a folder of skills made for the test) and run
//! in the debug profile the gate has built: `cargo run --release -- ARGS`
//! is the built binary with ARGS, `skill-mcp` (installed) is that binary,
//! and a `cargo build` or `cargo install` runs as written plus `--debug`
//! (and `--root` into a temporary directory), reusing the gate's compiled
//! crates rather than compiling the release profile again.

use crate::common;
use common::readme::{self, Line};
use common::*;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// How a README command is run.
enum How {
    /// By the test of this file with this name, which runs every command
    /// the table gives it.
    Here(&'static str),
    /// By another test or script of the gate: the file, and text in it
    /// that shows it runs the README's command.
    There(&'static str, &'static str),
    /// Not runnable here (it fetches from GitHub, which this machine and
    /// CI cannot reach); `the_git_install_names_this_package` checks what
    /// can be checked offline.
    Offline(&'static str),
}

/// Every command of the README, exactly as it is written there.
const COMMANDS: &[(&str, How)] = &[
    ("cargo run --release", How::Here("serving_commands_serve")),
    (".ci/test", How::There(".ci/run", "exec .ci/test")),
    (
        "SKILLS_DIR=/path/to/your/skills cargo run --release",
        How::Here("serving_commands_serve"),
    ),
    (
        "cargo run --release -- check /path/to/your/skills",
        How::Here("check_commands_pass_on_a_clean_folder"),
    ),
    (
        "cargo build --release",
        How::Here("build_and_install_commands_give_a_working_binary"),
    ),
    (
        "cargo install --locked --path .",
        How::Here("build_and_install_commands_give_a_working_binary"),
    ),
    (
        "claude mcp add skills -s user -e SKILLS_DIR=/path/to/your/skills -- /path/to/skill-mcp/target/release/skill-mcp",
        How::There(
            "tests/claude_code.rs",
            "readme_words(\"claude mcp add skills\")",
        ),
    ),
    (
        "claude mcp list",
        How::There("tests/claude_code.rs", "readme_words(\"claude mcp list\")"),
    ),
    (
        "(umask 077; openssl rand -hex 32 > ~/.skill-mcp-token)",
        How::Here("a_team_is_served_as_the_readme_says"),
    ),
    (
        "SKILLS_DIR=/path/to/your/skills skill-mcp --http 0.0.0.0:8080 --http-token-file ~/.skill-mcp-token --http-allow-host devbox",
        How::Here("a_team_is_served_as_the_readme_says"),
    ),
    (
        "claude mcp add --transport http -s user skills http://devbox:8080/mcp --header \"Authorization: Bearer PASTE-THE-TOKEN\"",
        How::There(
            "tests/claude_code.rs",
            "readme_words(\"claude mcp add --transport http\")",
        ),
    ),
    (
        "SKILLS_DIR=/path/to/your/skills skill-mcp --http 127.0.0.1:8080 --http-token-file ~/.skill-mcp-token --http-allow-host skills.example.com",
        How::Here("the_reverse_proxy_serves_the_team_over_tls"),
    ),
    (
        "skill-mcp check /path/to/your/skills",
        How::Here("check_commands_pass_on_a_clean_folder"),
    ),
    (
        "skill-mcp check --strict --format json /path/to/your/skills",
        How::Here("check_commands_pass_on_a_clean_folder"),
    ),
    (
        "skill-mcp check tests/fixtures/check/broken/bad-block tests/fixtures/check/warnings/metadata-numbers",
        How::Here("the_console_sample_is_what_check_prints"),
    ),
    (
        "cargo install --locked --path . --features python3",
        How::Here("build_and_install_commands_give_a_working_binary"),
    ),
    (
        "cargo install --locked --git https://github.com/chrischall/skill-mcp-rs skill-mcp-server",
        How::Offline("the_git_install_names_this_package"),
    ),
    (
        "nix --extra-experimental-features 'nix-command flakes' run github:chrischall/skill-mcp-rs",
        How::There(".ci/nix-check", "the README's nix commands"),
    ),
    (
        "nix --extra-experimental-features 'nix-command flakes' profile install github:chrischall/skill-mcp-rs",
        How::There(".ci/nix-check", "the README's nix commands"),
    ),
    (
        "nix --extra-experimental-features 'nix-command flakes' run github:chrischall/skill-mcp-rs#with-python",
        How::There(".ci/nix-check", "the README's nix commands"),
    ),
    (
        "cargo install --locked --path conformance/runner",
        How::Here("build_and_install_commands_give_a_working_binary"),
    ),
    (
        "skill-mcp-conformance --profile core --server \"path/to/your/server args\"",
        How::There(
            ".ci/test",
            "target/debug/skill-mcp-conformance --profile core",
        ),
    ),
];

/// The commands the table gives the test `name`, each still in the README.
fn mine(name: &str) -> Vec<Line> {
    let lines = readme::commands(&readme::readme());
    let wanted: Vec<&str> = COMMANDS
        .iter()
        .filter(|(_, how)| matches!(how, How::Here(n) if *n == name))
        .map(|(c, _)| *c)
        .collect();
    assert!(!wanted.is_empty(), "the table gives {name} no command");
    wanted
        .iter()
        .map(|c| {
            lines
                .iter()
                .find(|l| l.command == *c)
                .cloned()
                .unwrap_or_else(|| panic!("the README no longer has {c:?}"))
        })
        .collect()
}

/// `target/`, from this test's own path (target/<profile>/deps/<test>).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    exe.ancestors()
        .nth(3)
        .expect("a test runs from target/<profile>/deps")
        .to_path_buf()
}

/// A folder of two clean skills, as a newcomer's would be.
fn your_skills() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    skill(dir.path(), "alpha");
    skill(dir.path(), "beta");
    // `description` long enough for the Agent Skills spec's advice, so
    // `--strict` passes too.
    for name in ["alpha", "beta"] {
        std::fs::write(
            dir.path().join(name).join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Does {name} things. Use it when a test needs a skill named {name}.\n---\n# {name}\n"
            ),
        )
        .unwrap();
    }
    dir
}

/// A README command as a process: env assignments first, `cargo run
/// --release [--]` and `skill-mcp` as `bin`, placeholders substituted.
fn process(command: &str, skills: &Path, bin: &Path) -> (Vec<(String, String)>, Command) {
    let words = shlex::split(command).unwrap_or_else(|| panic!("{command:?} does not split"));
    let words: Vec<String> = words
        .iter()
        .map(|w| readme::substitute(w, skills, bin))
        .collect();
    let mut env = Vec::new();
    let mut rest = words.as_slice();
    while let Some((k, v)) = rest.first().and_then(|w| w.split_once('=')) {
        env.push((k.to_owned(), v.to_owned()));
        rest = &rest[1..];
    }
    let args: &[String] = match rest {
        [c, r, release, dashdash, args @ ..]
            if c == "cargo" && r == "run" && release == "--release" && dashdash == "--" =>
        {
            args
        }
        [c, r, release] if c == "cargo" && r == "run" && release == "--release" => &[],
        [s, args @ ..] if s == "skill-mcp" => args,
        _ => panic!("{command:?} is not a command of the server"),
    };
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(ROOT);
    (env, cmd)
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn every_readme_command_is_in_the_table_and_the_table_is_the_readme() {
    let lines = readme::commands(&readme::readme());
    // A command the README gives in two places is run once.
    let written: BTreeSet<&str> = lines.iter().map(|l| l.command.as_str()).collect();
    let table: BTreeSet<&str> = COMMANDS.iter().map(|(c, _)| *c).collect();
    let unknown: Vec<&&str> = written.difference(&table).collect();
    let gone: Vec<&&str> = table.difference(&written).collect();
    assert!(
        unknown.is_empty() && gone.is_empty(),
        "README commands no test runs: {unknown:#?}\ntable entries the README no longer has: {gone:#?}\n(tests/readme.rs's COMMANDS says how each README command is run)"
    );
    for (command, how) in COMMANDS {
        match how {
            How::There(file, holds) => {
                let text = std::fs::read_to_string(Path::new(ROOT).join(file))
                    .unwrap_or_else(|e| panic!("{file}: {e}"));
                assert!(
                    text.contains(holds),
                    "{command:?} is said to be run by {file}, which does not hold {holds:?}"
                );
            }
            How::Here(name) | How::Offline(name) => {
                let me = std::fs::read_to_string(Path::new(ROOT).join("tests/readme.rs")).unwrap();
                assert!(
                    me.contains(&format!("fn {name}()")),
                    "{command:?} is said to be run by {name}, which this file does not define"
                );
            }
        }
    }
}

#[test]
fn serving_commands_serve() {
    let skills = your_skills();
    for line in mine("serving_commands_serve") {
        let (env, cmd) = process(&line.command, skills.path(), Path::new(BIN));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut s = Session::start_command(cmd, &env);
        let list = s.tool("skill_list", json!({}));
        let want: &[&str] = if env.is_empty() {
            &["skill-mcp-demo"]
        } else {
            &["alpha", "beta"]
        };
        assert_eq!(names(&list), want, "{}: {list}", line.command);
        assert_eq!(list["problems"], json!([]), "{}: {list}", line.command);
        assert!(s.finish().success(), "{}", line.command);
    }
}

/// What a model sees: the README's sample of the handshake's instructions
/// is what the server says for the bundled skill, word for word.
#[test]
fn the_instructions_sample_is_what_the_server_says() {
    use std::io::{BufRead, BufReader, Write};
    let blocks = readme::blocks(&readme::readme(), "");
    assert_eq!(
        blocks.len(),
        1,
        "one plain block (the instructions) in the README"
    );
    let mut child = Command::new(BIN)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "readme", "version": "0"}}});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    let _ = child.wait();
    let reply: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        reply["result"]["instructions"].as_str(),
        Some(blocks[0].trim_end()),
        "the README's instructions sample is stale"
    );
}

/// The Claude Desktop snippet: its command, with its environment, serves
/// the folder it names.
#[test]
fn the_claude_desktop_snippet_serves_its_folder() {
    let blocks = readme::blocks(&readme::readme(), "json");
    assert_eq!(blocks.len(), 1, "one JSON configuration in the README");
    let config: Value = serde_json::from_str(&blocks[0]).expect("the snippet is JSON");
    let server = &config["mcpServers"]["skills"];
    let skills = your_skills();
    let command = readme::substitute(
        server["command"].as_str().expect("a command"),
        skills.path(),
        Path::new(BIN),
    );
    assert_eq!(command, BIN, "the snippet's command is the built binary");
    let env: Vec<(String, String)> = server["env"]
        .as_object()
        .expect("an env")
        .iter()
        .map(|(k, v)| {
            let v = v.as_str().expect("a string");
            (
                k.clone(),
                readme::substitute(v, skills.path(), Path::new(BIN)),
            )
        })
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut s = Session::start(Path::new(&command), &env);
    assert_eq!(names(&s.tool("skill_list", json!({}))), ["alpha", "beta"]);
    assert!(s.finish().success());
}

#[test]
fn check_commands_pass_on_a_clean_folder() {
    let skills = your_skills();
    for line in mine("check_commands_pass_on_a_clean_folder") {
        let (env, mut cmd) = process(&line.command, skills.path(), Path::new(BIN));
        let o = cmd
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}: {}", line.command, show(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        if line.command.contains("--format json") {
            let v: Value = serde_json::from_str(&out).expect("the JSON report");
            assert_eq!(v["passed"], true, "{out}");
            assert_eq!(v["strict"], true, "{out}");
        } else {
            assert!(
                out.contains("served alpha") && out.contains("served beta"),
                "{}: {out}",
                line.command
            );
        }
    }
}

/// The README's sample output is what `check` prints, byte for byte.
#[cfg(not(feature = "python3"))]
#[test]
fn the_console_sample_is_what_check_prints() {
    for line in mine("the_console_sample_is_what_check_prints") {
        let (_, mut cmd) = process(&line.command, Path::new("/nonexistent"), Path::new(BIN));
        let o = cmd
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output()
            .unwrap();
        let want = line.output.as_deref().expect("a console sample has output");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            want,
            "the README's sample of {:?} is not what it prints",
            line.command
        );
        assert_eq!(o.status.code(), Some(1), "the sample fails: {}", show(&o));
    }
}

/// `cargo build` and each `cargo install`, as written (plus `--debug` and
/// a temporary `--root`), give a binary that works: the server's serves
/// the checkout's skills and checks a folder; the runner lists its cases.
#[test]
fn build_and_install_commands_give_a_working_binary() {
    let target = target_dir();
    let skills = your_skills();
    for line in mine("build_and_install_commands_give_a_working_binary") {
        let out = tempfile::tempdir().unwrap();
        let words = shlex::split(&line.command).unwrap();
        let mut cmd = Command::new(env!("CARGO"));
        let (installed, profile_args): (PathBuf, Vec<String>) = match words.as_slice() {
            [c, b, release] if c == "cargo" && b == "build" && release == "--release" => (
                out.path().join("debug/skill-mcp"),
                vec!["build".into(), "--quiet".into()],
            ),
            [c, i, rest @ ..] if c == "cargo" && i == "install" => {
                assert!(
                    rest.iter().any(|w| w == "--locked"),
                    "{}: an install without --locked re-resolves every dependency",
                    line.command
                );
                let mut args = vec!["install".to_owned(), "--quiet".into()];
                args.extend(rest.iter().cloned());
                args.extend(["--debug".into(), "--root".into()]);
                args.push(out.path().display().to_string());
                let bin = if line.command.contains("conformance/runner") {
                    "skill-mcp-conformance"
                } else {
                    "skill-mcp"
                };
                (out.path().join("bin").join(bin), args)
            }
            _ => panic!("{:?} is not a build or an install", line.command),
        };
        // The gate's compiled crates are reused (build-dir), while what is
        // built lands in a directory of its own (target-dir), so the
        // binary the other tests run is never replaced under them.
        cmd.args(&profile_args)
            .current_dir(ROOT)
            .env("CARGO_BUILD_BUILD_DIR", &target)
            .env("CARGO_TARGET_DIR", out.path().join(".target"));
        if profile_args[0] == "build" {
            cmd.env("CARGO_TARGET_DIR", out.path());
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}: {}", line.command, show(&o));
        assert!(
            installed.is_file(),
            "{}: no {}",
            line.command,
            installed.display()
        );
        if line.command.contains("conformance/runner") {
            let o = Command::new(&installed)
                .args(["--list", "--profile", "core"])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", show(&o));
            assert!(
                String::from_utf8_lossy(&o.stdout).lines().count() > 10,
                "the installed runner finds its cases: {}",
                show(&o)
            );
            continue;
        }
        let mut s = Session::start(&installed, &[]);
        let list = s.tool("skill_list", json!({}));
        assert_eq!(
            list["roots"],
            json!([format!("{ROOT}/skills")]),
            "{}: an installed binary serves the skills of the tree it was built from",
            line.command
        );
        assert_eq!(names(&list), ["skill-mcp-demo"], "{}", line.command);
        let runnable = list["skills"][0]["scripts"].as_array().map(Vec::len);
        assert_eq!(runnable, Some(1), "{}: {list}", line.command);
        s.finish();
        let o = Command::new(&installed)
            .arg("check")
            .arg(skills.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}: {}", line.command, show(&o));
        // The python3 build runs a python3 script; the default does not.
        let python = line.command.contains("--features python3");
        let o = Command::new(&installed)
            .args(["check", "--format", "json"])
            .arg(python_skill(out.path()))
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).expect("a JSON report");
        let py = &v["skills"][0];
        // Runnable where python3 is on PATH; elsewhere unavailable, with
        // the reason naming the set this build runs.
        let set = if py["scripts"].as_array().is_some_and(|s| s.len() == 1) {
            "node, python3"
        } else {
            py["unavailableScripts"][0]["reason"]
                .as_str()
                .and_then(|r| r.rsplit("this deployment runs: ").next())
                .and_then(|r| r.split(';').next())
                .unwrap_or_default()
        };
        let want = if python { "node, python3" } else { "node" };
        assert_eq!(set, want, "{}: {v}", line.command);
    }
}

/// A skill declaring a python3 script.
fn python_skill(at: &Path) -> PathBuf {
    let root = at.join("python-skills");
    let dir = root.join("py");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: py\ndescription: Runs a Python script. Use it in tests.\nmcp-host:\n  version: 1\n  run:\n    - script: scripts/hello.py\n      interpreter: python3\n---\n# py\n",
    )
    .unwrap();
    std::fs::write(dir.join("scripts/hello.py"), "print('hello')\n").unwrap();
    root
}

/// A request to /mcp on `port` as a teammate's client sends it: `Host`
/// names the machine as the teammate typed it, `extra` adds headers.
fn post_as(port: u16, host: &str, body: &str, extra: &[(&str, &str)]) -> common::http::Answer {
    common::http::raw(port, request_as(host, "POST", body, extra).as_bytes())
}

/// The bytes of a request to /mcp naming `host`.
fn request_as(host: &str, method: &str, body: &str, extra: &[(&str, &str)]) -> String {
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    req
}

fn initialize_body() -> String {
    common::http::rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "teammate", "version": "0"}}),
    )
}

/// "Serve a team over HTTP": the README's token command, as written, makes
/// a token only its owner can read; its serving command, as written but
/// on a free port (`Served::start` says how), serves a teammate who names
/// the allowed host and brings the token — the skills, and no
/// `skill_run` — and refuses one who names another host (403, naming the
/// flag) or brings no token (401). Without `--http-allow-host` the same
/// command says at start that teammates will be refused (HTTP-018).
#[test]
fn a_team_is_served_as_the_readme_says() {
    let lines = mine("a_team_is_served_as_the_readme_says");
    let [make, serve] = &lines[..] else {
        panic!("the token command and the serving command: {lines:?}")
    };
    let (make, serve) = (&make.command, &serve.command);
    assert!(make.starts_with("(umask 077; openssl rand") && serve.contains("--http 0.0.0.0:"));
    let home = tempfile::tempdir().unwrap();
    let token = readme::make_token(home.path());
    let file = home.path().join(".skill-mcp-token");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{make}: the token file is readable by others");
    assert!(
        token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{make}: {token:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("{token}\n")
    );

    let skills = your_skills();
    let served = readme::Served::start(serve, skills.path(), home.path(), &[]);
    let later = served.says_within(std::time::Duration::from_secs(1));
    assert!(
        !served
            .said
            .iter()
            .chain(&later)
            .any(|l| l.contains("--http-allow-host NAME")),
        "{serve}: a named host, yet it warns: {:?} {later:?}",
        served.said
    );
    let bearer = format!("Bearer {token}");
    let port = served.port;
    // A teammate's client, with the host name and the port of the README.
    let a = post_as(
        port,
        "devbox:8080",
        &initialize_body(),
        &[("Authorization", &bearer)],
    );
    assert_eq!(a.status, 200, "{serve}: {a:?}");
    assert_eq!(
        a.json()["result"]["serverInfo"]["name"],
        "skill-mcp",
        "{a:?}"
    );
    let session = a.header("mcp-session-id").expect("a session").to_owned();
    let with = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", &session),
    ];
    let n = post_as(
        port,
        "devbox:8080",
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        &with,
    );
    assert_eq!(n.status, 202, "{n:?}");
    let tools = post_as(
        port,
        "devbox:8080",
        &common::http::rpc(2, "tools/list", json!({})),
        &with,
    );
    let tools = tools.json();
    let mut offered = common::http::tool_names(&tools);
    offered.sort_unstable();
    assert_eq!(
        offered,
        ["skill_file", "skill_list", "skill_load"],
        "scripts are off over HTTP"
    );
    let list = post_as(
        port,
        "devbox:8080",
        &common::http::rpc(
            3,
            "tools/call",
            json!({"name": "skill_list", "arguments": {}}),
        ),
        &with,
    );
    assert_eq!(
        names(&list.json()["result"]["structuredContent"]),
        ["alpha", "beta"],
        "{list:?}"
    );
    // Another name: 403, saying which flag would allow it.
    let other = post_as(
        port,
        "otherbox:8080",
        &initialize_body(),
        &[("Authorization", &bearer)],
    );
    assert_eq!(other.status, 403, "{other:?}");
    assert!(
        other.body.contains("the Host header names \"otherbox\"")
            && other.body.contains("--http-allow-host \"otherbox\""),
        "{other:?}"
    );
    // No token: 401.
    let none = post_as(port, "devbox:8080", &initialize_body(), &[]);
    assert_eq!(none.status, 401, "{none:?}");
    assert!(none.header("www-authenticate").is_some(), "{none:?}");
    drop(served);

    // The same command without the flag: the owner is told (HTTP-018).
    let bare = serve.replace(" --http-allow-host devbox", "");
    assert_ne!(&bare, serve);
    let served = readme::Served::start(&bare, skills.path(), home.path(), &[]);
    let said = [
        served.said.clone(),
        served.says_within(std::time::Duration::from_secs(2)),
    ]
    .concat()
    .join("\n");
    assert!(
        said.contains("refused") && said.contains("--http-allow-host NAME"),
        "{bare}: {said}"
    );
    let refused = post_as(
        served.port,
        "devbox:8080",
        &initialize_body(),
        &[("Authorization", &bearer)],
    );
    assert_eq!(refused.status, 403, "{refused:?}");
}

/// One request over TLS to `port`, verifying the certificate against
/// `ca` for `name` (`openssl s_client`, which .ci/run installs): the
/// answer, read until the proxy closes the connection.
fn over_tls(port: u16, name: &str, ca: &Path, request: &str) -> common::http::Answer {
    use std::io::Write;
    let mut child = tls_client(port, name, ca);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        !o.stdout.is_empty(),
        "no answer over TLS: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    common::http::parse(&o.stdout)
}

fn tls_client(port: u16, name: &str, ca: &Path) -> std::process::Child {
    Command::new("openssl")
        .args(["s_client", "-quiet", "-verify_return_error", "-connect"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["-servername", name, "-verify_hostname", name, "-CAfile"])
        .arg(ca)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("openssl runs (.ci/run installs it)")
}

/// "Serve a team over HTTP", behind a reverse proxy: the README's loopback
/// serving command (as written, on a free port) behind the README's nginx
/// block (Debian's nginx, as in tests/replicas.rs; its certificate, port
/// and upstream port substituted: a self-signed certificate for
/// skills.example.com made with openssl). Over TLS, verified for that
/// name: the token and the allowed name open a session, whose answers and
/// event stream come through (the stream's first event while it stays
/// open: nothing buffers it — the server's `X-Accel-Buffering: no` alone
/// would see to that in nginx, so `proxy_buffering off` is the block's
/// word to other proxies, not something this can tell apart); the proxy
/// passes on the `Host` (another name is the server's 403) and the
/// `Authorization` header (none is the server's 401).
#[test]
fn the_reverse_proxy_serves_the_team_over_tls() {
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::time::{Duration, Instant};

    let [serve] = &mine("the_reverse_proxy_serves_the_team_over_tls")[..] else {
        panic!("one command")
    };
    let nginx = crate::common::nginx();
    let blocks = readme::blocks(&readme::readme(), "nginx");
    let [block] = &blocks[..] else {
        panic!("one nginx block in the README: {blocks:?}")
    };
    let home = tempfile::tempdir().unwrap();
    let token = readme::make_token(home.path());
    let skills = your_skills();
    let served = readme::Served::start(&serve.command, skills.path(), home.path(), &[]);

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (cert, key) = (d.join("cert.pem"), d.join("key.pem"));
    let o = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=skills.example.com"])
        .args(["-addext", "subjectAltName=DNS:skills.example.com"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl runs (.ci/run installs it)");
    assert!(o.status.success(), "{}", show(&o));
    let front = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut server = block.clone();
    for (from, to) in [
        ("listen 443 ssl;", format!("listen 127.0.0.1:{front} ssl;")),
        (
            "/etc/ssl/certs/skills.example.com.pem",
            cert.display().to_string(),
        ),
        (
            "/etc/ssl/private/skills.example.com.key",
            key.display().to_string(),
        ),
        (
            "proxy_pass http://127.0.0.1:8080;",
            format!("proxy_pass http://127.0.0.1:{};", served.port),
        ),
    ] {
        assert!(server.contains(from), "the README's block has no {from:?}");
        server = server.replace(from, &to);
    }
    let dd = d.display();
    let conf = d.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "daemon off;\nmaster_process off;\nerror_log {dd}/error.log;\npid {dd}/nginx.pid;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n access_log off;\n client_body_temp_path {dd}/body;\n proxy_temp_path {dd}/proxy;\n\
             fastcgi_temp_path {dd}/fcgi;\n uwsgi_temp_path {dd}/uwsgi;\n scgi_temp_path {dd}/scgi;\n\
             {server}}}\n"
        ),
    )
    .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _nginx = Kill(
        Command::new(nginx)
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(d)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", front)).is_err() {
        assert!(
            Instant::now() < deadline,
            "nginx does not listen: {}",
            std::fs::read_to_string(d.join("error.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let name = "skills.example.com";
    let bearer = format!("Bearer {token}");
    let ask = |host: &str, method: &str, body: &str, extra: &[(&str, &str)]| {
        over_tls(front, name, &cert, &request_as(host, method, body, extra))
    };
    let a = ask(
        name,
        "POST",
        &initialize_body(),
        &[("Authorization", &bearer)],
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.json()["result"]["serverInfo"]["name"],
        "skill-mcp",
        "{a:?}"
    );
    let session = a.header("mcp-session-id").expect("a session").to_owned();
    let with = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", &session),
    ];
    let n = ask(
        name,
        "POST",
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        &with,
    );
    assert_eq!(n.status, 202, "{n:?}");
    let list = ask(
        name,
        "POST",
        &common::http::rpc(
            2,
            "tools/call",
            json!({"name": "skill_list", "arguments": {}}),
        ),
        &with,
    );
    assert_eq!(
        names(&list.json()["result"]["structuredContent"]),
        ["alpha", "beta"],
        "{list:?}"
    );
    // The session's event stream: its first event arrives while the
    // stream stays open.
    let mut get = tls_client(front, name, &cert);
    {
        use std::io::Write;
        get.stdin
            .take()
            .unwrap()
            .write_all(request_as(name, "GET", "", &with).as_bytes())
            .unwrap();
    }
    let mut out = get.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&seen).contains("retry:") {
                let _ = tx.send(String::from_utf8_lossy(&seen).into_owned());
                return;
            }
        }
        let _ = tx.send(String::from_utf8_lossy(&seen).into_owned());
    });
    let stream = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the event stream's first event");
    assert!(
        stream.starts_with("HTTP/1.1 200")
            && stream.contains("text/event-stream")
            && stream.contains("retry:"),
        "{stream}"
    );
    assert!(
        get.try_wait().unwrap().is_none(),
        "the stream ended: {stream}"
    );
    let _ = get.kill();
    let _ = get.wait();

    let other = ask(
        "other.example.com",
        "POST",
        &initialize_body(),
        &[("Authorization", &bearer)],
    );
    assert_eq!(other.status, 403, "{other:?}");
    assert!(
        other.body.starts_with("HTTP-003"),
        "the server's 403: {other:?}"
    );
    let none = ask(name, "POST", &initialize_body(), &[]);
    assert_eq!(none.status, 401, "{none:?}");
    assert!(
        none.body.starts_with("HTTP-005"),
        "the server's 401: {none:?}"
    );
}

/// The `--git` install cannot reach GitHub from here. What it depends on
/// is checked instead: the URL is the package's repository, and the name
/// it gives is this package, whose binary is `skill-mcp` (a workspace of
/// two packages with binaries needs the name).
#[test]
fn the_git_install_names_this_package() {
    let command = COMMANDS
        .iter()
        .find(|(_, how)| matches!(how, How::Offline("the_git_install_names_this_package")))
        .map(|(c, _)| *c)
        .unwrap();
    let words = shlex::split(command).unwrap();
    let url = words
        .iter()
        .skip_while(|w| *w != "--git")
        .nth(1)
        .expect("a --git URL");
    assert_eq!(url, env!("CARGO_PKG_REPOSITORY"));
    assert_eq!(
        words.last().map(String::as_str),
        Some(env!("CARGO_PKG_NAME"))
    );
    let o = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--locked",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let meta: Value = serde_json::from_slice(&o.stdout).unwrap();
    let with_bins: Vec<(&str, Vec<&str>)> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let bins = p["targets"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["kind"] == json!(["bin"]))
                .filter_map(|t| t["name"].as_str())
                .collect();
            (p["name"].as_str().unwrap_or_default(), bins)
        })
        .filter(|(_, bins): &(&str, Vec<&str>)| !bins.is_empty())
        .collect();
    assert!(
        with_bins.len() > 1,
        "one package with binaries: the name would not be needed"
    );
    assert!(
        with_bins.contains(&(env!("CARGO_PKG_NAME"), vec!["skill-mcp"])),
        "{with_bins:?}"
    );
}

/// DOC-003: the names a newcomer types work. `skill-mcp` on crates.io is
/// another project's, so the package has another name and keeps the
/// binary's; every install command pins the lock; every Nix command
/// carries the flag Debian's nix needs.
#[test]
fn the_names_work() {
    assert_ne!(
        env!("CARGO_PKG_NAME"),
        "skill-mcp",
        "`cargo install skill-mcp` installs another project"
    );
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let manifest: toml_like::Manifest = toml_like::read(&manifest);
    assert_eq!(manifest.bins, ["skill-mcp"]);
    assert_eq!(manifest.lib.as_deref(), Some("skill_mcp"));
    for doc in ["README.md", "CONTRIBUTING.md", "conformance/FORMAT.md"] {
        let text = std::fs::read_to_string(Path::new(ROOT).join(doc)).unwrap();
        for line in text.lines() {
            for (i, _) in line.match_indices("cargo install ") {
                let rest = &line[i..];
                let end = rest.find(['`', '#']).unwrap_or(rest.len());
                assert!(
                    rest[..end].contains("--locked"),
                    "{doc}: {:?} lacks --locked",
                    &rest[..end]
                );
            }
        }
    }
    for line in readme::commands(&readme::readme()) {
        let starts_nix = line
            .command
            .split_whitespace()
            .find(|w| !w.contains('='))
            .is_some_and(|w| w == "nix");
        if starts_nix {
            assert!(
                line.command
                    .contains("nix --extra-experimental-features 'nix-command flakes' "),
                "{:?} needs the flakes flag where flakes are off (Debian's nix)",
                line.command
            );
        }
    }
}

/// The few lines of Cargo.toml DOC-003 reads: `[lib]`'s and `[[bin]]`'s names.
mod toml_like {
    pub struct Manifest {
        pub lib: Option<String>,
        pub bins: Vec<String>,
    }

    pub fn read(text: &str) -> Manifest {
        let mut m = Manifest {
            lib: None,
            bins: Vec::new(),
        };
        let mut section = "";
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = if line == "[lib]" || line == "[[bin]]" {
                    line
                } else {
                    ""
                };
                continue;
            }
            if let Some(v) = line.strip_prefix("name = ") {
                let v = v.trim_matches('"').to_owned();
                match section {
                    "[lib]" => m.lib = Some(v),
                    "[[bin]]" => m.bins.push(v),
                    _ => {}
                }
            }
        }
        m
    }
}

/// DOC-002: the figures the README and CONTRIBUTING.md state are the
/// code's: the profiles' case counts, as the runner counts them, and the
/// bounds, as the server's constants hold them.
#[test]
fn the_figures_are_the_codes() {
    let count = |profile: &str| {
        let o = Command::new(runner())
            .args(["--list", "--profile", profile])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        String::from_utf8_lossy(&o.stdout).lines().count()
    };
    let (core, full) = (count("core"), count("full"));
    let thousands = |n: usize| {
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    use skill_mcp::limits::*;
    let readme = readme::readme();
    let contributing = std::fs::read_to_string(Path::new(ROOT).join("CONTRIBUTING.md")).unwrap();
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let wants = [
        (&readme, format!("Its **core** profile, {core} cases,")),
        (&readme, format!("**full** (the default), {full} cases,")),
        (
            &contributing,
            format!("(`spec/design-of-record.md`): {core} cases,"),
        ),
        (
            &contributing,
            format!("everything this server adds or decides, {full} cases"),
        ),
        (
            &readme,
            format!(
                "An answer holds at most {} characters by default",
                thousands(ANSWER_BUDGET_CHARS)
            ),
        ),
        (
            &readme,
            format!(
                "(default {}; {} to {} MiB)",
                thousands(ANSWER_BUDGET_CHARS),
                thousands(MIN_ANSWER_BUDGET_CHARS),
                MAX_ANSWER_BUDGET_CHARS >> 20
            ),
        ),
        (
            &readme,
            format!(
                "(default {}; 0 to {})",
                thousands(INSTRUCTIONS_INDEX_CHARS),
                thousands(MAX_INSTRUCTIONS_INDEX_CHARS)
            ),
        ),
        (&readme, format!("# seconds; at most {MAX_TIMEOUT_SECS}")),
        (&readme, format!("(or up to {MAX_BATCH_PATHS})")),
        (
            &readme,
            format!(
                "{} MiB of output per stream",
                skill_mcp::run::MAX_STREAM_BYTES >> 20
            ),
        ),
    ];
    for (doc, want) in wants {
        assert!(
            squash(doc).contains(&squash(&want)),
            "a figure is stale: the docs should say {want:?}"
        );
    }
}

/// DOC-004: the README's `mcp-host:` example does what the README says
/// makes a script run: declared, an interpreter this build runs, granted,
/// confirmed.
#[test]
fn the_mcp_host_example_runs_only_as_the_readme_says() {
    let blocks = readme::blocks(&readme::readme(), "yaml");
    assert_eq!(blocks.len(), 1, "one mcp-host example in the README");
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("weather");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("SKILL.md"), format!("{}# Weather\n", blocks[0])).unwrap();
    std::fs::write(
        dir.join("scripts/forecast.js"),
        "console.log('key ' + (process.env.WEATHER_API_KEY ? 'handed' : 'absent'));\n",
    )
    .unwrap();
    // Not declared: never runs, whatever the grant.
    std::fs::write(dir.join("scripts/other.js"), "console.log('other');\n").unwrap();
    let roots = root.path().display().to_string();
    let run = json!({"name": "weather", "script": "scripts/forecast.js", "args": []});
    let confirmed =
        json!({"name": "weather", "script": "scripts/forecast.js", "args": [], "confirm": true});

    // 1, 2, 3 (standalone: the declaration stands), then 4: a preview
    // first, the run only when confirmed.
    let mut s = Session::start(
        Path::new(BIN),
        &[("SKILLS_DIR", &roots), ("WEATHER_API_KEY", "k")],
    );
    let list = s.tool("skill_list", json!({}));
    let script = &list["skills"][0]["scripts"][0];
    assert_eq!(script["script"], "scripts/forecast.js", "{list}");
    assert_eq!(script["env"], json!(["WEATHER_API_KEY"]), "{list}");
    assert_eq!(script["timeoutMs"], 30_000, "{list}");
    assert_eq!(list["problems"], json!([]), "{list}");
    let preview = s.tool("skill_run", run.clone());
    assert_eq!(preview["dryRun"], true, "{preview}");
    let ran = s.tool("skill_run", confirmed.clone());
    assert_eq!(ran["exitCode"], 0, "{ran}");
    assert_eq!(ran["stdout"], "key handed\n", "{ran}");
    let other = s.request(
        "tools/call",
        json!({"name": "skill_run", "arguments": {"name": "weather", "script": "scripts/other.js", "args": [], "confirm": true}}),
    );
    assert_eq!(other["result"]["isError"], true, "{other}");
    s.finish();

    // 3: under a host without MCP_SKILL_RUN, nothing runs.
    let mut s = Session::start(
        Path::new(BIN),
        &[("SKILLS_DIR", &roots), ("MCP_DATA_DIR", &roots)],
    );
    let list = s.tool("skill_list", json!({}));
    assert_eq!(list["skills"][0]["scripts"], json!([]), "{list}");
    assert_eq!(
        list["skills"][0]["ungrantedScripts"][0]["script"], "scripts/forecast.js",
        "{list}"
    );
    let refused = s.request(
        "tools/call",
        json!({"name": "skill_run", "arguments": confirmed.clone()}),
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    s.finish();

    // 3: with MCP_SKILL_RUN, what it names and the declaration allows.
    let grant = r#"[{"skill": "weather", "script": "scripts/forecast.js"}, {"skill": "weather", "script": "scripts/other.js"}]"#;
    let mut s = Session::start(
        Path::new(BIN),
        &[
            ("SKILLS_DIR", &roots),
            ("MCP_DATA_DIR", &roots),
            ("MCP_SKILL_RUN", grant),
            ("WEATHER_API_KEY", "k"),
        ],
    );
    let list = s.tool("skill_list", json!({}));
    let scripts: Vec<&str> = list["skills"][0]["scripts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["script"].as_str())
        .collect();
    assert_eq!(scripts, ["scripts/forecast.js"], "{list}");
    let ran = s.tool("skill_run", confirmed);
    // The grant names no variable, so the one the script asks for is not
    // handed over.
    assert_eq!(ran["stdout"], "key absent\n", "{ran}");
    s.finish();
}

/// DOC-005: `.ci/test`'s prerequisites are written down, complete: every
/// tool `.ci/run` installs for it is in CONTRIBUTING.md's list, and the
/// step that needs root for apt says how to do without it.
#[test]
fn the_gates_prerequisites_are_complete() {
    let run = std::fs::read_to_string(Path::new(ROOT).join(".ci/run")).unwrap();
    let contributing = std::fs::read_to_string(Path::new(ROOT).join("CONTRIBUTING.md")).unwrap();
    // `command -v TOOL` checks, and `need TOOL PACKAGE WHY` installs.
    let needed: BTreeSet<&str> = run
        .split("command -v ")
        .skip(1)
        .filter_map(|s| s.split_whitespace().next())
        .filter(|t| !t.starts_with('"'))
        .chain(
            run.lines()
                .filter_map(|l| l.strip_prefix("need "))
                .filter_map(|l| l.split_whitespace().next()),
        )
        .collect();
    assert!(needed.len() >= 6, "{needed:?}");
    for tool in &needed {
        assert!(
            contributing.contains(&format!("`{tool}`")),
            ".ci/run installs {tool}, which CONTRIBUTING.md's prerequisites do not name"
        );
    }
    assert!(
        contributing.contains("SKIP_NIX_CHECK=1") && contributing.contains("needs root"),
        "CONTRIBUTING.md says the apt step needs root, and how to do without it"
    );
}

/// DOC-005 (issue 41 §2): `.ci/run`, as root on a machine whose apt fails,
/// stops at the first tool it could not install, naming the package and
/// what to do, before any test runs; it says what it installs first.
#[test]
fn the_ci_entry_stops_with_its_own_hint_when_an_install_fails() {
    let bin = tempfile::tempdir().unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let find = |name: &str| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("no {name} on PATH"))
    };
    let bash = find("bash");
    std::os::unix::fs::symlink(find("dirname"), bin.path().join("dirname")).unwrap();
    let script = |name: &str, body: &str| {
        let p = bin.path().join(name);
        std::fs::write(&p, format!("#!{}\n{body}\n", bash.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    script("id", "echo 0");
    script("cargo", "exit 0");
    script(
        "apt-get",
        "echo 'E: Unable to locate package' >&2; exit 100",
    );
    let o = Command::new(&bash)
        .arg(Path::new(ROOT).join(".ci/run"))
        .env_clear()
        .env("PATH", bin.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(out.contains("installing Debian's nodejs"), "{}", show(&o));
    assert!(
        err.contains("nodejs") && err.contains("install") && !err.contains("command not found"),
        "{}",
        show(&o)
    );
}

/// DOC-005: `.ci/nix-check` without nix and without root says what to do
/// and never calls apt; with `SKIP_NIX_CHECK=1` it skips, saying so. Its
/// PATH holds only what it needs before that point, an `id` that answers
/// as an ordinary user, and an `apt-get` that records being called.
#[test]
fn the_nix_check_without_nix_or_root_says_how_to_go_on() {
    let bin = tempfile::tempdir().unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let find = |name: &str| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("no {name} on PATH"))
    };
    let bash = find("bash");
    std::os::unix::fs::symlink(find("dirname"), bin.path().join("dirname")).unwrap();
    let called = bin.path().join("apt-called");
    let script = |name: &str, body: &str| {
        let p = bin.path().join(name);
        std::fs::write(&p, format!("#!{}\n{body}\n", bash.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    script("id", "echo 1000");
    script(
        "apt-get",
        &format!("echo called > {}; exit 1", called.display()),
    );
    let nix_check = |skip: bool| {
        let mut cmd = Command::new(&bash);
        cmd.arg(Path::new(ROOT).join(".ci/nix-check"))
            .env_clear()
            .env("PATH", bin.path());
        if skip {
            cmd.env("SKIP_NIX_CHECK", "1");
        }
        cmd.output().unwrap()
    };
    let o = nix_check(false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        err.contains("needs root") && err.contains("SKIP_NIX_CHECK=1"),
        "{}",
        show(&o)
    );
    assert!(!called.exists(), "apt-get was called without root");
    let o = nix_check(true);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("SKIPPED"),
        "{}",
        show(&o)
    );
    // As root with an apt that fails (issue 41 §2: it died with "nix:
    // command not found", exit 127): its own hint, exit 1.
    script("id", "echo 0");
    let o = nix_check(false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(called.exists(), "apt-get was not tried as root");
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        err.contains("SKIP_NIX_CHECK=1") && !err.contains("command not found"),
        "{}",
        show(&o)
    );
}

/// DOC-006 (issue 41 §5): the README says that Claude Code's "✔ Connected"
/// means the process started, not that skills are served, and to run
/// `check` first or read `skill_list`'s `problems`. (That a folder nobody
/// can read still connects and is named in the instructions, `problems`
/// and the log is tests/speak_up.rs's.)
#[test]
fn the_readme_says_connected_is_not_served() {
    let text = readme::readme();
    let at = text
        .find("\"✔ Connected\" means the server started, not that it serves your skills")
        .expect("the README says what Connected means");
    let para = &text[at..text[at..].find("\n\n").map_or(text.len(), |e| at + e)];
    for needed in ["skill-mcp check /path/to/your/skills", "`problems`", "~"] {
        assert!(para.contains(needed), "{needed}: {para}");
    }
}

/// Issue 42 §7: BENCHMARKS.md is a current page — what is measured, the
/// targets with today's verdicts, the machine and the command — of at most
/// 250 lines, and every later change keeps it so; history lives in git.
#[test]
fn benchmarks_md_is_a_current_page_of_at_most_250_lines() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("BENCHMARKS.md"))
        .expect("BENCHMARKS.md beside the README");
    let lines = text.lines().count();
    assert!(
        lines <= 250,
        "BENCHMARKS.md is {lines} lines: keep it a current page of at most 250 (issue 42 §7) — \
         replace a figure rather than add a pass, and leave history to git"
    );
    for needed in [
        "## What is measured",
        "## Today's verdicts",
        "cargo bench --bench skill-mcp",
    ] {
        assert!(text.contains(needed), "BENCHMARKS.md says {needed:?}");
    }
}

/// Issue 45 §5: conformance/README.md's results table is the skills
/// profile's cases, one row each, and each implementation's column agrees
/// with what the gate holds it to: this server fails nothing (it runs with
/// no deviation list), and rmcp's, FastMCP's and the TypeScript SDK's
/// **FAIL** cells are exactly
/// the cases their deviation lists name — so the table cannot drift from
/// the lists `.ci/test conformance` enforces.
#[test]
fn the_conformance_results_table_is_what_the_gate_enforces() {
    let root = Path::new(ROOT).join("conformance");
    let text = std::fs::read_to_string(root.join("README.md")).expect("conformance/README.md");
    let listed = |file: &str| -> BTreeSet<String> {
        std::fs::read_to_string(root.join("deviations").join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .lines()
            .filter_map(|l| l.strip_prefix("| SKL-"))
            .map(|l| format!("SKL-{}", l.split(' ').next().unwrap_or_default()))
            .collect()
    };
    let cases: BTreeSet<String> = std::fs::read_dir(root.join("sep-2640"))
        .expect("conformance/sep-2640")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("SKL-"))
        .collect();
    let mut rows = BTreeSet::new();
    let (mut rmcp, mut fastmcp, mut ts) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for line in text.lines().filter(|l| l.starts_with("| SKL-")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 7, "a results row has seven cells: {line}");
        let id = cells[0].to_owned();
        assert_ne!(
            cells[3], "**FAIL**",
            "this server runs with no deviation list: {line}"
        );
        if cells[4] == "**FAIL**" {
            rmcp.insert(id.clone());
        }
        if cells[5] == "**FAIL**" {
            fastmcp.insert(id.clone());
        }
        if cells[6] == "**FAIL**" {
            ts.insert(id.clone());
        }
        assert!(rows.insert(id), "one row a case: {line}");
    }
    assert_eq!(
        rows, cases,
        "a row for every case of conformance/sep-2640, and no other"
    );
    assert_eq!(
        rmcp,
        listed("rmcp-skillcatalog.md"),
        "rmcp's column against its list"
    );
    assert_eq!(
        fastmcp,
        listed("fastmcp.md"),
        "FastMCP's column against its list"
    );
    assert_eq!(
        ts,
        listed("ext-skills.md"),
        "the TypeScript SDK's column against its list"
    );
}
