//! `skill_list`'s `query` through MCP (issue 27, spec LIST-006,
//! LIST-010..LIST-013): ranked by BM25F with stop words, stemming and
//! folding; only relevant skills come back, ten a page; a query that
//! matches nothing says so; the body counts, up to its prefix; pages of a
//! query are exact; a reload searches the new catalog.

use crate::common;
use common::model2vec::tiny_model;
use common::{model2vec, *};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

/// A skill `name` with this description and body.
fn write(root: &Path, name: &str, description: &str, body: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"),
    )
    .unwrap();
}

/// A small catalog of unlike skills, the kind a person asks among.
fn catalog() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(
        r,
        "pdf-forms",
        "Fill in and flatten PDF forms, and extract their fields.",
        "# PDF forms\nRead the form's fields first.",
    );
    write(
        r,
        "pptx",
        "Create and edit PowerPoint decks, slide layouts, speaker notes and charts.",
        "# Decks\nFor presenting results to an audience.",
    );
    write(
        r,
        "the-theme-to-go",
        "A theme to use for the site and to keep the look of it the same.",
        "Colours and fonts.",
    );
    write(
        r,
        "cafe-menus",
        "Lays out Café menus with prices.",
        "Menus for restaurants.",
    );
    write(
        r,
        "rna-seq",
        "Differential expression of bulk RNA-seq counts with DESeq2.",
        "Normalise the counts, fit the model, test each gene.",
    );
    root
}

fn start(root: &Path, env: &[(&str, &str)]) -> Session {
    let dir = root.to_str().unwrap().to_owned();
    let mut all = vec![("SKILLS_DIR", dir.as_str())];
    all.extend_from_slice(env);
    Session::start(Path::new(BIN), &all)
}

fn query(s: &mut Session, args: Value) -> (Vec<String>, Value) {
    let page = s.tool("skill_list", args);
    (names(&page), page)
}

#[test]
fn a_whole_sentence_finds_its_skill_first_and_only_relevant_ones() {
    let root = catalog();
    let mut s = start(root.path(), &[]);
    // Every skill shares "the", "to" or "of" with this sentence; only one
    // shares a word that says something.
    let (hits, page) = query(
        &mut s,
        json!({"query": "I want to fill in the fields of a PDF form"}),
    );
    assert_eq!(hits, ["pdf-forms"], "{page}");
    assert_eq!(page["total"], 1, "total counts real matches: {page}");
    // Stemming: "presenting slides" meets "presenting" and "slide".
    let (hits, page) = query(&mut s, json!({"query": "Presenting my slides"}));
    assert_eq!(hits.first().map(String::as_str), Some("pptx"), "{page}");
    // Folding: case and accents.
    let (hits, page) = query(&mut s, json!({"query": "CAFE MENU"}));
    assert_eq!(hits, ["cafe-menus"], "{page}");
    // A name splits at - and _: "seq" is a word of "rna-seq".
    let (hits, page) = query(&mut s, json!({"query": "seq"}));
    assert_eq!(hits, ["rna-seq"], "{page}");
    // The body counts: "gene" is only in rna-seq's body.
    let (hits, page) = query(&mut s, json!({"query": "genes"}));
    assert_eq!(hits, ["rna-seq"], "{page}");
    s.finish();
}

#[test]
fn a_query_of_stop_words_or_unknown_words_matches_nothing_and_says_what_to_try() {
    let root = catalog();
    let mut s = start(root.path(), &[]);
    for q in ["the to of it", "zebra quantum"] {
        let (hits, page) = query(&mut s, json!({"query": q}));
        assert!(hits.is_empty(), "{q}: {page}");
        assert_eq!(page["total"], 0, "{page}");
        let note = page["note"].as_str().unwrap_or_default();
        assert!(
            note.starts_with("No skill matches") && note.contains("fewer words"),
            "{note}"
        );
        assert!(page.get("nextCursor").is_none(), "{page}");
    }
    s.finish();
}

#[test]
fn skills_far_below_the_best_are_dropped() {
    let root = tempfile::tempdir().unwrap();
    for i in 0..12 {
        write(
            root.path(),
            &format!("report-{i:02}"),
            &format!("Writes report number {i}."),
            "",
        );
    }
    write(root.path(), "pdf-report", "Renders a PDF report.", "");
    let mut s = start(root.path(), &[]);
    // "report" is in every skill, so it says almost nothing; "pdf" says
    // which one.
    let (hits, page) = query(&mut s, json!({"query": "pdf report"}));
    assert_eq!(hits, ["pdf-report"], "{page}");
    assert_eq!(page["total"], 1, "{page}");
    s.finish();
}

