//! The owner's grant: what of a declaration may actually run.
//!
//! README "Configuration": `MCP_SKILL_RUN` is **narrow-only** — what may run
//! is the declaration intersected with it, and no spelling of it makes
//! runnable what a skill did not declare. Without it the default depends on
//! who started this process: hosted (any injected marker present) grants
//! nothing; standalone lets the declaration stand. The marker check only
//! ever moves toward fail-closed (spec GRANT-001..GRANT-008).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, Skill};
use crate::config::Config;
use crate::declaration::{self, RunEntry};
use crate::interpreters::Interpreters;
use crate::problem::{Problem, Reason};

/// Which case decided what may run (`grantFrom` in `skill_list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub enum GrantFrom {
    /// `MCP_SKILL_RUN` was set: the declaration intersected with it.
    #[serde(rename = "MCP_SKILL_RUN")]
    McpSkillRun,
    /// No grant and a host started us: nothing runs.
    #[serde(rename = "hosted-default")]
    HostedDefault,
    /// No grant, standalone: the declaration stands.
    #[serde(rename = "declaration")]
    Declaration,
}

impl GrantFrom {
    /// The wire spelling, for messages.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            GrantFrom::McpSkillRun => "MCP_SKILL_RUN",
            GrantFrom::HostedDefault => "hosted-default",
            GrantFrom::Declaration => "declaration",
        }
    }
}

/// One row of `MCP_SKILL_RUN`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Row {
    pub(crate) skill: String,
    pub(crate) script: String,
    /// Variables granted to this script; absent grants none.
    #[serde(default)]
    pub(crate) env: Vec<String>,
}

/// The grant as read from the configuration, once per snapshot.
#[derive(Debug, Clone)]
pub struct Grant {
    pub from: GrantFrom,
    /// `None` when the declaration stands.
    rows: Option<Vec<Row>>,
    /// Why `MCP_SKILL_RUN` could not be read; then nothing is granted.
    pub error: Option<String>,
}

/// The note `skill_list` carries in the hosted case, so "nothing runs" is
/// never mistaken for a broken server.
pub(crate) const HOSTED_NOTE: &str = "A host started this server (a hosted marker is set) and no MCP_SKILL_RUN grant was supplied, \
so nothing may run. A script becomes runnable when the registration grants it; the instructions and files of every \
skill are served either way.";

impl Grant {
    /// Reads the grant from the configuration (GRANT-001, GRANT-003..GRANT-005).
    pub fn from_config(config: &Config) -> Grant {
        match &config.grant {
            Some(raw) => match serde_json::from_str::<Vec<Row>>(raw) {
                Ok(rows) => Grant {
                    from: GrantFrom::McpSkillRun,
                    rows: Some(rows),
                    error: None,
                },
                Err(e) => Grant {
                    from: GrantFrom::McpSkillRun,
                    rows: Some(Vec::new()),
                    error: Some(format!(
                        "MCP_SKILL_RUN is not a JSON list of {{skill, script, env?}} rows ({e}) — nothing is granted, \
                         so no script may run until it is fixed: write it as \
                         [{{\"skill\": \"<name>\", \"script\": \"<path>\", \"env\": [\"<VARIABLE>\"]}}], one row a script"
                    )),
                },
            },
            None if config.hosted() => Grant {
                from: GrantFrom::HostedDefault,
                rows: Some(Vec::new()),
                error: None,
            },
            None => Grant {
                from: GrantFrom::Declaration,
                rows: None,
                error: None,
            },
        }
    }

