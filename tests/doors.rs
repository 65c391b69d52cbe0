//! READ-013: the tools carry the whole experience. Over one fixture tree,
//! every prompt is what skill_load returns and every resource is what
//! skill_file returns; and every skill and file is reachable from the tools.

mod common;
use common::*;
use serde_json::{Value, json};

#[test]
fn prompts_and_resources_are_second_doors_onto_the_tools() {
    let root = tempfile::tempdir().unwrap();
    for name in ["alpha", "beta"] {
        skill(root.path(), name);
    }
    std::fs::create_dir_all(root.path().join("alpha/docs sub")).unwrap();
    std::fs::write(root.path().join("alpha/docs sub/guide #1.md"), "guide\r\n").unwrap();
    std::fs::write(root.path().join("beta/blob.bin"), [0u8, 159, 146, 150]).unwrap();
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(std::path::Path::new(BIN), &[("SKILLS_DIR", &dir)]);

    let list = s.tool("skill_list", json!({}));
    let prompts = s.request("prompts/list", json!({}));
    let prompt_names: Vec<&str> = prompts["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(prompt_names, names(&list));
    for name in names(&list) {
        let body = s.tool("skill_load", json!({"name": name}))["body"].clone();
        let p = s.request("prompts/get", json!({"name": name}));
        assert_eq!(
            p["result"]["messages"][0]["content"]["text"], body,
            "{name}"
        );
    }

    let resources = s.request("resources/list", json!({}));
    let mut seen = 0;
    for r in resources["result"]["resources"].as_array().unwrap() {
        let uri = r["uri"].as_str().unwrap();
        let (skill_name, path) = r["name"].as_str().unwrap().split_once('/').unwrap();
        let via_tool =
            s.tool("skill_file", json!({"name": skill_name, "path": path}))["files"][0].clone();
        let read = s.request("resources/read", json!({"uri": uri}));
        let c = &read["result"]["contents"][0];
        let via_resource: &Value = if via_tool["encoding"] == "utf-8" {
            &c["text"]
        } else {
            &c["blob"]
        };
        assert_eq!(via_resource, &via_tool["content"], "{uri}");
        assert_eq!(c["mimeType"], via_tool["mediaType"], "{uri}");
        // Every resource is a file the manifest lists.
        let load = s.tool("skill_load", json!({"name": skill_name}));
        assert!(
            load["files"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["path"] == path),
            "{uri} not in the manifest"
        );
        seen += 1;
    }
    let manifest_total: u64 = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["files"].as_u64().unwrap())
        .sum();
    assert_eq!(seen as u64, manifest_total);

    // The Skills extension lists the same skills with the same manifests,
    // under the same URIs resources/list gives.
    let by_name: std::collections::HashMap<String, String> = resources["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["uri"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let ext = s.request("skills/list", json!({}));
    let ext_skills = ext["result"]["skills"].as_array().unwrap();
    assert_eq!(ext_skills.len(), names(&list).len());
    for (entry, name) in ext_skills.iter().zip(names(&list)) {
        assert_eq!(entry["frontmatter"]["name"], name.as_str());
        let load = s.tool("skill_load", json!({"name": name}));
        let manifest: Vec<(String, u64)> = entry["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["uri"].as_str().unwrap().to_owned(),
                    r["size"].as_u64().unwrap(),
                )
            })
            .collect();
        let files: Vec<(String, u64)> = load["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    by_name[&format!("{name}/{}", f["path"].as_str().unwrap())].clone(),
                    f["size"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            manifest, files,
            "{name}: the Skills extension's manifest is skill_load's"
        );
    }
    s.finish();
}
