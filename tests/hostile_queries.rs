//! `skill_list`'s query answers and ranking against hostile authors,
//! hostile clients and broken models (LIST-008, LIST-011, LIST-019,
//! SEARCH-001..SEARCH-005), through MCP. The tests came from the outside
//! attack on issue 44 (2026-12-07); each failed on the finding it is named
//! after until the fix that landed with it.

use crate::common::{self, BIN, Session, model2vec};
use serde_json::{Value, json};
use std::path::Path;

/// A skill `name` under `root` with this description, `extra` frontmatter
/// lines and body.
fn write(root: &Path, name: &str, description: &str, extra: &str, body: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"),
    )
    .unwrap();
}

fn start(root: &Path, env: &[(&str, &str)]) -> Session {
    let dir = root.to_str().unwrap().to_owned();
    let mut all = vec![("SKILLS_DIR", dir.as_str())];
    all.extend_from_slice(env);
    Session::start(Path::new(BIN), &all)
}

/// Every page of `args`' listing, followed through `nextCursor`.
fn walk(s: &mut Session, args: Value) -> Vec<Value> {
    let mut pages = vec![s.tool("skill_list", args.clone())];
    while let Some(c) = pages.last().unwrap()["nextCursor"].as_str() {
        let mut next = args.clone();
        next["cursor"] = json!(c);
        pages.push(s.tool("skill_list", next));
        assert!(pages.len() < 100, "a walk of 100 pages: {:?}", pages.last());
    }
    pages
}

/// Finding 1 (LIST-019, LIST-005). A query answer carries the problems
/// about its skills, and "they count toward the page's size, so a page
/// with them still fits the answer budget". One author's skill with 3,000
/// unknown frontmatter keys (27 KB of frontmatter, under the 64 KiB cap)
/// has 3,000 `unknown-key` problems; the page that holds it is 804,000
/// characters against a budget of 40,000 — twenty times a model's allowance,
/// from one hostile folder, for any query that matches it. The plain
/// listing pages the same problems within the budget.
///
/// Issue 44: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_skill_with_thousands_of_problems_does_not_blow_a_query_page_past_the_budget() {
    let root = tempfile::tempdir().unwrap();
    let keys: String = (0..3000).map(|i| format!("zq{i}: 1\n")).collect();
    write(
        root.path(),
        "bloat",
        "Converts invoices to CSV.",
        &keys,
        "body",
    );
    write(root.path(), "clean", "Reads invoices.", "", "body");
    let mut s = start(root.path(), &[]);
    let pages = walk(&mut s, json!({"query": "invoices"}));
    let mut seen: Vec<String> = Vec::new();
    for page in &pages {
        let size = page.to_string().len();
        assert!(
            size <= 40_000,
            "a query page of {size} characters, over the 40,000 budget (skills {:?}, {} problems)",
            common::names(page),
            page["problems"].as_array().map_or(0, Vec::len)
        );
        seen.extend(common::names(page));
    }
    seen.sort();
    assert_eq!(seen, ["bloat", "clean"], "each match once");
}

/// Finding 2 (SEARCH-002, issue 44 §2: "near-duplicate stuffed skills
/// cannot push it off the first page"). Skill names may hold capitals
/// and end in `-`, `_` or `.` (DISC-009), and SEARCH-002 compares names
/// after folding, putting every skill whose folded name is the query
/// first, in name order — where capitals sort before lower case. So a
/// hostile author's `GIT`, `GIT-`, `GIT_`, `GIT.`, `GIt`, `Git-`, … (twelve
/// of the unlimited spellings that fold to "git") all rank before `git`
/// for the query "git", and `git` is not on the first page.
///
/// Issue 44: found by an outside attack; it failed on the finding it is named after.
#[test]
fn names_that_fold_to_a_query_cannot_push_the_skill_of_that_name_off_the_first_page() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "git",
        "Commit, branch and rebase with git.",
        "",
        "# Git",
    );
    let mut squatters = Vec::new();
    for base in ["GIT", "GIt", "Git"] {
        for end in ["", "-", "_", "."] {
            squatters.push(format!("{base}{end}"));
        }
    }
    for n in &squatters {
        write(
            root.path(),
            n,
            "git git, the git helper for git.",
            "",
            "git git",
        );
    }
    let mut s = start(root.path(), &[]);
    let page = s.tool("skill_list", json!({"query": "git"}));
    assert!(
        common::names(&page).contains(&"git".to_owned()),
        "`git` is pushed off the first page of \"git\" by names that fold to it: {:?}",
        common::names(&page)
    );
}

