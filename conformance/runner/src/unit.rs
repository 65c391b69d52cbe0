//! Running one case in one mode (a "unit"): a fresh work dir and server,
//! the handshake of the mode, then each step in order, its reply read as
//! the profile reads it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::case::{Case, CoreStep, Mode, Profile, Progress, Step, StepKind};
use crate::expect::core_view;
use crate::normalize::normalize;
use crate::redact::apply_redactions;
use crate::report::Failure;
use crate::runner::{
    HANDSHAKE_TIMEOUT, RunConfig, UnitRun, fail, init_params, meta, quiet, server_env, wait_msg,
    with_stateless_meta,
};
use crate::session::{Server, WaitError};
use crate::workdir::WorkDir;

/// The `setpriv` arguments that drop the two capabilities that let root
/// ignore file permissions (verified: as root, `cat` of a mode-000 file
/// fails under them).
pub const SETPRIV_ARGS: [&str; 3] = [
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
    "--",
];

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

/// Finds an executable in PATH.
fn which(prog: &str, path: &OsString) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path).map(|d| d.join(prog)).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
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

/// One unit under way: the server, the case, and what the steps so far
/// left for the next (the last `nextCursor`).
struct Unit<'a> {
    server: &'a mut Server,
    case: &'a Case,
    mode: Mode,
    work: &'a mut WorkDir,
    deadline: Instant,
    cfg: &'a RunConfig,
    /// Every spelling of `${WORK}`, replaced in what is recorded.
    spellings: Vec<String>,
    /// The `result.nextCursor` of the last reply that had one, for a later
    /// step's `${nextCursor}` (FORMAT.md, *Steps*).
    last_cursor: Option<String>,
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
    let spellings = work.spellings();
    let mut unit = Unit {
        server,
        case,
        mode,
        work,
        deadline,
        cfg,
        spellings,
        last_cursor: None,
    };
    unit.handshake()?;
    for (i, step) in case.steps.iter().enumerate() {
        if unit.core() && step.core == CoreStep::Skip {
            continue;
        }
        unit.step(i, step, run)?;
    }
    unit.drain()
}

