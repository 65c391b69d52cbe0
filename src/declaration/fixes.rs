//! What to write instead: the fix each declaration note ends with — the
//! key a misspelling means (DECL-004), a script path mended (DECL-005), a
//! timeout in seconds (DECL-001), a variable name (DECL-006), a host alone
//! (DECL-007).

use serde_yaml_ng::Value;

use super::proposals::is_hostname;
use super::reserved::is_env_name;
use crate::fence;
use crate::limits::{DEFAULT_TIMEOUT_SECS, MAX_TIMEOUT_SECS};

/// `a`, `a and b`, `a, b and c`.
pub(super) fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The key of `known` that `key` most likely misspells: the nearest by
/// edit distance (a transposition counts one), within a quarter of its
/// length (at least 1, at most 3), as FM-007 suggests top-level keys.
pub(super) fn nearest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let lower = key.to_lowercase();
    let limit = (lower.chars().count() / 4).clamp(1, 3);
    known
        .iter()
        .filter(|k| k.len().abs_diff(lower.len()) <= limit)
        .map(|k| (strsim::osa_distance(&lower, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The interpreter to suggest for `script`: python3 for a `.py` file (run
/// by a build with the `python3` feature), node otherwise.
pub(super) fn interpreter_for(script: &str) -> &'static str {
    if script.ends_with(".py") {
        "python3"
    } else {
        "node"
    }
}

/// `s` as a `key: ` value, quoted when it must be.
pub(super) fn scalar(s: &str) -> String {
    crate::frontmatter::scalar(s)
}

/// What to write instead of a declared script path the string check
/// refuses (the fence's rules, DECL-005): the path mended where that is
/// plain, else the rule to follow.
pub(super) fn script_fix(script: &str, rule: fence::PathRule) -> String {
    use fence::PathRule;
    let mended = match rule {
        PathRule::Absolute => Some(script.trim_start_matches('/').to_owned()),
        PathRule::Backslash => Some(script.replace('\\', "/")),
        PathRule::EmptySegment => Some(
            script
                .split('/')
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("/"),
        ),
        PathRule::DotSegment if script.split('/').all(|s| s != "..") => Some(
            script
                .split('/')
                .filter(|s| *s != ".")
                .collect::<Vec<_>>()
                .join("/"),
        ),
        _ => None,
    }
    .filter(|m| fence::check_str(m).is_ok());
    match mended {
        Some(m) => format!("write it from the skill's own folder: script: {}", scalar(&m)),
        None if rule == PathRule::DotSegment => {
            "a script must be a file inside the skill's own folder: move it there and write its path from \
             that folder, like scripts/run.js"
                .to_owned()
        }
        None => "write the path from the skill's own folder with / between folders, like scripts/run.js".to_owned(),
    }
}

/// What to write for a `timeout` that is not a positive number of
/// seconds.
pub(super) fn timeout_fix(value: &Value) -> String {
    let seconds = match value {
        Value::String(s) => {
            let t = s.trim();
            let t = t
                .strip_suffix("seconds")
                .or_else(|| t.strip_suffix('s'))
                .unwrap_or(t)
                .trim();
            t.parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n * 1000.0 >= 1.0)
        }
        _ => None,
    };
    match seconds {
        Some(n) if n <= MAX_TIMEOUT_SECS as f64 => {
            format!("write it as a number of seconds, unquoted: timeout: {n}")
        }
        _ => format!(
            "write timeout: <seconds>, a number from 0.001 to {MAX_TIMEOUT_SECS} (timeout: 30, say), or leave it \
             out for the default of {DEFAULT_TIMEOUT_SECS}"
        ),
    }
}

/// What to write instead of a variable name that is not one.
pub(super) fn env_name_fix(name: &str) -> String {
    let mended: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if is_env_name(&mended) && mended != name {
        format!(
            "a variable name is letters, digits and _, not starting with a digit: {mended}, say"
        )
    } else {
        "a variable name is letters, digits and _, not starting with a digit".to_owned()
    }
}

/// The host of an egress entry written as a URL or `host:port`, when it is
/// a hostname.
pub(super) fn host_of(s: &str) -> Option<&str> {
    let rest = s.split_once("://").map_or(s, |(_, r)| r);
    let host = rest.split(['/', ':', '?', '#']).next()?;
    (is_hostname(host) && host != s).then_some(host)
}
