//! SKX-010: the MCP Inspector CLI (npm `@modelcontextprotocol/inspector`),
//! a client that speaks SEP-2640, lists every skill, gets each one, reads
//! each file and verifies each digest against the bytes it read.
//!
//! The Inspector lives where the README's test command installs it
//! (`.npm-tools` at the repository root); `SKILL_MCP_INSPECTOR` overrides.

use std::path::PathBuf;
use std::process::Command;

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn inspector() -> PathBuf {
    let p = std::env::var_os("SKILL_MCP_INSPECTOR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/.npm-tools/node_modules/.bin/mcp-inspector"
            ))
        });
    assert!(
        p.exists(),
        "no MCP Inspector at {}: run the README's test command (.ci/test), which installs it, or set SKILL_MCP_INSPECTOR",
        p.display()
    );
    p
}

fn call(skills: &std::path::Path, args: &[&str]) -> Value {
    let out = Command::new(inspector())
        .arg("--cli")
        .arg(env!("CARGO_BIN_EXE_skill-mcp"))
        .arg("-e")
        .arg(format!("SKILLS_DIR={}", skills.display()))
        .args(args)
        .env("HOME", skills)
        .output()
        .expect("the inspector runs");
    assert!(
        out.status.success(),
        "inspector {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "inspector {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn the_inspector_lists_gets_reads_and_verifies_every_skill() {
    let root = tempfile::tempdir().unwrap();
    for (name, extra) in [("alpha", ""), ("beta-two", "")] {
        let dir = root.path().join(name);
        std::fs::create_dir_all(dir.join("refs")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} skill.{extra}\n---\n# {name}\n"),
        )
        .unwrap();
        std::fs::write(dir.join("refs/notes.md"), format!("notes of {name}\n")).unwrap();
        std::fs::write(dir.join("blob.bin"), [0u8, 1, 2, 255]).unwrap();
    }
    let listed = call(root.path(), &["--method", "skills/list"]);
    let skills = listed["skills"].as_array().expect("skills");
    let names: Vec<&str> = skills
        .iter()
        .map(|s| s["frontmatter"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "beta-two"]);
    let mut verified = 0;
    for s in skills {
        let uri = s["uri"].as_str().unwrap();
        let got = call(root.path(), &["--method", "skills/get", "--uri", uri]);
        assert_eq!(&got["skill"], s, "skills/get agrees with skills/list");
        for r in got["skill"]["resources"].as_array().unwrap() {
            let read = call(
                root.path(),
                &[
                    "--method",
                    "resources/read",
                    "--uri",
                    r["uri"].as_str().unwrap(),
                ],
            );
            let c = &read["contents"][0];
            let bytes = match (c.get("text"), c.get("blob")) {
                (Some(Value::String(t)), _) => t.as_bytes().to_vec(),
                (_, Some(Value::String(b))) => {
                    base64::engine::general_purpose::STANDARD.decode(b).unwrap()
                }
                _ => panic!("no content for {r}"),
            };
            assert_eq!(bytes.len() as u64, r["size"].as_u64().unwrap(), "{r}");
            let hex: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(r["digest"], format!("sha256:{hex}"), "{r}");
            verified += 1;
        }
    }
    assert_eq!(verified, 6);
    // The Inspector also drives the tools: a second real client for them.
    let list = call(
        root.path(),
        &["--method", "tools/call", "--tool-name", "skill_list"],
    );
    assert_eq!(
        list["structuredContent"]["skills"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "{list}"
    );
}