#[test]
fn only_the_body_prefix_is_searched() {
    let root = tempfile::tempdir().unwrap();
    let filler = "lorem ipsum dolor sit amet ".repeat(200); // 5,400 bytes
    write(
        root.path(),
        "early",
        "First skill.",
        &format!("aardvark\n{filler}"),
    );
    write(
        root.path(),
        "late",
        "Second skill.",
        &format!("{filler}\nplatypus"),
    );
    let mut s = start(root.path(), &[]);
    assert_eq!(query(&mut s, json!({"query": "aardvark"})).0, ["early"]);
    let (hits, page) = query(&mut s, json!({"query": "platypus"}));
    assert!(hits.is_empty(), "past the prefix: {page}");
    s.finish();
}

#[test]
fn a_query_answer_holds_ten_skills_and_its_pages_hold_each_match_once() {
    let root = tempfile::tempdir().unwrap();
    // 25 equal matches (no cut between them) and 5 that do not match.
    for i in 0..25 {
        write(root.path(), &format!("chart-{i:02}"), "Draws a chart.", "");
    }
    for i in 0..5 {
        write(root.path(), &format!("other-{i}"), "Sends mail.", "");
    }
    let mut s = start(root.path(), &[]);
    for (limit, per_page) in [(None, 10), (Some(4), 4)] {
        let mut args = json!({"query": "charts"});
        if let Some(l) = limit {
            args["limit"] = json!(l);
        }
        let mut seen = Vec::new();
        for _ in 0..20 {
            let (hits, page) = query(&mut s, args.clone());
            assert_eq!(page["total"], 25, "{page}");
            assert!(hits.len() <= per_page, "{limit:?}: {page}");
            seen.extend(hits);
            match page["nextCursor"].as_str() {
                // The first pages are full.
                Some(c) => {
                    assert_eq!(seen.len() % per_page, 0, "{page}");
                    args["cursor"] = json!(c);
                }
                None => break,
            }
        }
        let want: Vec<String> = (0..25).map(|i| format!("chart-{i:02}")).collect();
        assert_eq!(seen, want, "equal scores in name order, each once");
    }
    s.finish();
}

#[test]
fn a_reload_searches_the_new_catalog() {
    let root = catalog();
    let mut s = start(root.path(), &[]);
    assert!(query(&mut s, json!({"query": "spreadsheet"})).0.is_empty());
    write(
        root.path(),
        "xlsx",
        "Edits Excel spreadsheets and their formulas.",
        "",
    );
    s.rescan_after_hangup(1);
    assert_eq!(
        query(&mut s, json!({"query": "spreadsheet"})).0,
        ["xlsx"],
        "the new snapshot's index"
    );
    s.finish();
}

/// The `initialize` instructions (LIST-014).
fn instructions(root: &Path) -> String {
    instructions_with(root, &[])
}

