//! READ-013, SKX-003, SKX-006: the tools carry the whole experience, and
//! every door agrees on what exists and what may be read. Over one tree
//! built here — with an in-skill alias, symlinks leading out of a skill
//! (to a file outside the root, into another skill, to a directory outside)
//! and a skill the Skills extension leaves out — the test walks the tools,
//! prompts, resources and all three SEP-2640 methods and compares them:
//! every prompt is what skill_load returns, every file reads to the same
//! bytes through skill_file and resources/read, those are the bytes on disk
//! and the ones skills/get's digest and size describe, and a path refused
//! on one door is refused or absent on every door.

use crate::common;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::symlink;
use std::path::Path;

fn sha256(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The bytes a `skill_file` entry or a `resources/read` content carries.
fn bytes_of(text: &Value, b64: &Value) -> Vec<u8> {
    match (text.as_str(), b64.as_str()) {
        (Some(t), None) => t.as_bytes().to_vec(),
        (None, Some(b)) => B64.decode(b).expect("valid base64"),
        _ => panic!("exactly one of text/base64 expected: {text} {b64}"),
    }
}

/// Every file and directory `resources/directory/read` shows under `uri`,
/// depth first: files as (uri, size, mimeType), directories by uri.
fn walk_directory(
    s: &mut Session,
    uri: &str,
    depth: usize,
    files: &mut Vec<(String, u64, String)>,
    dirs: &mut Vec<String>,
) {
    assert!(depth < 16, "directory walk deeper than the tree: {uri}");
    let r = s.request("resources/directory/read", json!({"uri": uri}));
    let entries = r["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{uri}: {r}"))
        .clone();
    for e in entries {
        let child = e["uri"].as_str().unwrap().to_owned();
        assert!(
            child.starts_with(&format!("{uri}/")),
            "{child} is not a direct child of {uri}"
        );
        if e["mimeType"] == "inode/directory" {
            dirs.push(child.clone());
            walk_directory(s, &child, depth + 1, files, dirs);
        } else {
            files.push((
                child,
                e["size"].as_u64().unwrap_or_else(|| panic!("{e}")),
                e["mimeType"].as_str().unwrap().to_owned(),
            ));
        }
    }
}

/// skills/
///   alpha/  SKILL.md, `docs sub/guide #1.md` (CRLF text), real.md,
///           alias.md -> real.md (inside: served), scripts/x.js,
///           leak.md -> ../../outside/secret.md (out of the root),
///           peer.md -> ../beta/blob.bin (into another skill),
///           outdir -> ../../outside (a directory out)
///   beta/   SKILL.md, blob.bin (not UTF-8)
///   gamma/  SKILL.md whose frontmatter name is `not-gamma` (left out of
///           SEP-2640, still served), notes.md
/// outside/  secret.md
fn tree(base: &Path) -> std::path::PathBuf {
    let root = base.join("skills");
    std::fs::create_dir_all(&root).unwrap();
    for name in ["alpha", "beta"] {
        skill(&root, name);
    }
    let alpha = root.join("alpha");
    std::fs::create_dir_all(alpha.join("docs sub")).unwrap();
    std::fs::write(alpha.join("docs sub/guide #1.md"), "guide\r\n").unwrap();
    std::fs::write(alpha.join("real.md"), "the real file\n").unwrap();
    symlink("real.md", alpha.join("alias.md")).unwrap();
    std::fs::create_dir_all(alpha.join("scripts")).unwrap();
    std::fs::write(alpha.join("scripts/x.js"), "console.log('x')\n").unwrap();
    std::fs::write(root.join("beta/blob.bin"), [0u8, 159, 146, 150]).unwrap();
    std::fs::create_dir_all(root.join("gamma")).unwrap();
    std::fs::write(
        root.join("gamma/SKILL.md"),
        "---\nname: not-gamma\ndescription: left out of SEP-2640\n---\ngamma body\n",
    )
    .unwrap();
    std::fs::write(root.join("gamma/notes.md"), "gamma notes\n").unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("outside/secret.md"), "SECRET outside\n").unwrap();
    symlink("../../outside/secret.md", alpha.join("leak.md")).unwrap();
    symlink("../beta/blob.bin", alpha.join("peer.md")).unwrap();
    symlink("../../outside", alpha.join("outdir")).unwrap();
    root
}

