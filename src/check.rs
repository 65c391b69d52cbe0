//! `skill-mcp check`: what the server would see in a skills tree, said the
//! way a compiler says it (spec CHECK-001..CHECK-017).
//!
//! Nothing here discovers anything. The report is built from
//! [`Served::boot`] — the very pass the server makes at startup — so the
//! linter and the server cannot disagree about which skills are served,
//! which scripts may run, or what is wrong. What this module adds is
//! rendering (one line per skill, each problem with its position, the
//! offending line and a caret, via `annotate-snippets`), the stable JSON
//! report, and the Agent Skills spec warnings (agentskills.io) that the
//! server deliberately does not enforce: they are advice to an author,
//! never a reason to refuse a skill, so they never enter `problems`.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use annotate_snippets::renderer::{AnsiColor, Effects, Style};
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use serde::Serialize;
use serde_yaml_ng::Value;

use crate::catalog::{self, SKILL_MD, Skill};
use crate::config::{Config, RootsFrom};
use crate::declaration;
use crate::fence;
use crate::frontmatter::{self, Frontmatter, Seg};
use crate::grant::GrantFrom;
use crate::limits::MAX_FRONTMATTER_BYTES;
use crate::problem::{Problem, Reason};
use crate::read;
use crate::server::Served;
use crate::server::shapes::SkillList;

/// The version of the JSON report (spec CHECK-007). It changes only when a
/// field changes meaning or goes away; new fields may appear within it.
pub const JSON_FORMAT: u32 = 1;

/// Agent Skills: `name` is at most 64 characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Agent Skills: `description` is 1–1024 characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Agent Skills: `compatibility` is 1–500 characters when present.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// Agent Skills: "Keep your main SKILL.md under 500 lines".
pub const MAX_BODY_LINES: usize = 500;

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
pub enum Severity {
    /// Something the server refused or ignored: always a failure.
    Error,
    /// Advice the server does not enforce: a failure only with `--strict`.
    Warning,
}

/// The check's own rules: the Agent Skills spec warnings and the empty
/// tree. Their codes are stable; the set only grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Rule {
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
    /// No skill at all under the roots (CHECK-015).
    #[serde(rename = "no-skills")]
    NoSkills,
}

