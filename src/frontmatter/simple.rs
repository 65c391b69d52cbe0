//! A fast reader for the frontmatter most skills write, giving the same
//! events as `saphyr-parser` or none at all.
//!
//! At boot every SKILL.md's YAML is read, and saphyr's scanner (one
//! character at a time, a token queue, a string per scalar) was a fifth of
//! the scan's time at 10,000 skills. Most frontmatter is a handful of lines
//! in one small shape: `key: value` lines, nested by indentation, block
//! sequences of scalars or compact mappings, one-line flow sequences of
//! plain words, and one-line quoted strings without escapes. This reader
//! takes that shape a line at a time and hands the builder the very events
//! saphyr would. It decides nothing of its own: anything outside the shape,
//! well-formed or not, returns `None` and the text goes to saphyr, so every
//! strict rule (FM-002..FM-006) and every error message stays saphyr's and
//! the builder's. What it accepts, it must read exactly as saphyr does; the
//! tests here hold it to that on generated documents, both in the shape
//! and just outside it.
//!
//! The shape, precisely (anything else is `None`):
//! - the text is printable: no tab, no CR, no control or line-separator
//!   character, no byte-order mark;
//! - lines that are blank or whose first non-space character is `#` are
//!   skipped; every other line starts with spaces only;
//! - the root is a block mapping whose keys sit in column 1;
//! - a key is `[A-Za-z0-9_][A-Za-z0-9_.-]*` (at most 200 bytes), directly
//!   followed by `:` and then a space or the end of the line;
//! - a value on the key's line is one of: a plain scalar that does not
//!   start with an indicator (`-?:,[]{}#&*!|>'"%@` and backquote) and holds
//!   neither `: ` nor ` #` nor a final `:`; a `"…"` without `\` or a second
//!   `"`; a `'…'` without a second `'`; a flow sequence `[a, b]` of plain
//!   items without `,:#"'?[]{}`, no word of them starting with an
//!   indicator. Only spaces may follow it;
//! - a key with nothing after it is followed by a more indented block
//!   mapping or block sequence, or by a block sequence at its own
//!   indentation;
//! - a block sequence entry is `- ` and then a value as above or a compact
//!   mapping (`- key: value`, its further keys aligned under the first);
//! - no line continues the one before it (a more indented line after a
//!   value), and nesting is at most [`MAX_FAST_YAML_DEPTH`] deep.
//!
//! The events' spans carry what the builder reads, each node's start line
//! and column (saphyr counts columns in characters); the character index is
//! not computed and end markers repeat the start.

use std::borrow::Cow;

use crate::limits::{MAX_FAST_YAML_DEPTH, MAX_FAST_YAML_KEY_BYTES};
use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Span};

/// The events of a document, in saphyr's order, each with its span.
pub(crate) type Events<'a> = Vec<(Event<'a>, Span)>;

/// The events saphyr gives for `yaml`, when `yaml` is in the shape above.
pub(crate) fn events(yaml: &str) -> Option<Events<'_>> {
    if !printable(yaml) {
        return None;
    }
    let lines = content_lines(yaml);
    let first = lines.first()?;
    if first.indent != 0 || key_len(first.text).is_none() {
        return None;
    }
    let mut reader = Reader {
        lines,
        at: 0,
        out: Vec::with_capacity(64),
    };
    reader.emit(Event::StreamStart, 1, 0);
    reader.emit(Event::DocumentStart(false), 1, 0);
    reader.mapping(0, 1)?;
    if reader.at != reader.lines.len() {
        return None;
    }
    let end = reader.lines.last().map_or(1, |l| l.no + 1);
    reader.emit(Event::DocumentEnd, end, 0);
    reader.emit(Event::StreamEnd, end, 0);
    Some(reader.out)
}

