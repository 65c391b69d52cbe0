//! Reload without restart — opt-in (spec RELOAD-001..RELOAD-012).
//!
//! The design of record scans once at boot and holds the catalog in memory;
//! that stays the default. `--watch` (or `SKILL_MCP_WATCH=1`) watches the
//! roots, and `SIGHUP` asks for one rescan in any mode. A rescan builds a
//! whole new [`Snapshot`] with the same discovery code and swaps it in
//! atomically: each request works on the snapshot it started with, a run
//! already going keeps its plan, and the next request sees the new one.
//! A rescan during which a configured root could not be read is not
//! swapped in — the old snapshot stays and the refusal is reported — so a
//! directory vanishing mid-scan never empties the catalog by accident.
//! What `--watch` watches, and how it follows a replaced root, is
//! [`watch`]. Each swap is told to the sessions ([`Peers`]) and to every
//! open 2026-07-28 `subscriptions/listen` ([`Live::swaps`], HTTP-012).

mod watch;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::config::Config;
use crate::offer::Offer;
use crate::problem::Reason;
use crate::snapshot::Snapshot;

/// How long file-system events are gathered before one rescan: a burst of
/// writes (a `git checkout`, an editor's save dance) becomes one rescan.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// The longest a stream of changes can put off a rescan.
pub(crate) const SETTLE_MAX: Duration = Duration::from_secs(5);

/// Swaps announced to `subscriptions/listen` streams (HTTP-012) that one
/// of them has not taken yet; past it the slowest is told it lagged, and
/// then hears of both lists (RELOAD-005's two notifications), since what
/// it missed is no longer known.
const SWAPS_UNREAD: usize = 16;

/// The current snapshot and the state of reloading.
#[derive(Debug)]
pub struct Live {
    current: RwLock<Arc<Snapshot>>,
    /// Why the last rescan was not swapped in, until one is.
    refused: Mutex<Option<String>>,
    /// Serializes rescans (a SIGHUP during a watch-triggered rescan waits).
    rescanning: Mutex<()>,
    /// What each swap changed, for every open `subscriptions/listen`
    /// (HTTP-012): a listen holds a receiver for its life, so one that
    /// ends leaves nothing behind.
    swaps: tokio::sync::broadcast::Sender<Changed>,
    /// What this process offers, which every rescan lists its scripts by
    /// (HTTP-009), as the boot scan did.
    offer: Offer,
}

/// Who hears of a swap (RELOAD-*, HTTP-010): the one stdio client, or
/// every open HTTP session. A session whose transport has closed is let go
/// when the next one joins, so the list is bounded by the open sessions.
#[derive(Default)]
pub struct Peers(Mutex<Vec<rmcp::Peer<rmcp::RoleServer>>>);

impl Peers {
    /// The peers, with one more.
    pub fn add(&self, peer: rmcp::Peer<rmcp::RoleServer>) {
        let mut peers = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        peers.retain(|p| !p.is_transport_closed());
        peers.push(peer);
    }

    /// Tells every open peer what changed. A peer that negotiated no
    /// session (a stdio connection in the 2026-07-28 lifecycle, where rmcp
    /// keeps no peer info) is told nothing here: that revision sends a
    /// list notification only on a `subscriptions/listen` stream that
    /// asked for it (HTTP-012), which [`Live::swaps`] feeds.
    async fn notify(&self, changed: Changed) {
        let peers = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        for peer in peers
            .iter()
            .filter(|p| !p.is_transport_closed() && p.peer_info().is_some())
        {
            if changed.prompts {
                let _ = peer.notify_prompt_list_changed().await;
            }
            if changed.resources {
                let _ = peer.notify_resource_list_changed().await;
            }
        }
    }
}

/// What a swap changed, to decide which notifications to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Changed {
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

/// A digest of what `prompts/list` would show.
fn prompts_fingerprint(s: &Snapshot) -> u64 {
    let mut h = DefaultHasher::new();
    for skill in &s.catalog.skills {
        (&skill.name, &skill.description, &skill.when_to_use).hash(&mut h);
    }
    h.finish()
}