impl Rule {
    /// The stable code, as JSON spells it.
    pub fn code(self) -> &'static str {
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
pub enum Kind {
    Problem(Reason),
    Rule(Rule),
}

impl Kind {
    /// The code printed in `error[code]` and written as `kind` in JSON.
    pub fn code(self) -> Cow<'static, str> {
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
pub struct Finding {
    pub severity: Severity,
    pub kind: Kind,
    /// The file or directory concerned, as the server reports it.
    pub path: String,
    /// Line in SKILL.md (1-based), when the finding has a position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Column (1-based, in characters), with `line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// What is wrong, for a person. For a server problem this is its
    /// `detail`, verbatim.
    pub message: String,
    /// The text of line `line`, for the snippet; never serialized.
    #[serde(skip)]
    pub source: Option<String>,
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
    /// when it has a position.
    fn from_problem(p: &Problem) -> Finding {
        let source = match (p.line, p.column) {
            (Some(line), Some(_)) => source_line(Path::new(&p.path), line),
            _ => None,
        };
        Finding {
            severity: Severity::Error,
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
    let capped = read::read_capped(&opened.file, opened.meta.len(), cap).ok()?;
    let text = read::utf8_prefix(&capped.bytes, capped.truncated).ok()?;
    let l = nth_line(text, line)?;
    Some(l.strip_prefix('\u{feff}').unwrap_or(l).to_owned())
}

/// Why a `name` breaks the Agent Skills rule, or `None` when it keeps it
/// (spec CHECK-008): 1–64 characters of lowercase letters and digits, with
/// single hyphens that neither start nor end it.
pub fn name_violation(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if chars == 0 {
        return Some("it is empty".into());
    }
    if chars > MAX_NAME_CHARS {
        return Some(format!(
            "it is {chars} characters; at most {MAX_NAME_CHARS}"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Some(format!(
            "{c:?} is not a lowercase letter, a digit or a hyphen"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Some("it starts or ends with a hyphen".into());
    }
    if name.contains("--") {
        return Some("it has two hyphens in a row".into());
    }
    None
}

/// A YAML value's kind, for messages.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// The Agent Skills spec warnings for one served skill's SKILL.md `text`
/// (spec CHECK-008..CHECK-012). `dir_name` is the name it is served under;
/// `path` is SKILL.md's path as findings report it.
///
/// Only what the server leaves alone is said here, so nothing is said
/// twice: a `name` that differs from the directory and a field that is not
/// a string are already server problems. `door_refused` is true when the
/// server left this skill out of the MCP Skills extension (a
/// `skills-extension` problem): that door refuses a missing or
/// rule-breaking `name` and a missing or empty `description` itself, so
/// those warnings are left to its error (spec CHECK-014).
pub fn spec_warnings(text: &str, dir_name: &str, path: &str, door_refused: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    // The server split and parsed this file at boot; if it no longer does,
    // it changed since, and the fresh problem says so.
    let split = match frontmatter::split(text) {
        Ok(s) => s,
        Err(e) => return vec![changed(path, Reason::MalformedFrontmatter, &e.message)],
    };
    let fm =
        match frontmatter::parse_sparing_block(split.yaml, split.yaml_line, declaration::BLOCK_KEY)
        {
            Ok((fm, _)) => fm,
            Err(e) => return vec![changed(path, Reason::MalformedFrontmatter, &e.message)],
        };
    let key = |k: &str| [Seg::Key(k.to_owned())];

    match fm.map.get("name") {
        _ if door_refused => {}
        None | Some(Value::Null) => {
            let mut m = format!(
                "no \"name\": the Agent Skills spec requires one, equal to the directory name (name: {dir_name})"
            );
            if let Some(why) = name_violation(dir_name) {
                m.push_str(&format!(
                    ", and the directory name {dir_name:?} itself breaks the name rule: {why}"
                ));
            }
            out.push(Finding::warning(Rule::Name, path, m));
        }
        Some(Value::String(name)) if name == dir_name => {
            if let Some(why) = name_violation(name) {
                out.push(
                    Finding::warning(
                        Rule::Name,
                        path,
                        format!(
                            "the Agent Skills spec wants \"name\" to be 1-{MAX_NAME_CHARS} lowercase letters, digits and single hyphens, not starting or ending with one; {name:?} breaks it: {why}"
                        ),
                    )
                    .at_node(&fm, &key("name"), text),
                );
            }
        }
        // A name unlike the directory is the server's name-mismatch; a
        // name that is not a string is the server's declaration problem.
        Some(_) => {}
    }

    match fm.map.get("description") {
        None | Some(Value::Null) if door_refused => {}
        Some(Value::String(d)) if door_refused && d.trim().is_empty() => {}
        None | Some(Value::Null) => out.push(Finding::warning(
            Rule::Description,
            path,
            "no \"description\": the Agent Skills spec requires one (1-1024 characters saying what the skill does and when to use it)".into(),
        )),
        Some(Value::String(d)) if d.trim().is_empty() => out.push(
            Finding::warning(
                Rule::Description,
                path,
                "\"description\" is empty: the Agent Skills spec wants 1-1024 characters saying what the skill does and when to use it".into(),
            )
            .at_node(&fm, &key("description"), text),
        ),
        Some(Value::String(d)) if d.chars().count() > MAX_DESCRIPTION_CHARS => out.push(
            Finding::warning(
                Rule::Description,
                path,
                format!(
                    "\"description\" is {} characters; the Agent Skills spec allows at most {MAX_DESCRIPTION_CHARS}",
                    d.chars().count()
                ),
            )
            .at_node(&fm, &key("description"), text),
        ),
        Some(_) => {}
    }

    if let Some(c) = fm.map.get("compatibility") {
        let why = match c {
            Value::String(s) if s.trim().is_empty() => Some("is empty".to_owned()),
            Value::String(s) if s.chars().count() > MAX_COMPATIBILITY_CHARS => {
                Some(format!("is {} characters", s.chars().count()))
            }
            Value::String(_) => None,
            other => Some(format!("is {}, not a string", kind_of(other))),
        };
        if let Some(why) = why {
            out.push(
                Finding::warning(
                    Rule::Compatibility,
                    path,
                    format!(
                        "\"compatibility\" {why}; the Agent Skills spec wants 1-{MAX_COMPATIBILITY_CHARS} characters when it is present"
                    ),
                )
                .at_node(&fm, &key("compatibility"), text),
            );
        }
    }

    match fm.map.get("metadata") {
        None => {}
        Some(Value::Mapping(map)) => {
            for (k, v) in map {
                let Value::String(k) = k else {
                    out.push(
                        Finding::warning(
                            Rule::Metadata,
                            path,
                            format!(
                                "a \"metadata\" key is {}; the Agent Skills spec wants a map from strings to strings",
                                kind_of(k)
                            ),
                        )
                        .at_node(&fm, &key("metadata"), text),
                    );
                    continue;
                };
                if !v.is_string() {
                    let node = [Seg::Key("metadata".into()), Seg::Key(k.clone())];
                    let hint = match v {
                        Value::Sequence(_) | Value::Mapping(_) => "write it as one string",
                        _ => "quote it",
                    };
                    out.push(
                        Finding::warning(
                            Rule::Metadata,
                            path,
                            format!(
                                "\"metadata.{k}\" is {}; the Agent Skills spec wants every metadata value to be a string ({hint})",
                                kind_of(v)
                            ),
                        )
                        .at_node(&fm, &node, text),
                    );
                }
            }
        }
        Some(other) => out.push(
            Finding::warning(
                Rule::Metadata,
                path,
                format!(
                    "\"metadata\" is {}; the Agent Skills spec wants a map from strings to strings",
                    kind_of(other)
                ),
            )
            .at_node(&fm, &key("metadata"), text),
        ),
    }

    let body = &text[split.body_offset..];
    let lines = body.lines().count();
    if lines > MAX_BODY_LINES {
        // Point at the first line past the limit.
        let body_line = text[..split.body_offset].matches('\n').count() + 1;
        let line = body_line + MAX_BODY_LINES;
        let mut f = Finding::warning(
            Rule::Body,
            path,
            format!(
                "the SKILL.md body is {lines} lines; the Agent Skills spec asks for under {MAX_BODY_LINES} — move detail into files the body points to, which are read only when needed"
            ),
        );
        f.line = Some(line);
        f.column = Some(1);
        f.source = nth_line(text, line).map(str::to_owned);
        out.push(f);
    }
    out
}

/// A SKILL.md that no longer reads as it did at boot.
fn changed(path: &str, reason: Reason, why: &str) -> Finding {
    Finding {
        severity: Severity::Error,
        kind: Kind::Problem(reason),
        path: path.to_owned(),
        line: None,
        column: None,
        message: format!("SKILL.md changed while it was being checked: {why}; check again"),
        source: None,
    }
}

/// The warnings for one served skill, reading its SKILL.md the way the
/// server does (through the fence, capped).
fn skill_warnings(skill: &Skill, problems: &[Problem]) -> Vec<Finding> {
    let path = skill.dir.join(SKILL_MD).to_string_lossy().into_owned();
    let door_refused = problems
        .iter()
        .any(|p| p.reason == Reason::SkillsExtension && p.path == path);
    match catalog::read_skill_md(&skill.dir) {
        Ok(md) => spec_warnings(&md.text, &skill.name, &path, door_refused),
        Err((reason, detail)) => vec![changed(&path, reason, &detail)],
    }
}

/// Everything the check found: what the server would list, and every
/// finding in order — the server's problems (discovery order, then the
/// grant's), then the warnings, skill by skill.
#[derive(Debug)]
pub struct Report {
    /// `skill_list`, exactly as the server would answer it.
    pub list: SkillList,
    pub findings: Vec<Finding>,
    /// `--strict`: warnings fail the check too (spec CHECK-013).
    pub strict: bool,
}

/// The JSON report's counts.
#[derive(Debug, Serialize)]
pub struct Counts {
    pub skills: usize,
    pub errors: usize,
    pub warnings: usize,
}

/// The JSON report (spec CHECK-007).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonReport<'a> {
    format: u32,
    passed: bool,
    strict: bool,
    roots: &'a [String],
    roots_from: RootsFrom,
    grant_from: GrantFrom,
    #[serde(skip_serializing_if = "Option::is_none")]
    grant_note: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grant_error: Option<&'a str>,
    skills: &'a [crate::server::shapes::SkillSummary],
    findings: &'a [Finding],
    counts: Counts,
}

impl Report {
    /// Builds the report from the server's own boot pass.
    pub fn new(served: &Served, strict: bool) -> Report {
        let list = served.list();
        let mut findings: Vec<Finding> = list.problems.iter().map(Finding::from_problem).collect();
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
        for skill in &served.catalog.skills {
            findings.extend(skill_warnings(skill, &list.problems));
        }
        if list.skills.is_empty() {
            findings.push(Finding::warning(
                Rule::NoSkills,
                &list.roots.join(":"),
                "no skill was found under these roots: a skill is a directory holding SKILL.md, \
                 at <root>/SKILL.md, <root>/<name>/SKILL.md or <root>/skills/<name>/SKILL.md"
                    .into(),
            ));
        }
        Report {
            list,
            findings,
            strict,
        }
    }

    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, s: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == s).count()
    }

    /// True when nothing is refused (and, with `--strict`, nothing warned):
    /// the process exits 0 (spec CHECK-004).
    pub fn passed(&self) -> bool {
        self.errors() == 0 && !(self.strict && self.warnings() > 0)
    }

    /// The JSON report, pretty-printed, with a final newline.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        let l = &self.list;
        let report = JsonReport {
            format: JSON_FORMAT,
            passed: self.passed(),
            strict: self.strict,
            roots: &l.roots,
            roots_from: l.roots_from,
            grant_from: l.grant_from,
            grant_note: l.grant_note.as_deref(),
            grant_error: l.grant_error.as_deref(),
            skills: &l.skills,
            findings: &self.findings,
            counts: Counts {
                skills: l.skills.len(),
                errors: self.errors(),
                warnings: self.warnings(),
            },
        };
        let mut s = serde_json::to_string_pretty(&report)?;
        s.push('\n');
        Ok(s)
    }

    /// The report for people (spec CHECK-002, CHECK-003). A path under one
    /// of `bases` (the working directory) is shown relative to it; `color`
    /// styles the report for a terminal.
    pub fn to_text(&self, bases: &[PathBuf], color: bool) -> String {
        let shown = |p: &str| clean(&relative(p, bases));
        let paint = |style: Style, s: &str| {
            if color {
                format!("{}{s}{}", style.render(), style.render_reset())
            } else {
                s.to_owned()
            }
        };
        let bold = Style::new().effects(Effects::BOLD);
        let mut out = String::new();
        let l = &self.list;
        let roots: Vec<String> = l.roots.iter().map(|r| shown(r)).collect();
        out.push_str(&format!(
            "{} ({}): {}\n",
            paint(bold, "roots"),
            roots_from(l.roots_from),
            roots.join(", ")
        ));
        out.push_str(&format!(
            "{}: {}\n",
            paint(bold, "grant"),
            grant_line(l.grant_from)
        ));
        for s in &l.skills {
            let mut parts = Vec::new();
            if !s.scripts.is_empty() {
                let names: Vec<String> = s.scripts.iter().map(|r| clean(&r.script)).collect();
                parts.push(format!("runnable: {}", names.join(", ")));
            }
            if !s.unavailable_scripts.is_empty() {
                let names: Vec<String> = s
                    .unavailable_scripts
                    .iter()
                    .map(|r| format!("{} ({})", clean(&r.script), clean(&r.reason)))
                    .collect();
                parts.push(format!("unavailable: {}", names.join(", ")));
            }
            if !s.ungranted_scripts.is_empty() {
                // The reason is always grant::UNGRANTED; the grant line says it.
                let names: Vec<String> = s
                    .ungranted_scripts
                    .iter()
                    .map(|r| clean(&r.script))
                    .collect();
                parts.push(format!("ungranted: {}", names.join(", ")));
            }
            if parts.is_empty() {
                parts.push("no scripts declared".into());
            }
            out.push_str(&format!(
                "{} {}: {}, {}; {}\n",
                paint(
                    Style::new().fg_color(Some(AnsiColor::Green.into())),
                    "served"
                ),
                paint(bold, &clean(&s.name)),
                plural(s.files, "file", "files"),
                size(s.bytes),
                parts.join("; ")
            ));
        }
        let renderer = if color {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        for f in &self.findings {
            out.push('\n');
            out.push_str(&render_finding(f, &shown(&f.path), &renderer, color));
        }
        let verdict = if self.passed() {
            paint(
                Style::new()
                    .fg_color(Some(AnsiColor::Green.into()))
                    .effects(Effects::BOLD),
                "check passed",
            )
        } else {
            paint(
                Style::new()
                    .fg_color(Some(AnsiColor::BrightRed.into()))
                    .effects(Effects::BOLD),
                "check failed",
            )
        };
        let strict_note = if self.strict && self.errors() == 0 && self.warnings() > 0 {
            " (--strict: warnings fail the check)"
        } else {
            ""
        };
        out.push_str(&format!(
            "\n{verdict}: {} served; {}, {}{strict_note}\n",
            plural(l.skills.len(), "skill", "skills"),
            plural(self.errors(), "error", "errors"),
            plural(self.warnings(), "warning", "warnings"),
        ));
        out
    }
}

/// One finding: `path:line:col: error[kind]: message`, then, when the
/// finding has a position and its line could be read, the line and a caret.
/// Both halves are rendered by `annotate-snippets` (its short form for the
/// heading, its snippet form for the caret); only the location prefix is
/// composed here, because the short form prints a location only beside a
/// snippet, and a finding without a line still has a path.
fn render_finding(f: &Finding, shown_path: &str, renderer: &Renderer, color: bool) -> String {
    let level = match f.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let code = f.kind.code();
    let message = clean(strip_position(f));
    let heading = renderer
        .clone()
        .short_message(true)
        .render(&[Group::with_title(
            level.clone().primary_title(message).id(code),
        )]);
    let location = match (f.line, f.column) {
        (Some(l), Some(c)) => format!("{shown_path}:{l}:{c}:"),
        (Some(l), None) => format!("{shown_path}:{l}:"),
        _ => format!("{shown_path}:"),
    };
    let location = if color {
        let bold = Style::new().effects(Effects::BOLD);
        format!("{}{location}{}", bold.render(), bold.render_reset())
    } else {
        location
    };
    let mut out = format!("{location} {heading}\n");
    if let (Some(line), Some(column), Some(src)) = (f.line, f.column, &f.source) {
        let src = neutralize_c1(src);
        let start = src
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(src.len(), |(i, _)| i);
        let end = src[start..]
            .chars()
            .next()
            .map_or(start, |c| start + c.len_utf8());
        let snippet = renderer.render(&[Group::with_level(level).element(
            Snippet::source(src.as_str())
                .line_start(line)
                .annotation(AnnotationKind::Primary.span(start..end)),
        )]);
        out.push_str(&snippet);
        out.push('\n');
    }
    out
}

/// The message without the " (line L, column C)" the server appends for
/// readers of `problems`: in the text report the location already leads.
fn strip_position(f: &Finding) -> &str {
    match (f.line, f.column) {
        (Some(l), Some(c)) => f
            .message
            .strip_suffix(&format!(" (line {l}, column {c})"))
            .unwrap_or(&f.message),
        _ => &f.message,
    }
}

/// `path` relative to the first of `bases` it lies under, as a compiler
/// shows paths; otherwise as it is.
fn relative(path: &str, bases: &[PathBuf]) -> String {
    let p = Path::new(path);
    match bases.iter().find_map(|b| p.strip_prefix(b).ok()) {
        Some(rel) if rel.as_os_str().is_empty() => ".".into(),
        Some(rel) => rel.to_string_lossy().into_owned(),
        None => path.to_owned(),
    }
}

/// Untrusted text (paths, names, details quoting a SKILL.md) made safe for
/// a terminal (spec CHECK-006): C0 controls, DEL and bidirectional
/// overrides become visible symbols (`annotate-snippets`' own table, as
/// rustc uses), and what remains that a terminal could act on — a line
/// break, a C1 control such as CSI — becomes U+FFFD.
pub fn clean(s: &str) -> String {
    annotate_snippets::normalize_untrusted_str(s)
        .chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

/// A source line with its C1 controls replaced one character for one, so
/// the caret's column still lines up (`annotate-snippets` handles C0, DEL
/// and bidirectional overrides itself).
fn neutralize_c1(s: &str) -> String {
    s.chars()
        .map(|c| {
            if ('\u{80}'..='\u{9f}').contains(&c) {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

fn roots_from(r: RootsFrom) -> &'static str {
    match r {
        RootsFrom::McpSkillsPath => "MCP_SKILLS_PATH",
        RootsFrom::SkillsDir => "SKILLS_DIR",
        RootsFrom::Default => "default",
    }
}

fn grant_line(g: GrantFrom) -> &'static str {
    match g {
        GrantFrom::Declaration => {
            "declaration (standalone, no MCP_SKILL_RUN: each skill's declaration stands)"
        }
        GrantFrom::HostedDefault => {
            "hosted-default (a host marker is set and there is no MCP_SKILL_RUN: nothing may run)"
        }
        GrantFrom::McpSkillRun => "MCP_SKILL_RUN (each declaration narrowed by the grant)",
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / (KIB * KIB))
    }
}

/// Whether to colour the text report (spec CHECK-005): only on a terminal,
/// never when `NO_COLOR` holds anything (no-color.org), never on a `dumb`
/// terminal.
pub fn use_color(is_terminal: bool, no_color: Option<&OsStr>, term: Option<&OsStr>) -> bool {
    is_terminal && no_color.is_none_or(OsStr::is_empty) && term != Some(OsStr::new("dumb"))
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
    for d in dirs {
        if d.as_os_str().is_empty() {
            return Err(UsageError::EmptyDir);
        }
        roots.push(match cwd {
            Some(cwd) => cwd.join(d),
            None if d.is_absolute() => d.clone(),
            None => return Err(UsageError::NoWorkingDir(d.clone())),
        });
    }
    config.roots = roots;
    config.roots_from = RootsFrom::SkillsDir;
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
    let served = Served::boot(config);
    let report = Report::new(&served, options.strict);
    let text = match options.format {
        Format::Json => report.to_json().map_err(CheckError::Json)?,
        Format::Text => report.to_text(&options.bases, options.color),
    };
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(CheckError::Write)?;
    Ok(report.passed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    const PATH: &str = "/t/s/SKILL.md";

    fn warnings(text: &str) -> Vec<Finding> {
        spec_warnings(text, "s", PATH, false)
    }

    fn kinds(fs: &[Finding]) -> Vec<&'static str> {
        fs.iter()
            .map(|f| match f.kind {
                Kind::Rule(r) => r.code(),
                Kind::Problem(_) => "problem",
            })
            .collect()
    }

    #[rstest]
    #[case("pdf", None)]
    #[case("mcp-builder", None)]
    #[case("a1-b2", None)]
    #[case("", Some("empty"))]
    #[case("PDF", Some("'P'"))]
    #[case("skill_one", Some("'_'"))]
    #[case("v1.2", Some("'.'"))]
    #[case("-pdf", Some("starts or ends"))]
    #[case("pdf-", Some("starts or ends"))]
    #[case("pdf--forms", Some("two hyphens"))]
    #[case("café", Some("'é'"))]
    fn the_name_rule(#[case] name: &str, #[case] why: Option<&str>) {
        match (name_violation(name), why) {
            (None, None) => {}
            (Some(got), Some(want)) => assert!(got.contains(want), "{name}: {got}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn sixty_four_characters_is_the_most() {
        assert_eq!(name_violation(&"a".repeat(64)), None);
        assert!(name_violation(&"a".repeat(65)).is_some_and(|w| w.contains("65")));
    }

    #[test]
    fn a_clean_skill_has_no_warnings() {
        let text = "---\nname: s\ndescription: Does a thing. Use it when a thing is needed.\ncompatibility: Needs node 20\nmetadata:\n  author: me\n  version: \"1.0\"\n---\n# S\n";
        assert_eq!(warnings(text), vec![]);
    }

    #[test]
    fn missing_name_and_description_are_warned_without_a_position() {
        let w = warnings("---\nlicense: MIT\n---\nbody\n");
        assert_eq!(kinds(&w), ["agentskills-name", "agentskills-description"]);
        assert!(
            w.iter()
                .all(|f| f.line.is_none() && f.severity == Severity::Warning)
        );
        assert!(w[0].message.contains("name: s"), "{}", w[0].message);
    }

    #[test]
    fn a_name_that_breaks_the_rule_points_at_its_value() {
        let w = spec_warnings(
            "---\nname: My_Skill\ndescription: d\n---\n",
            "My_Skill",
            PATH,
            false,
        );
        assert_eq!(kinds(&w), ["agentskills-name"]);
        assert_eq!((w[0].line, w[0].column), (Some(2), Some(7)));
        assert_eq!(w[0].source.as_deref(), Some("name: My_Skill"));
    }

    #[test]
    fn what_the_skills_door_refused_is_left_to_its_error() {
        let text = "---\nname: My_Skill\ndescription: \"\"\n---\n";
        assert_eq!(
            kinds(&spec_warnings(text, "My_Skill", PATH, false)),
            ["agentskills-name", "agentskills-description"]
        );
        assert_eq!(spec_warnings(text, "My_Skill", PATH, true), vec![]);
        assert_eq!(
            spec_warnings("---\nlicense: MIT\n---\n", "s", PATH, true),
            vec![]
        );
        // The door has no length limit: that warning stays.
        let long = format!("---\nname: s\ndescription: {}\n---\n", "x".repeat(1025));
        assert_eq!(
            kinds(&spec_warnings(&long, "s", PATH, true)),
            ["agentskills-description"]
        );
    }

    #[test]
    fn a_name_unlike_the_directory_is_left_to_the_server() {
        // The server reports name-mismatch; the check does not say it twice.
        assert_eq!(warnings("---\nname: Other\ndescription: d\n---\n"), vec![]);
    }

    #[test]
    fn description_bounds() {
        let at = |n: usize| format!("---\nname: s\ndescription: {}\n---\n", "é".repeat(n));
        assert_eq!(warnings(&at(1024)), vec![]);
        let w = warnings(&at(1025));
        assert_eq!(kinds(&w), ["agentskills-description"]);
        assert!(w[0].message.contains("1025 characters"));
        assert_eq!((w[0].line, w[0].column), (Some(3), Some(14)));
        let w = warnings("---\nname: s\ndescription: \"  \"\n---\n");
        assert_eq!(kinds(&w), ["agentskills-description"]);
    }

    #[rstest]
    #[case("compatibility: Needs git", 0)]
    #[case("compatibility: \"\"", 1)]
    #[case("compatibility:", 1)]
    #[case("compatibility: [a, b]", 1)]
    fn compatibility_is_a_short_string(#[case] line: &str, #[case] n: usize) {
        let w = warnings(&format!("---\nname: s\ndescription: d\n{line}\n---\n"));
        assert_eq!(w.len(), n, "{w:?}");
        assert!(w.iter().all(|f| f.kind == Kind::Rule(Rule::Compatibility)));
    }

    #[test]
    fn compatibility_over_500_characters() {
        let w = warnings(&format!(
            "---\nname: s\ndescription: d\ncompatibility: {}\n---\n",
            "x".repeat(501)
        ));
        assert!(w[0].message.contains("501 characters"), "{w:?}");
    }

    #[test]
    fn metadata_values_must_be_strings() {
        let w = warnings(
            "---\nname: s\ndescription: d\nmetadata:\n  author: me\n  version: 1.0\n  tags: [a]\n---\n",
        );
        assert_eq!(kinds(&w), ["agentskills-metadata", "agentskills-metadata"]);
        assert!(w[0].message.contains("\"metadata.version\" is a number"));
        assert_eq!((w[0].line, w[0].column), (Some(6), Some(12)));
        assert_eq!(w[0].source.as_deref(), Some("  version: 1.0"));
        let w = warnings("---\nname: s\ndescription: d\nmetadata: [a]\n---\n");
        assert!(w[0].message.contains("is a list"));
    }

    #[test]
    fn a_body_over_500_lines_points_at_line_501_of_the_body() {
        let body: String = (1..=501).map(|i| format!("line {i}\n")).collect();
        let w = warnings(&format!("---\nname: s\ndescription: d\n---\n{body}"));
        assert_eq!(kinds(&w), ["agentskills-body"]);
        // The body starts on SKILL.md line 5.
        assert_eq!((w[0].line, w[0].column), (Some(505), Some(1)));
        assert_eq!(w[0].source.as_deref(), Some("line 501"));
        let body: String = (1..=500).map(|i| format!("line {i}\r\n")).collect();
        assert_eq!(
            warnings(&format!("---\nname: s\ndescription: d\n---\n{body}")),
            vec![]
        );
    }

    #[test]
    fn a_file_that_no_longer_parses_is_an_error() {
        let w = warnings("no frontmatter\n");
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].severity, Severity::Error);
        assert!(w[0].message.contains("changed while"));
    }

    #[rstest]
    #[case(true, None, None, true)]
    #[case(false, None, None, false)]
    #[case(true, Some("1"), None, false)]
    #[case(true, Some(""), None, true)]
    #[case(true, None, Some("dumb"), false)]
    #[case(true, None, Some("xterm-256color"), true)]
    fn colour_only_on_a_terminal_without_no_color(
        #[case] tty: bool,
        #[case] no_color: Option<&str>,
        #[case] term: Option<&str>,
        #[case] want: bool,
    ) {
        assert_eq!(
            use_color(tty, no_color.map(OsStr::new), term.map(OsStr::new)),
            want
        );
    }

    #[test]
    fn untrusted_text_cannot_drive_the_terminal() {
        let s = clean("a\u{1b}[31mred\nnext\u{9b}2J\u{202e}evil");
        assert!(!s.contains('\u{1b}'));
        assert!(!s.contains('\n'));
        assert!(!s.contains('\u{9b}'));
        assert!(!s.contains('\u{202e}'));
        assert!(s.contains("red") && s.contains("evil"));
    }

    fn finding(line: Option<usize>, column: Option<usize>, source: Option<&str>) -> Finding {
        Finding {
            severity: Severity::Error,
            kind: Kind::Problem(Reason::MalformedFrontmatter),
            path: "/r/x/SKILL.md".into(),
            line,
            column,
            message: match (line, column) {
                (Some(l), Some(c)) => format!("bad (line {l}, column {c})"),
                _ => "bad".into(),
            },
            source: source.map(str::to_owned),
        }
    }

    #[test]
    fn a_positioned_finding_shows_its_line_and_a_caret() {
        let out = render_finding(
            &finding(Some(3), Some(8), Some("name: [oops")),
            "x/SKILL.md",
            &Renderer::plain(),
            false,
        );
        assert_eq!(
            out,
            "x/SKILL.md:3:8: error[malformed-frontmatter]: bad\n  |\n3 | name: [oops\n  |        ^\n"
        );
    }

    #[test]
    fn a_caret_past_the_end_of_the_line_still_renders() {
        let out = render_finding(
            &finding(Some(2), Some(40), Some("a: [")),
            "x/SKILL.md",
            &Renderer::plain(),
            false,
        );
        assert!(out.contains("2 | a: ["), "{out}");
        assert!(out.ends_with("^\n"), "{out}");
    }

    #[test]
    fn a_finding_without_a_position_is_one_line() {
        let out = render_finding(&finding(None, None, None), "x", &Renderer::plain(), false);
        assert_eq!(out, "x: error[malformed-frontmatter]: bad\n");
    }

    #[test]
    fn kinds_are_the_wire_codes() {
        assert_eq!(
            Kind::Problem(Reason::DeclaredScriptMissing).code(),
            "declared-script-missing"
        );
        for rule in [
            Rule::Name,
            Rule::Description,
            Rule::Compatibility,
            Rule::Metadata,
            Rule::Body,
            Rule::NoSkills,
        ] {
            assert_eq!(
                serde_json::to_value(Kind::Rule(rule)).ok(),
                Some(serde_json::json!(rule.code()))
            );
        }
        assert_eq!(Kind::Rule(Rule::Body).code(), "agentskills-body");
    }

    #[test]
    fn paths_are_shown_relative_to_the_base() {
        let bases = [PathBuf::from("/real/repo"), PathBuf::from("/work/repo")];
        assert_eq!(
            relative("/work/repo/skills/a/SKILL.md", &bases),
            "skills/a/SKILL.md"
        );
        assert_eq!(relative("/real/repo/x", &bases), "x");
        assert_eq!(relative("/work/repo", &bases), ".");
        assert_eq!(relative("/elsewhere/a", &bases), "/elsewhere/a");
        assert_eq!(relative("MCP_SKILL_RUN[0]", &bases), "MCP_SKILL_RUN[0]");
    }

    #[test]
    fn dirs_are_read_as_skills_dir_would_read_them() {
        let env = [("MCP_SKILL_RUN".into(), "[]".into())]
            .into_iter()
            .collect();
        let base = Config::from_env(env, Path::new("/w"), PathBuf::from("/pkg/skills"));
        let c = with_dirs(
            base.clone(),
            &[PathBuf::from("a"), PathBuf::from("/b")],
            Some(Path::new("/w")),
        )
        .unwrap();
        assert_eq!(c.roots, [PathBuf::from("/w/a"), PathBuf::from("/b")]);
        assert_eq!(c.roots_from, RootsFrom::SkillsDir);
        assert_eq!(c.grant.as_deref(), Some("[]"));
        let same = with_dirs(base.clone(), &[], None).unwrap();
        assert_eq!(same.roots_from, RootsFrom::Default);
        assert_eq!(
            with_dirs(base.clone(), &[PathBuf::new()], None).unwrap_err(),
            UsageError::EmptyDir
        );
        assert!(matches!(
            with_dirs(base, &[PathBuf::from("rel")], None),
            Err(UsageError::NoWorkingDir(_))
        ));
    }
}
