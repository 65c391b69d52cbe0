//! The digest pool (SKX-012): the threads that read and hash a skill's
//! files, its own, so a skill being hashed delays only digests and never
//! the blocking threads every read shares.

use std::sync::{Arc, Mutex, OnceLock, mpsc};

use crate::limits::DIGEST_THREADS;

/// A job for the digest pool.
type Job = Box<dyn FnOnce() + Send + 'static>;

/// The digest pool (SKX-012): its own threads, built on first use, fed by
/// one queue. Plain threads blocked on a channel rather than a work-
/// stealing pool: an idle one sleeps in the kernel instead of spinning
/// (rayon's idle workers called `sched_yield` 37 times per `skills/get`,
/// which cost more than the stats the request itself makes).
static POOL: OnceLock<Result<mpsc::Sender<Job>, String>> = OnceLock::new();

fn start_pool() -> Result<mpsc::Sender<Job>, String> {
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    for i in 0..DIGEST_THREADS {
        let rx = Arc::clone(&rx);
        std::thread::Builder::new()
            .name(format!("skill-mcp-digest-{i}"))
            .spawn(move || {
                loop {
                    // The lock is held only while waiting for the next job.
                    let job = match rx.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    // A panicking job drops its reply, which the door
                    // reports as lost work; this thread carries on.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })
            .map_err(|e| format!("the digest pool could not start: {e}"))?;
    }
    Ok(tx)
}

/// Runs `job` on the digest pool, never on the blocking threads that
/// every read shares, so a skill being hashed delays only digests.
pub(crate) fn spawn(job: impl FnOnce() + Send + 'static) -> Result<(), String> {
    match POOL.get_or_init(start_pool) {
        Ok(tx) => tx
            .send(Box::new(job))
            .map_err(|_| "the digest pool is gone".to_owned()),
        Err(e) => Err(e.clone()),
    }
}
