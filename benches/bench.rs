//! The skill-mcp benchmark (issue "Benchmarks"): speed and memory of every
//! hot path, measured against the release binary over real stdio, each
//! figure the median of several runs, printed as a table with its target
//! and PASS/MISS.
//!
//! ```text
//! cargo bench --bench skill-mcp              # the full run (BENCHMARKS.md)
//! cargo bench --bench skill-mcp -- --quick   # under a minute once built
//! ```
//!
//! `cargo bench` builds the `skill-mcp` binary with the bench profile
//! (which inherits `release`) into the same target directory as this
//! program, and hands its path over as `CARGO_BIN_EXE_skill-mcp`; that is
//! the server measured. Trees are generated under a temporary directory
//! and deleted afterwards. Everything is measured with a warm page cache
//! (the tree was just written, and the floor reads it the same way).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The release server, built by `cargo bench` beside this program.
const SERVER: &str = env!("CARGO_BIN_EXE_skill-mcp");

/// Files in every generated skill, SKILL.md included: 10,000 skills make
/// the 100,000-file catalog `resources/list` is walked over.
const FILES_PER_SKILL: usize = 10;

/// The tree size the targets are stated for.
const TARGET_SKILLS: usize = 10_000;

/// How long any one reply may take before the benchmark gives up.
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------- settings

struct Settings {
    quick: bool,
    /// Regenerate the trees even when complete ones are kept.
    fresh: bool,
    sizes: Vec<usize>,
    /// Fresh servers booted per tree size (boot, first skill_list, VmHWM).
    boots: usize,
    /// Samples of each round trip.
    trips: usize,
    /// Full walks of resources/list.
    walks: usize,
    /// Pairs of (bare node, skill_run).
    run_pairs: usize,
    /// Calls in the memory-flatness run.
    mixed_calls: usize,
    /// Which phases run: boot, trips, run, mixed (all by default).
    only: Vec<String>,
}

const PHASES: &[&str] = &["boot", "trips", "run", "mixed", "rescan"];

impl Settings {
    fn runs(&self, phase: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|p| p == phase)
    }
}

impl Settings {
    fn from_args() -> Settings {
        let mut quick = false;
        let mut fresh = false;
        let mut sizes = None;
        let mut only = Vec::new();
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                "--quick" => quick = true,
                "--fresh" => fresh = true,
                "--sizes" => {
                    let v = args.next().unwrap_or_default();
                    let parsed: Result<Vec<usize>, _> = v
                        .split(',')
                        .map(|x| x.trim().replace('_', "").parse())
                        .collect();
                    match parsed {
                        Ok(list) if !list.is_empty() && list.iter().all(|&n| n > 0) => {
                            sizes = Some(list)
                        }
                        _ => {
                            eprintln!("skill-mcp bench: --sizes takes numbers like 100,1000");
                            std::process::exit(2);
                        }
                    }
                }
                "--only" => {
                    only = args
                        .next()
                        .unwrap_or_default()
                        .split(',')
                        .map(str::to_owned)
                        .collect();
                    if let Some(bad) = only.iter().find(|p| !PHASES.contains(&p.as_str())) {
                        eprintln!("skill-mcp bench: unknown phase {bad:?} (phases: {PHASES:?})");
                        std::process::exit(2);
                    }
                }
                // cargo bench passes --bench to a harness = false target.
                "--bench" => {}
                "-h" | "--help" => {
                    println!(
                        "usage: cargo bench --bench skill-mcp [-- [--quick] [--fresh] [--sizes N,..] [--only PHASE,..]]\n\n\
                         --quick         fewer runs and 1,000 mixed calls (under a minute once built)\n\
                         --fresh         regenerate the skill trees kept in the target directory\n\
                         --sizes N,..    tree sizes (default 100,1000,10000); skill_run and the mixed\n\
                         \x20               calls run on the largest; targets are judged at 10,000 only\n\
                         --only PHASE,.. boot, trips, run, mixed, rescan (default: all)\n\n\
                         SKILL_MCP_BENCH_BASELINE=PATH also boots another build of the server\n\
                         (e.g. one from before a change) interleaved with this one, for a\n\
                         boot-time comparison on the same trees.\n\
                         SKILL_MCP_BENCH_WRAP=\"cmd args\" runs the server under a wrapper (e.g.\n\
                         \"env MALLOC_ARENA_MAX=2\" or \"heaptrack -o FILE\"; RSS is read from\n\
                         the server process under it, timings include the wrapper's overhead)"
                    );
                    std::process::exit(0);
                }
                other => {
                    eprintln!("skill-mcp bench: unknown argument {other:?} (try --help)");
                    std::process::exit(2);
                }
            }
        }
        let sizes = sizes.unwrap_or_else(|| vec![100, 1_000, 10_000]);
        if quick {
            Settings {
                quick,
                fresh,
                only,
                sizes,
                boots: 3,
                trips: 5,
                walks: 1,
                run_pairs: 7,
                mixed_calls: 1_000,
            }
        } else {
            Settings {
                quick,
                fresh,
                only,
                sizes,
                boots: 11,
                trips: 31,
                walks: 3,
                run_pairs: 31,
                mixed_calls: 10_000,
            }
        }
    }
}

// ------------------------------------------------------------- statistics

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    }
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A tiny deterministic generator (xorshift64*), so every run makes the
/// same trees and the same call mix.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

// ------------------------------------------------------------------ trees

