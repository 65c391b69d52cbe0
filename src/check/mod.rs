//! `skill-mcp check`: what the server would see in a skills tree, said the
//! way a compiler says it (spec CHECK-001..CHECK-020).
//!
//! Nothing here discovers anything. The report is built from
//! [`Snapshot::boot`] — the very pass the server makes at startup — so the
//! linter and the server cannot disagree about which skills are served,
//! which scripts may run, or what is wrong. What this module adds is
//! rendering (one line per skill, each problem with its position, the
//! offending line and a caret, via `annotate-snippets`), the stable JSON
//! report, and the Agent Skills spec warnings (agentskills.io) that the
//! server deliberately does not enforce: they are advice to an author,
//! never a reason to refuse a skill, so they never enter `problems`. The
//! server's one problem that refuses nothing, an unknown frontmatter key,
//! is shown as a warning too (CHECK-018).

mod json;
#[cfg(test)]
mod tests;
mod text;
mod warnings;

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalog::SKILL_MD;
use crate::config::{Config, RootsFrom};
use crate::fence;
use crate::frontmatter::{Frontmatter, Seg};
use crate::limits::MAX_FRONTMATTER_BYTES;
use crate::problem::{Problem, Reason};
use crate::read;
use crate::shapes::SkillList;
use crate::snapshot::Snapshot;

#[cfg(test)]
use text::clean;
pub use text::use_color;
use warnings::skill_warnings;
#[cfg(test)]
use warnings::{name_violation, spec_warnings};

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// For people: one line per skill, then every finding with its location.
    #[default]
    Text,
    /// For pipelines: the same facts as one JSON document.
    // Its shape is spec CHECK-007.
    Json,
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    /// Something the server refused or ignored: always a failure.
    Error,
    /// Advice the server does not enforce, or an unknown frontmatter key it
    /// ignores: a failure only with `--strict`.
    Warning,
}

/// The check's own rules: the Agent Skills spec warnings and the empty
/// tree. Their codes are stable; the set only grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum Rule {
    /// `name` missing, or not 1–64 of `a-z 0-9` and single inner hyphens (CHECK-008).
    #[serde(rename = "agentskills-name")]
    Name,
    /// `description` missing, empty, or over 1024 characters (CHECK-009).
    #[serde(rename = "agentskills-description")]
    Description,
    /// `compatibility` not a string of 1–500 characters (CHECK-010).
    #[serde(rename = "agentskills-compatibility")]
    Compatibility,
    /// `metadata` not a map from strings to strings (CHECK-011).
    #[serde(rename = "agentskills-metadata")]
    Metadata,
    /// The SKILL.md body is over 500 lines (CHECK-012).
    #[serde(rename = "agentskills-body")]
    Body,
    /// No skill at all under the roots: an error (CHECK-015).
    #[serde(rename = "no-skills")]
    NoSkills,
}

impl Rule {
    /// The stable code, as JSON spells it.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Rule::Name => "agentskills-name",
            Rule::Description => "agentskills-description",
            Rule::Compatibility => "agentskills-compatibility",
            Rule::Metadata => "agentskills-metadata",
            Rule::Body => "agentskills-body",
            Rule::NoSkills => "no-skills",
        }
    }
}

/// What a finding is about: one of the server's own reason codes, or one
/// of the check's rules. Serialized as the bare code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum Kind {
    Problem(Reason),
    Rule(Rule),
}

impl Kind {
    /// The code printed in `error[code]` and written as `kind` in JSON.
    pub(crate) fn code(self) -> Cow<'static, str> {
        match self {
            Kind::Rule(r) => Cow::Borrowed(r.code()),
            // The reason's serde spelling is its stable wire code; going
            // through serde keeps this from drifting from `problems`.
            Kind::Problem(r) => match serde_json::to_value(r) {
                Ok(serde_json::Value::String(s)) => Cow::Owned(s),
                _ => Cow::Borrowed("problem"),
            },
        }
    }
}

