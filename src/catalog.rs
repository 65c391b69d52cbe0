//! Discovery: which directories are skills, under which names, with which
//! files — and, for everything else, a `problems` entry saying why.
//!
//! A scan's catalog is immutable (README "Trust posture": "The catalog is
//! scanned once at boot and held in memory"): the snapshot holds it and
//! the handlers only read it; the opt-in reload mode scans anew into a
//! whole new snapshot rather than changing this one. One bad skill costs itself, never the listing, and
//! nothing is dropped in silence (spec DISC-*).

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::iter::{IntoParallelIterator, IntoParallelRefIterator, ParallelIterator};

use crate::config::{Config, RootsFrom};
use crate::declaration::{self, Declaration};
use crate::fence::{self, FenceError};
use crate::frontmatter::{self, Fields};
use crate::limits::{
    MAX_BODY_BYTES, MAX_DIRS_PER_SKILL, MAX_FILES_PER_SKILL, MAX_FRONTMATTER_BYTES,
    MAX_SKILL_NAME_BYTES,
};
use crate::problem::{Problem, Reason};
use crate::read;

/// The file every skill directory holds.
pub const SKILL_MD: &str = "SKILL.md";

/// Most bytes of SKILL.md read: the largest frontmatter, its delimiter
/// lines, and the largest body served.
pub const MAX_SKILL_MD_BYTES: usize = MAX_FRONTMATTER_BYTES + 16 + MAX_BODY_BYTES;

/// One bundled file: its skill-relative path and size in bytes, borrowed
/// from its skill's [`Files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileEntry<'a> {
    pub path: &'a str,
    pub size: u64,
}

/// A skill's manifest, held compactly: every path in one shared buffer,
/// cut by end offsets, beside the sizes. A skill may bundle 10,000 files,
/// and 10,000 skills are served at once, so one owned string a file (its
/// allocation and its header) would be most of the catalog's memory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Files {
    /// Every path, one after another, sorted by path bytes.
    paths: Box<str>,
    /// Where each path ends in `paths`.
    ends: Box<[u32]>,
    sizes: Box<[u64]>,
}

impl Files {
    /// The manifest of `(path, size)` pairs, sorted here by path bytes. No
    /// skill's paths come near 4 GiB (MAX_FILES_PER_SKILL files of at most
    /// a path's length each), so the offsets fit `u32`.
    pub fn new(mut files: Vec<(String, u64)>) -> Files {
        files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut paths = String::with_capacity(files.iter().map(|f| f.0.len()).sum());
        let mut ends = Vec::with_capacity(files.len());
        let mut sizes = Vec::with_capacity(files.len());
        for (path, size) in files {
            paths.push_str(&path);
            ends.push(u32::try_from(paths.len()).unwrap_or(u32::MAX));
            sizes.push(size);
        }
        Files {
            paths: paths.into_boxed_str(),
            ends: ends.into_boxed_slice(),
            sizes: sizes.into_boxed_slice(),
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`th file in path order.
    pub fn get(&self, i: usize) -> Option<FileEntry<'_>> {
        (i < self.len()).then(|| self.entry(i))
    }

    /// The `i`th file, for `i` below `len()`.
    fn entry(&self, i: usize) -> FileEntry<'_> {
        let end = self.ends.get(i).map_or(0, |&e| e as usize);
        let start = match i {
            0 => 0,
            _ => self.ends.get(i - 1).map_or(0, |&e| e as usize),
        };
        FileEntry {
            path: self.paths.get(start..end).unwrap_or(""),
            size: self.sizes.get(i).copied().unwrap_or(0),
        }
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = FileEntry<'_>> + Clone + '_ {
        (0..self.len()).map(move |i| self.entry(i))
    }

    /// The position of `path`, found by bisection (the paths are sorted).
    pub fn position(&self, path: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.entry(mid).path.as_bytes().cmp(path.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }
}

/// A served skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The directory's name: the only name it is served under (DISC-002).
    pub name: String,
    /// Its real (canonical) directory: the base of every fence check.
    pub dir: PathBuf,
    /// The configured root it was found under, as `roots` reports it;
    /// shared by every skill of that root.
    pub source: Arc<str>,
    pub description: Option<String>,
    pub when_to_use: Option<String>,
    /// The frontmatter's own `name`, when it has one (reported when it
    /// differs; SEP-2640 needs it equal to the directory name). Read it
    /// with [`Skill::frontmatter_name`].
    pub named: Named,
    /// Every bundled file, sorted by path bytes; SKILL.md included.
    pub files: Files,
    pub bytes: u64,
    pub declaration: Declaration,
    /// Declared scripts that are not a regular file inside the skill, with
    /// the reason; they are reported and can never run (DISC-010).
    pub missing_scripts: Vec<(String, String)>,
}

/// What a skill's frontmatter calls it. Nearly always its directory name,
/// which the skill already holds: that case costs no second copy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Named {
    /// No `name` in the frontmatter.
    Not,
    /// The directory name.
    Same,
    /// Another name.
    Other(Box<str>),
}

impl Skill {
    /// The frontmatter's own `name`, when it has one.
    pub fn frontmatter_name(&self) -> Option<&str> {
        match &self.named {
            Named::Not => None,
            Named::Same => Some(&self.name),
            Named::Other(n) => Some(n),
        }
    }
}

/// The catalog: every skill served, and every problem met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    pub roots: Vec<String>,
    pub roots_from: RootsFrom,
    /// Sorted by name.
    pub skills: Vec<Skill>,
    /// In discovery order.
    pub problems: Vec<Problem>,
}

impl Catalog {
    /// The skill served under `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.skills[i])
    }
}