#[test]
fn every_door_agrees_on_what_exists_and_what_may_be_read() {
    let base = tempfile::tempdir().unwrap();
    let root = tree(base.path());
    let dir = root.to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);

    let list = s.tool("skill_list", json!({}));
    let served = names(&list);
    assert_eq!(served, ["alpha", "beta", "gamma"], "{list}");
    let problems = list["problems"].as_array().unwrap().clone();
    let has_problem = |path: &str, reason: &str| {
        problems.iter().any(|p| {
            p["reason"] == reason
                && p["path"]
                    .as_str()
                    .is_some_and(|q| q.ends_with(&format!("/skills/{path}")))
        })
    };

    // Prompts: one per served skill, its text skill_load's body.
    let prompts = s.request("prompts/list", json!({}));
    let prompt_names: Vec<&str> = prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(prompt_names, served);
    let mut manifests: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for name in &served {
        let load = s.tool("skill_load", json!({"name": name}));
        let p = s.request("prompts/get", json!({"name": name}));
        assert_eq!(
            p["result"]["messages"][0]["content"]["text"], load["body"],
            "{name}"
        );
        let files = load["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_owned(),
                    f["size"].as_u64().unwrap(),
                )
            })
            .collect();
        manifests.insert(name.clone(), files);
    }

    // resources/list is exactly the manifests' files, nothing more. Each
    // is keyed `<skill>/<path>` from its title (`<skill>: <path>`): a
    // SKILL.md's `name` is its skill's (READ-017).
    let resources = s.request("resources/list", json!({}));
    let uri_of: BTreeMap<String, String> = resources["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let (skill, path) = r["title"].as_str().unwrap().split_once(": ").unwrap();
            (
                format!("{skill}/{path}"),
                r["uri"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        uri_of.len(),
        resources["result"]["resources"].as_array().unwrap().len(),
        "a resource listed twice: {resources}"
    );
    let manifest_names: BTreeSet<String> = manifests
        .iter()
        .flat_map(|(n, fs)| fs.iter().map(move |(p, _)| format!("{n}/{p}")))
        .collect();
    assert_eq!(
        uri_of.keys().cloned().collect::<BTreeSet<_>>(),
        manifest_names,
        "resources/list and skill_load's manifests name the same files"
    );
    let files_total: u64 = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["files"].as_u64().unwrap())
        .sum();
    assert_eq!(manifest_names.len() as u64, files_total);

    // Every listed file: skill_file and resources/read give the same bytes,
    // which are the bytes on disk (through an in-skill alias, its target's),
    // with the manifest's size and one media type.
    let mut bytes_at: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut mime_at: BTreeMap<String, String> = BTreeMap::new();
    for (name, files) in &manifests {
        for (path, size) in files {
            let uri = &uri_of[&format!("{name}/{path}")];
            let via_tool =
                s.tool("skill_file", json!({"name": name, "path": path}))["files"][0].clone();
            assert_eq!(via_tool["truncated"], false, "{uri}");
            let tool_bytes = if via_tool["encoding"] == "utf-8" {
                bytes_of(&via_tool["content"], &Value::Null)
            } else {
                assert_eq!(via_tool["encoding"], "base64", "{via_tool}");
                bytes_of(&Value::Null, &via_tool["content"])
            };
            let read = s.request("resources/read", json!({"uri": uri}));
            let c = &read["result"]["contents"][0];
            assert_eq!(c["uri"], uri.as_str(), "{read}");
            let read_bytes = bytes_of(&c["text"], &c["blob"]);
            let disk = std::fs::read(root.join(name).join(path)).unwrap();
            assert_eq!(tool_bytes, disk, "{uri}: skill_file is the bytes on disk");
            assert_eq!(
                read_bytes, disk,
                "{uri}: resources/read is the bytes on disk"
            );
            assert_eq!(disk.len() as u64, *size, "{uri}: the manifest's size");
            assert_eq!(via_tool["size"], json!(size), "{uri}");
            assert_eq!(c["mimeType"], via_tool["mediaType"], "{uri}");
            mime_at.insert(uri.clone(), via_tool["mediaType"].as_str().unwrap().into());
            bytes_at.insert(uri.clone(), disk);
        }
    }
    // The in-skill alias is served, as its target's bytes on every door.
    assert_eq!(
        bytes_at["skill://alpha/alias.md"],
        b"the real file\n".to_vec()
    );
    assert_eq!(
        bytes_at[&uri_of["alpha/docs sub/guide #1.md"]],
        b"guide\r\n"
    );
    assert_eq!(bytes_at["skill://beta/blob.bin"], [0u8, 159, 146, 150]);

    // SKX-006: gamma is left out of the Skills extension with its reason —
    // said in its one name-mismatch report, not a second problem (issue 41
    // §3) — and every other door still serves it.
    assert!(!has_problem("gamma/SKILL.md", "skills-extension"), "{list}");
    assert!(has_problem("gamma/SKILL.md", "name-mismatch"), "{list}");
    assert!(
        problems.iter().any(|p| p["reason"] == "name-mismatch"
            && p["detail"]
                .as_str()
                .is_some_and(|d| d.contains("leaves it out of skills/list and skills/get"))),
        "{list}"
    );
    assert!(manifest_names.contains("gamma/notes.md"));
    assert_eq!(bytes_at["skill://gamma/notes.md"], b"gamma notes\n");
    assert!(prompt_names.contains(&"gamma"));
    let eligible: Vec<String> = served.iter().filter(|n| *n != "gamma").cloned().collect();
    let get = s.request("skills/get", json!({"uri": "skill://gamma/SKILL.md"}));
    assert_eq!(get["error"]["code"], -32602, "{get}");
    assert!(
        get["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("skill://gamma/SKILL.md")),
        "{get}"
    );
    let d = s.request("resources/directory/read", json!({"uri": "skill://gamma"}));
    assert_eq!(d["error"]["code"], -32602, "{d}");

    // SKX-001..004: skills/list lists exactly the eligible skills; each entry
    // is skills/get's, its manifest is skill_load's (same URIs, order and
    // sizes), each digest is the sha256 of the bytes the other doors read,
    // and resources/directory/read shows the same files and nothing else.
    let ext = s.request("skills/list", json!({}));
    let ext_skills = ext["result"]["skills"].as_array().unwrap().clone();
    let ext_names: Vec<&str> = ext_skills
        .iter()
        .map(|e| e["frontmatter"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(ext_names, eligible, "{ext}");
    let mut ext_uris: BTreeSet<String> = BTreeSet::new();
    for (entry, name) in ext_skills.iter().zip(&eligible) {
        let skill_uri = format!("skill://{name}/SKILL.md");
        assert_eq!(entry["uri"], skill_uri.as_str());
        let get = s.request("skills/get", json!({"uri": skill_uri}));
        assert_eq!(
            &get["result"]["skill"], entry,
            "{name}: skills/get is skills/list's entry"
        );
        let manifest: Vec<(String, u64, String)> = entry["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["uri"].as_str().unwrap().to_owned(),
                    r["size"].as_u64().unwrap(),
                    r["digest"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let expected: Vec<(String, u64, String)> = manifests[name]
            .iter()
            .map(|(path, size)| {
                let uri = uri_of[&format!("{name}/{path}")].clone();
                let digest = sha256(&bytes_at[&uri]);
                (uri, *size, digest)
            })
            .collect();
        assert_eq!(
            manifest, expected,
            "{name}: the extension's manifest is skill_load's, digests of the bytes read"
        );
        ext_uris.extend(manifest.into_iter().map(|(u, _, _)| u));

        let (mut files, mut dirs) = (Vec::new(), Vec::new());
        walk_directory(&mut s, &format!("skill://{name}"), 0, &mut files, &mut dirs);
        let mut from_dirs: Vec<(String, u64)> =
            files.iter().map(|(u, n, _)| (u.clone(), *n)).collect();
        from_dirs.sort();
        let mut from_manifest: Vec<(String, u64)> =
            expected.iter().map(|(u, n, _)| (u.clone(), *n)).collect();
        from_manifest.sort();
        assert_eq!(
            from_dirs, from_manifest,
            "{name}: resources/directory/read shows the manifest's files"
        );
        for (uri, _, mime) in &files {
            assert_eq!(mime, &mime_at[uri], "{uri}: one media type");
        }
        for d in &dirs {
            assert!(
                from_manifest
                    .iter()
                    .any(|(u, _)| u.starts_with(&format!("{d}/"))),
                "{d}: a directory no manifest file is in"
            );
        }
        if name == "alpha" {
            assert!(
                dirs.contains(&"skill://alpha/scripts".to_owned()),
                "{dirs:?}"
            );
        }
    }

    // A symlink leading out of the skill is unreadable on every door and
    // absent from every listing, and reported.
    for (path, escaped) in [
        ("leak.md", "leak.md"),
        ("peer.md", "peer.md"),
        ("outdir/secret.md", "outdir"),
    ] {
        assert!(
            has_problem(&format!("alpha/{escaped}"), "symlink-escape"),
            "alpha/{escaped} not reported as symlink-escape: {list}"
        );
        let r = s.request(
            "tools/call",
            json!({"name": "skill_file", "arguments": {"name": "alpha", "path": path}}),
        );
        assert_eq!(r["result"]["isError"], true, "skill_file {path}: {r}");
        let msg = r["result"]["content"][0]["text"].as_str().unwrap_or("");
        assert!(msg.contains("outside"), "skill_file {path}: {r}");
        assert!(!msg.contains("SECRET"), "skill_file {path} leaked: {r}");
        let uri = format!("skill://alpha/{path}");
        let r = s.request("resources/read", json!({"uri": uri}));
        assert!(r.get("result").is_none(), "resources/read {uri}: {r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("outside") && !m.contains("SECRET")),
            "resources/read {uri}: {r}"
        );
        for escaped_uri in [
            format!("skill://alpha/{escaped}"),
            format!("skill://alpha/{path}"),
        ] {
            assert!(
                !uri_of.values().any(|u| u == &escaped_uri),
                "{escaped_uri} in resources/list"
            );
            assert!(
                !manifest_names.contains(&format!("alpha/{escaped}")),
                "alpha/{escaped} in skill_load's manifest"
            );
            assert!(
                !ext_uris.contains(&escaped_uri),
                "{escaped_uri} in the Skills extension's manifest"
            );
        }
    }
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    walk_directory(&mut s, "skill://alpha", 0, &mut files, &mut dirs);
    for u in files.iter().map(|(u, _, _)| u).chain(&dirs) {
        assert!(
            !["leak.md", "peer.md", "outdir"]
                .iter()
                .any(|e| u == &format!("skill://alpha/{e}")
                    || u.starts_with("skill://alpha/outdir/")),
            "{u} shown by resources/directory/read"
        );
    }
    let d = s.request(
        "resources/directory/read",
        json!({"uri": "skill://alpha/outdir"}),
    );
    assert_eq!(
        d["error"]["code"], -32602,
        "a directory out of the skill: {d}"
    );
    s.finish();
}

/// SEP-2164: a resource that is not there is -32002 whose `data` carries
/// the URI asked for; a URI too long to echo is named by an excerpt in
/// the message and left out of `data` (HARD-005).
#[test]
fn a_missing_resource_names_its_uri_in_the_errors_data() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "s");
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(
        Path::new(env!("CARGO_BIN_EXE_skill-mcp")),
        &[("SKILLS_DIR", dir.as_str())],
    );
    for uri in ["skill://s/no-such.txt", "skill://nobody/SKILL.md"] {
        let r = s.request("resources/read", json!({"uri": uri}));
        assert_eq!(r["error"]["code"], -32002, "{r}");
        assert_eq!(r["error"]["data"], json!({"uri": uri}), "{r}");
    }
    // Not a skill:// URI at all (the official suite's SEP-2164 probe):
    // invalid params, and still the URI in `data`.
    let foreign = "test://nonexistent-resource-for-conformance-testing";
    let r = s.request("resources/read", json!({"uri": foreign}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"], json!({"uri": foreign}), "{r}");
    let long = format!("skill://s/{}.txt", "x".repeat(300));
    let r = s.request("resources/read", json!({"uri": long}));
    assert!(r["error"]["data"].get("uri").is_none(), "{r}");
    let long_foreign = format!("test://{}", "x".repeat(300));
    let r = s.request("resources/read", json!({"uri": long_foreign}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(r["error"]["data"].get("uri").is_none(), "{r}");
    // A request made under 2026-07-28 gets that revision's code (SEP-2164),
    // the same message and `data`.
    let uri = "skill://s/no-such.txt";
    let r = s.request(
        "resources/read",
        json!({"uri": uri, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"], json!({"uri": uri}), "{r}");
    s.finish();
}
