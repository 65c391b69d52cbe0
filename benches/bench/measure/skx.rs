//! The skills-ext phase: the MCP Skills extension's door side by side with
//! rmcp's own `SkillCatalog` over stdio (issue "The Skills extension at a
//! peer's speed", and issue 43's stdio targets). Both servers boot on the
//! same tree, interleaved, the first of a round alternating, and each round
//! measures, per server: boot → `initialize`, a full `skills/list` walk (all
//! pages), and spawn → the end of that first complete walk, a second walk
//! (nothing new to hash), peak RSS after them, then `skills/get` of
//! distinct skills, `resources/read` of one small file of distinct skills,
//! and `ping` (rmcp's own stdio transport is the peer's), `s.trips` of each.
//!
//! A round's figure is the median of its samples; a round's ratio is this
//! server's figure over rmcp's in the same round, and each ratio row is the
//! median over rounds of those ratios. From 1,000 skills up the issue-43
//! targets are judged — `skills/get` ≤ 1.0×, `resources/read` ≤ 1.0×, boot
//! → first complete walk ≤ 0.5×, peak RSS ≤ 0.25×, `ping` ≤ 1.3× — each
//! from at least five rounds (`--quick`'s three print the ratio with no
//! verdict). The walks on their own and boot → `initialize` are reported.
//!
//! A reply that is refused, missing or wrong (a walk that does not list
//! every skill, a read with no text) makes that round void, said so and
//! counted among the misses; it never stops the benchmark.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use crate::client::Server;
use crate::report::{MIN_PAIRS, Table};
use crate::settings::Settings;
use crate::stats::{median, mib, min_max, ms};
use crate::tree::Tree;

/// One figure of the phase: its name in the table, its unit, and issue
/// 43's target for the ratio (judged sizes only), if it names one.
struct Figure {
    what: &'static str,
    unit: &'static str,
    at_most: Option<f64>,
    /// A round's figure is the median of `s.trips` round trips.
    trips: bool,
}

/// The figures, in the table's order; a round gives one value of each, in
/// this order.
const FIGURES: [Figure; 8] = [
    Figure {
        what: "skills/get",
        unit: "ms",
        at_most: Some(1.0),
        trips: true,
    },
    Figure {
        what: "resources/read",
        unit: "ms",
        at_most: Some(1.0),
        trips: true,
    },
    Figure {
        what: "ping round trip",
        unit: "ms",
        at_most: Some(1.3),
        trips: true,
    },
    Figure {
        what: "boot → first complete skills/list walk",
        unit: "ms",
        at_most: Some(0.5),
        trips: false,
    },
    Figure {
        what: "peak RSS after the walks",
        unit: "MiB",
        at_most: Some(0.25),
        trips: false,
    },
    Figure {
        what: "skills/list walk, first",
        unit: "ms",
        at_most: None,
        trips: false,
    },
    Figure {
        what: "skills/list walk, second",
        unit: "ms",
        at_most: None,
        trips: false,
    },
    Figure {
        what: "boot → initialize",
        unit: "ms",
        at_most: None,
        trips: false,
    },
];

/// The names of `side_by_side`'s ratios, in order (the summary's line).
pub const RATIOS: [&str; 8] = [
    "skills/get",
    "resources/read",
    "ping",
    "boot → first walk",
    "peak RSS",
    "first walk",
    "second walk",
    "boot → initialize",
];

/// One round of one server: its figures in `FIGURES` order, and the
/// `skills/get` answer of the first sampled skill, to compare the two.
struct Round {
    figures: [f64; 8],
    first_get: Value,
}

/// Sizes at which the issue states its targets.
fn judged(n: usize) -> bool {
    n >= 1_000
}

/// A full skills/list walk through every nextCursor: its time in ms, or
/// why it is void (a refusal, or a walk that does not list every skill).
fn walk(sv: &mut Server, skills: usize) -> Result<f64, String> {
    let began = Instant::now();
    let (seen, _) = sv.try_walk("skills/list", "skills")?;
    let d = ms(began.elapsed());
    if seen != skills {
        return Err(format!(
            "a skills/list walk listed {seen} of {skills} skills"
        ));
    }
    Ok(d)
}

/// The median round trip of `s.trips` calls of `method`, the params of the
/// k-th from `params(k)`, each answer checked by `check`; the first answer.
fn trips(
    s: &Settings,
    sv: &mut Server,
    method: &str,
    params: impl Fn(usize) -> Value,
    check: impl Fn(&Value) -> bool,
) -> Result<(f64, Value), String> {
    let mut samples = Vec::with_capacity(s.trips);
    let mut first = Value::Null;
    for k in 0..s.trips {
        let p = params(k);
        let (d, r) = sv.try_call(method, p.clone())?;
        if !check(&r) {
            let r = r.to_string();
            return Err(format!(
                "{method} {p} answered {}",
                r.chars().take(300).collect::<String>()
            ));
        }
        if k == 0 {
            first = r;
        }
        samples.push(ms(d));
    }
    Ok((median(&samples), first))
}

