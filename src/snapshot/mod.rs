//! The snapshot: everything the doors read, built from a [`Config`] in one
//! pass — catalog, then grant, then interpreters, then the Skills
//! extension's view — and never changed after. The boot scan makes the
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

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::catalog::{self, Catalog, FileEntry, Skill};
use crate::config::Config;
use crate::echo::excerpt;
use crate::grant::{self, Grant, Scripts};
use crate::interpreters::Interpreters;
use crate::limits::{
    ANSWER_BUDGET_VAR, ELICIT_TIMEOUT_VAR, EMBEDDINGS_VAR, HTTP_SESSION_IDLE_VAR,
    INSTRUCTIONS_INDEX_VAR, MAX_SKILL_NAME_BYTES,
};
use crate::problem::{Problem, Reason};
use crate::skills_ext::SkillsView;

/// One scan's worth of served state; immutable once built.
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) config: Config,
    pub catalog: Catalog,
    pub(crate) grant: Grant,
    pub(crate) interpreters: Interpreters,
    /// The catalog's problems, then the grant's, then the Skills extension's.
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
    /// The most characters of JSON one answer may hold (LIST-005).
    pub(crate) budget: usize,
    /// The most characters the `initialize` instructions spend on the
    /// catalog (LIST-014).
    pub(crate) instructions_budget: usize,
    /// How long a run's approval is waited for (RUN-028).
    pub(crate) elicit_timeout: std::time::Duration,
    /// How long an HTTP session may sit untouched (HTTP-008): read once,
    /// when serving over HTTP starts.
    pub(crate) http_session_idle: std::time::Duration,
    /// `skill_list`'s entries and their sizes, computed on first use.
    entries: OnceLock<pages::Entries>,
    /// `skill_list` with no arguments, serialized on first use.
    first_list: OnceLock<Result<Serialized, String>>,
    /// What `query` searches (LIST-010), built on the first query: a
    /// reload's snapshot builds its own.
    index: OnceLock<crate::search::Index>,
    /// The owner's embedding model, when one is set and loads (LIST-017).
    model: Option<std::sync::Arc<crate::search::semantic::Model>>,
    /// The `initialize` instructions, made once: rmcp asks the handler for
    /// its info (instructions included) on many requests, to check a
    /// capability, and the catalog's listing or themes cost a pass over
    /// every skill.
    instructions: OnceLock<String>,
}

impl Snapshot {
    /// The boot scan: generation 1.
    pub fn boot(config: Config) -> Snapshot {
        Snapshot::build(config, 1)
    }

    /// A scan numbered `generation` (reload's rescans are 2, 3, …).
    pub(crate) fn build(config: Config, generation: u64) -> Snapshot {
        let scanned_at = SystemTime::now();
        let catalog = catalog::scan(&config);
        let grant = Grant::from_config(&config);
        let interpreters = Interpreters::resolve(config.var("PATH")).off(config.runs_off);
        let mut problems = catalog.problems.clone();
        problems.extend(grant.problems(&catalog));
        let skills_view = SkillsView::boot(&catalog, &mut problems);
        let budget = setting(&mut problems, ANSWER_BUDGET_VAR, config.answer_budget());
        if let Some(why) = config.blank_roots_note() {
            problems.push(Problem::new("SKILLS_DIR", Reason::Setting, why));
        }
        if let Some(why) = config.watch_refusal() {
            problems.push(Problem::new("SKILL_MCP_WATCH", Reason::Setting, why));
        }
        let instructions_budget = setting(
            &mut problems,
            INSTRUCTIONS_INDEX_VAR,
            config.instructions_budget(),
        );
        let elicit_secs = setting(&mut problems, ELICIT_TIMEOUT_VAR, config.elicit_timeout());
        let idle_secs = setting(
            &mut problems,
            HTTP_SESSION_IDLE_VAR,
            config.http_session_idle(),
        );
        let model = match config.var(EMBEDDINGS_VAR).filter(|v| !v.is_empty()) {
            None => None,
            Some(dir) => match crate::search::semantic::shared(std::path::Path::new(dir)) {
                Ok(model) => Some(model),
                Err(why) => {
                    problems.push(Problem::new(EMBEDDINGS_VAR, Reason::Setting, why.0));
                    None
                }
            },
        };
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
            budget,
            instructions_budget,
            elicit_timeout: std::time::Duration::from_secs(elicit_secs as u64),
            http_session_idle: std::time::Duration::from_secs(idle_secs as u64),
            entries: OnceLock::new(),
            first_list: OnceLock::new(),
            index: OnceLock::new(),
            model,
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
            Ok(i) => {
                let skill = &self.catalog.skills[i];
                Ok((skill, self.scripts(skill)))
            }
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

/// A setting's value; when its variable was refused, why, as a `problems`
/// entry naming the variable (the default holds).
fn setting<T>(problems: &mut Vec<Problem>, var: &str, (value, refused): (T, Option<String>)) -> T {
    if let Some(why) = refused {
        // The refusal says the range; what to do is to keep to it.
        problems.push(Problem::new(
            var,
            Reason::Setting,
            format!(
                "{why}: set {var} to a whole number in that range, or unset it for the default"
            ),
        ));
    }
    value
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
