//! The skills profile computes every digest and size it expects from the
//! fixture's own bytes (SUITE-011): a server that hands out one wrong
//! digest fails the manifest case, and one that serves other bytes than
//! its manifest describes fails the read case — each while the other
//! case, whose view is still right, passes. `--known-failures` then
//! holds the run to exactly the listed cases.
//!
//! The server here is this test binary itself (`harness = false`): with
//! `SEP_FAKE_SERVER` set — by the adapter, as any implementation gets its
//! settings — it serves `SKILLS_DIR` as a small SEP-2640 server over stdio,
//! honestly or with one fault.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

const TEST: &str = "honest_passes_and_each_fault_fails_only_its_case";

/// The server when the adapter says so; else the one test, answering the
/// part of libtest's command line that `cargo test` and `cargo nextest`
/// use (`--list`, `--ignored`, a name filter).
fn main() {
    if let Ok(fault) = std::env::var("SEP_FAKE_SERVER") {
        return serve(&fault);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ignored = args.iter().any(|a| a == "--ignored");
    if args.iter().any(|a| a == "--list") {
        if !ignored {
            println!("{TEST}: test");
        }
        return;
    }
    let filter = args.iter().find(|a| !a.starts_with('-'));
    if ignored || filter.is_some_and(|f| !TEST.contains(f.as_str())) {
        return;
    }
    honest_passes_and_each_fault_fails_only_its_case();
    println!("test {TEST} ... ok");
}

// ---- the fake server -------------------------------------------------

/// `dir`'s files below it, `/`-separated, sorted.
fn files(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let mut ents: Vec<_> = std::fs::read_dir(dir.join(rel))
        .map(|rd| rd.flatten().collect())
        .unwrap_or_default();
    ents.sort_by_key(|e| e.file_name());
    for e in ents {
        let name = e.file_name().to_string_lossy().into_owned();
        let r = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        match e.file_type() {
            Ok(t) if t.is_dir() => files(dir, &r, out),
            Ok(t) if t.is_file() => out.push(r),
            _ => {}
        }
    }
}

struct Catalog {
    /// uri → bytes of every file of every skill.
    bytes: BTreeMap<String, Vec<u8>>,
    skills: Vec<Value>,
}

fn catalog(root: &Path, fault: &str) -> Catalog {
    let mut bytes = BTreeMap::new();
    let mut skills = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .map(|rd| rd.flatten().collect())
        .unwrap_or_default();
    dirs.sort_by_key(|e| e.file_name());
    for d in dirs {
        let name = d.file_name().to_string_lossy().into_owned();
        if !d.path().join("SKILL.md").is_file() {
            continue;
        }
        let mut fs = Vec::new();
        files(&d.path(), "", &mut fs);
        let mut resources = Vec::new();
        for f in fs {
            let b = std::fs::read(d.path().join(&f)).unwrap_or_default();
            let uri = format!("skill://{name}/{f}");
            let mut digest = format!("sha256:{}", hex::encode(Sha256::digest(&b)));
            if fault == "digest" && f == "references/guide.md" {
                // One hex digit off: what a stale or careless manifest says.
                let last = if digest.ends_with('0') { "1" } else { "0" };
                digest.pop();
                digest.push_str(last);
            }
            resources.push(json!({"uri": uri, "digest": digest, "size": b.len()}));
            bytes.insert(uri, b);
        }
        skills.push(json!({
            "uri": format!("skill://{name}/SKILL.md"),
            "frontmatter": {"name": name, "description": "served by the fake"},
            "resources": resources,
        }));
    }
    Catalog { bytes, skills }
}

fn serve(fault: &str) {
    let root = PathBuf::from(std::env::var("SKILLS_DIR").unwrap_or_default());
    let cat = catalog(&root, fault);
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = msg.get("id").cloned() else {
            continue;
        };
        let stateless =
            msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_string();
        let frame = |mut v: Value| {
            if stateless {
                v["resultType"] = json!("complete");
                v["ttlMs"] = json!(0);
                v["cacheScope"] = json!("private");
            }
            v
        };
        let caps = json!({"extensions": {"io.modelcontextprotocol/skills": {}}, "resources": {}});
        let uri = msg["params"]["uri"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let reply = match msg["method"].as_str().unwrap_or_default() {
            "initialize" => Ok(
                json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                                      "serverInfo": {"name": "fake-sep-server", "version": "0"}}),
            ),
            "server/discover" => Ok(frame(
                json!({"supportedVersions": ["2026-07-28"], "capabilities": caps,
                                                 "serverInfo": {"name": "fake-sep-server", "version": "0"}}),
            )),
            "skills/list" if msg["params"]["cursor"].is_string() => Err(-32602),
            "skills/list" => Ok(frame(json!({"skills": cat.skills}))),
            "skills/get" => match cat.skills.iter().find(|s| s["uri"] == uri) {
                Some(s) => Ok(frame(json!({"skill": s}))),
                None => Err(-32602),
            },
            "resources/read" => match cat.bytes.get(&uri) {
                Some(b) => {
                    let mut b = b.clone();
                    if fault == "bytes" && uri.ends_with("references/guide.md") {
                        b.push(b'!');
                    }
                    let blob = base64::engine::general_purpose::STANDARD.encode(&b);
                    Ok(frame(json!({"contents": [{"uri": uri, "blob": blob}]})))
                }
                None => Err(-32602),
            },
            _ => Err(-32601),
        };
        let msg = match reply {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err(code) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "no"}})
            }
        };
        let _ = writeln!(out, "{msg}");
        let _ = out.flush();
    }
}

