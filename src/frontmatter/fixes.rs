//! What a frontmatter mistake is in its author's words, and the edit that
//! fixes it (issue 41 §3, spec FM-005, CHECK-020): a YAML parser's words
//! name the rule it hit ("mapping values are not allowed in this
//! context"), not the value the author wrote or how to write it instead.

use serde_yaml_ng::Value;

use super::{FmRule, FrontmatterError, core_resolve};
use crate::limits::{MAX_FIX_TRIALS, MAX_SUGGESTED_LINE_CHARS};

/// The words saphyr gives for a `: ` inside a plain (unquoted) value.
const COLON_IN_PLAIN: &str = "mapping values are not allowed in this context";

/// How a YAML syntax error's message starts; the parser's words follow.
pub(super) const NOT_YAML: &str = "SKILL.md frontmatter is not valid YAML: ";

/// `e`, a refusal of `yaml` (whose first line is SKILL.md line
/// `yaml_line`), said in its author's words with the edit that fixes it
/// (issue 41 §3): a parser's words name the rule it hit ("while parsing
/// node, found unknown anchor"), not the value the author wrote or how to
/// write it. The position stays the parser's (FM-005); an edit on
/// another line (a `[` never closed) names its line. Each edit offered is
/// tried first: the frontmatter with it must parse past the line, or it
/// is not offered.
pub(super) fn explain(mut e: FrontmatterError, yaml: &str, yaml_line: usize) -> FrontmatterError {
    let (Some(line), Some(column)) = (e.line, e.column) else {
        return e;
    };
    let Some(l) = (line + 1).checked_sub(yaml_line).filter(|l| *l >= 1) else {
        return e;
    };
    let col = column.saturating_sub(1);
    let t = Text::new(yaml, yaml_line);
    match e.rule {
        FmRule::Syntax => {
            let info = e
                .message
                .strip_prefix(NOT_YAML)
                .unwrap_or(&e.message)
                .to_owned();
            let said = if info == COLON_IN_PLAIN {
                t.misindented(l).or_else(|| colon_in_value(&t, l, col))
            } else {
                None
            };
            let said = said
                .or_else(|| t.unclosed_quote(l, col))
                .or_else(|| t.tab(l).map(str::to_owned))
                .or_else(|| t.unclosed_bracket(l))
                .or_else(|| t.quote_it(l, col))
                .or_else(|| t.misindented(l));
            e.message = match said {
                Some(said) => format!("{NOT_YAML}{said}"),
                None => format!(
                    "{NOT_YAML}{info}; the parser stopped here: look here and just above for a quote or a \
                     bracket that is never closed, or a line indented unlike the keys it belongs with"
                ),
            };
        }
        FmRule::AnchorOrAlias => {
            let fix = t.quote_it(l, col).unwrap_or_else(|| {
                "write the value out in full at each place it is used".to_owned()
            });
            e.message = format!("{}: {fix}", e.message);
        }
        FmRule::Tag => {
            let fix = t.quote_it(l, col).unwrap_or_else(|| {
                "remove the tag (the YAML 1.2 core schema's are !!str, !!int, !!float, !!bool, !!null, !!seq \
                 and !!map, on a value of that kind)"
                    .to_owned()
            });
            e.message = format!("{}: {fix}", e.message);
        }
        FmRule::IntRange => {
            let fix = match t.line(l).and_then(key_and_value) {
                Some((key, value, _)) if t.mends(l, &quoted_at(t.line(l).unwrap_or(""), value)) => {
                    format!("if it is text, {}", quote_line(key, value))
                }
                _ => "if it is text, quote it".to_owned(),
            };
            e.message = format!("SKILL.md frontmatter: {}; {fix}", e.message);
        }
        FmRule::DuplicateKey => {
            let first = t.line(l).and_then(|at| {
                let own = indent(at);
                let key = at.trim_start().split(':').next()?.trim();
                (1..l).rev().find(|&n| {
                    let above = t.lines[n - 1];
                    indent(above) == own
                        && above
                            .trim_start()
                            .strip_prefix(key)
                            .is_some_and(|r| r.trim_start().starts_with(':'))
                })
            });
            e.message.push_str(&match first {
                Some(n) => format!(
                    ": it is on line {} already; keep one of the two lines and delete the other",
                    n + yaml_line - 1
                ),
                None => ": keep one of the two and delete the other".to_owned(),
            });
        }
        FmRule::TooDeep => {
            e.message
                .push_str(": flatten it (frontmatter is a few levels deep at most)");
        }
        FmRule::MultiDocument => {
            e.message.push_str(
                ": this line starts a second one; the frontmatter ends at the first line that is exactly \"---\", \
                 so make this line exactly \"---\" if the frontmatter ends here, or delete it",
            );
        }
        _ => {}
    }
    e
}