/// The `initialize` instructions of a server started with `env`.
fn instructions_with(root: &Path, env: &[(&str, &str)]) -> String {
    let mut s = start(root, env);
    let init = s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    s.finish();
    init["result"]["instructions"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn the_handshake_lists_a_catalog_that_fits_and_counts_one_that_does_not() {
    let root = catalog();
    let text = instructions(root.path());
    assert!(text.starts_with("Serves 5 Agent Skills."), "{text}");
    // Each skill, name and first sentence, one a line.
    assert!(
        text.contains("\n- pdf-forms: Fill in and flatten PDF forms, and extract their fields."),
        "{text}"
    );
    assert!(
        text.contains("\n- rna-seq: Differential expression"),
        "{text}"
    );
    assert_eq!(text.matches("\n- ").count(), 5, "{text}");
    assert!(!text.contains("query"), "{text}");

    // 120 skills of about 90 characters a line pass the 8,000.
    let big = tempfile::tempdir().unwrap();
    for i in 0..120 {
        write(
            big.path(),
            &format!("skill-{i:03}"),
            &format!(
                "Handles the {i}th kind of request that this large team catalog serves well. More."
            ),
            "",
        );
    }
    let text = instructions(big.path());
    assert!(text.starts_with("Serves 120 Agent Skills."), "{text}");
    assert!(!text.contains("\n- "), "{text}");
    assert!(text.contains("skill_list with a query"), "{text}");
    assert!(text.len() < 1_000, "{text}");
}

/// 120 skills whose names share words unevenly, too many to list in
/// 8,000 characters.
fn themed_catalog() -> tempfile::TempDir {
    let big = tempfile::tempdir().unwrap();
    for i in 0..120 {
        let name = match i % 4 {
            0 => format!("azure-storage-{i}"),
            1 => format!("azure-functions-{i}"),
            2 => format!("python-testing-{i}"),
            _ => format!("a-{i}"),
        };
        write(
            big.path(),
            &name,
            "Handles one kind of request that this large team catalog serves well, at some length. More.",
            "",
        );
    }
    big
}

#[test]
fn over_the_budget_the_handshake_names_the_words_names_share() {
    let big = themed_catalog();
    let text = instructions(big.path());
    assert!(text.starts_with("Serves 120 Agent Skills."), "{text}");
    assert!(!text.contains("\n- "), "{text}");
    // Commonest first, ties in word order; a single letter, a number and
    // a word of fewer than three names are not themes.
    assert!(
        text.contains(
            "Words most of its skill names share: azure (60), functions (30), python (30), storage (30), testing (30)."
        ),
        "{text}"
    );
    assert!(text.contains("Call skill_list with a query"), "{text}");
}

#[test]
fn the_owner_sets_what_the_handshake_may_spend_on_the_catalog() {
    // 0: a catalog that fits 8,000 is only counted, and no theme is named.
    let small = catalog();
    let text = instructions_with(small.path(), &[("SKILL_MCP_INSTRUCTIONS_CHARS", "0")]);
    assert!(text.starts_with("Serves 5 Agent Skills."), "{text}");
    assert!(!text.contains("\n- "), "{text}");
    assert!(!text.contains("share"), "{text}");
    assert!(text.contains("skill_list with a query"), "{text}");

    // More than 8,000: the 120 skills are listed, a line each.
    let big = themed_catalog();
    let text = instructions_with(big.path(), &[("SKILL_MCP_INSTRUCTIONS_CHARS", "20000")]);
    assert_eq!(text.matches("\n- ").count(), 120, "{text}");
    assert!(
        text.contains("\n- azure-storage-0: Handles one kind"),
        "{text}"
    );

    // A value that is not a whole number in range: the default holds and
    // skill_list reports the setting, naming it and the rule.
    for bad in ["lots", "-1", "200001"] {
        let env = [("SKILL_MCP_INSTRUCTIONS_CHARS", bad)];
        let text = instructions_with(small.path(), &env);
        assert_eq!(text.matches("\n- ").count(), 5, "{bad}: {text}");
        let mut s = start(small.path(), &env);
        let list = s.tool("skill_list", json!({}));
        let message = common::setting_problem(&list, "SKILL_MCP_INSTRUCTIONS_CHARS", bad);
        assert!(
            message.contains("not a whole number from 0 to 200000"),
            "{message}"
        );
        assert!(message.contains("LIST-014"), "{message}");
        s.finish();
    }
}

#[test]
fn the_tools_a_host_may_defer_carry_a_search_hint_and_the_first_two_load_always() {
    let root = catalog();
    let mut s = start(root.path(), &[]);
    let tools = s.request("tools/list", json!({}))["result"]["tools"].clone();
    let meta = |name: &str| {
        tools
            .as_array()
            .and_then(|ts| ts.iter().find(|t| t["name"] == name))
            .map(|t| t["_meta"].clone())
            .unwrap_or_else(|| panic!("no tool {name} in {tools}"))
    };
    for name in ["skill_list", "skill_load"] {
        assert_eq!(meta(name), json!({"anthropic/alwaysLoad": true}), "{name}");
    }
    for (name, word) in [("skill_file", "files"), ("skill_run", "script")] {
        let hint = meta(name)["anthropic/searchHint"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            hint.contains(word) && hint.contains("skill"),
            "{name}: {hint:?}"
        );
        assert!(
            hint.len() <= 64,
            "a hint is a phrase, not a description: {hint:?}"
        );
        assert!(meta(name).get("anthropic/alwaysLoad").is_none(), "{name}");
    }
    s.finish();
}

/// Words of the catalog above and of the queries below: "deck" lies with
/// the slides, "transcripts" with the genes, "sunshine" against both.
const WORDS: &[(&str, [f32; 2])] = &[
    ("powerpoint", [1.0, 0.0]),
    ("decks", [1.0, 0.05]),
    ("slide", [0.95, 0.1]),
    ("keynote", [0.9, 0.0]),
    ("expression", [0.05, 1.0]),
    ("counts", [0.0, 1.0]),
    ("transcripts", [0.0, 1.0]),
    ("sunshine", [-1.0, -1.0]),
];

#[test]
fn with_a_model_a_query_finds_a_skill_by_meaning_that_shares_no_word() {
    let root = catalog();
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path(), WORDS, WORDS.len() + 1);
    // "keynote" is in no skill's text: words alone find nothing.
    let mut plain = start(root.path(), &[]);
    let (hits, page) = query(&mut plain, json!({"query": "keynote"}));
    assert!(hits.is_empty(), "{page}");
    let mut s = start(
        root.path(),
        &[("SKILL_MCP_EMBEDDINGS", model.path().to_str().unwrap())],
    );
    let (hits, page) = query(&mut s, json!({"query": "keynote"}));
    assert_eq!(hits.first().map(String::as_str), Some("pptx"), "{page}");
    let note = page["note"].as_str().unwrap();
    assert!(
        note.starts_with("No skill shares a word with")
            && note.contains("nearest to it in meaning"),
        "{note}"
    );
    assert_eq!(page["total"], json!(hits.len()), "{page}");
    // Words and meaning together: "transcripts counts" shares "counts"
    // with rna-seq, and its meaning too; it comes first, said as a match.
    let (hits, page) = query(&mut s, json!({"query": "transcripts counts"}));
    assert_eq!(hits.first().map(String::as_str), Some("rna-seq"), "{page}");
    assert!(
        page["note"].as_str().unwrap().contains("best first"),
        "{page}"
    );
    // A query whose meaning points away from every skill: nothing, said so.
    let (hits, page) = query(&mut s, json!({"query": "sunshine"}));
    assert!(hits.is_empty(), "{page}");
    assert!(
        page["note"]
            .as_str()
            .unwrap()
            .starts_with("No skill matches"),
        "{page}"
    );
    // No problem is reported for a model that loads.
    let all = s.tool("skill_list", json!({}));
    assert_eq!(all["problems"], json!([]), "{all}");
}

/// LIST-017: "a reload reuses the loaded model, and retries one that
/// failed". A model folder the owner fixes after boot is used from the
/// next rescan on, without a restart; its problem goes with it. (Issue 42:
/// settings resolved once must not freeze a failed model.)
#[test]
fn a_model_fixed_after_boot_is_used_from_the_next_rescan() {
    let root = catalog();
    let model = tempfile::tempdir().unwrap();
    let mut s = start(
        root.path(),
        &[("SKILL_MCP_EMBEDDINGS", model.path().to_str().unwrap())],
    );
    let all = s.tool("skill_list", json!({}));
    assert_eq!(
        embedding_problems(&all).len(),
        1,
        "an empty model folder is one problem: {all}"
    );
    let (hits, page) = query(&mut s, json!({"query": "keynote"}));
    assert!(hits.is_empty(), "{page}");
    tiny_model(model.path(), WORDS, WORDS.len() + 1);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.pid() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    // Polled: the rescan lands when it lands (spec README, "Timing in
    // tests").
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let all = s.tool("skill_list", json!({}));
        if embedding_problems(&all).is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the model fixed after boot is still a problem after a SIGHUP: {all}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (hits, page) = query(&mut s, json!({"query": "keynote"}));
    assert_eq!(hits.first().map(String::as_str), Some("pptx"), "{page}");
}

#[test]
fn a_model_that_cannot_be_used_is_a_problem_and_words_still_rank() {
    let root = catalog();
    let cases: Vec<(tempfile::TempDir, &str)> = vec![
        // No files at all.
        (tempfile::tempdir().unwrap(), "has no tokenizer.json"),
        // A tokenizer of nine tokens over a table of four rows: the library
        // would panic on "counts"; the server refuses the model instead.
        (
            {
                let d = tempfile::tempdir().unwrap();
                tiny_model(d.path(), WORDS, 4);
                d
            },
            "of a table of 4 rows",
        ),
        // A table that is not safetensors.
        (
            {
                let d = tempfile::tempdir().unwrap();
                tiny_model(d.path(), WORDS, WORDS.len() + 1);
                std::fs::write(d.path().join("model.safetensors"), b"not a table").unwrap();
                d
            },
            "model.safetensors is not a safetensors file",
        ),
    ];
    for (model, why) in &cases {
        let mut s = start(
            root.path(),
            &[("SKILL_MCP_EMBEDDINGS", model.path().to_str().unwrap())],
        );
        let all = s.tool("skill_list", json!({}));
        let problems = all["problems"].as_array().unwrap();
        assert_eq!(problems.len(), 1, "{all}");
        assert_eq!(problems[0]["path"], "SKILL_MCP_EMBEDDINGS", "{all}");
        let detail = problems[0]["detail"].as_str().unwrap();
        assert!(
            detail.contains(why) && detail.contains("LIST-017") && detail.contains("words alone"),
            "{detail}"
        );
        // Words alone still rank, and every call answers: "counts" (row 6
        // of a four-row table) is no panic.
        let (hits, page) = query(&mut s, json!({"query": "expression counts"}));
        assert_eq!(hits, ["rna-seq"], "{page}");
    }
}

fn dense_ids() -> Vec<u64> {
    model2vec::dense_ids(THREE_SKILL_WORDS)
}

/// Words of the catalog and the queries, each with its 2-dimension row.
const THREE_SKILL_WORDS: &[(&str, [f32; 2])] = &[
    ("powerpoint", [1.0, 0.0]),
    ("decks", [1.0, 0.05]),
    ("slide", [0.95, 0.1]),
    ("keynote", [0.9, 0.0]),
    ("expression", [0.05, 1.0]),
    ("counts", [0.0, 1.0]),
    ("transcripts", [0.0, 1.0]),
];

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// A small catalog: two skills the model's words point at.
fn three_skills() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (name, description) in [
        (
            "pptx",
            "Create and edit PowerPoint decks, slide layouts and charts.",
        ),
        (
            "rna-seq",
            "Differential expression of bulk RNA-seq counts with DESeq2.",
        ),
        ("pdf-forms", "Fill in and flatten PDF forms."),
    ] {
        let dir = root.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nbody\n"),
        )
        .unwrap();
    }
    root
}

