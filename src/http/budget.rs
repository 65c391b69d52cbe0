//! The two byte budgets of the HTTP door (spec HTTP-007, HTTP-015): the
//! bytes of request bodies being read, counted as they arrive, and the
//! bytes of answers built and not yet taken by their clients, reserved
//! before an answer is built. A count of requests alone bounds neither: a
//! few clients that never read an 11 MiB answer would hold a gigabyte.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::connections::Conn;
use crate::limits::{HTTP_BUDGET_WAIT_SECS, MAX_BATCH_BYTES, MAX_BATCH_PATHS, MAX_FILE_BYTES};

/// A number of bytes that may be held at once, shared by every request.
pub(crate) struct Budget {
    bytes: Arc<Semaphore>,
    total: usize,
}

impl Budget {
    pub(crate) fn new(total: usize) -> Budget {
        Budget {
            bytes: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// `n` bytes of it, waiting up to [`HTTP_BUDGET_WAIT_SECS`] for others
    /// to give theirs back; `None` when they did not. More than the whole
    /// budget is taken as the whole of it.
    pub(crate) async fn take(&self, n: usize) -> Option<OwnedSemaphorePermit> {
        self.take_within(n, Duration::from_secs(HTTP_BUDGET_WAIT_SECS))
            .await
    }

    async fn take_within(&self, n: usize, wait: Duration) -> Option<OwnedSemaphorePermit> {
        let n = u32::try_from(n.clamp(1, self.total)).unwrap_or(u32::MAX);
        if let Ok(p) = Arc::clone(&self.bytes).try_acquire_many_owned(n) {
            return Some(p);
        }
        let wait_for = Arc::clone(&self.bytes).acquire_many_owned(n);
        tokio::time::timeout(wait, wait_for).await.ok()?.ok()
    }

    /// `n` more bytes if there is room now: an answer built larger than
    /// its estimate is sent all the same (it exists already), and counts
    /// what it can.
    pub(crate) fn try_take(&self, n: usize) -> Option<OwnedSemaphorePermit> {
        let n = u32::try_from(n.min(self.total)).ok()?;
        Arc::clone(&self.bytes).try_acquire_many_owned(n).ok()
    }

    #[cfg(test)]
    pub(crate) fn available(&self) -> usize {
        self.bytes.available_permits()
    }
}

/// The bodies' budget and who is reading a body now (HTTP-007): when a
/// chunk finds no room, the reader whose body has made no progress for
/// longest is closed for it (answered 503 by its own read), so bodies that
/// stall cannot hold the budget from bodies that arrive.
pub(crate) struct Bodies {
    budget: Budget,
    readers: Mutex<HashMap<u64, Reader>>,
    next: AtomicU64,
}

struct Reader {
    conn: Arc<Conn>,
    /// When its last chunk arrived.
    last: Instant,
}

/// A body being read, registered until dropped.
pub(crate) struct Reading<'a> {
    bodies: &'a Bodies,
    key: u64,
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        lock(&self.bodies.readers).remove(&self.key);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Nothing here panics while holding it, so a poisoned map is whole.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Bodies {
    pub(crate) fn new(total: usize) -> Bodies {
        Bodies {
            budget: Budget::new(total),
            readers: Mutex::default(),
            next: AtomicU64::new(0),
        }
    }

    /// A body of `conn` starts being read.
    pub(crate) fn reading(&self, conn: &Arc<Conn>) -> Reading<'_> {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.readers).insert(
            key,
            Reader {
                conn: Arc::clone(conn),
                last: Instant::now(),
            },
        );
        Reading { bodies: self, key }
    }

    /// Room for a chunk of `n` bytes of `me`'s body. When there is none,
    /// the reader stalled longest (at least a second) is closed for it,
    /// then room is waited for as [`Budget::take`] waits.
    pub(crate) async fn take(&self, me: &Reading<'_>, n: usize) -> Option<OwnedSemaphorePermit> {
        if let Some(r) = lock(&self.readers).get_mut(&me.key) {
            r.last = Instant::now();
        }
        if let Some(p) = self.budget.try_take(n) {
            return Some(p);
        }
        let stalest = lock(&self.readers)
            .iter()
            .filter(|(k, r)| **k != me.key && r.last.elapsed() >= Duration::from_secs(1))
            .min_by_key(|(_, r)| r.last)
            .map(|(_, r)| Arc::clone(&r.conn));
        if let Some(conn) = stalest {
            tracing::debug!("closing the stalest body's connection for room (HTTP-007)");
            conn.close();
        }
        self.budget.take(n).await
    }
}

