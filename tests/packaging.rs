//! PKG-001, PKG-002, PKG-004, PKG-005 (spec/packaging.md): the package is
//! what its files say. mint.yaml (for mcp-host) and server.json (for the
//! MCP registry) hold the keys they must and propose nothing they may not,
//! and the interpreter set a build runs is the one the package states:
//! `node`, plus `python3` in the `python3` build (the Nix `with-python`
//! package, whose check runs this file with that feature).

use crate::common;
use common::*;

use std::path::Path;

use serde_json::{Value, json};
use serde_yaml_ng::Value as Yaml;

fn read(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every mapping key anywhere in `v`, with its path.
fn keys(v: &Yaml, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        Yaml::Mapping(m) => {
            for (k, v) in m {
                let k = k.as_str().unwrap_or("<not a string>").to_owned();
                let p = format!("{path}{k}");
                out.push((k, p.clone()));
                keys(v, &format!("{p}."), out);
            }
        }
        Yaml::Sequence(s) => {
            for (i, v) in s.iter().enumerate() {
                keys(v, &format!("{path}{i}."), out);
            }
        }
        _ => {}
    }
}

#[test]
fn mint_yaml_has_its_keys_allows_no_egress_and_names_no_runtime() {
    let text = read("mint.yaml");
    let v: Yaml = serde_yaml_ng::from_str(&text).expect("mint.yaml is YAML");
    let m = v.as_mapping().expect("mint.yaml is a mapping");
    for key in ["version", "name", "slug", "summary"] {
        let s = m.get(key).and_then(Yaml::as_str);
        assert!(
            s.is_some_and(|s| !s.trim().is_empty()),
            "mint.yaml: {key} must be a non-empty string, is {:?}",
            m.get(key)
        );
    }
    assert_eq!(
        v["version"].as_str(),
        Some(env!("CARGO_PKG_VERSION")),
        "mint.yaml's version is Cargo.toml's"
    );
    assert_eq!(v["name"].as_str(), Some("skill-mcp"));
    let slug = v["slug"].as_str().unwrap();
    assert!(
        slug.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
        "mint.yaml: slug {slug:?} is not lowercase-and-dashes"
    );

    // egress is exactly `{ allow: [] }`: the adapter itself reaches nothing.
    let egress = v["egress"]
        .as_mapping()
        .expect("mint.yaml: egress is a mapping");
    assert_eq!(egress.len(), 1, "mint.yaml: egress holds only allow");
    assert_eq!(
        v["egress"]["allow"].as_sequence().map(Vec::len),
        Some(0),
        "mint.yaml: egress.allow must be []"
    );

    // What it deliberately does not propose is absent, at any depth for
    // the runtime (a manifest may never name one), and said in comments.
    let mut all = Vec::new();
    keys(&v, "", &mut all);
    for (k, p) in &all {
        assert_ne!(k, "runtime", "mint.yaml names a runtime at {p}");
    }
    for key in ["skills", "state", "tools", "runtime"] {
        assert!(m.get(key).is_none(), "mint.yaml proposes {key}");
    }
    let comments: String = text
        .lines()
        .filter(|l| l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    for said in [
        "runtime",
        "the skills",
        "state.dataDir",
        "the real egress list",
        "tools.enable",
    ] {
        assert!(
            comments.contains(said),
            "mint.yaml's comments do not say why it leaves out {said:?}"
        );
    }
}

#[test]
fn server_json_describes_the_stdio_server_its_skills_dir_and_the_image() {
    let v: Value = serde_json::from_str(&read("server.json")).expect("server.json is JSON");
    let schema = v["$schema"].as_str().unwrap_or_default();
    assert!(
        schema.starts_with("https://static.modelcontextprotocol.io/schemas/")
            && schema.ends_with("/server.schema.json"),
        "server.json: $schema {schema:?}"
    );
    // Required by the schema: name (reverse DNS, one slash), description
    // (at most 100 characters), version.
    let name = v["name"].as_str().expect("server.json: name");
    let (ns, server) = name.split_once('/').expect("server.json: name has a '/'");
    assert!(
        !ns.is_empty()
            && !server.is_empty()
            && !server.contains('/')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"./-_".contains(&b)),
        "server.json: name {name:?} is not namespace/name"
    );
    let description = v["description"].as_str().expect("server.json: description");
    assert!(
        !description.is_empty() && description.chars().count() <= 100,
        "server.json: description must be 1..=100 characters"
    );
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["repository"]["url"], env!("CARGO_PKG_REPOSITORY"));
    assert_eq!(v["repository"]["source"], "github");

    let packages = v["packages"].as_array().expect("server.json: packages");
    for p in packages {
        for key in ["registryType", "identifier", "transport"] {
            assert!(
                p.get(key).is_some(),
                "server.json: a package lacks {key}: {p}"
            );
        }
        assert_eq!(p["transport"], json!({"type": "stdio"}), "a stdio server");
    }
    let oci = packages
        .iter()
        .find(|p| p["registryType"] == "oci")
        .expect("server.json: an OCI package for the image");
    let identifier = oci["identifier"].as_str().unwrap();
    assert!(
        identifier.ends_with(&format!("/skill-mcp:{}", env!("CARGO_PKG_VERSION"))),
        "the OCI identifier {identifier:?} names the image `nix build .#image` tags"
    );
    assert!(
        identifier.split('/').count() == 3,
        "{identifier:?} is registry/namespace/repository:tag"
    );

    // SKILLS_DIR points where the mount puts the user's skills.
    let vars = oci["environmentVariables"]
        .as_array()
        .expect("environmentVariables");
    let skills_dir = vars
        .iter()
        .find(|e| e["name"] == "SKILLS_DIR")
        .expect("server.json: the SKILLS_DIR variable");
    assert!(
        skills_dir["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
    let target = skills_dir["value"]
        .as_str()
        .expect("SKILLS_DIR's value in the image");
    let mount = oci["runtimeArguments"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["name"] == "--mount"))
        .expect("server.json: a --mount for the skills");
    assert!(
        mount["value"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("dst={target},")) && m.contains("readonly")),
        "the mount puts the skills, read-only, at SKILLS_DIR ({target}): {mount}"
    );
}

