//! The walk of a skill's bundle (DISC-011..DISC-013), and the sorted
//! directory read discovery shares with it.

use std::fs;
use std::path::Path;

use super::files::Files;
use super::show;
use crate::fence::{self, FenceError};
use crate::limits::{MAX_DIRS_PER_SKILL, MAX_FILES_PER_SKILL};
use crate::problem::{Problem, Reason};

/// Entries of a directory, sorted by name bytes so discovery is the same on
/// every machine. A directory that cannot be read is reported.
pub(super) fn sorted_entries(
    dir: &Path,
    problems: &mut Vec<Problem>,
    reason: Reason,
) -> Vec<fs::DirEntry> {
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
                format!("this directory could not be read: {e}; make it readable by the user the server runs as"),
            ));
            Vec::new()
        }
    }
}

/// What to do about a bundled file the file budget leaves out.
const TRIM: &str = "remove what the skill does not need (node_modules, build output, a virtual environment), or split \
                    it into several skills";

/// The rename that lets the read tools address a name the string check
/// refuses.
fn rename_fix(rule: fence::PathRule) -> &'static str {
    use fence::PathRule;
    match rule {
        PathRule::Percent => "rename it without \"%\"",
        PathRule::Backslash => "rename it without the backslash",
        PathRule::Blank => "rename it with a name that is not only whitespace",
        PathRule::TooLong => {
            "shorten its path (from the skill's folder) to 1024 characters or fewer"
        }
        _ => "rename it",
    }
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
pub(super) fn walk(
    skill: &Path,
    wanted: &[&str],
    problems: &mut Vec<Problem>,
) -> (Files, Vec<bool>) {
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
                    "this name is not valid UTF-8, so skill_file cannot address it; it is not listed (nor anything under it): \
                     rename it with a UTF-8 name",
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
                        "{rel:?} cannot be addressed by skill_file ({}), so it is not listed{}: {}",
                        rule.describe(),
                        if ft.is_dir() {
                            " (nor anything under it)"
                        } else {
                            ""
                        },
                        rename_fix(rule)
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
                        format!(
                            "more than {MAX_DIRS_PER_SKILL} directories; the manifest lists the {} files found before that and the rest of the bundle is not walked: {TRIM}",
                            files.len()
                        ),
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
                            format!(
                                "{rel:?} is a symlink leading outside this skill's own directory; it is not listed and cannot be read: \
                                 if the skill needs the file, copy it into the skill in the symlink's place"
                            ),
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
                            format!("{e}; it is not listed: point the symlink at a file of the skill, or remove it"),
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
                    format!(
                        "{rel:?} is {kind}, not a regular file, so skill_file cannot serve it; it is not listed: \
                         remove it from the skill's folder"
                    ),
                ));
                continue;
            };
            if files.len() == MAX_FILES_PER_SKILL {
                problems.push(Problem::new(
                    show(skill),
                    Reason::FileLimit,
                    format!(
                        "more than {MAX_FILES_PER_SKILL} files; the manifest lists the first {MAX_FILES_PER_SKILL} and the rest of the bundle is not walked: {TRIM}"
                    ),
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
