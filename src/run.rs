//! `skill_run`: executing a declared script behind the execution fence.
//!
//! README "The execution fence": only a script the skill declares (and the
//! grant allows); only inside the skill's own directory (the full path
//! fence, at preview and at run); an argv array, never a shell; an
//! interpreter from a closed set named by the declaration; bounded, and the
//! call always returns; one run at a time; an environment built from
//! nothing but an allowlist and the granted names; and a confirm gate whose
//! dry run shows exactly what would run (spec RUN-001..RUN-016).
//!
//! A declared script is still arbitrary code: these rules narrow which code
//! runs and with what, and none of them is a sandbox.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::sync::Mutex as AsyncMutex;

use crate::catalog::Skill;
use crate::config::Config;
use crate::echo::excerpt;
use crate::fence::{self, FenceError};
use crate::grant::Scripts;
use crate::interpreters::Interpreters;

/// The variables every script gets when the server has them (README: "A
/// script gets `PATH`, `HOME`, `LANG`, `TZ`, `TMPDIR`, `MCP_DATA_DIR` when
/// the host set one"). It mirrors mcp-host's `INSTALL_ALLOWLIST`: a host
/// constant a declaration cannot widen by one name.
pub(crate) const ENV_ALLOWLIST: &[&str] = &["PATH", "HOME", "LANG", "TZ", "TMPDIR", "MCP_DATA_DIR"];

/// Most arguments one run takes.
pub(crate) const MAX_ARGS: usize = 64;
/// Most bytes of arguments one run takes, in all: pass a path, not a payload.
pub(crate) const MAX_ARG_BYTES: usize = 8 * 1024;
/// Bytes kept per output stream (RUN-010), from the one place bounds live.
pub use crate::limits::MAX_STREAM_BYTES;
/// Between SIGTERM and SIGKILL to the process group on timeout.
pub(crate) const KILL_GRACE: Duration = Duration::from_millis(2000);
/// How long after the script exits its pipes may keep delivering output.
pub(crate) const DRAIN: Duration = Duration::from_millis(250);
/// Beyond timeout + grace + drain, before the call returns regardless.
pub(crate) const HARD_SLACK: Duration = Duration::from_millis(1000);
/// How often a run with a progress token reports (RUN-022): twice a
/// second, so "at least once a second" holds with scheduling jitter, and a
/// client that resets its own request timeout on progress never reaches it.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// The note attached to a failed run on a machine that looks fenced
/// (README "Hosting on mcp-host"; spec RUN-016: a hosted marker or a proxy
/// variable is set, [`Config::looks_fenced`]).
pub(crate) const FENCED_NOTE: &str = "This machine looks fenced (a hosted marker or a proxy variable is set in this server's \
environment): a script's network is usually limited to a declared egress allowlist, reached through a loopback proxy. \
A host that is not on the list appears either as an HTTP 403 from that proxy or as a plain timeout, and the two cannot \
be told apart from inside the script: if this failure looks like a network failure, the fix is the registration's \
egress policy, not the script.";

/// Why a run was refused. Each message names the rule and the next step,
/// and quotes no more of the script asked for than an excerpt (HARD-005).
#[derive(Debug)]
pub(crate) enum RunError {
    /// Not in the skill's `mcp-host.run` block at all.
    NotDeclared {
        skill: String,
        script: String,
        declared: Vec<String>,
    },
    /// Declared, but the owner did not grant it.
    Ungranted {
        skill: String,
        script: String,
        grant_from: &'static str,
    },
    /// Declared and perhaps granted, but this deployment cannot run it.
    Unavailable {
        script: String,
        reason: String,
    },
    /// The path fence refused the script.
    Fence(FenceError),
    TooManyArgs {
        count: usize,
    },
    ArgsTooLarge {
        bytes: usize,
    },
    ArgNul {
        index: usize,
    },
    /// Another run holds the one-at-a-time lock.
    Busy,
    /// The interpreter could not be started.
    Spawn {
        script: String,
        error: std::io::Error,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::NotDeclared {
                skill,
                script,
                declared,
            } => {
                write!(
                    f,
                    "{} is not declared as a runnable script by the skill {skill:?}: only a script listed in \
                     the skill's mcp-host.run block may run. ",
                    excerpt(script)
                )?;
                if declared.is_empty() {
                    write!(f, "This skill declares none.")
                } else {
                    write!(f, "It declares: {}.", declared.join(", "))
                }
            }
            RunError::Ungranted {
                skill,
                script,
                grant_from,
            } => write!(
                f,
                "{} is declared by the skill {skill:?} but is not granted for this registration, so it may \
                 not run (grantFrom: {grant_from}). This is the owner's decision, not a typo: a script becomes \
                 runnable when MCP_SKILL_RUN grants it.",
                excerpt(script)
            ),
            RunError::Unavailable { script, reason } => write!(f, "{} {reason}", excerpt(script)),
            RunError::Fence(e) => write!(f, "{e}"),
            RunError::TooManyArgs { count } => {
                write!(
                    f,
                    "too many arguments: {count}, the cap is {MAX_ARGS}; pass a file path instead"
                )
            }
            RunError::ArgsTooLarge { bytes } => write!(
                f,
                "arguments total {bytes} bytes, over the {MAX_ARG_BYTES}-byte cap; pass a path rather than a payload"
            ),
            RunError::ArgNul { index } => write!(
                f,
                "argument {index} contains a NUL byte, which no argv can carry"
            ),
            RunError::Busy => write!(
                f,
                "another skill_run is already running on this server; it runs one script at a time. Wait for it \
                 to finish and call again."
            ),
            RunError::Spawn { script, error } => {
                write!(f, "could not start {}: {error}", excerpt(script))
            }
        }
    }
}

