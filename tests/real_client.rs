//! SRV-007: a client nobody here wrote — the official MCP Python SDK —
//! drives the built binary in both of its modes.
//!
//! The SDK lives in a virtualenv the README's test command creates
//! (`.venv` at the repository root); `SKILL_MCP_PYTHON` overrides it.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_python_sdk_lists_and_loads() {
    let python = std::env::var_os("SKILL_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.venv/bin/python")));
    assert!(
        python.exists(),
        "no Python with the MCP SDK at {}: run the README's test command (.ci/test), which creates it, \
         or point SKILL_MCP_PYTHON at one",
        python.display()
    );
    let skills = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(skills.path().join("sdk-demo")).unwrap();
    std::fs::write(
        skills.path().join("sdk-demo/SKILL.md"),
        "---\nname: sdk-demo\ndescription: d\n---\nLine one\r\nünïcödé\n",
    )
    .unwrap();
    let out = Command::new(&python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/clients/python_sdk.py"
        ))
        .arg(env!("CARGO_BIN_EXE_skill-mcp"))
        .arg(skills.path())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
