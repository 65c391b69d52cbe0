//! The stdio JSON-RPC client: spawns the server (or a baseline build, or
//! either under a wrapper), sends requests, matches replies by id, and
//! reads the server's figures from /proc. Apart from the measurements so
//! they read as calls, not plumbing.

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::SERVER;

/// How long any one reply may take before the benchmark gives up.
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// One server process and a small JSON-RPC client over its stdio. Replies
/// are matched by id and may arrive in any order; each is timestamped when
/// its line has been read, before it is parsed, so the client's parsing is
/// not counted in a round trip.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<(Instant, usize, Value)>,
    early: HashMap<u64, (Instant, usize, Value)>,
    /// Bytes of the last reply waited for.
    pub last_len: usize,
    next_id: u64,
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
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let spawned = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{cmd:?} does not start: {e}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, replies) = channel();
        // A wrapper (heaptrack, say) may print to stdout too; the server
        // alone must not.
        let lenient = wrapped;
        std::thread::spawn(move || {
            let mut r = BufReader::with_capacity(1 << 20, stdout);
            let mut line = String::new();
            loop {
                line.clear();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let at = Instant::now();
                let v: Value = match serde_json::from_str(&line) {
                    Ok(v) => v,
                    Err(_) if lenient => {
                        eprintln!("(wrapper) {}", line.trim_end());
                        continue;
                    }
                    Err(e) => panic!("the server wrote a line that is not JSON ({e}): {line:.200}"),
                };
                if tx.send((at, line.len(), v)).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            replies,
            early: HashMap::new(),
            last_len: 0,
            next_id: 1,
            spawned,
            exe,
            wrapped,
        }
    }

    fn write(&mut self, msg: &Value) -> Instant {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let mut line = serde_json::to_vec(msg).expect("a request serializes");
        line.push(b'\n');
        let t = Instant::now();
        stdin.write_all(&line).expect("write to the server");
        stdin.flush().expect("flush to the server");
        t
    }

    /// Sends a request; returns its id and when it was sent.
    pub fn send(&mut self, method: &str, params: Value) -> (u64, Instant) {
        let id = self.next_id;
        self.next_id += 1;
        let t =
            self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        (id, t)
    }

    fn notify(&mut self, method: &str) {
        self.write(&json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Waits for the reply to `id`, keeping any other reply for later.
    pub fn wait(&mut self, id: u64) -> (Instant, Value) {
        if let Some((at, len, v)) = self.early.remove(&id) {
            self.last_len = len;
            return (at, v);
        }
        loop {
            let (at, len, v) = match self.replies.recv_timeout(REPLY_TIMEOUT) {
                Ok(r) => r,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no reply to request {id} within {REPLY_TIMEOUT:?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server closed stdout before answering request {id}")
                }
            };
            // Notifications and server-to-client requests are not replies.
            if v.get("method").is_some() {
                continue;
            }
            let Some(got) = v.get("id").and_then(Value::as_u64) else {
                continue;
            };
            if got == id {
                self.last_len = len;
                return (at, v);
            }
            self.early.insert(got, (at, len, v));
        }
    }

    /// Walks a paginated list through every `nextCursor`: how many `key`
    /// items it held, and the largest page on the wire in bytes.
    pub fn walk(&mut self, method: &str, key: &str) -> (usize, usize) {
        let (mut seen, mut largest) = (0, 0);
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let (_, r) = self.call(method, params);
            largest = largest.max(self.last_len);
            seen += r[key].as_array().map_or(0, Vec::len);
            match r["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => return (seen, largest),
            }
        }
    }

    /// Waits for a notification named `method`, keeping replies for later;
    /// returns when its line was read.
    pub fn wait_notification(&mut self, method: &str) -> Instant {
        loop {
            let (at, len, v) = match self.replies.recv_timeout(REPLY_TIMEOUT) {
                Ok(r) => r,
                Err(e) => panic!("no {method} within {REPLY_TIMEOUT:?}: {e:?}"),
            };
            if v.get("method").and_then(Value::as_str) == Some(method) {
                return at;
            }
            if let Some(got) = v.get("id").and_then(Value::as_u64) {
                self.early.insert(got, (at, len, v));
            }
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
        let (id, sent) = self.send(method, params);
        let (at, v) = self.wait(id);
        let result = ok(method, v);
        (at - sent, result)
    }

    /// A tool call; the round trip and its structuredContent.
    pub fn tool(&mut self, name: &str, args: Value) -> (Duration, Value) {
        let (d, r) = self.call("tools/call", json!({"name": name, "arguments": args}));
        assert_ne!(r["isError"], json!(true), "{name} failed: {r}");
        (d, r["structuredContent"].clone())
    }

    /// initialize (answered after the boot scan) and `initialized`.
    pub fn initialize(&mut self) -> Instant {
        let (id, _) = self.send(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "skill-mcp-bench", "version": "0"}}),
        );
        let (at, v) = self.wait(id);
        let r = ok("initialize", v);
        assert_eq!(r["serverInfo"]["name"], "skill-mcp", "{r}");
        self.notify("notifications/initialized");
        at
    }

    /// initialize and `initialized` for any server (a peer answers with
    /// its own serverInfo); when the reply was read.
    pub fn initialize_any(&mut self) -> Instant {
        let (id, _) = self.send(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "skill-mcp-bench", "version": "0"}}),
        );
        let (at, v) = self.wait(id);
        ok("initialize", v);
        self.notify("notifications/initialized");
        at
    }

    /// The server's pid: the child itself, or under a wrapper that does not
    /// exec, the descendant running the server's program (a wrapper may
    /// start helpers too: heaptrack's first child is its interpreter).
    pub fn server_pid(&self) -> u32 {
        let root = self.child.id();
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

impl Drop for Server {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    match v.get("result") {
        Some(r) => r.clone(),
        None => panic!("{method} was refused: {v}"),
    }
}
