//! Lean answers (LIST-019, issue 44 §1): a query answer carries the skills
//! that match and what a model needs to choose among them, and nothing
//! else of the catalog; a plain listing says its roots once.

use crate::common::{self, BIN, Session};

use serde_json::{Value, json};
use std::path::Path;

/// Three skills: `invoice-tools` declares a node script and a python one
/// (unavailable here) and has an unknown frontmatter key (a problem about
/// it); `pdf-forms` and `slides` are plain. `broken`'s frontmatter does
/// not parse (a problem about no served skill).
fn catalog() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write(
        "invoice-tools/SKILL.md",
        "---\nname: invoice-tools\ndescription: Reads invoices and totals them.\ncolour: blue\n\
         mcp-host:\n  version: 1\n  run:\n    - script: total.js\n      interpreter: node\n    \
         - script: scan.py\n      interpreter: python3\n---\nbody\n",
    );
    write("invoice-tools/total.js", "console.log(1)\n");
    write("invoice-tools/scan.py", "print(1)\n");
    write(
        "pdf-forms/SKILL.md",
        "---\nname: pdf-forms\ndescription: Fills PDF forms and reads invoices sent as PDF.\n---\nbody\n",
    );
    write(
        "slides/SKILL.md",
        "---\nname: slides\ndescription: Builds slide decks.\n---\nbody\n",
    );
    write("broken/SKILL.md", "---\nname: [broken\n---\nbody\n");
    dir
}

fn start(dir: &tempfile::TempDir, extra: &[(&str, &str)]) -> Session {
    let root = dir.path().to_str().expect("UTF-8").to_owned();
    let mut env = vec![("SKILLS_DIR", root.as_str())];
    env.extend_from_slice(extra);
    Session::start(Path::new(BIN), &env)
}

fn entry<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["skills"]
        .as_array()
        .and_then(|s| s.iter().find(|e| e["name"] == name))
        .unwrap_or_else(|| panic!("{name} is listed: {list}"))
}

/// The catalog-wide members and the members a model cannot use are gone
/// from a query answer; what the design of record names stays, and a
/// non-empty script list is still exactly which scripts.
#[test]
fn a_query_answer_carries_the_matches_and_nothing_else_of_the_catalog() {
    let dir = catalog();
    let mut s = start(&dir, &[]);
    let plain = s.tool("skill_list", json!({}));
    let problems = plain["problems"].as_array().expect("problems").len();
    assert!(problems >= 2, "{plain}");

    let found = s.tool("skill_list", json!({"query": "invoices"}));
    for k in ["roots", "rootsFrom", "grantFrom", "generation", "scannedAt"] {
        assert!(found.get(k).is_none(), "{k} in a query answer: {found}");
    }
    assert_eq!(found["total"], 2, "{found}");
    assert_eq!(found["problemsTotal"], problems, "{found}");
    let note = found["note"].as_str().expect("a note");
    assert!(
        note.contains(&format!("The catalog has {problems} problems"))
            && note.contains("skill_list without a query"),
        "{note}"
    );
    let invoice = entry(&found, "invoice-tools");
    assert_eq!(invoice["description"], "Reads invoices and totals them.");
    assert_eq!(invoice["files"], 3);
    assert_eq!(invoice["executable"], true);
    assert_eq!(invoice["scripts"][0]["script"], "total.js", "{invoice}");
    assert_eq!(invoice["unavailableScripts"][0]["script"], "scan.py");
    assert!(invoice.get("ungrantedScripts").is_none(), "{invoice}");
    let pdf = entry(&found, "pdf-forms");
    for k in [
        "source",
        "scripts",
        "unavailableScripts",
        "ungrantedScripts",
    ] {
        assert!(pdf.get(k).is_none(), "{k} in a lean entry: {pdf}");
    }
    assert_eq!(pdf["executable"], false);
    assert_eq!(pdf["files"], 1);
    // The plain listing still holds every member.
    let full = entry(&plain, "pdf-forms");
    for k in [
        "source",
        "scripts",
        "unavailableScripts",
        "ungrantedScripts",
    ] {
        assert!(
            full.get(k).is_some(),
            "{k} missing from the listing: {full}"
        );
    }
    s.finish();
}

/// A query answer's problems are those about the skills on its page;
/// one with none about them has no `problems` member at all.
#[test]
fn a_query_answer_holds_only_the_problems_about_its_skills() {
    let dir = catalog();
    let mut s = start(&dir, &[]);
    let found = s.tool("skill_list", json!({"query": "invoices totals"}));
    let problems = found["problems"]
        .as_array()
        .expect("problems about invoice-tools");
    assert_eq!(problems.len(), 1, "{found}");
    assert_eq!(problems[0]["reason"], "unknown-key", "{found}");
    assert!(
        problems[0]["path"]
            .as_str()
            .is_some_and(|p| p.contains("invoice-tools")),
        "{found}"
    );
    let slides = s.tool("skill_list", json!({"query": "slide decks"}));
    assert_eq!(common::names(&slides), ["slides"], "{slides}");
    assert!(slides.get("problems").is_none(), "{slides}");
    // The page's problems follow the page: the second page of a query
    // with limit 1 has the other skill's (none).
    let first = s.tool("skill_list", json!({"query": "invoices", "limit": 1}));
    let cursor = first["nextCursor"].as_str().expect("a second page");
    let second = s.tool(
        "skill_list",
        json!({"query": "invoices", "limit": 1, "cursor": cursor}),
    );
    let on = |p: &Value| {
        p.get("problems")
            .map_or(0, |x| x.as_array().map_or(0, Vec::len))
    };
    assert_eq!(
        on(&first) + on(&second),
        1,
        "the one problem about a match is on its page: {first} {second}"
    );
    assert!(
        second["note"]
            .as_str()
            .is_some_and(|n| n.contains("These are 2 to 2")),
        "{second}"
    );
    s.finish();
}

/// With no problem anywhere, a query answer says nothing of problems.
#[test]
fn a_clean_catalogs_query_answer_says_nothing_of_problems() {
    let dir = tempfile::tempdir().expect("tempdir");
    common::skill(dir.path(), "alpha");
    let mut s = start(&dir, &[]);
    let found = s.tool("skill_list", json!({"query": "alpha"}));
    assert!(found.get("problems").is_none(), "{found}");
    assert!(found.get("problemsTotal").is_none(), "{found}");
    assert!(
        !found["note"]
            .as_str()
            .unwrap_or_default()
            .contains("problem"),
        "{found}"
    );
    s.finish();
}

/// A paged plain listing says its roots on the first page only.
#[test]
fn a_plain_listing_says_its_roots_on_its_first_page_only() {
    let dir = catalog();
    let mut s = start(&dir, &[]);
    let first = s.tool("skill_list", json!({"limit": 1}));
    assert!(
        first["roots"].as_array().is_some_and(|r| r.len() == 1),
        "{first}"
    );
    assert_eq!(first["rootsFrom"], "SKILLS_DIR", "{first}");
    let mut cursor = first["nextCursor"].as_str().map(str::to_owned);
    let mut pages = 1;
    while let Some(c) = cursor {
        let page = s.tool("skill_list", json!({"limit": 1, "cursor": c}));
        assert!(
            page.get("roots").is_none(),
            "roots again on page {}: {page}",
            pages + 1
        );
        assert_eq!(page["rootsFrom"], "SKILLS_DIR", "{page}");
        cursor = page["nextCursor"].as_str().map(str::to_owned);
        pages += 1;
    }
    assert!(pages >= 3, "three skills, a page each, then the problems");
    s.finish();
}
