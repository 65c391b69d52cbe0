//! The rescan phase: how long a SIGHUP takes to become a new snapshot,
//! with a probe skill added and removed so each rescan has a change to
//! find.

use std::fs;
use std::time::Instant;

use serde_json::json;

use crate::client::{Server, list_counts};
use crate::report::{Table, Target};
use crate::settings::Settings;
use crate::stats::ms;
use crate::tree::Tree;

/// A probe skill the rescan phase adds and removes; never part of a kept
/// tree (it is removed before the tree is measured and after each pair).
const PROBE: &str = "zz-rescan-probe";

/// Rescan time (issue "Reload"): a skill is added (then removed), SIGHUP
/// is sent, and the time runs until the server's
/// `notifications/prompts/list_changed` says the new snapshot is in: the
/// whole scan, the comparison with the old snapshot and the swap.
pub fn rescans(s: &Settings, tree: &Tree, size: &str, t: &mut Table) {
    let probe = tree.root.join(PROBE);
    let _ = fs::remove_dir_all(&probe);
    let mut sv = Server::spawn(&tree.root);
    sv.initialize();
    sv.tool("skill_list", json!({}));
    let pid = nix::unistd::Pid::from_raw(sv.server_pid() as i32);
    let hup = |sv: &mut Server| {
        let t0 = Instant::now();
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).expect("SIGHUP the server");
        ms(sv.wait_notification("notifications/prompts/list_changed") - t0)
    };
    let mut added = Vec::new();
    let mut removed = Vec::new();
    // One add/remove pair in --quick (each rescan of 10,000 skills is a
    // whole scan), up to five in a full run.
    let pairs = if s.quick { 1 } else { s.boots.min(5) };
    for _ in 0..pairs {
        fs::create_dir_all(&probe).expect("make the probe skill");
        fs::write(
            probe.join("SKILL.md"),
            "---\nname: zz-rescan-probe\ndescription: Added by the benchmark.\n---\nProbe.\n",
        )
        .expect("write the probe skill");
        added.push(hup(&mut sv));
        fs::remove_dir_all(&probe).expect("remove the probe skill");
        removed.push(hup(&mut sv));
    }
    let (_, list) = sv.tool("skill_list", json!({}));
    assert_eq!(
        list_counts(&list).1,
        tree.names.len(),
        "the probe is gone again"
    );
    assert_eq!(
        list["generation"].as_u64(),
        Some(1 + 2 * added.len() as u64),
        "every rescan was swapped in: {}",
        list["generation"]
    );
    let all: Vec<f64> = added.iter().chain(&removed).copied().collect();
    t.ms(
        "rescan: SIGHUP → list_changed (a skill added or removed)",
        size,
        &all,
        Target::None,
    );
    // Every trigger waits out the same trailing debounce before scanning
    // (src/reload.rs), so the rescan's own work is what is left over.
    let debounce = ms(skill_mcp::reload::DEBOUNCE);
    let work: Vec<f64> = all.iter().map(|x| x - debounce).collect();
    t.ms(
        &format!("  of which the rescan itself (less the {debounce:.0} ms debounce)"),
        size,
        &work,
        Target::None,
    );
}
