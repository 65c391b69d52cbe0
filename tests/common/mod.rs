//! What the integration tests share: a JSON-RPC-over-stdio session for
//! tests that look at the server from the outside in ways the conformance
//! runner does not (install layouts, files changed after boot, a
//! third-party client), on the client crate the runner and the bench use
//! too (conformance/client), and the fixtures several tests write.

#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use skill_mcp_client::{Client, Event, Options, Process, Stderr, WaitError};

pub mod http;
pub mod model2vec;
pub mod readme;
pub mod sockets;

pub const BIN: &str = env!("CARGO_BIN_EXE_skill-mcp");

pub struct Session {
    client: Client,
}

impl Session {
    /// Starts `bin` with exactly `env` (plus PATH) and performs the handshake.
    pub fn start(bin: &Path, env: &[(&str, &str)]) -> Session {
        Session::start_command(Command::new(bin), env)
    }

    /// As `start`, for a command that starts the server some other way
    /// (under `setpriv`, or with a descriptor it should inherit).
    pub fn start_command(cmd: Command, env: &[(&str, &str)]) -> Session {
        Session::start_logging(cmd, env, Stdio::null())
    }

    /// As `start_command`, with the server's stderr sent to `stderr` (a
    /// file, for a test of what the server logs).
    pub fn start_logging(cmd: Command, env: &[(&str, &str)], stderr: Stdio) -> Session {
        Session::start_declaring(cmd, env, stderr, json!({}))
    }

    /// As `start_logging`, declaring `capabilities` at initialize (a client
    /// that can be asked through elicitation, RUN-028).
    pub fn start_declaring(
        cmd: Command,
        env: &[(&str, &str)],
        stderr: Stdio,
        capabilities: Value,
    ) -> Session {
        let mut client = Client::new(spawn(cmd, env, stderr));
        let init = client
            .initialize("2025-11-25", capabilities, "tests", Duration::from_secs(20))
            .expect("a reply to initialize within 20 s")
            .value;
        assert_eq!(init["result"]["serverInfo"]["name"], "skill-mcp", "{init}");
        Session { client }
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.client
            .notify(method, Some(params))
            .expect("write to server");
    }

    fn send(&mut self, msg: Value) {
        self.client.send(&msg).expect("write to server");
    }