/// The YAML's lines, for trying an edit on one of them.
struct Text<'a> {
    yaml: &'a str,
    yaml_line: usize,
    /// Without their `\r`.
    lines: Vec<&'a str>,
    /// Edits tried so far, against [`MAX_FIX_TRIALS`].
    trials: std::cell::Cell<u32>,
}

impl<'a> Text<'a> {
    fn new(yaml: &'a str, yaml_line: usize) -> Text<'a> {
        Text {
            yaml,
            yaml_line,
            lines: yaml
                .split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .collect(),
            trials: std::cell::Cell::new(0),
        }
    }

    /// Line `l` (1-based in the YAML).
    fn line(&self, l: usize) -> Option<&'a str> {
        self.lines.get(l.checked_sub(1)?).copied()
    }

    /// True when the YAML with line `l` replaced by `new` parses, or
    /// stops only at a later line: the edit mends line `l`.
    fn mends(&self, l: usize, new: &str) -> bool {
        match self.with(l, new) {
            Ok(()) => true,
            Err(at) => at.is_some_and(|at| at >= l + self.yaml_line),
        }
    }

    /// True when the YAML with line `l` replaced by `new` parses whole.
    fn mends_all(&self, l: usize, new: &str) -> bool {
        self.with(l, new).is_ok()
    }

