//! The http-peer phase (issue 43 §1, §2): this server and rmcp's own
//! `SkillCatalog` (benches/rmcp-peer, `--http`: rmcp's
//! `StreamableHttpService` on hyper, as this server's `--http` is) served
//! the same way and loaded the same way, so each figure is a ratio measured
//! in one run on one machine — ours ÷ the peer's — rather than an absolute
//! that depends on the machine.
//!
//! On the http phase's 1,000-skill tree, for `resources/read` of a 4 KiB
//! file, `skills/get` and `skills/list` (its first page, no cursor), in
//! stateless mode (each request a 2026-07-28 POST whose `_meta` carries the
//! protocol version, with the SEP-2243 headers rmcp requires, as the http
//! phase sends them) and in session mode (one 2025-11-25 `initialize` per
//! wrk thread, done before the run, and every request its own JSON-RPC id,
//! since a session refuses a duplicate id in flight), at 1, 16 and 64
//! connections:
//!
//! - each run starts a fresh process of the server, checks one request by
//!   hand (a JSON-RPC result, or the run is void; for `skills/list`, the
//!   entries on the page are counted there), reads the server's utime +
//!   stime from /proc/PID/stat, runs wrk, and reads them again;
//! - wrk's Lua checks every reply for a JSON-RPC result, and a run with a
//!   non-2xx reply, a socket error or a reply that is not a result is void;
//! - runs come in pairs, ours and the peer's, the first of a pair
//!   alternating; a pair with a void run is left out, and said so;
//! - per pair: requests/s, p50, p99 and server CPU per answered request,
//!   each as ours ÷ peer; the row is the median ratio over the pairs, so one
//!   noisy run cannot flip a verdict, and a verdict needs at least five
//!   pairs (`--quick`'s three print the ratio without one). The targets
//!   (§2): CPU per request ≤ 1.2× for `resources/read` and `skills/get` in
//!   both modes at every connection count, their p99 at 64 connections ≤
//!   1.2×;
//! - `skills/list` pages differ in size (the peer answers every skill at
//!   once, this server a page), so its compared figures are per entry
//!   listed: entries/s (requests/s × entries a reply) and server CPU ÷
//!   (answered requests × entries a reply), with p50/p99 a request beside
//!   them; the issue names no target for them, so they are reported. The
//!   peer's whole-catalog reply is slow (at 64 connections it answers a few
//!   hundred a run), and the CPU spent on the requests still in flight when
//!   wrk stops is counted without them, which raises the peer's figure:
//!   the CPU row says how many each answered, and marks a server that
//!   answered fewer than ten a connection;
//! - then RSS with 1,000 sessions open: per pair a fresh process of each
//!   opens them (as the http phase does) and VmRSS is read; ≤ 0.5×.
//!
//! wrk shares the two cores with both servers alike: the absolute figures
//! are a floor, the ratios are what is judged.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::http::{self, HttpServer, Load, SESSION_VERSION};
use crate::report::{MIN_PAIRS, Table, fmt_count};
use crate::settings::Settings;
use crate::stats::{median, mib};
use crate::tree::{big_skill, make_tree};

/// The tree: the http phase's 1,000 skills.
const SKILLS: usize = 1_000;
/// Concurrent connections, as the issue names them.
const CLIENTS: [usize; 3] = [1, 16, 64];
/// The ratio the issue allows for CPU per request and p99 at 64.
const AT_MOST: f64 = 1.2;
/// How long wrk waits for a reply before it counts a socket error. Its
/// default, 2 s, is less than rmcp's whole-catalog `skills/list` takes at
/// 64 connections (p50 ~0.8 s, p99 ~1.9 s with 1,000 skills), which would
/// make those runs void for being slow rather than for a bad reply; a slow
/// reply is a latency, counted in p99.
const REPLY_TIMEOUT_S: u64 = 30;
/// A run whose server answered fewer than this many requests a connection
/// has its CPU per entry marked: the requests in flight when wrk stops
/// (one a connection) then weigh a tenth or more of what it answered.
const TAIL_BOUND: usize = 10;
/// The ratio the issue allows for RSS with 1,000 sessions open.
const RSS_AT_MOST: f64 = 0.5;

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
    /// Entries in a reply (`skills/list`: the skills on its first page,
    /// counted in the reply checked by hand before the run; else 1).
    entries: f64,
    /// Requests answered in the run.
    answered: f64,
}