impl std::error::Error for RunError {}

/// Exactly what would run: the dry run shows it and the run executes it.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) skill: String,
    pub(crate) script: String,
    pub(crate) interpreter: String,
    /// The exact argv: interpreter's absolute path, script's real path, args.
    pub(crate) argv: Vec<String>,
    pub(crate) cwd: PathBuf,
    pub(crate) timeout_ms: u64,
    /// The environment handed over, built from nothing.
    env: Vec<(OsString, OsString)>,
    /// Names in `env`, sorted.
    pub(crate) env_names: Vec<String>,
    /// Granted names the server's environment does not set.
    pub(crate) env_not_set: Vec<String>,
}

fn check_args(args: &[String]) -> Result<(), RunError> {
    if args.len() > MAX_ARGS {
        return Err(RunError::TooManyArgs { count: args.len() });
    }
    let bytes: usize = args.iter().map(String::len).sum();
    if bytes > MAX_ARG_BYTES {
        return Err(RunError::ArgsTooLarge { bytes });
    }
    if let Some(index) = args.iter().position(|a| a.contains('\0')) {
        return Err(RunError::ArgNul { index });
    }
    Ok(())
}

/// Decides whether `script` of `skill` may run with `args`, and exactly how
/// (RUN-001..RUN-008). Every refusal a run would meet is met here, so the
/// preview refuses what the run would refuse.
pub(crate) fn plan(
    skill: &Skill,
    scripts: &Scripts,
    interpreters: &Interpreters,
    config: &Config,
    grant_from: &'static str,
    script: &str,
    args: &[String],
) -> Result<Plan, RunError> {
    let Some(entry) = skill.declaration.run.iter().find(|e| e.script == script) else {
        return Err(RunError::NotDeclared {
            skill: skill.name.clone(),
            script: script.to_owned(),
            declared: skill
                .declaration
                .run
                .iter()
                .map(|e| e.script.clone())
                .collect(),
        });
    };
    if let Some((_, reason)) = scripts.unavailable.iter().find(|(s, _)| s == script) {
        return Err(RunError::Unavailable {
            script: script.to_owned(),
            reason: reason.clone(),
        });
    }
    let Some(runnable) = scripts.runnable.iter().find(|r| r.entry.script == script) else {
        return Err(RunError::Ungranted {
            skill: skill.name.clone(),
            script: script.to_owned(),
            grant_from,
        });
    };
    let interpreter =
        interpreters
            .lookup(&entry.interpreter)
            .map_err(|reason| RunError::Unavailable {
                script: script.to_owned(),
                reason,
            })?;
    let (real, _) = fence::resolve(&skill.dir, script).map_err(RunError::Fence)?;
    check_args(args)?;

    let mut env = Vec::new();
    let mut env_not_set = Vec::new();
    for name in ENV_ALLOWLIST
        .iter()
        .copied()
        .chain(runnable.env.iter().map(String::as_str))
    {
        match config.var(name) {
            Some(v) => env.push((OsString::from(name), v.to_owned())),
            None if !ENV_ALLOWLIST.contains(&name) => env_not_set.push(name.to_owned()),
            None => {}
        }
    }
    env.sort();
    env.dedup_by(|a, b| a.0 == b.0);
    let mut argv = vec![
        interpreter.to_string_lossy().into_owned(),
        real.to_string_lossy().into_owned(),
    ];
    argv.extend(args.iter().cloned());
    Ok(Plan {
        skill: skill.name.clone(),
        script: script.to_owned(),
        interpreter: entry.interpreter.clone(),
        argv,
        cwd: skill.dir.clone(),
        timeout_ms: entry.timeout_ms,
        env_names: env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect(),
        env,
        env_not_set,
    })
}

