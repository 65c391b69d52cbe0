//! One skill read from its directory: SKILL.md through the loader, its
//! fields and `mcp-host:` declaration, its manifest, and each declared
//! script checked against the bundle (DISC-002, DISC-008, DISC-010).

use std::path::PathBuf;
use std::sync::Arc;

use super::files::Files;
use super::names::is_skill_name;
use super::show;
use super::skill_md::{LoadError, SKILL_MD, load_skill_md};
use super::walk::walk;
use crate::declaration::{self, Declaration};
use crate::fence::{self, FenceError};
use crate::frontmatter::{self, Fields, Frontmatter, Seg};
use crate::problem::{Problem, Reason};

/// A served skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The directory's name: the only name it is served under (DISC-002).
    pub(crate) name: String,
    /// Its real (canonical) directory: the base of every fence check.
    pub(crate) dir: PathBuf,
    /// The configured root it was found under, as `roots` reports it;
    /// shared by every skill of that root.
    pub(crate) source: Arc<str>,
    pub(crate) description: Option<String>,
    pub(crate) when_to_use: Option<String>,
    /// The frontmatter's own `name`, when it has one (reported when it
    /// differs; SEP-2640 needs it equal to the directory name). Read it
    /// with [`Skill::frontmatter_name`].
    pub(crate) named: Named,
    /// Where SKILL.md holds its `name` and `description`, and closes its
    /// frontmatter: the lines a report about them points at.
    pub(crate) spots: Spots,
    /// Every bundled file, sorted by path bytes; SKILL.md included.
    pub(crate) files: Files,
    pub(crate) bytes: u64,
    /// The first 8 bytes of SHA-256 of SKILL.md as the scan read it: what
    /// of its text the catalog's identity covers (LIST-018) without
    /// keeping the text — frontmatter keys the catalog does not keep, and
    /// the body `query` ranks by (LIST-006).
    pub(crate) md_digest: [u8; 8],
    pub(crate) declaration: Declaration,
    /// Declared scripts that are not a regular file inside the skill, with
    /// the reason; they are reported and can never run (DISC-010).
    pub(crate) missing_scripts: Vec<(String, String)>,
}

/// What a skill's frontmatter calls it. Nearly always its directory name,
/// which the skill already holds: that case costs no second copy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Named {
    /// No `name` in the frontmatter.
    Not,
    /// The directory name.
    Same,
    /// Another name.
    Other(Box<str>),
}

/// Where SKILL.md says what the MCP Skills extension checks (SEP-2640):
/// the `name` and `description` values (SKILL.md line and column, 1-based)
/// and the line of the `---` that closes the frontmatter, where a missing
/// key is added. A report about either points the author at the line to
/// edit (issue 41 §3); twenty bytes a skill.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Spots {
    pub(crate) name: Option<(u32, u32)>,
    pub(crate) description: Option<(u32, u32)>,
    pub(crate) close: u32,
}

impl Spots {
    fn of(fm: &Frontmatter, close: usize) -> Spots {
        let at = |key: &str| {
            fm.positions
                .get(&[Seg::Key(key.to_owned())])
                .map(|(l, c)| (narrow(l), narrow(c)))
        };
        Spots {
            name: at("name"),
            description: at("description"),
            close: narrow(close),
        }
    }
}

