//! Running one case in one mode (a "unit"), judging the results against the
//! golden or across modes, and the worker pool.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::case::{Capability, Case, Checks, CoreStep, Golden, GoldenStep, Mode, Profile, Step};
use crate::compare::compare;
use crate::expect::check;
use crate::json::Diff;
use crate::report::{Failure, ModeReport, ServerIdentity};
use crate::session::{Server, WaitError};
use crate::workdir::WorkDir;

/// Protocol version offered in `initialize` mode.
pub const INIT_PROTOCOL: &str = "2025-11-25";
/// Protocol version offered in the core profile: the one the design of
/// record's server speaks, so a faithful implementation of that README is
/// asked nothing newer than it knows.
pub const CORE_PROTOCOL: &str = "2025-06-18";
/// Protocol version of `stateless` mode.
pub const STATELESS_PROTOCOL: &str = "2026-07-28";
/// How long the handshake may take.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(20);

pub struct RunConfig {
    /// The server command, program made absolute when it was a relative path.
    pub argv: Vec<String>,
    /// The runner's own PATH, passed to the server.
    pub path_env: OsString,
    /// Total time a unit may take (setup, handshake and steps).
    pub unit_deadline: Duration,
    /// Whether the runner runs as root (then `unprivileged` uses setpriv).
    pub is_root: bool,
    /// Core: hand-written expectations on the core view; full: goldens.
    pub profile: Profile,
}

/// What one unit produced.
pub struct UnitRun {
    pub mode: Mode,
    /// Normalized, redacted reply per step (None: the step records none).
    pub replies: Vec<Option<Value>>,
    /// The line sent for each step.
    pub sent: Vec<Option<String>>,
    /// Set when the unit could not run to its end.
    pub error: Option<Failure>,
    pub exit: String,
    pub stderr_tail: Vec<String>,
    pub notifications: usize,
    pub duration: Duration,
}

pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS_PROTOCOL,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// Params with the stateless `_meta` merged in; keys the step already set win.
pub fn with_stateless_meta(params: Option<&Value>) -> Value {
    let mut p = match params {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let mut m = match p.remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if let Value::Object(ours) = meta() {
        for (k, v) in ours {
            m.entry(k).or_insert(v);
        }
    }
    p.insert("_meta".to_string(), Value::Object(m));
    Value::Object(p)
}

pub fn init_params(profile: Profile) -> Value {
    let version = match profile {
        Profile::Core => CORE_PROTOCOL,
        Profile::Full | Profile::Skills => INIT_PROTOCOL,
    };
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "skill-mcp-conformance", "version": env!("CARGO_PKG_VERSION")}
    })
}

pub fn server_env(
    case_env: &[(String, String)],
    case_dir: Option<&Path>,
    work: &WorkDir,
    cfg: &RunConfig,
) -> Result<Vec<(String, OsString)>, String> {
    let w = work.path_str()?;
    let mut env: BTreeMap<String, OsString> = BTreeMap::new();
    env.insert("PATH".into(), cfg.path_env.clone());
    env.insert("HOME".into(), work.path.join("home").into_os_string());
    env.insert("TMPDIR".into(), work.path.join("tmp").into_os_string());
    env.insert("LANG".into(), "C.UTF-8".into());
    let c = match case_dir {
        Some(d) => d
            .to_str()
            .ok_or_else(|| format!("the case dir {} is not valid UTF-8", d.display()))?
            .to_string(),
        None => String::new(),
    };
    for (k, v) in case_env {
        let v = v.replace("${WORK}", w).replace("${CASE}", &c);
        env.insert(k.clone(), v.into());
    }
    Ok(env.into_iter().collect())
}

pub fn fail(
    step: Option<usize>,
    case: Option<&Case>,
    message: String,
    request: Option<String>,
) -> Failure {
    Failure {
        step: step.map(|i| i + 1),
        step_desc: step.and_then(|i| case.and_then(|c| c.steps.get(i)).map(Step::describe)),
        message,
        request,
        show_stderr: true,
        ..Failure::default()
    }
}

pub fn wait_msg(e: WaitError, what: &str, timeout_ms: u128, deadline: Duration) -> String {
    match e {
        WaitError::Timeout => format!("no reply to {what} within {timeout_ms} ms"),
        WaitError::Deadline => format!(
            "the case ran past its total deadline of {} s while waiting for the reply to {what}",
            deadline.as_secs()
        ),
        WaitError::Broken(m) => format!("{m} (while waiting for the reply to {what})"),
    }
}

