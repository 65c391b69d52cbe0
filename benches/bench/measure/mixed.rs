//! The mixed phase: many mixed calls, four in flight, on one server, with
//! RSS and open descriptors sampled along the way, to show memory stays
//! flat and nothing leaks.

use std::time::Duration;

use serde_json::json;

use crate::client::{Server, ok};
use crate::report::{Table, Target, fmt_count};
use crate::rng::Rng;
use crate::settings::Settings;
use crate::stats::{mib, ms};
use crate::tree::{Tree, bundle_files, description_word};

/// What the soak saw: VmRSS (MiB) by call count, and the peak (VmHWM).
#[derive(Default)]
pub struct Soak {
    pub samples: Vec<(usize, f64)>,
    pub peak: f64,
}

/// RSS across many mixed calls on one server: after boot, after the first
/// tenth of the calls (warm), at the end, and the peak.
pub fn flat(s: &Settings, tree: &Tree, size: &str, t: &mut Table, judged: bool) -> Soak {
    let mut sv = Server::spawn(&tree.root);
    sv.initialize();
    let (_, first) = sv.tool("skill_list", json!({}));
    // Cursors the server handed out, for continuations: the first page's,
    // then each continuation's, so the soak reads deeper into the listing.
    let mut cursors: Vec<String> = first["nextCursor"]
        .as_str()
        .map(str::to_owned)
        .into_iter()
        .collect();
    let start = mib(sv.status_kib("VmRSS"));
    let fds_start = sv.fd_count();
    let paths: Vec<String> = bundle_files()
        .iter()
        .map(|(p, _)| (*p).to_owned())
        .collect();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let names = &tree.names;
    let mut samples = vec![(0usize, start)];
    let warm_at = s.mixed_calls / 10;
    let mut warm = start;
    let mut runs = 0;
    let mut done = 0;
    let mut per_kind: std::collections::BTreeMap<&str, (usize, Duration)> = Default::default();
    while done < s.mixed_calls {
        // Four requests in flight at a time, answered in any order, except
        // a confirmed run, which goes alone (one run at a time).
        let mut ids = Vec::new();
        for _ in 0..4 {
            if done + ids.len() == s.mixed_calls {
                break;
            }
            let nm = names[rng.below(names.len())].clone();
            let p = paths[rng.below(paths.len())].clone();
            let roll = rng.below(100);
            let (kind, method, params) = match roll {
                0..20 => (
                    "skill_load",
                    "tools/call",
                    json!({"name": "skill_load", "arguments": {"name": nm}}),
                ),
                20..45 => (
                    "skill_file (one)",
                    "tools/call",
                    json!({"name": "skill_file", "arguments": {"name": nm, "path": p}}),
                ),
                45..55 => (
                    "skill_file (batch of 8)",
                    "tools/call",
                    json!({"name": "skill_file", "arguments": {"name": nm, "paths": paths[..8]}}),
                ),
                55..65 => {
                    let page = rng.below(tree.files.div_ceil(500));
                    let params = if page == 0 {
                        json!({})
                    } else {
                        json!({"cursor": (page * 500).to_string()})
                    };
                    ("resources/list (a page)", "resources/list", params)
                }
                65..70 => (
                    "resources/read",
                    "resources/read",
                    json!({"uri": format!("skill://{nm}/{p}")}),
                ),
                70..75 => ("prompts/get", "prompts/get", json!({"name": nm})),
                75..85 => (
                    "skills/get",
                    "skills/get",
                    json!({"uri": format!("skill://{nm}/SKILL.md")}),
                ),
                85..95 => (
                    "skill_run preview",
                    "tools/call",
                    json!({"name": "skill_run", "arguments": {"name": nm, "script": "scripts/build.js", "args": ["x"]}}),
                ),
                95 => (
                    "skill_list first page",
                    "tools/call",
                    json!({"name": "skill_list", "arguments": {}}),
                ),
                96 | 97 if !cursors.is_empty() => (
                    "skill_list cursor",
                    "tools/call",
                    json!({"name": "skill_list", "arguments": {"cursor": cursors[rng.below(cursors.len())]}}),
                ),
                96..99 => (
                    "skill_list query",
                    "tools/call",
                    json!({"name": "skill_list", "arguments": {"query": description_word(&nm)}}),
                ),
                _ if ids.is_empty() => {
                    runs += 1;
                    (
                        "skill_run confirm: true",
                        "tools/call",
                        json!({"name": "skill_run", "arguments": {"name": nm, "script": "scripts/noop.js", "confirm": true}}),
                    )
                }
                _ => ("prompts/list", "prompts/list", json!({})),
            };
            let alone = kind == "skill_run confirm: true";
            let (id, sent) = sv.send(method, params);
            ids.push((kind, method, id, sent));
            if alone {
                break;
            }
        }
        // Collect in reverse, so replies arriving first wait in `early`.
        for (kind, method, id, sent) in ids.into_iter().rev() {
            let (at, v) = sv.wait(id);
            let r = ok(method, v);
            assert_ne!(r["isError"], json!(true), "{method} failed: {r}");
            if kind.starts_with("skill_list")
                && let Some(c) = r["structuredContent"]["nextCursor"].as_str()
                && !cursors.iter().any(|k| k == c)
            {
                cursors.push(c.to_owned());
            }
            let e = per_kind.entry(kind).or_default();
            e.0 += 1;
            e.1 += at - sent;
            done += 1;
            if done.is_multiple_of(s.mixed_calls / 10) {
                let rss = mib(sv.status_kib("VmRSS"));
                samples.push((done, rss));
                if done == warm_at {
                    warm = rss;
                }
            }
        }
    }
    let mix: Vec<String> = per_kind
        .iter()
        .map(|(k, (n, d))| format!("{k} ×{n} (mean {:.2} ms)", ms(*d) / *n as f64))
        .collect();
    println!(
        "mixed calls at {size} skills, 4 in flight: {}",
        mix.join(", ")
    );
    let end = mib(sv.status_kib("VmRSS"));
    let peak = mib(sv.status_kib("VmHWM"));
    let fds_end = sv.fd_count();
    let calls = fmt_count(s.mixed_calls);
    t.add(
        &format!("open fds, after boot → after {calls} mixed calls (no leak: growth 0)"),
        size,
        fds_end as f64 - fds_start as f64,
        format!("{fds_start} → {fds_end}"),
        "fds",
        if judged {
            Target::CountAtMost(0.0)
        } else {
            Target::None
        },
    );
    t.note(
        &format!("RSS across {calls} mixed calls ({runs} real runs): start / end / peak"),
        size,
        format!("{start:.2} / {end:.2} / {peak:.2} MiB"),
        String::from("start = after boot + first skill_list page"),
    );
    t.add(
        &format!("RSS growth across the {calls} calls (start → end)"),
        size,
        end - start,
        format!("{start:.2} → {end:.2} MiB"),
        "MiB",
        if judged {
            Target::MibAtMost(4.0)
        } else {
            Target::None
        },
    );
    t.add(
        &format!("  of which call {} → {calls} (warm)", fmt_count(warm_at)),
        size,
        end - warm,
        format!("{warm:.2} → {end:.2} MiB"),
        "MiB",
        Target::None,
    );
    t.add(
        &format!("peak RSS (VmHWM) across the {calls} calls"),
        size,
        peak,
        String::new(),
        "MiB",
        if judged {
            Target::MibAtMost(64.0)
        } else {
            Target::None
        },
    );
    Soak { samples, peak }
}