    /// The YAML with line `l` replaced by `new`, parsed: where it stops,
    /// if it does (its SKILL.md line, when it has one).
    /// Past [`MAX_FIX_TRIALS`], nothing more is tried: `Err(None)`.
    fn with(&self, l: usize, new: &str) -> Result<(), Option<usize>> {
        if self.trials.get() >= MAX_FIX_TRIALS {
            return Err(None);
        }
        self.trials.set(self.trials.get() + 1);
        let mut out = String::with_capacity(self.yaml.len() + new.len());
        for (i, line) in self.yaml.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if i + 1 == l {
                out.push_str(new);
                if line.ends_with('\r') {
                    out.push('\r');
                }
            } else {
                out.push_str(line);
            }
        }
        super::parse_raw(&out, self.yaml_line)
            .map(|_| ())
            .map_err(|e| e.line)
    }

    /// A value whose first character is a YAML indicator, or a number YAML
    /// cannot hold, which the author meant as text: the line with the
    /// value quoted, when that line parses.
    fn quote_it(&self, l: usize, col: usize) -> Option<String> {
        let at = self.line(l)?;
        let (key, value, start) = key_and_value(at)?;
        if at[..start].chars().count() > col {
            return None;
        }
        // A comment after a plain value is not part of it.
        let value = match value.find(" #") {
            Some(i) if !value.starts_with(['"', '\'']) => value[..i].trim_end(),
            _ => value,
        };
        let first = value.chars().next()?;
        // `&name` or `*name` alone is an anchor or an alias meant as one,
        // and so is one the rest of the frontmatter refers to or defines:
        // only text that reads whole once quoted is taken for text.
        let mended = if matches!(first, '&' | '*') {
            value.contains(' ') && self.mends_all(l, &quoted_at(at, value))
        } else {
            self.mends(l, &quoted_at(at, value))
        };
        if !mended {
            return None;
        }
        let why = match first {
            '*' => {
                "starts with \"*\", which YAML reads as an alias (a reference to an anchor), not as text"
            }
            '&' => "starts with \"&\", which YAML reads as an anchor, not as text",
            '!' => "starts with \"!\", which YAML reads as a tag, not as text",
            '@' | '`' => "starts with a character YAML reserves, which an unquoted value cannot",
            '%' => "starts with \"%\", which YAML reads as a directive, not as text",
            '"' | '\'' => {
                "starts with a quote, so YAML reads the value as ending at the closing quote and refuses what follows it"
            }
            '[' => "starts with \"[\", which YAML reads as the start of a list, not as text",
            '{' => "starts with \"{\", which YAML reads as the start of a mapping, not as text",
            '|' | '>' => "starts with a block indicator (| or >), not as text",
            _ => "is not a value YAML can hold unquoted",
        };
        Some(format!(
            "the value of {key:?} {why}; {}",
            quote_line(key, value)
        ))
    }

    /// A quoted value whose quote is never closed on its line: the line
    /// with the quote closed, when that parses.
    fn unclosed_quote(&self, l: usize, col: usize) -> Option<String> {
        let at = self.line(l)?;
        let (key, value, start) = key_and_value(at)?;
        if at[..start].chars().count() > col {
            return None;
        }
        let q = value.chars().next().filter(|c| matches!(c, '"' | '\''))?;
        let inner = &value[1..];
        if inner.contains(q) {
            return None;
        }
        let closed = format!("{value}{q}");
        if !self.mends(l, &format!("{}{closed}", &at[..start])) {
            return None;
        }
        Some(format!(
            "the value of {key:?} opens a quote ({q}) that is never closed; close it at the end of the value: {key}: {closed}"
        ))
    }

    /// A line indented with a tab.
    fn tab(&self, l: usize) -> Option<&'static str> {
        let at = self.line(l)?;
        at.trim_start_matches(' ').starts_with('\t').then_some(
            "this line is indented with a tab, which YAML does not allow: indent it with spaces",
        )
    }

    /// The nearest line at or above `l` that opens a `[` or `{` it never
    /// closes, and the line with it closed, when that parses.
    fn unclosed_bracket(&self, l: usize) -> Option<String> {
        for n in (1..=l.min(self.lines.len())).rev() {
            let at = self.lines[n - 1];
            let Some((key, value, _)) = key_and_value(at) else {
                continue;
            };
            let (open, close) = match value.chars().next() {
                Some('[') => ('[', ']'),
                Some('{') => ('{', '}'),
                _ => continue,
            };
            // An empty `[` is no list begun: nothing says how it ends.
            if value.trim() == open.to_string()
                || value.matches(open).count() <= value.matches(close).count()
            {
                continue;
            }
            let closed = format!("{}{close}", at.trim_end());
            if !self.mends(n, &closed) {
                return None;
            }
            let what = if open == '[' { "list" } else { "mapping" };
            let here = if n == l {
                String::new()
            } else {
                format!(" on line {}", n + self.yaml_line - 1)
            };
            return Some(format!(
                "the {what} that the value of {key:?} opens with \"{open}\"{here} is never closed; end it with \
                 \"{close}\": {key}: {value}{close}"
            ));
        }
        None
    }

    /// A `key: value` line indented unlike the keys above it: the
    /// indentation of the nearest line above that makes it parse.
    fn misindented(&self, l: usize) -> Option<String> {
        let at = self.line(l)?;
        let (key, _, _) = key_and_value(at)?;
        // A key with a space in it is more likely text that holds ": ".
        if key.contains(char::is_whitespace) {
            return None;
        }
        let own = indent(at);
        let mut tried = Vec::new();
        for n in (1..l).rev() {
            let above = self.lines[n - 1];
            if above.trim().is_empty() || above.trim_start().starts_with('#') {
                continue;
            }
            let Some((other, _, _)) =
                key_and_value(above).or_else(|| above.trim().strip_suffix(':').map(|k| (k, "", 0)))
            else {
                continue;
            };
            // A `- key:` line: its key sits after the dash.
            let want = indent(above)
                + if above.trim_start().starts_with("- ") {
                    2
                } else {
                    0
                };
            if want == own || tried.contains(&want) {
                continue;
            }
            tried.push(want);
            let moved = format!("{}{}", " ".repeat(want), at.trim_start());
            if self.mends(l, &moved) {
                return Some(format!(
                    "this line is indented {own} spaces, which lines up with no key it can belong to; \
                     indent it {want} spaces, as {other:?} on line {} is",
                    n + self.yaml_line - 1
                ));
            }
            if want == 0 {
                break;
            }
        }
        None
    }
}

/// Line `at` with its value (`value`, as [`key_and_value`] found it, and
/// what is left of the line after it) quoted.
fn quoted_at(at: &str, value: &str) -> String {
    match key_and_value(at) {
        Some((_, _, start)) => {
            let rest = at[start..].strip_prefix(value).unwrap_or("");
            format!("{}{}{rest}", &at[..start], quote(value))
        }
        None => at.to_owned(),
    }
}