/// One request to a fresh server over an empty root, before any case: the
/// reply, or why there is none.
fn probe(cfg: &RunConfig, method: &str, params: &Value) -> Result<Value, String> {
    let work = WorkDir::create()?;
    let skills = vec![("SKILLS_DIR".to_string(), "${WORK}/tree".to_string())];
    let result = (|| -> Result<Value, String> {
        let env = server_env(&skills, None, &work, cfg)?;
        let mut server = Server::spawn(&cfg.argv, &env, &work.path)?;
        let got = (|| {
            let (rid, _) = server.send_request(method, Some(params))?;
            let now = Instant::now();
            server
                .wait_reply(rid, now + HANDSHAKE_TIMEOUT, now + HANDSHAKE_TIMEOUT)
                .map_err(|e| wait_msg(e, method, HANDSHAKE_TIMEOUT.as_millis(), HANDSHAKE_TIMEOUT))
        })();
        let fin = server.finish();
        got.map_err(|e| {
            let mut m = format!("{e}; server {}", fin.exit);
            if !fin.stderr_tail.is_empty() {
                m.push_str("; stderr: ");
                m.push_str(&fin.stderr_tail.join(" | "));
            }
            m
        })
    })();
    if let Err(e) = work.cleanup() {
        eprintln!("warning: {e}");
    }
    result
}

/// serverInfo, protocol version and capabilities from one initialize
/// against an empty root; in the full profile, also whether the server
/// speaks the stateless mode (one `server/discover`).
pub fn preflight(cfg: &RunConfig) -> ServerIdentity {
    let mut id = ServerIdentity::default();
    match probe(cfg, "initialize", &init_params(cfg.profile)) {
        Ok(reply) => match reply.get("result") {
            Some(r) => {
                id.server_info = r.get("serverInfo").cloned();
                id.protocol_version = r
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(String::from);
                id.capabilities = r.get("capabilities").cloned();
                if id.server_info.is_none() {
                    id.error = Some("the initialize result has no serverInfo".to_string());
                }
            }
            None => id.error = Some(format!("initialize failed: {reply}")),
        },
        Err(e) => id.error = Some(e),
    }
    if cfg.profile == Profile::Full {
        id.stateless = Some(
            match probe(cfg, "server/discover", &json!({"_meta": meta()})) {
                Ok(reply) if reply.get("result").is_some_and(Value::is_object) => Ok(()),
                Ok(reply) => Err(format!(
                    "server/discover answered {}",
                    crate::json::clip(&reply.get("error").unwrap_or(&reply).to_string(), 200)
                )),
                Err(e) => Err(format!("server/discover got no answer: {e}")),
            },
        );
    }
    id
}

/// Why the server cannot be asked what `cap` is about, or None when it
/// advertises it.
pub fn lacks(id: &ServerIdentity, cap: Capability) -> Option<String> {
    let caps = id.capabilities.as_ref();
    let flag = |area: &str| {
        caps.and_then(|c| c.get(area))
            .and_then(|a| a.get("listChanged"))
            .and_then(Value::as_bool)
            == Some(true)
    };
    let has = match cap {
        Capability::SkillsExtension => caps
            .and_then(|c| c.get("extensions"))
            .and_then(|e| e.get("io.modelcontextprotocol/skills"))
            .is_some(),
        Capability::PromptsListChanged => flag("prompts"),
        Capability::ResourcesListChanged => flag("resources"),
    };
    (!has).then(|| match cap {
        Capability::SkillsExtension => "the server does not advertise the MCP Skills extension (capabilities.extensions has no io.modelcontextprotocol/skills)".to_string(),
        Capability::PromptsListChanged => "the server does not advertise prompts.listChanged".to_string(),
        Capability::ResourcesListChanged => "the server does not advertise resources.listChanged".to_string(),
    })
}

fn mode_report(run: &UnitRun, failures: Vec<Failure>) -> ModeReport {
    ModeReport {
        mode: run.mode,
        passed: failures.is_empty(),
        not_applicable: None,
        duration_ms: run.duration.as_millis() as u64,
        failures,
        exit: run.exit.clone(),
        stderr_tail: run.stderr_tail.clone(),
        notifications: run.notifications,
    }
}