/// What a path's figures are per: a request, or an entry a list gives.
#[derive(Clone, Copy, PartialEq)]
enum Per {
    Request,
    /// `skills/list`: page sizes differ between the servers (the peer
    /// gives every skill at once), so throughput and CPU are per entry.
    Entry,
}

/// The three paths measured: (what, method, params, per what).
fn paths(skill: &str) -> [(&'static str, &'static str, Value, Per); 3] {
    [
        (
            "resources/read 4 KiB",
            "resources/read",
            json!({"uri": format!("skill://{skill}/{}", http::FILE_4K)}),
            Per::Request,
        ),
        (
            "skills/get",
            "skills/get",
            json!({"uri": format!("skill://{skill}/SKILL.md")}),
            Per::Request,
        ),
        (
            "skills/list first page",
            "skills/list",
            json!({}),
            Per::Entry,
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

/// A fresh process of `peer` (rmcp's SkillCatalog), else of this server,
/// over HTTP on loopback, serving `root`.
fn start(peer: Option<&Path>, root: &Path) -> Result<HttpServer, String> {
    match peer {
        None => http::start(root),
        Some(bin) => {
            let mut cmd = http::bare(bin);
            cmd.args(["--http", "127.0.0.1:0"]).arg(root);
            http::start_command(cmd)
        }
    }
}

/// One run: a fresh server (`peer`, else ours), one request checked by
/// hand (and, for a list, its entries counted), then wrk with the server's
/// CPU read around it.
#[allow(clippy::too_many_arguments)]
fn one_run(
    wrk: &Path,
    peer: Option<&Path>,
    root: &Path,
    mode: Mode,
    method: &str,
    params: &Value,
    per: Per,
    clients: usize,
    secs: u64,
    dir: &Path,
    tck: f64,
) -> Result<Run, String> {
    let sv = start(peer, root)?;
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
                sessions.push(http::open_session(&sv, &path)?);
            }
            (
                json!({"jsonrpc": "2.0", "id": 0, "method": method, "params": params}),
                Vec::new(),
                Some(sessions[0].as_str()),
            )
        }
    };
    let (status, _, reply) = http::post(&sv.host, &path, &body.to_string(), session, &headers)?;
    let result = http::result_of(&reply).filter(|_| status == 200);
    let Some(result) = result else {
        let reply = reply.split_whitespace().collect::<Vec<_>>().join(" ");
        return Err(format!(
            "checked by hand, it answered HTTP {status}: {}",
            reply.chars().take(300).collect::<String>()
        ));
    };
    let entries = match per {
        Per::Request => 1,
        Per::Entry => match result["skills"].as_array().map_or(0, Vec::len) {
            0 => return Err("checked by hand, its skills/list page lists no skill".into()),
            n => n,
        },
    };
    let lua = dir.join("http-peer.lua");
    std::fs::write(&lua, script(mode, method, params, &sessions)).map_err(|e| e.to_string())?;
    let pid = sv.child.id();
    let before = cpu_ticks(pid).ok_or("no /proc/PID/stat")?;
    let (l, text): (Load, String) =
        http::run_wrk(wrk, &lua, &sv.url, clients, secs, Some(REPLY_TIMEOUT_S))?;
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
        entries: entries as f64,
        answered: l.requests as f64,
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
    let (pairs, secs) = if s.quick { (3, 2) } else { (MIN_PAIRS, 5) };
    if pairs < MIN_PAIRS {
        println!(
            "http-peer phase: --quick runs {pairs} pairs of {secs} s per figure; a verdict needs \
             at least {MIN_PAIRS} (the full run), so the ratios are printed without one"
        );
    }
    let scratch = tempfile::tempdir().expect("a scratch dir for wrk's scripts");
    let tck = clock_ticks();
    let skill = big_skill();
    for (what, method, params, per) in paths(&skill) {
        for mode in [Mode::Stateless, Mode::Session] {
            for clients in CLIENTS {
                let label = format!(
                    "http {what}, {}, {clients} conn{}",
                    mode.name(),
                    if clients == 1 { "" } else { "s" }
                );
                let (ours, theirs) = interleaved(t, &label, pairs, peer, |p| {
                    one_run(
                        &wrk,
                        p,
                        &tree.root,
                        mode,
                        method,
                        &params,
                        per,
                        clients,
                        secs,
                        scratch.path(),
                        tck,
                    )
                });
                if !ours.is_empty() {
                    rows(t, &size, &label, &ours, &theirs, per, clients);
                }
            }
        }
    }
    sessions_rss(s, peer, &tree.root, &size, t);
}