/// A session on `root` with the model in `model`, its stderr kept in a
/// file the caller reads back.
fn start_with_model(root: &Path, model: &Path) -> (Session, tempfile::NamedTempFile) {
    let log = tempfile::NamedTempFile::new().unwrap();
    let s = Session::start_logging(
        Command::new(BIN),
        &[
            ("SKILLS_DIR", root.to_str().unwrap()),
            ("SKILL_MCP_EMBEDDINGS", model.to_str().unwrap()),
        ],
        Stdio::from(log.reopen().unwrap()),
    );
    (s, log)
}

/// The model2vec directory of these tests: `THREE_SKILL_WORDS` under `ids`.
fn model(dir: &Path, ids: &[u64], rows: usize, extra: &[model2vec::Tensor]) {
    model2vec::model(dir, THREE_SKILL_WORDS, ids, rows, extra);
}

fn embedding_problems(list: &Value) -> Vec<String> {
    list["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["path"] == "SKILL_MCP_EMBEDDINGS")
        .map(|p| p["detail"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Finding 1 (LIST-017). The load check counts the tokenizer's tokens, not
/// its ids: a vocabulary whose ids are sparse (nine tokens, nine rows, but
/// "counts" is id 100) passes it. The library then panics on every skill
/// and query holding "counts": caught, so the server answers, but each
/// panic is printed raw to stderr (unbounded, outside SRV-010), those
/// skills silently have no vector, and `problems` says nothing — the owner
/// is never told the model is broken.
///
/// Issues 27 and 30: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_tokenizer_whose_ids_run_past_the_table_is_refused_at_load() {
    let root = three_skills();
    let dir = tempfile::tempdir().unwrap();
    let mut ids = dense_ids();
    ids[5] = 100; // "counts"
    model(dir.path(), &ids, THREE_SKILL_WORDS.len() + 1, &[]);
    let (mut s, log) = start_with_model(root.path(), dir.path());
    let all = s.tool("skill_list", json!({}));
    let page = s.tool("skill_list", json!({"query": "expression counts"}));
    assert_eq!(
        names(&page).first().map(String::as_str),
        Some("rna-seq"),
        "{page}"
    );
    let stderr = std::fs::read_to_string(log.path()).unwrap();
    let said = embedding_problems(&all);
    assert!(
        said.iter().any(|d| d.contains("LIST-017")) && !stderr.contains("panicked"),
        "a tokenizer id (100) past the table's 8 rows is accepted: problems {said:?}; stderr:\n{stderr}"
    );
}

/// Finding 2 (LIST-017). A `mapping` tensor switches the load check off
/// ("the library bounds it"), but the library does not: a mapping that
/// sends a token to a row past the table, or one shorter than the
/// vocabulary (a token past its end is used as a row number itself), makes
/// it panic on every text holding that token. The model is accepted
/// without a problem, the skills lose their vectors silently, and stderr
/// fills with panics.
///
/// Issues 27 and 30: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_mapping_past_the_table_is_refused_at_load() {
    let root = three_skills();
    let past: Vec<u8> = [0i64, 1, 2, 3, 4, 5, 999, 7]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let short: Vec<u8> = [0i64, 1].iter().flat_map(|x| x.to_le_bytes()).collect();
    let cases = [
        (
            "a row past the table",
            THREE_SKILL_WORDS.len() + 1,
            ("mapping", "I64", vec![8], past),
        ),
        (
            "a mapping shorter than the vocabulary",
            4,
            ("mapping", "I64", vec![2], short),
        ),
    ];
    for (what, rows, mapping) in cases {
        let dir = tempfile::tempdir().unwrap();
        model(dir.path(), &dense_ids(), rows, &[mapping]);
        let (mut s, log) = start_with_model(root.path(), dir.path());
        let all = s.tool("skill_list", json!({}));
        s.tool("skill_list", json!({"query": "expression counts"}));
        s.tool("skill_list", json!({"query": "keynote"}));
        let stderr = std::fs::read_to_string(log.path()).unwrap();
        let said = embedding_problems(&all);
        assert!(
            said.iter().any(|d| d.contains("LIST-017")) && !stderr.contains("panicked"),
            "{what}: accepted without a problem ({said:?}); stderr:\n{stderr}"
        );
    }
}

/// Finding 3 (LIST-017). The model's files are opened with a plain
/// `open(2)`, not the fence's `O_NONBLOCK`: a FIFO in place of
/// `tokenizer.json` (or `config.json`) blocks the boot scan forever, so
/// the server never answers `initialize` — a hang instead of a problem.
/// The fence was hardened against exactly this for skills' files.
///
/// Issues 27 and 30: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_fifo_in_the_model_directory_does_not_hang_the_handshake() {
    let root = three_skills();
    for file in ["tokenizer.json", "config.json"] {
        let dir = tempfile::tempdir().unwrap();
        model(dir.path(), &dense_ids(), THREE_SKILL_WORDS.len() + 1, &[]);
        std::fs::remove_file(dir.path().join(file)).unwrap();
        nix::unistd::mkfifo(&dir.path().join(file), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let mut child = Command::new(BIN)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SKILLS_DIR", root.path())
            .env("SKILL_MCP_EMBEDDINGS", dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{INIT}").unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            if let Some(Ok(line)) = BufReader::new(stdout).lines().next() {
                let _ = tx.send(line);
            }
        });
        // The hang this catches is forever; the answer takes milliseconds,
        // so the deadline only has to end the test (spec README, "Timing in
        // tests").
        let asked = Instant::now();
        let reply = rx.recv_timeout(Duration::from_secs(60));
        let _ = child.kill();
        let _ = child.wait();
        let reply = reply.unwrap_or_else(|_| {
            panic!(
                "{file} as a FIFO: no answer to initialize within 60 s (the boot blocks opening it)"
            )
        });
        eprintln!(
            "{file} as a FIFO: initialize answered in {} ms",
            asked.elapsed().as_millis()
        );
        assert!(reply.contains("\"result\""), "{reply}");
    }
}