/// A digest of what `resources/list`, `skill_list` and the Skills
/// extension would show (every file with its size, every declaration, every
/// problem), so any visible change counts.
fn resources_fingerprint(s: &Snapshot) -> u64 {
    let mut h = DefaultHasher::new();
    for skill in &s.catalog.skills {
        (
            &skill.name,
            &skill.dir,
            &skill.source,
            skill.frontmatter_name(),
        )
            .hash(&mut h);
        for f in skill.files.iter() {
            (&f.path, f.size).hash(&mut h);
        }
        format!("{:?}{:?}", skill.declaration, skill.missing_scripts).hash(&mut h);
    }
    for p in &s.problems {
        (&p.path, &p.detail).hash(&mut h);
    }
    h.finish()
}

impl Live {
    pub(crate) fn new(snapshot: Snapshot, offer: Offer) -> Live {
        Live {
            current: RwLock::new(Arc::new(snapshot)),
            refused: Mutex::new(None),
            rescanning: Mutex::new(()),
            swaps: tokio::sync::broadcast::channel(SWAPS_UNREAD).0,
            offer,
        }
    }

    /// What every later swap changes, for one `subscriptions/listen`
    /// (HTTP-012); dropping the receiver is all it takes to stop hearing.
    pub(crate) fn swaps(&self) -> tokio::sync::broadcast::Receiver<Changed> {
        self.swaps.subscribe()
    }

