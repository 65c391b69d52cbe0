//! CONF-005: an installed binary finds its bundled skills beside itself.

use crate::common;
use common::*;
use serde_json::json;

#[test]
fn an_installed_binary_serves_share_skill_mcp_skills() {
    let prefix = tempfile::tempdir().unwrap();
    let bin_dir = prefix.path().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let bin = bin_dir.join("skill-mcp");
    std::fs::copy(BIN, &bin).unwrap();
    let share = prefix.path().join("share/skill-mcp/skills");
    skill(&share, "installed-skill");

    let mut s = Session::start(&bin, &[]);
    let list = s.tool("skill_list", json!({}));
    assert_eq!(list["rootsFrom"], "default");
    assert_eq!(names(&list), ["installed-skill"]);
    assert!(
        list["roots"][0]
            .as_str()
            .unwrap()
            .ends_with("share/skill-mcp/skills"),
        "{list}"
    );
    s.finish();
}

#[test]
fn the_checkout_binary_serves_the_checkout_skills() {
    let mut s = Session::start(std::path::Path::new(BIN), &[]);
    let list = s.tool("skill_list", json!({}));
    assert_eq!(list["rootsFrom"], "default");
    assert!(
        names(&list).contains(&"skill-mcp-demo".to_owned()),
        "{list}"
    );
    assert_eq!(list["problems"], json!([]), "the bundled skill is clean");
    s.finish();
}

/// The default root can only be missing when the checkout the binary was
/// built from is gone, so this checks what an installed binary does with a
/// root it was pointed at that is not there (CONF-004): a problem naming
/// the root, and a working server.
#[test]
fn an_installed_binary_with_a_missing_root_reports_it_and_serves() {
    let prefix = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(prefix.path().join("bin")).unwrap();
    // share/ exists but holds a file where the skills directory should be.
    std::fs::create_dir_all(prefix.path().join("share/skill-mcp")).unwrap();
    let bin = prefix.path().join("bin/skill-mcp");
    std::fs::copy(BIN, &bin).unwrap();
    let mut s = Session::start(&bin, &[("SKILLS_DIR", "/definitely/not/here")]);
    let list = s.tool("skill_list", json!({}));
    assert_eq!(list["problems"][0]["reason"], "root-unreadable");
    assert_eq!(
        list["problems"][0]["path"], "/definitely/not/here",
        "{list}"
    );
    assert!(
        list["problems"][0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("could not be read")),
        "{list}"
    );
    assert_eq!(list["skills"], json!([]));
    s.finish();
}