/// Finding 4 (LIST-017, low). A model file that is no regular file — here
/// `tokenizer.json` a symlink to `/dev/zero` — is read up to the 1 GiB
/// bound before it is refused: a gigabyte of memory at boot (and again on
/// each reload, which retries a failed model) for a mistake a stat tells.
///
/// Issues 27 and 30: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_model_file_that_is_a_device_is_refused_without_reading_a_gigabyte() {
    let root = three_skills();
    let dir = tempfile::tempdir().unwrap();
    model(dir.path(), &dense_ids(), THREE_SKILL_WORDS.len() + 1, &[]);
    std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("tokenizer.json")).unwrap();
    let (mut s, _log) = start_with_model(root.path(), dir.path());
    let all = s.tool("skill_list", json!({}));
    assert_eq!(embedding_problems(&all).len(), 1, "{all}");
    let peak = proc_kib(s.pid(), "VmHWM");
    assert!(
        peak < 256 * 1024,
        "a /dev/zero tokenizer.json costs {} MiB at boot",
        peak / 1024
    );
}

/// Finding 8 (LIST-017 beside CONF-009, low). `SKILL_MCP_EMBEDDINGS` set to
/// `~/models/potion` (the owner's model is right there, under `HOME`):
/// `~` is not expanded, the directory does not exist, and the problem says
/// "~/models/potion has no tokenizer.json" — as if the directory were
/// there with a file missing. Roots written with `~` say that `~` is not
/// expanded (CONF-009); the model's directory, written the same way in the
/// same client configuration, neither says so nor that it does not exist.
///
/// Issues 27 and 30: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_model_directory_written_with_a_tilde_says_it_does_not_exist() {
    let root = three_skills();
    let home = tempfile::tempdir().unwrap();
    model(
        &home.path().join("models/potion"),
        &dense_ids(),
        THREE_SKILL_WORDS.len() + 1,
        &[],
    );
    let mut s = Session::start_command(
        {
            let mut c = Command::new(BIN);
            c.current_dir(home.path());
            c
        },
        &[
            ("SKILLS_DIR", root.path().to_str().unwrap()),
            ("HOME", home.path().to_str().unwrap()),
            ("SKILL_MCP_EMBEDDINGS", "~/models/potion"),
        ],
    );
    let all = s.tool("skill_list", json!({}));
    let said = embedding_problems(&all);
    assert_eq!(said.len(), 1, "{all}");
    assert!(
        said[0].contains("not expanded")
            || said[0].contains("does not exist")
            || said[0].contains("No such file"),
        "a model directory that does not exist is said to lack a file: {}",
        said[0]
    );
}

