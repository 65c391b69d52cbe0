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

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};
use serde_yaml_ng::{Mapping, Number, Value};

use crate::limits::MAX_FRONTMATTER_BYTES;

mod fixes;
pub mod keys;
pub mod simple;

pub(crate) use fixes::scalar;

/// Deepest nesting of collections accepted. Frontmatter is a few levels
/// deep; the bound keeps a `[[[[…` block from costing recursion.
const MAX_NESTING: usize = 32;

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
    /// Collections nested deeper than [`MAX_NESTING`].
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

/// SKILL.md cut into its frontmatter and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the delimiter lines.
    pub yaml: &'a str,
    /// The SKILL.md line number (1-based) of the YAML's first line.
    pub yaml_line: usize,
    /// Byte offset where the body starts; the body is `text[body_offset..]`,
    /// verbatim.
    pub body_offset: usize,
}

const BOM: &str = "\u{feff}";

/// Length of the line terminator at the start of `s` (`\n` or `\r\n`).
fn newline_len(s: &str) -> Option<usize> {
    if s.starts_with("\r\n") {
        Some(2)
    } else if s.starts_with('\n') {
        Some(1)
    } else {
        None
    }
}

/// Splits SKILL.md (spec FM-001). The file must start with a `---` line (a
/// UTF-8 byte-order mark before it is accepted: it belongs to the file, not
/// to the YAML). The block ends at the first line that is `---`, optionally
/// followed by spaces or tabs; the body is everything after that line's
/// terminator, byte for byte, CRLF and all.
pub fn split(text: &str) -> Result<Split<'_>, FrontmatterError> {
    let start = if text.starts_with(BOM) { BOM.len() } else { 0 };
    let rest = &text[start..];
    let opening = rest
        .strip_prefix("---")
        .and_then(newline_len)
        .ok_or_else(|| no_opening(rest))?;
    let yaml_start = start + 3 + opening;
    let mut pos = yaml_start;
    loop {
        let line_text = &text[pos..];
        if pos - yaml_start > MAX_FRONTMATTER_BYTES {
            return Err(too_large(pos - yaml_start));
        }
        if let Some(after) = line_text.strip_prefix("---") {
            let trimmed = after.trim_start_matches([' ', '\t']);
            let end = if trimmed.is_empty() {
                Some(0)
            } else {
                newline_len(trimmed)
            };
            if let Some(nl) = end {
                // Within the cap: the check at the top of this iteration
                // measured this same block (FM-004).
                let yaml = &text[yaml_start..pos];
                let body_offset = pos + 3 + (after.len() - trimmed.len()) + nl;
                return Ok(Split {
                    yaml,
                    yaml_line: 2,
                    body_offset,
                });
            }
        }
        match line_text.find('\n') {
            Some(i) => pos += i + 1,
            None => return Err(unclosed(&text[yaml_start..])),
        }
    }
}

/// A frontmatter over the cap, placed at its opening line.
fn too_large(bytes: usize) -> FrontmatterError {
    FrontmatterError {
        line: Some(1),
        column: Some(1),
        ..refuse(
            FmRule::TooLarge,
            format!(
                "SKILL.md frontmatter is over {MAX_FRONTMATTER_BYTES} bytes (at least {bytes}); the cap is 64 KiB: \
                 keep name, description and short fields in it, and move long text into the instructions below \
                 it or into a file of the skill"
            ),
        )
    }
}

/// SKILL.md whose first line (`rest`, after any byte-order mark) is not
/// `---`: placed at line 1, with the fix — the line made exactly `---`
/// when it nearly is, else the frontmatter to add.
fn no_opening(rest: &str) -> FrontmatterError {
    let first = rest.split('\n').next().unwrap_or("");
    let first = first.strip_suffix('\r').unwrap_or(first);
    let message = if first.trim() == "---"
        || (first.starts_with("---") && first[3..].trim().is_empty())
    {
        "SKILL.md begins with a line that is nearly \"---\" but holds spaces or tabs around it: \
         make the first line exactly \"---\""
            .to_owned()
    } else if first.trim().is_empty()
        && rest
            .split('\n')
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.trim() == "---")
    {
        "SKILL.md begins with a blank line, and its \"---\" comes after it: delete the blank lines before \
         \"---\", which must be the file's first line"
            .to_owned()
    } else if first.starts_with("---")
        && first[3..]
            .trim_start()
            .starts_with(|c: char| c.is_alphanumeric())
    {
        "SKILL.md begins with \"---\" and more on the same line: put \"---\" on a line of its own, \
         and the frontmatter on the lines below it"
            .to_owned()
    } else {
        "SKILL.md does not begin with a \"---\" frontmatter line: start the file with a line \"---\", \
         then name: <the folder's name> and description: <what the skill does, and when to use it>, \
         then a line \"---\", then the instructions"
            .to_owned()
    };
    FrontmatterError {
        line: Some(1),
        column: Some(1),
        ..refuse(FmRule::NoOpening, message)
    }
}

