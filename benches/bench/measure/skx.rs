//! The skills-ext phase: the MCP Skills extension's door side by side with
//! rmcp's own `SkillCatalog` (issue "The Skills extension at a peer's
//! speed"). Both servers boot on the same tree, interleaved, and each round
//! measures, per server: boot → `initialize`, a full `skills/list` walk (all
//! pages), a second walk (nothing new to hash), peak RSS after them, then
//! `skills/get` of distinct skills and `resources/read` of one small file of
//! distinct skills. Each figure is the median over rounds (round trips: over
//! every sample of every round); the ratios are this server's median over
//! rmcp's, and at 1,000 and 10,000 skills they are judged against the
//! issue's targets.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use crate::client::Server;
use crate::report::{Table, Target};
use crate::settings::Settings;
use crate::stats::{median, mib, min_max, ms};
use crate::tree::Tree;

/// One server's figures over the rounds.
#[derive(Default)]
struct Side {
    boot: Vec<f64>,
    walk: Vec<f64>,
    rewalk: Vec<f64>,
    hwm: Vec<f64>,
    get: Vec<f64>,
    read: Vec<f64>,
}

/// Sizes at which the issue states its targets.
fn judged(n: usize) -> bool {
    n >= 1_000
}

/// A full skills/list walk through every nextCursor: its time in ms and
/// how many skills it held.
fn walk(sv: &mut Server) -> (f64, usize) {
    let began = Instant::now();
    let (seen, _) = sv.walk("skills/list", "skills");
    (ms(began.elapsed()), seen)
}

/// Boots `bin` on the tree and measures one round into `side`; returns the
/// `skills/get` answer of the first sampled skill, to compare the two.
fn round(s: &Settings, bin: &Path, tree: &Tree, side: &mut Side, ours: bool) -> Value {
    let mut sv = Server::spawn_bin(bin, &tree.root);
    let at = if ours {
        sv.initialize()
    } else {
        sv.initialize_any()
    };
    side.boot.push(ms(at - sv.spawned));
    let (d, seen) = walk(&mut sv);
    assert_eq!(
        seen,
        tree.names.len(),
        "{} lists every skill",
        bin.display()
    );
    side.walk.push(d);
    let (d, _) = walk(&mut sv);
    side.rewalk.push(d);
    side.hwm.push(mib(sv.status_kib("VmHWM")));
    let pick = |k: usize| &tree.names[(k * 7919 + 1) % tree.names.len()];
    let mut first = Value::Null;
    for k in 0..s.trips {
        let (d, r) = sv.call(
            "skills/get",
            json!({"uri": format!("skill://{}/SKILL.md", pick(k))}),
        );
        if k == 0 {
            first = r;
        }
        side.get.push(ms(d));
    }
    for k in 0..s.trips {
        let uri = format!("skill://{}/references/guide.md", pick(k + s.trips));
        let (d, r) = sv.call("resources/read", json!({"uri": uri}));
        assert!(r["contents"][0]["text"].is_string(), "{uri}: {r}");
        side.read.push(ms(d));
    }
    first
}

/// The manifests' (path, digest) pairs of a skills/get answer, sorted, so
/// the two servers' answers compare whatever else their shapes carry.
fn digests(r: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = r["skill"]["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("uri"), s("digest"))
        })
        .collect();
    v.sort();
    v
}

/// One row per figure and server, then the ratio with its verdict.
fn rows(
    t: &mut Table,
    size: &str,
    what: &str,
    ours: &[f64],
    peer: &[f64],
    unit: &str,
    target: Option<f64>,
) -> f64 {
    let spread = |v: &[f64]| {
        let (lo, hi) = min_max(v);
        format!("{lo:.2}–{hi:.2} (n={})", v.len())
    };
    t.add(
        &format!("{what}, this server"),
        size,
        median(ours),
        spread(ours),
        unit,
        Target::None,
    );
    t.add(
        &format!("{what}, rmcp SkillCatalog"),
        size,
        median(peer),
        spread(peer),
        unit,
        Target::None,
    );
    let r = median(ours) / median(peer);
    let tgt = target.map_or(Target::None, Target::RatioAtMost);
    t.add(
        &format!("{what}, this ÷ rmcp"),
        size,
        r,
        String::new(),
        "×",
        tgt,
    );
    r
}

/// The phase at one tree size; returns the five ratios and boot's, in
/// the order of `RATIOS`.
pub fn side_by_side(
    s: &Settings,
    server: &Path,
    peer: &Path,
    tree: &Tree,
    size: &str,
    t: &mut Table,
) -> [f64; 6] {
    let n = tree.names.len();
    let rounds = if n >= 10_000 {
        s.boots.min(5)
    } else {
        s.boots.min(7)
    };
    let (mut a, mut b) = (Side::default(), Side::default());
    let mut checked = false;
    for i in 0..rounds {
        // Interleaved, and the first server alternates, so neither always
        // meets the page cache the other left.
        let (ra, rb) = if i % 2 == 0 {
            let ra = round(s, server, tree, &mut a, true);
            (ra, round(s, peer, tree, &mut b, false))
        } else {
            let rb = round(s, peer, tree, &mut b, false);
            (round(s, server, tree, &mut a, true), rb)
        };
        if !checked {
            checked = true;
            let (da, db) = (digests(&ra), digests(&rb));
            if da == db && !da.is_empty() {
                eprintln!(
                    "  {size}: both servers give the same {} URIs and digests for the sampled skill",
                    da.len()
                );
            } else {
                eprintln!(
                    "  {size}: the two skills/get answers differ for the sampled skill:\n    ours {da:?}\n    rmcp {db:?}"
                );
            }
        }
    }
    let j = |x: f64| judged(n).then_some(x);
    [
        rows(t, size, "skills/get", &a.get, &b.get, "ms", j(1.0)),
        rows(t, size, "resources/read", &a.read, &b.read, "ms", j(1.5)),
        rows(
            t,
            size,
            "skills/list walk, first",
            &a.walk,
            &b.walk,
            "ms",
            j(0.5),
        ),
        rows(
            t,
            size,
            "skills/list walk, second",
            &a.rewalk,
            &b.rewalk,
            "ms",
            j(0.25),
        ),
        rows(t, size, "boot → initialize", &a.boot, &b.boot, "ms", j(0.2)),
        rows(
            t,
            size,
            "peak RSS after the walks",
            &a.hwm,
            &b.hwm,
            "MiB",
            j(0.2),
        ),
    ]
}

/// The names of `side_by_side`'s ratios, in order.
pub const RATIOS: [&str; 6] = [
    "skills/get",
    "resources/read",
    "skills/list walk",
    "second walk",
    "boot",
    "peak RSS",
];
