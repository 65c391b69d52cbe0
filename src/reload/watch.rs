//! The `--watch` file watcher: what is watched, and how it follows a root
//! that is deleted, recreated or swapped (spec RELOAD-008..RELOAD-012).
//!
//! inotify watches inodes, not paths: a watch on a root stays on the old
//! directory when the root is renamed away or a root symlink is re-pointed,
//! and dies with it when it is deleted. So each root is remembered with the
//! identity (device, inode) of the directory its path resolved to when it
//! was watched, and before every rescan [`Watcher::resync`] re-resolves the
//! path and watches it afresh when that identity changed. A root is watched
//! at its real path: with symlinks not followed, the watcher would skip a
//! root that is itself a symlink (`root -> releases/N`). What wakes a
//! rescan at all when the root itself is replaced is one non-recursive
//! watch on the directory holding each root, whose events count only when
//! they name the root. Nothing else outside the roots is watched: symlinks
//! are never followed below a root (RELOAD-011).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache};

use super::DEBOUNCE;
use crate::snapshot::one_line;

type Inner = Debouncer<notify::RecommendedWatcher, RecommendedCache>;

/// One configured root and the directory its path resolved to when it was
/// last watched (`None`: it did not resolve to a directory, so nothing of
/// it is watched).
struct Root {
    path: PathBuf,
    watched: Option<Watched>,
}

/// The directory a root's watch is on: its identity and its real path
/// (the key the watcher knows it by).
#[derive(PartialEq, Eq)]
struct Watched {
    id: (u64, u64),
    real: PathBuf,
}

/// A directory holding a root, watched non-recursively at its configured
/// path, with the directory (device, inode) that path was when watched.
struct Parent {
    path: PathBuf,
    watched: Option<(u64, u64)>,
}

/// The running watcher. Dropping it stops watching.
pub(crate) struct Watcher {
    inner: Inner,
    parents: Vec<Parent>,
    roots: Vec<Root>,
    /// The real paths watched now, which the event handler counts as
    /// roots beside the configured paths.
    real: Arc<RwLock<Vec<PathBuf>>>,
}

/// The directory a path resolves to now (following a root symlink, which
/// is the point: `root -> releases/N`), or `None`.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_dir())
        .map(|m| (m.dev(), m.ino()))
}

/// `identity` with the real path it was found at. The identity is taken
/// first: should the path be swapped in between, the stale identity makes
/// the next resync (which the swap's own event wakes) watch it again.
fn resolve(path: &Path) -> Option<Watched> {
    let id = identity(path)?;
    let real = std::fs::canonicalize(path).ok()?;
    Some(Watched { id, real })
}

/// True for file-system events that can change what is served (a read, an
/// open or an access — ours included — cannot) and that touch a root, by
/// its configured or its real path: an event from a root's parent
/// directory about a sibling of the root is not a change (RELOAD-004,
/// RELOAD-011). A lost-events notice (the kernel's queue overflowed)
/// always is.
fn matters(event: &notify::Event, roots: &[PathBuf], real: &[PathBuf]) -> bool {
    event.need_rescan()
        || (!matches!(event.kind, EventKind::Access(_))
            && event
                .paths
                .iter()
                .any(|p| roots.iter().chain(real).any(|r| p.starts_with(r))))
}

/// The directories holding the roots, each once, leaving out those a root
/// already watches recursively (roots nested in roots).
fn parents(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for parent in roots.iter().filter_map(|r| r.parent()) {
        let covered = roots.iter().any(|r| parent.starts_with(r));
        if !covered && !out.iter().any(|p| p == parent) {
            out.push(parent.to_path_buf());
        }
    }
    out
}

impl Watcher {
    /// Watches `roots` (RELOAD-001); each debounced burst of events that
    /// matters calls `wake`.
    pub(crate) fn start(
        roots: &[PathBuf],
        wake: impl Fn() + Send + 'static,
    ) -> Result<Watcher, notify::Error> {
        let seen: Arc<[PathBuf]> = roots.into();
        let real: Arc<RwLock<Vec<PathBuf>>> = Arc::default();
        let real_seen = Arc::clone(&real);
        // follow_symlinks(false): a symlink below a root (to /usr, say) is
        // not walked into; the root's own path is still resolved, so a
        // symlinked root is watched where it points (RELOAD-011).
        let config = notify::Config::default().with_follow_symlinks(false);
        let inner = notify_debouncer_full::new_debouncer_opt(
            DEBOUNCE,
            None,
            move |res: DebounceEventResult| {
                let Ok(evs) = res else { return };
                let real = match real_seen.read() {
                    Ok(g) => g,
                    Err(poisoned) => poisoned.into_inner(),
                };
                if evs.iter().any(|e| matters(e, &seen, &real)) {
                    wake();
                }
            },
            RecommendedCache::new(),
            config,
        )?;
        let mut w = Watcher {
            inner,
            parents: parents(roots)
                .into_iter()
                .map(|path| Parent {
                    path,
                    watched: None,
                })
                .collect(),
            roots: roots
                .iter()
                .map(|r| Root {
                    path: r.clone(),
                    watched: None,
                })
                .collect(),
            real,
        };
        // The parents first: watching a directory non-recursively after a
        // recursive watch of it would turn the recursive one off.
        for i in 0..w.parents.len() {
            w.watch_parent(i);
        }
        for i in 0..w.roots.len() {
            w.watch_root(i);
        }
        Ok(w)
    }

