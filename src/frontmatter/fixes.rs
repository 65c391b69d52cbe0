//! What a frontmatter mistake is in its author's words, and the edit that
//! fixes it (issue 41 §3): a YAML parser's words name the rule it hit
//! ("mapping values are not allowed in this context"), not the value the
//! author wrote or how to write it instead.

use serde_yaml_ng::Value;

use super::core_resolve;

/// The words saphyr gives for a `: ` inside a plain (unquoted) value.
const COLON_IN_PLAIN: &str = "mapping values are not allowed in this context";

/// Longest suggested line written out whole; past it, the fix is said in
/// words (a description may be 1,024 characters, and the check shows the
/// line itself anyway).
const MAX_SUGGESTED_LINE: usize = 160;

/// The message of a YAML syntax error at `line` (1-based, in `yaml`) and
/// `column` (0-based, in characters), where the parser said `info`: the
/// author's words and the fix where the mistake is one authors make, the
/// parser's words otherwise.
pub(super) fn syntax_message(info: &str, yaml: &str, line: usize, column: usize) -> String {
    let said = if info == COLON_IN_PLAIN {
        colon_in_value(yaml, line, column)
    } else {
        None
    };
    format!(
        "SKILL.md frontmatter is not valid YAML: {}",
        said.as_deref().unwrap_or(info)
    )
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
fn colon_in_value(yaml: &str, line: usize, column: usize) -> Option<String> {
    let lines: Vec<&str> = yaml
        .split('\n')
        .take(line)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let at = *lines.get(line.checked_sub(1)?)?;
    let wrong = "holds \": \" (a colon and a space), which an unquoted value cannot: YAML reads it as the start of another key";
    if let Some((key, value, start)) = key_and_value(at)
        && at[..start].chars().count() <= column
    {
        let quoted = quote(value);
        let suggested = format!("{key}: {quoted}");
        let fix = if suggested.chars().count() <= MAX_SUGGESTED_LINE {
            format!("quote the value: {suggested}")
        } else {
            format!("put the whole value in {}", quote_words(value))
        };
        return Some(format!("the value of {key:?} {wrong}; {fix}"));
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
/// form back as that very string (a skill name nearly always), else
/// quoted (`"1.0"`, `"true"`, `"null"`).
pub(crate) fn scalar(s: &str) -> String {
    let plain = s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
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

    #[test]
    fn other_syntax_errors_keep_the_parser_s_words() {
        let (m, ..) = refused("description: \"never closed\n");
        assert!(
            m.starts_with("SKILL.md frontmatter is not valid YAML: "),
            "{m}"
        );
        assert!(!m.contains("quote the value"), "{m}");
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