/// True when `name` can be served as a skill name: it travels in tool
/// arguments, prompt names and `skill://` URIs, so it is kept to characters
/// none of them need to escape (DISC-009).
pub fn is_skill_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= MAX_SKILL_NAME_BYTES
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn show(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A directory found to hold SKILL.md.
struct Candidate {
    /// Where it was met (a symlink's own path, when it was one).
    found_at: PathBuf,
    real: PathBuf,
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
    pub fn cores() -> Parallelism {
        std::thread::available_parallelism()
            .map_or(Parallelism::Sequential, |n| Parallelism::Threads(n.get()))
    }
}

/// Scans every configured root (spec DISC-001..DISC-017), reading the
/// skills on every core.
pub fn scan(config: &Config) -> Catalog {
    scan_with(config, Parallelism::cores())
}

/// What the scan does for one name, in the order names were first met.
enum Step {
    /// Two or more directories contribute the name: the problems saying so.
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
        s.root(i, root, config.roots_from);
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
            let dirs: Vec<String> = group.iter().map(|&i| show(&s.candidates[i].real)).collect();
            let refused = group
                .iter()
                .map(|&i| {
                    Problem::new(
                        show(&s.candidates[i].real),
                        Reason::DuplicateName,
                        format!(
                            "{} directories all contribute the skill {name:?} ({}); none of them is served, \
                             because a grant names a skill and no scan order may choose between them",
                            group.len(),
                            dirs.join(", ")
                        ),
                    )
                })
                .collect();
            steps.push(Step::Refused(refused));
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

/// Entries of a directory, sorted by name bytes so discovery is the same on
/// every machine. A directory that cannot be read is reported.
fn sorted_entries(dir: &Path, problems: &mut Vec<Problem>, reason: Reason) -> Vec<fs::DirEntry> {
    match fs::read_dir(dir) {
        Ok(rd) => {
            // Each name is taken once, not once a comparison.
            let mut v: Vec<_> = rd
                .filter_map(Result::ok)
                .map(|e| (e.file_name(), e))
                .collect();
            v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            v.into_iter().map(|(_, e)| e).collect()
        }
        Err(e) => {
            problems.push(Problem::new(
                show(dir),
                reason,
                format!("this directory could not be read: {e}"),
            ));
            Vec::new()
        }
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

/// What a `no-skill-md` problem says: that the directory is no skill and,
/// when it holds a SKILL.md spelt in another case, that the name is
/// case-sensitive (DISC-018).
fn no_skill_md(dir: &Path, what: &str) -> String {
    match case_variant(dir) {
        Some(v) => format!(
            "no SKILL.md in this {what}, so it is not a skill: it holds {v:?}, and the name is case-sensitive; rename it SKILL.md"
        ),
        None => format!("no SKILL.md in this {what}, so it is not a skill"),
    }
}

impl Scan<'_> {
    fn root(&mut self, i: usize, root: &Path, from: RootsFrom) {
        let hint = if from == RootsFrom::Default {
            "; set SKILLS_DIR to a directory of skills"
        } else {
            ""
        };
        let real = match fs::canonicalize(root) {
            Ok(r) if r.is_dir() => r,
            Ok(_) => {
                self.problems.push(Problem::new(
                    show(root),
                    Reason::RootUnreadable,
                    format!("this root is not a directory{hint}"),
                ));
                return;
            }
            Err(e) => {
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
                    "the \"skills\" directory resolves outside the configured root; refused",
                )),
            }
        }
        // A repository root whose skills sit under `skills/` beside folders
        // that are no skills (docs/, spec/): each of those says where the
        // skills are (DISC-019).
        if self.candidates.len() > beside_candidates {
            for p in &mut self.problems[first_problem..beside_problems] {
                if p.reason == Reason::NoSkillMd {
                    p.detail.push_str(
                        "; this root keeps its skills in skills/: point SKILLS_DIR at that directory to serve only them",
                    );
                }
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
                        format!("this entry could not be resolved ({e}): a broken symlink, a loop, or an unreadable target; refused"),
                    ));
                    continue;
                }
            };
            if !real.starts_with(root) {
                self.problems.push(Problem::new(
                    show(&at),
                    Reason::SymlinkEscape,
                    if ft.is_symlink() {
                        "this entry is a symlink resolving outside the configured root; refused"
                    } else {
                        "this directory resolves outside the configured root; refused"
                    },
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

/// The name a candidate is served under: its real directory's name
/// (DISC-002), or `None` with a problem when that cannot be a name.
fn candidate_name(c: &Candidate, problems: &mut Vec<Problem>) -> Option<String> {
    {
        let base = c.real.file_name().unwrap_or_default();
        let Some(name) = base.to_str().filter(|n| is_skill_name(n)) else {
            problems.push(Problem::new(
                show(&c.real),
                Reason::UnusableName,
                format!(
                    "the directory name {:?} cannot be served (a skill name is 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit), \
                     and a skill is served under its directory name; skipped",
                    base.to_string_lossy()
                ),
            ));
            return None;
        };
        if c.found_at.file_name().is_some_and(|n| n != base)
            && fs::symlink_metadata(&c.found_at).is_ok_and(|m| m.is_symlink())
        {
            problems.push(Problem::new(
                show(&c.found_at),
                Reason::NameMismatch,
                format!(
                    "this entry is a symlink to {}, and a skill is served under its real directory's name; serving it as {name:?}, \
                     which is also the name a grant must use",
                    show(&c.real)
                ),
            ));
        }
        Some(name.to_owned())
    }
}

/// SKILL.md's text, read through the fence and capped (DISC-008).
pub struct SkillMd {
    pub text: String,
    /// True when the file is larger than [`MAX_SKILL_MD_BYTES`].
    pub cut: bool,
}

/// Reads SKILL.md of the skill at `dir` (a real directory). The same code
/// serves discovery and `skill_load`, so both see one file the same way.
pub fn read_skill_md(dir: &Path) -> Result<SkillMd, (Reason, String)> {
    let opened = fence::open(dir, SKILL_MD).map_err(|e| match e {
        FenceError::Escape { .. } => (
            Reason::SymlinkEscape,
            "SKILL.md is a symlink pointing outside this skill's own directory; refused".to_owned(),
        ),
        FenceError::NotRegular { kind, .. } => (
            Reason::UnreadableSkillMd,
            format!("SKILL.md is {kind}, not a regular file"),
        ),
        other => (
            Reason::UnreadableSkillMd,
            format!("SKILL.md could not be read: {other}"),
        ),
    })?;
    let capped =
        read::read_capped(&opened.file, &opened.meta, MAX_SKILL_MD_BYTES).map_err(|e| {
            (
                Reason::UnreadableSkillMd,
                format!("SKILL.md could not be read: {e}"),
            )
        })?;
    let text = read::utf8_prefix(&capped.bytes, capped.truncated).map_err(|at| {
        (
            Reason::UnreadableSkillMd,
            format!("SKILL.md is not valid UTF-8 (first bad byte at offset {at})"),
        )
    })?;
    Ok(SkillMd {
        text: text.to_owned(),
        cut: capped.truncated,
    })
}

/// SKILL.md read through the fence and split at its frontmatter: the one
/// place that sequence is written (issue 28 §6), for the scan,
/// `skill_load`, the search index and the Skills extension alike.
pub struct LoadedMd {
    pub md: SkillMd,
    /// Where the YAML lies in `md.text`, and its first line's number.
    yaml: std::ops::Range<usize>,
    pub yaml_line: usize,
    /// Where the body starts in `md.text`.
    pub body_offset: usize,
}

impl LoadedMd {
    /// The YAML between the delimiter lines.
    pub fn yaml(&self) -> &str {
        self.md.text.get(self.yaml.clone()).unwrap_or("")
    }

    /// The body, verbatim.
    pub fn body(&self) -> &str {
        self.md.text.get(self.body_offset..).unwrap_or("")
    }
}

/// Why SKILL.md could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// It could not be read (the fence, its size, its encoding).
    Read(Reason, String),
    /// It was read, but has no frontmatter that splits off.
    Split(frontmatter::FrontmatterError),
}

/// Reads and splits SKILL.md of the skill at `dir`.
pub fn load_skill_md(dir: &Path) -> Result<LoadedMd, LoadError> {
    let md = read_skill_md(dir).map_err(|(reason, detail)| LoadError::Read(reason, detail))?;
    let (yaml, yaml_line, body_offset) = {
        let split = frontmatter::split(&md.text).map_err(LoadError::Split)?;
        // The YAML is a slice of the text; where it starts, as an offset.
        let start = split.yaml.as_ptr().addr() - md.text.as_ptr().addr();
        (
            start..start + split.yaml.len(),
            split.yaml_line,
            split.body_offset,
        )
    };
    Ok(LoadedMd {
        md,
        yaml,
        yaml_line,
        body_offset,
    })
}

fn read_skill(
    name: String,
    dir: PathBuf,
    source: Arc<str>,
    problems: &mut Vec<Problem>,
) -> Option<Skill> {
    let md_path = show(&dir.join(SKILL_MD));
    let loaded = match load_skill_md(&dir) {
        Ok(l) => l,
        Err(LoadError::Read(reason, detail)) => {
            problems.push(Problem::new(md_path, reason, detail));
            return None;
        }
        Err(LoadError::Split(e)) => {
            problems.push(
                Problem::new(md_path, Reason::MalformedFrontmatter, e.message).at(e.line, e.column),
            );
            return None;
        }
    };
    let (fm, block_error) = match frontmatter::parse_sparing_block(
        loaded.yaml(),
        loaded.yaml_line,
        declaration::BLOCK_KEY,
    ) {
        Ok(parsed) => parsed,
        Err(e) => {
            problems.push(
                Problem::new(md_path, Reason::MalformedFrontmatter, e.message).at(e.line, e.column),
            );
            return None;
        }
    };
    if let Some(e) = block_error {
        problems.push(
            Problem::new(
                &md_path,
                Reason::Declaration,
                format!(
                    "the \"mcp-host\" block does not parse, so it is ignored: {}",
                    e.message
                ),
            )
            .at(e.line, e.column),
        );
    }
    for n in frontmatter::keys::unknown(&fm) {
        problems.push(Problem::new(&md_path, Reason::UnknownKey, n.message).at(n.line, n.column));
    }
    let (fields, notes) = Fields::read(&fm);
    let (mut declaration, decl_notes) = declaration::read(&fm);
    // The `env` proposals are checked (their notes are above) but no door
    // serves them: a run hands over what `run[].env` and the grant name.
    // The catalog keeps only what it serves, for 10,000 skills at once.
    declaration.env = Vec::new();
    for n in notes.into_iter().chain(decl_notes) {
        problems.push(Problem::new(&md_path, Reason::Declaration, n.message).at(n.line, n.column));
    }
    if let Some(fm_name) = fields.name.as_deref().filter(|n| *n != name) {
        problems.push(Problem::new(
            &md_path,
            Reason::NameMismatch,
            format!("frontmatter names it {fm_name:?}, but a skill is served under its DIRECTORY name; serving it as {name:?}"),
        ));
    }
    let wanted: Vec<&str> = declaration.run.iter().map(|e| e.script.as_str()).collect();
    let (files, plain) = walk(&dir, &wanted, problems);
    let missing_scripts = declaration
        .run
        .iter()
        .zip(plain)
        .filter_map(|(entry, plain)| {
            // Met by the walk as a regular file with no symlink on the way
            // (it passed the same string check): resolving it again would
            // only repeat the stats the walk made. Anything else is
            // resolved through the fence, with its reasons.
            if plain {
                return None;
            }
            let why = match fence::resolve(&dir, &entry.script) {
                Ok(_) => return None,
                Err(FenceError::Escape { .. }) => {
                    problems.push(Problem::new(
                        show(&dir.join(&entry.script)),
                        Reason::SymlinkEscape,
                        format!(
                            "declares {:?}, which resolves outside this skill's own directory",
                            entry.script
                        ),
                    ));
                    "it resolves outside the skill's own directory".to_owned()
                }
                Err(e) => {
                    let why = match e {
                        FenceError::NotFound { .. } => "it is not a file in this skill".to_owned(),
                        other => other.to_string(),
                    };
                    problems.push(Problem::new(
                        &md_path,
                        Reason::DeclaredScriptMissing,
                        format!(
                            "declares {:?}, which is not a regular file in this skill: {why}",
                            entry.script
                        ),
                    ));
                    why
                }
            };
            Some((entry.script.clone(), why))
        })
        .collect();
    let named = match fields.name {
        None => Named::Not,
        Some(n) if n == name => Named::Same,
        Some(n) => Named::Other(n.into_boxed_str()),
    };
    let bytes = files.iter().map(|f| f.size).sum();
    Some(Skill {
        name,
        dir,
        source,
        description: fields.description,
        when_to_use: fields.when_to_use,
        named,
        files,
        bytes,
        declaration,
        missing_scripts,
    })
}

/// Lists a skill's files (DISC-011..DISC-013): regular files, and symlinks
/// to regular files inside the skill (which the fence serves). A symlink
/// leading out is reported; a symlink to a directory inside the skill is
/// not descended (its files are listed under their real paths already); a
/// name the read tools would refuse is reported, never listed.
///
/// Beside the manifest it tells, for each path in `wanted` (the declared
/// scripts), whether the walk met it as a regular file reached through
/// real directories only: what the fence's realpath check would find too.
fn walk(skill: &Path, wanted: &[&str], problems: &mut Vec<Problem>) -> (Files, Vec<bool>) {
    let mut plain = vec![false; wanted.len()];
    let mut files = Vec::new();
    let mut queue = std::collections::VecDeque::from([(skill.to_path_buf(), String::new())]);
    let mut dirs = 0usize;
    while let Some((dir, prefix)) = queue.pop_front() {
        for entry in sorted_entries(&dir, problems, Reason::UnusablePath) {
            let full = dir.join(entry.file_name());
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                problems.push(Problem::new(
                    show(&full),
                    Reason::UnusablePath,
                    "this name is not valid UTF-8, so skill_file cannot address it; it is not listed (nor anything under it)",
                ));
                continue;
            };
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            let Ok(ft) = entry.file_type() else { continue };
            if let Err(rule) = fence::check_str(&rel) {
                problems.push(Problem::new(
                    show(&full),
                    Reason::UnusablePath,
                    format!(
                        "{rel:?} cannot be addressed by skill_file ({}), so it is not listed{}",
                        rule.describe(),
                        if ft.is_dir() {
                            " (nor anything under it)"
                        } else {
                            ""
                        }
                    ),
                ));
                continue;
            }
            if ft.is_dir() {
                dirs += 1;
                if dirs > MAX_DIRS_PER_SKILL {
                    problems.push(Problem::new(
                        show(skill),
                        Reason::FileLimit,
                        format!("more than {MAX_DIRS_PER_SKILL} directories; the manifest lists the {} files found before that and the rest of the bundle is not walked", files.len()),
                    ));
                    return (Files::new(files), plain);
                }
                queue.push_back((full, rel));
                continue;
            }
            let size = if ft.is_file() {
                entry.metadata().map(|m| m.len()).unwrap_or(0)
            } else if ft.is_symlink() {
                match fence::resolve(skill, &rel) {
                    Ok((_, meta)) => meta.len(),
                    Err(FenceError::Escape { .. }) => {
                        problems.push(Problem::new(
                            show(&full),
                            Reason::SymlinkEscape,
                            format!("{rel:?} is a symlink leading outside this skill's own directory; it is not listed and cannot be read"),
                        ));
                        continue;
                    }
                    Err(FenceError::NotRegular {
                        kind: "a directory",
                        ..
                    }) => continue,
                    Err(e) => {
                        problems.push(Problem::new(
                            show(&full),
                            Reason::UnusablePath,
                            format!("{e}; it is not listed"),
                        ));
                        continue;
                    }
                }
            } else {
                let kind = match fence::resolve(skill, &rel) {
                    Err(FenceError::NotRegular { kind, .. }) => kind,
                    _ => "not a regular file",
                };
                problems.push(Problem::new(
                    show(&full),
                    Reason::UnusablePath,
                    format!("{rel:?} is {kind}, not a regular file, so skill_file cannot serve it; it is not listed"),
                ));
                continue;
            };
            if files.len() == MAX_FILES_PER_SKILL {
                problems.push(Problem::new(
                    show(skill),
                    Reason::FileLimit,
                    format!("more than {MAX_FILES_PER_SKILL} files; the manifest lists the first {MAX_FILES_PER_SKILL} and the rest of the bundle is not walked"),
                ));
                return (Files::new(files), plain);
            }
            if ft.is_file()
                && let Some(k) = wanted.iter().position(|w| *w == rel)
            {
                plain[k] = true;
            }
            files.push((rel, size));
        }
    }
    (Files::new(files), plain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use rstest::rstest;
    use std::collections::BTreeMap;
    use std::ffi::OsString;

    fn scan_of(root: &Path) -> Catalog {
        let mut env = BTreeMap::new();
        env.insert(OsString::from("SKILLS_DIR"), root.as_os_str().to_owned());
        scan(&Config::from_env(
            env,
            Path::new("/"),
            PathBuf::from("/nowhere"),
        ))
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    const OK: &str = "---\nname: {n}\ndescription: d\n---\nbody\n";

    fn ok(n: &str) -> String {
        OK.replace("{n}", n)
    }

    #[rstest]
    #[case::root_is_a_skill(&[("SKILL.md", "---\nname: r\ndescription: d\n---\n"), ("sub/SKILL.md", "S")], &[], &[])]
    #[case::directory_of_skills(&[("a/SKILL.md", "A"), ("b/SKILL.md", "B")], &["a", "b"], &[])]
    #[case::skills_subdirectory(&[("skills/c/SKILL.md", "C"), ("d/SKILL.md", "D")], &["c", "d"], &[])]
    #[case::no_skill_md(&[("a/SKILL.md", "A"), ("empty/x.txt", "x")], &["a"], &[Reason::NoSkillMd])]
    #[case::malformed(&[("bad/SKILL.md", "no frontmatter\n")], &[], &[Reason::MalformedFrontmatter])]
    #[case::name_mismatch(&[("real/SKILL.md", "---\nname: other\ndescription: d\n---\n")], &["real"], &[Reason::NameMismatch])]
    #[case::unusable_name(&[("bad name/SKILL.md", "X")], &[], &[Reason::UnusableName])]
    #[case::unusable_path(&[("a/SKILL.md", "A"), ("a/50%.md", "x")], &["a"], &[Reason::UnusablePath])]
    #[case::declaration(&[("a/SKILL.md", "---\nname: a\ndescription: d\nmcp-host:\n  version: 9\n---\n")], &["a"], &[Reason::Declaration])]
    #[case::declared_script_missing(
        &[("a/SKILL.md", "---\nname: a\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: x.js\n      interpreter: node\n---\n")],
        &["a"],
        &[Reason::DeclaredScriptMissing]
    )]
    #[case::empty_file(&[("a/SKILL.md", "")], &[], &[Reason::MalformedFrontmatter])]
    fn layouts_and_problem_kinds(
        #[case] files: &[(&str, &str)],
        #[case] served: &[&str],
        #[case] reasons: &[Reason],
    ) {
        // The root is named "r": a tempdir's own name starts with "." and
        // is no skill name (DISC-009).
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("r");
        fs::create_dir(&root).unwrap();
        for (rel, text) in files {
            // A one-letter text stands for a well-formed SKILL.md of that skill.
            let text = if text.len() == 1 {
                // The skill's name is the directory holding SKILL.md.
                ok(rel.rsplit('/').nth(1).unwrap_or(""))
            } else {
                text.to_string()
            };
            write(&root, rel, &text);
        }
        let c = scan_of(&root);
        let names: Vec<&str> = c.skills.iter().map(|s| s.name.as_str()).collect();
        if files.iter().any(|(rel, _)| *rel == "SKILL.md") {
            assert_eq!(
                names,
                ["r"],
                "the root is the one skill, named by its directory"
            );
        } else {
            assert_eq!(names, served);
        }
        let got: Vec<Reason> = c.problems.iter().map(|p| p.reason).collect();
        assert_eq!(got, reasons, "{:?}", c.problems);
    }

    /// The SKILL.md read cap, from both sides (FM-004, LOAD-003): the
    /// largest SKILL.md the rules allow — a BOM, CRLF delimiters, a 64 KiB
    /// block and a 1 MiB body — is read whole, and a larger one is read to
    /// the cap and no further (the numbers are spelt out, not taken from
    /// the constant under test).
    #[test]
    fn the_skill_md_cap_reads_the_largest_allowed_whole_and_no_more() {
        let tmp = tempfile::tempdir().unwrap();
        let yaml_len = 64 * 1024;
        let mut yaml = String::from("name: a\ndescription: d\n");
        while yaml.len() < yaml_len - 2 {
            yaml.push_str("#\n");
        }
        yaml.truncate(yaml_len - 1);
        yaml.push('\n');
        let body = "b".repeat(1024 * 1024);
        let largest = format!("\u{feff}---\r\n{yaml}---\r\n{body}");
        let dir = tmp.path().join("largest");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join(SKILL_MD), &largest).unwrap();
        let md = read_skill_md(&dir).unwrap();
        assert!(!md.cut, "the largest allowed SKILL.md was cut");
        assert_eq!(md.text.len(), largest.len());

        let dir = tmp.path().join("over");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join(SKILL_MD), "x".repeat(3 * 1024 * 1024)).unwrap();
        let md = read_skill_md(&dir).unwrap();
        assert!(md.cut);
        assert_eq!(md.text.len(), 64 * 1024 + 16 + 1024 * 1024);
    }

    /// A file symlink leading out of a skill (DISC-011): reported, and the
    /// skill is still served without it. (An unreadable SKILL.md needs an
    /// unprivileged user, which these tests may not be: conformance/DISC-008
    /// runs the server under setpriv for it.)
    #[test]
    fn a_symlink_leading_out_of_a_skill_is_reported_and_the_skill_served() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("r");
        write(&root, "a/SKILL.md", &ok("a"));
        write(&root, "a/inside.txt", "x");
        write(tmp.path(), "secret.txt", "s");
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), root.join("a/leak.txt")).unwrap();
        std::os::unix::fs::symlink("inside.txt", root.join("a/alias.txt")).unwrap();
        let c = scan_of(&root);
        let names: Vec<&str> = c.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a"]);
        let files: Vec<&str> = c.skills[0].files.iter().map(|f| f.path).collect();
        assert!(!files.contains(&"leak.txt"), "{files:?}");
        assert!(files.contains(&"alias.txt"), "{files:?}");
        let got: Vec<(Reason, bool)> = c
            .problems
            .iter()
            .map(|p| (p.reason, p.path.ends_with("a/leak.txt")))
            .collect();
        assert_eq!(got, [(Reason::SymlinkEscape, true)], "{:?}", c.problems);
    }

    /// The walk settles a declared script it met as a plain file; every
    /// other script still goes through the fence, which must give the same
    /// verdict as before the shortcut (DISC-010, DISC-011).
    #[test]
    fn declared_scripts_get_the_fence_verdict_whichever_way_they_are_found() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("r");
        let md = "---\nname: a\ndescription: d\nmcp-host:\n  version: 1\n  run:\n".to_owned()
            + &[
                "plain.js",
                "alias.js",
                "via/x.js",
                "out.js",
                "out-dir/x.js",
                "dir.js",
                "gone.js",
            ]
            .iter()
            .map(|s| format!("    - script: {s}\n      interpreter: node\n"))
            .collect::<String>()
            + "---\n";
        write(&root, "a/SKILL.md", &md);
        write(&root, "a/plain.js", "1");
        write(&root, "a/real/x.js", "1");
        write(tmp.path(), "outside/x.js", "1");
        fs::create_dir_all(root.join("a/dir.js")).unwrap();
        let link = |to: &Path, at: &str| std::os::unix::fs::symlink(to, root.join(at)).unwrap();
        link(Path::new("plain.js"), "a/alias.js");
        link(Path::new("real"), "a/via");
        link(&tmp.path().join("outside/x.js"), "a/out.js");
        link(&tmp.path().join("outside"), "a/out-dir");
        let c = scan_of(&root);
        let missing: Vec<&str> = c.skills[0]
            .missing_scripts
            .iter()
            .map(|(s, _)| s.as_str())
            .collect();
        // plain.js, alias.js and via/x.js run; the rest are reported.
        assert_eq!(missing, ["out.js", "out-dir/x.js", "dir.js", "gone.js"]);
    }

    #[test]
    fn duplicates_across_roots_are_both_refused() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        write(a.path(), "twin/SKILL.md", &ok("twin"));
        write(b.path(), "twin/SKILL.md", &ok("twin"));
        let mut env = BTreeMap::new();
        env.insert(
            OsString::from("SKILLS_DIR"),
            OsString::from(format!("{}:{}", a.path().display(), b.path().display())),
        );
        let c = scan(&Config::from_env(
            env,
            Path::new("/"),
            PathBuf::from("/nowhere"),
        ));
        assert!(c.skills.is_empty());
        assert_eq!(
            c.problems
                .iter()
                .filter(|p| p.reason == Reason::DuplicateName)
                .count(),
            2
        );
    }

    #[test]
    fn only_the_default_root_hints_at_skills_dir() {
        let missing = |from| {
            let config = Config {
                roots: vec![PathBuf::from("/definitely/missing")],
                roots_from: from,
                ..Config::from_env(BTreeMap::new(), Path::new("/"), PathBuf::from("/x"))
            };
            scan(&config).problems[0].detail.clone()
        };
        assert!(missing(RootsFrom::Default).contains("set SKILLS_DIR"));
        assert!(!missing(RootsFrom::SkillsDir).contains("set SKILLS_DIR"));
    }

    #[test]
    fn a_skills_directory_leading_out_of_the_root_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (root, outside) = (tmp.path().join("r"), tmp.path().join("outside"));
        write(&outside, "stolen/SKILL.md", &ok("stolen"));
        write(&root, "mine/SKILL.md", &ok("mine"));
        std::os::unix::fs::symlink(&outside, root.join("skills")).unwrap();
        let c = scan_of(&root);
        assert_eq!(
            c.skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["mine"]
        );
        assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
        assert_eq!(c.problems[0].reason, Reason::SymlinkEscape);
        assert!(c.problems[0].path.ends_with("/r/skills"));
    }

    #[test]
    fn a_symlink_named_like_its_target_is_no_mismatch() {
        // skills/foo -> ../.shared/foo: reached only through the link (the
        // hidden directory is not a candidate), under the same name.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("r");
        write(&root, ".shared/foo/SKILL.md", &ok("foo"));
        fs::create_dir_all(root.join("skills")).unwrap();
        std::os::unix::fs::symlink("../.shared/foo", root.join("skills/foo")).unwrap();
        let c = scan_of(&root);
        assert_eq!(
            c.skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["foo"]
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
    }

    #[test]
    fn a_bundle_over_the_directory_cap_is_cut_and_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("r");
        write(&root, "big/SKILL.md", &ok("big"));
        for i in 0..MAX_DIRS_PER_SKILL {
            fs::create_dir_all(root.join(format!("big/d{i:05}"))).unwrap();
        }
        let c = scan_of(&root);
        assert!(
            c.problems.is_empty(),
            "exactly the cap is fine: {:?}",
            c.problems
        );
        fs::create_dir_all(root.join("big/zz")).unwrap();
        fs::write(root.join("big/zz/late.md"), "x").unwrap();
        let c = scan_of(&root);
        assert_eq!(c.problems.len(), 1);
        assert_eq!(c.problems[0].reason, Reason::FileLimit);
        assert!(c.problems[0].detail.contains("directories"));
        assert!(!c.skills[0].files.iter().any(|f| f.path == "zz/late.md"));
    }

    #[test]
    fn skill_names_are_kept_to_safe_characters() {
        for good in ["a", "skill-mcp-demo", "A.b_c-1", &"x".repeat(64)] {
            assert!(is_skill_name(good), "{good}");
        }
        for bad in [
            "",
            "-a",
            ".a",
            "_a",
            "a b",
            "a%",
            "é",
            &"x".repeat(65),
            "a/b",
        ] {
            assert!(!is_skill_name(bad), "{bad}");
        }
    }
}
