//! SRV-007: a client nobody here wrote — the official MCP Python SDK —
//! drives the built binary in both of its modes, through every read surface
//! (tools, prompts, resources) and `skill_run`. SRV-002: every tool's
//! schemas pass a strict validator (the `jsonschema` package the SDK
//! depends on, with unknown formats as errors).
//!
//! The SDK lives in a virtualenv the README's test command creates
//! (`.venv` at the repository root); `SKILL_MCP_PYTHON` overrides it.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

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

/// The Python that has the MCP SDK (and so `jsonschema`).
pub(crate) fn python() -> PathBuf {
    let python = std::env::var_os("SKILL_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.venv/bin/python")));
    assert!(
        python.exists(),
        "no Python with the MCP SDK at {}: run the README's test command (.ci/test), which creates it, \
         or point SKILL_MCP_PYTHON at one",
        python.display()
    );
    python
}

pub(crate) fn client_script(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(script)
}

/// Runs one of the SDK scripts in tests/clients against the built server
/// and requires it to finish with its "ALL OK" line. `env` goes to the
/// script.
fn run_sdk_script(script: &str, arg: &Path, env: &[(&str, &str)]) {
    let out = Command::new(python())
        .arg(client_script(script))
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

/// Every integer schema in `schema`, with the path of keys leading to it.
fn integers<'a>(schema: &'a Value, path: &mut Vec<String>, out: &mut Vec<(String, &'a Value)>) {
    match schema {
        Value::Object(map) => {
            let is_integer = |t: &Value| t == "integer";
            if map.get("type").is_some_and(|t| {
                is_integer(t) || t.as_array().is_some_and(|a| a.iter().any(is_integer))
            }) {
                out.push((path.join("/"), schema));
            }
            for (k, v) in map {
                path.push(k.clone());
                integers(v, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(i.to_string());
                integers(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// SRV-002: the schemas `tools/list` hands out, read from the built server
/// over stdio, pass a strict validator (tests/clients/strict_schemas.py):
/// no keyword or `format` the JSON Schema standard does not define, so a
/// host's validator has nothing to warn about; and real results of every
/// tool validate against their outputSchema through it. Every integer is
/// `"type": "integer"` with `"minimum": 0`, the exit code (signed) aside.
#[test]
fn every_tool_schema_passes_a_strict_validator() {
    let root = tempfile::tempdir().unwrap();
    let skills = fixture(root.path());
    let mut s = common::Session::start(
        Path::new(common::BIN),
        &[("SKILLS_DIR", skills.to_str().unwrap())],
    );
    let listed = s.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].clone();
    assert_eq!(
        tools.as_array().map(Vec::len),
        Some(4),
        "the four tools: {listed}"
    );
    let run = |confirm: bool| json!({"name": "sdk-demo", "script": "hello.js", "args": ["a"], "confirm": confirm});
    let instances = json!({
        "skill_list": [s.tool("skill_list", json!({}))],
        "skill_load": [s.tool("skill_load", json!({"name": "sdk-demo"}))],
        "skill_file": [s.tool("skill_file", json!({"name": "sdk-demo", "paths": ["docs/readme.txt", "nope.txt"]}))],
        "skill_run": [s.tool("skill_run", run(false)), s.tool("skill_run", run(true))],
    });
    assert!(s.finish().success());

    for tool in tools.as_array().unwrap() {
        for which in ["inputSchema", "outputSchema"] {
            let mut found = Vec::new();
            integers(&tool[which], &mut Vec::new(), &mut found);
            for (path, int) in found {
                let name = format!("{}.{which} at {path}", tool["name"]);
                if path.ends_with("properties/exitCode") {
                    continue; // an i32, as the OS reports it
                }
                // Unsigned: a minimum of 0, or more where the argument
                // says so (skill_list's `limit` is at least 1).
                assert!(
                    int.get("minimum")
                        .and_then(serde_json::Value::as_u64)
                        .is_some(),
                    "{name}: an unsigned integer says its minimum (0, or more): {int}"
                );
            }
        }
    }

    let mut child = Command::new(python())
        .arg(client_script("strict_schemas.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    let doc = json!({"tools": tools, "instances": instances});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(doc.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("0 schema warnings in 8 schemas of 4 tools"),
        "every tool's schemas were checked: {stdout}"
    );
}
