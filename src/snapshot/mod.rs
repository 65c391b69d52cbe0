//! The snapshot: everything the doors read, built from a [`Config`] in one
//! pass — catalog, then grant, then interpreters (listed as the [`Offer`]
//! offers runs), then the Skills extension's view — and never changed
//! after. The process's [`Settings`], resolved once, are shared by every
//! snapshot, not recomputed by each. The boot scan makes the
//! first; a reload (spec RELOAD-002) builds a whole new one and swaps it in,
//! so a request works on one snapshot from start to end.
//!
//! This module sits below every door: the MCP handlers (`server`), the
//! reloader and the author linter (`check`) stand on it, and it imports
//! none of them. [`tools`] holds the four tools' answers in the shapes of
//! `shapes`, which the linter reports too.

mod identity;
mod pages;
mod speak;
pub use speak::one_line;
mod tools;

pub(crate) use identity::Identity;
pub(crate) use pages::{CatalogIndex, Serialized};

use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::catalog::{self, Catalog, FileEntry, Skill};
use crate::config::Config;
use crate::echo::excerpt;
use crate::grant::{self, Grant, Scripts};
use crate::interpreters::Interpreters;
use crate::limits::MAX_SKILL_NAME_BYTES;
use crate::offer::Offer;
use crate::problem::{Problem, Reason};
use crate::settings::Settings;
use crate::skills_ext::SkillsView;

/// One scan's worth of served state; immutable once built.
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) config: Config,
    pub catalog: Catalog,
    pub(crate) grant: Grant,
    pub(crate) interpreters: Interpreters,
    /// The catalog's problems, then the grant's, then the Skills
    /// extension's, then the settings'.
    pub problems: Vec<Problem>,
    /// The MCP Skills extension's view of the catalog (SEP-2640).
    pub(crate) skills_view: SkillsView,
    /// 1 for the boot scan, one more for each rescan swapped in: this
    /// process's count, for the reload log and `skill_list`. Cursors carry
    /// the catalog's [`Identity`] instead (LIST-018).
    pub(crate) generation: u64,
    /// When this snapshot's scan started.
    pub(crate) scanned_at: SystemTime,
    /// Where each skill's files start in the one list of every bundled
    /// file (skills by name, files by path) that `resources/list` pages.
    file_offsets: Vec<usize>,
    /// The process's settings, resolved once and shared by every rescan:
    /// the answers are sized by its budgets and searched with its model.
    pub(crate) settings: Arc<Settings>,
    /// `skill_list`'s entries and their sizes, computed on first use.
    entries: OnceLock<pages::Entries>,
    /// What query answers need of every skill, computed on the first query.
    lean: OnceLock<pages::Lean>,
    /// `skill_list` with no arguments, serialized on first use.
    first_list: OnceLock<Result<Serialized, String>>,
    /// What `query` searches (LIST-010), built on the first query: a
    /// reload's snapshot builds its own.
    index: OnceLock<crate::search::Index>,
    /// The `initialize` instructions, made once: rmcp asks the handler for
    /// its info (instructions included) on many requests, to check a
    /// capability, and the catalog's listing or themes cost a pass over
    /// every skill.
    instructions: OnceLock<String>,
}

impl Snapshot {
    /// The boot scan `check` and the tests make: the settings resolved
    /// from `config` alone, and runs offered as over stdio.
    pub fn boot(config: Config) -> Snapshot {
        let settings = Arc::new(Settings::resolve(&config, false));
        let offer = Offer::stdio(false, settings.elicit_timeout);
        Snapshot::build(config, settings, &offer, 1)
    }

    /// The boot scan a door serves first, its problems logged (spec
    /// SRV-010).
    pub(crate) fn serving(config: Config, settings: Settings, offer: &Offer) -> Snapshot {
        let snapshot = Snapshot::build(config, Arc::new(settings), offer, 1);
        snapshot.log_problems(&[]);
        tracing::info!(
            skills = snapshot.catalog.skills.len(),
            problems = snapshot.problems.len(),
            "catalog scanned"
        );
        snapshot
    }

    /// A scan numbered `generation` (the boot scan is 1, reload's rescans
    /// 2, 3, …), listing scripts as `offer` offers runs (HTTP-009).
    pub(crate) fn build(
        config: Config,
        settings: Arc<Settings>,
        offer: &Offer,
        generation: u64,
    ) -> Snapshot {
        let scanned_at = SystemTime::now();
        let catalog = catalog::scan(&config);
        let grant = Grant::from_config(&config);
        let interpreters = Interpreters::resolve(config.var("PATH")).off(offer.runs_off);
        let mut problems = catalog.problems.clone();
        problems.extend(grant.problems(&catalog));
        let skills_view = SkillsView::boot(&catalog, &mut problems);
        problems.extend(settings.problems.iter().cloned());
        let mut file_offsets = Vec::with_capacity(catalog.skills.len());
        let mut total = 0;
        for s in &catalog.skills {
            file_offsets.push(total);
            total += s.files.len();
        }
        Snapshot {
            config,
            catalog,
            grant,
            interpreters,
            problems,
            skills_view,
            generation,
            scanned_at,
            file_offsets,
            settings,
            entries: OnceLock::new(),
            lean: OnceLock::new(),
            first_list: OnceLock::new(),
            index: OnceLock::new(),
            instructions: OnceLock::new(),
        }
    }

