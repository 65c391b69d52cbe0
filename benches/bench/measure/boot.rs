//! The boot phase: the floor (`find` and reading every SKILL.md, the
//! least any scan must do), fresh servers booted up to their first
//! `skill_list` page, and RSS after boot alone and after that page; with
//! SKILL_MCP_BENCH_BASELINE, another build booted interleaved, and at 100
//! and 1,000 skills the original TypeScript server too (`peer`). The floor
//! lives here because only the boot figures are judged against it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::{Server, list_counts, ok};
use crate::peer::Peer;
use crate::report::{Table, Target};
use crate::settings::Settings;
use crate::stats::{median, mib, min_max, ms};
use crate::tree::{Tree, empty_tree};

/// `find <tree> -type f`, then reading every SKILL.md it listed: the least
/// any scan of the tree must do.
fn floor(tree: &Tree) -> Duration {
    let t = Instant::now();
    let out = Command::new("find")
        .arg(&tree.root)
        .args(["-type", "f"])
        .stderr(Stdio::inherit())
        .output()
        .expect("find runs");
    assert!(out.status.success(), "find failed on the tree");
    let listing = String::from_utf8(out.stdout).expect("find prints UTF-8 paths here");
    let mut mds = 0;
    let mut bytes = 0;
    let mut all = 0;
    for line in listing.lines() {
        all += 1;
        if line.ends_with("/SKILL.md") {
            bytes += fs::read(line).expect("read SKILL.md").len();
            mds += 1;
        }
    }
    let d = t.elapsed();
    assert_eq!(mds, tree.names.len(), "find saw every SKILL.md");
    assert_eq!(
        all, tree.files,
        "the tree holds exactly the generated files"
    );
    assert!(bytes > 0);
    d
}

/// The tree sizes the boot ratio to the floor is judged at.
const RATIO_JUDGED: &[usize] = &[1_000, 10_000];

/// The original serves at most this many skills (its own cap).
const PEER_MAX_SKILLS: usize = 32;

/// A server with no skills at all: what the binary, the tokio runtime and
/// rmcp hold before any catalog, to read the other RSS figures against.
pub fn empty(s: &Settings, t: &mut Table) {
    let root = empty_tree();
    let mut hwm = Vec::new();
    for _ in 0..s.boots.min(5) {
        let mut sv = Server::spawn(&root);
        sv.initialize();
        let (_, list) = sv.tool("skill_list", json!({}));
        assert_eq!(list_counts(&list), (0, 0), "the empty tree serves nothing");
        hwm.push(mib(sv.status_kib("VmHWM")));
    }
    let (lo, hi) = min_max(&hwm);
    t.add(
        "peak RSS (VmHWM), no skills: binary + runtime + rmcp",
        "0",
        median(&hwm),
        format!("{lo:.2}–{hi:.2}"),
        "MiB",
        Target::None,
    );
}

/// The original booted to its first `skill_list`: when that was answered
/// (ms from spawn) and node's peak RSS then (MiB).
fn peer_boot(p: &Peer, tree: &Tree) -> (f64, f64) {
    let mut sv = Server::spawn_node(&p.node, &p.script, &tree.root);
    sv.initialize();
    let (id, _) = sv.send("tools/call", json!({"name": "skill_list", "arguments": {}}));
    let (at, v) = sv.wait(id);
    let r = ok("skill_list (original)", v);
    assert_ne!(
        r["isError"],
        json!(true),
        "the original's skill_list failed: {r}"
    );
    // The original answers with one text block of JSON, no structuredContent.
    let text = r["content"][0]["text"].as_str().unwrap_or_default();
    let list: serde_json::Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("the original's skill_list is not JSON ({e}): {text:.200}"));
    let n = list["skills"].as_array().map_or(0, Vec::len);
    assert_eq!(
        n,
        tree.names.len().min(PEER_MAX_SKILLS),
        "the original serves its first 32 skills"
    );
    (ms(at - sv.spawned), mib(sv.status_kib("VmHWM")))
}

/// The ratios of this server to the original at one size, medians of
/// interleaved boots: boot → first skill_list, and peak RSS after it.
pub struct PeerRatios {
    pub boot: f64,
    pub rss: f64,
}

