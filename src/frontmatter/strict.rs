//! The strict YAML builder: `saphyr-parser`'s events (or [`super::simple`]'s,
//! the same) into [`serde_yaml_ng::Value`]s, where each strict rule acts
//! before anything is expanded — anchors and aliases refused (FM-003),
//! tags outside the core schema (FM-005), duplicate keys, more than one
//! document, nesting past [`MAX_FRONTMATTER_NESTING`], a block that is no mapping
//! (FM-006) — and every node's position is recorded.

use saphyr_parser::{Event, ScalarStyle, Span, Tag};
use serde_yaml_ng::{Mapping, Number, Value};

use super::core_schema::core_resolve;
use super::positions::{NO_PARENT, Positions, Seg, key_text};
use super::{FmRule, Frontmatter, FrontmatterError};
use crate::limits::MAX_FRONTMATTER_NESTING;

/// A collection under construction.
/// Each names its own node in [`Positions`], which its children's paths
/// start from.
enum Open {
    Seq(Vec<Value>, u32),
    Map(Mapping, u32, Option<(Value, Span)>),
}

pub(super) struct Builder {
    yaml_line: usize,
    stack: Vec<Open>,
    root: Option<Value>,
    positions: Positions,
    docs: usize,
}

impl Builder {
    /// A builder for YAML whose first line is SKILL.md's `yaml_line`.
    pub(super) fn new(yaml_line: usize) -> Builder {
        Builder {
            yaml_line,
            stack: Vec::new(),
            root: None,
            positions: Positions::default(),
            docs: 0,
        }
    }

    /// The document read, which must be a mapping (FM-006). A refusal
    /// points at the first line that holds something, or, in an empty
    /// frontmatter, at the closing line, where the keys go.
    pub(super) fn finish(self, yaml: &str) -> Result<Frontmatter, FrontmatterError> {
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

    pub(super) fn on_event(
        &mut self,
        event: Event<'_>,
        span: Span,
    ) -> Result<(), FrontmatterError> {
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
        if self.stack.len() >= MAX_FRONTMATTER_NESTING {
            return Err(self.at(
                span,
                FmRule::TooDeep,
                format!("SKILL.md frontmatter nests deeper than {MAX_FRONTMATTER_NESTING} levels"),
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

#[cfg(test)]
mod tests {
    use crate::frontmatter::{FmRule, parse};
    use rstest::rstest;
    use serde_yaml_ng::Value;

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
}