/// A skill with one node script and one python3 script, each printing
/// which interpreter ran it and its arguments.
fn two_interpreter_skill(root: &Path) {
    let s = root.join("s");
    std::fs::create_dir_all(&s).unwrap();
    std::fs::write(
        s.join("SKILL.md"),
        "---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: hello.js\n      interpreter: node\n    - script: hello.py\n      interpreter: python3\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(
        s.join("hello.js"),
        "process.stdout.write('node ran ' + process.argv.slice(2).join(' '))",
    )
    .unwrap();
    std::fs::write(
        s.join("hello.py"),
        "import sys\nsys.stdout.write('python3 ran ' + ' '.join(sys.argv[1:]))",
    )
    .unwrap();
}

fn run(s: &mut Session, script: &str) -> Value {
    s.request(
        "tools/call",
        json!({"name": "skill_run", "arguments": {"name": "s", "script": script, "args": ["a b"], "confirm": true}}),
    )
}

#[test]
fn the_interpreter_set_is_the_one_this_build_states() {
    let dir = tempfile::tempdir().unwrap();
    two_interpreter_skill(dir.path());
    let mut s = Session::start(
        Path::new(BIN),
        &[("SKILLS_DIR", dir.path().to_str().unwrap())],
    );
    let list = s.tool("skill_list", json!({}));
    let skill = &list["skills"][0];
    let scripts: Vec<&str> = skill["scripts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["script"].as_str().unwrap())
        .collect();

    // node is in every build, and runs.
    assert!(scripts.contains(&"hello.js"), "{skill}");
    let r = run(&mut s, "hello.js");
    assert_eq!(r["result"]["structuredContent"]["exitCode"], 0, "{r}");
    assert_eq!(
        r["result"]["structuredContent"]["stdout"], "node ran a b",
        "{r}"
    );

    let r = run(&mut s, "hello.py");
    if cfg!(feature = "python3") {
        // The with-python build: python3 is in the set and runs.
        assert!(scripts.contains(&"hello.py"), "{skill}");
        assert_eq!(r["result"]["structuredContent"]["exitCode"], 0, "{r}");
        assert_eq!(
            r["result"]["structuredContent"]["stdout"], "python3 ran a b",
            "{r}"
        );
    } else {
        // The default build: python3 is outside the set, and both the list
        // and the refusal name the set.
        assert!(!scripts.contains(&"hello.py"), "{skill}");
        let unavailable = skill["unavailableScripts"].as_array().unwrap();
        assert_eq!(unavailable.len(), 1, "{skill}");
        assert_eq!(unavailable[0]["script"], "hello.py");
        let reason = unavailable[0]["reason"].as_str().unwrap();
        // It names the set, and the build that runs python3 (issue 41 §3).
        assert!(
            reason.contains("\"python3\"")
                && reason.contains("this deployment runs: node;")
                && reason.contains("a build with --features python3 runs python3 scripts"),
            "{reason}"
        );
        assert_eq!(r["result"]["isError"], true, "{r}");
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("hello.py") && text.contains("this deployment runs: node"),
            "{text}"
        );
    }
    s.finish();
}