// ---- the test ---------------------------------------------------------

/// One run of the runner against this binary with `fault`: its exit code
/// and its JSON report.
fn run(fault: &str, known: Option<&str>) -> (i32, Value) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let adapter = dir.path().join("adapter.json");
    std::fs::write(
        &adapter,
        json!({"name": "fake", "env": {"SKILLS_DIR": "${SKILLS}", "SEP_FAKE_SERVER": fault}})
            .to_string(),
    )
    .expect("the adapter is written");
    let me = std::env::current_exe().expect("this test's path");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skill-mcp-conformance"));
    cmd.args([
        "--profile",
        "skills",
        "--format",
        "json",
        "--only",
        "SKL-020,SKL-022",
    ])
    .arg("--adapter")
    .arg(&adapter)
    .arg("--server")
    .arg(me.to_string_lossy().as_ref());
    if let Some(k) = known {
        let f = dir.path().join("known.md");
        std::fs::write(
            &f,
            format!("| case | sentence | observed |\n| --- | --- | --- |\n| {k} | x | y |\n"),
        )
        .expect("the list is written");
        cmd.arg("--known-failures").arg(&f);
    }
    let out = cmd.output().expect("the runner runs");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the report is not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

fn status(report: &Value, id: &str) -> String {
    report["cases"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["id"] == id))
        .and_then(|c| c["status"].as_str())
        .unwrap_or("missing")
        .to_string()
}

fn honest_passes_and_each_fault_fails_only_its_case() {
    let (code, r) = run("none", None);
    assert_eq!(
        (status(&r, "SKL-020"), status(&r, "SKL-022")),
        ("pass".into(), "pass".into()),
        "{r:#}"
    );
    assert_eq!(code, 0);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("2025-11-25 initialize session: judged"),
        "{notes}"
    );
    assert!(
        notes.contains("per-request _meta (stateless): judged"),
        "{notes}"
    );

    // A digest one hex digit off: the manifest case fails, naming the
    // digest the runner computed from the fixture's bytes.
    let (code, r) = run("digest", None);
    assert_eq!(
        (status(&r, "SKL-020"), status(&r, "SKL-022")),
        ("fail".into(), "pass".into()),
        "{r:#}"
    );
    assert_eq!(code, 1);
    let failure = r["cases"][0]["results"][0]["failures"][0].to_string();
    assert!(
        failure.contains("references/guide.md") && failure.contains("digest"),
        "{failure}"
    );
    assert_eq!(r["cases"][0]["sentences"][0], "SEP2640-RES-01", "{r:#}");

    // Bytes served unlike the manifest: the read case fails, the
    // manifest case (right about the file on disk) passes.
    let (_, r) = run("bytes", None);
    assert_eq!(
        (status(&r, "SKL-020"), status(&r, "SKL-022")),
        ("pass".into(), "fail".into()),
        "{r:#}"
    );

    // A run passes exactly when the failures are the listed ones.
    let (code, r) = run("digest", Some("SKL-020"));
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["known_failures"]["holds"], true);
    let (code, _) = run("none", Some("SKL-020"));
    assert_eq!(code, 1, "a listed case that passes fails the run");
}