/// A frontmatter (`after`, the text after its opening line) that no line
/// closes: placed at a line that nearly closes it (`----`, `--- x`,
/// ` ---`) when there is one, with the line to write; else at the opening
/// line, saying where the closing line goes.
fn unclosed(after: &str) -> FrontmatterError {
    let near = after
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with("---"));
    let (line, message) = match near {
        Some((i, l)) => (
            i + 2,
            format!(
                "SKILL.md frontmatter is never closed by a \"---\" line: this line is {:?}, and only a line of \
                 exactly \"---\" closes it; make it \"---\"",
                l.chars().take(40).collect::<String>()
            ),
        ),
        None => (
            1,
            "SKILL.md frontmatter is never closed by a \"---\" line: the \"---\" on line 1 opens it and no \
             line of exactly \"---\" follows; add one after the frontmatter's last line, before the instructions"
                .to_owned(),
        ),
    };
    FrontmatterError {
        line: Some(line),
        column: Some(1),
        ..refuse(FmRule::Unclosed, message)
    }
}

/// One step of a path into the frontmatter, for positions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
    /// A key that is not a string (`1:`, `true:`, `? [a, b]`), by its
    /// compact YAML text: named so its value can be placed (FM-007).
    OtherKey(String),
}

/// A mapping key that is not a string, as its compact YAML text
/// (`1`, `true`, `null`, `[a, b]`), for positions and messages.
pub(crate) fn key_text(key: &Value) -> String {
    match serde_yaml_ng::to_string(key) {
        Ok(t) => {
            let t = t.trim();
            // A collection renders on several lines; one line names it.
            t.lines().map(str::trim).collect::<Vec<_>>().join(" ")
        }
        Err(_) => "?".to_owned(),
    }
}

/// Renders a path as `mcp-host.run[0].timeout`.
pub(crate) fn path_label(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
            Seg::OtherKey(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&format!("[{k}]"));
            }
        }
    }
    out
}

/// Where each node of the frontmatter starts in SKILL.md (line, column),
/// found by its path. Held as a tree while parsing, one node a YAML node,
/// each naming its parent and its own step: a node costs one entry (and
/// its key's text), not a copy of its whole path. Hashing every node's
/// path as it was met cost more than the YAML parser itself at boot, and
/// most frontmatter is never asked: the map by path is built on the first
/// lookup (only a note makes one), once, so a skill with many notes pays
/// for it once and no more.
#[derive(Debug, Default, Clone)]
pub(crate) struct Positions {
    nodes: Vec<PosNode>,
    by_path: OnceLock<HashMap<Vec<Seg>, (usize, usize)>>,
}

#[derive(Debug, Clone)]
struct PosNode {
    /// The enclosing node, or [`NO_PARENT`] for the root.
    parent: u32,
    /// The step from the parent, or `None` where the path does not grow (the
    /// root, a key that is a collection, a non-string key's value).
    seg: Option<Seg>,
    /// `None` for a collection used as a mapping key: it only carries the
    /// path on to what it holds.
    pos: Option<(usize, usize)>,
}

const NO_PARENT: u32 = u32::MAX;

impl Positions {
    /// The position of the node at `path`, if it exists; when two nodes
    /// share a path (a non-string key's value names its mapping's), the
    /// later one.
    pub(crate) fn get(&self, path: &[Seg]) -> Option<(usize, usize)> {
        self.by_path.get_or_init(|| self.index()).get(path).copied()
    }

    /// Every positioned node by its path, later nodes over earlier ones.
    fn index(&self) -> HashMap<Vec<Seg>, (usize, usize)> {
        let mut map = HashMap::with_capacity(self.nodes.len());
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(pos) = node.pos {
                map.insert(self.path_of(i), pos);
            }
        }
        map
    }

    /// Node `i`'s path, from the root.
    fn path_of(&self, mut i: usize) -> Vec<Seg> {
        let mut path = Vec::new();
        loop {
            let node = &self.nodes[i];
            if let Some(seg) = &node.seg {
                path.push(seg.clone());
            }
            if node.parent == NO_PARENT {
                path.reverse();
                return path;
            }
            i = node.parent as usize;
        }
    }

    /// Adds a node; its index is what its children name as their parent.
    fn push(&mut self, (parent, seg): (u32, Option<Seg>), pos: Option<(usize, usize)>) -> u32 {
        // Fewer nodes than bytes (64 KiB cap), so the index fits.
        let i = u32::try_from(self.nodes.len()).unwrap_or(NO_PARENT - 1);
        self.nodes.push(PosNode { parent, seg, pos });
        i
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
        return Err(too_large(yaml.len()));
    }
    let mut builder = Builder {
        yaml_line,
        stack: Vec::new(),
        root: None,
        positions: Positions::default(),
        docs: 0,
    };
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

