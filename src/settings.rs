//! The settings a process serves with, resolved once (issue 42 §3):
//! [`Config`] is the raw environment, [`Settings::resolve`] turns it and
//! the command line into typed values plus the problems a refused value
//! raises — as ripgrep's flags go from `LowArgs` to `HiArgs`. Every
//! snapshot (the boot scan and each rescan) shares the one `Settings`, so
//! a variable is read and judged once, and a rescan reports what the boot
//! reported.

use std::ops::RangeInclusive;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::limits::{
    ANSWER_BUDGET_CHARS, ANSWER_BUDGET_VAR, ELICIT_TIMEOUT_SECS, ELICIT_TIMEOUT_VAR,
    EMBEDDINGS_VAR, HTTP_SESSION_IDLE_SECS, HTTP_SESSION_IDLE_VAR, INSTRUCTIONS_INDEX_CHARS,
    INSTRUCTIONS_INDEX_VAR, MAX_ANSWER_BUDGET_CHARS, MAX_ELICIT_TIMEOUT_SECS,
    MAX_HTTP_SESSION_IDLE_SECS, MAX_INSTRUCTIONS_INDEX_CHARS, MIN_ANSWER_BUDGET_CHARS,
};
use crate::problem::{Problem, Reason};
use crate::search::semantic::{self, Model};

/// What the environment and the command line resolve to.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The most characters of JSON one answer may hold (LIST-005).
    pub(crate) budget: usize,
    /// The most characters the `initialize` instructions spend on the
    /// catalog (LIST-014).
    pub(crate) instructions_budget: usize,
    /// How long a run's approval is waited for (RUN-028).
    pub(crate) elicit_timeout: Duration,
    /// How long an HTTP session may sit untouched (HTTP-008).
    pub(crate) http_session_idle: Duration,
    /// The owner's embedding model, when one is set and loads (LIST-017).
    pub(crate) model: Option<Arc<Model>>,
    /// Watch the roots: `--watch`, or `SKILL_MCP_WATCH` (RELOAD-001).
    pub(crate) watch: bool,
    /// Each refused value, as the `problems` entry naming its variable, in
    /// the order `skill_list` has always listed them.
    pub(crate) problems: Vec<Problem>,
}

impl Settings {
    /// The one resolution: `config` (the environment at boot) with the
    /// command line's `--watch`. A value that is refused keeps its default
    /// and is said in `problems`.
    pub fn resolve(config: &Config, watch: bool) -> Settings {
        let mut problems = Vec::new();
        let budget = whole_number(
            config,
            &mut problems,
            ANSWER_BUDGET_VAR,
            ANSWER_BUDGET_CHARS,
            MIN_ANSWER_BUDGET_CHARS..=MAX_ANSWER_BUDGET_CHARS,
            "characters",
            "LIST-005",
        );
        if let Some(why) = config.blank_roots_note() {
            problems.push(Problem::new("SKILLS_DIR", Reason::Setting, why));
        }
        if let Some(why) = config.watch_refusal() {
            problems.push(Problem::new("SKILL_MCP_WATCH", Reason::Setting, why));
        }
        let instructions_budget = whole_number(
            config,
            &mut problems,
            INSTRUCTIONS_INDEX_VAR,
            INSTRUCTIONS_INDEX_CHARS,
            0..=MAX_INSTRUCTIONS_INDEX_CHARS,
            "characters",
            "LIST-014",
        );
        let elicit_secs = whole_number(
            config,
            &mut problems,
            ELICIT_TIMEOUT_VAR,
            ELICIT_TIMEOUT_SECS,
            1..=MAX_ELICIT_TIMEOUT_SECS,
            "seconds",
            "RUN-028",
        );
        let idle_secs = whole_number(
            config,
            &mut problems,
            HTTP_SESSION_IDLE_VAR,
            HTTP_SESSION_IDLE_SECS,
            1..=MAX_HTTP_SESSION_IDLE_SECS,
            "seconds",
            "HTTP-008",
        );
        let model = load_model(config, &mut problems);
        Settings {
            budget,
            instructions_budget,
            elicit_timeout: Duration::from_secs(elicit_secs as u64),
            http_session_idle: Duration::from_secs(idle_secs as u64),
            model,
            watch: watch || config.watch,
            problems,
        }
    }