    /// The hosted note, when it applies.
    pub fn note(&self) -> Option<&'static str> {
        (self.from == GrantFrom::HostedDefault).then_some(HOSTED_NOTE)
    }

    /// The variables this script may be handed, or `None` when it may not
    /// run at all: the declaration's names intersected with the row's. A
    /// script more than one row names is granted by none (GRANT-009).
    pub fn allows(&self, skill: &str, entry: &RunEntry) -> Option<Vec<String>> {
        let Some(rows) = &self.rows else {
            return Some(entry.env.clone());
        };
        let mut naming = rows
            .iter()
            .filter(|r| r.skill == skill && r.script == entry.script);
        let row = naming.next()?;
        if naming.next().is_some() {
            return None;
        }
        Some(
            entry
                .env
                .iter()
                .filter(|n| row.env.contains(n))
                .cloned()
                .collect(),
        )
    }

    /// The first row naming this script, when a later row names it too:
    /// the grant is ambiguous and grants it nothing (GRANT-009).
    pub(crate) fn ambiguous(&self, skill: &str, script: &str) -> Option<usize> {
        let rows = self.rows.as_ref()?;
        let mut naming = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.skill == skill && r.script == script)
            .map(|(i, _)| i);
        let first = naming.next()?;
        naming.next().map(|_| first)
    }

    /// Rows that grant nothing, or grant a variable nobody asked for or no
    /// script may be handed (GRANT-006, GRANT-007, GRANT-009, DECL-006):
    /// each is reported, none widens anything.
    pub(crate) fn problems(&self, catalog: &Catalog) -> Vec<Problem> {
        let Some(rows) = &self.rows else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let path = format!("MCP_SKILL_RUN[{i}]");
            if let Some(first) = rows[..i]
                .iter()
                .position(|r| r.skill == row.skill && r.script == row.script)
            {
                out.push(Problem::new(
                    path,
                    Reason::Grant,
                    format!(
                        "names {:?} of {:?} again (first in MCP_SKILL_RUN[{first}]); rows that name one script \
                         twice are ambiguous, so none of them grants it (GRANT-009) — keep one row per script",
                        row.script, row.skill
                    ),
                ));
                continue;
            }
            let Some(skill) = catalog.get(&row.skill) else {
                let fix = match nearest(&row.skill, catalog.skills.iter().map(|s| s.name.as_str()))
                {
                    Some(n) => format!("did you mean {n:?}? correct the row's \"skill\""),
                    None => {
                        "correct the row's \"skill\" to a name skill_list lists, or remove the row"
                            .to_owned()
                    }
                };
                out.push(Problem::new(
                    path,
                    Reason::Grant,
                    format!(
                        "grants {:?} of the skill {:?}, which this server does not serve; it grants nothing: {fix}",
                        row.script, row.skill
                    ),
                ));
                continue;
            };
            let Some(entry) = skill
                .declaration
                .run
                .iter()
                .find(|e| e.script == row.script)
            else {
                let declared = skill.declaration.run.iter().map(|e| e.script.as_str());
                let fix = match nearest(&row.script, declared.clone()) {
                    Some(s) => format!("did you mean {s:?}? correct the row's \"script\""),
                    None if skill.declaration.run.is_empty() => {
                        "the skill declares no script; declare it in its SKILL.md's mcp-host.run, or remove the row"
                            .to_owned()
                    }
                    None => format!(
                        "it declares {}; correct the row's \"script\", or remove the row",
                        declared.map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")
                    ),
                };
                out.push(Problem::new(
                    path,
                    Reason::Grant,
                    format!(
                        "grants {:?}, which the skill {:?} does not declare in mcp-host.run; it grants nothing: {fix}",
                        row.script, row.skill
                    ),
                ));
                continue;
            };
            for var in row.env.iter().filter(|v| !entry.env.contains(v)) {
                let detail = match declaration::reserved(var) {
                    Some(why) => format!(
                        "grants {var:?} to {:?} of {:?}, a variable {why}; no script may be handed it \
                         (DECL-006), so it is not handed over: remove it from the row",
                        row.script, row.skill
                    ),
                    None => format!(
                        "grants {var:?} to {:?} of {:?}, which that script did not ask for; it is not handed over: \
                         add it to the script's env: in the skill's SKILL.md, or remove it from the row",
                        row.script, row.skill
                    ),
                };
                out.push(Problem::new(path.clone(), Reason::Grant, detail));
            }
        }
        out
    }
}

/// The one of `names` nearest to `name` by edit distance (a
/// transposition counts one), within a third of its length (at least 1,
/// at most 4): the skill or script a grant row most likely means.
fn nearest<'n>(name: &str, names: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    let len = name.chars().count();
    let limit = (len / 3).clamp(1, 4);
    names
        .filter(|n| n.chars().count().abs_diff(len) <= limit)
        .map(|n| (strsim::osa_distance(name, n), n))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// A script that may run here, with the variables it will be handed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Runnable {
    pub(crate) entry: RunEntry,
    pub(crate) env: Vec<String>,
}

/// What of one skill's declaration may run here, and why the rest may not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scripts {
    pub(crate) runnable: Vec<Runnable>,
    /// Cannot run on this deployment (interpreter, or not in the bundle).
    pub(crate) unavailable: Vec<(String, String)>,
    /// Could run, but the owner did not grant it.
    pub(crate) ungranted: Vec<(String, String)>,
}

/// The reason a declared, runnable, ungranted script gives.
pub(crate) const UNGRANTED: &str =
    "declared by the skill and not granted for this registration, so it may not run here";

/// The reason a script named by more than one grant row gives (GRANT-009).
fn ambiguous_reason(first: usize) -> String {
    format!(
        "named by more than one MCP_SKILL_RUN row (first MCP_SKILL_RUN[{first}]), an ambiguous grant, so it may \
         not run here (GRANT-009); the registration should keep one row per script"
    )
}