/// A collection under construction.
/// Each names its own node in [`Positions`], which its children's paths
/// start from.
enum Open {
    Seq(Vec<Value>, u32),
    Map(Mapping, u32, Option<(Value, Span)>),
}

struct Builder {
    yaml_line: usize,
    stack: Vec<Open>,
    root: Option<Value>,
    positions: Positions,
    docs: usize,
}

impl Builder {
    /// The document read, which must be a mapping (FM-006). A refusal
    /// points at the first line that holds something, or, in an empty
    /// frontmatter, at the closing line, where the keys go.
    fn finish(self, yaml: &str) -> Result<Frontmatter, FrontmatterError> {
        match self.root {
            Some(Value::Mapping(map)) => Ok(Frontmatter {
                map,
                positions: self.positions,
            }),
            root => {
                let first = yaml.split('\n').position(|l| {
                    let l = l.trim();
                    !l.is_empty() && !l.starts_with('#')
                });
                let (line, message) = match (first, root) {
                    (Some(i), Some(_)) => (
                        self.yaml_line + i,
                        "SKILL.md frontmatter is not a mapping: write it as \"key: value\" lines, \
                         name: <the folder's name> and description: <what the skill does, and when to use it>",
                    ),
                    _ => (
                        self.yaml_line + yaml.matches('\n').count(),
                        "SKILL.md frontmatter is empty, so it is not a mapping: add the lines \
                         name: <the folder's name> and description: <what the skill does, and when to use it> \
                         between the two \"---\" lines",
                    ),
                };
                Err(FrontmatterError {
                    rule: FmRule::NotMapping,
                    message: message.to_owned(),
                    line: Some(line),
                    column: Some(1),
                })
            }
        }
    }

    fn at(&self, span: Span, rule: FmRule, message: String) -> FrontmatterError {
        FrontmatterError {
            rule,
            message,
            line: Some(span.start.line() + self.yaml_line - 1),
            column: Some(span.start.col() + 1),
        }
    }

    /// Where the node about to be placed hangs in [`Positions`]: its
    /// parent node and its step from there.
    fn next_path(&self) -> (u32, Option<Seg>) {
        match self.stack.last() {
            None => (NO_PARENT, None),
            Some(Open::Seq(items, node)) => (*node, Some(Seg::Index(items.len()))),
            Some(Open::Map(_, node, Some((Value::String(k), _)))) => {
                (*node, Some(Seg::Key(k.clone())))
            }
            // A non-string key's value is named by the key's text (FM-007).
            Some(Open::Map(_, node, Some((k, _)))) => (*node, Some(Seg::OtherKey(key_text(k)))),
            // A key itself: no path worth naming.
            Some(Open::Map(_, node, None)) => (*node, None),
        }
    }

