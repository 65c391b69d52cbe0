//! Running one case in one mode (a "unit"), judging the results against the
//! golden or across modes, and the worker pool.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::case::{
    Capability, Case, Checks, CoreStep, Golden, GoldenStep, Mode, Profile, Progress, Step, StepKind,
};
use crate::compare::compare;
use crate::expect::{check, core_view};
use crate::json::Diff;
use crate::normalize::normalize;
use crate::redact::apply_redactions;
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
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(20);

/// The `setpriv` arguments that drop the two capabilities that let root
/// ignore file permissions (verified: as root, `cat` of a mode-000 file
/// fails under them).
pub const SETPRIV_ARGS: [&str; 3] = [
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
    "--",
];

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

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS_PROTOCOL,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// How long a step that asked for progress listens after its reply.
const PROGRESS_QUIET: Duration = Duration::from_millis(1500);

/// Params with `_meta.progressToken` set (a step with `"progress": true`).
fn with_progress_token(params: Option<&Value>, token: &str) -> Value {
    let mut p = match params {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let meta = p
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = meta {
        m.insert("progressToken".into(), Value::String(token.into()));
    }
    Value::Object(p)
}

/// What the progress notifications for `token` (None: any token) said: how many came
/// before the reply and after it, the longest wait between two (counted
/// from the request), whether `progress` only grew, the `total`s given,
/// and the first message.
fn progress_summary(
    seen: &[(Instant, Value)],
    token: Option<&str>,
    sent_at: Instant,
    replied_at: Instant,
) -> Value {
    let ours: Vec<&(Instant, Value)> = seen
        .iter()
        .filter(|(_, v)| token.is_none() || v["params"]["progressToken"].as_str() == token)
        .collect();
    let before: Vec<&&(Instant, Value)> = ours.iter().filter(|(t, _)| *t <= replied_at).collect();
    let mut last = sent_at;
    let mut max_gap = 0u128;
    let mut increasing = true;
    let mut prev = f64::NEG_INFINITY;
    let mut totals: Vec<Value> = Vec::new();
    for (t, v) in &before {
        max_gap = max_gap.max(t.duration_since(last).as_millis());
        last = *t;
        let p = v["params"]["progress"].as_f64().unwrap_or(f64::NAN);
        increasing &= p > prev;
        prev = p;
        let total = v["params"]["total"].clone();
        if !totals.contains(&total) {
            totals.push(total);
        }
    }
    max_gap = max_gap.max(replied_at.duration_since(last).as_millis());
    json!({
        "before_reply": before.len(),
        "after_reply": ours.len() - before.len(),
        "max_gap_ms": max_gap as u64,
        "increasing": increasing,
        "totals": totals,
        "first_message": before.first().map(|(_, v)| v["params"]["message"].clone()),
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

fn init_params(profile: Profile) -> Value {
    let version = match profile {
        Profile::Core => CORE_PROTOCOL,
        Profile::Full => INIT_PROTOCOL,
    };
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "skill-mcp-conformance", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// Finds an executable in PATH.
fn which(prog: &str, path: &OsString) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path).map(|d| d.join(prog)).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

fn server_env(
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

fn fail(
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

fn wait_msg(e: WaitError, what: &str, timeout_ms: u128, deadline: Duration) -> String {
    match e {
        WaitError::Timeout => format!("no reply to {what} within {timeout_ms} ms"),
        WaitError::Deadline => format!(
            "the case ran past its total deadline of {} s while waiting for the reply to {what}",
            deadline.as_secs()
        ),
        WaitError::Broken(m) => format!("{m} (while waiting for the reply to {what})"),
    }
}

/// Runs `case` in `mode` against a fresh server and work dir.
pub fn run_unit(case: &Case, mode: Mode, cfg: &RunConfig) -> UnitRun {
    let start = Instant::now();
    let deadline = start + cfg.unit_deadline;
    let mut run = UnitRun {
        mode,
        replies: vec![None; case.steps.len()],
        sent: vec![None; case.steps.len()],
        error: None,
        exit: String::new(),
        stderr_tail: Vec::new(),
        notifications: 0,
        duration: Duration::ZERO,
    };
    let mut work = match WorkDir::create() {
        Ok(w) => w,
        Err(e) => {
            run.error = Some(fail(None, None, e, None));
            return run;
        }
    };
    type Prepared = (Vec<String>, Vec<(String, OsString)>);
    let prepared = (|| -> Result<Prepared, String> {
        work.copy_tree(&case.tree_dir())
            .map_err(|e| format!("copying tree/: {e}"))?;
        for (i, a) in case.setup.iter().enumerate() {
            work.apply(a)
                .map_err(|e| format!("setup[{i}] ({}) failed: {e}", a.describe()))?;
        }
        let env = server_env(&case.env, Some(&case.dir), &work, cfg)?;
        let mut argv = cfg.argv.clone();
        if case.unprivileged && cfg.is_root {
            let sp = which("setpriv", &cfg.path_env).ok_or_else(|| {
                "this case is unprivileged and the runner is root, but `setpriv` (util-linux) is not in PATH to drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH".to_string()
            })?;
            let mut pre = vec![sp.to_string_lossy().into_owned()];
            pre.extend(SETPRIV_ARGS.iter().map(|s| s.to_string()));
            pre.extend(argv);
            argv = pre;
        }
        Ok((argv, env))
    })();
    let (argv, env) = match prepared {
        Ok(p) => p,
        Err(e) => {
            run.error = Some(quiet(e));
            if let Err(c) = work.cleanup() {
                eprintln!("warning: {c}");
            }
            run.duration = start.elapsed();
            return run;
        }
    };
    match Server::spawn(&argv, &env, &work.path) {
        Err(e) => run.error = Some(quiet(e)),
        Ok(mut server) => {
            if let Err(f) = drive(&mut server, case, mode, &mut work, deadline, cfg, &mut run) {
                run.error = Some(f);
            }
            run.notifications = server.notifications.len();
            let fin = server.finish();
            run.exit = fin.exit;
            run.stderr_tail = fin.stderr_tail;
        }
    }
    if let Err(c) = work.cleanup() {
        eprintln!("warning: {c}");
    }
    run.duration = start.elapsed();
    run
}

// The Err is built once per unit; its size does not matter.
#[allow(clippy::result_large_err)]
fn drive(
    server: &mut Server,
    case: &Case,
    mode: Mode,
    work: &mut WorkDir,
    deadline: Instant,
    cfg: &RunConfig,
    run: &mut UnitRun,
) -> Result<(), Failure> {
    let d = cfg.unit_deadline;
    let hs = |m: String| fail(None, None, m, None);
    // The handshake's one request: its reply must be a result object.
    let mut opening = |method: &str, params: Value| -> Result<(), Failure> {
        let (id, sent) = server.send_request(method, Some(&params)).map_err(hs)?;
        let reply = server
            .wait_reply(id, Instant::now() + HANDSHAKE_TIMEOUT, deadline)
            .map_err(|e| {
                fail(
                    None,
                    None,
                    wait_msg(e, method, HANDSHAKE_TIMEOUT.as_millis(), d),
                    Some(sent.clone()),
                )
            })?;
        if !reply.get("result").is_some_and(Value::is_object) {
            return Err(fail(
                None,
                None,
                format!("the server did not accept {method}: {reply}"),
                Some(sent),
            ));
        }
        Ok(())
    };
    match mode {
        Mode::Initialize | Mode::Core => {
            opening("initialize", init_params(cfg.profile))?;
            server
                .send_notification("notifications/initialized", None)
                .map_err(hs)?;
        }
        Mode::Stateless => opening("server/discover", json!({"_meta": meta()}))?,
        Mode::Raw => {}
    }
    let spellings = work.spellings();
    let core = cfg.profile == Profile::Core;
    // The reply as this profile reads it: the core view, or the golden's
    // normalization with the step's redactions.
    let read = |reply: Value, method: Option<&str>, step: &Step| {
        if core {
            core_view(reply, method, &spellings)
        } else {
            let mut n = normalize(reply, &spellings);
            // A progress step is redacted once its summary is in.
            if step.progress.is_none() {
                apply_redactions(&mut n, &step.redact);
            }
            n
        }
    };
    // A request's params as this mode sends them.
    let in_mode = |params: &Option<Value>| {
        if mode == Mode::Stateless {
            Some(with_stateless_meta(params.as_ref()))
        } else {
            params.clone()
        }
    };
    // The `result.nextCursor` of the last reply that had one, for a later
    // step's `${nextCursor}` (FORMAT.md, *Steps*).
    let mut last_cursor: Option<String> = None;
    for (i, step) in case.steps.iter().enumerate() {
        if core && step.core == CoreStep::Skip {
            continue;
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(fail(
                Some(i),
                Some(case),
                format!("the case ran past its total deadline of {} s", d.as_secs()),
                None,
            ));
        }
        let timeout = now + Duration::from_millis(step.timeout_ms);
        let at = |m: String, sent: Option<String>| fail(Some(i), Some(case), m, sent);
        match &step.kind {
            StepKind::Request { method, params } => {
                let params =
                    with_cursor(params.clone(), last_cursor.as_deref()).map_err(|m| at(m, None))?;
                let mut params = in_mode(&params);
                let token = format!("conformance-progress-{i}");
                if step.progress == Some(Progress::Ask) {
                    params = Some(with_progress_token(params.as_ref(), &token));
                }
                let seen = server.progress.len();
                let sent_at = Instant::now();
                let (id, sent) = server
                    .send_request(method, params.as_ref())
                    .map_err(|m| at(m, None))?;
                run.sent[i] = Some(sent.clone());
                let reply = server.wait_reply(id, timeout, deadline).map_err(|e| {
                    at(
                        wait_msg(
                            e,
                            &format!("`{method}` (id {id})"),
                            step.timeout_ms.into(),
                            d,
                        ),
                        Some(sent.clone()),
                    )
                })?;
                let replied_at = Instant::now();
                if let Some(c) = reply["result"]["nextCursor"].as_str() {
                    last_cursor = Some(c.to_owned());
                }
                let mut n = read(reply, Some(method), step);
                if let Some(how) = step.progress {
                    // Anything the token still gets after the reply is a
                    // fault (RUN-020): listen a while longer.
                    let quiet = (replied_at + PROGRESS_QUIET).min(deadline);
                    server
                        .idle_until(quiet, deadline)
                        .map_err(|e| at(format!("after the reply: {e:?}"), Some(sent.clone())))?;
                    let token = (how == Progress::Ask).then_some(token.as_str());
                    let summary =
                        progress_summary(&server.progress[seen..], token, sent_at, replied_at);
                    if let Value::Object(m) = &mut n {
                        m.insert("progress".into(), summary);
                    }
                    if !core {
                        apply_redactions(&mut n, &step.redact);
                    }
                }
                run.replies[i] = Some(n);
            }
            StepKind::Cancel {
                method,
                params,
                after_ms,
                quiet_ms,
            } => {
                let params = in_mode(params);
                let (id, sent) = server
                    .send_request(method, params.as_ref())
                    .map_err(|m| at(m, None))?;
                run.sent[i] = Some(sent.clone());
                let idle = |server: &mut Server, ms: u64| {
                    server
                        .idle_until(Instant::now() + Duration::from_millis(ms), deadline)
                        .map_err(|e| at(format!("while waiting: {e:?}"), Some(sent.clone())))
                };
                idle(server, *after_ms)?;
                let cancel =
                    json!({"requestId": id, "reason": "the conformance runner cancels it"});
                server
                    .send_notification("notifications/cancelled", Some(&cancel))
                    .map_err(|m| at(m, Some(sent.clone())))?;
                idle(server, *quiet_ms)?;
                let mut n = match server.take_reply(id) {
                    None => json!({"replied": false}),
                    Some(r) => json!({"replied": normalize(r, &spellings)}),
                };
                apply_redactions(&mut n, &step.redact);
                run.replies[i] = Some(n);
            }
            StepKind::Notify { method, params } => {
                let sent = server
                    .send_notification(method, params.as_ref())
                    .map_err(|m| at(m, None))?;
                run.sent[i] = Some(sent);
            }
            StepKind::Raw {
                text,
                reply,
                keep_id,
            } => {
                run.sent[i] = Some(text.clone());
                server
                    .send_line(text)
                    .map_err(|m| at(m, Some(text.clone())))?;
                if *reply {
                    let r = server.wait_stray(timeout, deadline).map_err(|e| {
                        at(
                            wait_msg(e, "the raw line", step.timeout_ms.into(), d),
                            Some(text.clone()),
                        )
                    })?;
                    let id = r.get("id").cloned();
                    let mut n = read(r, None, step);
                    if *keep_id && let (Some(id), Value::Object(m)) = (id, &mut n) {
                        m.insert("id".into(), id);
                    }
                    run.replies[i] = Some(n);
                }
            }
            StepKind::Concurrent { requests } => {
                let mut ids = Vec::new();
                let mut sent_all = Vec::new();
                for (method, params) in requests {
                    let params = in_mode(params);
                    let (id, sent) = server
                        .send_request(method, params.as_ref())
                        .map_err(|m| at(m, None))?;
                    ids.push((id, method.clone()));
                    sent_all.push(sent);
                }
                let sent = sent_all.join("\n");
                run.sent[i] = Some(sent.clone());
                let mut replies = Vec::new();
                for (id, method) in ids {
                    let reply = server.wait_reply(id, timeout, deadline).map_err(|e| {
                        at(
                            wait_msg(
                                e,
                                &format!("`{method}` (id {id})"),
                                step.timeout_ms.into(),
                                d,
                            ),
                            Some(sent.clone()),
                        )
                    })?;
                    replies.push(if core {
                        core_view(reply, Some(&method), &spellings)
                    } else {
                        normalize(reply, &spellings)
                    });
                }
                let mut n = serde_json::json!({ "replies": replies });
                if !core {
                    apply_redactions(&mut n, &step.redact);
                }
                run.replies[i] = Some(n);
            }
            StepKind::Act { actions } => {
                for (j, a) in actions.iter().enumerate() {
                    work.apply(a).map_err(|e| {
                        at(format!("act[{j}] ({}) failed: {e}", a.describe()), None)
                    })?;
                }
            }
            StepKind::Sleep { ms } => {
                let until = now + Duration::from_millis(*ms);
                server.idle_until(until, deadline).map_err(|e| match e {
                    WaitError::Broken(m) => at(m, None),
                    _ => at(
                        format!("the case ran past its total deadline of {} s", d.as_secs()),
                        None,
                    ),
                })?;
            }
        }
    }
    // Anything already received must be well-formed too.
    server.drain().map_err(|e| match e {
        WaitError::Broken(m) => fail(None, None, format!("after the last step: {m}"), None),
        _ => fail(
            None,
            None,
            "after the last step: the server stopped".to_string(),
            None,
        ),
    })?;
    Ok(())
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
        Profile::Full => case.modes.clone(),
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
fn quiet(message: String) -> Failure {
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
pub fn run_pool<F>(
    units: usize,
    jobs: usize,
    work: F,
) -> mpsc::Receiver<(usize, Result<UnitRun, String>)>
where
    F: Fn(usize) -> UnitRun + Send + Sync + 'static,
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

/// What a step writes to send the cursor the server last handed out,
/// whatever its form: a case pages without knowing how a server spells
/// its cursors.
pub const NEXT_CURSOR: &str = "${nextCursor}";

/// `params` with every string that is exactly [`NEXT_CURSOR`] replaced by
/// `last`, the `result.nextCursor` of the last reply that had one; an
/// error when a step asks for it and no reply has had one.
fn with_cursor(params: Option<Value>, last: Option<&str>) -> Result<Option<Value>, String> {
    fn walk(v: &mut Value, last: Option<&str>) -> Result<(), String> {
        match v {
            Value::String(s) if s == NEXT_CURSOR => match last {
                Some(c) => {
                    *s = c.to_owned();
                    Ok(())
                }
                None => Err(format!(
                    "the step sends {NEXT_CURSOR}, but no earlier reply had a result.nextCursor"
                )),
            },
            Value::Array(a) => a.iter_mut().try_for_each(|v| walk(v, last)),
            Value::Object(m) => m.values_mut().try_for_each(|v| walk(v, last)),
            _ => Ok(()),
        }
    }
    let mut params = params;
    if let Some(p) = params.as_mut() {
        walk(p, last)?;
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_cursor_is_the_last_one_handed_out_and_nothing_else_changes() {
        let p =
            json!({"cursor": NEXT_CURSOR, "deep": [{"c": NEXT_CURSOR}], "other": "x${nextCursor}"});
        let got = with_cursor(Some(p), Some("abc.500")).unwrap().unwrap();
        assert_eq!(
            got,
            json!({"cursor": "abc.500", "deep": [{"c": "abc.500"}], "other": "x${nextCursor}"})
        );
        assert_eq!(with_cursor(None, None).unwrap(), None);
        assert_eq!(
            with_cursor(Some(json!({"cursor": "500"})), None).unwrap(),
            Some(json!({"cursor": "500"}))
        );
        let e = with_cursor(Some(json!({"cursor": NEXT_CURSOR})), None).unwrap_err();
        assert!(e.contains("no earlier reply"), "{e}");
    }

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
