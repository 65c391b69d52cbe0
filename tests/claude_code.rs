//! CLIENT-001: Claude Code (npm `@anthropic-ai/claude-code`, the CLI) as a
//! client of the built binary. `claude mcp add` registers the server,
//! `claude mcp list` health-checks it, and a headless `claude -p` run talks
//! to a scripted stand-in for the Messages API
//! (tests/clients/messages_standin.py) that makes Claude Code call
//! `skill_list`, `skill_load`, `skill_file` and a `skill_run` preview on
//! the bundled skill and checks every `tool_result` Claude Code hands back.
//!
//! Offline: HOME is a fresh temporary directory (its own `~/.claude.json`
//! and `~/.claude/`), the environment is cleared, telemetry, error
//! reporting, the auto-updater and all non-essential traffic are switched
//! off, and the stand-in is also Claude Code's HTTP(S) proxy, so a request
//! for anywhere but 127.0.0.1 is recorded there and fails.
//!
//! Claude Code lives where the README's test command installs it
//! (`.npm-tools` at the repository root); `SKILL_MCP_CLAUDE` overrides.
//!
//! `claude mcp add` and `claude mcp list` are the README's own lines
//! (spec DOC-001), read from it: the server is added in user scope and
//! listed from a directory that is not the one it was added in. So is
//! "Serve a team over HTTP": the README's token and serving commands start
//! the server, and its `claude mcp add --transport http` line registers it
//! by the machine's name with the token, for the same conversation over
//! HTTP (spec HTTP-018).

use crate::common;
use common::readme;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_skill-mcp");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The bundled skill, and the file and script it bundles, that the
/// conversation reads and previews.
const SKILL: &str = "skill-mcp-demo";
const FILE: &str = "references/declaration.md";
const SCRIPT: &str = "scripts/report.js";
const TOOLS: [&str; 4] = ["skill_list", "skill_load", "skill_file", "skill_run"];

fn claude() -> PathBuf {
    let p = std::env::var_os("SKILL_MCP_CLAUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join(".npm-tools/node_modules/.bin/claude"));
    assert!(
        p.exists(),
        "no Claude Code at {}: run the README's test command (.ci/test), which installs it, or set SKILL_MCP_CLAUDE",
        p.display()
    );
    p
}

/// A child in its own process group, killed with everything it started
/// (Claude Code starts the server) when dropped.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = killpg(Pid::from_raw(self.0.id() as i32), Signal::SIGKILL);
        let _ = self.0.wait();
    }
}

