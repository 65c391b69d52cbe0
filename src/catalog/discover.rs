//! Discovery (DISC-001..DISC-009, DISC-017): the three layouts under each
//! root, which directories are skills and under which names, and a name
//! two directories contribute refused for both (DISC-005). Discovery and
//! naming run in root and entry order on one thread; reading each skill
//! runs on the scan's pool.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::iter::{IntoParallelIterator, IntoParallelRefIterator, ParallelIterator};

use super::names::candidate_name;
use super::skill::read_skill;
use super::skill_md::SKILL_MD;
use super::walk::sorted_entries;
use super::{Catalog, Skill, show};
use crate::config::{Config, RootsFrom};
use crate::problem::{Problem, Reason};

/// A directory found to hold SKILL.md.
pub(super) struct Candidate {
    /// Where it was met (a symlink's own path, when it was one).
    pub(super) found_at: PathBuf,
    pub(super) real: PathBuf,
    root: usize,
}

struct Scan<'p> {
    /// The scan's threads, when it has more than one.
    pool: Option<&'p rayon::ThreadPool>,
    roots: Vec<String>,
    problems: Vec<Problem>,
    candidates: Vec<Candidate>,
    /// Real directories already met, so one reached twice (a symlink alias
    /// inside a root, a root configured twice) is read once (DISC-007).
    seen: HashSet<PathBuf>,
}

/// How a scan does the per-skill work: reading SKILL.md through the fence,
/// the frontmatter and declaration, and the manifest walk. Either way the
/// catalog is the same, skills and problems in the same order (DISC-017).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parallelism {
    /// One skill after another, on the calling thread.
    Sequential,
    /// Skills read side by side on a pool of this many threads, started
    /// for the scan and gone with it (1 or 0: sequential).
    Threads(usize),
}

impl Parallelism {
    /// One thread a core this process may use (sched affinity and cgroup
    /// quota included); sequential when that cannot be told.
    pub(crate) fn cores() -> Parallelism {
        std::thread::available_parallelism()
            .map_or(Parallelism::Sequential, |n| Parallelism::Threads(n.get()))
    }
}

/// Scans every configured root (spec DISC-001..DISC-017), reading the
/// skills on every core.
pub(crate) fn scan(config: &Config) -> Catalog {
    scan_with(config, Parallelism::cores())
}

/// What the scan does for one name, in the order names were first met.
enum Step {
    /// Two or more directories contribute the name: the one problem saying
    /// so.
    Refused(Vec<Problem>),
    /// One directory does: read it.
    Read {
        name: String,
        dir: PathBuf,
        source: Arc<str>,
    },
}

/// Scans every configured root (spec DISC-001..DISC-017). Discovery,
/// naming and the duplicate check run on the calling thread, in root and
/// entry order; only discovery's stats of each entry's SKILL.md and
/// reading each skill are left to `how`, and each skill's
/// problems are kept apart and appended in the order its name was met, so
/// no thread's timing reaches the catalog (DISC-017).
pub fn scan_with(config: &Config, how: Parallelism) -> Catalog {
    // A pool that cannot be started (no threads left to this process)
    // costs the scan its speed, never its answer.
    let pool = match how {
        Parallelism::Threads(n) if n > 1 => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("scan-{i}"))
            .build()
            .ok(),
        _ => None,
    };
    let mut s = Scan {
        pool: pool.as_ref(),
        roots: config.roots.iter().map(|r| show(r)).collect(),
        problems: Vec::new(),
        candidates: Vec::new(),
        seen: HashSet::new(),
    };
    for (i, root) in config.roots.iter().enumerate() {
        // What an unreadable root's detail adds: where to point instead.
        let hint = match config.tilde_hint(root).or_else(|| config.relative_hint(root)) {
            Some(hint) => hint,
            None if config.roots_from == RootsFrom::Default => {
                "; set SKILLS_DIR to a directory of skills".to_owned()
            }
            // Only a `check` argument can hold a `:` (SKILLS_DIR is split
            // at each one): `check "$SKILLS_DIR"` is the likely slip.
            None if root.as_os_str().as_encoded_bytes().contains(&b':') => {
                "; the path holds `:`, which separates folders in SKILLS_DIR: give `check` each folder \
                 as its own argument (check /a /b), or run `check` with SKILLS_DIR set"
                    .to_owned()
            }
            None => String::new(),
        };
        s.root(i, root, &hint);
    }

    // A name contributed by two directories is refused for both (DISC-005):
    // the grant names a skill, so no scan order may pick a winner.
    let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
    let mut order = Vec::new();
    for (i, c) in s.candidates.iter().enumerate() {
        let Some(name) = candidate_name(c, &mut s.problems) else {
            continue;
        };
        by_name.entry(name.clone()).or_default().push(i);
        order.push(name);
    }
    let sources: Vec<Arc<str>> = s.roots.iter().map(|r| Arc::from(r.as_str())).collect();
    let mut steps = Vec::new();
    let mut done = HashSet::new();
    for name in order {
        if !done.insert(name.clone()) {
            continue;
        }
        let Some(group) = by_name.get(&name) else {
            continue;
        };
        if group.len() > 1 {
            steps.push(Step::Refused(vec![duplicate(&name, group, &s)]));
            continue;
        }
        let c = &s.candidates[group[0]];
        steps.push(Step::Read {
            name,
            dir: c.real.clone(),
            source: Arc::clone(&sources[c.root]),
        });
    }

    // What found the candidates is not needed to read them: give it back
    // before the reads allocate the catalog (it is a path or three a skill).
    drop(by_name);
    drop(done);
    s.candidates = Vec::new();
    s.seen = HashSet::new();

    // Each step's outcome on its own; rayon's indexed collect puts them
    // back in step order whichever thread finished first.
    let outcome = |step: Step| match step {
        Step::Refused(problems) => (None, problems),
        Step::Read { name, dir, source } => {
            let mut problems = Vec::new();
            let skill = read_skill(name, dir, source, &mut problems);
            (skill, problems)
        }
    };
    let outcomes: Vec<(Option<Skill>, Vec<Problem>)> = match &pool {
        Some(pool) => pool.install(|| steps.into_par_iter().map(outcome).collect()),
        None => steps.into_iter().map(outcome).collect(),
    };
    // Collected in place, so the outcomes' buffer becomes the skills' one
    // rather than both being held at once at the end of the scan.
    let mut skills: Vec<Skill> = outcomes
        .into_iter()
        .filter_map(|(skill, problems)| {
            s.problems.extend(problems);
            skill
        })
        .collect();
    skills.shrink_to_fit();
    // Names are unique here (DISC-005), so the order is total (DISC-015).
    skills.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    Catalog {
        roots: s.roots,
        roots_from: config.roots_from,
        skills,
        problems: s.problems,
    }
}

