//! The report for people (spec CHECK-002, CHECK-003, CHECK-005,
//! CHECK-006): one line per served skill, then each finding as a compiler
//! prints a diagnostic, rendered by `annotate-snippets`, with untrusted
//! text made safe for a terminal.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use annotate_snippets::renderer::{AnsiColor, Effects, Style};
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use super::{Finding, Report, Severity};
use crate::config::RootsFrom;
use crate::grant::GrantFrom;

impl Report {
    /// The report for people (spec CHECK-002, CHECK-003). A path under one
    /// of `bases` (the working directory) is shown relative to it; `color`
    /// styles the report for a terminal.
    pub(crate) fn to_text(&self, bases: &[PathBuf], color: bool) -> String {
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
        let roots: Vec<String> = l.roots.iter().flatten().map(|r| shown(r)).collect();
        if let Some(from) = l.roots_from {
            out.push_str(&format!(
                "{} ({}): {}\n",
                paint(bold, "roots"),
                roots_from(from),
                roots.join(", ")
            ));
        }
        if let Some(from) = l.grant_from {
            out.push_str(&format!("{}: {}\n", paint(bold, "grant"), grant_line(from)));
        }
        for s in &l.skills {
            let mut parts = Vec::new();
            let scripts = s.scripts.as_deref().unwrap_or_default();
            let unavailable = s.unavailable_scripts.as_deref().unwrap_or_default();
            let ungranted = s.ungranted_scripts.as_deref().unwrap_or_default();
            if !scripts.is_empty() {
                let names: Vec<String> = scripts.iter().map(|r| clean(&r.script)).collect();
                parts.push(format!("runnable: {}", names.join(", ")));
            }
            if !unavailable.is_empty() {
                let names: Vec<String> = unavailable
                    .iter()
                    .map(|r| format!("{} ({})", clean(&r.script), clean(&r.reason)))
                    .collect();
                parts.push(format!("unavailable: {}", names.join(", ")));
            }
            if !ungranted.is_empty() {
                // The grant line says why (and a grant problem, when two rows
                // name one script: GRANT-009).
                let names: Vec<String> = ungranted.iter().map(|r| clean(&r.script)).collect();
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
        out.push_str(&format!("\n{verdict}: {}{strict_note}\n", self.summary()));
        out
    }

    /// The verdict's line after `check passed: ` or `check failed: `:
    /// how many skills are served and which of them have errors, which
    /// were refused, and the errors by code — what failed the check
    /// (CHECK-002, CHECK-004).
    pub(crate) fn summary(&self) -> String {
        let mut out = plural(self.list.skills.len(), "skill", "skills") + " served";
        if !self.failing.is_empty() {
            out.push_str(&format!(
                " ({} with errors: {})",
                self.failing.len(),
                names(self.failing.iter().map(String::as_str))
            ));
        }
        if !self.refused.is_empty() {
            out.push_str(&format!(
                "; {} refused ({})",
                plural(self.refused.len(), "skill", "skills"),
                names(self.refused.iter().map(|r| r.name.as_str()))
            ));
        }
        out.push_str("; ");
        out.push_str(&plural(self.errors(), "error", "errors"));
        let kinds = self.error_kinds();
        if !kinds.is_empty() {
            let said: Vec<String> = kinds
                .iter()
                .map(|(code, n)| {
                    if kinds.len() == 1 && *n == self.errors() {
                        code.to_string()
                    } else {
                        format!("{n} {code}")
                    }
                })
                .collect();
            out.push_str(&format!(" ({})", said.join(", ")));
        }
        out.push_str(&format!(
            ", {}",
            plural(self.warnings(), "warning", "warnings")
        ));
        out
    }
}

/// Most names a summary lists; past them it counts the rest.
const SUMMARY_NAMES: usize = 5;

/// `a, b, c`, made safe for a terminal, the first [`SUMMARY_NAMES`] and
/// then how many more.
fn names<'a>(all: impl ExactSizeIterator<Item = &'a str>) -> String {
    let total = all.len();
    let mut shown: Vec<String> = all.take(SUMMARY_NAMES).map(clean).collect();
    if total > SUMMARY_NAMES {
        shown.push(format!("and {} more", total - SUMMARY_NAMES));
    }
    shown.join(", ")
}

/// One finding: `path:line:col: error[kind]: message`, then, when the
/// finding has a position and its line could be read, the line and a caret.
/// Both halves are rendered by `annotate-snippets` (its short form for the
/// heading, its snippet form for the caret); only the location prefix is
/// composed here, because the short form prints a location only beside a
/// snippet, and a finding without a line still has a path.
pub(super) fn render_finding(
    f: &Finding,
    shown_path: &str,
    renderer: &Renderer,
    color: bool,
) -> String {
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
pub(super) fn relative(path: &str, bases: &[PathBuf]) -> String {
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
pub(crate) fn clean(s: &str) -> String {
    annotate_snippets::normalize_untrusted_str(s)
        .chars()
        .map(|c| {
            // What annotate-snippets leaves that still acts on a viewer
            // (a line break, a C1 control, a line separator, a tag
            // character: crate::echo::invisible) becomes U+FFFD.
            if c != '\t' && crate::echo::invisible(c) {
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
