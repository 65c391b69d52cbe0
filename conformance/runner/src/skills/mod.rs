//! The `skills` profile (`--profile skills`, SUITE-011): any server that
//! implements the MCP Skills extension, judged by SEP-2640's own sentences
//! (spec/sep-2640.md) on fixtures whose digests the runner computes —
//! never by this implementation's answers. Its cases are
//! `conformance/sep-2640/<ID>/` (conformance/sep-2640/README.md).

pub mod adapter;
pub mod case;
pub mod fixture;
pub mod http;
pub mod instantiate;
pub mod probe;
pub mod run;
#[cfg(test)]
mod spec;
pub mod transport;
pub mod uri;

use std::path::{Path, PathBuf};

use crate::skills::case::SepCase;

/// The folder of the profile's cases inside the suite.
pub const SUITE_DIR: &str = "sep-2640";

/// `<cases>/sep-2640`.
pub fn suite_dir(cases: &Path) -> PathBuf {
    cases.join(SUITE_DIR)
}

/// The cases `--only` selects (all when empty), read and checked; every
/// unreadable one is named.
pub fn load_cases(suite: &Path, only: &[String]) -> Result<Vec<SepCase>, Vec<String>> {
    let found = case::discover(suite).map_err(|e| vec![e])?;
    if let Some(id) = only.iter().find(|id| !found.iter().any(|(n, _)| n == *id)) {
        return Err(vec![format!(
            "--only: there is no case `{id}` in {}",
            suite.display()
        )]);
    }
    let mut errors = Vec::new();
    let cases: Vec<SepCase> = found
        .iter()
        .filter(|(n, _)| only.is_empty() || only.contains(n))
        .filter_map(|(n, d)| case::load(n, d, suite).map_err(|e| errors.push(e)).ok())
        .collect();
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors)
    }
}

/// The IDs of every case of the suite (for `--known-failures`).
pub fn case_ids(suite: &Path) -> Result<Vec<String>, String> {
    Ok(case::discover(suite)?.into_iter().map(|(n, _)| n).collect())
}

/// `--list`: each case, its modes, and the sentences it checks.
pub fn listing(cases: &[SepCase]) -> String {
    let mut s = String::new();
    for c in cases {
        let modes: Vec<&str> = c.modes.iter().map(|m| m.as_str()).collect();
        let mut refs = c.sentences.clone();
        refs.extend(c.readings.iter().cloned());
        s.push_str(&format!(
            "{} [{}] (skills) {} — {}\n",
            c.id,
            modes.join(","),
            c.title,
            refs.join(", ")
        ));
    }
    s
}
