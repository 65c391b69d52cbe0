//! SRV-007: a client nobody here wrote — the official MCP Python SDK —
//! drives the built binary in both of its modes, through every read surface
//! (tools, prompts, resources) and `skill_run`.
//!
//! The SDK lives in a virtualenv the README's test command creates
//! (`.venv` at the repository root); `SKILL_MCP_PYTHON` overrides it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// How many small generated files the fixture holds: more than two pages
/// of 500 (READ-011), so `resources/list` must be walked through two cursors.
const GENERATED: usize = 1100;

/// The tree `tests/clients/python_sdk.py` expects, under `root`:
/// `skills/sdk-demo/` (the one skill: a `mcp-host` block declaring
/// `hello.js` and `mark.js`, an undeclared `undeclared.js`, text files, a file
/// one byte over 1 MiB, a symlink leading out of the skill and
/// `GENERATED` files under `gen/`), and `outside.txt` beside `skills/`.
fn fixture(root: &Path) -> PathBuf {
    let skills = root.join("skills");
    let skill = skills.join("sdk-demo");
    std::fs::create_dir_all(skill.join("docs")).unwrap();
    std::fs::create_dir_all(skill.join("gen")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: sdk-demo\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    \
         - script: hello.js\n      interpreter: node\n      timeout: 20\n    \
         - script: mark.js\n      interpreter: node\n      timeout: 20\n---\nLine one\r\nünïcödé\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("hello.js"),
        "process.stdout.write('hello ' + JSON.stringify(process.argv.slice(2)) + '\\n');\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("mark.js"),
        "require('fs').writeFileSync('marker', 'made');\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("undeclared.js"),
        "require('fs').writeFileSync('undeclared-ran', 'ran');\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("docs/readme.txt"),
        "Read me: ünïcödé\nsecond line\n",
    )
    .unwrap();
    std::fs::write(skill.join("docs/a b.txt"), "spaced out\n").unwrap();
    std::fs::write(skill.join("big.txt"), "z".repeat(1024 * 1024 + 1)).unwrap();
    std::fs::write(root.join("outside.txt"), "not the skill's\n").unwrap();
    std::os::unix::fs::symlink("../../outside.txt", skill.join("escape.txt")).unwrap();
    for i in 0..GENERATED {
        std::fs::write(skill.join(format!("gen/f{i:04}.txt")), format!("{i}\n")).unwrap();
    }
    skills
}

/// Runs one of the SDK scripts in tests/clients against the built server
/// and requires it to finish with its "ALL OK" line. `env` goes to the
/// script.
fn run_sdk_script(script: &str, arg: &Path, env: &[(&str, &str)]) {
    let python = std::env::var_os("SKILL_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.venv/bin/python")));
    assert!(
        python.exists(),
        "no Python with the MCP SDK at {}: run the README's test command (.ci/test), which creates it, \
         or point SKILL_MCP_PYTHON at one",
        python.display()
    );
    let out = Command::new(&python)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/clients")
                .join(script),
        )
        .arg(env!("CARGO_BIN_EXE_skill-mcp"))
        .arg(arg)
        .envs(env.iter().copied())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_python_sdk_reads_every_surface_and_runs() {
    let root = tempfile::tempdir().unwrap();
    let skills = fixture(root.path());
    run_sdk_script(
        "python_sdk.py",
        &skills,
        &[("SKILL_MCP_EXPECTED_VERSION", env!("CARGO_PKG_VERSION"))],
    );
}

/// What the README's serve command serves (the bundled skills/, no root
/// variable set), through the same third-party client.
#[test]
fn the_python_sdk_uses_the_bundled_skill_as_the_serve_command_serves_it() {
    run_sdk_script(
        "python_bundled.py",
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/skills")),
        &[],
    );
}
