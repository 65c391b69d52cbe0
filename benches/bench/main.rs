//! The skill-mcp benchmark (issue "Benchmarks"): speed and memory of every
//! hot path, measured against the release binary over real stdio, each
//! figure the median of several runs, printed as a table with its target
//! and PASS/MISS. A time is judged only as a ratio to a floor or a peer
//! measured in the same run (issue 43 §5), never in milliseconds.
//!
//! ```text
//! cargo bench --bench skill-mcp              # the full run (BENCHMARKS.md)
//! cargo bench --bench skill-mcp -- --quick   # about a minute and a half once built
//! ```
//!
//! `cargo bench` builds the `skill-mcp` binary with the bench profile
//! (which inherits `release`) into the same target directory as this
//! program, and hands its path over as `CARGO_BIN_EXE_skill-mcp`; that is
//! the server measured. Trees are generated once into the target
//! directory and reused by later runs (`tree`). Everything is measured with a warm page cache
//! (the tree was just written, and the floor reads it the same way).
//!
//! One concern per module: `settings` (the flags), `tree` (the synthetic
//! skill trees), `client` (the stdio JSON-RPC client), `peer` (the original
//! TypeScript server, built once when its sources are beside the checkout),
//! `rmcp_peer` (rmcp's own SEP-2640 catalog, built from `benches/rmcp-peer`),
//! `measure` (one module per phase), `report` (targets, PASS/MISS and the
//! table), with `stats` and `rng` beside them. This file reads the flags, walks the
//! tree sizes through the phases, and prints the summary.

mod client;
mod measure;
mod peer;
mod report;
mod rmcp_peer;
mod rng;
mod settings;
mod stats;
mod tree;

use std::path::Path;
use std::time::Instant;

use crate::measure::trips::QueryBaseline;
use crate::report::{Table, fmt_count, loadavg};
use crate::settings::Settings;
use crate::tree::make_tree;

/// The release server, built by `cargo bench` beside this program.
const SERVER: &str = env!("CARGO_BIN_EXE_skill-mcp");

/// The tree size the targets are stated for.
pub const TARGET_SKILLS: usize = 10_000;

