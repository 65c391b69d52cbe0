//! The http-peer phase (issue 43 §1, §2): this server and rmcp's own
//! `SkillCatalog` (benches/rmcp-peer, `--http`: rmcp's
//! `StreamableHttpService` on hyper, as this server's `--http` is) served
//! the same way and loaded the same way, so each figure is a ratio measured
//! in one run on one machine — ours ÷ the peer's — rather than an absolute
//! that depends on the machine.
//!
//! On the http phase's 1,000-skill tree, for `resources/read` of a 4 KiB
//! file and `skills/get`, in stateless mode (each request a 2026-07-28 POST
//! whose `_meta` carries the protocol version, with the SEP-2243 headers
//! rmcp requires, as the http phase sends them) and in session mode (one
//! 2025-11-25 `initialize` per wrk thread, done before the run, and every
//! request its own JSON-RPC id, since a session refuses a duplicate id in
//! flight), at 1, 16 and 64 connections:
//!
//! - each run starts a fresh process of the server, checks one request by
//!   hand (a JSON-RPC result, or the run is void), reads the server's
//!   utime + stime from /proc/PID/stat, runs wrk, and reads them again;
//! - wrk's Lua checks every reply for a JSON-RPC result, and a run with a
//!   non-2xx reply, a socket error or a reply that is not a result is void;
//! - runs come in pairs, ours and the peer's, the first of a pair
//!   alternating; a pair with a void run is left out, and said so;
//! - per pair: requests/s, p50, p99 and server CPU per answered request,
//!   each as ours ÷ peer; the row is the median ratio over the pairs, so one
//!   noisy run cannot flip a verdict. The targets (§2): CPU per request ≤
//!   1.2× everywhere, p99 at 64 connections ≤ 1.2×.
//!
//! wrk shares the two cores with both servers alike: the absolute figures
//! are a floor, the ratios are what is judged.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::http::{self, HttpServer, Load};
use crate::report::{Table, Target, fmt_count};
use crate::settings::Settings;
use crate::stats::{median, min_max};
use crate::tree::{big_skill, make_tree};

/// The tree: the http phase's 1,000 skills.
const SKILLS: usize = 1_000;
/// Concurrent connections, as the issue names them.
const CLIENTS: [usize; 3] = [1, 16, 64];
/// The ratio the issue allows for CPU per request and p99 at 64.
const AT_MOST: f64 = 1.2;
/// The protocol a session is opened with.
const SESSION_VERSION: &str = "2025-11-25";

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Stateless,
    Session,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Stateless => "stateless",
            Mode::Session => "session",
        }
    }
}

/// One wrk run's figures.
struct Run {
    rps: f64,
    p50: f64,
    p99: f64,
    /// Server CPU (utime + stime) per answered request, in µs.
    cpu_us: f64,
}

/// The two paths measured: (what, method, params).
fn paths(skill: &str) -> [(&'static str, &'static str, Value); 2] {
    [
        (
            "resources/read 4 KiB",
            "resources/read",
            json!({"uri": format!("skill://{skill}/{}", http::FILE_4K)}),
        ),
        (
            "skills/get",
            "skills/get",
            json!({"uri": format!("skill://{skill}/SKILL.md")}),
        ),
    ]
}

/// Clock ticks per second, the unit of /proc/PID/stat's times.
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// utime + stime of every thread of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After "pid (comm) ": state is field 3, utime 14 and stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let n = |i: usize| fields.get(i - 3)?.parse::<u64>().ok();
    Some(n(14)? + n(15)?)
}

/// Whether `reply` (a JSON body, or an SSE event carrying one) is a
/// JSON-RPC result and not a tool's error.
fn is_result(reply: &str) -> bool {
    let (Some(a), Some(b)) = (reply.find('{'), reply.rfind('}')) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<Value>(&reply[a..=b]) else {
        return false;
    };
    v.get("result").is_some() && v.get("error").is_none() && v["result"]["isError"] != true
}

/// The value of header `name` in a reply's head.
fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_owned())
    })
}

/// Opens a session: `initialize`, then `notifications/initialized`; its id.
fn open_session(sv: &HttpServer, path: &str) -> Result<String, String> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": SESSION_VERSION, "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}})
    .to_string();
    let (status, head, body) = http::post(&sv.host, path, &init, None, &[])?;
    if status != 200 || !is_result(&body) {
        return Err(format!(
            "initialize answered HTTP {status}: {}",
            body.chars().take(200).collect::<String>()
        ));
    }
    let id = header(&head, "mcp-session-id").ok_or("initialize gave no Mcp-Session-Id")?;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    http::post(&sv.host, path, &note, Some(&id), &[])?;
    Ok(id)
}

/// The Lua that checks every reply, counts those that are not a JSON-RPC
/// result, and prints the count when wrk is done (`Bad replies: N`).
const CHECK_LUA: &str = r#"
bad = 0
local threads = {}
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true)
     or string.find(body, '"error":', 1, true)
     or string.find(body, '"isError":true', 1, true) then
    bad = bad + 1
  end
