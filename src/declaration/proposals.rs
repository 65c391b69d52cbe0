//! What a skill proposes beside its scripts (DECL-007): `env` entries for
//! the server's environment, each a variable name with its flags, and the
//! `egress` hosts it names — both read, neither granted (DECL-008).

use serde_yaml_ng::Value;

use super::EnvProposal;
use super::at::At;
use super::fixes::{env_name_fix, host_of};
use super::reader::Reader;
use super::reserved::is_env_name;

pub(super) fn is_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '*'))
}

impl Reader<'_> {
    pub(super) fn env_proposals(&mut self, value: &Value, path: &At<'_>) -> Vec<EnvProposal> {
        let Value::Sequence(items) = value else {
            self.note(
                path,
                "\"mcp-host.env\" is not a list (ignored): write each variable as an entry on the lines below \
                 env:, \"- name: <VARIABLE>\" (with secret: true for a secret)"
                    .into(),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            let Value::Mapping(map) = item else {
                let fix = match item {
                    Value::String(s) if is_env_name(s) => format!("write it as - name: {s}"),
                    _ => "write it as - name: <VARIABLE>".to_owned(),
                };
                self.note(&p, format!("\"{p}\" is not a mapping (ignored): {fix}"));
                continue;
            };
            self.unknown_keys(map, &p, &["name", "secret", "description", "required"]);
            let Some(Value::String(name)) = map
                .get("name")
                .filter(|n| n.as_str().is_some_and(is_env_name))
            else {
                match map.get("name") {
                    Some(Value::String(bad)) => self.note(
                        &p.key("name"),
                        format!(
                            "\"{p}\" has no valid \"name\" (ignored): {bad:?} is not a variable name; {}",
                            env_name_fix(bad)
                        ),
                    ),
                    _ => self.note(
                        &p,
                        format!("\"{p}\" has no valid \"name\" (ignored): add name: <VARIABLE>"),
                    ),
                }
                continue;
            };
            let mut flag = |k: &str| match map.get(k) {
                None => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => {
                    self.note(
                        &p.key(k),
                        format!(
                            "\"{p}\" has a {k:?} that is not a boolean (ignored): write {k}: true or {k}: false, \
                             unquoted"
                        ),
                    );
                    None
                }
            };
            let secret = flag("secret").unwrap_or(false);
            let required = flag("required");
            let description = map
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            out.push(EnvProposal {
                name: name.clone(),
                secret,
                description,
                required,
            });
        }
        out
    }

    pub(super) fn egress(&mut self, value: &Value, path: &At<'_>) -> Vec<String> {
        let Value::Sequence(items) = value else {
            let fix = match value {
                Value::String(h) if is_hostname(h) => format!("write it as a list: egress: [{h}]"),
                _ => "write it as a list of hostnames: egress: [api.example.com]".to_owned(),
            };
            self.note(
                path,
                format!("\"mcp-host.egress\" is not a list (ignored): {fix}"),
            );
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(h) if is_hostname(h) => {
                    if !out.contains(h) {
                        out.push(h.clone());
                    }
                }
                other => {
                    let (shown, fix) = match other {
                        Value::String(s) => (
                            format!("{s:?}"),
                            match host_of(s) {
                                Some(h) => format!("write the host alone: {h}"),
                                None => "write a hostname alone, like api.example.com (no scheme, port or path)"
                                    .to_owned(),
                            },
                        ),
                        other => (
                            crate::frontmatter::key_text(other),
                            "write a hostname, like api.example.com".to_owned(),
                        ),
                    };
                    self.note(
                        &path.index(i),
                        format!(
                            "\"mcp-host.egress\" holds {shown}, which is not a hostname (ignored): {fix}"
                        ),
                    );
                }
            }
        }
        out
    }
}