/// The one report of a name that the candidates at `group` (two or
/// more) all contribute (DISC-005, issue 41 §3): at the first of them, in
/// root and entry order, naming every one, why none is served, and the
/// fix — rename all but one, or, when each comes from a root of its own,
/// drop all but one of those roots.
fn duplicate(name: &str, group: &[usize], s: &Scan) -> Problem {
    let dirs: Vec<String> = group.iter().map(|&i| show(&s.candidates[i].real)).collect();
    let roots: Vec<usize> = group.iter().map(|&i| s.candidates[i].root).collect();
    let each_its_own_root = roots.iter().collect::<HashSet<_>>().len() == roots.len();
    let (none, rename) = if group.len() == 2 {
        (
            "neither is served",
            "rename one of them (the folder, and the name: in its SKILL.md)",
        )
    } else {
        (
            "none of them is served",
            "rename all but one of them (each folder, and the name: in its SKILL.md)",
        )
    };
    let mut detail = format!(
        "the skill name {name:?} comes from {} folders, {}, so {none}: a grant names a skill, and no scan \
         order may choose between them; {rename}",
        group.len(),
        and_list(&dirs)
    );
    if each_its_own_root {
        let roots: Vec<String> = roots.iter().map(|&r| s.roots[r].clone()).collect();
        detail.push_str(&format!(
            ", or drop {} {}",
            if roots.len() == 2 {
                "one of the roots"
            } else {
                "all but one of the roots"
            },
            and_list(&roots)
        ));
    }
    Problem::new(dirs[0].clone(), Reason::DuplicateName, detail)
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The fix for a root that is not a directory: the folder holding it
/// when it is a SKILL.md (layout 1 takes that folder as the skill).
fn not_a_directory(root: &Path) -> String {
    match root.parent() {
        Some(dir) if root.file_name() == Some(OsStr::new(SKILL_MD)) => format!(
            "; it is a SKILL.md: point at the folder that holds it, {}",
            show(dir)
        ),
        _ => "; point at a folder of skills (or at one skill's folder)".to_owned(),
    }
}

/// The fix for a root that could not be read: a folder beside it with a
/// name near its own, when it does not exist (a typo); else what to check.
fn unreadable(root: &Path, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        return "; make it readable by the user the server runs as".to_owned();
    }
    if e.kind() != std::io::ErrorKind::NotFound {
        return String::new();
    }
    let near = root.file_name().and_then(|want| {
        let want = want.to_string_lossy();
        let limit = (want.chars().count() / 3).clamp(1, 3);
        let parent = root
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::read_dir(parent)
            .ok()?
            .filter_map(Result::ok)
            .take(4096)
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .map(|n| (strsim::osa_distance(&want, &n), n))
            .filter(|(d, _)| *d <= limit)
            .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)))
            .map(|(_, n)| root.with_file_name(n))
    });
    match near {
        Some(p) => format!("; did you mean {}?", show(&p)),
        None => "; no such folder: correct the path, or create the folder".to_owned(),
    }
}