    fn on_event(&mut self, event: Event<'_>, span: Span) -> Result<(), FrontmatterError> {
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => Ok(()),
            Event::DocumentStart(_) => {
                self.docs += 1;
                if self.docs > 1 {
                    return Err(self.at(
                        span,
                        FmRule::MultiDocument,
                        "SKILL.md frontmatter holds more than one YAML document".into(),
                    ));
                }
                Ok(())
            }
            Event::Alias(_) => Err(self.at(
                span,
                FmRule::AnchorOrAlias,
                "SKILL.md frontmatter uses a YAML alias, which is refused".into(),
            )),
            Event::Scalar(text, style, anchor, tag) => {
                self.no_anchor(anchor, span)?;
                let value = self.scalar(&text, style, tag.as_deref(), span)?;
                self.place(value, span)
            }
            Event::SequenceStart(anchor, tag) => {
                self.no_anchor(anchor, span)?;
                self.collection_tag(tag.as_deref(), "seq", span)?;
                self.open(Open::Seq(Vec::new(), NO_PARENT), span)
            }
            Event::MappingStart(anchor, tag) => {
                self.no_anchor(anchor, span)?;
                self.collection_tag(tag.as_deref(), "map", span)?;
                self.open(Open::Map(Mapping::new(), NO_PARENT, None), span)
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let value = match self.stack.pop() {
                    Some(Open::Seq(items, _)) => Value::Sequence(items),
                    Some(Open::Map(map, _, _)) => Value::Mapping(map),
                    None => return Ok(()),
                };
                self.place_built(value, span)
            }
        }
    }

    fn no_anchor(&self, anchor: usize, span: Span) -> Result<(), FrontmatterError> {
        if anchor != 0 {
            return Err(self.at(
                span,
                FmRule::AnchorOrAlias,
                "SKILL.md frontmatter uses a YAML anchor, which is refused".into(),
            ));
        }
        Ok(())
    }

    fn collection_tag(
        &self,
        tag: Option<&Tag>,
        want: &str,
        span: Span,
    ) -> Result<(), FrontmatterError> {
        match tag {
            None => Ok(()),
            Some(t) if t.handle == "tag:yaml.org,2002:" && t.suffix == want => Ok(()),
            Some(t) => Err(self.at(
                span,
                FmRule::Tag,
                format!(
                    "SKILL.md frontmatter uses the tag \"{}{}\", outside the YAML 1.2 core schema",
                    t.handle, t.suffix
                ),
            )),
        }
    }

    fn open(&mut self, mut open: Open, span: Span) -> Result<(), FrontmatterError> {
        if self.stack.len() >= MAX_NESTING {
            return Err(self.at(
                span,
                FmRule::TooDeep,
                format!("SKILL.md frontmatter nests deeper than {MAX_NESTING} levels"),
            ));
        }
        // A collection used as a mapping key is allowed by YAML and named by
        // nothing: its node has no position of its own.
        let pos = (!self.recording_key()).then(|| self.pos(span));
        let node = self.positions.push(self.next_path(), pos);
        match &mut open {
            Open::Seq(_, n) | Open::Map(_, n, _) => *n = node,
        }
        self.stack.push(open);
        Ok(())
    }

    fn pos(&self, span: Span) -> (usize, usize) {
        (span.start.line() + self.yaml_line - 1, span.start.col() + 1)
    }

    /// True when the next node is a mapping key.
    fn recording_key(&self) -> bool {
        matches!(self.stack.last(), Some(Open::Map(_, _, None)))
    }

    fn place(&mut self, value: Value, span: Span) -> Result<(), FrontmatterError> {
        if !self.recording_key() {
            let pos = self.pos(span);
            self.positions.push(self.next_path(), Some(pos));
        }
        self.place_built(value, span)
    }

    fn place_built(&mut self, value: Value, span: Span) -> Result<(), FrontmatterError> {
        match self.stack.last_mut() {
            None => {
                self.root = Some(value);
                Ok(())
            }
            Some(Open::Seq(items, _)) => {
                items.push(value);
                Ok(())
            }
            Some(Open::Map(map, _, pending)) => match pending.take() {
                None => {
                    if map.contains_key(&value) {
                        let shown = match &value {
                            Value::String(s) => format!("{s:?}"),
                            _ => "a key".to_owned(),
                        };
                        let at = (span.start.line() + self.yaml_line - 1, span.start.col() + 1);
                        return Err(FrontmatterError {
                            rule: FmRule::DuplicateKey,
                            message: format!(
                                "SKILL.md frontmatter repeats the key {shown} in one mapping"
                            ),
                            line: Some(at.0),
                            column: Some(at.1),
                        });
                    }
                    *pending = Some((value, span));
                    Ok(())
                }
                Some((key, _)) => {
                    map.insert(key, value);
                    Ok(())
                }
            },
        }
    }

    fn scalar(
        &self,
        text: &str,
        style: ScalarStyle,
        tag: Option<&Tag>,
        span: Span,
    ) -> Result<Value, FrontmatterError> {
        let Some(tag) = tag else {
            return if style == ScalarStyle::Plain {
                core_resolve(text).map_err(|m| self.at(span, FmRule::IntRange, m))
            } else {
                Ok(Value::String(text.to_owned()))
            };
        };
        if tag.handle != "tag:yaml.org,2002:" {
            return Err(self.at(
                span,
                FmRule::Tag,
                format!(
                    "SKILL.md frontmatter uses the tag \"{}{}\", outside the YAML 1.2 core schema",
                    tag.handle, tag.suffix
                ),
            ));
        }
        let resolved = core_resolve(text).map_err(|m| self.at(span, FmRule::IntRange, m))?;
        let bad = || {
            self.at(
                span,
                FmRule::Tag,
                format!(
                    "SKILL.md frontmatter tags {text:?} as !!{}, which it is not",
                    tag.suffix
                ),
            )
        };
        match tag.suffix.as_str() {
            "str" => Ok(Value::String(text.to_owned())),
            "null" if resolved.is_null() => Ok(Value::Null),
            "bool" if resolved.is_bool() => Ok(resolved),
            "int" if resolved.is_i64() || resolved.is_u64() => Ok(resolved),
            "float" => match resolved {
                Value::Number(n) => n
                    .as_f64()
                    .map(|f| Value::Number(Number::from(f)))
                    .ok_or_else(bad),
                _ => Err(bad()),
            },
            "null" | "bool" | "int" => Err(bad()),
            other => Err(self.at(
                span,
                FmRule::Tag,
                format!("SKILL.md frontmatter uses the tag \"!!{other}\" on a scalar"),
            )),
        }
    }
}

