//! A skill with a file past the 1 MiB `resources/read` serves whole is
//! served `dynamic` in the Skills extension (SKX-007), judged on the
//! request's stat, its note within the answer budget (SKX-015). Outside
//! attack of 2026-12-07: FOUND tests failed on the code as it stood and
//! were fixed; HELD ones were answered as the rules say.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{BIN, Session, skill};

/// Two skills, made with the suite's own `skill`: `exact` (a file of
/// exactly 1 MiB) and `big` (a file of 1 MiB + 1 byte).
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    skill(dir.path(), "exact");
    skill(dir.path(), "big");
    std::fs::write(dir.path().join("exact/mib.txt"), vec![b'a'; 1 << 20]).unwrap();
    std::fs::write(dir.path().join("big/huge.txt"), vec![b'a'; (1 << 20) + 1]).unwrap();
    dir
}

fn session(dir: &Path) -> Session {
    Session::start(Path::new(BIN), &[("SKILLS_DIR", dir.to_str().unwrap())])
}

/// HELD. A file of exactly 1,048,576 bytes keeps a manifest; one byte
/// more makes the skill `dynamic` with a note naming the file, in
/// `skills/list` and `skills/get` alike.
#[test]
fn held_one_mib_is_the_edge_of_a_manifest() {
    let dir = tree();
    let mut s = session(dir.path());
    let list = s.request("skills/list", json!({}));
    let entries = list["result"]["skills"].as_array().unwrap().clone();
    for e in &entries {
        let get = s.request("skills/get", json!({"uri": e["uri"]}));
        assert_eq!(
            &get["result"]["skill"], e,
            "skills/get agrees with skills/list"
        );
    }
    let by = |n: &str| {
        entries
            .iter()
            .find(|e| e["uri"] == format!("skill://{n}/SKILL.md"))
            .unwrap()
            .clone()
    };
    assert!(by("exact")["resources"].is_array(), "{}", by("exact"));
    assert_eq!(by("big")["resources"], "dynamic");
    let note = by("big")["_meta"]["skill-mcp/dynamicNote"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        note.contains("huge.txt") && note.contains("1048577"),
        "{note}"
    );
}

/// FOUND. SKX-015: "Only an entry whose frontmatter alone is larger than
/// the budget can make a page of one entry over it." A skill whose file
/// past 1 MiB sits at a long path of `"` characters (legal names, 954
/// characters, under the 1,024 the fence allows) gets a `dynamicNote`
/// quoting the path Debug-escaped and then JSON-escaped (4 characters a
/// `"`): with `SKILL_MCP_ANSWER_BUDGET=2000` (the smallest allowed) the
/// first `skills/list` page, one entry with a 40-byte frontmatter, is a
/// 4,410-character frame, and so is `skills/get`. Expected: every page
/// within the budget (the note's path cut to an excerpt, HARD-005).
#[test]
fn a_dynamic_note_keeps_a_page_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("long");
    let q = "\"".repeat(200);
    let sub = d.join(&q).join(&q).join(&q).join(&q);
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(
        d.join("SKILL.md"),
        "---\nname: long\ndescription: Long path skill.\n---\nbody\n",
    )
    .unwrap();
    std::fs::write(sub.join("\"".repeat(150)), vec![b'a'; (1 << 20) + 1]).unwrap();
    let mut s = Session::start(
        Path::new(BIN),
        &[
            ("SKILLS_DIR", dir.path().to_str().unwrap()),
            ("SKILL_MCP_ANSWER_BUDGET", "2000"),
        ],
    );
    let line = s.request_line("skills/list", json!({}));
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        v["result"]["skills"][0]["resources"],
        "dynamic",
        "{}",
        &line[..300.min(line.len())]
    );
    assert!(
        line.chars().count() <= 2000,
        "a skills/list page of one entry with a 40-byte frontmatter is {} characters, over the 2,000 budget",
        line.chars().count()
    );
}

/// FOUND (the rule's words allow "at the scan"; the note's claim does
/// not). A skill whose file was past 1 MiB at the scan stays `dynamic`
/// after the file shrinks to 10 bytes, and its `dynamicNote` still says
/// the file "holds 1048577 bytes", which it no longer does; a skill whose
/// file grew past 1 MiB after the scan and shrank back is given its
/// manifest again. Expected: the same stat that makes a grown file
/// `dynamic` lets a shrunk one have its manifest, or at least a note that
/// does not state a size the file does not have ("held … at the scan").
#[test]
fn a_file_shrunk_below_one_mib_is_not_said_to_hold_what_it_held() {
    let dir = tempfile::tempdir().unwrap();
    skill(dir.path(), "a");
    skill(dir.path(), "b");
    std::fs::write(dir.path().join("a/f.bin"), vec![0u8; (1 << 20) + 1]).unwrap();
    std::fs::write(dir.path().join("b/f.bin"), b"small\n").unwrap();
    let mut s = session(dir.path());
    let get = |s: &mut Session, n: &str| {
        s.request(
            "skills/get",
            json!({"uri": format!("skill://{n}/SKILL.md")}),
        )["result"]["skill"]
            .clone()
    };
    assert_eq!(get(&mut s, "a")["resources"], "dynamic");
    // b grows past 1 MiB after the scan, then shrinks back: manifest again.
    std::fs::write(dir.path().join("b/f.bin"), vec![0u8; (1 << 20) + 5]).unwrap();
    assert_eq!(get(&mut s, "b")["resources"], "dynamic");
    std::fs::write(dir.path().join("b/f.bin"), b"xyz").unwrap();
    assert!(
        get(&mut s, "b")["resources"].is_array(),
        "HELD: b has its manifest again"
    );
    // a shrinks: still dynamic, still said to hold 1048577 bytes.
    std::fs::write(dir.path().join("a/f.bin"), b"0123456789").unwrap();
    let a = get(&mut s, "a");
    let note = a["_meta"]["skill-mcp/dynamicNote"]
        .as_str()
        .unwrap_or_default();
    assert!(
        a["resources"].is_array() || !note.contains("holds 1048577 bytes"),
        "a's file holds 10 bytes now; skills/get says: {a}"
    );
}
