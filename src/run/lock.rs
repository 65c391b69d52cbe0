//! One run at a time (RUN-011), and what a run is told from outside while
//! it goes: the client hanging up (RUN-009), cancelling the call (RUN-021)
//! or asking for progress (RUN-022).

use tokio::sync::Mutex as AsyncMutex;

#[cfg(doc)]
use super::execute::PROGRESS_EVERY;
use super::execute::{Outcome, execute};
use super::{Plan, RunError};

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