const PREFIXES: &[&str] = &[
    "pdf", "docx", "brand", "webapp", "data", "api", "mcp", "art", "slides", "sheets",
];
const WORDS: &[&str] = &[
    "report", "builder", "checker", "guide", "export", "review", "format", "render",
];

fn skill_name(i: usize) -> String {
    format!(
        "{}-{}-{i:05}",
        PREFIXES[i % PREFIXES.len()],
        WORDS[(i / PREFIXES.len()) % WORDS.len()]
    )
}

fn skill_md(name: &str, i: usize) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "---\n\
name: {name}\n\
description: Builds, checks and exports {w} documents for the {p} workflow; use it to turn raw notes into a reviewed, formatted deliverable with a consistent house style.\n\
when-to-use: When the user asks for a {w} in the {p} format, or to check that an existing one follows the guide in references/guide.md.\n\
license: MIT\n\
compatibility: Needs node 18 or later for the bundled scripts.\n\
allowed-tools: skill_file skill_run\n\
metadata:\n  author: bench\n  version: \"1.{i}\"\n  tags: \"{p}, {w}\"\n\
mcp-host:\n\
\x20 version: 1\n\
\x20 run:\n\
\x20   - script: scripts/noop.js\n\
\x20     interpreter: node\n\
\x20     timeout: 15\n\
\x20   - script: scripts/build.js\n\
\x20     interpreter: node\n\
\x20     env: [BENCH_API_KEY, BENCH_REGION]\n\
\x20     timeout: 120\n\
\x20 env:\n\
\x20   - name: BENCH_API_KEY\n\
\x20     secret: true\n\
\x20     description: The key the export API wants.\n\
\x20     required: true\n\
\x20   - name: BENCH_REGION\n\
\x20     description: Which region to export to.\n\
\x20 egress: [api.example.com, cdn.example.com]\n\
---\n\
# {name}\n\n",
        p = PREFIXES[i % PREFIXES.len()],
        w = WORDS[(i / PREFIXES.len()) % WORDS.len()],
    );
    for section in ["Overview", "Steps", "Checks", "Output", "Troubleshooting"] {
        let _ = write!(
            body,
            "## {section}\n\n\
1. Read `references/guide.md` with skill_file before starting, and keep its rules in mind.\n\
2. Gather the inputs; when a table is needed, start from `data/sample.csv`.\n\
3. Run `scripts/build.js` with skill_run (preview first, then confirm) to produce the draft.\n\
4. Compare the draft with `assets/template.json` and fix what differs.\n\n"
        );
    }
    body
}

/// Deterministic filler text of exactly `n` bytes (ASCII, so UTF-8).
fn text(n: usize, seed: u64) -> Vec<u8> {
    const LINE: &[u8] =
        b"The quick brown fox checks every path against the fence before it reads a byte.\n";
    let mut v = Vec::with_capacity(n);
    let mut k = seed as usize;
    while v.len() < n {
        v.push(LINE[k % LINE.len()]);
        k += 1;
    }
    v
}

/// The nine bundled files besides SKILL.md: (path, contents).
fn bundle_files() -> Vec<(&'static str, Vec<u8>)> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    while png.len() < 4096 {
        png.push(r.next() as u8);
    }
    let mut csv = b"id,name,amount,region\n".to_vec();
    let mut row = 0;
    while csv.len() < 8 * 1024 - 40 {
        csv.extend(format!("{row},item-{row},{}.{:02},eu-west\n", row * 7, row % 100).bytes());
        row += 1;
    }
    vec![
        ("scripts/noop.js", b"process.exit(0);\n".to_vec()),
        ("scripts/build.js", text(3 * 1024, 1)),
        ("references/guide.md", text(1024, 2)),
        ("references/api.md", text(6 * 1024, 3)),
        ("references/notes.txt", text(300, 4)),
        ("assets/logo.png", png),
        ("assets/template.json", text(700, 5)),
        ("data/sample.csv", csv),
        ("LICENSE.txt", text(1100, 6)),
    ]
}

/// The 1 MiB file, in the first skill only (as `data/sample.csv`).
const BIG_FILE: &str = "data/sample.csv";
const ONE_MIB: usize = 1024 * 1024;

struct Tree {
    root: PathBuf,
    names: Vec<String>,
    files: usize,
    reused: bool,
}

/// Bump when the generated trees change, so a kept tree is never reused
/// with the wrong shape.
const TREE_VERSION: u32 = 1;

/// Where generated trees are kept: beside the server, in the target
/// directory, so `cargo clean` removes them and a second run reuses them.
fn trees_dir() -> PathBuf {
    let release = Path::new(SERVER).parent().expect("the server's directory");
    release
        .parent()
        .unwrap_or(release)
        .join("skill-mcp-bench-trees")
}

/// The tree of `n` skills, generated unless a complete one is kept.
fn make_tree(n: usize, fresh: bool) -> Tree {
    let dir = trees_dir().join(format!("v{TREE_VERSION}-{n}"));
    let root = dir.join("skills");
    let marker = dir.join("complete");
    let mut names: Vec<String> = (0..n).map(skill_name).collect();
    names.sort();
    let reused = !fresh && marker.is_file();
    if !reused {
        if dir.exists() {
            fs::remove_dir_all(&dir).expect("remove an incomplete or stale tree");
        }
        let files = bundle_files();
        let big = text(ONE_MIB, 7);
        for i in 0..n {
            let name = skill_name(i);
            let s = root.join(&name);
            for sub in ["scripts", "references", "assets", "data"] {
                fs::create_dir_all(s.join(sub)).expect("mkdir in the tree");
            }
            fs::write(s.join("SKILL.md"), skill_md(&name, i)).expect("write SKILL.md");
            for (path, bytes) in &files {
                let bytes = if i == 0 && *path == BIG_FILE {
                    &big
                } else {
                    bytes
                };
                fs::write(s.join(path), bytes).expect("write a bundled file");
            }
        }
        fs::write(&marker, "").expect("mark the tree complete");
    }
    Tree {
        root,
        names,
        files: n * FILES_PER_SKILL,
        reused,
    }
}