struct Ran {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Ran {
    fn show(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// The stand-in and a temporary HOME and project directory, with the
/// server added to Claude Code's config there.
struct Setup {
    dir: tempfile::TempDir,
    port: u16,
    record: PathBuf,
    _standin: Group,
    /// The server is served over HTTP (the stand-in expects no skill_run).
    http: bool,
    /// Hosts Claude Code reaches without the stand-in as its proxy.
    no_proxy: String,
}

impl Setup {
    fn new() -> Setup {
        let s = Setup::standin(false);
        let started = Instant::now();
        s.add_and_list();
        eprintln!(
            "Claude Code: mcp add and mcp list took {:.2?}",
            started.elapsed()
        );
        s
    }

    /// The stand-in, and the temporary tree, with nothing added yet.
    fn standin(http: bool) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        for d in ["home", "project", "elsewhere", "tmp", "out"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        let record = dir.path().join("standin.json");
        let mut cmd = Command::new("python3");
        cmd.arg(Path::new(ROOT).join("tests/clients/messages_standin.py"))
            .arg(&record)
            .arg(Path::new(ROOT).join("skills"))
            .args([SKILL, FILE, SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(dir.path().join("out/standin.stderr")).unwrap())
            .process_group(0);
        if http {
            cmd.env("MESSAGES_STANDIN_HTTP", "1");
        }
        let mut child = cmd.spawn().expect("python3 runs the stand-in");
        let stdout = child.stdout.take().unwrap();
        let standin = Group(child);
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the stand-in prints its port within 60 s");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the stand-in said {line:?}, not PORT <n>"));
        Setup {
            dir,
            port,
            record,
            _standin: standin,
            http,
            no_proxy: "127.0.0.1,localhost".to_owned(),
        }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// `claude ARGS` in the project directory, in a cleared environment,
    /// killed (with the server it started) after `limit`.
    fn claude(&self, name: &str, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Ran {
        self.claude_in("project", name, args, env, limit)
    }

    /// `claude ARGS` in the directory `dir` of the temporary tree.
    fn claude_in(
        &self,
        dir: &str,
        name: &str,
        args: &[&str],
        env: &[(&str, &str)],
        limit: Duration,
    ) -> Ran {
        let here = format!("http://127.0.0.1:{}", self.port);
        let out = self.path(&format!("out/{name}.stdout"));
        let err = self.path(&format!("out/{name}.stderr"));
        let mut cmd = Command::new(claude());
        cmd.args(args)
            .current_dir(self.path(dir))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("TMPDIR", self.path("tmp"))
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("ANTHROPIC_BASE_URL", &here)
            .env("ANTHROPIC_API_KEY", "sk-ant-standin-not-a-key")
            // Anything not for 127.0.0.1 goes to the stand-in as a proxy,
            // which records it and refuses.
            .env("HTTPS_PROXY", &here)
            .env("HTTP_PROXY", &here)
            .env("https_proxy", &here)
            .env("http_proxy", &here)
            .env("NO_PROXY", &self.no_proxy)
            .env("no_proxy", &self.no_proxy)
            // The server's start-up under a loaded machine: a minute.
            .env("MCP_TIMEOUT", "60000")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap())
            .process_group(0);
        let started = Instant::now();
        let mut child = Group(cmd.spawn().expect("claude runs"));
        let status = loop {
            if let Some(status) = child.0.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > limit {
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let took = started.elapsed();
        drop(child); // whatever it left running goes with its group
        let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
        let (stdout, stderr) = (read(&out), read(&err));
        let Some(status) = status else {
            panic!(
                "claude {args:?} did not finish within {limit:?}; killed\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- stand-in\n{}",
                std::fs::read_to_string(&self.record).unwrap_or_default()
            );
        };
        Ran {
            status,
            stdout,
            stderr,
            took,
        }
    }

    /// The README's `claude mcp add` (user scope: every directory, in this
    /// HOME's `~/.claude.json`), with its placeholders as this test has
    /// them; then the README's `claude mcp list`, run in another directory,
    /// connects to it.
    fn add_and_list(&self) {
        let skills = Path::new(ROOT).join("skills");
        let words: Vec<String> = readme_words("claude mcp add skills")
            .iter()
            .map(|w| readme::substitute(w, &skills, Path::new(BIN)))
            .collect();
        assert!(
            words.windows(2).any(|w| w == ["-s", "user"]),
            "the README adds the server in user scope: {words:?}"
        );
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let add = self.claude("mcp-add", &args, &[], Duration::from_secs(120));
        assert!(add.status.success(), "claude mcp add: {}", add.show());
        no_warning_about_the_server("claude mcp add", &add.stderr);
        let config: Value =
            serde_json::from_slice(&std::fs::read(self.path("home/.claude.json")).unwrap())
                .expect("claude mcp add wrote the temporary HOME's ~/.claude.json");
        let added = &config["mcpServers"]["skills"];
        assert!(
            added["command"] == BIN && added["env"]["SKILLS_DIR"] == format!("{ROOT}/skills"),
            "the server is the user's, with its SKILLS_DIR: {config}"
        );
        let in_projects = config["projects"]
            .as_object()
            .into_iter()
            .flat_map(|p| p.values())
            .any(|p| p["mcpServers"].get("skills").is_some());
        assert!(!in_projects, "user scope, not one project's: {config}");

        let words = readme_words("claude mcp list");
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let list = self.claude_in(
            "elsewhere",
            "mcp-list",
            &args,
            &[],
            Duration::from_secs(180),
        );
        assert!(list.status.success(), "claude mcp list: {}", list.show());
        let line = list
            .stdout
            .lines()
            .find(|l| l.starts_with("skills:"))
            .unwrap_or_else(|| panic!("claude mcp list names no server skills: {}", list.show()));
        assert!(
            line.contains(BIN) && line.contains("Connected") && !line.contains("Failed"),
            "claude mcp list: {line:?}\n{}",
            list.show()
        );
        no_warning_about_the_server("claude mcp list", &list.stderr);
    }

    /// "Serve a team over HTTP": the README's token command and its
    /// serving command on every interface (as written, on a free port:
    /// `readme::Served::start`), with this machine's name for `devbox`;
    /// then the README's `claude mcp add --transport http` line with that
    /// name, the port and the token, and the README's `claude mcp list`
    /// from another directory: connected. Claude Code reaches the server
    /// through a relay that keeps what it sent. Two more entries show what
    /// the README says a refusal looks like — the serving command without
    /// `--http-allow-host` (HTTP-003) and a wrong token (HTTP-005) — and
    /// are removed before the conversation.
    fn serve_team_and_add(&mut self) -> Team {
        let home = self.path("owner");
        std::fs::create_dir(&home).unwrap();
        let token = readme::make_token(&home);
        let serve = readme::command("SKILLS_DIR=/path/to/your/skills skill-mcp --http 0.0.0.0:");
        let skills = Path::new(ROOT).join("skills");
        let name = machine_name();
        let allow = format!("--http-allow-host {name}");
        let served = readme::Served::start(
            &serve,
            &skills,
            &home,
            &[("--http-allow-host devbox", &allow)],
        );
        let relay = Relay::to(served.port);
        self.no_proxy = format!("127.0.0.1,localhost,{name}");

        let url = format!("http://{name}:{}/mcp", relay.port);
        let words: Vec<String> = readme_words("claude mcp add --transport http")
            .iter()
            .map(|w| {
                w.replace("http://devbox:8080/mcp", &url)
                    .replace("PASTE-THE-TOKEN", &token)
            })
            .collect();
        assert!(
            words.contains(&url) && words.contains(&format!("Authorization: Bearer {token}")),
            "the README's line names the URL and the token as placeholders: {words:?}"
        );
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let add = self.claude("mcp-add-http", &args, &[], Duration::from_secs(120));
        assert!(add.status.success(), "claude mcp add: {}", add.show());
        no_warning_about_the_server("claude mcp add", &add.stderr);
        let config: Value =
            serde_json::from_slice(&std::fs::read(self.path("home/.claude.json")).unwrap())
                .expect("claude mcp add wrote the temporary HOME's ~/.claude.json");
        let added = &config["mcpServers"]["skills"];
        assert!(
            added["type"] == "http"
                && added["url"] == url.as_str()
                && added["headers"]["Authorization"] == format!("Bearer {token}"),
            "the server is the user's, by URL, with the token: {config}"
        );

        // What the README says a refusal looks like, beside it.
        let unallowed = (name != "localhost").then(|| {
            let bare = serve.replace(" --http-allow-host devbox", "");
            readme::Served::start(&bare, &skills, &home, &[])
        });
        let bearer = format!("Authorization: Bearer {token}");
        let mut refusals = vec![(
            "wrongtoken",
            format!("http://{name}:{}/mcp", served.port),
            "Authorization: Bearer not-the-token-0123456789".to_owned(),
            "HTTP-005",
        )];
        if let Some(u) = &unallowed {
            refusals.push((
                "unallowed",
                format!("http://{name}:{}/mcp", u.port),
                bearer.clone(),
                "HTTP-003",
            ));
        }
        for (entry, url, header, _) in &refusals {
            let args = [
                "mcp",
                "add",
                "--transport",
                "http",
                "-s",
                "user",
                entry,
                url,
                "--header",
                header,
            ];
            let add = self.claude(
                &format!("mcp-add-{entry}"),
                &args,
                &[],
                Duration::from_secs(120),
            );
            assert!(
                add.status.success(),
                "claude mcp add {entry}: {}",
                add.show()
            );
        }

        let words = readme_words("claude mcp list");
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let list = self.claude_in(
            "elsewhere",
            "mcp-list-http",
            &args,
            &[],
            Duration::from_secs(180),
        );
        assert!(list.status.success(), "claude mcp list: {}", list.show());
        let line_of = |entry: &str| {
            list.stdout
                .lines()
                .find(|l| l.starts_with(&format!("{entry}:")))
                .unwrap_or_else(|| {
                    panic!("claude mcp list names no server {entry}: {}", list.show())
                })
                .to_owned()
        };
        let line = line_of("skills");
        assert!(
            line.starts_with(&format!("skills: {url} (HTTP) - ")) && line.contains("✔ Connected"),
            "claude mcp list: {line:?}\n{}",
            list.show()
        );
        for (entry, _, _, rule) in &refusals {
            let line = line_of(entry);
            assert!(
                line.contains("Failed to connect")
                    && line.contains("Authorization header")
                    && line.contains(&format!("Error detail: {rule}")),
                "{entry}: {line:?}"
            );
            let rm = self.claude(
                &format!("mcp-remove-{entry}"),
                &["mcp", "remove", entry, "-s", "user"],
                &[],
                Duration::from_secs(60),
            );
            assert!(
                rm.status.success(),
                "claude mcp remove {entry}: {}",
                rm.show()
            );
        }
        Team {
            _served: served,
            relay,
        }
    }

    /// The headless run, then everything it must have done. `search`: the
    /// skill tools are deferred behind Claude Code's ToolSearch (its
    /// default), which the stand-in calls first.
    fn converse(&self, env: &[(&str, &str)], search: bool) {
        let allowed = TOOLS.map(|t| format!("mcp__skills__{t}")).join(",");
        let run = self.claude(
            "run",
            &[
                "-p",
                "Show me what the skills server serves.",
                "--output-format",
                "json",
                "--allowedTools",
                &allowed,
                "--no-session-persistence",
            ],
            env,
            Duration::from_secs(300),
        );
        let record: Value = serde_json::from_slice(&std::fs::read(&self.record).unwrap())
            .expect("the stand-in's record is JSON");
        let standin_stderr = std::fs::read_to_string(self.path("out/standin.stderr")).unwrap();
        let context = || {
            format!(
                "{}\n--- stand-in\n{record:#}\n--- stand-in stderr\n{standin_stderr}",
                run.show()
            )
        };
        assert!(run.status.success(), "claude -p: {}", context());
        let result: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("claude -p printed no JSON ({e}): {}", context()));

        // Every check the stand-in made on what Claude Code handed back.
        let checks = record["checks"].as_array().unwrap();
        let failed: Vec<&Value> = checks.iter().filter(|c| c["ok"] != true).collect();
        assert!(
            failed.is_empty(),
            "failed checks {failed:#?}\n{}",
            context()
        );
        let steps: &[&str] = if search {
            &["search", "offered", "list", "load", "file", "run"]
        } else {
            &["offered", "list", "load", "file", "run"]
        };
        // Over HTTP skill_run is not offered, so not called.
        for step in steps.iter().filter(|s| !(self.http && **s == "run")) {
            assert!(
                checks.iter().any(|c| c["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{step}: "))),
                "no check of step {step}: {}",
                context()
            );
        }
        assert_eq!(record["tool_search"], search, "{}", context());
        // LIST-015: skill_list and skill_load carry `anthropic/alwaysLoad`,
        // so even with tool search on the first request offers them.
        for t in ["skill_list", "skill_load"] {
            assert!(
                record["first_offered"]
                    .as_array()
                    .is_some_and(|o| o.contains(&serde_json::json!(format!("mcp__skills__{t}")))),
                "{t} not offered in the first request: {}",
                context()
            );
        }
        assert_eq!(record["finished"], true, "{}", context());

        // The run's own verdict: a success whose answer is the stand-in's
        // final text, nothing denied.
        assert_eq!(result["type"], "result", "{}", context());
        assert_eq!(result["subtype"], "success", "{}", context());
        assert_eq!(result["is_error"], false, "{}", context());
        assert_eq!(result["result"], record["final_text"], "{}", context());
        assert_eq!(
            result["permission_denials"],
            serde_json::json!([]),
            "{}",
            context()
        );

        // Nothing but 127.0.0.1.
        let elsewhere: Vec<&Value> = record["requests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["kind"] == "elsewhere")
            .collect();
        assert!(
            elsewhere.is_empty(),
            "Claude Code reached out: {elsewhere:#?}"
        );

        eprintln!(
            "Claude Code {}: the headless run took {:.2?}; {} stderr line(s)",
            if search {
                "(tool search on)"
            } else {
                "(tool search off)"
            },
            run.took,
            run.stderr.lines().count()
        );
        no_warning_about_the_server("claude -p", &run.stderr);
    }
}

/// The server of "Serve a team over HTTP" and the relay in front of it.
struct Team {
    _served: readme::Served,
    relay: Relay,
}

impl Team {
    /// What the README says of Claude Code over HTTP: it sends stateless
    /// 2026-07-28 requests, no session, so it cannot be asked to approve a
    /// run (HTTP-009) even where the owner offers runs.
    fn spoke_stateless(&self) {
        let sent = String::from_utf8_lossy(&self.relay.sent.lock().unwrap()).to_lowercase();
        assert!(
            sent.contains("mcp-protocol-version: 2026-07-28")
                && !sent.contains("mcp-session-id")
                && !sent.contains("\"method\":\"initialize\""),
            "Claude Code opened a session, or spoke another revision; the README says it does not:\n{}",
            &sent[..sent.len().min(4000)]
        );
    }
}

/// The name this machine is reached by, as a teammate would type it: its
/// host name when that reaches a port open on every interface here (a
/// container's or a CI runner's hosts file names it), else `localhost`,
/// saying so.
fn machine_name() -> String {
    use std::net::{TcpListener, TcpStream};
    let open = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = open.local_addr().unwrap().port();
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_owned();
    if !name.is_empty() && name != "localhost" && TcpStream::connect((name.as_str(), port)).is_ok()
    {
        return name;
    }
    eprintln!(
        "this machine's name {name:?} does not reach the server here: Claude Code is given localhost, which every server answers to"
    );
    "localhost".to_owned()
}

/// A TCP relay on every interface to 127.0.0.1:`to`, keeping every byte
/// its clients sent.
struct Relay {
    port: u16,
    sent: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Relay {
    fn to(to: u16) -> Relay {
        use std::io::{Read, Write};
        use std::net::{Shutdown, TcpListener, TcpStream};
        let listener = TcpListener::bind("0.0.0.0:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = sent.clone();
        std::thread::spawn(move || {
            for mut client in listener.incoming().map_while(Result::ok) {
                let Ok(mut server) = TcpStream::connect(("127.0.0.1", to)) else {
                    continue;
                };
                let (Ok(mut back), Ok(mut from)) = (client.try_clone(), server.try_clone()) else {
                    continue;
                };
                let keep = keep.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 16384];
                    while let Ok(n) = client.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        keep.lock().unwrap().extend_from_slice(&buf[..n]);
                        if server.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = server.shutdown(Shutdown::Write);
                });
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut back);
                    let _ = back.shutdown(Shutdown::Write);
                });
            }
        });
        Relay { port, sent }
    }
}

