//! Skill names (DISC-002, DISC-009): which names can be served — they
//! travel in tool arguments, prompt names and `skill://` URIs — the name
//! a directory is served under (its real directory's, a symlink's own
//! name said when it differs), and a name to suggest for one that cannot
//! be served.

use std::fs;

use super::discover::Candidate;
use super::show;
use crate::limits::MAX_SKILL_NAME_BYTES;
use crate::problem::{Problem, Reason};

/// True when `name` can be served as a skill name: it travels in tool
/// arguments, prompt names and `skill://` URIs, so it is kept to characters
/// none of them need to escape (DISC-009).
pub(crate) fn is_skill_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= MAX_SKILL_NAME_BYTES
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The name a candidate is served under: its real directory's name
/// (DISC-002), or `None` with a problem when that cannot be a name.
pub(super) fn candidate_name(c: &Candidate, problems: &mut Vec<Problem>) -> Option<String> {
    {
        let base = c.real.file_name().unwrap_or_default();
        let Some(name) = base.to_str().filter(|n| is_skill_name(n)) else {
            problems.push(Problem::new(
                show(&c.real),
                Reason::UnusableName,
                format!(
                    "the directory name {:?} cannot be served (a skill name is 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit), \
                     and a skill is served under its directory name; skipped: {}",
                    base.to_string_lossy(),
                    match name_like(&base.to_string_lossy()) {
                        Some(like) => format!("rename the folder to {like:?} (and its SKILL.md's name: to match)"),
                        None => "rename the folder to such a name (and its SKILL.md's name: to match)".to_owned(),
                    }
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
                     which is also the name a grant must use: call it {name:?}, or, to serve it as {:?}, rename the \
                     folder it leads to (and its SKILL.md's name:) to that",
                    show(&c.real),
                    c.found_at.file_name().unwrap_or_default().to_string_lossy()
                ),
            ));
        }
        Some(name.to_owned())
    }
}

/// A skill name (DISC-009) made from a directory name that is not one:
/// each run of other characters one `-`, none leading or trailing, at
/// most 64; `None` when nothing is left.
fn name_like(s: &str) -> Option<String> {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            if !out.is_empty() || c.is_ascii_alphanumeric() {
                out.push(c);
            }
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(64);
    let out = out.trim_end_matches('-').to_owned();
    is_skill_name(&out).then_some(out)
}