/// The modes a case runs in under `profile`: core runs each core case once
/// (raw when that is its only mode), full runs every mode the case lists.
pub fn modes_for(case: &Case, profile: Profile) -> Vec<Mode> {
    match profile {
        Profile::Full | Profile::Skills => case.modes.clone(),
        Profile::Core if case.modes == [Mode::Raw] => vec![Mode::Raw],
        Profile::Core => vec![Mode::Core],
    }
}

/// Why `case` cannot run against this server at all, if it cannot.
pub fn case_gate(case: &Case, id: &ServerIdentity) -> Option<String> {
    case.requires.iter().find_map(|&c| lacks(id, c))
}

/// Why `mode` cannot run against this server, if it cannot.
pub fn mode_gate(mode: Mode, id: &ServerIdentity) -> Option<String> {
    match (mode, &id.stateless) {
        (Mode::Stateless, Some(Err(why))) => Some(format!(
            "the server does not speak the 2026-07-28 stateless mode ({why})"
        )),
        _ => None,
    }
}

/// A failure that is not the server's doing: no stderr in the report.
pub fn quiet(message: String) -> Failure {
    Failure {
        message,
        ..Failure::default()
    }
}

/// Judges one unit against the case's golden.
pub fn judge(case: &Case, golden: Option<&Golden>, run: &UnitRun) -> ModeReport {
    if let Some(e) = &run.error {
        return mode_report(run, vec![e.clone()]);
    }
    let Some(g) = golden else {
        return mode_report(run, vec![quiet("no golden: run with --bless".to_string())]);
    };
    let mut failures = Vec::new();
    if g.id != case.id {
        failures.push(quiet(format!(
            "golden.json is for `{}`, not `{}`: run with --bless",
            g.id, case.id
        )));
    } else if g.steps.len() != case.steps.len() {
        failures.push(quiet(format!(
            "golden.json has {} steps but case.json has {}: the case changed, run with --bless",
            g.steps.len(),
            case.steps.len()
        )));
    } else {
        for (i, (gs, actual)) in g.steps.iter().zip(&run.replies).enumerate() {
            let mut f = fail(Some(i), Some(case), String::new(), run.sent[i].clone());
            f.show_stderr = false;
            match (&gs.reply, actual) {
                (None, None) => continue,
                (Some(_), None) | (None, Some(_)) => {
                    f.message = "golden.json and case.json disagree on whether this step has a reply: run with --bless".to_string();
                }
                (Some(e), Some(a)) => {
                    let Some(d) = compare(e, a, case.checks) else {
                        continue;
                    };
                    differs(&mut f, "replies differ", d, e, a);
                }
            }
            failures.push(f);
        }
    }
    mode_report(run, failures)
}

/// Fills a step's failure with the first difference and both frames.
fn differs(f: &mut Failure, what: &str, d: Diff, expected: &Value, actual: &Value) {
    f.message = format!("{what} at {}: {}", d.path, d.what);
    f.path = Some(d.path);
    f.expected = d.expected;
    f.actual = d.actual;
    f.expected_frame = Some(expected.clone());
    f.actual_frame = Some(actual.clone());
}

/// Judges one unit of the core profile: each step's reply, read as its
/// core view, against the step's hand-written pattern.
pub fn judge_core(case: &Case, run: &UnitRun) -> ModeReport {
    if let Some(e) = &run.error {
        return mode_report(run, vec![e.clone()]);
    }
    let mut failures = Vec::new();
    for (i, step) in case.steps.iter().enumerate() {
        let CoreStep::Expect(pattern) = &step.core else {
            continue;
        };
        let mut f = fail(Some(i), Some(case), String::new(), run.sent[i].clone());
        f.show_stderr = false;
        f.labels = Some(("expected (pattern)".into(), "actual (core view)".into()));
        match &run.replies[i] {
            None => f.message = "the step recorded no reply".to_string(),
            Some(actual) => {
                let Some(d) = check(pattern, actual) else {
                    continue;
                };
                differs(&mut f, "reply does not match", d, pattern, actual);
            }
        }
        failures.push(f);
    }
    mode_report(run, failures)
}