/// SEARCH-005 (issue 44 §5): a table that cannot rank by meaning — a NaN
/// or an infinity in any row, or more than 5% of its rows all zero —
/// loads with no complaint in the library and silently ranks nothing (one
/// NaN row made "automobile" rank `fruit` first). It is a `problems` entry
/// naming the file and how many rows are bad, and words still rank.
#[test]
fn a_table_of_nan_infinities_or_zeros_is_refused_naming_its_bad_rows() {
    let root = catalog();
    let with = |row: usize, v: [f32; 2]| -> Vec<(&'static str, [f32; 2])> {
        let mut w = WORDS.to_vec();
        w[row].1 = v;
        w
    };
    let mut zeros = WORDS.to_vec();
    zeros[1].1 = [0.0, 0.0];
    type Words = Vec<(&'static str, [f32; 2])>;
    let cases: Vec<(Words, &str)> = vec![
        (
            with(3, [f32::NAN, 0.5]),
            "1 of its 9 rows hold a value that is not a finite number",
        ),
        (
            with(6, [0.0, f32::INFINITY]),
            "1 of its 9 rows hold a value that is not a finite number",
        ),
        // One zero row of nine is 11%, over the 5% a table may have.
        (zeros, "1 of its 9 rows are all zero, more than 5%"),
    ];
    for (words, why) in &cases {
        let model = tempfile::tempdir().unwrap();
        tiny_model(model.path(), words, words.len() + 1);
        let mut s = start(
            root.path(),
            &[("SKILL_MCP_EMBEDDINGS", model.path().to_str().unwrap())],
        );
        let all = s.tool("skill_list", json!({}));
        let said = embedding_problems(&all);
        assert_eq!(said.len(), 1, "{all}");
        assert!(
            said[0].contains(why)
                && said[0].contains("model.safetensors")
                && said[0].contains("SEARCH-005")
                && said[0].contains("words alone"),
            "{}",
            said[0]
        );
        // Words alone rank, and meaning adds nothing: "keynote" is in no
        // skill's text.
        let (hits, page) = query(&mut s, json!({"query": "expression counts"}));
        assert_eq!(hits, ["rna-seq"], "{page}");
        let (hits, page) = query(&mut s, json!({"query": "keynote"}));
        assert!(hits.is_empty(), "{page}");
    }
    // The same words with finite rows and none zero: no problem.
    let model = tempfile::tempdir().unwrap();
    tiny_model(model.path(), WORDS, WORDS.len() + 1);
    let mut s = start(
        root.path(),
        &[("SKILL_MCP_EMBEDDINGS", model.path().to_str().unwrap())],
    );
    let all = s.tool("skill_list", json!({}));
    assert!(embedding_problems(&all).is_empty(), "{all}");
}

/// A catalog a hostile author has stuffed (issue 44 §2): `pdf-pro` says
/// "PDF" forty times, eleven `git-*` skills say "git" in every field,
/// `csv-magic` repeats "CSV" where `csv-reader` says it once.
fn stuffed_catalog() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(
        r,
        "pdf",
        "Read, create and merge PDF files; fill their forms.",
        "# PDF\nOpen the file.",
    );
    write(
        r,
        "pdf-pro",
        &format!("The best PDF tool. {}", "PDF pdf Pdf ".repeat(40)),
        &"pdf ".repeat(200),
    );
    write(
        r,
        "git",
        "Use version control to commit, branch, merge and rebase.",
        "# Version control\nCommit early.",
    );
    for i in 0..11 {
        let stuffed = "git Git GIT ".repeat(30);
        let dir = r.join(format!("git-helper-{i:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: git-helper-{i:02}\ndescription: git {stuffed}\nwhen_to_use: git {stuffed}\n---\n{}\n",
                "git ".repeat(300)
            ),
        )
        .unwrap();
    }
    write(r, "csv-reader", "Reads CSV files into tables.", "");
    write(r, "csv-magic", &format!("Magic. {}", "CSV ".repeat(40)), "");
    root
}