/// `pairs` pairs of runs, one of this server (`run(None)`) and one of the
/// peer, the first of a pair alternating; a pair with a void run is left
/// out, said so, and counted among the misses. The runs of the pairs kept:
/// (ours, the peer's).
fn interleaved<T>(
    t: &mut Table,
    label: &str,
    pairs: usize,
    peer: &Path,
    mut run: impl FnMut(Option<&Path>) -> Result<T, String>,
) -> (Vec<T>, Vec<T>) {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut void = 0;
    for i in 0..pairs {
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
                void += 1;
            }
        }
    }
    eprintln!(
        "  http-peer {label}: {} pairs{}",
        ours.len(),
        if void == 0 {
            String::new()
        } else {
            format!(", {void} void")
        }
    );
    if void > 0 {
        t.misses.push(format!(
            "{label}: {void} of {pairs} pairs void (error replies or socket errors)"
        ));
    }
    (ours, theirs)
}

/// RSS with [`http::SESSIONS`] sessions open (issue 43 §2: ≤ 0.5× the
/// peer's): per pair a fresh process of each server opens them one after
/// another as the http phase does (2025-11-25 `initialize`, then
/// `notifications/initialized`), then VmRSS is read from /proc/PID/status.
/// A server that refuses one before the last makes its pair void.
fn sessions_rss(s: &Settings, peer: &Path, root: &Path, size: &str, t: &mut Table) {
    let pairs = if s.quick { 3 } else { MIN_PAIRS };
    let n = http::SESSIONS;
    let label = format!("http: VmRSS with {} sessions open", fmt_count(n));
    let (ours, theirs) = interleaved(t, &label, pairs, peer, |p| {
        let sv = start(p, root)?;
        let o = http::open_sessions(&sv, &http::path_of(&sv.url), n);
        if let Some(why) = o.refused {
            return Err(format!("{} sessions opened, then {why}", o.open));
        }
        match http::vm_rss_kib(sv.child.id()) {
            0 => Err("no VmRSS in /proc/PID/status".into()),
            kib => Ok((mib(kib), o.secs)),
        }
    });
    if ours.is_empty() {
        return;
    }
    let ratios: Vec<f64> = ours.iter().zip(&theirs).map(|(a, b)| a.0 / b.0).collect();
    let m =
        |v: &[(f64, f64)], f: fn(&(f64, f64)) -> f64| median(&v.iter().map(f).collect::<Vec<_>>());
    t.pair_ratio(
        &format!("{label}, this ÷ rmcp"),
        size,
        &ratios,
        &format!(
            "this {:.1} MiB, rmcp {:.1} MiB; opened in {:.1} / {:.1} s",
            m(&ours, |x| x.0),
            m(&theirs, |x| x.0),
            m(&ours, |x| x.1),
            m(&theirs, |x| x.1)
        ),
        Some(RSS_AT_MOST),
    );
}

