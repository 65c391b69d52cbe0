//! SKILL.md read through the fence, capped, and split at its frontmatter:
//! the one place that is done (issue 28 §6), for the scan, `skill_load`,
//! the search index, the Skills extension's frontmatter and the linter.

use std::path::Path;

use crate::declaration;
use crate::fence::{self, FenceError};
use crate::frontmatter::{self, Frontmatter, FrontmatterError};
use crate::limits::MAX_SKILL_MD_BYTES;
use crate::problem::Reason;
use crate::read;

/// The file every skill directory holds.
pub(crate) const SKILL_MD: &str = "SKILL.md";

/// SKILL.md's text, read through the fence and capped (DISC-008).
pub(crate) struct SkillMd {
    pub(crate) text: String,
    /// True when the file is larger than [`MAX_SKILL_MD_BYTES`].
    pub(crate) cut: bool,
}

/// Why SKILL.md could not be read: the reason, the detail, and where in
/// the file, when the trouble has a place (a byte that is not UTF-8).
pub(crate) type ReadFailure = (Reason, String, Option<(usize, usize)>);

/// Reads SKILL.md of the skill at `dir` (a real directory). The same code
/// serves discovery and `skill_load`, so both see one file the same way.
pub(crate) fn read_skill_md(dir: &Path) -> Result<SkillMd, ReadFailure> {
    let opened = fence::open(dir, SKILL_MD).map_err(|e| {
        let (reason, detail) = match e {
        FenceError::Escape { .. } => (
            Reason::SymlinkEscape,
            "SKILL.md is a symlink pointing outside this skill's own directory; refused: put the file itself in \
             the skill's folder in the symlink's place"
                .to_owned(),
        ),
        FenceError::NotRegular { kind, .. } => (
            Reason::UnreadableSkillMd,
            format!(
                "SKILL.md is {kind}, not a regular file, so the folder is not served as a skill: make SKILL.md \
                 a file holding the frontmatter and the instructions"
            ),
        ),
            other => (
                Reason::UnreadableSkillMd,
                format!("SKILL.md could not be read: {other}; make it readable by the user the server runs as"),
            ),
        };
        (reason, detail, None)
    })?;
    let capped =
        read::read_capped(&opened.file, &opened.meta, MAX_SKILL_MD_BYTES).map_err(|e| {
            (
                Reason::UnreadableSkillMd,
                format!("SKILL.md could not be read: {e}; make it readable by the user the server runs as"),
                None,
            )
        })?;
    let text = read::utf8_prefix(&capped.bytes, capped.truncated).map_err(|at| {
        (
            Reason::UnreadableSkillMd,
            format!(
                "SKILL.md is not valid UTF-8 (first bad byte at offset {at}), so the skill is not served: save the \
                 file as UTF-8 (a Latin-1 file converts with iconv -f latin1 -t utf-8)"
            ),
            Some(place_of(&capped.bytes, at)),
        )
    })?;
    Ok(SkillMd {
        text: text.to_owned(),
        cut: capped.truncated,
    })
}

/// The line and column (1-based; the column in characters) of byte `at`
/// of `bytes`, whose first `at` bytes are UTF-8.
fn place_of(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = std::str::from_utf8(&bytes[..at.min(bytes.len())]).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

/// SKILL.md read through the fence and split at its frontmatter: the one
/// place that sequence is written (issue 28 §6), for the scan,
/// `skill_load`, the search index and the Skills extension alike; its
/// YAML is parsed here too, one way or the other.
pub(crate) struct LoadedMd {
    pub(crate) md: SkillMd,
    /// Where the YAML lies in `md.text`, and its first line's number.
    yaml: std::ops::Range<usize>,
    yaml_line: usize,
    /// Where the body starts in `md.text`.
    pub(crate) body_offset: usize,
}

impl LoadedMd {
    /// The YAML between the delimiter lines.
    fn yaml(&self) -> &str {
        self.md.text.get(self.yaml.clone()).unwrap_or("")
    }

    /// The frontmatter, parsed strictly and whole (FM-002..FM-006): what
    /// the Skills extension carries, every field.
    pub(crate) fn parse(&self) -> Result<Frontmatter, FrontmatterError> {
        frontmatter::parse(self.yaml(), self.yaml_line)
    }

    /// The frontmatter, parsed as the scan reads it: a YAML error inside
    /// the `mcp-host:` block costs only the block, whose error comes back
    /// beside the rest (DECL-002).
    pub(crate) fn parse_sparing_block(
        &self,
    ) -> Result<(Frontmatter, Option<FrontmatterError>), FrontmatterError> {
        frontmatter::parse_sparing_block(self.yaml(), self.yaml_line, declaration::BLOCK_KEY)
    }

    /// The SKILL.md line (1-based) of the `---` that closes the
    /// frontmatter: where a missing key is added, before it.
    pub(crate) fn closing_line(&self) -> usize {
        self.yaml_line + self.yaml().matches('\n').count()
    }

    /// The body, verbatim.
    pub(crate) fn body(&self) -> &str {
        self.md.text.get(self.body_offset..).unwrap_or("")
    }
}

/// Why SKILL.md could not be loaded.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// It could not be read (the fence, its size, its encoding), with the
    /// place of a byte that is not UTF-8.
    Read(Reason, String, Option<(usize, usize)>),
    /// It was read, but has no frontmatter that splits off.
    Split(FrontmatterError),
}

/// Reads and splits SKILL.md of the skill at `dir`.
pub(crate) fn load_skill_md(dir: &Path) -> Result<LoadedMd, LoadError> {
    let md =
        read_skill_md(dir).map_err(|(reason, detail, at)| LoadError::Read(reason, detail, at))?;
    LoadedMd::split(md).map_err(LoadError::Split)
}

impl LoadedMd {
    /// `md` split at its frontmatter.
    pub(crate) fn split(md: SkillMd) -> Result<LoadedMd, FrontmatterError> {
        let (yaml, yaml_line, body_offset) = {
            let split = frontmatter::split(&md.text)?;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A byte that is not UTF-8 is placed by line and character column.
    #[test]
    fn a_bad_byte_is_placed() {
        let text = b"---\nname: caf\xc3\xa9\ndescription: caf\xe9\n";
        // "---\n", "name: café\n" (é is two bytes) and "description: caf".
        assert_eq!(place_of(text, 4 + 12 + 16), (3, 17));
        assert_eq!(place_of(b"\xff", 0), (1, 1));
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
}