/// The skill that holds the 1 MiB file.
fn big_skill() -> String {
    skill_name(0)
}

// ------------------------------------------------------------------ floor

/// `find <tree> -type f`, then reading every SKILL.md it listed: the least
/// any scan of the tree must do.
fn floor(tree: &Tree) -> Duration {
    let t = Instant::now();
    let out = Command::new("find")
        .arg(&tree.root)
        .args(["-type", "f"])
        .stderr(Stdio::inherit())
        .output()
        .expect("find runs");
    assert!(out.status.success(), "find failed on the tree");
    let listing = String::from_utf8(out.stdout).expect("find prints UTF-8 paths here");
    let mut mds = 0;
    let mut bytes = 0;
    let mut all = 0;
    for line in listing.lines() {
        all += 1;
        if line.ends_with("/SKILL.md") {
            bytes += fs::read(line).expect("read SKILL.md").len();
            mds += 1;
        }
    }
    let d = t.elapsed();
    assert_eq!(mds, tree.names.len(), "find saw every SKILL.md");
    assert_eq!(
        all, tree.files,
        "the tree holds exactly the generated files"
    );
    assert!(bytes > 0);
    d
}

// ----------------------------------------------------------------- client

/// One server process and a small JSON-RPC client over its stdio. Replies
/// are matched by id and may arrive in any order; each is timestamped when
/// its line has been read, before it is parsed, so the client's parsing is
/// not counted in a round trip.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<(Instant, usize, Value)>,
    early: HashMap<u64, (Instant, usize, Value)>,
    /// Bytes of the last reply waited for.
    last_len: usize,
    next_id: u64,
    spawned: Instant,
}

impl Server {
    fn spawn(root: &Path) -> Server {
        Server::spawn_bin(Path::new(SERVER), root)
    }