/// Finding 3 (SEARCH-002, issue 44 §2: "a skill `pdf-pro` … ranks above the
/// skill named `pdf` for the query \"pdf\""). A squatter no longer needs
/// to stuff: naming its folder `PDF` is enough. The query "pdf" is the
/// name `pdf` exactly and `PDF` only after folding, yet `PDF` comes first
/// (name order, capitals first), and with `limit` 1 it is the whole answer.
///
/// Issue 44: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_query_that_is_a_skills_exact_name_ranks_it_before_its_case_variants() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "pdf",
        "Read, create and merge PDF files; fill their forms.",
        "",
        "# PDF",
    );
    write(
        root.path(),
        "PDF",
        "The best PDF tool for every PDF task.",
        "",
        "pdf",
    );
    let mut s = start(root.path(), &[]);
    let page = s.tool("skill_list", json!({"query": "pdf", "limit": 1}));
    assert_eq!(common::names(&page), ["pdf"], "{page}");
}

/// Finding 4 (LIST-019: "`problems` holds the problems about the page's
/// skills … in the catalog's order"). They come in the page's rank order
/// instead: `beta` ranks above `alpha` for "invoices", and beta's problem
/// comes before alpha's although the catalog lists alpha's first.
///
/// Issue 44: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_query_pages_problems_are_in_the_catalogs_order() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "alpha",
        "Tools for many things, among them invoices.",
        "colour: red\n",
        "body",
    );
    write(root.path(), "beta", "Invoices.", "flavour: sour\n", "body");
    let mut s = start(root.path(), &[]);
    let paths = |v: &Value| -> Vec<String> {
        v["problems"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| p["path"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let all = paths(&s.tool("skill_list", json!({})));
    let page = s.tool("skill_list", json!({"query": "invoices"}));
    assert_eq!(common::names(&page), ["beta", "alpha"], "{page}");
    assert_eq!(paths(&page), all, "{page}");
}

/// Finding 5 (SEARCH-005's purpose, issue 44 §5: "A corrupt model is
/// silently useless … Models that cannot work are refused"). model2vec
/// scales each token's row by the optional `weights` tensor of
/// `model.safetensors`, which the load check never reads. A `weights` of
/// NaN (or of zeros) beside a finite `embeddings` table loads with no
/// `problems` entry and no log line, and ranking by meaning silently
/// stops: "keynote", found by meaning with the same table unweighted,
/// finds nothing.
///
/// Issue 44: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_model_whose_weights_are_nan_or_zero_is_refused_like_a_bad_table() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "pptx", "Create decks and slides.", "", "body");
    write(root.path(), "rna-seq", "Expression counts.", "", "body");
    let words: &[(&str, [f32; 2])] = &[
        ("slides", [1.0, 0.0]),
        ("keynote", [1.0, 0.1]),
        ("counts", [0.0, 1.0]),
        ("expression", [0.0, 1.0]),
    ];
    let rows = words.len() + 1;
    for w in [f32::NAN, 0.0] {
        let dir = tempfile::tempdir().unwrap();
        let weights: Vec<u8> = std::iter::repeat_n(w, rows)
            .flat_map(f32::to_le_bytes)
            .collect();
        model2vec::model(
            dir.path(),
            words,
            &model2vec::dense_ids(words),
            rows,
            &[("weights", "F32", vec![rows], weights)],
        );
        let mut s = start(
            root.path(),
            &[("SKILL_MCP_EMBEDDINGS", dir.path().to_str().unwrap())],
        );
        let all = s.tool("skill_list", json!({}));
        let said: Vec<&Value> = all["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["path"] == "SKILL_MCP_EMBEDDINGS")
            .collect();
        let page = s.tool("skill_list", json!({"query": "keynote"}));
        assert!(
            !said.is_empty(),
            "weights of {w}: no problem, and meaning finds {:?} for \"keynote\"",
            common::names(&page)
        );
    }
}

/// Finding 6 (design of record: `skill_list` gives "`problems`, so an
/// empty list is never a mystery"; LOAD-004: a refused name "is said to be
/// refused … the same for every tool and request that looks a skill up by
/// name"; SEARCH-002 reads a query equal to a name as that name). The
/// query "invoice-tools", the exact name of a folder refused for its
/// frontmatter, answers "No skill matches … no skill shares a word with it
/// other than common words", which is not why; `skill_load` of the same
/// name says it was refused and how to fix it.
///
/// Issue 44: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_query_that_is_a_refused_skills_name_says_it_was_refused() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("invoice-tools")).unwrap();
    std::fs::write(
        root.path().join("invoice-tools/SKILL.md"),
        "---\nname: invoice-tools\ndescription: Totals invoices: fast\n---\nbody\n",
    )
    .unwrap();
    write(root.path(), "slides", "Builds slide decks.", "", "body");
    let mut s = start(root.path(), &[]);
    let page = s.tool("skill_list", json!({"query": "invoice-tools"}));
    let note = page["note"].as_str().unwrap_or_default();
    let named = page["problems"].as_array().is_some_and(|p| {
        p.iter().any(|p| {
            p["path"]
                .as_str()
                .unwrap_or_default()
                .contains("invoice-tools")
        })
    });
    assert!(
        named || (note.contains("invoice-tools") && note.contains("refused")),
        "{page}"
    );
}

/// Finding 7 (LIST-006's folding: "each folded (lowercased …) so \"Café\" is
/// \"cafe\""; issue 44 §3, every script). Each letter is lowercased on its
/// own, so a capital sigma becomes `σ` wherever it stands, while the
/// lower-case word a description holds ends in the final form `ς`: a
/// Greek user typing the word in capitals ("ΟΔΗΓΟΣ", as headings and
/// keyboards in caps lock write it) does not find the description
/// saying "οδηγός", which "Οδηγός" finds.
///
/// Issue 44: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_greek_word_typed_in_capitals_finds_the_description_that_holds_it() {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "el-guide",
        "Γράφει έναν οδηγός χρήσης για το προϊόν.",
        "",
        "body",
    );
    let mut s = start(root.path(), &[]);
    let page = s.tool("skill_list", json!({"query": "Οδηγός"}));
    assert_eq!(common::names(&page), ["el-guide"], "{page}");
    let page = s.tool("skill_list", json!({"query": "ΟΔΗΓΟΣ"}));
    assert_eq!(common::names(&page), ["el-guide"], "{page}");
}