/// One line of the report's diagnostics: a server problem or a warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Finding {
    pub(crate) severity: Severity,
    pub(crate) kind: Kind,
    /// The file or directory concerned, as the server reports it.
    pub(crate) path: String,
    /// Line in SKILL.md (1-based), when the finding has a position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<usize>,
    /// Column (1-based, in characters), with `line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) column: Option<usize>,
    /// What is wrong, for a person. For a server problem this is its
    /// `detail`, verbatim.
    pub(crate) message: String,
    /// The text of line `line`, for the snippet; never serialized.
    #[serde(skip)]
    pub(crate) source: Option<String>,
}

impl Finding {
    fn warning(rule: Rule, path: &str, message: String) -> Finding {
        Finding {
            severity: Severity::Warning,
            kind: Kind::Rule(rule),
            path: path.to_owned(),
            line: None,
            column: None,
            message,
            source: None,
        }
    }

    /// Places a warning at the frontmatter node `node`, when it has a
    /// position, with that line of `text` as its snippet.
    fn at_node(mut self, fm: &Frontmatter, node: &[Seg], text: &str) -> Finding {
        if let Some((line, column)) = fm.positions.get(node) {
            self.line = Some(line);
            self.column = Some(column);
            self.source = nth_line(text, line).map(str::to_owned);
        }
        self
    }

    /// A server problem, with its offending line read back from SKILL.md
    /// when it has a position. Every problem is an error but the two that
    /// refuse nothing: an unknown frontmatter key, which the server
    /// ignores, serving the skill (a key some other host reads is no
    /// reason to fail a tree, CHECK-018), and a timeout over the ceiling,
    /// served at the ceiling as the design of record says it is
    /// ("clamped to 300", CHECK-004).
    fn from_problem(p: &Problem) -> Finding {
        let source = match (p.line, p.column) {
            (Some(line), Some(_)) => source_line(Path::new(&p.path), line),
            _ => None,
        };
        Finding {
            severity: match p.reason {
                Reason::UnknownKey | Reason::TimeoutClamped => Severity::Warning,
                _ => Severity::Error,
            },
            kind: Kind::Problem(p.reason),
            path: p.path.clone(),
            line: p.line,
            column: p.column,
            message: p.detail.clone(),
            source,
        }
    }
}

/// Line `line` (1-based) of `text`, without its terminator.
fn nth_line(text: &str, line: usize) -> Option<&str> {
    let l = text.split('\n').nth(line.checked_sub(1)?)?;
    Some(l.strip_suffix('\r').unwrap_or(l))
}

/// The line a server problem points at, read back from the SKILL.md at
/// `path` (spec CHECK-003). Server positions are always inside the
/// frontmatter, so the read is bounded by the frontmatter cap and goes
/// through the fence like every other read of a skill (`O_NOFOLLOW`,
/// `O_NONBLOCK`: a FIFO swapped in cannot hang the check). Anything
/// unexpected costs only the snippet, never the finding.
fn source_line(path: &Path, line: usize) -> Option<String> {
    if path.file_name() != Some(OsStr::new(SKILL_MD)) {
        return None;
    }
    let dir = path.parent()?;
    let opened = fence::open(dir, SKILL_MD).ok()?;
    // The delimiter lines and a byte-order mark around the largest block.
    let cap = MAX_FRONTMATTER_BYTES + 16;
    let capped = read::read_capped(&opened.file, &opened.meta, cap).ok()?;
    let text = read::utf8_prefix(&capped.bytes, capped.truncated).ok()?;
    let l = nth_line(text, line)?;
    Some(l.strip_prefix('\u{feff}').unwrap_or(l).to_owned())
}

/// Everything the check found: what the server would list, and every
/// finding in order — the server's problems (discovery order, then the
/// grant's), then the warnings, skill by skill.
#[derive(Debug)]
pub(crate) struct Report {
    /// `skill_list`, exactly as the server would answer it.
    pub(crate) list: SkillList,
    pub(crate) findings: Vec<Finding>,
    /// `--strict`: warnings fail the check too (spec CHECK-013).
    pub(crate) strict: bool,
    /// The served skills that have an error, by name, in name order: a
    /// skill can be served and still fail the check (CHECK-004).
    pub(crate) failing: Vec<String>,
    /// The skills the server refused, each with the finding that says
    /// why, in report order.
    pub(crate) refused: Vec<Refused>,
}

