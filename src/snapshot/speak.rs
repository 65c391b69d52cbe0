//! Mistakes speak up (spec SRV-010, LIST-016): a scan's `problems` are
//! also logged to stderr, where whoever started the server looks first,
//! and a root that could not be read is named where the model looks
//! first, the `initialize` instructions — so a mistyped folder is never
//! only a `skill_list` field nobody asked for.

use std::borrow::Cow;
use std::collections::HashSet;

use super::Snapshot;
use crate::limits::{INSTRUCTIONS_UNREADABLE_ROOTS, MAX_LOGGED_LINE_CHARS, MAX_LOGGED_PROBLEMS};
use crate::problem::{Problem, Reason};

impl Snapshot {
    /// Logs at warn level, one line each, the problems of this snapshot
    /// that `before` does not hold: every one at boot (`before` empty),
    /// only the new ones when a rescan is swapped in, so a reload does not
    /// repeat what was already said (SRV-010).
    pub fn log_problems(&self, before: &[Problem]) {
        for line in problem_lines(&self.problems, before) {
            tracing::warn!("{line}");
        }
    }

    /// The roots this snapshot could not read, as the instructions name
    /// them (LIST-016): `PATH could not be read: WHY`, joined by `; `, at
    /// most [`INSTRUCTIONS_UNREADABLE_ROOTS`] and then how many more, each
    /// escaped and bounded as a log line is ([`one_line`]).
    /// `None` when every root was read.
    pub(crate) fn unreadable_roots(&self) -> Option<String> {
        let unread: Vec<&Problem> = self
            .problems
            .iter()
            .filter(|p| p.reason == Reason::RootUnreadable)
            .collect();
        if unread.is_empty() {
            return None;
        }
        let mut said: Vec<String> = unread
            .iter()
            .take(INSTRUCTIONS_UNREADABLE_ROOTS)
            .map(|p| {
                // The catalog's details start with their subject ("this
                // root could not be read: …"); the path takes its place.
                // Each is one bounded line, as in the log: a pasted 50 KB
                // path costs the handshake a thousand characters, not 50 KB.
                one_line(&match ["this root ", "this directory "]
                    .iter()
                    .find_map(|subject| p.detail.strip_prefix(subject))
                {
                    Some(what) => format!("{} {what}", p.path),
                    None => format!("{}: {}", p.path, p.detail),
                })
            })
            .collect();
        let more = unread.len().saturating_sub(INSTRUCTIONS_UNREADABLE_ROOTS);
        if more > 0 {
            said.push(format!("and {more} more could not be read"));
        }
        Some(said.join("; "))
    }
}

/// The warn lines for the entries of `now` that `before` does not hold:
/// at most [`MAX_LOGGED_PROBLEMS`], then one line counting the rest.
fn problem_lines(now: &[Problem], before: &[Problem]) -> Vec<String> {
    let known: HashSet<&Problem> = before.iter().collect();
    let fresh: Vec<&Problem> = now.iter().filter(|p| !known.contains(p)).collect();
    let mut lines: Vec<String> = fresh
        .iter()
        .take(MAX_LOGGED_PROBLEMS)
        .map(|p| one_line(&format!("{}: {}: {}", p.reason.code(), p.path, p.detail)))
        .collect();
    let more = fresh.len().saturating_sub(MAX_LOGGED_PROBLEMS);
    if more > 0 {
        let new = if before.is_empty() { "" } else { " new" };
        lines.push(format!(
            "… and {more} more{new} problem{}: skill_list's \"problems\" lists every one",
            if more == 1 { "" } else { "s" }
        ));
    }
    lines
}

/// `line` as one line of a log a person reads: control and invisible
/// format characters (a newline in a file name, a terminal escape, a
/// bidirectional override) escaped, and at most [`MAX_LOGGED_LINE_CHARS`]
/// characters, then how many were left out. Every line the server logs
/// from input passes here (SRV-010).
pub fn one_line(line: &str) -> String {
    let escaped: Cow<str> = if line.chars().any(crate::echo::invisible) {
        line.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else if crate::echo::invisible(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<String>()
            .into()
    } else {
        line.into()
    };
    let total = escaped.chars().count();
    if total <= MAX_LOGGED_LINE_CHARS {
        return escaped.into_owned();
    }
    let kept: String = escaped.chars().take(MAX_LOGGED_LINE_CHARS).collect();
    format!(
        "{kept}… ({} more characters)",
        total - MAX_LOGGED_LINE_CHARS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(path: &str, detail: &str) -> Problem {
        Problem::new(path, Reason::NoSkillMd, detail)
    }

    #[test]
    fn a_rescan_logs_only_what_is_new() {
        let old = vec![p("/r/a", "x"), p("/r/b", "x")];
        let now = vec![p("/r/a", "x"), p("/r/c", "x")];
        assert_eq!(problem_lines(&now, &old), ["no-skill-md: /r/c: x"]);
        assert!(problem_lines(&old, &old).is_empty());
    }

    #[test]
    fn past_the_bound_one_line_counts_the_rest() {
        let many: Vec<Problem> = (0..MAX_LOGGED_PROBLEMS + 7)
            .map(|i| p(&format!("/r/{i}"), "x"))
            .collect();
        let lines = problem_lines(&many, &[]);
        assert_eq!(lines.len(), MAX_LOGGED_PROBLEMS + 1);
        assert_eq!(
            lines[MAX_LOGGED_PROBLEMS],
            "… and 7 more problems: skill_list's \"problems\" lists every one"
        );
        let lines = problem_lines(&many, &many[..1]);
        assert!(lines[MAX_LOGGED_PROBLEMS].starts_with("… and 6 more new problems"));
    }

    #[test]
    fn a_line_stays_one_line_and_bounded() {
        assert_eq!(one_line("a\nb\u{1b}[31m"), "a\\nb\\u{1b}[31m");
        let long = one_line(&"é".repeat(MAX_LOGGED_LINE_CHARS + 5));
        assert_eq!(
            long,
            format!("{}… (5 more characters)", "é".repeat(MAX_LOGGED_LINE_CHARS))
        );
    }
}
