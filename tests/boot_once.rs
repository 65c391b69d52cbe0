//! DISC-016: the catalog is scanned once at boot, and nothing is written.

use crate::common;
use common::*;
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;

fn tree(dir: &Path) -> BTreeSet<(String, u64)> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            out.insert((e.path().display().to_string(), m.len()));
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    out
}

#[test]
fn a_skill_added_after_boot_is_not_listed_and_nothing_is_written() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "first");
    let home = tempfile::tempdir().unwrap();
    let before = (tree(root.path()), tree(home.path()));
    let dir = root.path().to_str().unwrap().to_owned();
    let mut s = Session::start(
        Path::new(BIN),
        &[
            ("SKILLS_DIR", &dir),
            ("HOME", home.path().to_str().unwrap()),
        ],
    );
    assert_eq!(names(&s.tool("skill_list", json!({}))), ["first"]);
    s.tool("skill_load", json!({"name": "first"}));
    let during = (tree(root.path()), tree(home.path()));
    assert_eq!(before, during, "the server wrote something");
    skill(root.path(), "second");
    assert_eq!(
        names(&s.tool("skill_list", json!({}))),
        ["first"],
        "the catalog changed after boot"
    );
    assert!(s.finish().success());
}