/// Sorts one skill's declared scripts into runnable, unavailable and
/// ungranted (GRANT-006, RUN-004).
pub(crate) fn scripts(skill: &Skill, grant: &Grant, interpreters: &Interpreters) -> Scripts {
    let mut out = Scripts::default();
    for entry in &skill.declaration.run {
        if let Some((_, why)) = skill
            .missing_scripts
            .iter()
            .find(|(s, _)| *s == entry.script)
        {
            out.unavailable
                .push((entry.script.clone(), format!("declared, but {why}")));
        } else if let Err(why) = interpreters.lookup(&entry.interpreter) {
            out.unavailable.push((entry.script.clone(), why));
        } else if let Some(env) = grant.allows(&skill.name, entry) {
            out.runnable.push(Runnable {
                entry: entry.clone(),
                env,
            });
        } else {
            let why = match grant.ambiguous(&skill.name, &entry.script) {
                Some(first) => ambiguous_reason(first),
                None => UNGRANTED.to_owned(),
            };
            out.ungranted.push((entry.script.clone(), why));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::path::{Path, PathBuf};

    fn config(vars: &[(&str, &str)]) -> Config {
        let env: BTreeMap<OsString, OsString> = vars
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
        Config::from_env(env, Path::new("/"), PathBuf::from("/skills"))
    }

    fn entry(script: &str, env: &[&str]) -> RunEntry {
        RunEntry {
            script: script.into(),
            interpreter: "node".into(),
            env: env.iter().map(|s| s.to_string()).collect(),
            timeout_ms: 1000,
        }
    }

    /// A row that grants nothing names the skill or script it most likely
    /// means, or says what to do (issue 41 §3).
    #[test]
    fn a_row_that_grants_nothing_says_what_it_likely_means() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("weather");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: weather\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: forecast.js\n      interpreter: node\n---\n",
        )
        .unwrap();
        std::fs::write(dir.join("forecast.js"), "1").unwrap();
        let rows = r#"[{"skill":"wether","script":"forecast.js"},{"skill":"weather","script":"forcast.js"},{"skill":"weather","script":"other.js"},{"skill":"weather","script":"forecast.js","env":["KEY"]}]"#;
        let c = config(&[
            ("SKILLS_DIR", tmp.path().to_str().unwrap()),
            ("MCP_SKILL_RUN", rows),
        ]);
        let catalog = crate::catalog::scan(&c);
        let details: Vec<String> = Grant::from_config(&c)
            .problems(&catalog)
            .into_iter()
            .map(|p| p.detail)
            .collect();
        assert_eq!(details.len(), 4, "{details:?}");
        assert!(
            details[0].ends_with(
                "it grants nothing: did you mean \"weather\"? correct the row's \"skill\""
            )
        );
        assert!(details[1].ends_with(
            "it grants nothing: did you mean \"forecast.js\"? correct the row's \"script\""
        ));
        assert!(details[2].ends_with(
            "it grants nothing: it declares \"forecast.js\"; correct the row's \"script\", or remove the row"
        ));
        assert!(details[3].ends_with(
            "it is not handed over: add it to the script's env: in the skill's SKILL.md, or remove it from the row"
        ));
    }

    #[test]
    fn standalone_lets_the_declaration_stand() {
        let g = Grant::from_config(&config(&[]));
        assert_eq!(g.from, GrantFrom::Declaration);
        assert_eq!(
            g.allows("s", &entry("a.js", &["K"])),
            Some(vec!["K".into()])
        );
    }

    #[test]
    fn hosted_without_a_grant_runs_nothing() {
        for m in crate::config::HOSTED_MARKERS {
            let g = Grant::from_config(&config(&[(m, "/x")]));
            assert_eq!(g.from, GrantFrom::HostedDefault);
            assert_eq!(g.allows("s", &entry("a.js", &[])), None);
            assert!(g.note().is_some());
        }
    }

    #[test]
    fn a_grant_intersects_and_never_widens() {
        let g = Grant::from_config(&config(&[(
            "MCP_SKILL_RUN",
            r#"[{"skill":"s","script":"a.js","env":["K","EXTRA"]},{"skill":"s","script":"b.js"}]"#,
        )]));
        assert_eq!(
            g.allows("s", &entry("a.js", &["K", "L"])),
            Some(vec!["K".into()])
        );
        assert_eq!(g.allows("s", &entry("b.js", &["K"])), Some(vec![]));
        assert_eq!(g.allows("s", &entry("c.js", &[])), None);
        assert_eq!(g.allows("t", &entry("a.js", &[])), None);
    }

    #[test]
    fn a_malformed_grant_grants_nothing_and_says_why() {
        for bad in [
            "{",
            "{}",
            r#"[{"skill":"s"}]"#,
            r#"[{"skill":"s","script":"a","envs":[]}]"#,
            "[1]",
        ] {
            let g = Grant::from_config(&config(&[("MCP_SKILL_RUN", bad)]));
            assert!(
                g.error
                    .as_deref()
                    .is_some_and(|e| e.contains("MCP_SKILL_RUN")),
                "{bad}"
            );
            assert_eq!(g.allows("s", &entry("a", &[])), None, "{bad}");
        }
    }

    #[test]
    fn two_rows_for_one_script_grant_it_nothing() {
        let g = Grant::from_config(&config(&[(
            "MCP_SKILL_RUN",
            r#"[{"skill":"s","script":"a.js","env":[]},{"skill":"s","script":"b.js"},{"skill":"s","script":"a.js","env":["K"]}]"#,
        )]));
        assert_eq!(g.allows("s", &entry("a.js", &["K"])), None);
        assert_eq!(g.ambiguous("s", "a.js"), Some(0));
        assert_eq!(g.allows("s", &entry("b.js", &[])), Some(vec![]));
        assert_eq!(g.ambiguous("s", "b.js"), None);
    }
}