/// Resolves a plain scalar by the YAML 1.2 core schema (YAML 1.2.2
/// §10.3.2). `Err` only for an integer outside 64 bits.
pub(crate) fn core_resolve(s: &str) -> Result<Value, String> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        ".nan" | ".NaN" | ".NAN" => return Ok(Value::Number(Number::from(f64::NAN))),
        _ => {}
    }
    let (sign, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (-1.0, &s[1..]),
        Some(b'+') => (1.0, &s[1..]),
        _ => (1.0, s),
    };
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return Ok(Value::Number(Number::from(sign * f64::INFINITY)));
    }
    let range = || format!("the integer {s} is outside the 64-bit range");
    let digits = |t: &str, radix: u32| !t.is_empty() && t.chars().all(|c| c.is_digit(radix));
    if let Some(oct) = s.strip_prefix("0o").filter(|t| digits(t, 8)) {
        return u64::from_str_radix(oct, 8)
            .map(|n| Value::Number(n.into()))
            .map_err(|_| range());
    }
    if let Some(hex) = s.strip_prefix("0x").filter(|t| digits(t, 16)) {
        return u64::from_str_radix(hex, 16)
            .map(|n| Value::Number(n.into()))
            .map_err(|_| range());
    }
    if digits(unsigned, 10) {
        return if s.starts_with('-') {
            s.parse::<i64>()
                .map(|n| Value::Number(n.into()))
                .map_err(|_| range())
        } else {
            unsigned
                .parse::<u64>()
                .map(|n| Value::Number(n.into()))
                .map_err(|_| range())
        };
    }
    if is_core_float(unsigned)
        && let Ok(f) = unsigned.parse::<f64>()
    {
        return Ok(Value::Number(Number::from(sign * f)));
    }
    Ok(Value::String(s.to_owned()))
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, the sign already gone.
/// Rust's float parser reads what passes; this check keeps out what that
/// parser would take and the core schema leaves a string (`inf`, `nan`,
/// `infinity`, a second sign). Where the two agree (an empty fraction after
/// a bare dot, a malformed exponent) both refuse, so either check suffices.
fn is_core_float(s: &str) -> bool {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => !frac.is_empty() && all_digits(frac),
        Some((int, frac)) => !int.is_empty() && all_digits(int) && all_digits(frac),
        None => !mantissa.is_empty() && all_digits(mantissa),
    };
    let exponent_ok = match exponent {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && all_digits(e)
        }
    };
    mantissa_ok && exponent_ok
}

/// A reported, non-fatal finding in the frontmatter (an unknown key, a
/// field of the wrong type, a declaration entry ignored), with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl Note {
    /// A note placed at the node `path`, when the frontmatter has it.
    pub(crate) fn at(positions: &Positions, path: &[Seg], message: String) -> Note {
        let pos = positions.get(path);
        Note {
            message,
            line: pos.map(|p| p.0),
            column: pos.map(|p| p.1),
        }
    }
}

/// The skill's own top-level fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) when_to_use: Option<String>,
}