/// One captured stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Captured {
    pub(crate) text: String,
    /// `utf-8`, or `base64` when the bytes are not UTF-8.
    pub(crate) encoding: &'static str,
    pub(crate) truncated: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<String>,
    pub(crate) timed_out: bool,
    pub(crate) duration_ms: u64,
    pub(crate) stdout: Captured,
    pub(crate) stderr: Captured,
}

/// A stream's bytes so far, shared with its reader so a settled run can
/// take them even while a detached grandchild keeps the pipe open.
#[derive(Default)]
struct Buffer {
    bytes: Vec<u8>,
    truncated: bool,
    done: bool,
}

fn spawn_reader<R: tokio::io::AsyncRead + Unpin + Send + 'static>(
    mut pipe: R,
    buf: Arc<Mutex<Buffer>>,
) {
    tokio::spawn(async move {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let Ok(mut b) = buf.lock() else { break };
                    let room = MAX_STREAM_BYTES - b.bytes.len();
                    if n > room {
                        b.truncated = true;
                    }
                    // Past the cap the reader keeps draining and dropping, so
                    // a flooding script is never blocked into a fake timeout.
                    let keep = n.min(room);
                    b.bytes.extend_from_slice(&chunk[..keep]);
                }
            }
        }
        if let Ok(mut b) = buf.lock() {
            b.done = true;
        }
    });
}

fn take(buf: &Arc<Mutex<Buffer>>) -> Captured {
    let (bytes, truncated) = match buf.lock() {
        Ok(mut b) => (std::mem::take(&mut b.bytes), b.truncated),
        Err(_) => (Vec::new(), false),
    };
    match crate::read::utf8_prefix(&bytes, truncated) {
        Ok(text) => Captured {
            text: text.to_owned(),
            encoding: "utf-8",
            truncated,
        },
        Err(_) => Captured {
            text: base64::engine::general_purpose::STANDARD.encode(&bytes),
            encoding: "base64",
            truncated,
        },
    }
}

fn both_done(a: &Arc<Mutex<Buffer>>, b: &Arc<Mutex<Buffer>>) -> bool {
    let done = |x: &Arc<Mutex<Buffer>>| x.lock().map(|g| g.done).unwrap_or(true);
    done(a) && done(b)
}

/// Kills whatever is left of the script's process group when dropped, so a
/// cancelled call or a settled run never leaves its group behind.
struct GroupGuard(Option<Pid>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

/// How long a run has been going, for a client's progress notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tick {
    pub(crate) elapsed_ms: u64,
    pub(crate) timeout_ms: u64,
}

/// What a run is told from outside while it goes: `cancelled` resolves
/// when the client cancels the call (`notifications/cancelled`), and
/// `progress`, when the client asked for progress, receives a [`Tick`]
/// every [`PROGRESS_EVERY`] until the run settles.
pub(crate) struct Watch<C> {
    pub(crate) cancelled: C,
    pub(crate) progress: Option<tokio::sync::mpsc::UnboundedSender<Tick>>,
}

/// The one-at-a-time lock (RUN-011): a second run is refused at once as
/// busy, never queued, so a waiting caller's budget is never spent waiting.
pub(crate) struct RunLock {
    held: AsyncMutex<()>,
    /// Becomes true when the client hangs up: a run in progress is then
    /// killed at once rather than left to its timeout (RUN-009).
    hangup: Option<tokio::sync::watch::Receiver<bool>>,
}

impl RunLock {
    /// A lock whose runs end when `hangup` turns true.
    pub(crate) fn new(hangup: Option<tokio::sync::watch::Receiver<bool>>) -> RunLock {
        RunLock {
            held: AsyncMutex::new(()),
            hangup,
        }
    }

    /// The signal that the client hung up, for a wait that must end with
    /// it (RUN-028's approval).
    pub(crate) fn hangup(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        self.hangup.clone()
    }

