//! Splitting SKILL.md and reading its YAML frontmatter strictly.
//!
//! README "The `mcp-host:` declaration block": "Read strictly: YAML 1.2 core
//! schema, anchors and aliases refused, a 64 KiB cap, … a block that does
//! not parse reported with the parser's position".
//!
//! The YAML is read from `saphyr-parser`'s event stream into
//! [`serde_yaml_ng::Value`]s by a small builder here, because the builder is
//! where each strict rule can act: it sees an anchor or alias before anything
//! is expanded (an alias bomb never costs memory), it resolves plain scalars
//! by the YAML 1.2 core schema exactly (libyaml-based loaders read `017` and
//! `0b1` by other rules), it refuses duplicate keys and tags outside the core
//! schema, and it records the position of every node so a declaration error
//! can point at its line and column. `serde_yaml_ng` supplies the value
//! model. The shape nearly all frontmatter has is read by [`simple`] into
//! the same events, faster; everything else is saphyr's.
//!
//! One file a concern: the block cut from SKILL.md (`split.rs`), the
//! strict builder (`strict.rs`), core-schema resolution
//! (`core_schema.rs`), node positions (`positions.rs`), the skill's own
//! fields (`fields.rs`), the fast reader (`simple.rs`), the known keys
//! (`keys.rs`) and the fixes a refusal offers (`fixes.rs`). Here: the
//! refusal itself, and parsing, whole or sparing a broken `mcp-host:`
//! block (DECL-002).

use std::fmt;

use saphyr_parser::Parser;
use serde_yaml_ng::Mapping;

use crate::limits::MAX_FRONTMATTER_BYTES;

mod core_schema;
mod fields;
mod fixes;
pub mod keys;
mod positions;
pub mod simple;
mod split;
mod strict;

pub(crate) use core_schema::core_resolve;
pub use fields::{Fields, Note};
pub(crate) use fixes::scalar;
pub(crate) use positions::{Positions, Seg, key_text, path_label};
pub use split::{Split, split};

/// Which strict rule refused the frontmatter (spec FM-001..FM-006; the
/// nesting cap is this server's own bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FmRule {
    /// SKILL.md does not begin with a `---` line.
    NoOpening,
    /// No closing `---` line.
    Unclosed,
    /// The block is over [`MAX_FRONTMATTER_BYTES`].
    TooLarge,
    /// The YAML does not parse.
    Syntax,
    /// An anchor (`&x`) or alias (`*x`).
    AnchorOrAlias,
    /// A tag outside the YAML 1.2 core schema, or a value its tag refuses.
    Tag,
    /// A key appears twice in one mapping.
    DuplicateKey,
    /// The block is not a mapping (or is empty).
    NotMapping,
    /// Collections nested deeper than [`crate::limits::MAX_FRONTMATTER_NESTING`].
    TooDeep,
    /// More than one YAML document.
    MultiDocument,
    /// An integer outside the 64-bit range.
    IntRange,
}

/// A refusal, with the position in SKILL.md (1-based line and column) when
/// the rule has one.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontmatterError {
    pub(crate) rule: FmRule,
    pub(crate) message: String,
    pub(crate) line: Option<usize>,
    pub(crate) column: Option<usize>,
}

impl fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{} (line {l}, column {c})", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for FrontmatterError {}

fn refuse(rule: FmRule, message: impl Into<String>) -> FrontmatterError {
    FrontmatterError {
        rule,
        message: message.into(),
        line: None,
        column: None,
    }
}

/// Parsed frontmatter: the top-level mapping and the node positions.
#[derive(Debug, Clone)]
pub struct Frontmatter {
    pub(crate) map: Mapping,
    pub(crate) positions: Positions,
}

/// Parses the YAML of a split SKILL.md strictly (spec FM-002..FM-006).
/// `yaml_line` is the SKILL.md line of the YAML's first line, so positions
/// are SKILL.md positions.
pub(crate) fn parse(yaml: &str, yaml_line: usize) -> Result<Frontmatter, FrontmatterError> {
    parse_raw(yaml, yaml_line).map_err(|e| fixes::explain(e, yaml, yaml_line))
}

/// [`parse`] without the explanation of a refusal: what an edit
/// [`fixes::explain`] offers is tried with.
fn parse_raw(yaml: &str, yaml_line: usize) -> Result<Frontmatter, FrontmatterError> {
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(split::too_large(yaml.len()));
    }
    let mut builder = strict::Builder::new(yaml_line);
    // The common shape is read without saphyr, to the same events.
    if let Some(events) = simple::events(yaml) {
        for (event, span) in events {
            builder.on_event(event, span)?;
        }
        return builder.finish(yaml);
    }
    for event in Parser::new_from_str(yaml) {
        match event {
            Ok((event, span)) => builder.on_event(event, span)?,
            Err(e) => {
                let m = e.marker();
                return Err(FrontmatterError {
                    rule: FmRule::Syntax,
                    message: format!("{}{}", fixes::NOT_YAML, e.info()),
                    line: Some(m.line() + yaml_line - 1),
                    column: Some(m.col() + 1),
                });
            }
        }
    }
    builder.finish(yaml)
}

