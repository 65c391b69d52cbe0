//! Executing a plan (RUN-002, RUN-009, RUN-010, RUN-021, RUN-022): argv
//! with no shell, its own process group, bounded by the timeout, a kill
//! grace, a drain and a hard deadline, so the call always returns.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::capture::{Buffer, Captured, both_done, spawn_reader, take};
use super::leftovers::end_leftovers;
use super::lock::{Tick, Watch, hung_up};
use super::{Plan, RunError};
use crate::fence::{self, FenceError};

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

fn signal_name(sig: i32) -> String {
    Signal::try_from(sig)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names_are_readable() {
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(9), "SIGKILL");
    }
}
