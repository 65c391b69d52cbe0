//! The Agent Skills spec warnings (agentskills.io, spec
//! CHECK-008..CHECK-014): advice to an author that the server deliberately
//! does not enforce, so they never enter `problems` and never refuse a
//! skill.

use serde_yaml_ng::Value;

use super::{Finding, Kind, Rule, Severity, nth_line};
use crate::catalog::{self, LoadError, LoadedMd, SKILL_MD, Skill};
use crate::frontmatter::Seg;
use crate::problem::{Problem, Reason};

pub(crate) use crate::limits::{
    MAX_BODY_LINES, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS,
};

/// Why a `name` breaks the Agent Skills rule, or `None` when it keeps it
/// (spec CHECK-008): 1–64 characters of lowercase letters and digits, with
/// single hyphens that neither start nor end it.
pub(crate) fn name_violation(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if chars == 0 {
        return Some("it is empty".into());
    }
    if chars > MAX_NAME_CHARS {
        return Some(format!(
            "it is {chars} characters; at most {MAX_NAME_CHARS}"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Some(format!(
            "{c:?} is not a lowercase letter, a digit or a hyphen"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Some("it starts or ends with a hyphen".into());
    }
    if name.contains("--") {
        return Some("it has two hyphens in a row".into());
    }
    None
}

/// A YAML value's kind, for messages.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// The Agent Skills spec warnings for one served skill's SKILL.md, as the
/// one loader read and split it (spec CHECK-008..CHECK-012). `dir_name` is the name it is served under;
/// `path` is SKILL.md's path as findings report it.
///
/// Only what the server leaves alone is said here, so nothing is said
/// twice: a `name` that differs from the directory and a field that is not
/// a string are already server problems. `door_refused` is true when the
/// server left this skill out of the MCP Skills extension (a
/// `skills-extension` problem): that door refuses a missing or
/// rule-breaking `name` and a missing or empty `description` itself, so
/// those warnings are left to its error (spec CHECK-014).
pub(crate) fn spec_warnings(
    loaded: &LoadedMd,
    dir_name: &str,
    path: &str,
    door_refused: bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let text = loaded.md.text.as_str();
    // The snapshot's scan parsed this file; if it no longer parses, it
    // changed since, and the fresh problem says so.
    let fm = match loaded.parse_sparing_block() {
        Ok((fm, _)) => fm,
        Err(e) => return vec![changed(path, Reason::MalformedFrontmatter, &e.message)],
    };
    let key = |k: &str| [Seg::Key(k.to_owned())];

    match fm.map.get("name") {
        _ if door_refused => {}
        None | Some(Value::Null) => {
            let mut m = format!(
                "no \"name\": the Agent Skills spec requires one, equal to the directory name (name: {dir_name})"
            );
            if let Some(why) = name_violation(dir_name) {
                m.push_str(&format!(
                    ", and the directory name {dir_name:?} itself breaks the name rule: {why}"
                ));
            }
            out.push(Finding::warning(Rule::Name, path, m));
        }
        Some(Value::String(name)) if name == dir_name => {
            if let Some(why) = name_violation(name) {
                out.push(
                    Finding::warning(
                        Rule::Name,
                        path,
                        format!(
                            "the Agent Skills spec wants \"name\" to be 1-{MAX_NAME_CHARS} lowercase letters, digits and single hyphens, not starting or ending with one; {name:?} breaks it: {why}"
                        ),
                    )
                    .at_node(&fm, &key("name"), text),
                );
            }
        }
        // A name unlike the directory is the server's name-mismatch; a
        // name that is not a string is the server's declaration problem.
        Some(_) => {}
    }

    match fm.map.get("description") {
        None | Some(Value::Null) if door_refused => {}
        Some(Value::String(d)) if door_refused && d.trim().is_empty() => {}
        None | Some(Value::Null) => out.push(Finding::warning(
            Rule::Description,
            path,
            "no \"description\": the Agent Skills spec requires one (1-1024 characters saying what the skill does and when to use it)".into(),
        )),
        Some(Value::String(d)) if d.trim().is_empty() => out.push(
            Finding::warning(
                Rule::Description,
                path,
                "\"description\" is empty: the Agent Skills spec wants 1-1024 characters saying what the skill does and when to use it".into(),
            )
            .at_node(&fm, &key("description"), text),
        ),
        Some(Value::String(d)) if d.chars().count() > MAX_DESCRIPTION_CHARS => out.push(
            Finding::warning(
                Rule::Description,
                path,
                format!(
                    "\"description\" is {} characters; the Agent Skills spec allows at most {MAX_DESCRIPTION_CHARS}",
                    d.chars().count()
                ),
            )
            .at_node(&fm, &key("description"), text),
        ),
        Some(_) => {}
    }

    if let Some(c) = fm.map.get("compatibility") {
        let why = match c {
            Value::String(s) if s.trim().is_empty() => Some("is empty".to_owned()),
            Value::String(s) if s.chars().count() > MAX_COMPATIBILITY_CHARS => {
                Some(format!("is {} characters", s.chars().count()))
            }
            Value::String(_) => None,
            other => Some(format!("is {}, not a string", kind_of(other))),
        };
        if let Some(why) = why {
            out.push(
                Finding::warning(
                    Rule::Compatibility,
                    path,
                    format!(
                        "\"compatibility\" {why}; the Agent Skills spec wants 1-{MAX_COMPATIBILITY_CHARS} characters when it is present"
                    ),
                )
                .at_node(&fm, &key("compatibility"), text),
            );
        }
    }

    match fm.map.get("metadata") {
        None => {}
        Some(Value::Mapping(map)) => {
            for (k, v) in map {
                let Value::String(k) = k else {
                    out.push(
                        Finding::warning(
                            Rule::Metadata,
                            path,
                            format!(
                                "a \"metadata\" key is {}; the Agent Skills spec wants a map from strings to strings",
                                kind_of(k)
                            ),
                        )
                        .at_node(&fm, &key("metadata"), text),
                    );
                    continue;
                };
                if !v.is_string() {
                    let node = [Seg::Key("metadata".into()), Seg::Key(k.clone())];
                    let hint = match v {
                        Value::Sequence(_) | Value::Mapping(_) => "write it as one string",
                        _ => "quote it",
                    };
                    out.push(
                        Finding::warning(
                            Rule::Metadata,
                            path,
                            format!(
                                "\"metadata.{k}\" is {}; the Agent Skills spec wants every metadata value to be a string ({hint})",
                                kind_of(v)
                            ),
                        )
                        .at_node(&fm, &node, text),
                    );
                }
            }
        }
        Some(other) => out.push(
            Finding::warning(
                Rule::Metadata,
                path,
                format!(
                    "\"metadata\" is {}; the Agent Skills spec wants a map from strings to strings",
                    kind_of(other)
                ),
            )
            .at_node(&fm, &key("metadata"), text),
        ),
    }

    let lines = loaded.body().lines().count();
    if lines > MAX_BODY_LINES {
        // Point at the first line past the limit.
        let body_line = text
            .get(..loaded.body_offset)
            .unwrap_or("")
            .matches('\n')
            .count()
            + 1;
        let line = body_line + MAX_BODY_LINES;
        let mut f = Finding::warning(
            Rule::Body,
            path,
            format!(
                "the SKILL.md body is {lines} lines; the Agent Skills spec asks for under {MAX_BODY_LINES} — move detail into files the body points to, which are read only when needed"
            ),
        );
        f.line = Some(line);
        f.column = Some(1);
        f.source = nth_line(text, line).map(str::to_owned);
        out.push(f);
    }
    out
}

/// A SKILL.md that no longer reads as it did when the snapshot was scanned.
fn changed(path: &str, reason: Reason, why: &str) -> Finding {
    Finding {
        severity: Severity::Error,
        kind: Kind::Problem(reason),
        path: path.to_owned(),
        line: None,
        column: None,
        message: format!("SKILL.md changed while it was being checked: {why}; check again"),
        source: None,
    }
}

/// The warnings for one served skill, reading its SKILL.md the way the
/// server does (through the fence, capped).
pub(super) fn skill_warnings(skill: &Skill, problems: &[Problem]) -> Vec<Finding> {
    let path = skill.dir.join(SKILL_MD).to_string_lossy().into_owned();
    let door_refused = problems
        .iter()
        .any(|p| p.reason == Reason::SkillsExtension && p.path == path);
    match catalog::load_skill_md(&skill.dir) {
        Ok(loaded) => spec_warnings(&loaded, &skill.name, &path, door_refused),
        Err(LoadError::Read(reason, detail, _)) => vec![changed(&path, reason, &detail)],
        Err(LoadError::Split(e)) => vec![changed(&path, Reason::MalformedFrontmatter, &e.message)],
    }
}