end
function done(summary, latency, requests)
  local n = 0
  for _, t in ipairs(threads) do n = n + (t:get("bad") or 0) end
  io.write(string.format("Bad replies: %d\n", n))
end
"#;

/// wrk's script for a run: the request, its headers, the check and, in
/// session mode, each thread's session and a fresh JSON-RPC id a request.
fn script(mode: Mode, method: &str, params: &Value, sessions: &[String]) -> String {
    let mut lua = match mode {
        Mode::Stateless => {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": method,
                "params": http::stateless(params.clone())})
            .to_string();
            http::wrk_script(&body, &http::mcp_headers(method, params))
        }
        Mode::Session => http::wrk_script("", &[("MCP-Protocol-Version", SESSION_VERSION.into())]),
    };
    lua.push_str(CHECK_LUA);
    match mode {
        Mode::Stateless => {
            lua.push_str("function setup(thread) table.insert(threads, thread) end\n");
        }
        Mode::Session => {
            // The body after its id: `{"id":N,` then the rest of the object.
            let rest = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
            let rest = rest.strip_prefix('{').unwrap_or(&rest);
            let ids: Vec<String> = sessions.iter().map(|s| format!("[==[{s}]==]")).collect();
            let _ = write!(
                lua,
                "local sessions = {{{}}}\n\
                 function setup(thread)\n\
                 \x20 table.insert(threads, thread)\n\
                 \x20 thread:set(\"session\", sessions[#threads])\n\
                 end\n\
                 function init(args) wrk.headers[\"Mcp-Session-Id\"] = session end\n\
                 local id = 0\n\
                 local rest = [==[{rest}]==]\n\
                 function request()\n\
                 \x20 id = id + 1\n\
                 \x20 return wrk.format(nil, nil, nil, '{{\"id\":' .. id .. ',' .. rest)\n\
                 end\n",
                ids.join(", ")
            );
        }
    }
    lua
}

