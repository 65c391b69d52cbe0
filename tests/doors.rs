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
    s.finish();
}