#[allow(clippy::result_large_err)]
impl Unit<'_> {
    fn core(&self) -> bool {
        self.cfg.profile == Profile::Core
    }

    /// The case ran past its total deadline.
    fn past_deadline(&self) -> String {
        format!(
            "the case ran past its total deadline of {} s",
            self.cfg.unit_deadline.as_secs()
        )
    }

    /// The mode's opening: `initialize` (and `initialized`), one
    /// `server/discover`, or nothing for a raw case.
    fn handshake(&mut self) -> Result<(), Failure> {
        match self.mode {
            Mode::Initialize | Mode::Core => {
                self.opening("initialize", init_params(self.cfg.profile))?;
                self.server
                    .send_notification("notifications/initialized", None)
                    .map_err(|m| fail(None, None, m, None))?;
            }
            Mode::Stateless => self.opening("server/discover", json!({"_meta": meta()}))?,
            Mode::Raw => {}
        }
        Ok(())
    }

    /// The handshake's one request: its reply must be a result object.
    fn opening(&mut self, method: &str, params: Value) -> Result<(), Failure> {
        let (id, sent) = self
            .server
            .send_request(method, Some(&params))
            .map_err(|m| fail(None, None, m, None))?;
        let d = self.cfg.unit_deadline;
        let reply = self
            .server
            .wait_reply(id, Instant::now() + HANDSHAKE_TIMEOUT, self.deadline)
            .map_err(|e| {
                let m = wait_msg(e, method, HANDSHAKE_TIMEOUT.as_millis(), d);
                fail(None, None, m, Some(sent.clone()))
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
    }

    /// Step `i`: sent, and its reply (if it has one) recorded in `run`.
    fn step(&mut self, i: usize, step: &Step, run: &mut UnitRun) -> Result<(), Failure> {
        let now = Instant::now();
        if now >= self.deadline {
            return Err(fail(Some(i), Some(self.case), self.past_deadline(), None));
        }
        let at = At {
            i,
            case: self.case,
            timeout: now + Duration::from_millis(step.timeout_ms),
            timeout_ms: step.timeout_ms.into(),
        };
        match &step.kind {
            StepKind::Request { method, params } => {
                self.request(&at, step, method, params, run)?;
            }
            StepKind::Cancel {
                method,
                params,
                after_ms,
                quiet_ms,
            } => {
                let reply = self.cancel(&at, method, params, (*after_ms, *quiet_ms), run)?;
                run.replies[i] = Some(self.redacted(reply, step));
            }
            StepKind::Notify { method, params } => {
                let sent = self
                    .server
                    .send_notification(method, params.as_ref())
                    .map_err(|m| at.fail(m, None))?;
                run.sent[i] = Some(sent);
            }
            StepKind::Raw {
                text,
                reply,
                keep_id,
            } => {
                run.sent[i] = Some(text.clone());
                self.server
                    .send_line(text)
                    .map_err(|m| at.fail(m, Some(text.clone())))?;
                if *reply {
                    run.replies[i] = Some(self.raw_reply(&at, step, text, *keep_id)?);
                }
            }
            StepKind::Concurrent { requests } => {
                let reply = self.concurrent(&at, requests, run)?;
                run.replies[i] = Some(if self.core() {
                    reply
                } else {
                    self.redacted(reply, step)
                });
            }
            StepKind::Act { actions } => {
                for (j, a) in actions.iter().enumerate() {
                    self.work.apply(a).map_err(|e| {
                        at.fail(format!("act[{j}] ({}) failed: {e}", a.describe()), None)
                    })?;
                }
            }
            StepKind::Sleep { ms } => {
                let until = now + Duration::from_millis(*ms);
                self.server
                    .idle_until(until, self.deadline)
                    .map_err(|e| match e {
                        WaitError::Broken(m) => at.fail(m, None),
                        _ => at.fail(self.past_deadline(), None),
                    })?;
            }
        }
        Ok(())
    }

    /// `reply` with the step's redactions applied.
    fn redacted(&self, mut reply: Value, step: &Step) -> Value {
        apply_redactions(&mut reply, &step.redact);
        reply
    }

    /// The reply as this profile reads it: the core view, or the golden's
    /// normalization with the step's redactions.
    fn read(&self, reply: Value, method: Option<&str>, step: &Step) -> Value {
        if self.core() {
            core_view(reply, method, &self.spellings)
        } else {
            let n = normalize(reply, &self.spellings);
            // A progress step is redacted once its summary is in.
            if step.progress.is_none() {
                self.redacted(n, step)
            } else {
                n
            }
        }
    }

    /// A request's params as this mode sends them.
    fn in_mode(&self, params: &Option<Value>) -> Option<Value> {
        if self.mode == Mode::Stateless {
            Some(with_stateless_meta(params.as_ref()))
        } else {
            params.clone()
        }
    }

    /// Waits for the reply to request `id`, sent as `sent`.
    fn reply_to(&mut self, at: &At, id: u64, method: &str, sent: &str) -> Result<Value, Failure> {
        let (timeout_ms, d) = (at.timeout_ms, self.cfg.unit_deadline);
        self.server
            .wait_reply(id, at.timeout, self.deadline)
            .map_err(|e| {
                let what = format!("`{method}` (id {id})");
                at.fail(wait_msg(e, &what, timeout_ms, d), Some(sent.to_owned()))
            })
    }

    /// A request; with `progress`, its reply gains the summary of the
    /// progress notifications it got.
    fn request(
        &mut self,
        at: &At,
        step: &Step,
        method: &str,
        params: &Option<Value>,
        run: &mut UnitRun,
    ) -> Result<(), Failure> {
        let params = with_cursor(params.clone(), self.last_cursor.as_deref())
            .map_err(|m| at.fail(m, None))?;
        let mut params = self.in_mode(&params);
        let token = format!("conformance-progress-{}", at.i);
        if step.progress == Some(Progress::Ask) {
            params = Some(with_progress_token(params.as_ref(), &token));
        }
        let seen = self.server.progress.len();
        let sent_at = Instant::now();
        let (id, sent) = self
            .server
            .send_request(method, params.as_ref())
            .map_err(|m| at.fail(m, None))?;
        run.sent[at.i] = Some(sent.clone());
        let reply = self.reply_to(at, id, method, &sent)?;
        let replied_at = Instant::now();
        if let Some(c) = reply["result"]["nextCursor"].as_str() {
            self.last_cursor = Some(c.to_owned());
        }
        let mut n = self.read(reply, Some(method), step);
        if let Some(how) = step.progress {
            // Anything the token still gets after the reply is a
            // fault (RUN-020): listen a while longer.
            let quiet = (replied_at + PROGRESS_QUIET).min(self.deadline);
            self.server
                .idle_until(quiet, self.deadline)
                .map_err(|e| at.fail(format!("after the reply: {e:?}"), Some(sent.clone())))?;
            let token = (how == Progress::Ask).then_some(token.as_str());
            let summary =
                progress_summary(&self.server.progress[seen..], token, sent_at, replied_at);
            if let Value::Object(m) = &mut n {
                m.insert("progress".into(), summary);
            }
            if !self.core() {
                n = self.redacted(n, step);
            }
        }
        run.replies[at.i] = Some(n);
        Ok(())
    }

    /// A request cancelled `after_ms` after it was sent: `{"replied":
    /// false}` when nothing answers it within `quiet_ms`.
    fn cancel(
        &mut self,
        at: &At,
        method: &str,
        params: &Option<Value>,
        (after_ms, quiet_ms): (u64, u64),
        run: &mut UnitRun,
    ) -> Result<Value, Failure> {
        let params = self.in_mode(params);
        let (id, sent) = self
            .server
            .send_request(method, params.as_ref())
            .map_err(|m| at.fail(m, None))?;
        run.sent[at.i] = Some(sent.clone());
        let deadline = self.deadline;
        let idle = |server: &mut Server, ms: u64| {
            server
                .idle_until(Instant::now() + Duration::from_millis(ms), deadline)
                .map_err(|e| at.fail(format!("while waiting: {e:?}"), Some(sent.clone())))
        };
        idle(self.server, after_ms)?;
        let cancel = json!({"requestId": id, "reason": "the conformance runner cancels it"});
        self.server
            .send_notification("notifications/cancelled", Some(&cancel))
            .map_err(|m| at.fail(m, Some(sent.clone())))?;
        idle(self.server, quiet_ms)?;
        Ok(match self.server.take_reply(id) {
            None => json!({"replied": false}),
            Some(r) => json!({"replied": normalize(r, &self.spellings)}),
        })
    }

    /// The reply to a raw line, whatever its id; with `keep_id`, the id
    /// stays in the record.
    fn raw_reply(
        &mut self,
        at: &At,
        step: &Step,
        text: &str,
        keep_id: bool,
    ) -> Result<Value, Failure> {
        let (timeout_ms, d) = (at.timeout_ms, self.cfg.unit_deadline);
        let r = self
            .server
            .wait_stray(at.timeout, self.deadline)
            .map_err(|e| {
                at.fail(
                    wait_msg(e, "the raw line", timeout_ms, d),
                    Some(text.to_owned()),
                )
            })?;
        let id = r.get("id").cloned();
        let mut n = self.read(r, None, step);
        if keep_id && let (Some(id), Value::Object(m)) = (id, &mut n) {
            m.insert("id".into(), id);
        }
        Ok(n)
    }

    /// Requests sent together before any reply is awaited:
    /// `{"replies": [...]}` in the order sent.
    fn concurrent(
        &mut self,
        at: &At,
        requests: &[(String, Option<Value>)],
        run: &mut UnitRun,
    ) -> Result<Value, Failure> {
        let mut ids = Vec::new();
        let mut sent_all = Vec::new();
        for (method, params) in requests {
            let params = self.in_mode(params);
            let (id, sent) = self
                .server
                .send_request(method, params.as_ref())
                .map_err(|m| at.fail(m, None))?;
            ids.push((id, method));
            sent_all.push(sent);
        }
        let sent = sent_all.join("\n");
        run.sent[at.i] = Some(sent.clone());
        let mut replies = Vec::new();
        for (id, method) in ids {
            let reply = self.reply_to(at, id, method, &sent)?;
            replies.push(if self.core() {
                core_view(reply, Some(method), &self.spellings)
            } else {
                normalize(reply, &self.spellings)
            });
        }
        Ok(json!({ "replies": replies }))
    }

    /// After the last step: anything already received must be
    /// well-formed too.
    fn drain(&mut self) -> Result<(), Failure> {
        self.server.drain().map_err(|e| match e {
            WaitError::Broken(m) => fail(None, None, format!("after the last step: {m}"), None),
            _ => fail(
                None,
                None,
                "after the last step: the server stopped".to_string(),
                None,
            ),
        })
    }
}

/// Where a step's failure is: its index, and the time its reply is due.
struct At<'a> {
    i: usize,
    case: &'a Case,
    timeout: Instant,
    timeout_ms: u128,
}

impl At<'_> {
    fn fail(&self, message: String, sent: Option<String>) -> Failure {
        fail(Some(self.i), Some(self.case), message, sent)
    }
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
}