/// Lines of the top-level `mcp-host:` block (1-based SKILL.md lines,
/// inclusive), found by indentation: from the `mcp-host:` line to the line
/// before the next line that starts in column 1 with anything but a comment.
fn block_lines(yaml: &str, yaml_line: usize, key: &str) -> Option<(usize, usize)> {
    let mut start = None;
    for (i, line) in yaml.split('\n').enumerate() {
        let n = yaml_line + i;
        let starts_top = line
            .chars()
            .next()
            .is_some_and(|c| !c.is_whitespace() && c != '#');
        match start {
            None if starts_top
                && line
                    .strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with(':')) =>
            {
                start = Some(n)
            }
            Some(s) if starts_top => return Some((s, n - 1)),
            _ => {}
        }
    }
    start.map(|s| (s, yaml_line + yaml.split('\n').count() - 1))
}

/// Parses like [`parse`], but when the YAML fails to parse *inside* the
/// top-level `mcp-host:` block, parses the rest without that block: "a broken
/// block costs a skill its scripts, never its instructions" (spec DECL-002).
/// Returns the frontmatter and, in that case, the block's own error.
pub fn parse_sparing_block(
    yaml: &str,
    yaml_line: usize,
    block_key: &str,
) -> Result<(Frontmatter, Option<FrontmatterError>), FrontmatterError> {
    let err = match parse(yaml, yaml_line) {
        Ok(fm) => return Ok((fm, None)),
        Err(err) => err,
    };
    let (Some(line), Some((first, last))) = (err.line, block_lines(yaml, yaml_line, block_key))
    else {
        return Err(err);
    };
    if !(first..=last).contains(&line)
        || !matches!(
            err.rule,
            FmRule::Syntax
                | FmRule::AnchorOrAlias
                | FmRule::Tag
                | FmRule::DuplicateKey
                | FmRule::TooDeep
                | FmRule::IntRange
        )
    {
        return Err(err);
    }
    // Blank the block's lines, keeping the line count so positions hold.
    let without: String = yaml
        .split('\n')
        .enumerate()
        .map(|(i, l)| {
            if (first..=last).contains(&(yaml_line + i)) {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    match parse(&without, yaml_line) {
        Ok(fm) => Ok((fm, Some(err))),
        Err(_) => Err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_yaml_ng::Value;

    /// The `mcp-host:` block's SKILL.md lines (1-based, inclusive), from
    /// the YAML's own first line: the block runs to the line before the
    /// next top-level key, comments and indented lines included.
    #[test]
    fn block_lines_are_skill_md_lines() {
        let yaml = "name: a\nmcp-host:\n  version: 1\n# note\n  run: []\nlicense: MIT\n";
        assert_eq!(block_lines(yaml, 2, "mcp-host"), Some((3, 6)));
        assert_eq!(block_lines(yaml, 5, "mcp-host"), Some((6, 9)));
        assert_eq!(block_lines("name: a\n", 2, "mcp-host"), None);
        // A block that runs to the end of the YAML ends on its last line.
        let last = "name: a\nmcp-host:\n  version: 1\n";
        assert_eq!(block_lines(last, 2, "mcp-host"), Some((3, 5)));
    }

    /// Only an error inside the block is spared (DECL-002): a second
    /// `mcp-host:` key is an error outside the first block, and blanking
    /// the first would let the second declaration through, so the whole
    /// frontmatter is refused instead.
    #[test]
    fn a_duplicated_mcp_host_block_is_refused_not_spared() {
        let yaml = "mcp-host:\n  version: 1\nname: a\nmcp-host:\n  version: 1\n  run: []\n";
        let err = parse_sparing_block(yaml, 2, "mcp-host").unwrap_err();
        assert_eq!(err.rule, FmRule::DuplicateKey, "{err}");
    }

    /// A refusal reads as its message and, when it has one, its position:
    /// the `problems` detail and `skill-mcp check` both show it this way.
    #[test]
    fn a_refusal_shows_its_line_and_column() {
        let at = FrontmatterError {
            rule: FmRule::Syntax,
            message: "did not find expected key".into(),
            line: Some(3),
            column: Some(7),
        };
        assert_eq!(
            at.to_string(),
            "did not find expected key (line 3, column 7)"
        );
        let nowhere = FrontmatterError {
            line: None,
            column: None,
            ..at.clone()
        };
        assert_eq!(nowhere.to_string(), "did not find expected key");
        let half = FrontmatterError { column: None, ..at };
        assert_eq!(half.to_string(), "did not find expected key");
    }

    #[test]
    fn a_syntax_error_inside_mcp_host_spares_the_rest() {
        let yaml =
            "name: a\ndescription: d\nmcp-host:\n  version: 1\n  run: [\n    - x\nlicense: MIT\n";
        let (fm, block_err) = parse_sparing_block(yaml, 2, "mcp-host").unwrap();
        assert_eq!(fm.map.get("description"), Some(&Value::String("d".into())));
        assert!(fm.map.get("mcp-host").is_none());
        assert!(block_err.is_some());
        // Outside the block, the error stands.
        assert!(parse_sparing_block("name: [\nmcp-host:\n  version: 1\n", 2, "mcp-host").is_err());
    }

    proptest! {

        /// The parser never panics, whatever it is given.
        #[test]
        fn parse_never_panics(yaml in any::<String>()) {
            let _ = parse(&yaml, 2);
        }
    }
}
