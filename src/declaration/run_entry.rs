//! One `run[]` entry (DECL-001, DECL-005, DECL-006): a mapping whose
//! `script` passes the fence's string check, with a named `interpreter`, a
//! `timeout` in seconds (defaulted, or clamped to the ceiling with a
//! warning), and the variables it asks for. A bad entry fails alone.

use serde_yaml_ng::{Mapping, Value};

use super::RunEntry;
use super::at::At;
use super::fixes::{env_name_fix, interpreter_for, scalar, script_fix, timeout_fix};
use super::reader::Reader;
use super::reserved::{is_env_name, reserved};
use crate::fence;
use crate::frontmatter::{Note, key_text};
use crate::limits::{DEFAULT_TIMEOUT_SECS, MAX_TIMEOUT_SECS};
use crate::problem::Reason;

impl Reader<'_> {
    /// The entry at `p`, or `None` with a note saying why it is ignored.
    pub(super) fn run_entry(&mut self, item: &Value, p: &At<'_>) -> Option<RunEntry> {
        let Value::Mapping(map) = item else {
            let fix = match item {
                Value::String(s) if fence::check_str(s).is_ok() => format!(
                    "write it as - script: {}, with interpreter: {} on the line below, under script:",
                    scalar(s),
                    interpreter_for(s)
                ),
                _ => "write it as - script: <path>, with interpreter: node on the line below, under script:"
                    .to_owned(),
            };
            self.note(p, format!("\"{p}\" is not a mapping (ignored): {fix}"));
            return None;
        };
        self.unknown_keys(map, p, &["script", "interpreter", "env", "timeout"]);
        let script = self.script(map, p)?;
        let interpreter = self.interpreter(map, p, script)?;
        let timeout_ms = self.timeout(map, p)?;
        let env = self.entry_env(map, p)?;
        Some(RunEntry {
            script: script.clone(),
            interpreter: interpreter.clone(),
            env,
            timeout_ms,
        })
    }

    /// `script`: a string the fence's string check passes.
    fn script<'m>(&mut self, map: &'m Mapping, p: &At<'_>) -> Option<&'m String> {
        let script = match map.get("script") {
            Some(Value::String(script)) => script,
            None => {
                self.note(
                    p,
                    format!(
                        "\"{p}\" has no string \"script\" (ignored): add script: <the file's path in the skill, \
                         like scripts/run.js>"
                    ),
                );
                return None;
            }
            Some(other) => {
                let text = key_text(other);
                self.note(
                    &p.key("script"),
                    format!(
                        "\"{p}\" has no string \"script\" (ignored): its script is {text}; write the file's \
                         path in the skill: script: {}",
                        crate::frontmatter::scalar(&text)
                    ),
                );
                return None;
            }
        };
        if let Err(rule) = fence::check_str(script) {
            self.note(
                &p.key("script"),
                format!(
                    "\"{p}\" script {script:?} is not usable: {} (ignored); {}",
                    rule.describe(),
                    script_fix(script, rule)
                ),
            );
            return None;
        }
        Some(script)
    }

    /// `interpreter`: a string, the name the closed set is asked for.
    fn interpreter<'m>(
        &mut self,
        map: &'m Mapping,
        p: &At<'_>,
        script: &str,
    ) -> Option<&'m String> {
        let Some(Value::String(interpreter)) = map.get("interpreter") else {
            let at = if map.contains_key("interpreter") {
                p.key("interpreter")
            } else {
                p.key("script")
            };
            self.note(
                &at,
                format!(
                    "\"{p}\" has no string \"interpreter\" (ignored): add interpreter: {} under its script: line",
                    interpreter_for(script)
                ),
            );
            return None;
        };
        Some(interpreter)
    }

    /// `timeout`: seconds, at least a millisecond; over the ceiling it is
    /// served clamped, with a `timeout-clamped` warning (DECL-001, CHECK-004).
    fn timeout(&mut self, map: &Mapping, p: &At<'_>) -> Option<u64> {
        let timeout_ms = match map.get("timeout") {
            None => DEFAULT_TIMEOUT_SECS * 1000,
            Some(value) => match value.as_f64() {
                // At least a millisecond; NaN and negatives fail this too.
                Some(s) if s * 1000.0 >= 1.0 => {
                    if s > MAX_TIMEOUT_SECS as f64 {
                        // Served, with the ceiling: a warning, not a
                        // refusal (DECL-001, CHECK-004).
                        self.notes.push((
                            Reason::TimeoutClamped,
                            Note::at(
                                self.positions,
                                &p.key("timeout").segs(),
                                format!(
                                    "\"{p}\" asks for a {s}s timeout, over the {MAX_TIMEOUT_SECS}s ceiling, so it is \
                                     clamped: the script runs with {MAX_TIMEOUT_SECS}s; set timeout: \
                                     {MAX_TIMEOUT_SECS} or less"
                                ),
                            ),
                        ));
                        MAX_TIMEOUT_SECS * 1000
                    } else {
                        (s * 1000.0).round() as u64
                    }
                }
                _ => {
                    self.note(
                        &p.key("timeout"),
                        format!(
                            "\"{p}\" has a \"timeout\" that is not a positive number of seconds (ignored): {}",
                            timeout_fix(value)
                        ),
                    );
                    return None;
                }
            },
        };
        Some(timeout_ms)
    }

    /// `env`: the variable names the script asks for, in order, once each;
    /// a name that is none or that is reserved is refused alone (DECL-006).
    fn entry_env(&mut self, map: &Mapping, p: &At<'_>) -> Option<Vec<String>> {
        let env = match map.get("env") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Sequence(names)) => {
                let mut env: Vec<String> = Vec::new();
                let envs = p.key("env");
                for (j, n) in names.iter().enumerate() {
                    let np = envs.index(j);
                    match n {
                        Value::String(name) if !is_env_name(name) => self.note(
                            &np,
                            format!(
                                "\"{p}\" asks for {name:?}, which is not a variable name (ignored): {}",
                                env_name_fix(name)
                            ),
                        ),
                        Value::String(name) => match reserved(name) {
                            Some(why) => self.note(
                                &np,
                                format!(
                                    "\"{p}\" asks for {name:?}, a variable {why}; no script may be handed \
                                     it (DECL-006) — refused: remove it from env (an owner who needs it sets it \
                                     for the interpreter outside this server)"
                                ),
                            ),
                            None if !env.contains(name) => env.push(name.clone()),
                            None => {}
                        },
                        other => self.note(
                            &np,
                            format!(
                                "\"{p}\" has an \"env\" entry that is not a string ({}) (ignored): write the \
                                 variable's name",
                                key_text(other)
                            ),
                        ),
                    }
                }
                env
            }
            Some(other) => {
                let fix = match other {
                    Value::String(s) if is_env_name(s) => format!("write it as a list: env: [{s}]"),
                    _ => "write it as a list of variable names: env: [API_KEY]".to_owned(),
                };
                self.note(
                    &p.key("env"),
                    format!(
                        "\"{p}\" has an \"env\" that is not a list, so the entry is ignored: {fix}"
                    ),
                );
                return None;
            }
        };
        Some(env)
    }
}