fn main() {
    let s = Settings::from_args();
    let began = Instant::now();
    let server = Path::new(SERVER);
    assert!(
        server.is_file(),
        "the server binary {SERVER} is missing: run this through `cargo bench --bench skill-mcp`"
    );
    println!(
        "skill-mcp benchmark ({} mode) — server {}",
        if s.quick { "quick" } else { "full" },
        server.display()
    );
    println!(
        "runs: {} boots per size, {} samples per round trip, {} full walks, {} run pairs, {} mixed calls",
        s.boots,
        s.trips,
        s.walks,
        s.run_pairs,
        fmt_count(s.mixed_calls)
    );
    println!("load average at start: {}", loadavg());
    let mut t = Table::default();
    let largest = *s.sizes.iter().max().expect("a tree size");
    let mut soak = measure::mixed::Soak::default();
    // The original TypeScript server, for the boot phase at 100 and 1,000.
    let peer = if !s.runs("boot") {
        Err(String::from("the boot phase does not run"))
    } else if !s.sizes.iter().any(|n| peer::PEER_SIZES.contains(n)) {
        Err(String::from("no 100- or 1,000-skill tree in this run"))
    } else {
        peer::prepare(s.fresh)
    };
    if let Err(why) = &peer {
        println!("side by side with the original TypeScript server: skipped, {why}");
    }
    // rmcp's SkillCatalog, for the skills-ext phase on every size and
    // the http-peer phase.
    let rmcp_peer = if s.runs("skills-ext") || s.runs("http-peer") {
        rmcp_peer::prepare()
    } else {
        Err(String::from(
            "neither the skills-ext nor the http-peer phase runs",
        ))
    };
    if let Err(why) = &rmcp_peer {
        println!("side by side with rmcp's SkillCatalog: skipped, {why}");
    }
    let mut skx_ratios = Vec::new();
    let mut peer_ratios = Vec::new();
    let mut query_baseline = Vec::new();
    if s.runs("boot") {
        measure::boot::empty(&s, &mut t);
    }
    // Retrieval quality on real catalogs, once (not per tree size).
    if s.runs("search") {
        match measure::search::evaluate(&mut t) {
            Ok(()) => eprintln!(
                "[{:>5.1}s] search evaluation done",
                began.elapsed().as_secs_f64()
            ),
            Err(why) => println!("search evaluation: skipped, {why}"),
        }
    }
    // Over HTTP, once, on its own 1,000-skill tree (issue 29 §7).
    if s.runs("http") {
        measure::http::http(&s, &mut t);
        eprintln!("[{:>5.1}s] http done", began.elapsed().as_secs_f64());
    }
    // This server and rmcp's SkillCatalog over HTTP, the same way (issue 43).
    if s.runs("http-peer") {
        let peer = rmcp_peer.as_deref().map_err(String::as_str);
        measure::http_peer::http_peer(&s, peer, &mut t);
        eprintln!("[{:>5.1}s] http-peer done", began.elapsed().as_secs_f64());
    }
    // The HTTP door under clients that do everything wrong (issue 40).
    if s.runs("door") {
        measure::door::door(&s, &mut t);
        eprintln!("[{:>5.1}s] door done", began.elapsed().as_secs_f64());
    }
    // The phases run on every tree size; none of them, no trees.
    let per_size = ["boot", "trips", "run", "mixed", "skills-ext", "rescan"]
        .iter()
        .any(|p| s.runs(p));
    for &n in s.sizes.iter().filter(|_| per_size) {
        let g = Instant::now();
        let tree = make_tree(n, s.fresh);
        let size = fmt_count(n);
        eprintln!(
            "[{:>5.1}s] tree of {size} skills ({} files) {} in {:.1}s: {}",
            began.elapsed().as_secs_f64(),
            fmt_count(tree.files),
            if tree.reused { "reused" } else { "generated" },
            g.elapsed().as_secs_f64(),
            tree.root.display()
        );
        // The targets are stated for 10,000 skills, so only judged there.
        let judged = n == TARGET_SKILLS;
        let stamp = |what: &str| {
            eprintln!(
                "[{:>5.1}s] {size}: {what} done",
                began.elapsed().as_secs_f64()
            )
        };
        if s.runs("boot") {
            let p = peer.as_ref().ok().filter(|_| peer::PEER_SIZES.contains(&n));
            if let Some(r) = measure::boot::boots(&s, &tree, n, &size, &mut t, p) {
                peer_ratios.push((size.clone(), r));
            }
            stamp("boots");
        }
        if s.runs("trips") {
            let b = measure::trips::trips(&s, &tree, &size, &mut t, judged);
            query_baseline.push((size.clone(), b));
            stamp("round trips");
        }
        if n == largest && s.runs("run") {
            measure::run::run_overhead(&s, &tree, &size, &mut t);
            stamp("skill_run");
        }
        if n == largest && s.runs("mixed") {
            soak = measure::mixed::flat(&s, &tree, &size, &mut t, judged);
            stamp("mixed calls");
        }
        if let Some(p) = rmcp_peer.as_ref().ok().filter(|_| s.runs("skills-ext")) {
            if let Some(r) = measure::skx::side_by_side(&s, server, p, &tree, &size, &mut t) {
                skx_ratios.push((size.clone(), r));
            }
            stamp("skills-ext side by side");
        }
        // After every other phase: the probe it adds never meets a floor.
        if s.runs("rescan") {
            measure::rescan::rescans(&s, &tree, &size, &mut t);
            stamp("rescans");
        }
    }
    println!();
    t.print();
    println!();
    if !soak.samples.is_empty() {
        let series: Vec<String> = soak
            .samples
            .iter()
            .map(|(k, r)| format!("{}: {r:.2}", fmt_count(*k)))
            .collect();
        println!(
            "VmRSS (MiB) by call count at {}: {}; peak (VmHWM) {:.2}",
            fmt_count(largest),
            series.join(", "),
            soak.peak
        );
    }
    match &peer {
        Ok(_) => {
            for (size, r) in &peer_ratios {
                println!(
                    "this server ÷ the original TypeScript server at {size} skills: \
                     boot → first skill_list {:.2}×, peak RSS after it {:.2}×",
                    r.boot, r.rss
                );
            }
        }
        Err(why) => println!("side by side with the original: skipped, {why}"),
    }
    for (size, r) in &skx_ratios {
        let parts: Vec<String> = measure::skx::RATIOS
            .iter()
            .zip(r)
            .map(|(what, x)| format!("{what} {x:.2}×"))
            .collect();
        println!(
            "this server ÷ rmcp's SkillCatalog at {size} skills: {}",
            parts.join(", ")
        );
    }
    for (size, b) in &query_baseline {
        let said = match b {
            QueryBaseline::None => String::from("no baseline (SKILL_MCP_BENCH_BASELINE not set)"),
            QueryBaseline::Failed(why) => format!("void, {why}"),
            QueryBaseline::Ratio {
                ratio,
                pairs,
                at_most,
            } => {
                let target = at_most.map_or(String::from("not judged at this size"), |x| {
                    if *pairs < report::MIN_PAIRS {
                        format!("≤ {x}×, no verdict: {pairs} pairs")
                    } else {
                        format!("≤ {x}×, {}", if *ratio <= x { "met" } else { "MISSED" })
                    }
                });
                format!("{ratio:.2}× ({target}, n={pairs})")
            }
        };
        println!("skill_list query, this build ÷ the baseline build at {size} skills: {said}");
    }
    println!(
        "no time or throughput is a target: each is judged as a ratio to a floor or a peer \
         in this run (boot ÷ find + read, skill_list page and query ÷ ping, query ÷ the \
         baseline build, skill_run ÷ bare node, and ÷ rmcp's SkillCatalog below) or reported \
         without a verdict (the http phase's rates and latencies: no floor there)"
    );
    issue43(&s, &t);
    println!(
        "SEP-2640 door: always on; its boot cost is SkillsView::boot's per-skill name and \
         description validation, included in every boot figure above (it cannot be switched off)."
    );
    println!("load average at end: {}", loadavg());
    println!("total time: {:.1}s", began.elapsed().as_secs_f64());
    let judged = t.rows.iter().filter(|r| !r.verdict.is_empty()).count();
    if !s.sizes.contains(&TARGET_SKILLS) {
        println!("the 10,000-skill targets were not judged: no 10,000-skill tree in this run");
    }
    if t.misses.is_empty() {
        println!("{judged} targets judged, every one met");
    } else {
        println!(
            "{judged} targets judged, {} missed: {}",
            t.misses.len(),
            t.misses.join("; ")
        );
    }
}