/// SEARCH-002: a query that is a skill's name, after folding, ranks that
/// skill first, however stuffed the others; eleven near-duplicates
/// stuffing its word cannot push it off the first page.
#[test]
fn a_query_that_is_a_skills_name_ranks_it_first_over_stuffed_skills() {
    let root = stuffed_catalog();
    let mut s = start(root.path(), &[]);
    for (q, want) in [
        ("pdf", "pdf"),
        ("PDF", "pdf"),
        ("git", "git"),
        ("Git", "git"),
        ("pdf pro", "pdf-pro"),
        ("git_helper_07", "git-helper-07"),
    ] {
        let (hits, page) = query(&mut s, json!({"query": q}));
        assert_eq!(hits.first().map(String::as_str), Some(want), "{q}: {page}");
        assert_eq!(
            hits.iter().filter(|h| *h == want).count(),
            1,
            "{q}: listed once: {page}"
        );
    }
    // With a limit of one, the page is the named skill.
    let (hits, page) = query(&mut s, json!({"query": "git", "limit": 1}));
    assert_eq!(hits, ["git"], "{page}");
    s.finish();
}

/// SEARCH-001: a word repeated past a small count gains nothing, so a
/// description saying "CSV" forty times does not outrank one saying it
/// once (ties would go to `csv-magic`, first in name order).
#[test]
fn repeating_a_word_gains_nothing_past_a_small_count() {
    let root = stuffed_catalog();
    let mut s = start(root.path(), &[]);
    let (hits, page) = query(&mut s, json!({"query": "csv"}));
    assert_eq!(
        hits.first().map(String::as_str),
        Some("csv-reader"),
        "{page}"
    );
    // "merge pdf": `pdf` says both words once; `pdf-pro` says "pdf" 320
    // times and "merge" never.
    let (hits, page) = query(&mut s, json!({"query": "merge pdf files"}));
    assert_eq!(hits.first().map(String::as_str), Some("pdf"), "{page}");
    s.finish();
}