/// Boots, the floor, and RSS after boot, for one tree of `n` skills; with
/// `peer`, the original booted interleaved, and the ratios it returns.
pub fn boots(
    s: &Settings,
    tree: &Tree,
    n: usize,
    size: &str,
    t: &mut Table,
    peer: Option<&Peer>,
) -> Option<PeerRatios> {
    let judged = n == crate::TARGET_SKILLS;
    // Warm the cache and the binaries once, unmeasured.
    floor(tree);
    {
        let mut sv = Server::spawn(&tree.root);
        sv.initialize();
        sv.tool("skill_list", json!({}));
    }
    if let Some(p) = peer {
        peer_boot(p, tree);
    }
    let baseline = std::env::var_os("SKILL_MCP_BENCH_BASELINE").map(PathBuf::from);
    let base_boot = |bin: &Path| {
        let mut sv = Server::spawn_bin(bin, &tree.root);
        sv.initialize();
        let (id, _) = sv.send("tools/call", json!({"name": "skill_list", "arguments": {}}));
        let (at, v) = sv.wait(id);
        let (_, total) = list_counts(&ok("skill_list", v)["structuredContent"]);
        assert_eq!(
            total,
            tree.names.len(),
            "the baseline serves every skill too"
        );
        ms(at - sv.spawned)
    };
    if let Some(b) = &baseline {
        base_boot(b);
    }
    let mut base_first = Vec::new();
    let mut peer_first = Vec::new();
    let mut peer_hwm = Vec::new();
    let mut floors = Vec::new();
    let mut init = Vec::new();
    let mut first = Vec::new();
    let mut boot_hwm = Vec::new();
    let mut boot_rss = Vec::new();
    let mut hwm = Vec::new();
    let mut skx_cold = Vec::new();
    for _ in 0..s.boots {
        // The floor right before each boot, so the machine's drift (other
        // tenants, the page cache) meets both in the same seconds.
        floors.push(ms(floor(tree)));
        let mut sv = Server::spawn(&tree.root);
        let at = sv.initialize();
        init.push(ms(at - sv.spawned));
        // After boot alone (the scan is done before initialize is answered).
        boot_hwm.push(mib(sv.status_kib("VmHWM")));
        boot_rss.push(mib(sv.status_kib("VmRSS")));
        let (id, _) = sv.send("tools/call", json!({"name": "skill_list", "arguments": {}}));
        let (at, v) = sv.wait(id);
        first.push(ms(at - sv.spawned));
        let list = ok("skill_list", v);
        let (page, total) = list_counts(&list["structuredContent"]);
        assert_eq!(total, tree.names.len(), "every generated skill is listed");
        assert!(page > 0, "the first page holds skills");
        hwm.push(mib(sv.status_kib("VmHWM")));
        // SEP-2640 skills/list, first page, with nothing digested yet.
        let (d, r) = sv.call("skills/list", json!({}));
        assert!(r["skills"].as_array().is_some_and(|a| !a.is_empty()), "{r}");
        skx_cold.push(ms(d));
        drop(sv);
        // Interleaved, so drift in the machine's load hits every server.
        if let Some(b) = &baseline {
            base_first.push(base_boot(b));
        }
        if let Some(p) = peer {
            let (d, h) = peer_boot(p, tree);
            peer_first.push(d);
            peer_hwm.push(h);
        }
    }
    if let Some(b) = &baseline {
        t.ms(
            &format!("boot → first skill_list, baseline {}", b.display()),
            size,
            &base_first,
            Target::None,
        );
        t.add(
            "boot → first skill_list, this build ÷ baseline",
            size,
            median(&first) / median(&base_first),
            String::from("medians"),
            "×",
            Target::None,
        );
    }
    let fl = median(&floors);
    let boot = median(&first);
    t.ms(
        "floor: find -type f + read every SKILL.md",
        size,
        &floors,
        Target::None,
    );
    t.ms("boot → initialize answered", size, &init, Target::None);
    // Reported only: its "< 300 ms at 10,000 skills" was a time, which
    // another machine's floor alone exceeds (BENCHMARKS.md: 810 ms on
    // EPYC). Its verdict is the ratio to the floor in the next row.
    t.ms_noted(
        "boot → first skill_list page answered",
        size,
        &first,
        "reported only: judged ÷ the floor (next row)",
        Target::None,
    );
    // Each boot against the floor measured just before it.
    let ratios: Vec<f64> = first.iter().zip(&floors).map(|(b, f)| b / f).collect();
    let (lo, hi) = min_max(&ratios);
    t.add(
        "boot → first skill_list page ÷ floor",
        size,
        boot / fl,
        format!("{lo:.2}–{hi:.2}"),
        "×",
        if RATIO_JUDGED.contains(&n) {
            Target::RatioAtMost(1.0)
        } else {
            Target::None
        },
    );
    let (lo, hi) = min_max(&boot_hwm);
    t.add(
        "peak RSS (VmHWM) after boot alone",
        size,
        median(&boot_hwm),
        format!("{lo:.2}–{hi:.2}; VmRSS then {:.2}", median(&boot_rss)),
        "MiB",
        Target::None,
    );
    let (lo, hi) = min_max(&hwm);
    t.add(
        "peak RSS (VmHWM) after boot + first skill_list page",
        size,
        median(&hwm),
        format!("{lo:.2}–{hi:.2}"),
        "MiB",
        if judged {
            Target::MibAtMost(32.0)
        } else {
            Target::None
        },
    );
    t.ms(
        "skills/list first page, cold digests",
        size,
        &skx_cold,
        Target::None,
    );
    peer.map(|_| peer_rows(t, size, boot, median(&hwm), &peer_first, &peer_hwm))
}

/// The original's rows beside this server's medians, and the ratios.
fn peer_rows(
    t: &mut Table,
    size: &str,
    boot: f64,
    hwm: f64,
    peer_first: &[f64],
    peer_hwm: &[f64],
) -> PeerRatios {
    t.ms(
        "original (TypeScript, serves 32): boot → first skill_list",
        size,
        peer_first,
        Target::None,
    );
    let (lo, hi) = min_max(peer_hwm);
    t.add(
        "original: peak RSS (node VmHWM) after boot + skill_list",
        size,
        median(peer_hwm),
        format!("{lo:.2}–{hi:.2}"),
        "MiB",
        Target::None,
    );
    let r = PeerRatios {
        boot: boot / median(peer_first),
        rss: hwm / median(peer_hwm),
    };
    t.add(
        "this ÷ original: boot → first skill_list",
        size,
        r.boot,
        String::from("medians, interleaved boots"),
        "×",
        Target::None,
    );
    t.add(
        "this ÷ original: peak RSS after boot + first list",
        size,
        r.rss,
        String::from("medians"),
        "×",
        Target::None,
    );
    r
}