/// Every character is one YAML prints as itself, and none of the few that
/// saphyr treats specially outside ASCII.
fn printable(yaml: &str) -> bool {
    if yaml.is_ascii() {
        return yaml
            .bytes()
            .all(|b| b == b'\n' || (b' '..=b'~').contains(&b));
    }
    yaml.chars().all(|c| match c {
        '\n' | ' '..='~' => true,
        '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}' => false,
        c => c >= '\u{a0}',
    })
}

/// A line that holds a node.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    /// 1-based line number in the YAML.
    no: usize,
    /// Leading spaces.
    indent: usize,
    /// The whole line.
    text: &'a str,
    /// Whether byte offsets in the line are character offsets too.
    ascii: bool,
}

impl Line<'_> {
    /// Column, in characters, of byte offset `at`.
    fn col(&self, at: usize) -> usize {
        if self.ascii {
            at
        } else {
            self.text[..at].chars().count()
        }
    }

    fn rest(&self) -> &str {
        &self.text[self.indent..]
    }

    /// True for a block sequence entry: `-` then a space or the end.
    fn is_entry(&self) -> bool {
        let r = self.rest().as_bytes();
        r.first() == Some(&b'-') && r.get(1).is_none_or(|b| *b == b' ')
    }
}

/// The lines that hold nodes (tabs are refused already, so what leads a
/// line is spaces).
fn content_lines(yaml: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::with_capacity(32);
    for (i, text) in yaml.split('\n').enumerate() {
        let indent = spaces(text);
        match text.as_bytes().get(indent) {
            None | Some(b'#') => continue,
            Some(_) => lines.push(Line {
                no: i + 1,
                indent,
                text,
                ascii: text.is_ascii(),
            }),
        }
    }
    lines
}

/// How many spaces `s` starts with.
fn spaces(s: &str) -> usize {
    s.len() - s.trim_start_matches(' ').len()
}

/// Length of the key at the start of `s` when `s` starts `key:` followed
/// by a space or the end.
fn key_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let first = *b.first()?;
    if !(first.is_ascii_alphanumeric() || first == b'_') {
        return None;
    }
    let len = b
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')))?;
    let ok = len <= MAX_FAST_YAML_KEY_BYTES
        && b[len] == b':'
        && b.get(len + 1).is_none_or(|c| *c == b' ');
    ok.then_some(len)
}

/// Characters that may not start a plain scalar here.
fn is_indicator(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

struct Reader<'a> {
    lines: Vec<Line<'a>>,
    /// The next line to read.
    at: usize,
    out: Events<'a>,
}

impl<'a> Reader<'a> {
    fn emit(&mut self, event: Event<'a>, line: usize, col: usize) {
        let m = Marker::new(0, line, col);
        self.out.push((event, Span::new(m, m)));
    }