    /// The settings a rescan serves with: these, but a model that was set
    /// and failed to load is tried again (LIST-017: a reload reuses a
    /// loaded model and retries one that failed, so a model folder fixed
    /// after boot is picked up without a restart).
    pub(crate) fn for_rescan(self: &Arc<Self>, config: &Config) -> Arc<Settings> {
        if self.model.is_some() || config.var(EMBEDDINGS_VAR).is_none_or(|v| v.is_empty()) {
            return Arc::clone(self);
        }
        let mut next = Settings::clone(self);
        next.problems.retain(|p| p.path != EMBEDDINGS_VAR);
        next.model = load_model(config, &mut next.problems);
        Arc::new(next)
    }

    /// How long a run's approval is waited for (RUN-028), for the offer.
    pub fn elicit_timeout(&self) -> Duration {
        self.elicit_timeout
    }
}

/// A whole-number setting: `default` when `var` is unset or empty, its
/// value when it is a whole number in `range`; else the default, and why
/// the value was refused (naming `rule`) as a `problems` entry.
fn whole_number(
    config: &Config,
    problems: &mut Vec<Problem>,
    var: &str,
    default: usize,
    range: RangeInclusive<usize>,
    unit: &str,
    rule: &str,
) -> usize {
    let Some(raw) = config.var(var).filter(|v| !v.is_empty()) else {
        return default;
    };
    let text = raw.to_string_lossy();
    match text.trim().parse::<usize>() {
        Ok(n) if range.contains(&n) => n,
        _ => {
            // The refusal says the range; what to do is to keep to it.
            problems.push(Problem::new(
                var,
                Reason::Setting,
                format!(
                    "{var} is {:?}, not a whole number from {} to {}; the default of {default} {unit} holds \
                     ({rule}): set {var} to a whole number in that range, or unset it for the default",
                    text.chars().take(40).collect::<String>(),
                    range.start(),
                    range.end()
                ),
            ));
            default
        }
    }
}

/// The owner's embedding model (LIST-017), when one is set: loaded, or
/// a problem naming the variable and why it cannot be used.
fn load_model(config: &Config, problems: &mut Vec<Problem>) -> Option<Arc<Model>> {
    let dir = config.var(EMBEDDINGS_VAR).filter(|v| !v.is_empty())?;
    semantic::shared(Path::new(dir))
        .map_err(|why| problems.push(Problem::new(EMBEDDINGS_VAR, Reason::Setting, why.0)))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::path::PathBuf;

    fn resolve(vars: &[(&str, &str)]) -> Settings {
        let env: BTreeMap<OsString, OsString> = vars
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
        let config = Config::from_env(env, Path::new("/work"), PathBuf::from("/pkg/skills"));
        Settings::resolve(&config, false)
    }

    #[test]
    fn a_refused_value_keeps_its_default_and_says_why_in_order() {
        let s = resolve(&[
            (HTTP_SESSION_IDLE_VAR, "0"),
            (ANSWER_BUDGET_VAR, "lots"),
            ("SKILL_MCP_WATCH", "yes"),
        ]);
        assert_eq!(s.budget, ANSWER_BUDGET_CHARS);
        assert_eq!(
            s.http_session_idle,
            Duration::from_secs(HTTP_SESSION_IDLE_SECS as u64)
        );
        let paths: Vec<&str> = s.problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [ANSWER_BUDGET_VAR, "SKILL_MCP_WATCH", HTTP_SESSION_IDLE_VAR]
        );
        assert!(
            s.problems[0].detail.ends_with(
                "(LIST-005): set SKILL_MCP_ANSWER_BUDGET to a whole number in that range, or unset it for the default"
            ),
            "{}",
            s.problems[0].detail
        );
    }

    #[test]
    fn the_command_line_or_the_environment_asks_to_watch() {
        assert!(!resolve(&[]).watch);
        assert!(resolve(&[("SKILL_MCP_WATCH", "1")]).watch);
        let config = Config::from_env(BTreeMap::new(), Path::new("/"), PathBuf::from("/x"));
        assert!(Settings::resolve(&config, true).watch);
    }
}