/// A SKILL.md position as kept: the frontmatter cap keeps every one far
/// below `u32::MAX`.
fn narrow(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Skill {
    /// The frontmatter's own `name`, when it has one.
    pub(crate) fn frontmatter_name(&self) -> Option<&str> {
        match &self.named {
            Named::Not => None,
            Named::Same => Some(&self.name),
            Named::Other(n) => Some(n),
        }
    }
}

pub(super) fn read_skill(
    name: String,
    dir: PathBuf,
    source: Arc<str>,
    problems: &mut Vec<Problem>,
) -> Option<Skill> {
    let md_path = show(&dir.join(SKILL_MD));
    let loaded = match load_skill_md(&dir) {
        Ok(l) => l,
        Err(LoadError::Read(reason, detail, at)) => {
            problems
                .push(Problem::new(md_path, reason, detail).at(at.map(|a| a.0), at.map(|a| a.1)));
            return None;
        }
        Err(LoadError::Split(e)) => {
            problems.push(
                Problem::new(md_path, Reason::MalformedFrontmatter, e.message).at(e.line, e.column),
            );
            return None;
        }
    };
    let md_digest = {
        use sha2::{Digest, Sha256};
        let sum = Sha256::digest(loaded.md.text.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&sum[..8]);
        first
    };
    let (fm, block_error) = match loaded.parse_sparing_block() {
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
                    "the \"mcp-host\" block is not valid YAML, so it is ignored and the skill has no scripts \
                     (its instructions are still served): {}",
                    e.message
                        .strip_prefix("SKILL.md frontmatter is not valid YAML: ")
                        .unwrap_or(&e.message)
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
    let notes = notes
        .into_iter()
        .map(|n| (Reason::Declaration, n))
        .chain(decl_notes);
    for (reason, n) in notes {
        problems.push(Problem::new(&md_path, reason, n.message).at(n.line, n.column));
    }
    let spots = Spots::of(&fm, loaded.closing_line());
    if let Some(fm_name) = fields.name.as_deref().filter(|n| *n != name) {
        let (line, column) = spots
            .name
            .map_or((None, None), |(l, c)| (Some(l as usize), Some(c as usize)));
        problems.push(
            Problem::new(&md_path, Reason::NameMismatch, mismatch(fm_name, &name)).at(line, column),
        );
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
            let (i, at) = script_spot(&fm, &entry.script);
            let why = match fence::resolve(&dir, &entry.script) {
                Ok(_) => return None,
                Err(FenceError::Escape { .. }) => {
                    let path = show(&dir.join(&entry.script));
                    let more = format!(
                        "; mcp-host.run declares {:?} as a script, which can never run until it is a file inside \
                         the skill",
                        entry.script
                    );
                    // The walk reported this very symlink: one report,
                    // which says what it costs the declaration too.
                    match problems
                        .iter_mut()
                        .find(|p| p.reason == Reason::SymlinkEscape && p.path == path)
                    {
                        Some(p) => p.amend(&more),
                        None => problems.push(Problem::new(
                            path,
                            Reason::SymlinkEscape,
                            format!(
                                "{:?} resolves outside this skill's own directory{more}",
                                entry.script
                            ),
                        )),
                    }
                    "it resolves outside the skill's own directory".to_owned()
                }
                Err(e) => {
                    let (why, detail) = missing_script(&entry.script, &e, &files, i);
                    problems.push(
                        Problem::new(&md_path, Reason::DeclaredScriptMissing, detail)
                            .at(at.map(|p| p.0), at.map(|p| p.1)),
                    );
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
        spots,
        files,
        bytes,
        md_digest,
        declaration,
        missing_scripts,
    })
}

/// Where SKILL.md names `script` in `mcp-host.run`: the entry's index in
/// that list, and the position of its `script:` value.
fn script_spot(fm: &Frontmatter, script: &str) -> (Option<usize>, Option<(usize, usize)>) {
    let Some(serde_yaml_ng::Value::Sequence(run)) = fm
        .map
        .get(declaration::BLOCK_KEY)
        .and_then(|b| b.get("run"))
    else {
        return (None, None);
    };
    let Some(i) = run
        .iter()
        .position(|e| e.get("script").and_then(serde_yaml_ng::Value::as_str) == Some(script))
    else {
        return (None, None);
    };
    let at = fm.positions.get(&[
        Seg::Key(declaration::BLOCK_KEY.to_owned()),
        Seg::Key("run".to_owned()),
        Seg::Index(i),
        Seg::Key("script".to_owned()),
    ]);
    (Some(i), at)
}

/// A declared script that is not a regular file in the skill (DISC-010),
/// in its author's words: why, for `unavailableScripts`, and the problem's
/// detail, with the fix — the skill's own file nearest to the path
/// written, when one is near (a typo: `script/run.js` for
/// `scripts/run.js`), else to add the file or correct the path.
fn missing_script(
    script: &str,
    e: &FenceError,
    files: &Files,
    i: Option<usize>,
) -> (String, String) {
    let entry = match i {
        Some(i) => format!("\"mcp-host.run[{i}]\" declares"),
        None => "declares".to_owned(),
    };
    match e {
        FenceError::NotFound { .. } => {
            let fix = match nearest_file(script, files) {
                Some(f) => format!(
                    "did you mean {f:?}? change this line to script: {}",
                    frontmatter::scalar(f)
                ),
                None => format!(
                    "add the file at {script:?} in the skill's folder, or change this line to the path of \
                     a file that is there"
                ),
            };
            (
                "it is not a file in this skill".to_owned(),
                format!(
                    "{entry} {script:?}, which is not a file in this skill, so it can never run: {fix}"
                ),
            )
        }
        FenceError::NotRegular { kind, .. } => (
            format!("it is {kind}, not a regular file"),
            format!(
                "{entry} {script:?}, which is {kind} in this skill, not a regular file, so it can \
                 never run: declare the script file itself (its path from the skill's folder)"
            ),
        ),
        other => (
            other.to_string(),
            format!(
                "{entry} {script:?}, which cannot be read as a file of this skill ({other}), so it \
                 can never run: make it a regular, readable file inside the skill's folder"
            ),
        ),
    }
}

/// The file of the skill whose path is nearest to `script` by edit
/// distance, when it is near: within a third of the path's length (at
/// least 1, at most 4 edits). A tie goes to the first in path order.
fn nearest_file<'f>(script: &str, files: &'f Files) -> Option<&'f str> {
    let len = script.chars().count();
    let limit = (len / 3).clamp(1, 4);
    files
        .iter()
        .map(|f| f.path)
        .filter(|p| p.chars().count().abs_diff(len) <= limit && *p != SKILL_MD)
        .map(|p| (strsim::osa_distance(script, p), p))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, p)| p)
}

/// A frontmatter `name` unlike the folder's, in the author's words: what
/// the server does about it and the edit that makes the two agree
/// (DISC-002, issue 41 §3). Renaming the folder is offered only when the
/// frontmatter's name could be a folder's (DISC-009).
pub(crate) fn mismatch(fm_name: &str, name: &str) -> String {
    let mut fix = format!(
        "the frontmatter says name {fm_name:?}, but the folder is {name:?}, and a skill is served under its \
         folder's name: it is served as {name:?} (the name skill_load and a grant use); make the two agree: \
         change this line to name: {}",
        frontmatter::scalar(name)
    );
    if is_skill_name(fm_name) {
        fix.push_str(&format!(", or rename the folder to {fm_name:?}"));
    }
    fix
}