    /// The catalog's identity (LIST-018): the same in every process that
    /// serves the same tree with the same settings. Taken on first use,
    /// with the sizes of `skill_list`'s entries (one pass serves both),
    /// not at boot: a catalog that is never paged never pays for it.
    pub(crate) fn identity(&self) -> Identity {
        self.entries().identity
    }

    /// The `initialize` instructions of this snapshot, made by `make` the
    /// first time (LIST-009, LIST-014): the wording is the server's.
    pub(crate) fn instructions(&self, make: impl FnOnce(&Snapshot) -> String) -> &str {
        self.instructions.get_or_init(|| make(self))
    }

    /// What of `skill` may run here (GRANT-006, RUN-004). Derived from the
    /// catalog, the grant and the interpreters on each call rather than
    /// kept: it is a few lookups, and kept it would be a second copy of
    /// every declaration.
    pub(crate) fn scripts(&self, skill: &Skill) -> Scripts {
        grant::scripts(skill, &self.grant, &self.interpreters)
    }

    /// A served skill and what of it may run, by its served name; the
    /// refusal names the skills that do exist (spec LOAD-002). A name
    /// longer than any skill name is refused before any lookup, and no
    /// refusal quotes more than an excerpt of it (HARD-005).
    pub(crate) fn skill(&self, name: &str) -> Result<(&Skill, Scripts), String> {
        self.skill_named(name).map(|s| (s, self.scripts(s)))
    }

    /// A served skill by its served name, refused as [`Snapshot::skill`]
    /// refuses, for callers that do not ask what of it may run.
    pub(crate) fn skill_named(&self, name: &str) -> Result<&Skill, String> {
        if name.len() > MAX_SKILL_NAME_BYTES {
            return Err(format!(
                "no skill named {}: it is {} bytes long, and a skill name is at most {MAX_SKILL_NAME_BYTES} bytes, \
                 so no skill has it — call skill_list for the names this server serves",
                excerpt(name),
                name.len()
            ));
        }
        let found = self
            .catalog
            .skills
            .binary_search_by(|s| s.name.as_str().cmp(name));
        match found {
            Ok(i) => Ok(&self.catalog.skills[i]),
            // A skill of that name that was refused: say why, rather than
            // that it does not exist (issue 41: a newcomer's refused skill
            // read as "no skill named …").
            Err(_) if let Some(p) = self.refusal_of(name) => Err(format!(
                "no skill named {} is served: {} was refused ({}): {} — fix it, or call skill_list, whose \"problems\" \
                 list everything not served. This server serves: {}.",
                excerpt(name),
                p.path,
                p.reason.code(),
                excerpt(&p.detail),
                self.served_names()
            )),
            Err(_) if self.catalog.skills.is_empty() => Err(format!(
                "no skill named {}: this server found no skills at all — call skill_list, whose \"problems\" say why",
                excerpt(name)
            )),
            Err(_) => Err(format!(
                "no skill named {}. This server serves: {}.",
                excerpt(name),
                self.served_names()
            )),
        }
    }

    /// Every served name, for a refusal that names them (LOAD-004).
    fn served_names(&self) -> String {
        if self.catalog.skills.is_empty() {
            return "no skill at all".to_owned();
        }
        self.catalog
            .skills
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The problem that kept a skill whose folder is named `name` from
    /// being served, if one did: its path is that folder or a file in it.
    fn refusal_of(&self, name: &str) -> Option<&Problem> {
        self.problems.iter().find(|p| {
            let path = std::path::Path::new(&p.path);
            let folder = if path
                .file_name()
                .is_some_and(|f| f == "SKILL.md" || f == "skill.md")
            {
                path.parent()
            } else {
                Some(path)
            };
            folder
                .and_then(|f| f.file_name())
                .is_some_and(|f| f == name)
                && !matches!(p.reason, Reason::Setting | Reason::RootUnreadable)
        })
    }

    /// How many files every served skill bundles, together.
    pub(crate) fn files_total(&self) -> usize {
        self.file_offsets.last().map_or(0, |&o| {
            o + self.catalog.skills.last().map_or(0, |s| s.files.len())
        })
    }

    /// The bundled files from position `start` of the one list of them all
    /// (skills by name, files by path), each with its skill.
    pub(crate) fn files_from(&self, start: usize) -> impl Iterator<Item = (&Skill, FileEntry<'_>)> {
        let first = self
            .file_offsets
            .partition_point(|&o| o <= start)
            .saturating_sub(1);
        let skip = start - self.file_offsets.get(first).copied().unwrap_or(0);
        self.catalog.skills[first.min(self.catalog.skills.len())..]
            .iter()
            .flat_map(|s| s.files.iter().map(move |f| (s, f)))
            .skip(skip)
    }
}

/// Seconds since the epoch as RFC 3339 UTC (`2026-12-02T17:24:48Z`), for
/// `scannedAt` without a date crate.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_renders_known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_796_232_288)),
            "2026-12-02T17:24:48Z"
        );
    }
}