    /// Runs `plan` while holding the lock, or refuses as busy. The lock is
    /// released when the run settles, a cancelled one included.
    pub(crate) async fn run<C: Future<Output = ()>>(
        &self,
        plan: &Plan,
        watch: Watch<C>,
    ) -> Result<Outcome, RunError> {
        let _held = self.held.try_lock().map_err(|_| RunError::Busy)?;
        execute(plan, self.hangup.clone(), watch).await
    }
}

/// Resolves when the client has hung up; never, without a hangup signal
/// (a run's end, RUN-009; a stdio listen's, HTTP-012).
pub(crate) async fn hung_up(hangup: Option<tokio::sync::watch::Receiver<bool>>) {
    match hangup {
        Some(mut rx) => {
            let _ = rx.wait_for(|&h| h).await;
        }
        None => std::future::pending().await,
    }
}

/// Executes a plan (RUN-002, RUN-009, RUN-010): argv with no shell, the
/// skill's directory as working directory, stdin closed, its own process
/// group, SIGTERM then SIGKILL to the group on timeout, and a settle on the
/// process exiting plus a short drain under a hard deadline — never on the
/// pipes closing, which a detached grandchild could hold open for ever.
pub(crate) async fn execute<C: Future<Output = ()>>(
    plan: &Plan,
    hangup: Option<tokio::sync::watch::Receiver<bool>>,
    watch: Watch<C>,
) -> Result<Outcome, RunError> {
    // The fence again, at run time: the preview's check is not this run's.
    let (real, _) = fence::resolve(&plan.cwd, &plan.script).map_err(RunError::Fence)?;
    if real.to_string_lossy() != plan.argv[1] {
        return Err(RunError::Fence(FenceError::Changed {
            path: plan.script.clone(),
        }));
    }
    let mut cmd = tokio::process::Command::new(&plan.argv[0]);
    cmd.args(&plan.argv[1..])
        .env_clear()
        .envs(plan.env.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())))
        .current_dir(&plan.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|error| RunError::Spawn {
        script: plan.script.clone(),
        error,
    })?;
    let pgid = child.id().map(|id| Pid::from_raw(id as i32));
    let _group = GroupGuard(pgid);
    let out = Arc::new(Mutex::new(Buffer::default()));
    let err = Arc::new(Mutex::new(Buffer::default()));
    if let Some(p) = child.stdout.take() {
        spawn_reader(p, Arc::clone(&out));
    }
    if let Some(p) = child.stderr.take() {
        spawn_reader(p, Arc::clone(&err));
    }

    // Progress (RUN-022) comes from a task of its own, so the wait below
    // stays one select; it is stopped, and has sent its last tick, before
    // the run returns — no progress follows the reply.
    let ticker = watch.progress.map(|tx| {
        let timeout_ms = plan.timeout_ms;
        tokio::spawn(async move {
            let first = tokio::time::Instant::from_std(start) + PROGRESS_EVERY;
            let mut every = tokio::time::interval_at(first, PROGRESS_EVERY);
            loop {
                every.tick().await;
                let tick = Tick {
                    elapsed_ms: start.elapsed().as_millis() as u64,
                    timeout_ms,
                };
                if tx.send(tick).is_err() {
                    break;
                }
            }
        })
    });

    let timeout = Duration::from_millis(plan.timeout_ms);
    let hard = start + timeout + KILL_GRACE + DRAIN + HARD_SLACK;
    let signal_group = |sig: Signal| {
        if let Some(pg) = pgid {
            let _ = killpg(pg, sig);
        }
    };
    let mut timed_out = false;
    let cancelled = watch.cancelled;
    let waited = tokio::select! {
        status = tokio::time::timeout(timeout, child.wait()) => status,
        // Nobody will read the answer — the client hung up (RUN-009) or
        // cancelled this call (RUN-021): end the run now.
        () = hung_up(hangup) => {
            signal_group(Signal::SIGKILL);
            Ok(child.wait().await)
        }
        () = cancelled => {
            signal_group(Signal::SIGKILL);
            Ok(child.wait().await)
        }
    };
    let status = match waited {
        Ok(status) => status.ok(),
        Err(_) => {
            timed_out = true;
            signal_group(Signal::SIGTERM);
            match tokio::time::timeout(KILL_GRACE, child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => {
                    signal_group(Signal::SIGKILL);
                    let left = hard.saturating_duration_since(Instant::now());
                    tokio::time::timeout(left, child.wait())
                        .await
                        .ok()
                        .and_then(Result::ok)
                }
            }
        }
    };
    if let Some(t) = ticker {
        t.abort();
        let _ = t.await;
    }
    // Drain: the pipes may still deliver what was written just before the
    // exit, but only for DRAIN and never past the hard deadline.
    let drain_until = (Instant::now() + DRAIN).min(hard);
    while !both_done(&out, &err) && Instant::now() < drain_until {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Anything left in the group is a leftover of this run, and so is any
    // child of this server's still alive: runs are one at a time (RUN-011)
    // and the server is a subreaper (RUN-027), so a process the script
    // detached into a session of its own has been re-parented here.
    signal_group(Signal::SIGKILL);
    end_leftovers().await;
    let duration_ms = start.elapsed().as_millis() as u64;
    let (exit_code, signal) = match status {
        Some(s) => {
            use std::os::unix::process::ExitStatusExt;
            (s.code(), s.signal().map(signal_name))
        }
        None => (None, Some("SIGKILL".to_owned())),
    };
    Ok(Outcome {
        exit_code,
        signal,
        timed_out,
        duration_ms,
        stdout: take(&out),
        stderr: take(&err),
    })
}

