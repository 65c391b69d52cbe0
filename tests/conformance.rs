//! The whole conformance suite against the built server, inside the test
//! suite too (so `cargo nextest run` and mutation testing see it). The
//! README's test command also runs the runner binary on its own, which is
//! how another implementation runs it.

use crate::common;

use std::process::Command;

#[test]
fn the_server_passes_the_conformance_suite() {
    // Two cases at a time, as the gate runs them; mutation testing asks for
    // more (the cases mostly wait on their servers) through this variable.
    let jobs = std::env::var("SKILL_MCP_CONFORMANCE_JOBS").unwrap_or_else(|_| "2".into());
    let out = Command::new(common::runner())
        .args(["--server", env!("CARGO_BIN_EXE_skill-mcp"), "--jobs", &jobs])
        .output()
        .expect("the runner runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains(" passed, 0 failed"), "{report}");
}