/// A skill the server found and refused to serve (its SKILL.md did not
/// read or parse, its folder's name cannot be a skill's, or two folders
/// share its name), as the report's summary names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Refused {
    /// The name of its folder.
    pub(crate) name: String,
    /// The path of the finding that says why.
    pub(crate) path: String,
    /// That finding's code.
    pub(crate) kind: Kind,
}

/// The reasons that keep a folder holding a SKILL.md from being served.
fn refuses_a_skill(p: &Finding) -> bool {
    let Kind::Problem(reason) = p.kind else {
        return false;
    };
    let at_skill_md = Path::new(&p.path).file_name() == Some(OsStr::new(SKILL_MD));
    match reason {
        Reason::MalformedFrontmatter | Reason::UnreadableSkillMd => true,
        Reason::SymlinkEscape => at_skill_md,
        Reason::DuplicateName | Reason::UnusableName => true,
        _ => false,
    }
}

impl Report {
    /// Builds the report from the server's own boot pass.
    pub(crate) fn new(snapshot: &Snapshot, strict: bool) -> Report {
        let mut list = snapshot.list();
        // The report lists every root: its reader asked for all of them,
        // and is not a model's context (LIST-005 bounds `skill_list`'s).
        list.roots = Some(snapshot.catalog.roots.clone());
        list.roots_total = None;
        let problems = list.problems.as_deref().unwrap_or_default();
        let mut findings: Vec<Finding> = problems.iter().map(Finding::from_problem).collect();
        if let Some(e) = &list.grant_error {
            findings.push(Finding {
                severity: Severity::Error,
                kind: Kind::Problem(Reason::Grant),
                path: "MCP_SKILL_RUN".into(),
                line: None,
                column: None,
                message: e.clone(),
                source: None,
            });
        }
        for skill in &snapshot.catalog.skills {
            findings.extend(skill_warnings(skill, problems));
        }
        // Only when nothing else explains it: a tree whose skills were all
        // refused (two roots sharing every name, say) is said by those
        // refusals, and "no skill was found" would contradict them.
        if list.skills.is_empty() && problems.is_empty() {
            // An error, not advice (issue 41 §4): a check pointed at the
            // wrong folder must not pass.
            findings.push(Finding {
                severity: Severity::Error,
                ..Finding::warning(
                    Rule::NoSkills,
                    &snapshot.catalog.roots.join(":"),
                    "no skill was found under these roots: a skill is a directory holding SKILL.md, \
                     looked for at <root>/SKILL.md, <root>/<name>/SKILL.md and \
                     <root>/skills/<name>/SKILL.md; point check at the folder that holds your skills"
                        .into(),
                )
            });
        }
        // Whose each error is: a served skill's when it is about its
        // folder or anything in it.
        let dirs: Vec<(&str, &Path)> = snapshot
            .catalog
            .skills
            .iter()
            .map(|s| (s.name.as_str(), s.dir.as_path()))
            .collect();
        let owner = |f: &Finding| {
            let at = Path::new(&f.path);
            dirs.iter()
                .find(|(_, d)| at.starts_with(d))
                .map(|(n, _)| *n)
        };
        let mut failing: Vec<String> = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .filter_map(|f| owner(f).map(str::to_owned))
            .collect();
        failing.sort_unstable();
        failing.dedup();
        let mut refused: Vec<Refused> = Vec::new();
        for f in findings
            .iter()
            .filter(|f| refuses_a_skill(f) && owner(f).is_none())
        {
            let at = Path::new(&f.path);
            let dir = if at.file_name() == Some(OsStr::new(SKILL_MD)) {
                at.parent().unwrap_or(at)
            } else {
                at
            };
            let name = dir
                .file_name()
                .map_or_else(|| f.path.clone(), |n| n.to_string_lossy().into_owned());
            if !refused.iter().any(|r| r.path == f.path) {
                refused.push(Refused {
                    name,
                    path: f.path.clone(),
                    kind: f.kind,
                });
            }
        }
        Report {
            list,
            findings,
            strict,
            failing,
            refused,
        }
    }

