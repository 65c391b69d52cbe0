//! The stdio JSON-RPC client: spawns the server (or a baseline build, or
//! either under a wrapper), sends requests, matches replies by id, and
//! reads the server's figures from /proc. Apart from the measurements so
//! they read as calls, not plumbing. The wire is skill_mcp_client's (the
//! runner's and the tests' too); what is the bench's own is which process
//! it starts and what it reads from /proc.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skill_mcp_client::{Client, Options, Process, Stderr, WaitError};

use crate::SERVER;

/// How long any one reply may take before the benchmark gives up.
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// One server process and a small JSON-RPC client over its stdio. Replies
/// are matched by id and may arrive in any order; each is timestamped when
/// its line has been read, before it is parsed, so the client's parsing is
/// not counted in a round trip. Writes go straight to the pipe (no writer
/// thread to hand off to).
pub struct Server {
    client: Client,
    /// Bytes of the last reply waited for.
    pub last_len: usize,
    pub spawned: Instant,
    /// The program whose /proc figures are read.
    exe: PathBuf,
    /// Started under SKILL_MCP_BENCH_WRAP.
    wrapped: bool,
}

impl Server {
    pub fn spawn(root: &Path) -> Server {
        Server::spawn_bin(Path::new(SERVER), root)
    }

    /// `bin` over `root`: the server measured, or a baseline build of it,
    /// under SKILL_MCP_BENCH_WRAP when that is set.
    pub fn spawn_bin(bin: &Path, root: &Path) -> Server {
        Server::spawn_bin_env(bin, root, &[])
    }

    /// The server measured over `root`, with `env` set besides PATH, HOME
    /// and SKILLS_DIR (a setting whose effect is measured).
    pub fn spawn_env(root: &Path, env: &[(&str, &Path)]) -> Server {
        Server::spawn_bin_env(Path::new(SERVER), root, env)
    }

