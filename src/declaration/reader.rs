//! The reader of the block: its notes, each placed at its node; unknown
//! keys reported by name (DECL-004); the block itself — a mapping with a
//! `version` this server reads, or nothing (DECL-002, DECL-003) — and its
//! `run` list, each script declared once (DECL-001, DECL-005).

use serde_yaml_ng::Value;

use super::at::At;
use super::fixes::{and_list, nearest};
use super::{BLOCK_KEY, Declaration, RunEntry, VERSION};
use crate::frontmatter::{Note, Positions};
use crate::problem::Reason;

pub(super) struct Reader<'a> {
    pub(super) positions: &'a Positions,
    /// Each with its reason: `declaration`, or `timeout-clamped` for a
    /// timeout served at the ceiling.
    pub(super) notes: Vec<(Reason, Note)>,
}

impl Reader<'_> {
    pub(super) fn note(&mut self, path: &At<'_>, message: String) {
        self.notes.push((
            Reason::Declaration,
            Note::at(self.positions, &path.segs(), message),
        ));
    }

    pub(super) fn unknown_keys(
        &mut self,
        map: &serde_yaml_ng::Mapping,
        path: &At<'_>,
        known: &[&str],
    ) {
        for k in map.keys() {
            match k {
                Value::String(s) if known.contains(&s.as_str()) => {}
                Value::String(s) => {
                    let fix = match nearest(s, known) {
                        Some(k) => format!("did you mean {k:?}? rename it"),
                        None => format!("the keys read there are {}; remove it", and_list(known)),
                    };
                    self.note(
                        &path.key(s),
                        format!("unknown key {s:?} in \"{path}\" (ignored): {fix}"),
                    );
                }
                other => self.note(
                    path,
                    format!(
                        "a key in \"{path}\" that is not a string ({}) (ignored): the keys read there are {}; \
                         remove it",
                        crate::frontmatter::key_text(other),
                        and_list(known)
                    ),
                ),
            }
        }
    }

    pub(super) fn block(&mut self, block: &Value) -> Option<Declaration> {
        let path = At::top(BLOCK_KEY);
        let Value::Mapping(map) = block else {
            let what = match block {
                Value::Null => "is empty, not a mapping",
                _ => "is not a mapping",
            };
            self.note(
                &path,
                format!(
                    "\"mcp-host\" {what}, so the block is ignored and the skill has no scripts: write its keys \
                     on the lines below mcp-host:, indented — version: 1, then run: with an entry \
                     \"- script: <path>\" and \"interpreter: node\" for each script"
                ),
            );
            return None;
        };
        let vpath = path.key("version");
        let version = map.get("version");
        let major = match version {
            Some(Value::Number(n)) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .map(|f| f.trunc() as u64)
            }),
            _ => None,
        };
        match (major, version) {
            (None, None) => {
                // No `version:` line to point at: the block's first key,
                // where the line goes.
                self.note(
                    &path,
                    format!(
                        "\"mcp-host\" has no \"version\", so the block is ignored and the skill has no scripts: \
                         add the line version: {VERSION} under mcp-host:, indented as the keys below it are"
                    ),
                );
                return None;
            }
            (None, Some(v)) => {
                let shown = match v {
                    Value::String(s) => format!("{s:?}, not a number"),
                    Value::Number(_) => {
                        format!("{}, not a version number", crate::frontmatter::key_text(v))
                    }
                    other => format!("{}, not a number", crate::frontmatter::key_text(other)),
                };
                self.note(
                    &vpath,
                    format!(
                        "\"mcp-host.version\" is {shown}, so the block is ignored and the skill has no scripts: \
                         write version: {VERSION}"
                    ),
                );
                return None;
            }
            (Some(v), _) if v != VERSION => {
                self.note(
                    &vpath,
                    format!(
                        "\"mcp-host\" declares major version {v}, and this server reads version {VERSION} only, \
                         so the block is ignored and the skill has no scripts: write version: {VERSION} if the \
                         block is written as version {VERSION} is (run entries of script, interpreter, env, \
                         timeout), or serve the skill with a server that reads version {v}"
                    ),
                );
                return None;
            }
            (Some(_), _) => {}
        }
        self.unknown_keys(map, &path, &["version", "run", "env", "egress", "state"]);
        Some(Declaration {
            run: map
                .get("run")
                .map(|v| self.run(v, &path.key("run")))
                .unwrap_or_default(),
            env: map
                .get("env")
                .map(|v| self.env_proposals(v, &path.key("env")))
                .unwrap_or_default(),
            egress: map
                .get("egress")
                .map(|v| self.egress(v, &path.key("egress")))
                .unwrap_or_default(),
        })
    }

    fn run(&mut self, value: &Value, path: &At<'_>) -> Vec<RunEntry> {
        let Value::Sequence(items) = value else {
            self.note(
                path,
                "\"mcp-host.run\" is not a list (ignored), so the skill has no scripts: write each script as \
                 an entry on the lines below run:, \"- script: <path>\" with \"interpreter: node\" under it"
                    .into(),
            );
            return Vec::new();
        };
        let mut out: Vec<RunEntry> = Vec::new();
        // Where each kept entry is in the list, to name the first of two.
        let mut kept_at: Vec<usize> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            if let Some(entry) = self.run_entry(item, &p) {
                if let Some(first) = out.iter().position(|e| e.script == entry.script) {
                    self.note(
                        &p,
                        format!(
                            "\"{p}\" declares {:?} a second time (ignored): delete this entry, or merge it into \
                             the first, \"{}\"",
                            entry.script,
                            path.index(kept_at[first])
                        ),
                    );
                } else {
                    out.push(entry);
                    kept_at.push(i);
                }
            }
        }
        out
    }
}
