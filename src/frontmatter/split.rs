//! Splitting SKILL.md into its frontmatter block and its body (FM-001),
//! and the block's 64 KiB cap (FM-004); each refusal placed at the line
//! to edit, with what to write there (issue 41 §3).

use super::{FmRule, FrontmatterError, refuse};
use crate::limits::MAX_FRONTMATTER_BYTES;

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
pub(super) fn too_large(bytes: usize) -> FrontmatterError {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontmatter::parse;
    use proptest::prelude::*;
    use rstest::rstest;

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

    proptest! {
        /// Any body survives the split byte for byte.
        #[test]
        fn any_body_survives_split(body in any::<String>(), crlf in any::<bool>()) {
            let nl = if crlf { "\r\n" } else { "\n" };
            let text = format!("---{nl}name: x{nl}description: y{nl}---{nl}{body}");
            let s = split(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&text[s.body_offset..], body.as_str());
        }
    }
}
