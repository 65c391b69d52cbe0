//! Large catalogs through MCP (issue "Large catalogs", spec LIST-005..
//! LIST-009): every `skill_list` page fits the answer budget and together
//! the pages hold every skill exactly once; `query` finds a skill by a
//! word of its description among 10,000; a cursor from another snapshot
//! is refused with a message saying to list again; a manifest too large
//! for one answer is paged; the handshake says how many skills there are.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;

/// `n` skills `s00000`… each with a description naming a word of its own.
fn tree(n: usize) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for i in 0..n {
        let dir = root.path().join(format!("s{i:05}"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: s{i:05}\ndescription: Skill {i} handles the word-{i} case, one of many in a large team catalog of skills.\n---\nBody {i}.\n"
            ),
        )
        .unwrap();
    }
    root
}

/// The compact JSON size of a tool answer, as the server sends it.
fn size(v: &Value) -> usize {
    serde_json::to_string(v).unwrap().len()
}

/// Walks every page of `args`; returns the skill names in order, checking
/// each page against the budget.
fn walk(s: &mut Session, args: Value, budget: usize) -> Vec<String> {
    let mut names = Vec::new();
    let mut args = args;
    for _ in 0..1000 {
        let page = s.tool("skill_list", args.clone());
        assert!(
            size(&page) <= budget,
            "a page of {} characters",
            size(&page)
        );
        assert!(page["total"].is_u64(), "{page}");
        assert!(page["note"].is_string(), "{page}");
        names.extend(common::names(&page));
        match page["nextCursor"].as_str() {
            Some(c) => args["cursor"] = json!(c),
            None => return names,
        }
    }
    panic!("more than 1000 pages");
}

#[test]
fn three_hundred_skills_list_in_pages_that_fit_and_hold_each_skill_once() {
    let root = tree(300);
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let names = walk(&mut s, json!({}), 40_000);
    let want: Vec<String> = (0..300).map(|i| format!("s{i:05}")).collect();
    assert_eq!(names, want, "every skill exactly once, in name order");
    // A limit makes smaller pages, over the same skills.
    assert_eq!(walk(&mut s, json!({"limit": 7}), 40_000), want);
    let page = s.tool("skill_list", json!({"limit": 7}));
    assert_eq!(page["skills"].as_array().unwrap().len(), 7);
    // A cursor belongs to its listing: another limit refuses it.
    let c = page["nextCursor"].as_str().unwrap().to_owned();
    let r = s.request(
        "tools/call",
        json!({"name": "skill_list", "arguments": {"cursor": c, "limit": 8}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("same query and limit"),
        "{r}"
    );
    s.finish();
}

#[test]
fn a_small_catalog_gets_the_whole_list_unpaged_as_before() {
    let root = tree(5);
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let page = s.tool("skill_list", json!({}));
    assert_eq!(common::names(&page).len(), 5);
    for k in ["total", "nextCursor", "note", "problemsTotal"] {
        assert!(page.get(k).is_none(), "{k} in an answer that fits: {page}");
    }
    s.finish();
}

#[test]
fn ten_thousand_skills_page_within_the_budget_and_query_finds_one_by_its_description() {
    let root = tree(10_000);
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let init = s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let instructions = init["result"]["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("10000 Agent Skills"),
        "{instructions}"
    );
    assert!(instructions.contains("query"), "{instructions}");
    let names = walk(&mut s, json!({}), 40_000);
    assert_eq!(names.len(), 10_000);
    let mut sorted = names.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), 10_000, "a skill listed twice");

    let started = Instant::now();
    let hit = s.tool("skill_list", json!({"query": "word-7321"}));
    eprintln!("query among 10,000 took {:?}", started.elapsed());
    assert_eq!(
        common::names(&hit).first().map(String::as_str),
        Some("s07321"),
        "{}",
        hit["note"]
    );
    assert!(size(&hit) <= 40_000);
    // A query with no word is a refusal.
    let none = s.request(
        "tools/call",
        json!({"name": "skill_list", "arguments": {"query": " ,;"}}),
    );
    assert_eq!(none["result"]["isError"], true, "{none}");
    s.finish();
}