    /// The snapshot a request works on from start to end.
    pub(crate) fn current(&self) -> Arc<Snapshot> {
        match self.current.read() {
            Ok(g) => Arc::clone(&g),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Why the last rescan was not swapped in, if it was not.
    pub(crate) fn refused(&self) -> Option<String> {
        self.refused.lock().ok().and_then(|g| g.clone())
    }

    /// Scans anew and swaps the result in when it can be trusted and differs
    /// (RELOAD-002, RELOAD-003). Returns what changed; `None` when nothing
    /// was swapped. The settings are the boot's, resolved once (but a model
    /// that failed to load is tried again).
    pub(crate) fn rescan(&self, config: &Config) -> Option<Changed> {
        let _one = self.rescanning.lock().ok()?;
        let old = self.current();
        let settings = old.settings.for_rescan(config);
        let next = Snapshot::build(config.clone(), settings, &self.offer, old.generation + 1);
        if let Some(p) = next
            .problems
            .iter()
            .find(|p| p.reason == Reason::RootUnreadable)
        {
            let why = format!(
                "rescan {} was not swapped in: the root {} could not be read ({}); generation {} stays (RELOAD-003, RELOAD-010). \
                 Put the root back: under --watch its return is picked up by itself, otherwise send SIGHUP",
                old.generation + 1,
                p.path,
                p.detail,
                old.generation
            );
            tracing::warn!("{}", crate::snapshot::one_line(&why));
            if let Ok(mut r) = self.refused.lock() {
                *r = Some(why);
            }
            return None;
        }
        if let Ok(mut r) = self.refused.lock() {
            *r = None;
        }
        let changed = Changed {
            prompts: prompts_fingerprint(&old) != prompts_fingerprint(&next),
            resources: resources_fingerprint(&old) != resources_fingerprint(&next),
        };
        // A change no list notification covers (a same-length edit of a
        // SKILL.md body, which `query` ranks by) still swaps, silently: a
        // fresh process on this tree derives the new identity, and this one
        // must agree with it for cursors to pass between them (LIST-018).
        if !changed.prompts && !changed.resources && old.identity() == next.identity() {
            tracing::info!(generation = old.generation, "rescan found no change");
            return None;
        }
        tracing::info!(
            generation = next.generation,
            skills = next.catalog.skills.len(),
            "catalog swapped"
        );
        // Only what this rescan found that the served snapshot did not
        // have: a reload does not say every problem again (SRV-010).
        next.log_problems(&old.problems);
        match self.current.write() {
            Ok(mut g) => *g = Arc::new(next),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(next),
        }
        Some(changed)
    }
}

/// The reload machinery kept alive for the session: the file watcher, when
/// watching.
pub struct Reloader {
    _watcher: Option<Arc<Mutex<watch::Watcher>>>,
}

/// Takes over SIGHUP. Called first thing at startup, so a SIGHUP that
/// arrives while the catalog is scanned or the handshake runs is queued
/// rather than ending the process (SIGHUP's default action).
pub fn listen_for_hangup() -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
}

/// Starts SIGHUP handling (any mode) and, when `watch` is set and no host
/// started us, a debounced watch of every root (RELOAD-001, RELOAD-004,
/// RELOAD-006) that follows a root being replaced ([`watch`],
/// RELOAD-008..RELOAD-011). Each swap that changed something sends
/// `notifications/prompts/list_changed` and/or
/// `notifications/resources/list_changed` to `peers`, and announces the
/// same to every open `subscriptions/listen` ([`Live::swaps`], HTTP-012);
/// the tool set never changes, so `notifications/tools/list_changed` is
/// never sent.
pub fn start(
    live: Arc<Live>,
    config: Config,
    peers: Arc<Peers>,
    watch: bool,
    hangups: Option<tokio::signal::unix::Signal>,
) -> Reloader {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(16);
    let sighup = tx.clone();
    tokio::spawn(async move {
        let Some(mut hup) = hangups else {
            tracing::warn!("SIGHUP cannot be handled here; reload on SIGHUP is off");
            return;
        };
        while hup.recv().await.is_some() {
            tracing::info!("SIGHUP: rescanning");
            if sighup.send(()).await.is_err() {
                break;
            }
        }
    });
    let watcher = if !watch {
        None
    } else if config.hosted() {
        tracing::warn!(
            markers = ?config.hosted_markers,
            "--watch refused: a host started this server (hosted marker set), and hosted skill slots are read-only pinned \
             dependencies; the catalog stays the boot scan (SIGHUP still rescans)"
        );
        None
    } else {
        let events = tx.clone();
        match watch::Watcher::start(&config.roots, move || {
            let _ = events.try_send(());
        }) {
            Ok(w) => {
                tracing::info!(roots = config.roots.len(), "watching the roots for changes");
                // RELOAD-013: the boot scan ran before the session, the
                // watch starts with it; a change in between raised no
                // event, so one rescan catches up (swapped only if the
                // tree changed, RELOAD-002).
                let _ = tx.try_send(());
                Some(Arc::new(Mutex::new(w)))
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the file watcher; the catalog stays the boot scan");
                None
            }
        }
    };
    // Weak: dropping the Reloader still stops the watching.
    let resync = watcher.as_ref().map(Arc::downgrade);
    tokio::spawn(async move {
        while rx.recv().await.is_some() {
            // Trailing-edge debounce on top of the watcher's: wait until the
            // tree has been quiet for DEBOUNCE (at most SETTLE_MAX), so a
            // slow burst of writes is one rescan, not one per quiet gap.
            let start = tokio::time::Instant::now();
            loop {
                tokio::time::sleep(DEBOUNCE).await;
                let mut more = false;
                while rx.try_recv().is_ok() {
                    more = true;
                }
                if !more || start.elapsed() >= SETTLE_MAX {
                    break;
                }
            }
            let (l, c, w) = (Arc::clone(&live), config.clone(), resync.clone());
            let Ok(changed) = tokio::task::spawn_blocking(move || {
                // A root replaced since the last rescan is watched afresh
                // first, so this rescan covers anything written before
                // the new watch took hold (RELOAD-008, RELOAD-009).
                if let Some(w) = w.and_then(|w| w.upgrade())
                    && let Ok(mut w) = w.lock()
                {
                    w.resync();
                }
                l.rescan(&c)
            })
            .await
            else {
                continue;
            };
            if let Some(changed) = changed {
                // No listen open is no error: nobody is told.
                let _ = live.swaps.send(changed);
                peers.notify(changed).await;
            }
        }
    });
    Reloader { _watcher: watcher }
}
