//! The trips phase: round trips of each tool and list method on one booted
//! server, full walks of the paginated lists, reply sizes, and peak RSS
//! after them all.
//!
//! No round trip is judged in milliseconds (issue 43 §5): the first
//! `skill_list` page and `query` are judged against the same server's
//! `ping` (the transport floor: a request and an empty answer over the same
//! pipes), one `ping` right before each call, and `query` also against a
//! baseline build on the same tree when SKILL_MCP_BENCH_BASELINE names one
//! (issue 44: at most 1.2× at 1,000 and 10,000 skills). Every other round
//! trip is reported without a verdict.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};

use crate::client::{Server, list_counts};
use crate::report::{Table, Target, fmt_count};
use crate::settings::Settings;
use crate::stats::{mib, ms};
use crate::tree::{BIG_FILE, ONE_MIB, Tree, big_skill, bundle_files, description_word};

/// A `skill_list` answer's size: its compact JSON, as the budget counts it
/// (the skills here are ASCII, so characters are bytes).
fn answer_chars(sc: &Value) -> usize {
    serde_json::to_string(sc).map_or(0, |s| s.len())
}

/// The whole `skill_list` listing read page by page through `nextCursor`.
struct ListWalk {
    /// Round trips of the continuations (every page after the first).
    trips: Vec<f64>,
    /// The largest page's answer in characters.
    largest: usize,
}

fn list_walk(sv: &mut Server, tree: &Tree) -> ListWalk {
    let (_, mut page) = sv.tool("skill_list", json!({}));
    let mut seen: Vec<String> = Vec::new();
    let mut trips = Vec::new();
    let mut largest = 0;
    loop {
        largest = largest.max(answer_chars(&page));
        seen.extend(
            page["skills"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["name"].as_str().map(str::to_owned)),
        );
        let Some(c) = page["nextCursor"].as_str().map(str::to_owned) else {
            break;
        };
        let (d, next) = sv.tool("skill_list", json!({"cursor": c}));
        trips.push(ms(d));
        page = next;
    }
    assert_eq!(
        seen, tree.names,
        "the pages hold every skill once, in name order"
    );
    ListWalk { trips, largest }
}

/// The first `skill_list` page over a `ping`, at 10,000 skills. The old
/// target was 2 ms; over the `ping` of 0.09–0.10 ms BENCHMARKS.md records
/// (skills-ext) that is 20–22×, so at most 20× (the page it records: 0.47
/// ms, about 5×). The page is 38 KiB of JSON, 79 KiB on the wire.
const FIRST_PAGE_OVER_PING: f64 = 20.0;

/// `query` over a `ping` (issue 27 §6 said 1 ms at 1,000 skills and 5 ms
/// at 10,000): over the same 0.09–0.10 ms `ping`, 10× and 50×. Recorded:
/// 0.05–0.23 / 0.14–0.21 ms by words (≤ 2.3×), 0.72 / 2.12 ms with a
/// model (7–8× / 21–24×), so both hold with either.
fn query_over_ping(skills: usize) -> Option<f64> {
    match skills {
        1_000 => Some(10.0),
        10_000 => Some(50.0),
        _ => None,
    }
}

/// `query` over a baseline build's on the same tree (issue 44: at most
/// 1.2× at 1,000 and 10,000 skills, in the same run).
fn query_over_baseline(skills: usize) -> Option<f64> {
    matches!(skills, 1_000 | 10_000).then_some(1.2)
}

/// `query` against a baseline build in this run (issue 44), for the
/// summary.
pub enum QueryBaseline {
    /// SKILL_MCP_BENCH_BASELINE is not set.
    None,
    /// The baseline did not boot or did not answer a query, and why.
    Failed(String),
    /// The median of per-pair ratios, the pairs, and the target.
    Ratio {
        ratio: f64,
        pairs: usize,
        at_most: Option<f64>,
    },
}

/// A baseline build booted on `tree`, its search index built by a first
/// query (as this server's is before its queries are timed).
fn baseline_server(bin: &Path, tree: &Tree) -> Result<Server, String> {
    let mut sv = Server::spawn_bin(bin, &tree.root);
    sv.try_initialize_any()?;
    baseline_query(&mut sv, "pdf", None)?;
    Ok(sv)
}

