//! Leftovers (RUN-027): every child of the server still alive when a run
//! settles is killed and reaped — runs are one at a time and the server is
//! a subreaper, so a process a script detached has been re-parented here —
//! and it never outlives its run.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use nix::unistd::Pid;

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
pub(super) async fn end_leftovers() {
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