/// For `--bless`: judges each unit on its own, then requires every mode to
/// agree. Returns the per-mode reports, case-level failures and, when all is
/// well, the golden to record.
pub fn judge_bless(
    case: &Case,
    runs: &[UnitRun],
) -> (Vec<ModeReport>, Vec<Failure>, Option<Golden>) {
    let reports: Vec<ModeReport> = runs
        .iter()
        .map(|r| mode_report(r, r.error.iter().cloned().collect()))
        .collect();
    if reports.iter().any(|r| !r.passed) {
        let f = fail(
            None,
            None,
            "not recorded: a mode did not run to its end".to_string(),
            None,
        );
        return (
            reports,
            vec![Failure {
                show_stderr: false,
                ..f
            }],
            None,
        );
    }
    let mut case_failures = Vec::new();
    if let Some((first, rest)) = runs.split_first() {
        for other in rest {
            for (i, (a, b)) in first.replies.iter().zip(&other.replies).enumerate() {
                let diff = match (a, b) {
                    (Some(a), Some(b)) => compare(a, b, Checks::Exact),
                    _ => None,
                };
                if let Some(d) = diff {
                    let (fm, om) = (first.mode.as_str(), other.mode.as_str());
                    let mut f = fail(
                        Some(i),
                        Some(case),
                        format!(
                            "not recorded: the {fm} and {om} replies differ at {} ({}, comparing {om} against {fm})",
                            d.path, d.what
                        ),
                        first.sent[i].clone(),
                    );
                    f.show_stderr = false;
                    f.labels = Some((fm.to_string(), om.to_string()));
                    f.path = Some(d.path);
                    f.expected = d.expected;
                    f.actual = d.actual;
                    f.expected_frame = a.clone();
                    f.actual_frame = b.clone();
                    case_failures.push(f);
                }
            }
        }
    }
    if !case_failures.is_empty() {
        return (reports, case_failures, None);
    }
    let golden = runs.first().map(|r| Golden {
        id: case.id.clone(),
        steps: r
            .replies
            .iter()
            .map(|x| GoldenStep { reply: x.clone() })
            .collect(),
    });
    (reports, case_failures, golden)
}

/// Runs `units` on `jobs` threads; results arrive on the returned channel as
/// (unit index, result). A panic inside a unit becomes a failed result.
pub fn run_pool<T, F>(
    units: usize,
    jobs: usize,
    work: F,
) -> mpsc::Receiver<(usize, Result<T, String>)>
where
    T: Send + 'static,
    F: Fn(usize) -> T + Send + Sync + 'static,
{
    let (tx, rx) = mpsc::channel();
    let next = Arc::new(AtomicUsize::new(0));
    let work = Arc::new(work);
    for _ in 0..jobs.clamp(1, units.max(1)) {
        let (tx, next, work) = (tx.clone(), Arc::clone(&next), Arc::clone(&work));
        let spawned = thread::Builder::new()
            .name("unit-worker".into())
            .spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= units {
                        return;
                    }
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(i)))
                        .map_err(|p| {
                            let msg = p
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_else(|| "unknown panic".to_string());
                            format!("internal error in the runner: {msg}")
                        });
                    if tx.send((i, r)).is_err() {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            eprintln!("warning: cannot start a worker thread: {e}");
        }
    }
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stateless_meta_is_merged_and_step_keys_win() {
        let p = with_stateless_meta(None);
        assert_eq!(p, json!({"_meta": meta()}));
        let p = with_stateless_meta(Some(&json!({"name": "x", "_meta": {"progressToken": 1}})));
        assert_eq!(p["name"], "x");
        assert_eq!(p["_meta"]["progressToken"], 1);
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/protocolVersion"],
            STATELESS_PROTOCOL
        );
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        let p = with_stateless_meta(Some(
            &json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}}),
        ));
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "1999-01-01"
        );
    }

    #[test]
    fn pool_runs_every_unit_and_survives_panics() {
        let rx = run_pool(5, 3, |i| {
            if i == 2 {
                panic!("boom");
            }
            UnitRun {
                mode: Mode::Raw,
                replies: vec![Some(json!(i))],
                sent: vec![None],
                error: None,
                exit: String::new(),
                stderr_tail: vec![],
                notifications: 0,
                duration: Duration::ZERO,
            }
        });
        let mut got: Vec<(usize, bool)> = rx.iter().map(|(i, r)| (i, r.is_ok())).collect();
        got.sort();
        assert_eq!(
            got,
            vec![(0, true), (1, true), (2, false), (3, true), (4, true)]
        );
    }
}