    fn scalar(&mut self, text: &'a str, style: ScalarStyle, line: usize, col: usize) {
        self.emit(
            Event::Scalar(Cow::Borrowed(text), style, 0, None),
            line,
            col,
        );
    }

    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.at).copied()
    }

    /// A block mapping whose keys sit at column `indent`; its first key is
    /// on the current line at byte `indent` (after `- ` in a sequence entry,
    /// which is spaces and ASCII, so bytes and columns agree).
    fn mapping(&mut self, indent: usize, depth: usize) -> Option<()> {
        if depth > MAX_FAST_YAML_DEPTH {
            return None;
        }
        let line = self.peek()?;
        self.emit(Event::MappingStart(0, None), line.no, indent);
        loop {
            self.entry(indent, depth)?;
            match self.peek() {
                Some(next) if next.indent == indent && !next.is_entry() => {}
                Some(next) if next.indent >= indent => return None,
                _ => break,
            }
        }
        let end = self.peek().map_or(line.no, |l| l.no);
        self.emit(Event::MappingEnd, end, 0);
        Some(())
    }

    /// One `key: value` of a mapping at `indent`, from the current line on.
    fn entry(&mut self, indent: usize, depth: usize) -> Option<()> {
        let line = self.peek()?;
        let rest = &line.text[indent..];
        let len = key_len(rest)?;
        self.scalar(&rest[..len], ScalarStyle::Plain, line.no, indent);
        let after = indent + len + 1;
        let value = after + spaces(&line.text[after..]);
        if value < line.text.len() {
            self.inline(line, value)?;
            self.at += 1;
            return self.no_continuation(indent);
        }
        self.at += 1;
        match self.peek() {
            Some(next) if next.indent > indent && next.is_entry() => {
                self.sequence(next.indent, depth + 1, false)
            }
            Some(next) if next.indent > indent => {
                key_len(next.rest())?;
                self.mapping(next.indent, depth + 1)
            }
            Some(next) if next.indent == indent && next.is_entry() => {
                self.sequence(indent, depth + 1, true)
            }
            // An empty value: saphyr places its null where this reader
            // would have to guess.
            _ => None,
        }
    }

    /// A block sequence whose `-` sit at column `indent`, from the current
    /// line (an entry) on. `indentless` when it sits at its key's own
    /// indentation: saphyr then starts it where the first entry's value
    /// starts, not at its `-`.
    fn sequence(&mut self, indent: usize, depth: usize, indentless: bool) -> Option<()> {
        if depth > MAX_FAST_YAML_DEPTH {
            return None;
        }
        let first = self.peek()?;
        let mut started = false;
        loop {
            let line = self.peek()?;
            let after = indent + 1;
            let value = after + spaces(&line.text[after..]);
            // `-` alone (a nested block follows) or `- -` (a nested
            // sequence, or a negative number): saphyr's.
            if value == line.text.len() || line.text.as_bytes()[value] == b'-' {
                return None;
            }
            if !started {
                let col = if indentless { value } else { indent };
                self.emit(Event::SequenceStart(0, None), first.no, col);
                started = true;
            }
            if key_len(&line.text[value..]).is_some() {
                self.mapping(value, depth + 1)?;
            } else {
                self.inline(line, value)?;
                self.at += 1;
                self.no_continuation(indent)?;
            }
            match self.peek() {
                Some(next) if next.indent == indent && next.is_entry() => {}
                Some(next) if next.indent > indent => return None,
                _ => break,
            }
        }
        let end = self.peek().map_or(first.no, |l| l.no);
        self.emit(Event::SequenceEnd, end, 0);
        Some(())
    }

    /// After a value on its key's (or entry's) line, a more indented line
    /// would continue a plain scalar over lines, or be an error: saphyr's.
    fn no_continuation(&self, indent: usize) -> Option<()> {
        match self.peek() {
            Some(next) if next.indent > indent => None,
            _ => Some(()),
        }
    }

    /// A value that ends with its line, starting at byte `at`.
    fn inline(&mut self, line: Line<'a>, at: usize) -> Option<()> {
        let r = line.text[at..].trim_end_matches(' ');
        let col = line.col(at);
        let first = *r.as_bytes().first()?;
        match first {
            b'"' | b'\'' => {
                let quote = char::from(first);
                let inner = r[1..].strip_suffix(quote)?;
                if inner.contains(quote) || (first == b'"' && inner.contains('\\')) {
                    return None;
                }
                let style = if first == b'"' {
                    ScalarStyle::DoubleQuoted
                } else {
                    ScalarStyle::SingleQuoted
                };
                self.scalar(inner, style, line.no, col);
            }
            b'[' => self.flow_sequence(line, at, r)?,
            b if is_indicator(b) => return None,
            _ => {
                if r.contains(": ") || r.contains(" #") || r.ends_with(':') {
                    return None;
                }
                self.scalar(r, ScalarStyle::Plain, line.no, col);
            }
        }
        Some(())
    }

    /// `[a, b c, d]` on one line, `r` starting at byte `at` of `line`.
    fn flow_sequence(&mut self, line: Line<'a>, at: usize, r: &'a str) -> Option<()> {
        let inner = r[1..].strip_suffix(']')?;
        let open = line.col(at);
        self.emit(Event::SequenceStart(0, None), line.no, open);
        // Columns are counted on as the items go, not from the line's start
        // for each: 20,000 items on a 64 KiB line of non-ASCII text would
        // otherwise count a billion characters.
        let mut col = open + 1;
        if !inner.bytes().all(|b| b == b' ') {
            for (k, item) in inner.split(',').enumerate() {
                if k > 0 {
                    col += 1; // the comma
                }
                let lead = spaces(item);
                let word = item.trim_matches(' ');
                // In a flow, saphyr looks at each word's start again (`b -`
                // is an error there), so no word may start with an
                // indicator.
                let ok = !word.is_empty()
                    && word
                        .split(' ')
                        .all(|w| w.bytes().next().is_none_or(|b| !is_indicator(b)))
                    && !word.bytes().any(|b| {
                        matches!(
                            b,
                            b',' | b':' | b'#' | b'"' | b'\'' | b'?' | b'[' | b']' | b'{' | b'}'
                        )
                    });
                if !ok {
                    return None;
                }
                // The lead is spaces: a character a byte.
                self.scalar(word, ScalarStyle::Plain, line.no, col + lead);
                col += if line.ascii {
                    item.len()
                } else {
                    item.chars().count()
                };
            }
        } else {
            col += inner.len();
        }
        self.emit(Event::SequenceEnd, line.no, col);
        Some(())
    }
}