/// The fix that quotes `value` as the value of `key`: the line to write,
/// or in words when it is too long to write out.
fn quote_line(key: &str, value: &str) -> String {
    let suggested = format!("{key}: {}", quote(value));
    if suggested.chars().count() <= MAX_SUGGESTED_LINE_CHARS {
        format!("quote the value: {suggested}")
    } else {
        format!("put the whole value in {}", quote_words(value))
    }
}

/// `key: value` on one line (after its indentation and any `- `): the key
/// and the value, trimmed, and where the value starts in the line (bytes).
fn key_and_value(line: &str) -> Option<(&str, &str, usize)> {
    let body = line.trim_start();
    let body = body.strip_prefix("- ").unwrap_or(body).trim_start();
    let offset = line.len() - body.len();
    let colon = body.find(": ")?;
    let key = body[..colon].trim();
    if key.is_empty() || key.starts_with(['#', '"', '\'', '[', '{']) {
        return None;
    }
    let value = &body[colon + 2..];
    let start = offset + colon + 2 + (value.len() - value.trim_start().len());
    Some((key, value.trim(), start))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// The fix for `key: some text: more text`: a plain value holding `: `,
/// which YAML reads as a second key. On the value's own line the fix is
/// the line with its value quoted; on a later line of a value that spans
/// several, quoting the whole value or a folded block.
fn colon_in_value(t: &Text<'_>, line: usize, column: usize) -> Option<String> {
    let lines = t.lines.get(..line)?;
    let at = *lines.get(line.checked_sub(1)?)?;
    let wrong = "holds \": \" (a colon and a space), which an unquoted value cannot: YAML reads it as the start of another key";
    if let Some((key, value, start)) = key_and_value(at)
        && at[..start].chars().count() <= column
    {
        return Some(format!(
            "the value of {key:?} {wrong}; {}",
            quote_line(key, value)
        ));
    }
    // A later line of a value that spans lines: its key is on the nearest
    // line above that is indented less.
    let own = indent(at);
    let key = lines[..line - 1]
        .iter()
        .rev()
        .filter(|l| !l.trim().is_empty() && indent(l) < own)
        .find_map(|l| key_and_value(l).map(|(k, _, _)| k))
        .or_else(|| {
            lines[..line - 1]
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty() && indent(l) < own)
                .and_then(|l| l.trim().strip_suffix(':'))
        })?;
    Some(format!(
        "the value of {key:?} {wrong}; put the whole value, from its first line to its last, in double quotes, \
         or write it as a folded block: \"{key}: >-\" with the text indented on the lines below"
    ))
}

/// `value` as a YAML scalar that reads back as exactly that string:
/// plain when it can be, else double quotes, or single quotes when it
/// holds `"` and no `'` (easier to read than escapes).
pub(super) fn quote(value: &str) -> String {
    if value.contains('"') && !value.contains('\'') && !value.contains('\\') {
        return format!("'{value}'");
    }
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// How [`quote`] quotes `value`, in words, for a value too long to write
/// out.
fn quote_words(value: &str) -> &'static str {
    if value.contains('"') && !value.contains('\'') && !value.contains('\\') {
        "single quotes ('…')"
    } else if value.contains('"') || value.contains('\\') {
        "double quotes (\"…\"), writing each \" inside it as \\\" and each \\ as \\\\"
    } else {
        "double quotes (\"…\")"
    }
}

