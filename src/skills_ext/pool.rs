//! The digest pool (SKX-012): the threads that read and hash a skill's
//! files, its own, so a skill being hashed delays only digests and never
//! the blocking threads every read shares. A `skills/list` page is hashed
//! by all of them at once ([`in_order`]): the job that asked works through
//! the page's skills beside helper jobs it queued, so the first walk of a
//! catalog takes both cores, not one.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, mpsc};

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
                    let _ = catch_unwind(AssertUnwindSafe(job));
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

/// What [`in_order`]'s taker says after each result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Take {
    /// Hand over the next one.
    More,
    /// Enough: start no further item.
    Stop,
}

/// How far past the last result handed over an [`in_order`] item may
/// start: twice the threads, so a thread rarely waits for the caller to
/// take a result, while a page that stops (SKX-015) has started at most
/// this many items past its end — the next page's first, kept.
pub(crate) const LOOKAHEAD: usize = 2 * DIGEST_THREADS;

/// Runs `work(0)`, `work(1)`, … `work(n - 1)` on the calling thread and
/// on up to [`DIGEST_THREADS`]` - 1` helper jobs it queues on the pool,
/// each item taken by whichever is free next, and hands every result to
/// `take` on the calling thread, in index order, as soon as it and those
/// before it are done. No item starts [`LOOKAHEAD`] or more past the last
/// result handed over, and once `take` says [`Take::Stop`] none starts at
/// all; the ones already running are finished (their results dropped)
/// before this returns, so nothing of the call outlives it.
///
/// Never deadlocks, whatever else the pool holds: a thread of the call
/// waits only for an item another thread is running (never for a queued
/// helper), and the caller runs every item no helper took; a helper that
/// reaches the front of the queue after the last item started returns at
/// once. So pages listed at once each finish, each on its own thread at
/// worst. Waiting is a condition variable: a waiting thread sleeps in the
/// kernel, it never spins.
///
/// A panic in `work` is caught where it happened and raised again on the
/// calling thread once nothing of the call runs any more: a job that
/// panics drops its reply, which the door reports as lost work.
pub(crate) fn in_order<R, W>(n: usize, work: W, mut take: impl FnMut(R) -> Take)
where
    R: Send + 'static,
    W: Fn(usize) -> R + Send + Sync + 'static,
{
    let batch = Arc::new(Batch {
        work,
        state: Mutex::new(State {
            next: 0,
            limit: n,
            taken: 0,
            running: 0,
            done: (0..n).map(|_| None).collect(),
        }),
        changed: Condvar::new(),
    });
    for _ in 1..DIGEST_THREADS.min(n) {
        let helper = Arc::clone(&batch);
        // Without the pool's help the caller does every item itself.
        if spawn(move || helper.help()).is_err() {
            break;
        }
    }
    // However this call ends, no item starts after it and none is left
    // running.
    let _settle = Settle(&batch);
    let mut st = batch.lock();
    while st.taken < st.limit {
        let next = st.taken;
        if let Some(result) = st.done[next].take() {
            st.taken += 1;
            // A helper held back by the lookahead may start one more.
            batch.changed.notify_all();
            drop(st);
            let flow = match result {
                Ok(r) => take(r),
                Err(panic) => resume_unwind(panic),
            };
            st = batch.lock();
            if flow == Take::Stop {
                st.limit = st.limit.min(st.taken);
                batch.changed.notify_all();
            }
        } else if st.may_start() {
            let i = st.next;
            st.next += 1;
            drop(st);
            let result = catch_unwind(AssertUnwindSafe(|| (batch.work)(i)));
            st = batch.lock();
            st.done[i] = Some(result);
        } else {
            // Item `taken` is running on a helper, which wakes us.
            st = batch.wait(st);
        }
    }
}

/// One [`in_order`] call, shared with its helper jobs.
struct Batch<R, W> {
    work: W,
    state: Mutex<State<R>>,
    /// Signalled when an item is finished or handed over, or the call
    /// stops.
    changed: Condvar,
}

struct State<R> {
    /// The next item to start.
    next: usize,
    /// No item at or past this starts.
    limit: usize,
    /// Results handed over so far: the next to hand over.
    taken: usize,
    /// Items helpers started and have not finished.
    running: usize,
    /// Finished items' results, until handed over.
    done: Vec<Option<std::thread::Result<R>>>,
}

impl<R> State<R> {
    fn may_start(&self) -> bool {
        self.next < self.limit && self.next < self.taken + LOOKAHEAD
    }
}