    /// The errors by code, most first (then by code): what failed the
    /// check, for the summary.
    pub(crate) fn error_kinds(&self) -> Vec<(Cow<'static, str>, usize)> {
        let mut kinds: Vec<(Cow<'static, str>, usize)> = Vec::new();
        for f in self
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
        {
            let code = f.kind.code();
            match kinds.iter_mut().find(|(c, _)| *c == code) {
                Some((_, n)) => *n += 1,
                None => kinds.push((code, 1)),
            }
        }
        kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        kinds
    }

    pub(crate) fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    pub(crate) fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, s: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == s).count()
    }

    /// True when no error is reported — nothing refused, nothing in a
    /// served skill read and ignored — and, with `--strict`, nothing
    /// warned: the process exits 0 (spec CHECK-004).
    pub(crate) fn passed(&self) -> bool {
        self.errors() == 0 && !(self.strict && self.warnings() > 0)
    }
}

/// A `DIR` argument that cannot be used, reported as a usage error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UsageError {
    /// `skill-mcp check ""`: most often an unset shell variable, which
    /// would otherwise silently check the default roots.
    EmptyDir,
    /// A relative `DIR` while the working directory cannot be known.
    NoWorkingDir(PathBuf),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::EmptyDir => f.write_str("an empty DIR argument (an unset variable?)"),
            UsageError::NoWorkingDir(d) => write!(
                f,
                "{} is relative and the working directory cannot be read",
                d.display()
            ),
        }
    }
}

impl std::error::Error for UsageError {}

/// The configuration the check uses (spec CHECK-001): the server's own,
/// with `dirs`, when given, as its roots — read exactly as `SKILLS_DIR`
/// would be (each joined to the working directory, `rootsFrom` SKILLS_DIR).
/// The grant, hosted markers and PATH stay the environment's, so which
/// scripts may run is what a server started here would say.
pub fn with_dirs(
    mut config: Config,
    dirs: &[PathBuf],
    cwd: Option<&Path>,
) -> Result<Config, UsageError> {
    if dirs.is_empty() {
        return Ok(config);
    }
    let mut roots = Vec::with_capacity(dirs.len());
    let mut tilde = std::collections::BTreeMap::new();
    for d in dirs {
        if d.as_os_str().is_empty() {
            return Err(UsageError::EmptyDir);
        }
        let root = match cwd {
            Some(cwd) => cwd.join(d),
            None if d.is_absolute() => d.clone(),
            None => return Err(UsageError::NoWorkingDir(d.clone())),
        };
        // A quoted `~` reaches check as written, as it reaches the server
        // from a client's configuration: said the same way (CONF-009).
        if d.as_os_str().as_encoded_bytes().first() == Some(&b'~') {
            tilde.insert(root.clone(), d.clone());
        }
        roots.push(root);
    }
    config.roots = roots;
    config.roots_from = RootsFrom::SkillsDir;
    // The arguments are the roots: what the environment's roots were
    // written as, or that SKILLS_DIR was blank, says nothing of them.
    config.tilde_roots = tilde;
    config.relative_roots.clear();
    config.blank_skills_dir = false;
    Ok(config)
}

/// What can stop a check from reporting.
#[derive(Debug)]
pub enum CheckError {
    /// The report could not be serialized.
    Json(serde_json::Error),
    /// The report could not be written (a closed pipe, a full disk).
    Write(io::Error),
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Json(e) => write!(f, "could not serialize the report: {e}"),
            CheckError::Write(e) => write!(f, "could not write the report: {e}"),
        }
    }
}

impl std::error::Error for CheckError {}

/// How to print.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub format: Format,
    pub strict: bool,
    /// Colour the text report (see [`use_color`]).
    pub color: bool,
    /// Show paths under these directories relative to the first that
    /// holds them.
    pub bases: Vec<PathBuf>,
}

/// Boots the server's catalog from `config`, writes the report to `out`,
/// and says whether the check passed.
pub fn run(config: Config, options: &Options, out: &mut dyn Write) -> Result<bool, CheckError> {
    let snapshot = Snapshot::boot(config);
    let report = Report::new(&snapshot, options.strict);
    let text = match options.format {
        Format::Json => report.to_json().map_err(CheckError::Json)?,
        Format::Text => report.to_text(&options.bases, options.color),
    };
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CheckError::Write)?;
    Ok(report.passed())
}