/// The README's command starting `prefix`, as `claude`'s arguments.
fn readme_words(prefix: &str) -> Vec<String> {
    let command = readme::command(prefix);
    let words = shlex::split(&command).unwrap_or_default();
    assert_eq!(
        words.first().map(String::as_str),
        Some("claude"),
        "{command:?}"
    );
    words[1..].to_vec()
}

/// Claude Code's stderr says nothing about this server or its tools'
/// schemas (it warns, for one, about every schema format it does not know).
fn no_warning_about_the_server(what: &str, stderr: &str) {
    let about: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            let l = l.to_lowercase();
            ["schema", "format", "skill", "mcp", "warn"]
                .iter()
                .any(|w| l.contains(w))
        })
        .collect();
    assert!(
        about.is_empty(),
        "{what}: {} stderr line(s) about the server:\n{}",
        about.len(),
        about.join("\n")
    );
}

/// Claude Code's default: MCP tools deferred behind its ToolSearch tool.
#[test]
fn claude_code_adds_lists_and_calls_every_tool_through_its_tool_search() {
    Setup::new().converse(&[], true);
}

/// With tool search off, the same tools offered in the first request.
#[test]
fn claude_code_calls_every_tool_offered_directly_with_tool_search_off() {
    Setup::new().converse(&[("ENABLE_TOOL_SEARCH", "false")], false);
}

/// "Serve a team over HTTP": the README's commands serve the bundled skills
/// on every interface with a token; Claude Code, added by the README's
/// line with the machine's name and the token, lists it connected and
/// calls its tools over HTTP — all but skill_run, which the README's
/// server does not offer — sending stateless requests.
#[test]
fn claude_code_uses_a_team_server_added_as_the_readme_says() {
    let mut s = Setup::standin(true);
    let started = Instant::now();
    let team = s.serve_team_and_add();
    eprintln!(
        "Claude Code over HTTP: mcp add and mcp list took {:.2?}",
        started.elapsed()
    );
    s.converse(&[], true);
    team.spoke_stateless();
}