    fn spawn_bin_env(bin: &Path, root: &Path, env: &[(&str, &Path)]) -> Server {
        // SKILL_MCP_BENCH_WRAP: a command (and its arguments) to run the
        // server under, for profiling or allocator experiments.
        let wrap: Vec<String> = std::env::var("SKILL_MCP_BENCH_WRAP")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let cmd = match wrap.split_first() {
            Some((w, rest)) => {
                let mut c = Command::new(w);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        let exe = fs::canonicalize(bin).unwrap_or_else(|_| bin.to_owned());
        let mut cmd = cmd;
        Server::start(&mut cmd, root, exe, !wrap.is_empty(), env)
    }

    /// `node script` over `root` (the original TypeScript server), never
    /// under a wrapper: its figures are node's own.
    pub fn spawn_node(node: &Path, script: &Path, root: &Path) -> Server {
        let mut cmd = Command::new(node);
        cmd.arg(script);
        Server::start(&mut cmd, root, node.to_owned(), false, &[])
    }

    /// Starts `cmd` with only PATH, HOME and SKILLS_DIR=root. `exe` is the
    /// program whose figures are read (under a wrapper, the descendant
    /// running it).
    fn start(
        cmd: &mut Command,
        root: &Path,
        exe: PathBuf,
        wrapped: bool,
        env: &[(&str, &Path)],
    ) -> Server {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .env("SKILLS_DIR", root)
            .envs(env.iter().copied());
        let spawned = Instant::now();
        let process = Process::spawn(
            cmd,
            Options {
                stderr: Stderr::To(Stdio::null()),
                writer_thread: false,
            },
        )
        .unwrap_or_else(|e| panic!("{cmd:?} does not start: {e}"));
        let client = Client::new(process);
        // A wrapper (heaptrack, say) may print to stdout too; the server
        // alone must not.
        let client = if wrapped { client.lenient() } else { client };
        Server {
            client,
            last_len: 0,
            spawned,
            exe,
            wrapped,
        }
    }

    /// Sends a request; returns its id and when it was sent.
    pub fn send(&mut self, method: &str, params: Value) -> (u64, Instant) {
        self.client
            .send_request(method, params)
            .unwrap_or_else(|e| panic!("write to the server: {e}"))
    }

    /// Waits for the reply to `id`, keeping any other reply for later.
    pub fn wait(&mut self, id: u64) -> (Instant, Value) {
        self.try_wait(id).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Server::wait`], saying why instead of panicking when no reply
    /// comes (a phase that makes such a run void rather than stopping).
    pub fn try_wait(&mut self, id: u64) -> Result<(Instant, Value), String> {
        match self.client.wait_reply(id, REPLY_TIMEOUT) {
            Ok(m) => {
                self.last_len = m.wire_len;
                Ok((m.at, m.value))
            }
            Err(WaitError::Timeout) => {
                Err(format!("no reply to request {id} within {REPLY_TIMEOUT:?}"))
            }
            Err(WaitError::Closed(why)) => Err(format!(
                "the server closed stdout before answering request {id}: {why}"
            )),
        }
    }

    /// Walks a paginated list through every `nextCursor`: how many `key`
    /// items it held, and the largest page on the wire in bytes.
    pub fn walk(&mut self, method: &str, key: &str) -> (usize, usize) {
        self.try_walk(method, key).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Server::walk`], saying why instead of panicking on a refusal or
    /// no reply.
    pub fn try_walk(&mut self, method: &str, key: &str) -> Result<(usize, usize), String> {
        let (mut seen, mut largest) = (0, 0);
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let (_, r) = self.try_call(method, params)?;
            largest = largest.max(self.last_len);
            seen += r[key].as_array().map_or(0, Vec::len);
            match r["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => return Ok((seen, largest)),
            }
        }
    }

    /// Waits for a notification named `method`, keeping replies for later;
    /// returns when its line was read.
    pub fn wait_notification(&mut self, method: &str) -> Instant {
        match self.client.wait_notification(method, REPLY_TIMEOUT) {
            Ok(m) => m.at,
            Err(e) => panic!("no {method} within {REPLY_TIMEOUT:?}: {e}"),
        }
    }

    /// Open file descriptors of the server (`/proc/<pid>/fd`).
    pub fn fd_count(&self) -> usize {
        fs::read_dir(format!("/proc/{}/fd", self.server_pid()))
            .expect("read the server's /proc fd directory")
            .count()
    }

    /// A request and its reply; the round trip and the reply's `result`.
    pub fn call(&mut self, method: &str, params: Value) -> (Duration, Value) {
        self.try_call(method, params)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Server::call`], saying why instead of panicking when the request
    /// is refused, cannot be written, or has no reply.
    pub fn try_call(&mut self, method: &str, params: Value) -> Result<(Duration, Value), String> {
        let (id, sent) = self
            .client
            .send_request(method, params)
            .map_err(|e| format!("write to the server: {e}"))?;
        let (at, v) = self.try_wait(id)?;
        Ok((at - sent, try_ok(method, v)?))
    }

    /// A tool call; the round trip and its structuredContent.
    pub fn tool(&mut self, name: &str, args: Value) -> (Duration, Value) {
        let (d, r) = self.call("tools/call", json!({"name": name, "arguments": args}));
        assert_ne!(r["isError"], json!(true), "{name} failed: {r}");
        (d, r["structuredContent"].clone())
    }

    /// initialize (answered after the boot scan) and `initialized`.
    pub fn initialize(&mut self) -> Instant {
        let (at, r) = self.initialize_reply();
        assert_eq!(r["serverInfo"]["name"], "skill-mcp", "{r}");
        at
    }

    fn initialize_reply(&mut self) -> (Instant, Value) {
        self.try_initialize_any().unwrap_or_else(|e| panic!("{e}"))
    }

    /// initialize and `initialized` for any server: the reply's time and
    /// result, or why there is none.
    pub fn try_initialize_any(&mut self) -> Result<(Instant, Value), String> {
        let m =
            self.client
                .initialize("2025-11-25", json!({}), "skill-mcp-bench", REPLY_TIMEOUT)?;
        self.last_len = m.wire_len;
        Ok((m.at, try_ok("initialize", m.value)?))
    }

    /// The server's pid: the child itself, or under a wrapper that does not
    /// exec, the descendant running the server's program (a wrapper may
    /// start helpers too: heaptrack's first child is its interpreter).
    pub fn server_pid(&self) -> u32 {
        let root = self.client.process.pid();
        if !self.wrapped {
            return root;
        }
        let mut todo = std::collections::VecDeque::from([(root, 0)]);
        while let Some((pid, depth)) = todo.pop_front() {
            if fs::read_link(format!("/proc/{pid}/exe")).ok().as_deref() == Some(&*self.exe) {
                return pid;
            }
            if depth < 8 {
                let children = fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
                    .unwrap_or_default();
                todo.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse().ok())
                        .map(|c| (c, depth + 1)),
                );
            }
        }
        panic!(
            "no process runs {} under the wrapper; RSS cannot be read",
            self.exe.display()
        )
    }

    /// A field of /proc/<pid>/status of the server, in KiB.
    pub fn status_kib(&self, field: &str) -> u64 {
        let s = fs::read_to_string(format!("/proc/{}/status", self.server_pid()))
            .expect("read the server's /proc status");
        s.lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc status"))
    }
}

/// node on PATH, if there is one.
pub fn node_on_path() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("node"))
        .find(|p| p.is_file())
}

/// A `skill_list` answer's skills on this page, and how many the listing
/// holds in all (`total` on a page; the page itself when unpaged).
pub fn list_counts(sc: &Value) -> (usize, usize) {
    let page = sc["skills"].as_array().map_or(0, Vec::len);
    let total = sc["total"].as_u64().map_or(page, |t| t as usize);
    (page, total)
}

pub fn ok(method: &str, v: Value) -> Value {
    try_ok(method, v).unwrap_or_else(|e| panic!("{e}"))
}

/// A reply's `result`, or that `method` was refused.
pub fn try_ok(method: &str, v: Value) -> Result<Value, String> {
    match v.get("result") {
        Some(r) => Ok(r.clone()),
        None => Err(format!("{method} was refused: {v}")),
    }
}
