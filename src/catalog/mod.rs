//! Discovery: which directories are skills, under which names, with which
//! files — and, for everything else, a `problems` entry saying why.
//!
//! A scan's catalog is immutable (README "Trust posture": "The catalog is
//! scanned once at boot and held in memory"): the snapshot holds it and
//! the handlers only read it; the opt-in reload mode scans anew into a
//! whole new snapshot rather than changing this one. One bad skill costs itself, never the listing, and
//! nothing is dropped in silence (spec DISC-*).
//!
//! One file a concern: which directories are skills and under which names,
//! duplicates refused (`discover.rs`); which names can be served, and a
//! name to suggest (`names.rs`); one skill read from its directory
//! (`skill.rs`); SKILL.md read, split and parsed in one place for every
//! reader (`skill_md.rs`); the walk of a bundle (`walk.rs`); and the
//! compact list of its files (`files.rs`).

mod discover;
mod files;
mod names;
mod skill;
mod skill_md;
#[cfg(test)]
mod tests;
mod walk;

pub(crate) use discover::scan;
pub use discover::{Parallelism, scan_with};
pub(crate) use files::FileEntry;
pub(crate) use names::is_skill_name;
pub(crate) use skill::Skill;
#[cfg(test)]
pub(crate) use skill_md::SkillMd;
pub(crate) use skill_md::{LoadError, LoadedMd, SKILL_MD, load_skill_md};

use std::path::Path;

use crate::config::RootsFrom;
use crate::problem::Problem;

/// The catalog: every skill served, and every problem met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    pub(crate) roots: Vec<String>,
    pub(crate) roots_from: RootsFrom,
    /// Sorted by name.
    pub skills: Vec<Skill>,
    /// In discovery order.
    pub problems: Vec<Problem>,
}

impl Catalog {
    /// The skill served under `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Skill> {
        self.skills
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.skills[i])
    }
}

/// The catalog of the one root `root`, read as a `SKILLS_DIR` entry, for
/// the tests of the modules above, which need no configuration of their
/// own.
#[cfg(test)]
pub(crate) fn scan_root(root: &Path) -> Catalog {
    let mut env = std::collections::BTreeMap::new();
    env.insert(
        std::ffi::OsString::from("SKILLS_DIR"),
        root.as_os_str().to_owned(),
    );
    scan(&crate::config::Config::from_env(
        env,
        Path::new("/"),
        std::path::PathBuf::from("/nowhere"),
    ))
}

/// A path as `roots` and `problems` report it: lossy, as a report is text
/// for people and JSON, and the real path is kept where it is used.
fn show(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}