/// A figure of a run: its name, how it is read from the run, its unit.
type Figure = (&'static str, fn(&Run) -> f64, &'static str);

/// The figures each pair compares for a request path, in the table's order.
const FIGURES: [Figure; 4] = [
    ("requests/s", |r| r.rps, "/s"),
    ("p50", |r| r.p50, "ms"),
    ("p99", |r| r.p99, "ms"),
    ("server CPU per request", |r| r.cpu_us, "µs"),
];

/// The figures for a list, whose page sizes differ: throughput and CPU per
/// entry listed (server CPU ÷ (answered requests × entries a reply)).
const LIST_FIGURES: [Figure; 4] = [
    ("entries/s", |r| r.rps * r.entries, "/s"),
    ("p50", |r| r.p50, "ms"),
    ("p99", |r| r.p99, "ms"),
    (
        "server CPU per entry listed",
        |r| r.cpu_us / r.entries,
        "µs",
    ),
];

/// The four ratios of one (path, mode, connections), median over pairs,
/// with the issue's targets: CPU per request for read and get, p99 at 64
/// for them; a list's figures are reported (the issue names no target).
#[allow(clippy::too_many_arguments)]
fn rows(
    t: &mut Table,
    size: &str,
    label: &str,
    ours: &[Run],
    theirs: &[Run],
    per: Per,
    clients: usize,
) {
    let figures = match per {
        Per::Request => FIGURES,
        Per::Entry => LIST_FIGURES,
    };
    for (name, f, unit) in figures {
        let target = match name {
            "server CPU per request" => Some(AT_MOST),
            "p99" if clients == 64 && per == Per::Request => Some(AT_MOST),
            _ => None,
        };
        let ratios: Vec<f64> = ours.iter().zip(theirs).map(|(a, b)| f(a) / f(b)).collect();
        let a: Vec<f64> = ours.iter().map(f).collect();
        let b: Vec<f64> = theirs.iter().map(f).collect();
        let mut detail = format!(
            "this {}, rmcp {}",
            figure(median(&a), unit),
            figure(median(&b), unit)
        );
        if per == Per::Entry && name.starts_with("server CPU") {
            let m = |v: &[Run], f: fn(&Run) -> f64| median(&v.iter().map(f).collect::<Vec<_>>());
            let _ = write!(
                detail,
                "; {:.0} vs {:.0} entries a reply, {:.0} vs {:.0} answered a run",
                m(ours, |r| r.entries),
                m(theirs, |r| r.entries),
                m(ours, |r| r.answered),
                m(theirs, |r| r.answered),
            );
            // Up to `clients` requests are in flight when wrk stops: their
            // CPU is counted, they are not. Said when that is a tenth or more.
            let short: Vec<&str> = [("this server", ours), ("rmcp", theirs)]
                .into_iter()
                .filter(|(_, v)| m(v, |r| r.answered) < (TAIL_BOUND * clients) as f64)
                .map(|(who, _)| who)
                .collect();
            if !short.is_empty() {
                let _ = write!(
                    detail,
                    "; {} answered fewer than {TAIL_BOUND}× its {clients} connections, \
                     so the requests in flight at the end raise its CPU per entry",
                    short.join(" and ")
                );
            }
        }
        t.pair_ratio(
            &format!("{label}: {name}, this ÷ rmcp"),
            size,
            &ratios,
            &detail,
            target,
        );
    }
}

/// A median as the table shows it: a rate whole, ms to two places, µs to
/// two (CPU per entry listed is a few µs).
fn figure(x: f64, unit: &str) -> String {
    match unit {
        "/s" => format!("{x:.0} /s"),
        "ms" => format!("{x:.2} ms"),
        _ => format!("{x:.2} {unit}"),
    }
}