#[test]
fn a_cursor_from_another_snapshot_is_refused_with_a_message_to_list_again() {
    let root = tree(300);
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let page = s.tool("skill_list", json!({}));
    let cursor = page["nextCursor"].as_str().unwrap().to_owned();
    skill(root.path(), "zz-new");
    s.rescan_after_hangup(1);
    let r = s.request(
        "tools/call",
        json!({"name": "skill_list", "arguments": {"cursor": cursor}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("another version of the catalog") && text.contains("again without a cursor"),
        "{text}"
    );
    s.finish();
}

#[test]
fn a_manifest_too_large_for_one_answer_is_paged() {
    let root = tempfile::tempdir().unwrap();
    // Two skills whose manifests page alike: a filesCursor belongs to one.
    for name in ["many", "twin"] {
        skill(root.path(), name);
        for i in 0..3000 {
            std::fs::write(root.path().join(format!("{name}/file-{i:05}.txt")), "x").unwrap();
        }
    }
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let mut paths = Vec::new();
    let mut args = json!({"name": "many"});
    loop {
        let load = s.tool("skill_load", args.clone());
        let mut page = load.clone();
        page["body"] = json!("");
        assert!(
            size(&page["files"]) <= 40_000,
            "a manifest page of {}",
            size(&page["files"])
        );
        assert_eq!(load["filesTotal"], 3001, "{}", load["filesNote"]);
        for f in load["files"].as_array().unwrap() {
            paths.push(f["path"].as_str().unwrap().to_owned());
        }
        match load["filesCursor"].as_str() {
            Some(c) => args["filesCursor"] = json!(c),
            None => break,
        }
    }
    let first = s.tool("skill_load", json!({"name": "many"}));
    let c = first["filesCursor"].as_str().unwrap().to_owned();
    let r = s.request(
        "tools/call",
        json!({"name": "skill_load", "arguments": {"name": "twin", "filesCursor": c}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("another listing"),
        "{r}"
    );
    assert_eq!(paths.len(), 3001);
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), 3001, "a file listed twice");
    s.finish();
}

#[test]
fn the_budget_is_the_environments_when_it_is_a_number_in_range() {
    let root = tree(40);
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(
        Path::new(BIN),
        &[("SKILLS_DIR", &dir), ("SKILL_MCP_ANSWER_BUDGET", "5000")],
    );
    assert_eq!(walk(&mut s, json!({}), 5000).len(), 40);
    s.finish();
    let mut s = Session::start(
        Path::new(BIN),
        &[("SKILLS_DIR", &dir), ("SKILL_MCP_ANSWER_BUDGET", "12")],
    );
    let list = s.tool("skill_list", json!({}));
    let problems = list["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p["path"] == "SKILL_MCP_ANSWER_BUDGET" && p["reason"] == "setting"),
        "{list}"
    );
    s.finish();
}

mod many_roots_fit_the_answer_budget {
    //! Newcomer attack (issue 30, LIST-005/LIST-016): every answer fits the
    //! answer budget, whatever the configuration holds. `roots` is a top-level
    //! field of `skill_list`, and LIST-005's source says "`problems` and the
    //! other top-level fields are bounded the same way". A host that gives
    //! each skill its own slot (`MCP_SKILLS_PATH=/slots/a:/slots/b:…`, one
    //! root per skill) makes `roots` grow with the catalog; so does a long
    //! root path in the handshake's unreadable-roots sentence.

    #[allow(unused_imports)]
    use crate::common;

    use std::process::Command;

    use crate::common::{BIN, Session};
    use serde_json::json;

    const ANSWER_BUDGET: usize = 40_000;

    /// 500 roots, each one skill (layout 1), each path about 120 characters:
    /// every `skill_list` page must still fit 40,000 characters of compact
    /// JSON, and hold more than one skill.
    #[test]
    fn many_roots_still_fit_the_answer_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let mut roots = Vec::new();
        for i in 0..500 {
            let slot = base.join(format!("slot-{i:03}-{}", "p".repeat(80)));
            common::skill(&slot, &format!("skill-{i:03}"));
            roots.push(slot.join(format!("skill-{i:03}")).display().to_string());
        }
        let path = roots.join(":");
        let mut s = Session::start(std::path::Path::new(BIN), &[("SKILLS_DIR", &path)]);
        let list = s.tool("skill_list", json!({}));
        let size = serde_json::to_string(&list).unwrap().len();
        let skills = list["skills"].as_array().unwrap().len();
        assert!(
            size <= ANSWER_BUDGET,
            "skill_list's answer is {size} characters (roots: {} entries), over the {ANSWER_BUDGET} budget",
            list["roots"].as_array().map_or(0, Vec::len)
        );
        assert!(skills > 1, "a page holds {skills} skill(s) of 500");
        let found = s.tool("skill_list", json!({"query": "skill-001"}));
        let size = serde_json::to_string(&found).unwrap().len();
        assert!(
            size <= ANSWER_BUDGET,
            "a query's answer is {size} characters"
        );
        assert!(s.finish().success());
    }

    /// One mistyped root of 50,000 characters (a pasted blob, a generated
    /// path): the handshake names it (LIST-016) but the instructions still
    /// fit the answer budget, an excerpt standing for the path.
    #[test]
    fn a_long_unreadable_root_keeps_the_instructions_within_the_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let long = format!("/nonexistent/{}", "x".repeat(50_000));
        let mut cmd = Command::new(BIN);
        cmd.current_dir(tmp.path());
        let out = common::run_lines(
            cmd,
            &[("SKILLS_DIR", &long)],
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
            ],
        );
        let first = String::from_utf8_lossy(&out.stdout);
        let reply: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        let instructions = reply["result"]["instructions"].as_str().unwrap();
        assert!(
            instructions.starts_with("Serves 0 Agent Skills: /nonexistent/xxx"),
            "{}",
            &instructions[..200]
        );
        assert!(
            instructions.len() <= ANSWER_BUDGET,
            "the instructions are {} characters: the unreadable root's path is quoted whole",
            instructions.len()
        );
    }
}