/// Room for the JSON around a result's content, and for a small answer.
const SLACK_BYTES: usize = 64 * 1024;

/// Bytes held while an answer is built, per byte of content it carries.
const ESTIMATE_FACTOR: usize = 5;

/// An upper estimate of the bytes a request's answer takes while it is
/// built, taken from the answer budget before it is built (HTTP-015). A
/// file's bytes appear twice in a tool result (its text block and
/// `structuredContent`) and the answer written is that again, so at its
/// peak building holds about five times the content a request can ask
/// for (measured: 4 MiB of files, 8.4 MiB answered, a peak about 2.4
/// times the answer); an answer held to the answer budget (`skill_list`,
/// the lists) is at most that many characters, counted the same way.
/// Once built, the answer's real size replaces the estimate.
pub(crate) fn answer_estimate(message: &ClientJsonRpcMessage, answer_chars: usize) -> usize {
    let ClientJsonRpcMessage::Request(r) = message else {
        return SLACK_BYTES;
    };
    let content = match &r.request {
        ClientRequest::CallToolRequest(call) => match call.params.name.as_ref() {
            "skill_file" => {
                let args = call.params.arguments.as_ref();
                let paths = args
                    .and_then(|a| a.get("paths"))
                    .and_then(|p| p.as_array())
                    .map_or(1, |p| p.len().clamp(1, MAX_BATCH_PATHS));
                (paths * MAX_FILE_BYTES).min(MAX_BATCH_BYTES)
            }
            // A run's output (two streams of MAX_STREAM_BYTES, RUN-010)
            // is counted when its answer is handed over, not before: a
            // confirmed run first waits up to minutes for a person's
            // approval (RUN-028), and twelve waiting held the whole budget
            // from everyone's reads. Runs are one at a time (RUN-011), so
            // at most one run's answer is built outside the budget.
            "skill_run" => return SLACK_BYTES,
            "skill_load" => MAX_FILE_BYTES.max(answer_chars),
            _ => answer_chars,
        },
        ClientRequest::ReadResourceRequest(_)
        | ClientRequest::GetPromptRequest(_)
        | ClientRequest::GetSkillRequest(_) => MAX_FILE_BYTES,
        ClientRequest::PingRequest(_)
        | ClientRequest::InitializeRequest(_)
        | ClientRequest::DiscoverRequest(_) => return SLACK_BYTES + answer_chars,
        _ => answer_chars,
    };
    ESTIMATE_FACTOR * content + SLACK_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(v: serde_json::Value) -> ClientJsonRpcMessage {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("a client message: {e}"))
    }

    #[test]
    fn a_batch_is_estimated_by_its_paths_and_capped_by_the_batch_limit() {
        let call = |paths: serde_json::Value| {
            message(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "skill_file", "arguments": {"name": "x", "paths": paths}}}))
        };
        let two = answer_estimate(&call(json!(["a", "b"])), 40_000);
        let eight = answer_estimate(&call(json!(vec!["a"; 8])), 40_000);
        assert_eq!(two, ESTIMATE_FACTOR * 2 * MAX_FILE_BYTES + SLACK_BYTES);
        assert_eq!(eight, ESTIMATE_FACTOR * MAX_BATCH_BYTES + SLACK_BYTES);
        let list = message(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        assert_eq!(
            answer_estimate(&list, 40_000),
            ESTIMATE_FACTOR * 40_000 + SLACK_BYTES
        );
    }

    #[tokio::test]
    async fn a_budget_waits_then_refuses_and_comes_back() {
        let b = Budget::new(10);
        let held = b.take(8).await;
        assert!(held.is_some());
        assert!(b.try_take(3).is_none());
        let short = Duration::from_millis(20);
        assert!(
            b.take_within(3, short).await.is_none(),
            "no room within the wait"
        );
        drop(held);
        assert_eq!(b.available(), 10);
        assert!(
            b.take(100).await.is_some(),
            "more than the whole is the whole"
        );
    }
}