/// `s` as the value of a `key: ` line: plain when YAML reads the plain
/// form back as that very string (a skill name or a script's path nearly
/// always), else quoted (`"1.0"`, `"true"`, `"null"`).
pub(crate) fn scalar(s: &str) -> String {
    let plain = s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
        && matches!(core_resolve(s), Ok(Value::String(_)));
    if plain { s.to_owned() } else { quote(s) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontmatter::parse;

    /// The message `yaml` (starting on SKILL.md line 2) is refused with.
    fn refused(yaml: &str) -> (String, Option<usize>, Option<usize>) {
        let e = parse(yaml, 2).expect_err("refused");
        (e.message, e.line, e.column)
    }

    #[test]
    fn a_colon_in_a_plain_value_says_to_quote_it_with_the_line_to_write() {
        let (m, line, column) =
            refused("name: pdf\ndescription: Fill PDF forms. Use when: the user has a form\n");
        assert_eq!(
            m,
            "SKILL.md frontmatter is not valid YAML: the value of \"description\" holds \": \" (a colon and a space), \
             which an unquoted value cannot: YAML reads it as the start of another key; quote the value: \
             description: \"Fill PDF forms. Use when: the user has a form\""
        );
        // The parser's own position: the colon, on SKILL.md line 3.
        assert_eq!((line, column), (Some(3), Some(38)));
    }

    #[test]
    fn the_quoted_value_reads_back_as_the_value() {
        for value in [
            "Use when: x",
            "say \"hi\": now",
            "it's \"a\": b",
            "back\\slash: x",
            "tab\there: x",
        ] {
            let yaml = format!("description: {}\n", quote(value));
            let fm = parse(&yaml, 2).unwrap_or_else(|e| panic!("{value:?}: {e}"));
            assert_eq!(
                fm.map.get("description"),
                Some(&Value::String(value.into())),
                "{yaml}"
            );
        }
    }

    #[test]
    fn a_long_value_is_told_in_words() {
        let long = format!("description: {}: and more\n", "word ".repeat(40));
        let (m, ..) = refused(&long);
        assert!(
            m.ends_with("; put the whole value in double quotes (\"…\")"),
            "{m}"
        );
        let (m, ..) = refused(&format!(
            "description: {} \"x\": and more\n",
            "word ".repeat(40)
        ));
        assert!(m.ends_with("in single quotes ('…')"), "{m}");
    }

    #[test]
    fn a_later_line_of_a_value_names_its_key() {
        let (m, line, _) =
            refused("name: a\ndescription: Fills forms\n  when asked: by the user\n");
        assert_eq!(line, Some(4));
        assert!(
            m.contains("the value of \"description\" holds \": \"")
                && m.contains("\"description: >-\""),
            "{m}"
        );
    }

    #[test]
    fn a_nested_value_names_its_own_key() {
        let (m, ..) = refused("name: a\nmetadata:\n  summary: one: two\n");
        assert!(
            m.contains("the value of \"summary\"") && m.ends_with("summary: \"one: two\""),
            "{m}"
        );
    }

    /// The line a message offers after `marker`, put in place of line
    /// `line` (1-based in `yaml`): the frontmatter must then parse.
    fn offered_parses(yaml: &str, line: usize, m: &str, marker: &str) {
        let offered = m.rsplit(marker).next().unwrap();
        let mended: Vec<&str> = yaml
            .split('\n')
            .enumerate()
            .map(|(i, l)| if i + 1 == line { offered } else { l })
            .collect();
        let mended = mended.join("\n");
        assert!(
            parse(&mended, 2).is_ok(),
            "{offered:?} does not mend:\n{mended}"
        );
    }

    /// A value that starts with a character YAML reads as syntax is told
    /// to be quoted, with the line to write, which parses; the refusal
    /// stays at the parser's position.
    #[rstest::rstest]
    #[case("description: *Bold* tool for things\n", "an alias (a reference to an anchor), not as text", (2, 14))]
    #[case("description: &x marks the spot\n", "an anchor, not as text", (2, 14))]
    #[case("description: !important tool\n", "a tag, not as text", (2, 14))]
    #[case("description: @mention tool\n", "a character YAML reserves", (2, 14))]
    #[case("description: `tool` here\n", "a character YAML reserves", (2, 14))]
    #[case("description: \"a\" b\n", "starts with a quote", (2, 18))]
    fn a_value_yaml_reads_as_syntax_is_told_to_be_quoted(
        #[case] yaml: &str,
        #[case] why: &str,
        #[case] at: (usize, usize),
    ) {
        let (m, line, column) = refused(yaml);
        assert!(
            m.contains("the value of \"description\" starts with"),
            "{m}"
        );
        assert!(m.contains(why), "{m}");
        assert!(m.contains("; quote the value: description: "), "{m}");
        assert_eq!((line, column), (Some(at.0), Some(at.1)), "{m}");
        offered_parses(yaml, 1, &m, "; quote the value: ");
    }

    /// An anchor that is used as one is not taken for text: the fix is to
    /// write the value out.
    #[test]
    fn an_anchor_used_as_one_is_told_to_write_the_value_out() {
        let (m, ..) = refused("description: &desc Uses an anchor\nwhen-to-use: *desc\n");
        assert_eq!(
            m,
            "SKILL.md frontmatter uses a YAML anchor, which is refused: write the value out in full at each place it is used"
        );
    }

    #[test]
    fn a_quote_never_closed_is_closed_at_the_end_of_its_value() {
        let yaml = "name: a\ndescription: \"never closed\nlicense: MIT\n";
        let (m, line, column) = refused(yaml);
        assert_eq!(
            m,
            "SKILL.md frontmatter is not valid YAML: the value of \"description\" opens a quote (\") that is never \
             closed; close it at the end of the value: description: \"never closed\""
        );
        assert_eq!((line, column), (Some(3), Some(14)));
        offered_parses(yaml, 2, &m, "close it at the end of the value: ");
    }

    /// A `[` never closed is named on its own line, though the parser
    /// stops on a later one (where the refusal stays: FM-005).
    #[test]
    fn a_bracket_never_closed_names_its_line() {
        let yaml = "name: a\nallowed-tools: [Read, Write\nlicense: MIT\n";
        let (m, line, _) = refused(yaml);
        assert_eq!(
            m,
            "SKILL.md frontmatter is not valid YAML: the list that the value of \"allowed-tools\" opens with \"[\" on \
             line 3 is never closed; end it with \"]\": allowed-tools: [Read, Write]"
        );
        assert_eq!(line, Some(4));
        offered_parses(yaml, 2, &m, "\": ");
    }

    /// A key indented unlike the keys it belongs with is told the
    /// indentation that lines it up, found by trying it.
    #[test]
    fn a_misindented_key_is_told_its_indentation() {
        let yaml = "mcp-host:\n  version: 1\n  run:\n    - script: a.js\n      interpreter: node\n     timeout: 30\n";
        let (m, line, _) = refused(yaml);
        assert_eq!(
            m,
            "SKILL.md frontmatter is not valid YAML: this line is indented 5 spaces, which lines up with no key it \
             can belong to; indent it 6 spaces, as \"interpreter\" on line 6 is"
        );
        assert_eq!(line, Some(7));
        let (m, ..) = refused("metadata:\n  a: 1\n   b: 2\n");
        assert!(
            m.ends_with("indent it 2 spaces, as \"a\" on line 3 is"),
            "{m}"
        );
    }

    #[test]
    fn a_tab_is_told_to_be_spaces() {
        let (m, ..) = refused("metadata:\n\tversion: \"1\"\n");
        assert_eq!(
            m,
            "SKILL.md frontmatter is not valid YAML: this line is indented with a tab, which YAML does not allow: \
             indent it with spaces"
        );
    }

    #[test]
    fn a_repeated_key_names_the_line_it_is_on_already() {
        let (m, line, _) = refused("name: a\ndescription: d\nname: a\n");
        assert_eq!(
            m,
            "SKILL.md frontmatter repeats the key \"name\" in one mapping: it is on line 2 already; keep one of the \
             two lines and delete the other"
        );
        assert_eq!(line, Some(4));
    }

    #[test]
    fn an_integer_too_large_is_told_to_be_quoted_if_it_is_text() {
        let (m, ..) = refused("id: 99999999999999999999\n");
        assert_eq!(
            m,
            "SKILL.md frontmatter: the integer 99999999999999999999 is outside the 64-bit range; if it is text, \
             quote the value: id: \"99999999999999999999\""
        );
    }

    #[test]
    fn a_second_document_is_told_to_end_the_frontmatter_or_go() {
        let (m, ..) = refused("name: a\n--- # more\ndescription: d\n");
        assert!(
            m.starts_with("SKILL.md frontmatter holds more than one YAML document: this line starts a second one")
                && m.ends_with("make this line exactly \"---\" if the frontmatter ends here, or delete it"),
            "{m}"
        );
    }

    /// What no fix covers keeps the parser's words, and says where to
    /// look.
    #[test]
    fn other_syntax_errors_keep_the_parser_s_words() {
        let (m, ..) = refused("name: a\n%YAML 1.2\n");
        assert_eq!(
            m,
            "SKILL.md frontmatter is not valid YAML: missing explicit document end marker before directive; the \
             parser stopped here: look here and just above for a quote or a bracket that is never closed, or a \
             line indented unlike the keys it belongs with"
        );
    }

    #[test]
    fn a_scalar_is_plain_only_when_it_reads_back_as_itself() {
        assert_eq!(scalar("pdf"), "pdf");
        assert_eq!(scalar("my.skill_2"), "my.skill_2");
        assert_eq!(scalar("1.0"), "\"1.0\"");
        assert_eq!(scalar("true"), "\"true\"");
        assert_eq!(scalar("null"), "\"null\"");
        assert_eq!(scalar("a b"), "\"a b\"");
    }
}
