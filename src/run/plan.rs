//! The plan (RUN-001..RUN-008): whether a script may run — declared,
//! granted, available, inside the fence, its arguments within bounds —
//! and exactly how: the argv, the working directory, the timeout and an
//! environment built from nothing but an allowlist and the granted names.

use std::ffi::OsString;
use std::path::PathBuf;

use super::RunError;
use crate::catalog::Skill;
use crate::config::Config;
use crate::fence;
use crate::grant::Scripts;
use crate::interpreters::Interpreters;
use crate::limits::{MAX_RUN_ARG_BYTES, MAX_RUN_ARGS};

/// The variables every script gets when the server has them (README: "A
/// script gets `PATH`, `HOME`, `LANG`, `TZ`, `TMPDIR`, `MCP_DATA_DIR` when
/// the host set one"). It mirrors mcp-host's `INSTALL_ALLOWLIST`: a host
/// constant a declaration cannot widen by one name.
pub(crate) const ENV_ALLOWLIST: &[&str] = &["PATH", "HOME", "LANG", "TZ", "TMPDIR", "MCP_DATA_DIR"];

/// Exactly what would run: the dry run shows it and the run executes it.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) skill: String,
    pub(crate) script: String,
    pub(crate) interpreter: String,
    /// The exact argv: interpreter's absolute path, script's real path, args.
    pub(crate) argv: Vec<String>,
    pub(crate) cwd: PathBuf,
    pub(crate) timeout_ms: u64,
    /// The environment handed over, built from nothing.
    pub(super) env: Vec<(OsString, OsString)>,
    /// Names in `env`, sorted.
    pub(crate) env_names: Vec<String>,
    /// Granted names the server's environment does not set.
    pub(crate) env_not_set: Vec<String>,
}

pub(super) fn check_args(args: &[String]) -> Result<(), RunError> {
    if args.len() > MAX_RUN_ARGS {
        return Err(RunError::TooManyArgs { count: args.len() });
    }
    let bytes: usize = args.iter().map(String::len).sum();
    if bytes > MAX_RUN_ARG_BYTES {
        return Err(RunError::ArgsTooLarge { bytes });
    }
    if let Some(index) = args.iter().position(|a| a.contains('\0')) {
        return Err(RunError::ArgNul { index });
    }
    Ok(())
}

/// Decides whether `script` of `skill` may run with `args`, and exactly how
/// (RUN-001..RUN-008). Every refusal a run would meet is met here, so the
/// preview refuses what the run would refuse.
pub(crate) fn plan(
    skill: &Skill,
    scripts: &Scripts,
    interpreters: &Interpreters,
    config: &Config,
    grant_from: &'static str,
    script: &str,
    args: &[String],
) -> Result<Plan, RunError> {
    let Some(entry) = skill.declaration.run.iter().find(|e| e.script == script) else {
        return Err(RunError::NotDeclared {
            skill: skill.name.clone(),
            script: script.to_owned(),
            declared: skill
                .declaration
                .run
                .iter()
                .map(|e| e.script.clone())
                .collect(),
        });
    };
    if let Some((_, reason)) = scripts.unavailable.iter().find(|(s, _)| s == script) {
        return Err(RunError::Unavailable {
            script: script.to_owned(),
            reason: reason.clone(),
        });
    }
    let Some(runnable) = scripts.runnable.iter().find(|r| r.entry.script == script) else {
        return Err(RunError::Ungranted {
            skill: skill.name.clone(),
            script: script.to_owned(),
            grant_from,
        });
    };
    let interpreter =
        interpreters
            .lookup(&entry.interpreter)
            .map_err(|reason| RunError::Unavailable {
                script: script.to_owned(),
                reason,
            })?;
    let (real, _) = fence::resolve(&skill.dir, script).map_err(RunError::Fence)?;
    check_args(args)?;

    let mut env = Vec::new();
    let mut env_not_set = Vec::new();
    for name in ENV_ALLOWLIST
        .iter()
        .copied()
        .chain(runnable.env.iter().map(String::as_str))
    {
        match config.var(name) {
            Some(v) => env.push((OsString::from(name), v.to_owned())),
            None if !ENV_ALLOWLIST.contains(&name) => env_not_set.push(name.to_owned()),
            None => {}
        }
    }
    env.sort();
    env.dedup_by(|a, b| a.0 == b.0);
    let mut argv = vec![
        interpreter.to_string_lossy().into_owned(),
        real.to_string_lossy().into_owned(),
    ];
    argv.extend(args.iter().cloned());
    Ok(Plan {
        skill: skill.name.clone(),
        script: script.to_owned(),
        interpreter: entry.interpreter.clone(),
        argv,
        cwd: skill.dir.clone(),
        timeout_ms: entry.timeout_ms,
        env_names: env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect(),
        env,
        env_not_set,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_are_capped_by_count_size_and_nul() {
        assert!(check_args(&vec!["a".into(); 64]).is_ok());
        assert!(matches!(
            check_args(&vec!["a".into(); 65]),
            Err(RunError::TooManyArgs { count: 65 })
        ));
        assert!(matches!(
            check_args(&["x".repeat(8193)]),
            Err(RunError::ArgsTooLarge { bytes: 8193 })
        ));
        assert!(matches!(
            check_args(&["ok".into(), "a\0b".into()]),
            Err(RunError::ArgNul { index: 1 })
        ));
        assert!(check_args(&["".into(), " ; $(x) \n ü".into()]).is_ok());
    }
}