impl<R, W: Fn(usize) -> R> Batch<R, W> {
    /// Work is caught where it panics and the taker runs under no lock,
    /// so a poisoned lock still guards sound state.
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, st: MutexGuard<'a, State<R>>) -> MutexGuard<'a, State<R>> {
        self.changed
            .wait(st)
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A helper job: items until none is left to start.
    fn help(&self) {
        let mut st = self.lock();
        while st.next < st.limit {
            if !st.may_start() {
                // The caller is behind; an item before `next` is running.
                st = self.wait(st);
                continue;
            }
            let i = st.next;
            st.next += 1;
            st.running += 1;
            drop(st);
            let result = catch_unwind(AssertUnwindSafe(|| (self.work)(i)));
            st = self.lock();
            st.running -= 1;
            st.done[i] = Some(result);
            self.changed.notify_all();
        }
    }
}

/// Ends an [`in_order`] call: no further item starts, and the caller
/// waits out the ones helpers are running.
struct Settle<'a, R, W: Fn(usize) -> R>(&'a Batch<R, W>);

impl<R, W: Fn(usize) -> R> Drop for Settle<'_, R, W> {
    fn drop(&mut self) {
        let mut st = self.0.lock();
        st.limit = 0;
        self.0.changed.notify_all();
        while st.running > 0 {
            st = self.0.wait(st);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Long enough that only a hang reaches it; no test asserts a speed.
    const HANG: Duration = Duration::from_secs(60);

    /// Runs `job` on the pool, as the door runs a request, and waits for
    /// its answer (`None`: it panicked, or hung past [`HANG`]).
    fn on_pool<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = mpsc::channel();
        spawn(move || {
            let _ = tx.send(job());
        })
        .ok()?;
        rx.recv_timeout(HANG).ok()
    }

    /// Every result is handed over once, in index order, and every item
    /// runs on a digest thread when the caller is a pool job (SKX-012).
    #[test]
    fn results_come_in_order_and_items_run_on_the_pool() {
        let got = on_pool(|| {
            let mut got = Vec::new();
            in_order(
                200,
                |i| {
                    let name = std::thread::current().name().map(str::to_owned);
                    (i, name)
                },
                |r| {
                    got.push(r);
                    Take::More
                },
            );
            got
        })
        .expect("the call finished");
        assert_eq!(
            got.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            (0..200).collect::<Vec<_>>()
        );
        for (i, name) in &got {
            let name = name.as_deref().unwrap_or_default();
            assert!(
                name.starts_with("skill-mcp-digest-"),
                "item {i} ran on {name:?}"
            );
        }
    }

    /// Once the taker says stop, no further item starts: at most the
    /// items already running on helpers finish past it.
    #[test]
    fn stop_starts_nothing_further() {
        let started = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&started);
        let handed = on_pool(move || {
            let mut handed = 0;
            in_order(
                1_000,
                move |_| {
                    counted.fetch_add(1, Ordering::SeqCst);
                },
                |()| {
                    handed += 1;
                    if handed == 10 { Take::Stop } else { Take::More }
                },
            );
            handed
        })
        .expect("the call finished");
        assert_eq!(handed, 10);
        let started = started.load(Ordering::SeqCst);
        // None started LOOKAHEAD or more past the tenth result.
        assert!((10..=10 + LOOKAHEAD).contains(&started), "{started}");
    }

    /// More pool jobs fanning out at once than the pool has threads, each
    /// waiting for its items while the others' helpers sit in the queue:
    /// every one finishes with all its results (a waiter that waited for
    /// a queued helper would hang here).
    #[test]
    fn concurrent_fan_outs_never_wait_on_each_other() {
        let (tx, rx) = mpsc::channel();
        let jobs = 4 * DIGEST_THREADS + 1;
        for j in 0..jobs {
            let tx = tx.clone();
            spawn(move || {
                let mut sum = 0usize;
                in_order(
                    300,
                    move |i| {
                        // Some work, so items overlap across threads.
                        (0..200).fold(i, |a, b| a.wrapping_mul(31).wrapping_add(b)) % 7 + i
                    },
                    |r| {
                        sum = sum.wrapping_add(r);
                        Take::More
                    },
                );
                let _ = tx.send((j, sum));
            })
            .expect("the pool runs jobs");
        }
        drop(tx);
        let expect: usize = (0..300usize)
            .map(|i| (0..200).fold(i, |a, b| a.wrapping_mul(31).wrapping_add(b)) % 7 + i)
            .fold(0, usize::wrapping_add);
        let mut seen = Vec::new();
        for _ in 0..jobs {
            let (j, sum) = rx.recv_timeout(HANG).expect("every fan-out finished");
            assert_eq!(sum, expect, "job {j}");
            seen.push(j);
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..jobs).collect::<Vec<_>>());
    }

    /// A panicking item is raised again on the caller (whose job then
    /// drops its reply, the door's "lost work"), never swallowed, and the
    /// pool still runs the next job.
    #[test]
    fn a_panicking_item_is_raised_on_the_caller() {
        let answer = on_pool(|| {
            catch_unwind(AssertUnwindSafe(|| {
                in_order(
                    50,
                    |i| {
                        if i == 17 {
                            panic!("item 17 fails");
                        }
                        i
                    },
                    |_| Take::More,
                );
            }))
            .is_err()
        });
        assert_eq!(answer, Some(true), "the panic reached the caller");
        assert_eq!(on_pool(|| 42), Some(42), "the pool still runs jobs");
    }
}