impl Fields {
    /// Reads `name`, `description` and `when-to-use` (or `when_to_use`),
    /// reporting those that are not strings (spec FM-007). Unknown keys
    /// are [`keys::unknown`]'s.
    pub fn read(fm: &Frontmatter) -> (Fields, Vec<Note>) {
        let mut notes = Vec::new();
        let mut string = |key: &str| match fm.map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(v) => {
                // YAML read a number, a boolean or a collection where text
                // was meant: the fix is the value written as text.
                let fix = match v {
                    Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => {
                        format!("write it as one line of text, {key}: \"…\"")
                    }
                    other => format!("quote it: {key}: {}", fixes::quote(&key_text(other))),
                };
                notes.push(Note::at(
                    &fm.positions,
                    &[Seg::Key(key.into())],
                    format!("frontmatter {key:?} is not a string (ignored); {fix}"),
                ));
                None
            }
        };
        let name = string("name");
        let description = string("description");
        let when_to_use = string("when-to-use").or_else(|| string("when_to_use"));
        (
            Fields {
                name,
                description,
                when_to_use,
            },
            notes,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    fn value_of(yaml: &str) -> Result<Value, FrontmatterError> {
        parse(&format!("k: {yaml}\n"), 2).map(|fm| fm.map.get("k").cloned().unwrap_or(Value::Null))
    }

    #[rstest]
    #[case("yes", Value::String("yes".into()))]
    #[case("no", Value::String("no".into()))]
    #[case("on", Value::String("on".into()))]
    #[case("off", Value::String("off".into()))]
    #[case("y", Value::String("y".into()))]
    #[case("True", Value::Bool(true))]
    #[case("FALSE", Value::Bool(false))]
    #[case("0o17", Value::Number(15.into()))]
    #[case("017", Value::Number(17.into()))]
    #[case("0x1F", Value::Number(31.into()))]
    #[case("0b101", Value::String("0b101".into()))]
    #[case("1_000", Value::String("1_000".into()))]
    #[case("-0x1F", Value::String("-0x1F".into()))]
    #[case("+12", Value::Number(12.into()))]
    #[case("-7", Value::Number((-7).into()))]
    #[case("~", Value::Null)]
    #[case("Null", Value::Null)]
    #[case("2001-12-14", Value::String("2001-12-14".into()))]
    #[case("1.10", Value::Number(Number::from(1.1)))]
    #[case("1e3", Value::Number(Number::from(1000.0)))]
    #[case(".5", Value::Number(Number::from(0.5)))]
    #[case("'017'", Value::String("017".into()))]
    #[case("\"yes\"", Value::String("yes".into()))]
    #[case("!!str 12", Value::String("12".into()))]
    #[case("!!int 12", Value::Number(12.into()))]
    #[case("!!float 1", Value::Number(Number::from(1.0)))]
    #[case("!!null ~", Value::Null)]
    #[case("!!bool TRUE", Value::Bool(true))]
    #[case("!!int -7", Value::Number((-7).into()))]
    #[case("!!int 18446744073709551615", Value::Number(u64::MAX.into()))]
    // What Rust's float parser would take but the core schema does not.
    #[case("inf", Value::String("inf".into()))]
    #[case("nan", Value::String("nan".into()))]
    #[case("+-1.5", Value::String("+-1.5".into()))]
    #[case("--1", Value::String("--1".into()))]
    fn plain_scalars_resolve_by_the_core_schema(#[case] yaml: &str, #[case] want: Value) {
        assert_eq!(value_of(yaml).unwrap(), want);
    }

    /// A collection may carry only its own core-schema tag.
    #[rstest]
    #[case("!!seq [1, 2]", Value::Sequence(vec![1.into(), 2.into()]))]
    #[case("!!map {x: 1}", Value::Mapping(Mapping::from_iter([("x".into(), 1.into())])))]
    fn collections_keep_their_own_core_tag(#[case] yaml: &str, #[case] want: Value) {
        assert_eq!(value_of(yaml).unwrap(), want);
    }

    #[test]
    fn infinities_and_nan_resolve() {
        assert_eq!(value_of(".inf").unwrap().as_f64(), Some(f64::INFINITY));
        assert_eq!(value_of("-.Inf").unwrap().as_f64(), Some(f64::NEG_INFINITY));
        assert!(value_of(".NaN").unwrap().as_f64().is_some_and(f64::is_nan));
    }

    #[rstest]
    #[case("a: &x 1\nb: 2\n", FmRule::AnchorOrAlias, 2, 4)]
    #[case("a: 1\nb: *x\n", FmRule::Syntax, 3, 4)]
    #[case("a: &x [1]\nb: *x\n", FmRule::AnchorOrAlias, 2, 4)]
    #[case("a: 1\na: 2\n", FmRule::DuplicateKey, 3, 1)]
    #[case("a:\n\t- 1\n", FmRule::Syntax, 3, 2)]
    #[case("a: [1, 2\nb: 3\n", FmRule::Syntax, 3, 2)]
    #[case("a: !foo bar\n", FmRule::Tag, 2, 4)]
    #[case("a: !!int nope\n", FmRule::Tag, 2, 4)]
    #[case("a: !!null x\n", FmRule::Tag, 2, 4)]
    #[case("a: !!bool yes\n", FmRule::Tag, 2, 4)]
    #[case("a: !!int 1.5\n", FmRule::Tag, 2, 4)]
    #[case("a: !!set {x: 1}\n", FmRule::Tag, 2, 4)]
    #[case("a: !!map [1]\n", FmRule::Tag, 2, 4)]
    #[case("a: !!seq {x: 1}\n", FmRule::Tag, 2, 4)]
    #[case("a: !list [1]\n", FmRule::Tag, 2, 4)]
    #[case("a: 99999999999999999999\n", FmRule::IntRange, 2, 4)]
    #[case("a: 1\n---\nb: 2\n", FmRule::MultiDocument, 3, 1)]
    fn strict_rules_refuse_with_a_position(
        #[case] yaml: &str,
        #[case] rule: FmRule,
        #[case] line: usize,
        #[case] column: usize,
    ) {
        let err = parse(yaml, 2).unwrap_err();
        assert_eq!(err.rule, rule, "{err}");
        assert_eq!((err.line, err.column), (Some(line), Some(column)), "{err}");
    }

    #[rstest]
    #[case("")]
    #[case("# only a comment\n")]
    #[case("- a\n- b\n")]
    #[case("just a string\n")]
    fn non_mappings_are_refused(#[case] yaml: &str) {
        assert_eq!(parse(yaml, 2).unwrap_err().rule, FmRule::NotMapping);
    }

    #[test]
    fn an_alias_bomb_is_refused_before_any_expansion() {
        let mut yaml = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..9 {
            yaml.push_str(&format!(
                "b{i}: &b{i} [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            ));
        }
        assert_eq!(parse(&yaml, 2).unwrap_err().rule, FmRule::AnchorOrAlias);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let yaml = format!("a: {}{}\n", "[".repeat(40), "]".repeat(40));
        assert_eq!(parse(&yaml, 2).unwrap_err().rule, FmRule::TooDeep);
        // Far deeper: the parser's own limit refuses it first; either way,
        // a refusal and no stack overflow.
        let yaml = format!("a: {}{}\n", "[".repeat(30_000), "]".repeat(30_000));
        assert!(parse(&yaml, 2).is_err());
    }

    #[test]
    fn star_and_ampersand_inside_scalars_are_fine() {
        let fm = parse("a: \"*x &y\"\nb: x*y&z\n", 2).unwrap();
        assert_eq!(fm.map.get("b"), Some(&Value::String("x*y&z".into())));
    }

    #[test]
    fn positions_name_each_node() {
        let fm = parse(
            "name: x\nmcp-host:\n  run:\n    - script: a.js\n      timeout: 5\n",
            2,
        )
        .unwrap();
        let path = [
            Seg::Key("mcp-host".into()),
            Seg::Key("run".into()),
            Seg::Index(0),
            Seg::Key("timeout".into()),
        ];
        assert_eq!(fm.positions.get(&path), Some((6, 16)));
        assert_eq!(path_label(&path), "mcp-host.run[0].timeout");
    }

    #[rstest]
    #[case("---\nname: a\n---\nbody", "name: a\n", "body")]
    #[case("---\r\nname: a\r\n---\r\nbody\r\n", "name: a\r\n", "body\r\n")]
    #[case("\u{feff}---\nname: a\n---\n\u{feff}body", "name: a\n", "\u{feff}body")]
    #[case("---\nname: a\n---  \t\nbody", "name: a\n", "body")]
    #[case("---\nname: a\n---", "name: a\n", "")]
    #[case("---\n---\n", "", "")]
    #[case("---\na: 1\n---\n---\nmore", "a: 1\n", "---\nmore")]
    fn split_finds_block_and_body(#[case] text: &str, #[case] yaml: &str, #[case] body: &str) {
        let s = split(text).unwrap();
        assert_eq!(s.yaml, yaml);
        assert_eq!(&text[s.body_offset..], body);
    }

    #[rstest]
    #[case("", FmRule::NoOpening)]
    #[case("# Title\n", FmRule::NoOpening)]
    #[case("--- \nname: a\n---\n", FmRule::NoOpening)]
    #[case("---\nname: a\n", FmRule::Unclosed)]
    #[case("---\nname: a\n----\n", FmRule::Unclosed)]
    fn split_refuses(#[case] text: &str, #[case] rule: FmRule) {
        assert_eq!(split(text).unwrap_err().rule, rule);
    }

    /// Each refusal of the split says where (the line to edit, column 1)
    /// and what to write (issue 41 §3).
    #[rstest]
    #[case(
        "# Title\nname: a\n",
        1,
        "SKILL.md does not begin with a \"---\" frontmatter line: start the file with a line \"---\", then name: <the folder's name> and description: <what the skill does, and when to use it>, then a line \"---\", then the instructions"
    )]
    #[case(
        "--- \nname: a\n---\n",
        1,
        "SKILL.md begins with a line that is nearly \"---\" but holds spaces or tabs around it: make the first line exactly \"---\""
    )]
    #[case(
        "\n---\nname: a\n---\n",
        1,
        "SKILL.md begins with a blank line, and its \"---\" comes after it: delete the blank lines before \"---\", which must be the file's first line"
    )]
    #[case(
        "---name: a\n---\n",
        1,
        "SKILL.md begins with \"---\" and more on the same line: put \"---\" on a line of its own, and the frontmatter on the lines below it"
    )]
    #[case(
        "---\nname: a\n----\nbody\n",
        3,
        "SKILL.md frontmatter is never closed by a \"---\" line: this line is \"----\", and only a line of exactly \"---\" closes it; make it \"---\""
    )]
    #[case(
        "---\nname: a\n\n# Body\n",
        1,
        "SKILL.md frontmatter is never closed by a \"---\" line: the \"---\" on line 1 opens it and no line of exactly \"---\" follows; add one after the frontmatter's last line, before the instructions"
    )]
    fn split_refusals_say_where_and_what_to_write(
        #[case] text: &str,
        #[case] line: usize,
        #[case] message: &str,
    ) {
        let e = split(text).unwrap_err();
        assert_eq!(e.message, message);
        assert_eq!((e.line, e.column), (Some(line), Some(1)));
    }

    /// A frontmatter that is no mapping points at its first line, or, when
    /// empty, at the closing line where the keys go.
    #[test]
    fn a_frontmatter_that_is_no_mapping_says_what_to_write_and_where() {
        let e = parse("", 2).unwrap_err();
        assert_eq!((e.line, e.column), (Some(2), Some(1)));
        assert!(
            e.message.starts_with(
                "SKILL.md frontmatter is empty, so it is not a mapping: add the lines name: "
            ),
            "{}",
            e.message
        );
        let e = parse("# c\n- a\n- b\n", 2).unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(1)));
        assert!(
            e.message.starts_with(
                "SKILL.md frontmatter is not a mapping: write it as \"key: value\" lines"
            ),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_block_over_64_kib_is_refused() {
        let text = format!(
            "---\ndescription: {}\n---\nbody",
            "x".repeat(MAX_FRONTMATTER_BYTES)
        );
        assert_eq!(split(&text).unwrap_err().rule, FmRule::TooLarge);
        let unclosed = format!("---\n{}", "a: b\n".repeat(20_000));
        assert_eq!(split(&unclosed).unwrap_err().rule, FmRule::TooLarge);
    }

    /// A frontmatter block of exactly `len` bytes: a name, a description,
    /// and a comment line padding it out.
    fn block(len: usize) -> String {
        let mut yaml = String::from("name: a\ndescription: d\n");
        yaml.push_str(&"#".repeat(len - yaml.len() - 1));
        yaml.push('\n');
        assert_eq!(yaml.len(), len);
        yaml
    }

    /// FM-004's boundary, from both of split's checks (the running one at
    /// each line start and the final one at the closing line): a block of
    /// exactly 64 KiB passes, one byte more is refused, and the refusal
    /// says how many bytes it saw. The numbers are spelt out, not taken
    /// from the constant under test.
    #[test]
    fn the_64_kib_cap_is_exact() {
        // With a BOM and CRLF the block starts further into the file, which
        // a cap on the offset instead of the block's length would miss.
        for (open, close) in [("---\n", "---\n"), ("\u{feff}---\r\n", "---\r\n")] {
            let at_cap = format!("{open}{}{close}body", block(65_536));
            let s = split(&at_cap).unwrap();
            assert_eq!(s.yaml.len(), 65_536);
            assert_eq!(&at_cap[s.body_offset..], "body");
            let over = format!("{open}{}{close}body", block(65_537));
            let e = split(&over).unwrap_err();
            assert_eq!(e.rule, FmRule::TooLarge);
            assert!(e.message.contains("(at least 65537)"), "{}", e.message);
        }
        // An unclosed block is stopped by the running check at the first
        // line start past the cap, and says where it got to.
        let line = "a: b\n";
        let unclosed = format!("---\n{}", line.repeat(65_536 / line.len() + 2));
        let e = split(&unclosed).unwrap_err();
        assert_eq!(e.rule, FmRule::TooLarge);
        let seen = 65_536 / line.len() * line.len() + line.len();
        assert!(
            e.message.contains(&format!("(at least {seen})")),
            "{}",
            e.message
        );
    }

    /// parse() holds the same 64 KiB cap for callers that did not split
    /// (FM-004): exactly 65,536 bytes parse, one more is refused.
    #[test]
    fn parse_holds_the_cap_too() {
        assert!(parse(&block(65_536), 2).is_ok());
        assert_eq!(parse(&block(65_537), 2).unwrap_err().rule, FmRule::TooLarge);
    }

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
        /// Any body survives the split byte for byte.
        #[test]
        fn any_body_survives_split(body in any::<String>(), crlf in any::<bool>()) {
            let nl = if crlf { "\r\n" } else { "\n" };
            let text = format!("---{nl}name: x{nl}description: y{nl}---{nl}{body}");
            let s = split(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&text[s.body_offset..], body.as_str());
        }

        /// The parser never panics, whatever it is given.
        #[test]
        fn parse_never_panics(yaml in any::<String>()) {
            let _ = parse(&yaml, 2);
        }
    }
}