/// Finding 8 (LIST-008, LIST-018: "paging resumes exactly where the page
/// that handed it out ended"; LIST-019: query pages hold each match once).
/// A query cursor is keyed by the query's folded words, but with a model
/// the order also depends on the query's raw text, which the owner's
/// tokenizer reads as it is (a cased one tells "Keynote" from "keynote").
/// A client that retypes the query's case between pages has its cursor
/// honoured against another order: walking "Keynote" on from the first
/// page of "keynote", `limit` 1, lists `alpha` twice and never `gamma`.
/// The cursor should be refused (or keyed by what orders the answer).
///
/// Issue 44: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_cursor_is_not_honoured_by_a_query_the_model_orders_otherwise() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "alpha", "apples", "", "body");
    write(root.path(), "beta", "bananas", "", "body");
    write(root.path(), "gamma", "cherries", "", "body");
    let dir = tempfile::tempdir().unwrap();
    let words: &[(&str, [f32; 2])] = &[
        ("apples", [1.0, 0.0]),
        ("bananas", [0.7, 0.7]),
        ("cherries", [0.0, 1.0]),
        ("Keynote", [1.0, 0.05]),
        ("keynote", [0.05, 1.0]),
    ];
    let mut vocab = serde_json::Map::new();
    vocab.insert("[UNK]".into(), json!(0));
    for (i, (w, _)) in words.iter().enumerate() {
        vocab.insert((*w).into(), json!(i + 1));
    }
    // A cased tokenizer: no normalizer.
    let tokenizer = json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
    });
    std::fs::write(dir.path().join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let table: Vec<u8> = std::iter::once([0.0f32, 0.01])
        .chain(words.iter().map(|(_, v)| *v))
        .flatten()
        .flat_map(f32::to_le_bytes)
        .collect();
    std::fs::write(
        dir.path().join("model.safetensors"),
        model2vec::safetensors(&[("embeddings", "F32", vec![words.len() + 1, 2], table)]),
    )
    .unwrap();
    let mut s = start(
        root.path(),
        &[("SKILL_MCP_EMBEDDINGS", dir.path().to_str().unwrap())],
    );
    let all = s.tool("skill_list", json!({}));
    assert_eq!(all["problems"], json!([]), "the model loads: {all}");
    let first = s.tool("skill_list", json!({"query": "keynote", "limit": 1}));
    let mut seen = common::names(&first);
    let mut cursor = first["nextCursor"].as_str().map(str::to_owned);
    while let Some(c) = cursor {
        let r = s.request(
            "tools/call",
            json!({"name": "skill_list", "arguments": {"query": "Keynote", "limit": 1, "cursor": c}}),
        );
        if r["result"]["isError"] == json!(true) {
            // Refused: the client is told to list again. That holds.
            return;
        }
        let page = &r["result"]["structuredContent"];
        seen.extend(common::names(page));
        cursor = page["nextCursor"].as_str().map(str::to_owned);
    }
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), seen.len(), "a match held twice: {seen:?}");
}