    /// `bin` over `root`: the server measured, or a baseline build of it.
    fn spawn_bin(bin: &Path, root: &Path) -> Server {
        // SKILL_MCP_BENCH_WRAP: a command (and its arguments) to run the
        // server under, for profiling or allocator experiments.
        let wrap: Vec<String> = std::env::var("SKILL_MCP_BENCH_WRAP")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut cmd = match wrap.split_first() {
            Some((w, rest)) => {
                let mut c = Command::new(w);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .env("SKILLS_DIR", root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let spawned = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("the server {} does not start: {e}", bin.display()));
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, replies) = channel();
        // A wrapper (heaptrack, say) may print to stdout too; the server
        // alone must not.
        let lenient = !wrap.is_empty();
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
    fn send(&mut self, method: &str, params: Value) -> (u64, Instant) {
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
    fn wait(&mut self, id: u64) -> (Instant, Value) {
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
    fn walk(&mut self, method: &str, key: &str) -> (usize, usize) {
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
    fn wait_notification(&mut self, method: &str) -> Instant {
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
    fn fd_count(&self) -> usize {
        fs::read_dir(format!("/proc/{}/fd", self.server_pid()))
            .expect("read the server's /proc fd directory")
            .count()
    }

    /// A request and its reply; the round trip and the reply's `result`.
    fn call(&mut self, method: &str, params: Value) -> (Duration, Value) {
        let (id, sent) = self.send(method, params);
        let (at, v) = self.wait(id);
        let result = ok(method, v);
        (at - sent, result)
    }

    /// A tool call; the round trip and its structuredContent.
    fn tool(&mut self, name: &str, args: Value) -> (Duration, Value) {
        let (d, r) = self.call("tools/call", json!({"name": name, "arguments": args}));
        assert_ne!(r["isError"], json!(true), "{name} failed: {r}");
        (d, r["structuredContent"].clone())
    }

    /// initialize (answered after the boot scan) and `initialized`.
    fn initialize(&mut self) -> Instant {
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

    /// The server's pid: the child itself, or under a wrapper that does not
    /// exec, the first descendant running the server binary.
    fn server_pid(&self) -> u32 {
        let mut pid = self.child.id();
        let target = fs::canonicalize(SERVER).ok();
        for _ in 0..8 {
            if fs::read_link(format!("/proc/{pid}/exe")).ok() == target {
                return pid;
            }
            let children =
                fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
            match children
                .split_whitespace()
                .next()
                .and_then(|c| c.parse().ok())
            {
                Some(c) => pid = c,
                None => break,
            }
        }
        panic!("no process runs {SERVER} under the wrapper; RSS cannot be read")
    }

    /// A field of /proc/<pid>/status of the server, in KiB.
    fn status_kib(&self, field: &str) -> u64 {
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

fn ok(method: &str, v: Value) -> Value {
    match v.get("result") {
        Some(r) => r.clone(),
        None => panic!("{method} was refused: {v}"),
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

// ------------------------------------------------------------------ table

#[derive(Clone, Copy)]
enum Target {
    None,
    /// Under this many milliseconds.
    MsUnder(f64),
    /// Under this many MiB.
    MibUnder(f64),
    /// Under this ratio.
    RatioUnder(f64),
    /// At most this count.
    CountAtMost(f64),
}

struct Row {
    what: String,
    size: String,
    value: String,
    spread: String,
    target: String,
    verdict: &'static str,
}

#[derive(Default)]
struct Table {
    rows: Vec<Row>,
    misses: Vec<String>,
}

impl Table {
    fn add(&mut self, what: &str, size: &str, value: f64, spread: String, unit: &str, t: Target) {
        let (target, pass) = match t {
            Target::None => (String::new(), None),
            Target::MsUnder(x) => (format!("< {x} ms"), Some(value < x)),
            Target::MibUnder(x) => (format!("< {x} MiB"), Some(value < x)),
            Target::RatioUnder(x) => (format!("< {x}×"), Some(value < x)),
            Target::CountAtMost(x) => (format!("≤ {x}"), Some(value <= x)),
        };
        let verdict = match pass {
            None => "",
            Some(true) => "PASS",
            Some(false) => "MISS",
        };
        if pass == Some(false) {
            self.misses.push(format!("{what} ({size})"));
        }
        self.rows.push(Row {
            what: what.into(),
            size: size.into(),
            value: format!("{value:.2} {unit}"),
            spread,
            target,
            verdict,
        });
    }

    fn ms(&mut self, what: &str, size: &str, samples: &[f64], t: Target) {
        let (lo, hi) = min_max(samples);
        let spread = format!("{lo:.2}–{hi:.2} (n={})", samples.len());
        self.add(what, size, median(samples), spread, "ms", t);
    }

    fn note(&mut self, what: &str, size: &str, value: String, spread: String) {
        self.rows.push(Row {
            what: what.into(),
            size: size.into(),
            value,
            spread,
            target: String::new(),
            verdict: "",
        });
    }

    fn print(&self) {
        let head = ["measurement", "skills", "median", "min–max", "target", ""];
        let cells: Vec<[&str; 6]> = self
            .rows
            .iter()
            .map(|r| {
                [
                    r.what.as_str(),
                    r.size.as_str(),
                    r.value.as_str(),
                    r.spread.as_str(),
                    r.target.as_str(),
                    r.verdict,
                ]
            })
            .collect();
        let mut w = head.map(|h| h.chars().count());
        for c in &cells {
            for (i, s) in c.iter().enumerate() {
                w[i] = w[i].max(s.chars().count());
            }
        }
        let line = |c: &[&str; 6]| {
            let mut s = String::from("|");
            for (i, x) in c.iter().enumerate() {
                let pad = w[i] - x.chars().count();
                let _ = write!(s, " {x}{} |", " ".repeat(pad));
            }
            s
        };
        println!("{}", line(&head));
        let mut sep = String::from("|");
        for x in w {
            let _ = write!(sep, "{}|", "-".repeat(x + 2));
        }
        println!("{sep}");
        for c in &cells {
            println!("{}", line(c));
        }
    }
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn fmt_count(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

// ----------------------------------------------------------- measurements

/// Boots, the floor, and peak RSS after boot, for one tree.
fn boots(s: &Settings, tree: &Tree, size: &str, t: &mut Table, judged: bool) {
    // Warm the cache and the binary once, unmeasured.
    floor(tree);
    {
        let mut sv = Server::spawn(&tree.root);
        sv.initialize();
        sv.tool("skill_list", json!({}));
    }
    let baseline = std::env::var_os("SKILL_MCP_BENCH_BASELINE").map(PathBuf::from);
    let base_boot = |bin: &Path| {
        let mut sv = Server::spawn_bin(bin, &tree.root);
        sv.initialize();
        let (id, _) = sv.send("tools/call", json!({"name": "skill_list", "arguments": {}}));
        let (at, v) = sv.wait(id);
        let n = ok("skill_list", v)["structuredContent"]["skills"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(n, tree.names.len(), "the baseline serves every skill too");
        ms(at - sv.spawned)
    };
    if let Some(b) = &baseline {
        base_boot(b);
    }
    let mut base_first = Vec::new();
    let floors: Vec<f64> = (0..s.boots).map(|_| ms(floor(tree))).collect();
    let mut init = Vec::new();
    let mut first = Vec::new();
    let mut hwm = Vec::new();
    let mut skx_cold = Vec::new();
    for _ in 0..s.boots {
        let mut sv = Server::spawn(&tree.root);
        let at = sv.initialize();
        init.push(ms(at - sv.spawned));
        let (id, _) = sv.send("tools/call", json!({"name": "skill_list", "arguments": {}}));
        let (at, v) = sv.wait(id);
        first.push(ms(at - sv.spawned));
        let list = ok("skill_list", v);
        let n = list["structuredContent"]["skills"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(n, tree.names.len(), "every generated skill is served");
        hwm.push(mib(sv.status_kib("VmHWM")));
        // SEP-2640 skills/list, first page, with nothing digested yet.
        let (d, r) = sv.call("skills/list", json!({}));
        assert!(r["skills"].as_array().is_some_and(|a| !a.is_empty()), "{r}");
        skx_cold.push(ms(d));
        drop(sv);
        // Interleaved, so drift in the machine's load hits both builds.
        if let Some(b) = &baseline {
            base_first.push(base_boot(b));
        }
    }
    if let Some(b) = &baseline {
        t.ms(
            &format!("boot → first skill_list, baseline {}", b.display()),
            size,
            &base_first,
            Target::None,
        );
        t.add(
            "boot → first skill_list, this build ÷ baseline",
            size,
            median(&first) / median(&base_first),
            String::from("medians"),
            "×",
            Target::None,
        );
    }
    let fl = median(&floors);
    let boot = median(&first);
    t.ms(
        "floor: find -type f + read every SKILL.md",
        size,
        &floors,
        Target::None,
    );
    t.ms("boot → initialize answered", size, &init, Target::None);
    t.ms(
        "boot → first skill_list answered",
        size,
        &first,
        if judged {
            Target::MsUnder(300.0)
        } else {
            Target::None
        },
    );
    let ratios: Vec<f64> = first.iter().map(|b| b / fl).collect();
    let (lo, hi) = min_max(&ratios);
    t.add(
        "boot + first skill_list ÷ floor",
        size,
        boot / fl,
        format!("{lo:.2}–{hi:.2}"),
        "×",
        if judged {
            Target::RatioUnder(3.0)
        } else {
            Target::None
        },
    );
    let (lo, hi) = min_max(&hwm);
    t.add(
        "peak RSS (VmHWM) after boot + skill_list",
        size,
        median(&hwm),
        format!("{lo:.2}–{hi:.2}"),
        "MiB",
        if judged {
            Target::MibUnder(40.0)
        } else {
            Target::None
        },
    );
    t.ms(
        "skills/list first page, cold digests",
        size,
        &skx_cold,
        Target::None,
    );
}

/// Round trips on one server after boot.
fn trips(s: &Settings, tree: &Tree, size: &str, t: &mut Table, judged: bool) {
    let mut sv = Server::spawn(&tree.root);
    sv.initialize();
    sv.tool("skill_list", json!({}));
    let n = s.trips;
    let big = big_skill();
    // Distinct skills for k < the tree size (7,919 is prime), never the
    // one holding the 1 MiB file.
    let name = |k: usize| {
        let nm = &tree.names[(k * 7919) % tree.names.len()];
        if *nm == big {
            tree.names[(k * 7919 + 1) % tree.names.len()].clone()
        } else {
            nm.clone()
        }
    };

    // SEP-2640 skills/get of skills not digested yet (nothing has been on
    // this server), each fetched once, then the same skill again and again.
    let uri = |nm: &str| format!("skill://{nm}/SKILL.md");
    let get_cold: Vec<f64> = (0..n)
        .map(|k| {
            let (d, r) = sv.call("skills/get", json!({"uri": uri(&name(k))}));
            assert!(r["skill"].is_object(), "{r}");
            ms(d)
        })
        .collect();
    let get_warm: Vec<f64> = (0..n)
        .map(|_| ms(sv.call("skills/get", json!({"uri": uri(&name(0))})).0))
        .collect();

    let list: Vec<f64> = (0..n)
        .map(|_| ms(sv.tool("skill_list", json!({})).0))
        .collect();
    let list_bytes = sv.last_len;
    t.ms(
        "skill_list round trip",
        size,
        &list,
        if judged {
            Target::MsUnder(20.0)
        } else {
            Target::None
        },
    );
    t.note(
        "  skill_list reply size",
        size,
        format!("{:.2} MiB", list_bytes as f64 / (1024.0 * 1024.0)),
        format!("{} bytes/skill", list_bytes / tree.names.len()),
    );
    let load: Vec<f64> = (0..n)
        .map(|k| {
            let (d, r) = sv.tool("skill_load", json!({"name": name(k)}));
            assert!(r["body"].as_str().is_some_and(|b| b.len() > 500), "{r}");
            ms(d)
        })
        .collect();
    t.ms("skill_load round trip", size, &load, Target::None);
    let kib: Vec<f64> = (0..n)
        .map(|k| {
            let (d, r) = sv.tool(
                "skill_file",
                json!({"name": name(k), "path": "references/guide.md"}),
            );
            assert_eq!(r["files"][0]["size"], 1024, "{r}");
            ms(d)
        })
        .collect();
    t.ms("skill_file 1 KiB round trip", size, &kib, Target::None);
    let mib1: Vec<f64> = (0..n)
        .map(|_| {
            let (d, r) = sv.tool("skill_file", json!({"name": big, "path": BIG_FILE}));
            assert_eq!(r["files"][0]["size"], ONE_MIB, "the 1 MiB file");
            assert_eq!(r["files"][0]["truncated"], false, "1 MiB is within the cap");
            ms(d)
        })
        .collect();
    t.ms("skill_file 1 MiB round trip", size, &mib1, Target::None);
    let paths: Vec<&str> = bundle_files().iter().map(|(p, _)| *p).collect::<Vec<_>>();
    let paths: Vec<String> = paths[..8].iter().map(|p| (*p).to_owned()).collect();
    let batch: Vec<f64> = (0..n)
        .map(|k| {
            let (d, r) = sv.tool("skill_file", json!({"name": name(k + 1), "paths": paths}));
            assert_eq!(r["files"].as_array().map(Vec::len), Some(8), "{r}");
            ms(d)
        })
        .collect();
    t.ms(
        "skill_file batch of 8 round trip",
        size,
        &batch,
        Target::None,
    );

    let page: Vec<f64> = (0..n)
        .map(|_| {
            let (d, r) = sv.call("resources/list", json!({}));
            assert!(r["resources"].as_array().is_some_and(|a| !a.is_empty()));
            ms(d)
        })
        .collect();
    t.ms("resources/list first page", size, &page, Target::None);
    let mut walks = Vec::new();
    let mut largest_page = 0;
    for _ in 0..s.walks {
        let start = Instant::now();
        let (seen, largest) = sv.walk("resources/list", "resources");
        largest_page = largest_page.max(largest);
        assert_eq!(seen, tree.files, "the walk sees every file once");
        walks.push(ms(start.elapsed()));
    }
    t.ms(
        &format!("resources/list full walk ({} files)", fmt_count(tree.files)),
        size,
        &walks,
        Target::None,
    );
    t.note(
        "resources/list largest page on the wire",
        size,
        format!("{:.1} KiB", largest_page as f64 / 1024.0),
        String::from("500 items a page"),
    );
    let (prompts, largest_prompts) = sv.walk("prompts/list", "prompts");
    assert_eq!(prompts, tree.names.len(), "the walk sees every skill once");
    t.note(
        "prompts/list largest page on the wire",
        size,
        format!("{:.1} KiB", largest_prompts as f64 / 1024.0),
        String::from("500 items a page"),
    );

    // SEP-2640 skills/list first page: the first call digests its files
    // (measured cold on each boot above); these find them cached.
    sv.call("skills/list", json!({}));
    let warm: Vec<f64> = (0..n)
        .map(|_| ms(sv.call("skills/list", json!({})).0))
        .collect();
    t.ms(
        "skills/list first page, warm digests",
        size,
        &warm,
        Target::None,
    );
    t.ms("skills/get, cold digests", size, &get_cold, Target::None);
    t.ms("skills/get, warm digests", size, &get_warm, Target::None);

    let h = mib(sv.status_kib("VmHWM"));
    t.add(
        "peak RSS (VmHWM) after the round trips above",
        size,
        h,
        String::new(),
        "MiB",
        Target::None,
    );
}

fn find_node() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("node"))
        .find(|p| p.is_file())
        .expect("node on PATH (the server runs declared scripts with it)")
}

/// `skill_run` of a script that exits at once, with confirm: true, against
/// running node on it directly (same argv, directory and environment).
fn run_overhead(s: &Settings, tree: &Tree, size: &str, t: &mut Table) {
    let node = find_node();
    let mut sv = Server::spawn(&tree.root);
    sv.initialize();
    let name = tree.names[tree.names.len() / 2].clone();
    let dir = fs::canonicalize(tree.root.join(&name)).expect("the skill's real directory");
    let script = dir.join("scripts/noop.js");
    let args = json!({"name": name, "script": "scripts/noop.js", "args": ["--flag", "value"], "confirm": true});
    let bare_once = || {
        let t0 = Instant::now();
        let out = Command::new(&node)
            .arg(&script)
            .args(["--flag", "value"])
            .current_dir(&dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .output()
            .expect("node runs");
        assert!(out.status.success());
        ms(t0.elapsed())
    };
    // Warm node and the server's run path once each.
    bare_once();
    sv.tool("skill_run", args.clone());
    let mut bare = Vec::new();
    let mut run = Vec::new();
    let mut inside = Vec::new();
    for _ in 0..s.run_pairs {
        bare.push(bare_once());
        let (d, r) = sv.tool("skill_run", args.clone());
        // The outcome is the answer itself, or under `result`.
        let o = if r["result"].is_object() {
            &r["result"]
        } else {
            &r
        };
        assert_eq!(o["exitCode"], 0, "{r}");
        inside.push(o["durationMs"].as_f64().unwrap_or(f64::NAN));
        run.push(ms(d));
    }
    let preview: Vec<f64> = (0..s.trips)
        .map(|_| {
            let mut a = args.clone();
            a["confirm"] = json!(false);
            let (d, r) = sv.tool("skill_run", a);
            assert_eq!(r["dryRun"], true);
            ms(d)
        })
        .collect();
    t.ms(
        "bare `node noop.js` (spawn → exit)",
        size,
        &bare,
        Target::None,
    );
    t.ms(
        "skill_run noop.js, confirm: true, round trip",
        size,
        &run,
        Target::None,
    );
    t.ms(
        "  its durationMs as the server reports it",
        size,
        &inside,
        Target::None,
    );
    let diffs: Vec<f64> = run.iter().zip(&bare).map(|(r, b)| r - b).collect();
    let (lo, hi) = min_max(&diffs);
    t.add(
        "skill_run overhead over bare node (median − median)",
        size,
        median(&run) - median(&bare),
        format!("pairwise {lo:.2}–{hi:.2}"),
        "ms",
        Target::MsUnder(5.0),
    );
    t.ms(
        "skill_run preview (no confirm) round trip",
        size,
        &preview,
        Target::None,
    );
}

/// A probe skill the rescan phase adds and removes; never part of a kept
/// tree (it is removed before the tree is measured and after each pair).
const PROBE: &str = "zz-rescan-probe";

/// Rescan time (issue "Reload"): a skill is added (then removed), SIGHUP
/// is sent, and the time runs until the server's
/// `notifications/prompts/list_changed` says the new snapshot is in: the
/// whole scan, the comparison with the old snapshot and the swap.
fn rescans(s: &Settings, tree: &Tree, size: &str, t: &mut Table) {
    let probe = tree.root.join(PROBE);
    let _ = fs::remove_dir_all(&probe);
    let mut sv = Server::spawn(&tree.root);
    sv.initialize();
    sv.tool("skill_list", json!({}));
    let pid = nix::unistd::Pid::from_raw(sv.server_pid() as i32);
    let hup = |sv: &mut Server| {
        let t0 = Instant::now();
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).expect("SIGHUP the server");
        ms(sv.wait_notification("notifications/prompts/list_changed") - t0)
    };
    let mut added = Vec::new();
    let mut removed = Vec::new();
    // One add/remove pair in --quick (each rescan of 10,000 skills is a
    // whole scan), up to five in a full run.
    let pairs = if s.quick { 1 } else { s.boots.min(5) };
    for _ in 0..pairs {
        fs::create_dir_all(&probe).expect("make the probe skill");
        fs::write(
            probe.join("SKILL.md"),
            "---\nname: zz-rescan-probe\ndescription: Added by the benchmark.\n---\nProbe.\n",
        )
        .expect("write the probe skill");
        added.push(hup(&mut sv));
        fs::remove_dir_all(&probe).expect("remove the probe skill");
        removed.push(hup(&mut sv));
    }
    let (_, list) = sv.tool("skill_list", json!({}));
    let n = list["skills"].as_array().map_or(0, Vec::len);
    assert_eq!(n, tree.names.len(), "the probe is gone again");
    assert_eq!(
        list["generation"].as_u64(),
        Some(1 + 2 * added.len() as u64),
        "every rescan was swapped in: {}",
        list["generation"]
    );
    let all: Vec<f64> = added.iter().chain(&removed).copied().collect();
    t.ms(
        "rescan: SIGHUP → list_changed (a skill added or removed)",
        size,
        &all,
        Target::None,
    );
    // Every trigger waits out the same trailing debounce before scanning
    // (src/reload.rs), so the rescan's own work is what is left over.
    let debounce = ms(skill_mcp::reload::DEBOUNCE);
    let work: Vec<f64> = all.iter().map(|x| x - debounce).collect();
    t.ms(
        &format!("  of which the rescan itself (less the {debounce:.0} ms debounce)"),
        size,
        &work,
        Target::None,
    );
}

/// RSS across many mixed calls on one server: after boot, after the first
/// tenth of the calls (warm), at the end, and the peak.
fn flat(s: &Settings, tree: &Tree, size: &str, t: &mut Table, judged: bool) -> Vec<(usize, f64)> {
    let mut sv = Server::spawn(&tree.root);
    sv.initialize();
    sv.tool("skill_list", json!({}));
    let start = mib(sv.status_kib("VmRSS"));
    let fds_start = sv.fd_count();
    let paths: Vec<String> = bundle_files()
        .iter()
        .map(|(p, _)| (*p).to_owned())
        .collect();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let names = &tree.names;
    let mut samples = vec![(0usize, start)];
    let warm_at = s.mixed_calls / 10;
    let mut warm = start;
    let mut runs = 0;
    let mut done = 0;
    let mut per_kind: std::collections::BTreeMap<&str, (usize, Duration)> = Default::default();
    while done < s.mixed_calls {
        // Four requests in flight at a time, answered in any order, except
        // a confirmed run, which goes alone (one run at a time).
        let mut ids = Vec::new();
        for _ in 0..4 {
            if done + ids.len() == s.mixed_calls {
                break;
            }
            let nm = names[rng.below(names.len())].clone();
            let p = paths[rng.below(paths.len())].clone();
            let roll = rng.below(100);
            let (kind, method, params) = match roll {
                0..20 => (
                    "skill_load",
                    "tools/call",
                    json!({"name": "skill_load", "arguments": {"name": nm}}),
                ),
                20..45 => (
                    "skill_file (one)",
                    "tools/call",
                    json!({"name": "skill_file", "arguments": {"name": nm, "path": p}}),
                ),
                45..55 => (
                    "skill_file (batch of 8)",
                    "tools/call",
                    json!({"name": "skill_file", "arguments": {"name": nm, "paths": paths[..8]}}),
                ),
                55..65 => {
                    let page = rng.below(tree.files.div_ceil(500));
                    let params = if page == 0 {
                        json!({})
                    } else {
                        json!({"cursor": (page * 500).to_string()})
                    };
                    ("resources/list (a page)", "resources/list", params)
                }
                65..70 => (
                    "resources/read",
                    "resources/read",
                    json!({"uri": format!("skill://{nm}/{p}")}),
                ),
                70..75 => ("prompts/get", "prompts/get", json!({"name": nm})),
                75..85 => (
                    "skills/get",
                    "skills/get",
                    json!({"uri": format!("skill://{nm}/SKILL.md")}),
                ),
                85..95 => (
                    "skill_run preview",
                    "tools/call",
                    json!({"name": "skill_run", "arguments": {"name": nm, "script": "scripts/build.js", "args": ["x"]}}),
                ),
                95..99 => (
                    "skill_list",
                    "tools/call",
                    json!({"name": "skill_list", "arguments": {}}),
                ),
                _ if ids.is_empty() => {
                    runs += 1;
                    (
                        "skill_run confirm: true",
                        "tools/call",
                        json!({"name": "skill_run", "arguments": {"name": nm, "script": "scripts/noop.js", "confirm": true}}),
                    )
                }
                _ => ("prompts/list", "prompts/list", json!({})),
            };
            let alone = kind == "skill_run confirm: true";
            let (id, sent) = sv.send(method, params);
            ids.push((kind, method, id, sent));
            if alone {
                break;
            }
        }
        // Collect in reverse, so replies arriving first wait in `early`.
        for (kind, method, id, sent) in ids.into_iter().rev() {
            let (at, v) = sv.wait(id);
            let r = ok(method, v);
            assert_ne!(r["isError"], json!(true), "{method} failed: {r}");
            let e = per_kind.entry(kind).or_default();
            e.0 += 1;
            e.1 += at - sent;
            done += 1;
            if done.is_multiple_of(s.mixed_calls / 10) {
                let rss = mib(sv.status_kib("VmRSS"));
                samples.push((done, rss));
                if done == warm_at {
                    warm = rss;
                }
            }
        }
    }
    let mix: Vec<String> = per_kind
        .iter()
        .map(|(k, (n, d))| format!("{k} ×{n} (mean {:.2} ms)", ms(*d) / *n as f64))
        .collect();
    println!(
        "mixed calls at {size} skills, 4 in flight: {}",
        mix.join(", ")
    );
    let end = mib(sv.status_kib("VmRSS"));
    let peak = mib(sv.status_kib("VmHWM"));
    let fds_end = sv.fd_count();
    let calls = fmt_count(s.mixed_calls);
    t.add(
        &format!("open fds, after boot → after {calls} mixed calls (no leak: growth 0)"),
        size,
        fds_end as f64 - fds_start as f64,
        format!("{fds_start} → {fds_end}"),
        "fds",
        if judged {
            Target::CountAtMost(0.0)
        } else {
            Target::None
        },
    );
    t.note(
        &format!("RSS across {calls} mixed calls ({runs} real runs): start / end / peak"),
        size,
        format!("{start:.2} / {end:.2} / {peak:.2} MiB"),
        String::from("start = after boot + skill_list"),
    );
    t.add(
        &format!(
            "RSS growth, call {} → {calls} (flat: bound 2 MiB)",
            fmt_count(warm_at)
        ),
        size,
        end - warm,
        format!("{warm:.2} → {end:.2} MiB"),
        "MiB",
        if judged {
            Target::MibUnder(2.0)
        } else {
            Target::None
        },
    );
    t.add(
        &format!("peak RSS (VmHWM) after {calls} mixed calls"),
        size,
        peak,
        String::new(),
        "MiB",
        if judged {
            Target::MibUnder(40.0)
        } else {
            Target::None
        },
    );
    samples
}

fn main() {
    let s = Settings::from_args();
    let began = Instant::now();
    let server = Path::new(SERVER);
    assert!(
        server.is_file(),
        "the server binary {SERVER} is missing: run this through `cargo bench --bench skill-mcp`"
    );
    println!(
        "skill-mcp benchmark ({} mode) — server {}",
        if s.quick { "quick" } else { "full" },
        server.display()
    );
    println!(
        "runs: {} boots per size, {} samples per round trip, {} full walks, {} run pairs, {} mixed calls",
        s.boots,
        s.trips,
        s.walks,
        s.run_pairs,
        fmt_count(s.mixed_calls)
    );
    println!("load average at start: {}", loadavg());
    let mut t = Table::default();
    let largest = *s.sizes.iter().max().expect("a tree size");
    let mut rss_series = Vec::new();
    for &n in &s.sizes {
        let g = Instant::now();
        let tree = make_tree(n, s.fresh);
        let size = fmt_count(n);
        eprintln!(
            "[{:>5.1}s] tree of {size} skills ({} files) {} in {:.1}s: {}",
            began.elapsed().as_secs_f64(),
            fmt_count(tree.files),
            if tree.reused { "reused" } else { "generated" },
            g.elapsed().as_secs_f64(),
            tree.root.display()
        );
        // The targets are stated for 10,000 skills, so only judged there.
        let judged = n == TARGET_SKILLS;
        let stamp = |what: &str| {
            eprintln!(
                "[{:>5.1}s] {size}: {what} done",
                began.elapsed().as_secs_f64()
            )
        };
        if s.runs("boot") {
            boots(&s, &tree, &size, &mut t, judged);
            stamp("boots");
        }
        if s.runs("trips") {
            trips(&s, &tree, &size, &mut t, judged);
            stamp("round trips");
        }
        if n == largest && s.runs("run") {
            run_overhead(&s, &tree, &size, &mut t);
            stamp("skill_run");
        }
        if n == largest && s.runs("mixed") {
            rss_series = flat(&s, &tree, &size, &mut t, judged);
            stamp("mixed calls");
        }
        // After every other phase: the probe it adds never meets a floor.
        if s.runs("rescan") {
            rescans(&s, &tree, &size, &mut t);
            stamp("rescans");
        }
    }
    println!();
    t.print();
    println!();
    let series: Vec<String> = rss_series
        .iter()
        .map(|(k, r)| format!("{}: {r:.2}", fmt_count(*k)))
        .collect();
    println!(
        "VmRSS (MiB) by call count at {}: {}",
        fmt_count(largest),
        series.join(", ")
    );
    println!(
        "SEP-2640 door: always on; its boot cost is SkillsDoor::boot's per-skill name and \
         description validation, included in every boot figure above (it cannot be switched off)."
    );
    println!("load average at end: {}", loadavg());
    println!("total time: {:.1}s", began.elapsed().as_secs_f64());
    let judged = t.rows.iter().filter(|r| !r.verdict.is_empty()).count();
    if !s.sizes.contains(&TARGET_SKILLS) {
        println!("the 10,000-skill targets were not judged: no 10,000-skill tree in this run");
    }
    if t.misses.is_empty() {
        println!("{judged} targets judged, every one met");
    } else {
        println!(
            "{judged} targets judged, {} missed: {}",
            t.misses.len(),
            t.misses.join("; ")
        );
    }
}
