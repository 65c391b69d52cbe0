//! The suite catches a wrong server (issue "The conformance suite as a
//! product" §4): the conformance runner, run through a proxy that breaks
//! one rule at a time, fails the cases about that rule — and passes them
//! through a proxy that breaks nothing.

mod common;

use std::process::Command;

const SERVER: &str = env!("CARGO_BIN_EXE_skill-mcp");
const PROXY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/mutating_proxy.py"
);

/// Runs `cases` through the proxy with `mutation`; returns the IDs that failed.
fn failing(mutation: &str, cases: &str) -> Vec<String> {
    let out = Command::new(common::runner())
        .args([
            "--server",
            &format!("python3 {PROXY} {mutation} {SERVER}"),
            "--only",
            cases,
            "--format",
            "json",
            "--jobs",
            "2",
        ])
        .output()
        .expect("the runner runs");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let cases = report["cases"].as_array().expect("cases in the report");
    cases
        .iter()
        .filter(|c| c["status"] != "pass")
        .map(|c| c["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn an_honest_proxy_passes() {
    assert_eq!(
        failing("none", "DISC-014,LOAD-001,READ-004,RUN-012,DISC-002"),
        Vec::<String>::new()
    );
}

#[test]
fn each_broken_rule_is_caught_by_its_cases() {
    for (mutation, cases) in [
        ("drop-problems", "DISC-014"),
        ("normalize-newlines", "LOAD-001"),
        ("never-truncated", "READ-004"),
        ("leak-env", "RUN-012"),
        ("frontmatter-name", "DISC-002"),
    ] {
        assert_eq!(
            failing(mutation, cases),
            vec![cases.to_owned()],
            "{mutation} was not caught by {cases}"
        );
    }
}
