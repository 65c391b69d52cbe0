//! The run phase: `skill_run` of a script that exits at once, paired with
//! node running it directly, so what is left over is the server's own
//! overhead: judged as the ratio of the two in each pair (bare node is the
//! floor, measured in the same run), the overhead in ms reported.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::json;

use crate::client::{Server, node_on_path};
use crate::report::{Table, Target};
use crate::settings::Settings;
use crate::stats::{median, min_max, ms};
use crate::tree::Tree;

/// At most this ratio of a `skill_run` round trip to bare node running
/// the same script in the same pair (see where it is judged).
const RUN_OVER_BARE: f64 = 1.2;

fn find_node() -> PathBuf {
    node_on_path().expect("node on PATH (the server runs declared scripts with it)")
}

/// `skill_run` of a script that exits at once, with confirm: true, against
/// running node on it directly (same argv, directory and environment).
pub fn run_overhead(s: &Settings, tree: &Tree, size: &str, t: &mut Table) {
    let node = find_node();
    let mut sv = Server::spawn(&tree.root);
    sv.initialize();
    let name = tree.names[tree.names.len() / 2].clone();
    let dir = fs::canonicalize(tree.root.join(&name)).expect("the skill's real directory");
    let script = dir.join("scripts/noop.js");
    let args = json!({"name": name, "script": "scripts/noop.js", "args": ["--flag", "value"], "confirm": true});
    let bare_once = || {
        let t0 = Instant::now();
        let out = Command::new(&node)
            .arg(&script)
            .args(["--flag", "value"])
            .current_dir(&dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .output()
            .expect("node runs");
        assert!(out.status.success());
        ms(t0.elapsed())
    };
    // Warm node and the server's run path once each.
    bare_once();
    sv.tool("skill_run", args.clone());
    let mut bare = Vec::new();
    let mut run = Vec::new();
    let mut inside = Vec::new();
    for _ in 0..s.run_pairs {
        bare.push(bare_once());
        let (d, r) = sv.tool("skill_run", args.clone());
        // The outcome is the answer itself, or under `result`.
        let o = if r["result"].is_object() {
            &r["result"]
        } else {
            &r
        };
        assert_eq!(o["exitCode"], 0, "{r}");
        inside.push(o["durationMs"].as_f64().unwrap_or(f64::NAN));
        run.push(ms(d));
    }
    let preview: Vec<f64> = (0..s.trips)
        .map(|_| {
            let mut a = args.clone();
            a["confirm"] = json!(false);
            let (d, r) = sv.tool("skill_run", a);
            assert_eq!(r["dryRun"], true);
            ms(d)
        })
        .collect();
    t.ms(
        "bare `node noop.js` (spawn → exit)",
        size,
        &bare,
        Target::None,
    );
    t.ms(
        "skill_run noop.js, confirm: true, round trip",
        size,
        &run,
        Target::None,
    );
    t.ms(
        "  its durationMs as the server reports it",
        size,
        &inside,
        Target::None,
    );
    let diffs: Vec<f64> = run.iter().zip(&bare).map(|(r, b)| r - b).collect();
    let (lo, hi) = min_max(&diffs);
    t.add(
        "skill_run overhead over bare node (median − median)",
        size,
        median(&run) - median(&bare),
        format!("pairwise {lo:.2}–{hi:.2}; reported only: judged ÷ bare node (next row)"),
        "ms",
        Target::None,
    );
    // The run over bare node in the same pair: its floor, on this machine
    // and at this moment. The old target was an overhead under 5 ms; over
    // the 23.91 ms bare node BENCHMARKS.md records with it (EPYC, through
    // skill_run 24.67 ms, 1.03×) that is (23.91 + 5) ÷ 23.91 = 1.21×,
    // rounded down to 1.2×.
    let ratios: Vec<f64> = run.iter().zip(&bare).map(|(r, b)| r / b).collect();
    t.floor_ratio(
        "skill_run round trip ÷ bare node, pair by pair",
        size,
        &ratios,
        "",
        Some(RUN_OVER_BARE),
    );
    t.ms(
        "skill_run preview (no confirm) round trip",
        size,
        &preview,
        Target::None,
    );
}