    /// (Re)watches parent `i` as its path resolves now. Left unwatched
    /// (and retried at the next resync) when it cannot be watched.
    fn watch_parent(&mut self, i: usize) {
        let Some(parent) = self.parents.get_mut(i) else {
            return;
        };
        if parent.watched.take().is_some() {
            let _ = self.inner.unwatch(&parent.path);
        }
        let now = identity(&parent.path);
        let result = match now {
            Some(_) => self
                .inner
                .watch(&parent.path, RecursiveMode::NonRecursive)
                .map_err(|e| e.to_string()),
            None => Err("it is not a directory".to_owned()),
        };
        match result {
            Ok(()) => parent.watched = now,
            Err(e) => tracing::warn!(
                dir = %one_line(&parent.path.display().to_string()),
                error = %one_line(&e.to_string()),
                "cannot watch the directory holding a root: a root replaced there is seen at the next SIGHUP (RELOAD-008)"
            ),
        }
    }

    /// (Re)watches root `i` as its path resolves now.
    fn watch_root(&mut self, i: usize) {
        let Some(root) = self.roots.get_mut(i) else {
            return;
        };
        // Gone already when the root was deleted or renamed away (the
        // watcher drops such watches itself); otherwise the old directory's
        // watches are let go here.
        if let Some(old) = root.watched.take() {
            let _ = self.inner.unwatch(&old.real);
            if let Ok(mut real) = self.real.write() {
                real.retain(|r| *r != old.real);
            }
            // notify lets go of a recursive watch by path, with every watch
            // under it: another root watched at, inside or above that path
            // (two roots reaching one tree) lost its watches too, and never
            // changing identity, no resync would restore them.
            self.rewatch_overlapping(i, &old.real);
        }
        let Some(root) = self.roots.get_mut(i) else {
            return;
        };
        root.watched = resolve(&root.path);
        let Some(now) = &root.watched else {
            tracing::warn!(root = %one_line(&root.path.display().to_string()), "this root is missing; watching resumes when it is back (RELOAD-010)");
            return;
        };
        // Known to the event handler before the first event can come.
        if let Ok(mut real) = self.real.write() {
            real.push(now.real.clone());
        }
        if let Err(e) = self.inner.watch(&now.real, RecursiveMode::Recursive) {
            tracing::warn!(root = %one_line(&root.path.display().to_string()), error = %one_line(&e.to_string()), "cannot watch this root; retried at the next rescan");
            // Whatever part of it was watched is let go now, and the
            // mismatch makes the next resync try again.
            let _ = self.inner.unwatch(&now.real);
            if let Ok(mut real) = self.real.write() {
                real.retain(|r| *r != now.real);
            }
            root.watched = None;
        }
    }

    /// Watches again every root but `i` whose real path is, holds or lies
    /// inside `gone`, the path whose watches were just let go.
    fn rewatch_overlapping(&mut self, i: usize, gone: &Path) {
        for (j, other) in self.roots.iter().enumerate() {
            let Some(w) = other.watched.as_ref().filter(|_| j != i) else {
                continue;
            };
            if !(w.real.starts_with(gone) || gone.starts_with(&w.real)) {
                continue;
            }
            if let Ok(mut real) = self.real.write()
                && !real.contains(&w.real)
            {
                real.push(w.real.clone());
            }
            if let Err(e) = self.inner.watch(&w.real, RecursiveMode::Recursive) {
                tracing::warn!(root = %one_line(&other.path.display().to_string()), error = %one_line(&e.to_string()), "cannot watch this root again; seen at the next SIGHUP");
            }
        }
    }

    /// Watches afresh every root whose path now resolves to another
    /// directory (recreated, renamed over, a re-pointed symlink) or to none
    /// (RELOAD-008, RELOAD-009). Called before each rescan, so the rescan
    /// that follows also covers whatever was written before the new watch.
    pub(crate) fn resync(&mut self) {
        for i in 0..self.parents.len() {
            let Some(parent) = self.parents.get(i) else {
                continue;
            };
            if identity(&parent.path) != parent.watched {
                self.watch_parent(i);
            }
        }
        for i in 0..self.roots.len() {
            let Some(root) = self.roots.get(i) else {
                continue;
            };
            let now = identity(&root.path);
            if now != root.watched.as_ref().map(|w| w.id) {
                tracing::info!(root = %one_line(&root.path.display().to_string()), "this root was replaced; watching it afresh");
                self.watch_root(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind, path: &str) -> notify::Event {
        notify::Event::new(kind).add_path(PathBuf::from(path))
    }

    #[test]
    fn only_changes_under_a_root_matter() {
        let roots = [PathBuf::from("/srv/skills")];
        let create = EventKind::Create(notify::event::CreateKind::Folder);
        assert!(matters(&event(create, "/srv/skills"), &roots, &[]));
        assert!(matters(
            &event(create, "/srv/skills/a/SKILL.md"),
            &roots,
            &[]
        ));
        assert!(!matters(&event(create, "/srv/skills.new"), &roots, &[]));
        assert!(!matters(&event(create, "/srv/other/x"), &roots, &[]));
        let real = [PathBuf::from("/srv/releases/2")];
        assert!(matters(&event(create, "/srv/releases/2/b"), &roots, &real));
        assert!(!matters(&event(create, "/srv/releases/1/b"), &roots, &real));
        let read = EventKind::Access(notify::event::AccessKind::Read);
        assert!(!matters(
            &event(read, "/srv/skills/a/SKILL.md"),
            &roots,
            &real
        ));
        let lost = notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert!(matters(&lost, &roots, &real));
    }

    #[test]
    fn parents_are_watched_once_and_not_inside_a_root() {
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(parents(&p(&["/srv/a", "/srv/b"])), p(&["/srv"]));
        // /srv/a/inner's parent is watched recursively as the root /srv/a.
        assert_eq!(parents(&p(&["/srv/a", "/srv/a/inner"])), p(&["/srv"]));
        assert_eq!(parents(&p(&["/"])), p(&[]));
    }
}
