//! The trips phase: round trips of each tool and list method on one booted
//! server, full walks of the paginated lists, reply sizes, and peak RSS
//! after them all.

use std::time::Instant;

use serde_json::json;

use crate::client::Server;
use crate::report::{Table, Target, fmt_count};
use crate::settings::Settings;
use crate::stats::{mib, ms};
use crate::tree::{BIG_FILE, ONE_MIB, Tree, big_skill, bundle_files};

/// Round trips on one server after boot.
pub fn trips(s: &Settings, tree: &Tree, size: &str, t: &mut Table, judged: bool) {
    let mut sv = Server::spawn(&tree.root);
    sv.initialize();
    sv.tool("skill_list", json!({}));
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

    let list: Vec<f64> = (0..n)
        .map(|_| ms(sv.tool("skill_list", json!({})).0))
        .collect();
    let list_bytes = sv.last_len;
    t.ms(
        "skill_list round trip",
        size,
        &list,
        if judged {
            Target::MsUnder(20.0)
        } else {
            Target::None
        },
    );
    t.note(
        "  skill_list reply size",
        size,
        format!("{:.2} MiB", list_bytes as f64 / (1024.0 * 1024.0)),
        format!("{} bytes/skill", list_bytes / tree.names.len()),
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
}