/// One run: a fresh server (`peer`, else ours), one request checked by
/// hand, then wrk with the server's CPU read around it.
#[allow(clippy::too_many_arguments)]
fn one_run(
    wrk: &Path,
    peer: Option<&Path>,
    root: &Path,
    mode: Mode,
    method: &str,
    params: &Value,
    clients: usize,
    secs: u64,
    dir: &Path,
    tck: f64,
) -> Result<Run, String> {
    let sv = match peer {
        None => http::start(root)?,
        Some(bin) => {
            let mut cmd = http::bare(bin);
            cmd.args(["--http", "127.0.0.1:0"]).arg(root);
            http::start_command(cmd)?
        }
    };
    let path = http::path_of(&sv.url);
    let mut sessions = Vec::new();
    let (body, headers, session) = match mode {
        Mode::Stateless => (
            json!({"jsonrpc": "2.0", "id": 1, "method": method,
                "params": http::stateless(params.clone())}),
            http::mcp_headers(method, params),
            None,
        ),
        Mode::Session => {
            for _ in 0..http::wrk_threads(clients) {
                sessions.push(open_session(&sv, &path)?);
            }
            (
                json!({"jsonrpc": "2.0", "id": 0, "method": method, "params": params}),
                Vec::new(),
                Some(sessions[0].as_str()),
            )
        }
    };
    let (status, _, reply) = http::post(&sv.host, &path, &body.to_string(), session, &headers)?;
    if status != 200 || !is_result(&reply) {
        let reply = reply.split_whitespace().collect::<Vec<_>>().join(" ");
        return Err(format!(
            "checked by hand, it answered HTTP {status}: {}",
            reply.chars().take(300).collect::<String>()
        ));
    }
    let lua = dir.join("http-peer.lua");
    std::fs::write(&lua, script(mode, method, params, &sessions)).map_err(|e| e.to_string())?;
    let pid = sv.child.id();
    let before = cpu_ticks(pid).ok_or("no /proc/PID/stat")?;
    let (l, text): (Load, String) = http::run_wrk(wrk, &lua, &sv.url, clients, secs)?;
    let after = cpu_ticks(pid).ok_or("the server is gone after the run")?;
    let bad_replies: u64 = text
        .lines()
        .find_map(|x| x.trim().strip_prefix("Bad replies:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or("wrk's script did not count the replies")?;
    if l.bad > 0 || bad_replies > 0 || l.requests == 0 {
        return Err(format!(
            "{} non-2xx replies or socket errors, {bad_replies} replies not a result, \
             {} answered",
            l.bad, l.requests
        ));
    }
    drop(sv);
    Ok(Run {
        rps: l.rps,
        p50: l.p50_ms,
        p99: l.p99_ms,
        cpu_us: (after - before) as f64 / tck * 1e6 / l.requests as f64,
    })
}

/// The phase; skipped, with the reason printed, without wrk or the peer.
pub fn http_peer(s: &Settings, peer: Result<&Path, &str>, t: &mut Table) {
    let Some(wrk) = http::on_path("wrk") else {
        println!("http-peer phase: skipped, wrk is not installed (Debian: apt-get install wrk)");
        return;
    };
    let peer = match peer {
        Ok(p) if p.is_file() => p,
        Ok(p) => {
            println!(
                "http-peer phase: skipped, rmcp's SkillCatalog peer is not built ({} is missing)",
                p.display()
            );
            return;
        }
        Err(why) => {
            println!("http-peer phase: skipped, rmcp's SkillCatalog peer: {why}");
            return;
        }
    };
    let tree = make_tree(SKILLS, s.fresh);
    let size = fmt_count(SKILLS);
    let (pairs, secs) = if s.quick { (3, 2) } else { (5, 5) };
    if s.quick {
        println!(
            "http-peer phase: --quick runs {pairs} pairs of {secs} s per figure; \
             the verdicts the issue states need at least five (the full run)"
        );
    }
    let scratch = tempfile::tempdir().expect("a scratch dir for wrk's scripts");
    let tck = clock_ticks();
    let skill = big_skill();
    for (what, method, params) in paths(&skill) {
        for mode in [Mode::Stateless, Mode::Session] {
            for clients in CLIENTS {
                let label = format!(
                    "http {what}, {}, {clients} conn{}",
                    mode.name(),
                    if clients == 1 { "" } else { "s" }
                );
                let (mut ours, mut theirs) = (Vec::new(), Vec::new());
                let mut void = Vec::new();
                for i in 0..pairs {
                    let run = |p: Option<&Path>| {
                        one_run(
                            &wrk,
                            p,
                            &tree.root,
                            mode,
                            method,
                            &params,
                            clients,
                            secs,
                            scratch.path(),
                            tck,
                        )
                    };
                    // The first of a pair alternates.
                    let (a, b) = if i % 2 == 0 {
                        let a = run(None);
                        (a, run(Some(peer)))
                    } else {
                        let b = run(Some(peer));
                        (run(None), b)
                    };
                    match (a, b) {
                        (Ok(a), Ok(b)) => {
                            ours.push(a);
                            theirs.push(b);
                        }
                        (a, b) => {
                            let why = [("this server", a.err()), ("rmcp", b.err())]
                                .into_iter()
                                .filter_map(|(who, e)| e.map(|e| format!("{who}: {e}")))
                                .collect::<Vec<_>>()
                                .join("; ");
                            println!("http-peer: {label}, pair {}: void ({why})", i + 1);
                            void.push(i + 1);
                        }
                    }
                }
                eprintln!(
                    "  http-peer {label}: {} pairs{}",
                    ours.len(),
                    if void.is_empty() {
                        String::new()
                    } else {
                        format!(", {} void", void.len())
                    }
                );
                if !void.is_empty() {
                    t.misses.push(format!(
                        "{label}: {} of {pairs} pairs void (error replies)",
                        void.len()
                    ));
                }
                if ours.is_empty() {
                    continue;
                }
                rows(t, &size, &label, &ours, &theirs, clients);
            }
        }
    }
}

/// A figure of a run: its name, how it is read from the run, its unit.
type Figure = (&'static str, fn(&Run) -> f64, &'static str);

/// The figures each pair compares, in the table's order.
const FIGURES: [Figure; 4] = [
    ("requests/s", |r| r.rps, "/s"),
    ("p50", |r| r.p50, "ms"),
    ("p99", |r| r.p99, "ms"),
    ("server CPU per request", |r| r.cpu_us, "µs"),
];

/// The four ratios of one (path, mode, connections), median over pairs,
/// with the issue's targets: CPU per request everywhere, p99 at 64.
fn rows(t: &mut Table, size: &str, label: &str, ours: &[Run], theirs: &[Run], clients: usize) {
    for (name, f, unit) in FIGURES {
        let target = match name {
            "server CPU per request" => Target::RatioAtMost(AT_MOST),
            "p99" if clients == 64 => Target::RatioAtMost(AT_MOST),
            _ => Target::None,
        };
        let ratios: Vec<f64> = ours.iter().zip(theirs).map(|(a, b)| f(a) / f(b)).collect();
        let a: Vec<f64> = ours.iter().map(f).collect();
        let b: Vec<f64> = theirs.iter().map(f).collect();
        let (lo, hi) = min_max(&ratios);
        t.add(
            &format!("{label}: {name}, this ÷ rmcp"),
            size,
            median(&ratios),
            format!(
                "{lo:.2}–{hi:.2} (n={}); this {}, rmcp {}",
                ratios.len(),
                figure(median(&a), unit),
                figure(median(&b), unit)
            ),
            "×",
            target,
        );
    }
}

/// A median as the table shows it: requests/s whole, ms to two places,
/// µs to one.
fn figure(x: f64, unit: &str) -> String {
    match unit {
        "/s" => format!("{x:.0} /s"),
        "ms" => format!("{x:.2} ms"),
        _ => format!("{x:.1} {unit}"),
    }
}