/// Boots `bin` on the tree and measures one round, or says why it is void.
fn round(s: &Settings, bin: &Path, tree: &Tree) -> Result<Round, String> {
    let mut sv = Server::spawn_bin(bin, &tree.root);
    let (at, _) = sv.try_initialize_any()?;
    let boot = ms(at - sv.spawned);
    let n = tree.names.len();
    let first = walk(&mut sv, n)?;
    let boot_walk = ms(sv.spawned.elapsed());
    let second = walk(&mut sv, n)?;
    let hwm = mib(sv.status_kib("VmHWM"));
    let pick = |k: usize| &tree.names[(k * 7919 + 1) % n];
    let (get, first_get) = trips(
        s,
        &mut sv,
        "skills/get",
        |k| json!({"uri": format!("skill://{}/SKILL.md", pick(k))}),
        |r| r.get("skill").is_some(),
    )?;
    let (read, _) = trips(
        s,
        &mut sv,
        "resources/read",
        |k| json!({"uri": format!("skill://{}/references/guide.md", pick(k + s.trips))}),
        |r| r["contents"][0]["text"].is_string(),
    )?;
    let (ping, _) = trips(s, &mut sv, "ping", |_| json!({}), Value::is_object)?;
    Ok(Round {
        figures: [get, read, ping, boot_walk, hwm, first, second, boot],
        first_get,
    })
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

/// One row per server (the median over rounds of its per-round figures),
/// then the ratio (the median of per-round ratios) with its verdict.
fn rows(
    t: &mut Table,
    size: &str,
    f: &Figure,
    ours: &[f64],
    peer: &[f64],
    judged: bool,
    trips: usize,
) -> f64 {
    let each = if f.trips {
        format!(", each the median of {trips}")
    } else {
        String::new()
    };
    let spread = |v: &[f64]| {
        let (lo, hi) = min_max(v);
        format!("{lo:.2}–{hi:.2} (n={} rounds{each})", v.len())
    };
    for (who, v) in [("this server", ours), ("rmcp SkillCatalog", peer)] {
        t.add(
            &format!("{}, {who}", f.what),
            size,
            median(v),
            spread(v),
            f.unit,
            crate::report::Target::None,
        );
    }
    let ratios: Vec<f64> = ours.iter().zip(peer).map(|(a, b)| a / b).collect();
    t.pair_ratio(
        &format!("{}, this ÷ rmcp", f.what),
        size,
        &ratios,
        "",
        f.at_most.filter(|_| judged),
    )
}

/// The phase at one tree size; returns the ratios, in the order of
/// `RATIOS` (none when every round was void).
pub fn side_by_side(
    s: &Settings,
    server: &Path,
    peer: &Path,
    tree: &Tree,
    size: &str,
    t: &mut Table,
) -> Option<[f64; 8]> {
    let n = tree.names.len();
    let mut rounds = if n >= 10_000 {
        s.boots.min(5)
    } else {
        s.boots.min(7)
    };
    // A verdict needs MIN_PAIRS rounds; a full run gives them at every size.
    if !s.quick {
        rounds = rounds.max(MIN_PAIRS);
    }
    let (mut a, mut b): (Vec<[f64; 8]>, Vec<[f64; 8]>) = (Vec::new(), Vec::new());
    let mut checked = false;
    let mut void = 0;
    for i in 0..rounds {
        // Interleaved, and the first server alternates, so neither always
        // meets the page cache the other left.
        let (ra, rb) = if i % 2 == 0 {
            let ra = round(s, server, tree);
            (ra, round(s, peer, tree))
        } else {
            let rb = round(s, peer, tree);
            (round(s, server, tree), rb)
        };
        let (ra, rb) = match (ra, rb) {
            (Ok(ra), Ok(rb)) => (ra, rb),
            (ra, rb) => {
                let why = [("this server", ra.err()), ("rmcp", rb.err())]
                    .into_iter()
                    .filter_map(|(who, e)| e.map(|e| format!("{who}: {e}")))
                    .collect::<Vec<_>>()
                    .join("; ");
                println!("skills-ext at {size}: round {}: void ({why})", i + 1);
                void += 1;
                continue;
            }
        };
        if !checked {
            checked = true;
            let (da, db) = (digests(&ra.first_get), digests(&rb.first_get));
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
        a.push(ra.figures);
        b.push(rb.figures);
    }
    if void > 0 {
        t.misses.push(format!(
            "skills-ext at {size}: {void} of {rounds} rounds void (a bad reply)"
        ));
    }
    if a.is_empty() {
        return None;
    }
    let mut out = [0.0; 8];
    for (i, f) in FIGURES.iter().enumerate() {
        let col = |v: &[[f64; 8]]| v.iter().map(|r| r[i]).collect::<Vec<_>>();
        out[i] = rows(t, size, f, &col(&a), &col(&b), judged(n), s.trips);
    }
    Some(out)
}