/// `.git`, `.github` and the like: never skill candidates (DISC-004).
fn is_hidden(name: &OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

fn has_skill_md(dir: &Path) -> bool {
    fs::symlink_metadata(dir.join(SKILL_MD)).is_ok()
}

/// A `skill.md` or `Skill.md` in a directory without `SKILL.md`: what its
/// author meant, on a file system that tells case apart (DISC-018). Only
/// directories already found to be no skill pay this read.
fn case_variant(dir: &Path) -> Option<String> {
    fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .find_map(|e| {
            let name = e.file_name().into_string().ok()?;
            (name.eq_ignore_ascii_case(SKILL_MD) && name != SKILL_MD).then_some(name)
        })
}

/// True when `dir` is a directory with at least one skill directly in it
/// (a look at its first 256 entries only: a hint, not a scan).
fn holds_a_skill(dir: &Path) -> bool {
    const HINT_PROBE_ENTRIES: usize = 256;
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries
        .take(HINT_PROBE_ENTRIES)
        .filter_map(Result::ok)
        .any(|e| has_skill_md(&e.path()))
}

/// What to do about a directory of a root that holds no SKILL.md, where
/// nothing better is known (a repository root says where its skills are
/// instead, DISC-019).
const NOT_A_SKILL_FIX: &str =
    ": add a SKILL.md to it if it is meant as a skill, or move it out of this folder of skills";

/// What a `no-skill-md` problem says: that the directory is no skill and,
/// when it holds a SKILL.md spelt in another case, that the name is
/// case-sensitive (DISC-018).
fn no_skill_md(dir: &Path, what: &str) -> String {
    match case_variant(dir) {
        Some(v) => format!(
            "no SKILL.md in this {what}, so it is not a skill: it holds {v:?}, and the name is case-sensitive; rename it SKILL.md"
        ),
        None => format!("no SKILL.md in this {what}, so it is not a skill{NOT_A_SKILL_FIX}"),
    }
}

impl Scan<'_> {
    /// One configured root; `hint` ends the detail of a root that cannot
    /// be read (CONF-004, CONF-009).
    fn root(&mut self, i: usize, root: &Path, hint: &str) {
        let real = match fs::canonicalize(root) {
            Ok(r) if r.is_dir() => r,
            Ok(_) => {
                let hint = if hint.is_empty() {
                    not_a_directory(root)
                } else {
                    hint.to_owned()
                };
                self.problems.push(Problem::new(
                    show(root),
                    Reason::RootUnreadable,
                    format!("this root is not a directory{hint}"),
                ));
                return;
            }
            Err(e) => {
                let hint = if hint.is_empty() {
                    unreadable(root, &e)
                } else {
                    hint.to_owned()
                };
                self.problems.push(Problem::new(
                    show(root),
                    Reason::RootUnreadable,
                    format!("this root could not be read: {e}{hint}"),
                ));
                return;
            }
        };
        // Layout 1: the root is itself one skill (DISC-001).
        if has_skill_md(&real) {
            if self.seen.insert(real.clone()) {
                self.candidates.push(Candidate {
                    found_at: root.to_path_buf(),
                    real: real.clone(),
                    root: i,
                });
            }
            return;
        }
        // A root meant as one skill, whose SKILL.md is spelt in another case.
        if case_variant(&real).is_some() {
            self.problems.push(Problem::new(
                show(root),
                Reason::NoSkillMd,
                no_skill_md(&real, "root"),
            ));
        }
        // Layout 2: a directory of skills.
        let first_candidate = self.candidates.len();
        let first_problem = self.problems.len();
        self.parent(i, &real, &real);
        let (beside_problems, beside_candidates) = (self.problems.len(), self.candidates.len());
        // Layout 3: `<root>/skills/<name>/SKILL.md`.
        let skills = real.join("skills");
        if skills.is_dir() && !has_skill_md(&skills) {
            match fs::canonicalize(&skills) {
                Ok(sr) if sr.starts_with(&real) => self.parent(i, &sr, &real),
                _ => self.problems.push(Problem::new(
                    show(&skills),
                    Reason::SymlinkEscape,
                    "the \"skills\" directory resolves outside the configured root; refused: add the folder it \
                     leads to as a root of its own (SKILLS_DIR holds several, separated by \":\"), or move the skills \
                     into this root",
                )),
            }
        }
        // A repository root whose skills sit under `skills/` beside folders
        // that are no skills (docs/, spec/): each of those says where the
        // skills are (DISC-019).
        if self.candidates.len() > beside_candidates {
            for p in &mut self.problems[first_problem..beside_problems] {
                if p.reason == Reason::NoSkillMd {
                    if let Some(base) = p.detail.strip_suffix(NOT_A_SKILL_FIX) {
                        p.detail.truncate(base.len());
                    }
                    p.detail.push_str(
                        "; this root keeps its skills in skills/: point SKILLS_DIR at that directory to serve only them",
                    );
                }
            }
        }
        // A project root whose only skills are Claude Code's own, under the
        // hidden `.claude/skills/` (DISC-004 skips it): say where they are
        // (DISC-020).
        if self.candidates.len() == first_candidate {
            let claude = real.join(".claude").join("skills");
            if holds_a_skill(&claude) {
                self.problems.push(Problem::new(
                    show(root),
                    Reason::NoSkillMd,
                    format!(
                        "no skill is served from this root, but {} holds skills (a Claude Code project's own, \
                         in a hidden directory this server does not look into): point SKILLS_DIR at that directory to serve them",
                        claude.display()
                    ),
                ));
            }
        }
    }

    /// Looks at each entry of `parent` as a possible skill directory.
    fn parent(&mut self, i: usize, parent: &Path, root: &Path) {
        let entries = sorted_entries(parent, &mut self.problems, Reason::RootUnreadable);
        // Whether each directory entry holds a SKILL.md: the one stat every
        // candidate costs, 10,000 of them for 10,000 skills, so they are
        // taken side by side on the scan's threads. Only the stats run
        // there; every decision below is made here, in entry order.
        let probe = |e: &fs::DirEntry| {
            !is_hidden(&e.file_name())
                && e.file_type().is_ok_and(|t| t.is_dir())
                && has_skill_md(&parent.join(e.file_name()))
        };
        let holds_skill_md: Vec<bool> = match self.pool {
            Some(pool) => pool.install(|| entries.par_iter().map(probe).collect()),
            None => entries.iter().map(probe).collect(),
        };
        for (entry, holds) in entries.into_iter().zip(holds_skill_md) {
            let name = entry.file_name();
            // Hidden entries (`.git`, `.github`) are not skill candidates: a
            // checkout of a skills repository always has them (DISC-004).
            if is_hidden(&name) {
                continue;
            }
            let at = parent.join(&name);
            let Ok(ft) = entry.file_type() else { continue };
            // Plain files in a root (README.md, LICENSE) are not candidates.
            if !ft.is_dir() && !ft.is_symlink() {
                continue;
            }
            // `<root>/skills` is layout 3, scanned (or refused) on its own;
            // a symlink to a directory counts, so it is not reported twice.
            if parent == root && name == OsStr::new("skills") && at.is_dir() && !has_skill_md(&at) {
                continue;
            }
            // `parent` is already real, so a directory entry (not a
            // symlink) is its own real path; only a symlink needs resolving.
            // Skipping realpath here saves a readlink per ancestor of every
            // skill directory at boot.
            let resolved = if ft.is_dir() {
                Ok(at.clone())
            } else {
                fs::canonicalize(&at)
            };
            let real = match resolved {
                Ok(r) => r,
                Err(e) => {
                    self.problems.push(Problem::new(
                        show(&at),
                        Reason::SymlinkEscape,
                        format!(
                            "this entry could not be resolved ({e}): a broken symlink, a loop, or an unreadable target; \
                             refused: point it at a skill's folder inside this root, or remove it"
                        ),
                    ));
                    continue;
                }
            };
            if !real.starts_with(root) {
                let what = if ft.is_symlink() {
                    "this entry is a symlink resolving outside the configured root"
                } else {
                    "this directory resolves outside the configured root"
                };
                let beside = real.parent().map_or_else(|| show(&real), show);
                self.problems.push(Problem::new(
                    show(&at),
                    Reason::SymlinkEscape,
                    format!(
                        "{what} (to {}); refused: to serve it, add {beside} as a root of its own (SKILLS_DIR holds \
                         several, separated by \":\"), or move the skill into this root",
                        show(&real)
                    ),
                ));
                continue;
            }
            // A directory entry is a directory by its own type; only what a
            // symlink leads to needs a stat to tell.
            if (!ft.is_dir() && !real.is_dir()) || !self.seen.insert(real.clone()) {
                continue;
            }
            // A directory entry was probed above (its real path is its
            // own); a symlink's target is stat'd now.
            let holds = if ft.is_dir() {
                holds
            } else {
                has_skill_md(&real)
            };
            if holds {
                self.candidates.push(Candidate {
                    found_at: at,
                    real,
                    root: i,
                });
            } else {
                self.problems.push(Problem::new(
                    show(&at),
                    Reason::NoSkillMd,
                    no_skill_md(&real, "directory"),
                ));
            }
        }
    }
}