    /// Sends a request and waits (at most 20 s) for the reply with its id.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let line = self.request_line(method, params);
        serde_json::from_str(&line).expect("stdout carries JSON only")
    }

    /// As `request`, but the reply's line exactly as the server wrote it.
    pub fn request_line(&mut self, method: &str, params: Value) -> String {
        let id = self.send_request(method, params);
        match self.client.wait_reply(id, Duration::from_secs(20)) {
            Ok(m) => m.line,
            Err(WaitError::Timeout) => panic!("a reply within 20 s"),
            Err(e) => panic!("stdout carries JSON only: {e}"),
        }
    }

    /// Sends `msg` as it is (any id, or none) without waiting.
    pub fn send_message(&mut self, msg: Value) {
        self.send(msg);
    }

    /// The next line the server writes, within 20 s.
    pub fn next_line(&mut self) -> String {
        line_within(&self.client.process, Duration::from_secs(20)).expect("a reply within 20 s")
    }

    /// The next line the server writes, if one comes within `within`.
    pub fn line_within(&mut self, within: Duration) -> Option<String> {
        line_within(&self.client.process, within)
    }

    /// Calls a tool and returns its structuredContent (panics on isError).
    pub fn tool(&mut self, name: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        assert_ne!(r["result"]["isError"], json!(true), "{r}");
        r["result"]["structuredContent"].clone()
    }

    pub fn pid(&self) -> u32 {
        self.client.process.pid()
    }

    /// Sends SIGHUP and waits, 20 s at most, until `skill_list` reports a
    /// generation past `from`: the rescan it asked for has been swapped in.
    pub fn rescan_after_hangup(&mut self, from: u64) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.pid() as i32),
            nix::sys::signal::Signal::SIGHUP,
        )
        .unwrap();
        let t = std::time::Instant::now();
        while self.tool("skill_list", json!({"limit": 1}))["generation"] == from {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "no rescan after SIGHUP"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Closes stdin (the client's input ends) and keeps reading.
    pub fn close_stdin(&mut self) {
        self.client.process.close_stdin();
    }

    /// Closes stdin and waits for a clean exit.
    pub fn finish(mut self) -> std::process::ExitStatus {
        self.client.process.close_stdin();
        for _ in 0..100 {
            if let Ok(Some(status)) = self.client.process.try_wait() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Dropping the session kills the server.
        panic!("server did not exit within 5 s of stdin closing");
    }
}

/// Requests that overlap: a reply is waited for by id while other replies
/// are kept rather than dropped (a `skill_run` in flight while `skill_list`
/// is polled).
impl Session {
    /// Sends a request without waiting; returns its id for `reply_to`.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.client
            .send_request(method, params)
            .expect("write to server")
            .0
    }

    /// The reply with `id`, from `kept` or from the wire within `within`;
    /// any other reply read meanwhile is pushed onto `kept`. `None` when
    /// none came in time.
    pub fn reply_to(&mut self, id: u64, kept: &mut Vec<Value>, within: Duration) -> Option<Value> {
        if let Some(i) = kept.iter().position(|v| v["id"] == json!(id)) {
            return Some(kept.remove(i));
        }
        let deadline = std::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = line_within(&self.client.process, left)?;
            let v: Value = serde_json::from_str(&line).expect("stdout carries JSON only");
            if v["id"] == json!(id) {
                return Some(v);
            }
            if v.get("id").is_some() {
                kept.push(v);
            }
        }
    }

    /// `tool`, keeping any other reply that arrives meanwhile in `kept`.
    pub fn tool_keeping(&mut self, name: &str, args: Value, kept: &mut Vec<Value>) -> Value {
        let id = self.send_request("tools/call", json!({"name": name, "arguments": args}));
        let r = self
            .reply_to(id, kept, Duration::from_secs(20))
            .expect("a reply within 20 s");
        assert_ne!(r["result"]["isError"], json!(true), "{r}");
        r["result"]["structuredContent"].clone()
    }
}

/// Starts `cmd` with exactly `env` (plus PATH) and its stderr to `stderr`;
/// its stdout is read line by line on a thread of its own.
fn spawn(mut cmd: Command, env: &[(&str, &str)], stderr: Stdio) -> Process {
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Process::spawn(
        &mut cmd,
        Options {
            stderr: Stderr::To(stderr),
            writer_thread: false,
        },
    )
    .expect("server starts")
}

/// The next line `p` writes, if one comes within `within` (`None` too once
/// stdout has ended: a test of the wire sees the end as no more lines).
fn line_within(p: &Process, within: Duration) -> Option<String> {
    match p.recv(within).ok()? {
        Event::Line { text, .. } => Some(String::from_utf8(text).expect("stdout carries UTF-8")),
        _ => None,
    }
}

/// The server driven line by line with no handshake, for tests of the wire
/// itself; a test file adds the readers it needs (`impl Raw` there).
pub struct Raw {
    pub process: Process,
}

impl Raw {
    /// The built server serving `skills`.
    pub fn start(skills: &Path) -> Raw {
        let dir = skills.to_str().expect("a UTF-8 path");
        Raw {
            process: spawn(Command::new(BIN), &[("SKILLS_DIR", dir)], Stdio::null()),
        }
    }

    /// Writes `line` and a newline, as it is.
    pub fn send(&mut self, line: &str) {
        self.process
            .send_line(line.as_bytes())
            .expect("write to server");
    }

    /// The next line the server writes, if one comes within `within`.
    pub fn line_within(&self, within: Duration) -> Option<String> {
        line_within(&self.process, within)
    }
}