/// Finding 5, second form (issue 44 §5: "A corrupt model is silently
/// useless"). The load check refuses a NaN, an infinity or zeros in the
/// table, but not finite values so large (3·10³⁸, near `f32::MAX`) that
/// the mean of two rows is an infinity: every skill's vector of two or
/// more such tokens is then not finite and dropped, so "keynote", whose
/// row points at `pptx`, finds nothing by meaning, and `problems` says
/// nothing. The same words at 1.0 find `pptx`.
///
/// Issue 44: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_table_whose_rows_overflow_when_averaged_is_refused() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "pptx", "Create decks and slides.", "", "body");
    write(root.path(), "rna-seq", "Expression counts.", "", "body");
    let big = 3.0e38f32;
    for (scale, label) in [(1.0f32, "finite and small"), (big, "finite and huge")] {
        let words: Vec<(&str, [f32; 2])> = vec![
            ("slides", [scale, 0.0]),
            ("keynote", [scale, scale / 10.0]),
            ("counts", [0.0, scale]),
            ("expression", [0.0, scale]),
            ("decks", [scale, 0.0]),
            ("create", [scale, scale / 30.0]),
        ];
        let dir = tempfile::tempdir().unwrap();
        model2vec::tiny_model(dir.path(), &words, words.len() + 1);
        let mut s = start(
            root.path(),
            &[("SKILL_MCP_EMBEDDINGS", dir.path().to_str().unwrap())],
        );
        let all = s.tool("skill_list", json!({}));
        let refused = all["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["path"] == "SKILL_MCP_EMBEDDINGS");
        let page = s.tool("skill_list", json!({"query": "keynote"}));
        let found = common::names(&page).first() == Some(&"pptx".to_owned());
        assert!(
            refused || found,
            "a table {label}: no problem, and meaning finds {:?} for \"keynote\"",
            common::names(&page)
        );
    }
}
