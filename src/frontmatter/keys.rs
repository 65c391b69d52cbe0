//! Which top-level frontmatter keys are known, and what to say about one
//! that is not (spec FM-007).
//!
//! A SKILL.md is written for more than one reader: the Agent Skills spec
//! defines a few fields, and a host such as Claude Code defines its own
//! beside them. This server serves a skill whatever else its frontmatter
//! holds, so a key one of those readers defines is no finding at all, and
//! any other key is reported (by name, as the design of record asks) under
//! its own reason, `unknown-key`, with the known key it most likely
//! misspells. The lists name their sources; spec/frontmatter.md repeats
//! them.

use serde_yaml_ng::Value;

use super::{Frontmatter, Note, Seg};

/// The Agent Skills specification's fields
/// (<https://agentskills.io/specification>, "Frontmatter").
pub(crate) const AGENT_SKILLS_KEYS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

/// The fields Claude Code reads beside them
/// (<https://code.claude.com/docs/en/skills>, "Frontmatter reference").
/// `when_to_use` comes first of the two spellings this server reads, so a
/// near miss is pointed at the one both read.
pub(crate) const CLAUDE_CODE_KEYS: &[&str] = &[
    "when_to_use",
    "argument-hint",
    "arguments",
    "disable-model-invocation",
    "user-invocable",
    "model",
    "effort",
    "context",
    "agent",
    "hooks",
    "paths",
    "shell",
];

/// This server's own: `when-to-use` (FM-008), the `mcp-host` block
/// (DECL-*), and `version`, which published skills carry at the top level
/// although the Agent Skills spec puts it in `metadata`.
pub(crate) const THIS_SERVER_KEYS: &[&str] = &["when-to-use", "mcp-host", "version"];

/// Whether a top-level key is one of the known ones.
pub(crate) fn is_known(key: &str) -> bool {
    known().any(|k| k == key)
}

fn known() -> impl Iterator<Item = &'static str> {
    AGENT_SKILLS_KEYS
        .iter()
        .chain(CLAUDE_CODE_KEYS)
        .chain(THIS_SERVER_KEYS)
        .copied()
}

/// The spelling a key is compared in: lowercase, with `_` and a camelCase
/// hump read as `-`, so `whenToUse`, `WHEN_TO_USE` and `when-to-use` meet.
fn fold(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    let mut after_lower = false;
    for c in key.chars() {
        match c {
            '_' => out.push('-'),
            c if c.is_uppercase() => {
                if after_lower {
                    out.push('-');
                }
                out.extend(c.to_lowercase());
            }
            c => out.push(c),
        }
        after_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    out
}

/// The known key an unknown one most likely means: the nearest by edit
/// distance (transpositions count one) after folding, when that distance
/// is at most a quarter of the key's length (at least 1, at most 3), so
/// `descripton` means `description` and `author` means nothing. A tie goes
/// to the earlier list.
pub(crate) fn suggest(key: &str) -> Option<&'static str> {
    let folded = fold(key);
    let len = folded.chars().count();
    let limit = (len / 4).clamp(1, 3);
    // Edit distance is at least the difference in length: a key that long
    // cannot be near, and skipping it keeps a 64 KiB key from costing a
    // 64 KiB × key distance per known key (FM-007).
    known()
        .map(|k| (fold(k), k))
        .filter(|(fk, _)| fk.chars().count().abs_diff(len) <= limit)
        .map(|(fk, k)| (strsim::osa_distance(&folded, &fk), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// For a key that looks like its suggestion but is not it: which of its
/// characters are not ASCII (a Cyrillic `а` in `nаme`), since the two
/// print alike.
fn not_ascii(key: &str, suggestion: &str) -> String {
    let odd: Vec<String> = key
        .chars()
        .filter(|c| !c.is_ascii())
        .take(3)
        .map(|c| format!("{c:?} is U+{:04X}", u32::from(c)))
        .collect();
    if odd.is_empty() || key.eq_ignore_ascii_case(suggestion) {
        return String::new();
    }
    format!(" ({}, not ASCII)", odd.join(", "))
}

/// A note for each top-level key that is not known, placed at the key
/// (spec FM-007). A key that is not a string is unknown too.
pub fn unknown(fm: &Frontmatter) -> Vec<Note> {
    let mut notes = Vec::new();
    for key in fm.map.keys() {
        match key {
            Value::String(k) if is_known(k) => {}
            Value::String(k) => {
                let next = match suggest(k) {
                    Some(s) => format!("did you mean {s:?}?{}", not_ascii(k, s)),
                    None => "neither the Agent Skills spec nor Claude Code defines it; \
                             keep fields of your own under \"metadata\""
                        .to_owned(),
                };
                notes.push(Note::at(
                    &fm.positions,
                    &[Seg::Key(k.clone())],
                    format!("unknown frontmatter key {k:?} (ignored): {next}"),
                ));
            }
            other => {
                let text = super::key_text(other);
                notes.push(Note::at(
                    &fm.positions,
                    &[Seg::OtherKey(text.clone())],
                    format!(
                        "unknown frontmatter key {text} (ignored): it is not a string, and every field's name is one; \
                         quote it (\"{text}\":) if it is meant as a name"
                    ),
                ));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("descripton", Some("description"))]
    #[case("Description", Some("description"))]
    #[case("nmae", Some("name"))]
    #[case("whenToUse", Some("when_to_use"))]
    #[case("When_To_Use", Some("when_to_use"))]
    #[case("allowed_tools", Some("allowed-tools"))]
    #[case("allowedTools", Some("allowed-tools"))]
    #[case("user-invokable", Some("user-invocable"))]
    #[case("licence", Some("license"))]
    #[case("modle", Some("model"))]
    #[case("hook", Some("hooks"))]
    #[case("compatability", Some("compatibility"))]
    #[case("author", None)]
    #[case("tags", None)]
    #[case("x", None)]
    #[case("", None)]
    fn near_misses_are_named(#[case] key: &str, #[case] want: Option<&str>) {
        assert_eq!(suggest(key), want, "{key}");
    }

    #[test]
    fn the_lists_are_disjoint_and_folded_apart() {
        let all: Vec<&str> = known().collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b, "listed twice");
            }
        }
        // Every known key is its own best match.
        for k in &all {
            assert!(is_known(k));
            let s = suggest(k);
            assert!(
                s == Some(k) || fold(k) == fold(s.unwrap_or_default()),
                "{k} -> {s:?}"
            );
        }
    }

    #[test]
    fn fold_reads_case_and_underscores_as_hyphens() {
        assert_eq!(fold("whenToUse"), "when-to-use");
        assert_eq!(fold("WHEN_TO_USE"), "when-to-use");
        assert_eq!(fold("Name"), "name");
        assert_eq!(fold("disable_Model"), "disable-model");
    }
}