/// How long [`end_leftovers`] keeps killing and reaping: a killed
/// process's own children are re-parented here only once it is dead.
const LEFTOVER_DEADLINE: Duration = Duration::from_millis(500);

/// This process's children, from every thread's `children` list (a
/// re-parented orphan may be listed under any of them).
fn children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut pids: Vec<i32> = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
        .flat_map(|c| {
            c.split_ascii_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// Kills and reaps every child of the server left when a run settles
/// (RUN-027), then their children as they are re-parented here, for at
/// most [`LEFTOVER_DEADLINE`]: a script's detached process never outlives
/// its run, so it cannot read the next script's environment or arguments.
/// It waits with the runtime's timer, so a slow leftover never holds one of
/// the runtime's two worker threads.
async fn end_leftovers() {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    let until = Instant::now() + LEFTOVER_DEADLINE;
    loop {
        let left = children();
        if left.is_empty() || Instant::now() >= until {
            return;
        }
        for pid in left {
            let pid = Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
            let _ = waitpid(pid, Some(WaitPidFlag::WNOHANG));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn signal_name(sig: i32) -> String {
    Signal::try_from(sig)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

/// True when a run failed in a way the fenced-machine note is about.
pub(crate) fn failed(o: &Outcome) -> bool {
    o.timed_out || o.exit_code != Some(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RUN-016: the fenced-machine note is for every failure the README
    /// names — a timeout (which ends in a kill), a signal, a non-zero exit
    /// — and never for a clean exit. conformance/RUN-016 shows the note on
    /// a non-zero exit through MCP; this pins the timeout and signal halves.
    #[test]
    fn a_timeout_a_signal_and_a_non_zero_exit_are_failures() {
        let empty = || Captured {
            text: String::new(),
            encoding: "utf-8",
            truncated: false,
        };
        let o = |exit_code: Option<i32>, signal: Option<&str>, timed_out: bool| Outcome {
            exit_code,
            signal: signal.map(str::to_owned),
            timed_out,
            duration_ms: 1,
            stdout: empty(),
            stderr: empty(),
        };
        assert!(failed(&o(None, Some("SIGTERM"), true)), "a timeout");
        assert!(
            failed(&o(Some(0), None, true)),
            "a timeout the script outlived by exiting 0"
        );
        assert!(failed(&o(None, Some("SIGSEGV"), false)), "a signal");
        assert!(failed(&o(Some(3), None, false)), "a non-zero exit");
        assert!(!failed(&o(Some(0), None, false)), "a clean exit");
    }

    #[test]
    fn args_are_capped_by_count_size_and_nul() {
        assert!(check_args(&vec!["a".into(); 64]).is_ok());
        assert!(matches!(
            check_args(&vec!["a".into(); 65]),
            Err(RunError::TooManyArgs { count: 65 })
        ));
        assert!(matches!(
            check_args(&["x".repeat(8193)]),
            Err(RunError::ArgsTooLarge { bytes: 8193 })
        ));
        assert!(matches!(
            check_args(&["ok".into(), "a\0b".into()]),
            Err(RunError::ArgNul { index: 1 })
        ));
        assert!(check_args(&["".into(), " ; $(x) \n ü".into()]).is_ok());
    }

    #[test]
    fn signal_names_are_readable() {
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(9), "SIGKILL");
    }
}