/// Raw lines as transport.rs reads them (transport.rs adds JSON
/// readers of its own: one type, so the names must differ).
impl Raw {
    /// The next line, within 20 s.
    pub fn next_line(&self) -> String {
        self.line_within(Duration::from_secs(20))
            .expect("a reply within 20 s")
    }

    /// The next line that is not a notification.
    pub fn answer_line(&self) -> String {
        loop {
            let l = self.next_line();
            if !l.contains(r#""method":"notifications/"#) {
                return l;
            }
        }
    }

    /// The built server serving `skills`, in a 2025-11-25 session (its
    /// `initialize` answered, `notifications/initialized` sent).
    pub fn in_session(skills: &Path) -> Raw {
        let mut raw = Raw::start(skills);
        raw.send(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "tests", "version": "0"}}})
            .to_string(),
        );
        let answer = raw.answer_line();
        assert!(answer.contains(r#""serverInfo""#), "{answer}");
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }
}

/// A skill `s` under `root` whose script `sleep.js` runs until it is
/// killed (a run that is in flight for as long as a test needs).
pub fn sleeping_skill(root: &Path) {
    let s = root.join("s");
    std::fs::create_dir_all(&s).expect("mkdir");
    std::fs::write(
        s.join("SKILL.md"),
        "---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: sleep.js\n      interpreter: node\n      timeout: 60\n---\nbody\n",
    )
    .expect("write SKILL.md");
    std::fs::write(s.join("sleep.js"), "setInterval(() => {}, 1000);").expect("write sleep.js");
}

/// Writes a minimal skill.
pub fn skill(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir.join(name)).expect("mkdir");
    std::fs::write(
        dir.join(name).join("SKILL.md"),
        format!("---\nname: {name}\ndescription: d\n---\nbody\n"),
    )
    .expect("write");
}

pub fn names(list: &Value) -> Vec<String> {
    list["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| s["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in KiB.
pub fn proc_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// The conformance runner, built on first use. It is its own crate (so it
/// cannot link the server's code), and Cargo hands a test only the
/// binaries of its own package, so the runner is built here — a no-op when
/// it is up to date — into the target directory this test runs from.
pub fn runner() -> &'static Path {
    static RUNNER: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    RUNNER.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test's own path");
        // target/<profile>/deps/<test> → target
        let target = exe
            .ancestors()
            .nth(3)
            .expect("a test runs from target/<profile>/deps");
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "-p",
                "skill-mcp-conformance",
                "--target-dir",
            ])
            .arg(target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the conformance runner failed");
        target.join("debug/skill-mcp-conformance")
    })
}

/// The server `cmd` started with exactly `env` (plus PATH), fed `lines`
/// and then the end of its input: how it exited and all it wrote to stdout
/// and stderr (for a test of what one short session logs).
pub fn run_lines(mut cmd: Command, env: &[(&str, &str)], lines: &[&str]) -> std::process::Output {
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("server starts");
    let mut stdin = child.stdin.take().expect("stdin piped");
    for line in lines {
        writeln!(stdin, "{line}").expect("write to server");
    }
    drop(stdin);
    child.wait_with_output().expect("server output")
}

/// The `detail` of the `setting` problem for `var` in a `skill_list`
/// answer's structured content, failing (with `case` and the answer) when
/// there is none or it is of another reason.
pub fn setting_problem(list: &Value, var: &str, case: &str) -> String {
    let p = list["problems"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["path"] == var))
        .unwrap_or_else(|| panic!("{case}: no problem for {var} in {list}"));
    assert_eq!(p["reason"], "setting", "{case}: {p}");
    p["detail"].as_str().unwrap_or_default().to_owned()
}

/// Debian's nginx (`.ci/run` installs it), or one on `PATH` (the Nix
/// sandbox's, from the flake's tests gate).
pub fn nginx() -> std::path::PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("nginx"));
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .chain(on_path)
        .find(|p| p.is_file())
        .expect("nginx is not installed: apt-get install nginx (.ci/run does)")
}