/// A `skill_list` query on the baseline, in ms; with `expect`, the skill
/// that must be among its matches (its ranking may differ from this
/// build's).
fn baseline_query(sv: &mut Server, word: &str, expect: Option<&str>) -> Result<f64, String> {
    let (d, r) = sv.try_call(
        "tools/call",
        json!({"name": "skill_list", "arguments": {"query": word}}),
    )?;
    if r["isError"] == json!(true) {
        return Err(format!(
            "its skill_list {{query: {word:?}}} failed: {r:.300}"
        ));
    }
    let found = r["structuredContent"]["skills"]
        .as_array()
        .is_some_and(|a| expect.is_none_or(|nm| a.iter().any(|e| e["name"] == json!(nm))));
    if !found {
        return Err(format!(
            "its skill_list {{query: {word:?}}} does not list {expect:?}: {r:.300}"
        ));
    }
    Ok(ms(d))
}

/// Round trips on one server after boot.
pub fn trips(s: &Settings, tree: &Tree, size: &str, t: &mut Table, judged: bool) -> QueryBaseline {
    let mut sv = Server::spawn(&tree.root);
    sv.initialize();
    sv.tool("skill_list", json!({}));
    // The search index (LIST-013) is built by the first query: its time,
    // and what it adds to the RSS after boot (issue 27 §6: at most 25%).
    let skills = tree.names.len();
    let rss_boot = sv.status_kib("VmRSS");
    let (first_query, _) = sv.tool("skill_list", json!({"query": "pdf"}));
    let rss_index = sv.status_kib("VmRSS");
    t.ms(
        "skill_list first query (builds the search index)",
        size,
        &[ms(first_query)],
        Target::None,
    );
    t.add(
        "search index: RSS it adds ÷ RSS after boot",
        size,
        rss_index.saturating_sub(rss_boot) as f64 / rss_boot.max(1) as f64,
        format!("{} → {} KiB", rss_boot, rss_index),
        "×",
        if judged {
            Target::RatioAtMost(0.25)
        } else {
            Target::None
        },
    );
    let n = s.trips;
    let big = big_skill();
    // Distinct skills for k < the tree size (7,919 is prime), never the
    // one holding the 1 MiB file.
    let name = |k: usize| {
        let nm = &tree.names[(k * 7919) % tree.names.len()];
        if *nm == big {
            tree.names[(k * 7919 + 1) % tree.names.len()].clone()
        } else {
            nm.clone()
        }
    };

    // SEP-2640 skills/get of skills not digested yet (nothing has been on
    // this server), each fetched once, then the same skill again and again.
    let uri = |nm: &str| format!("skill://{nm}/SKILL.md");
    let get_cold: Vec<f64> = (0..n)
        .map(|k| {
            let (d, r) = sv.call("skills/get", json!({"uri": uri(&name(k))}));
            assert!(r["skill"].is_object(), "{r}");
            ms(d)
        })
        .collect();
    let get_warm: Vec<f64> = (0..n)
        .map(|_| ms(sv.call("skills/get", json!({"uri": uri(&name(0))})).0))
        .collect();

    // skill_list: the first page (no arguments: a full page at this size),
    // then the whole listing through its cursors, then queries.
    // Each paired with a `ping` right before it: the transport floor.
    let (_, first_page) = sv.tool("skill_list", json!({}));
    let mut list_pings = Vec::new();
    let mut list = Vec::new();
    for _ in 0..n {
        list_pings.push(ping(&mut sv));
        list.push(ms(sv.tool("skill_list", json!({})).0));
    }
    let wire = sv.last_len;
    let (page, total) = list_counts(&first_page);
    assert_eq!(total, tree.names.len(), "the listing holds every skill");
    t.ms_noted(
        "skill_list round trip, first page (no arguments)",
        size,
        &list,
        "reported only: judged ÷ ping",
        Target::None,
    );
    t.floor_ratio(
        "  ÷ ping right before it (the transport floor)",
        size,
        &ratios(&list, &list_pings),
        "",
        judged.then_some(FIRST_PAGE_OVER_PING),
    );
    t.note(
        "  first skill_list page",
        size,
        format!("{:.1} KiB", answer_chars(&first_page) as f64 / 1024.0),
        format!(
            "{page} of {total} skills; {:.1} KiB on the wire",
            wire as f64 / 1024.0
        ),
    );
    let walk = list_walk(&mut sv, tree);
    t.ms(
        "skill_list round trip, a cursor continuation",
        size,
        &walk.trips,
        Target::None,
    );
    t.note(
        "  skill_list walk: every page through nextCursor",
        size,
        format!("{:.2} ms", walk.trips.iter().sum::<f64>()),
        format!(
            "{} pages, each skill once; largest {} chars",
            walk.trips.len() + 1,
            fmt_count(walk.largest)
        ),
    );
    // A word only one skill's description holds, a different skill each
    // time: a ranked search of the whole catalog that finds one.
    // Each after a `ping`, and beside the same query on a baseline build
    // (booted now, so it is idle during the other round trips), which of
    // the two goes first alternating.
    let base_bin = std::env::var_os("SKILL_MCP_BENCH_BASELINE").map(PathBuf::from);
    let mut base = match &base_bin {
        None => Err(String::new()),
        Some(b) => {
            baseline_server(b, tree).map_err(|e| format!("baseline {} refused: {e}", b.display()))
        }
    };
    let mut query_pings = Vec::new();
    let mut query = Vec::new();
    let mut base_query = Vec::new();
    for k in 0..n {
        let nm = name(k);
        let word = description_word(&nm);
        query_pings.push(ping(&mut sv));
        let mut on_base = |base: &mut Result<Server, String>| {
            if let Ok(b) = base {
                match baseline_query(b, &word, Some(&nm)) {
                    Ok(d) => base_query.push(d),
                    Err(e) => *base = Err(format!("baseline refused: {e}")),
                }
            }
        };
        if k % 2 == 1 {
            on_base(&mut base);
        }
        let (d, r) = sv.tool("skill_list", json!({"query": word}));
        assert_eq!(
            list_counts(&r),
            (1, 1),
            "the query finds one skill: {r:.300}"
        );
        assert_eq!(r["skills"][0]["name"], json!(nm));
        query.push(ms(d));
        if k % 2 == 0 {
            on_base(&mut base);
        }
    }
    t.ms_noted(
        "skill_list round trip, query (a word of one skill's description)",
        size,
        &query,
        "reported only: judged ÷ ping and ÷ a baseline build",
        Target::None,
    );
    t.floor_ratio(
        "  ÷ ping right before it (the transport floor)",
        size,
        &ratios(&query, &query_pings),
        "",
        query_over_ping(skills),
    );
    t.ms(
        "  ping round trips (the floor), one before each call judged ÷ ping",
        size,
        &[list_pings.as_slice(), query_pings.as_slice()].concat(),
        Target::None,
    );
    let baseline = match (&base, &base_bin) {
        (Ok(_), Some(b)) => {
            let at_most = query_over_baseline(skills);
            let ratio = t.floor_ratio(
                "  ÷ the same query on the baseline build",
                size,
                &ratios(&query, &base_query),
                &format!("{}", b.display()),
                at_most,
            );
            QueryBaseline::Ratio {
                ratio,
                pairs: base_query.len(),
                at_most,
            }
        }
        (Err(why), Some(_)) => {
            t.note(
                "  ÷ the same query on the baseline build",
                size,
                String::from("void"),
                why.clone(),
            );
            t.misses.push(format!("query ÷ baseline ({size}): {why}"));
            QueryBaseline::Failed(why.clone())
        }
        _ => {
            t.note(
                "  ÷ the same query on the baseline build",
                size,
                String::from("no baseline"),
                String::from("SKILL_MCP_BENCH_BASELINE not set"),
            );
            QueryBaseline::None
        }
    };
    drop(base);
    // A word a tenth of the catalog holds: the search, a sort and a page.
    let broad: Vec<f64> = (0..n)
        .map(|_| {
            let (d, r) = sv.tool("skill_list", json!({"query": "pdf"}));
            assert_eq!(list_counts(&r).1, tree.names.len().div_ceil(10), "{r:.300}");
            ms(d)
        })
        .collect();
    t.ms(
        "skill_list round trip, query hitting a tenth (\"pdf\")",
        size,
        &broad,
        Target::None,
    );
    let load: Vec<f64> = (0..n)
        .map(|k| {
            let (d, r) = sv.tool("skill_load", json!({"name": name(k)}));
            assert!(r["body"].as_str().is_some_and(|b| b.len() > 500), "{r}");
            ms(d)
        })
        .collect();
    t.ms("skill_load round trip", size, &load, Target::None);
    let kib: Vec<f64> = (0..n)
        .map(|k| {
            let (d, r) = sv.tool(
                "skill_file",
                json!({"name": name(k), "path": "references/guide.md"}),
            );
            assert_eq!(r["files"][0]["size"], 1024, "{r}");
            ms(d)
        })
        .collect();
    t.ms("skill_file 1 KiB round trip", size, &kib, Target::None);
    let mib1: Vec<f64> = (0..n)
        .map(|_| {
            let (d, r) = sv.tool("skill_file", json!({"name": big, "path": BIG_FILE}));
            assert_eq!(r["files"][0]["size"], ONE_MIB, "the 1 MiB file");
            assert_eq!(r["files"][0]["truncated"], false, "1 MiB is within the cap");
            ms(d)
        })
        .collect();
    t.ms("skill_file 1 MiB round trip", size, &mib1, Target::None);
    let paths: Vec<&str> = bundle_files().iter().map(|(p, _)| *p).collect::<Vec<_>>();
    let paths: Vec<String> = paths[..8].iter().map(|p| (*p).to_owned()).collect();
    let batch: Vec<f64> = (0..n)
        .map(|k| {
            let (d, r) = sv.tool("skill_file", json!({"name": name(k + 1), "paths": paths}));
            assert_eq!(r["files"].as_array().map(Vec::len), Some(8), "{r}");
            ms(d)
        })
        .collect();
    t.ms(
        "skill_file batch of 8 round trip",
        size,
        &batch,
        Target::None,
    );

    let page: Vec<f64> = (0..n)
        .map(|_| {
            let (d, r) = sv.call("resources/list", json!({}));
            assert!(r["resources"].as_array().is_some_and(|a| !a.is_empty()));
            ms(d)
        })
        .collect();
    t.ms("resources/list first page", size, &page, Target::None);
    let mut walks = Vec::new();
    let mut largest_page = 0;
    for _ in 0..s.walks {
        let start = Instant::now();
        let (seen, largest) = sv.walk("resources/list", "resources");
        largest_page = largest_page.max(largest);
        assert_eq!(seen, tree.files, "the walk sees every file once");
        walks.push(ms(start.elapsed()));
    }
    t.ms(
        &format!("resources/list full walk ({} files)", fmt_count(tree.files)),
        size,
        &walks,
        Target::None,
    );
    t.note(
        "resources/list largest page on the wire",
        size,
        format!("{:.1} KiB", largest_page as f64 / 1024.0),
        String::from("500 items a page"),
    );
    let (prompts, largest_prompts) = sv.walk("prompts/list", "prompts");
    assert_eq!(prompts, tree.names.len(), "the walk sees every skill once");
    t.note(
        "prompts/list largest page on the wire",
        size,
        format!("{:.1} KiB", largest_prompts as f64 / 1024.0),
        String::from("500 items a page"),
    );

    // SEP-2640 skills/list first page: the first call digests its files
    // (measured cold on each boot above); these find them cached.
    sv.call("skills/list", json!({}));
    let warm: Vec<f64> = (0..n)
        .map(|_| ms(sv.call("skills/list", json!({})).0))
        .collect();
    t.ms(
        "skills/list first page, warm digests",
        size,
        &warm,
        Target::None,
    );
    t.ms("skills/get, cold digests", size, &get_cold, Target::None);
    t.ms("skills/get, warm digests", size, &get_warm, Target::None);

    let h = mib(sv.status_kib("VmHWM"));
    t.add(
        "peak RSS (VmHWM) after the round trips above",
        size,
        h,
        String::new(),
        "MiB",
        Target::None,
    );
    baseline
}

/// One `ping` round trip in ms: a request and an empty answer over the
/// same pipes, the least any round trip costs on this server.
fn ping(sv: &mut Server) -> f64 {
    ms(sv.call("ping", json!({})).0)
}

/// `a[k] ÷ b[k]` for each pair.
fn ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x / y).collect()
}