/// SEARCH-004 (issue 44 §4): a query word of four letters or more also
/// matches the longer words it begins, below an exact match; a shorter
/// one does not.
#[test]
fn a_query_word_finds_the_longer_words_it_begins_below_an_exact_match() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(
        r,
        "postgresql",
        "Design PostgreSQL schemas and indexes.",
        "",
    );
    write(r, "pg-tuning", "Tune postgres settings for speed.", "");
    write(r, "sqlite", "Embed a SQLite database file.", "");
    write(r, "mail", "Sends mail.", "");
    let mut s = start(r, &[]);
    // "postgres" is a prefix of "postgresql": found, after the skill
    // saying "postgres" itself.
    let (hits, page) = query(&mut s, json!({"query": "postgres"}));
    assert_eq!(hits, ["pg-tuning", "postgresql"], "{page}");
    let (hits, page) = query(&mut s, json!({"query": "make my postgres schemas faster"}));
    assert_eq!(
        hits.first().map(String::as_str),
        Some("postgresql"),
        "{page}"
    );
    // Three letters begin too many words: "sql" is not "sqlite".
    let (hits, page) = query(&mut s, json!({"query": "sql"}));
    assert!(hits.is_empty(), "{page}");
    // A whole word still matches only itself and its stem's forms.
    let (hits, page) = query(&mut s, json!({"query": "sqlite"}));
    assert_eq!(hits, ["sqlite"], "{page}");
    s.finish();
}

/// SEARCH-003 (issue 44 §3): Chinese and Japanese are written without
/// spaces, so a whole run of their letters was one term and a word typed
/// from it found nothing. Runs of those scripts are cut into character
/// bigrams, in skills and queries alike.
#[test]
fn a_word_typed_in_chinese_or_japanese_finds_the_skill_whose_description_holds_it() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(r, "pdf-zh", "从PDF文件中提取表格和文本。", "");
    write(r, "summary-zh", "为长篇文档生成摘要。", "");
    write(r, "pdf-ja", "PDFからテキストを抽出します。", "");
    write(r, "summary-ja", "長い文書を要約します。", "");
    write(r, "mail", "Sends mail.", "");
    let mut s = start(r, &[]);
    for (q, want) in [
        ("提取", "pdf-zh"),
        ("表格", "pdf-zh"),
        ("摘要", "summary-zh"),
        ("抽出", "pdf-ja"),
        ("要約", "summary-ja"),
        ("提取表格", "pdf-zh"),
        ("テキストを抽出", "pdf-ja"),
    ] {
        let (hits, page) = query(&mut s, json!({"query": q}));
        assert_eq!(hits.first().map(String::as_str), Some(want), "{q}: {page}");
    }
    // Latin beside them is as before: "pdf" is a word of its own.
    let (mut hits, page) = query(&mut s, json!({"query": "pdf"}));
    hits.sort();
    assert_eq!(hits, ["pdf-ja", "pdf-zh"], "{page}");
    s.finish();
}