/// Issue 43's verdicts in one place: every ratio against rmcp's
/// SkillCatalog that carries one of its targets (http-peer, and skills-ext
/// from 1,000 skills up), met, missed, or without a verdict for want of
/// pairs; and which of its phases did not run.
fn issue43(s: &Settings, t: &Table) {
    println!();
    println!(
        "issue 43 (this server ÷ rmcp's SkillCatalog, the median of per-pair ratios; \
         a verdict needs {} interleaved pairs):",
        report::MIN_PAIRS
    );
    if !s.runs("http-peer") {
        println!("  http-peer: not run");
    }
    if !s.runs("skills-ext") {
        println!("  skills-ext (stdio): not run");
    } else if !s.sizes.iter().any(|&n| n >= 1_000) {
        println!("  skills-ext (stdio): not judged, no tree of 1,000 skills or more in this run");
    }
    let (mut met, mut missed, mut none) = (0, 0, 0);
    for v in &t.verdicts {
        let verdict = match v.met {
            Some(true) => {
                met += 1;
                String::from("met")
            }
            Some(false) => {
                missed += 1;
                String::from("MISSED")
            }
            None => {
                none += 1;
                format!("no verdict: {} pairs", v.pairs)
            }
        };
        println!(
            "  {verdict:<20} {:>6.2}× (≤ {}×, n={})  {} [{} skills]",
            v.ratio, v.at_most, v.pairs, v.what, v.size
        );
    }
    println!(
        "  {} ratios with an issue-43 target: {met} met, {missed} missed, {none} without a verdict",
        t.verdicts.len()
    );
}