/// What the builder reads of an event: the event, and for a node its
/// start line and column.
type Seen<'a> = Vec<(Event<'a>, Option<(usize, usize)>)>;

fn seen<'a>(events: impl IntoIterator<Item = (Event<'a>, Span)>) -> Seen<'a> {
    events
        .into_iter()
        .map(|(e, s)| {
            let node = matches!(
                e,
                Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..)
            );
            let at = node.then(|| (s.start.line(), s.start.col()));
            (e, at)
        })
        .collect()
}

/// saphyr's events for `yaml`, or its error.
fn saphyr(yaml: &str) -> Result<Seen<'_>, String> {
    let mut out = Vec::new();
    for ev in Parser::new_from_str(yaml) {
        match ev {
            Ok(pair) => out.push(pair),
            Err(e) => {
                return Err(format!(
                    "{} at {}:{}",
                    e.info(),
                    e.marker().line(),
                    e.marker().col()
                ));
            }
        }
    }
    Ok(seen(out))
}

/// The reader's contract, for its tests and the `frontmatter_fast` fuzz
/// target: what it accepts, saphyr reads without error to the same
/// events at the same places. `Ok(false)` when the reader
/// leaves `yaml` to saphyr; `Err` says how they differ.
pub fn agrees(yaml: &str) -> Result<bool, String> {
    let Some(fast) = events(yaml) else {
        return Ok(false);
    };
    let fast = seen(fast);
    match saphyr(yaml) {
        Ok(slow) if slow == fast => Ok(true),
        Ok(slow) => {
            let i = fast.iter().zip(&slow).take_while(|(a, b)| a == b).count();
            Err(format!(
                "on {yaml:?}, event {i}: here {:?}, saphyr {:?}",
                fast.get(i),
                slow.get(i)
            ))
        }
        Err(e) => Err(format!(
            "on {yaml:?} saphyr says {e}, this reader accepted it"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bench_frontmatter_is_read_here_as_saphyr_reads_it() {
        let yaml = "name: sheets-guide-00199\ndescription: Builds, checks and exports guide documents; use it (ref00199).\nwhen-to-use: When the user asks for a guide, or to check references/guide.md.\nlicense: MIT\nallowed-tools: skill_file skill_run\nmetadata:\n  author: bench\n  version: \"1.199\"\n  tags: 'sheets, guide'\nmcp-host:\n  version: 1\n  run:\n    - script: scripts/noop.js\n      interpreter: node\n      timeout: 15\n    - script: scripts/build.js\n      env: [BENCH_API_KEY, BENCH_REGION]\n  env:\n  - name: BENCH_API_KEY\n    secret: true\n  egress: [api.example.com, cdn.example.com]\n";
        assert_eq!(agrees(yaml), Ok(true));
    }

    /// Columns in a long flow sequence of non-ASCII words, counted on item
    /// by item, are saphyr's (character) columns.
    #[test]
    fn a_long_non_ascii_flow_line_is_placed_as_saphyr_places_it() {
        let items: Vec<String> = (0..3000).map(|i| format!("é{i} 日本")).collect();
        let yaml = format!("name: x\ntags: [{}]\nafter: [ ]\n", items.join(",  "));
        assert_eq!(agrees(&yaml), Ok(true));
    }

    /// A frontmatter tree in the reader's shape, with the choices of how
    /// it is written (indent steps, quoting, indentless sequences) in it.
    #[derive(Debug, Clone)]
    enum Node {
        Plain(String),
        Quoted(String, bool),
        Flow(Vec<String>),
        /// Entries, and the extra indent of the children.
        Map(Vec<(String, Node)>, usize),
        /// Items, the extra indent, whether it sits at its key's indent,
        /// and spaces after each `-`.
        Seq(Vec<Node>, usize, bool, usize),
    }

    const KEYS: &[&str] = &[
        "name",
        "description",
        "a",
        "b_c",
        "x.y",
        "k-1",
        "1",
        "true",
        "null",
        "mcp-host",
        "run",
        "env",
        "script",
        "_",
        "0x1F",
    ];
    /// Words a plain scalar may hold; the first word may not start with
    /// an indicator, so those come second.
    const WORDS: &[&str] = &[
        "a",
        "b-c",
        "1.5",
        "15",
        "http://x.y/z",
        "it's",
        "C#",
        "x,y",
        "(p)",
        "é",
        "—",
        "日本",
        "true",
        "~",
        "null",
        "0x1F",
        ".inf",
        "1e3",
        "a:b",
        "\u{a0}",
        "...",
        "$HOME",
        "a\\b",
        "<x>",
        "+1",
        "=",
        "🙂",
    ];
    const LATER_WORDS: &[&str] = &[
        "[t]", "{u}", "-", "--x", "&a", "*b", "!c", "|", ">", "%", "@", "`q`", "'s'", "\"q\"", "?",
    ];

    fn plain() -> impl Strategy<Value = String> {
        (
            prop::sample::select(WORDS),
            prop::collection::vec(
                prop_oneof![
                    prop::sample::select(WORDS),
                    prop::sample::select(LATER_WORDS)
                ],
                0..4,
            ),
        )
            .prop_map(|(first, rest)| {
                let mut s = first.to_owned();
                for w in rest {
                    s.push(' ');
                    s.push_str(w);
                }
                s
            })
    }

    fn flow_word() -> impl Strategy<Value = String> {
        prop::sample::select(
            &[
                "a", "b c", "API_KEY", "x.y", "é", "1", "true", "~", "a-b", "/p", "日本",
            ][..],
        )
        .prop_map(str::to_owned)
    }

    fn node() -> impl Strategy<Value = Node> {
        let leaf = prop_oneof![
            3 => plain().prop_map(Node::Plain),
            1 => ("[^\"\\\\\n\t\r\u{85}\u{2028}\u{2029}\u{feff}\u{0}-\u{1f}\u{7f}-\u{9f}]{0,12}", any::<bool>())
                .prop_map(|(s, d)| Node::Quoted(if d { s } else { s.replace('\'', "") }, d)),
            1 => prop::collection::vec(flow_word(), 0..4).prop_map(Node::Flow),
        ];
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                (
                    prop::collection::vec(
                        (
                            prop::sample::select(KEYS).prop_map(str::to_owned),
                            inner.clone()
                        ),
                        1..5
                    ),
                    1..4usize
                )
                    .prop_map(|(e, step)| Node::Map(e, step)),
                (
                    prop::collection::vec(inner.prop_map(no_seq_in_seq), 1..4),
                    1..4usize,
                    any::<bool>(),
                    1..3usize
                )
                    .prop_map(|(items, step, indentless, gap)| Node::Seq(
                        items, step, indentless, gap
                    )),
            ]
        })
    }

    /// `- - x` is outside the shape: a sequence in a sequence is put
    /// under a key instead.
    fn no_seq_in_seq(n: Node) -> Node {
        match n {
            Node::Seq(..) => Node::Map(vec![("a".to_owned(), n)], 2),
            n => n,
        }
    }

    /// Writes the value of a key (or an entry) that sits at `indent`,
    /// `out` ending just after its `:` (or `-`).
    fn value(node: &Node, indent: usize, out: &mut String) {
        match node {
            Node::Plain(s) => {
                out.push(' ');
                out.push_str(s);
                out.push('\n');
            }
            Node::Quoted(s, double) => {
                let q = if *double { '"' } else { '\'' };
                out.push(' ');
                out.push(q);
                out.push_str(s);
                out.push(q);
                out.push('\n');
            }
            Node::Flow(items) => {
                out.push_str(" [");
                out.push_str(&items.join(", "));
                out.push_str("]\n");
            }
            Node::Map(entries, step) => {
                out.push('\n');
                map(entries, indent + step, out);
            }
            Node::Seq(items, step, indentless, gap) => {
                out.push('\n');
                seq(
                    items,
                    if *indentless { indent } else { indent + step },
                    *gap,
                    out,
                );
            }
        }
    }

    fn map(entries: &[(String, Node)], indent: usize, out: &mut String) {
        for (k, v) in entries {
            out.push_str(&" ".repeat(indent));
            map_entry(k, v, indent, out);
        }
    }

    /// `k:` and its value, the line's indentation already written.
    fn map_entry(k: &str, v: &Node, indent: usize, out: &mut String) {
        out.push_str(k);
        out.push(':');
        // A nested sequence at the key's indent only where the key has
        // lines of its own to sit under.
        value(v, indent, out);
    }

    fn seq(items: &[Node], indent: usize, gap: usize, out: &mut String) {
        for item in items {
            out.push_str(&" ".repeat(indent));
            out.push('-');
            match item {
                Node::Map(entries, _) => {
                    let col = indent + 1 + gap;
                    out.push_str(&" ".repeat(gap));
                    for (i, (k, v)) in entries.iter().enumerate() {
                        if i > 0 {
                            out.push_str(&" ".repeat(col));
                        }
                        map_entry(k, v, col, out);
                    }
                }
                other => value(other, indent, out),
            }
        }
    }

    fn document(entries: &[(String, Node)], decor: &[(usize, bool)]) -> String {
        let mut out = String::new();
        map(entries, 0, &mut out);
        let mut lines: Vec<&str> = out.split_inclusive('\n').collect();
        for &(at, comment) in decor {
            let at = at % (lines.len() + 1);
            lines.insert(
                at,
                if comment {
                    "  # a comment: here\n"
                } else {
                    "   \n"
                },
            );
        }
        lines.concat()
    }

    fn documents() -> impl Strategy<Value = String> {
        (
            prop::collection::vec(
                (prop::sample::select(KEYS).prop_map(str::to_owned), node()),
                1..6,
            ),
            prop::collection::vec((any::<usize>(), any::<bool>()), 0..3),
        )
            .prop_map(|(entries, decor)| document(&entries, &decor))
    }

    /// Characters that sit on the shape's edges.
    const EDGES: &[char] = &[
        ' ', '\t', '\n', '\r', '#', ':', '-', '"', '\'', '[', ']', '{', '}', ',', '&', '*', '!',
        '|', '>', '?', '%', '@', '`', '\\', 'é', '\u{a0}', '\u{85}', '\u{2028}', '\u{feff}', 'x',
        '0', '.', '~',
    ];

    /// One edit: insert, delete or replace at a place, with an edge
    /// character.
    fn mutate(doc: &str, edits: &[(usize, u8, usize)]) -> String {
        let mut chars: Vec<char> = doc.chars().collect();
        for &(at, kind, c) in edits {
            let c = EDGES[c % EDGES.len()];
            let at = at % (chars.len() + 1);
            match kind % 4 {
                0 => chars.insert(at, c),
                1 if at < chars.len() => {
                    chars.remove(at);
                }
                2 if at < chars.len() => chars[at] = c,
                // Indent or dedent the line at `at` by one space.
                _ => {
                    let start = chars[..at]
                        .iter()
                        .rposition(|&c| c == '\n')
                        .map_or(0, |i| i + 1);
                    if kind % 8 < 4 || chars.get(start) != Some(&' ') {
                        chars.insert(start, ' ');
                    } else {
                        chars.remove(start);
                    }
                }
            }
        }
        chars.into_iter().collect()
    }

    /// The frontmatter of every SKILL.md in this repository (the suite's
    /// fixtures, the tests', the bundled skill): regular files only, no
    /// symlink followed, since the fixtures hold hostile ones.
    fn corpus() -> &'static [String] {
        static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        CORPUS.get_or_init(|| {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
            let mut dirs: Vec<_> = ["conformance", "skills", "tests"]
                .iter()
                .map(|d| root.join(d))
                .collect();
            let mut out = Vec::new();
            while let Some(dir) = dirs.pop() {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                        continue;
                    };
                    if meta.is_dir() {
                        dirs.push(entry.path());
                    } else if meta.is_file()
                        && entry.file_name() == "SKILL.md"
                        && let Ok(text) = std::fs::read_to_string(entry.path())
                        && let Ok(split) = super::super::split(&text)
                    {
                        out.push(split.yaml.to_owned());
                    }
                }
            }
            out.sort();
            out
        })
    }

    #[test]
    fn every_frontmatter_in_the_repository_is_read_as_saphyr_reads_it() {
        let docs = corpus();
        assert!(
            docs.len() > 100,
            "the corpus is the suite's fixtures: {} found",
            docs.len()
        );
        let mut read_here = 0;
        for doc in docs {
            match agrees(doc) {
                Ok(here) => read_here += usize::from(here),
                Err(e) => panic!("{e}"),
            }
        }
        // Most fixtures are plain frontmatter; the rest test saphyr's rules.
        assert!(
            read_here * 2 > docs.len(),
            "{read_here} of {} read here",
            docs.len()
        );
    }

    proptest! {
        // 1,000 cases each by default; PROPTEST_CASES asks for more (a
        // longer hunt for a disagreement).
        #![proptest_config(ProptestConfig::with_cases(ProptestConfig::default().cases.max(1000)))]

        /// Documents written in the shape are read here, exactly as saphyr
        /// reads them.
        #[test]
        fn the_shape_is_read_and_read_as_saphyr_reads_it(doc in documents()) {
            prop_assert_eq!(agrees(&doc), Ok(true), "{}", doc);
        }

        /// One to four edits away from the shape, whatever the reader still
        /// accepts, saphyr reads the same.
        #[test]
        fn near_the_shape_what_is_accepted_agrees(
            doc in documents(),
            edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<usize>()), 1..5),
        ) {
            let doc = mutate(&doc, &edits);
            if let Err(e) = agrees(&doc) {
                prop_assert!(false, "{}", e);
            }
        }

        /// The same, a few edits away from the repository's frontmatter,
        /// which holds every shape the suite tests.
        #[test]
        fn near_the_repository_s_frontmatter_what_is_accepted_agrees(
            pick in any::<prop::sample::Index>(),
            edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<usize>()), 1..4),
        ) {
            let doc = mutate(pick.get::<String>(corpus()), &edits);
            if let Err(e) = agrees(&doc) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}
