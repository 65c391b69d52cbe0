//! The JSON shapes of skill_list and skill_load, pinned with insta (issue
//! "Foundation": "insta for the JSON shapes"), and skill_load's body
//! checked byte for byte for any body proptest makes.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use skill_mcp::config::Config;
use skill_mcp::snapshot::Snapshot;

fn served(root: &Path) -> Snapshot {
    let mut env = BTreeMap::new();
    env.insert(OsString::from("SKILLS_DIR"), root.as_os_str().to_owned());
    env.insert(
        OsString::from("PATH"),
        std::env::var_os("PATH").unwrap_or_default(),
    );
    Snapshot::boot(Config::from_env(
        env,
        Path::new("/"),
        PathBuf::from("/nowhere"),
    ))
}

/// The JSON with the temporary root and the scan time made stable.
fn stable(v: serde_json::Value, root: &Path) -> serde_json::Value {
    let text = v.to_string().replace(&root.display().to_string(), "[ROOT]");
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    if v.get("scannedAt").is_some() {
        v["scannedAt"] = "[TIME]".into();
    }
    v
}

#[test]
fn skill_list_and_skill_load_shapes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let s = root.join("weather");
    std::fs::create_dir_all(s.join("scripts")).unwrap();
    std::fs::write(
        s.join("SKILL.md"),
        "---\nname: weather\ndescription: Forecasts.\nwhen-to-use: When it rains.\nmcp-host:\n  version: 1\n  run:\n    - script: scripts/f.js\n      interpreter: node\n      env: [KEY]\n      timeout: 30\n    - script: scripts/p.py\n      interpreter: python3\n  egress: [api.example]\n---\n# Weather\n",
    )
    .unwrap();
    std::fs::write(s.join("scripts/f.js"), "1").unwrap();
    std::fs::write(s.join("scripts/p.py"), "1").unwrap();
    std::fs::create_dir_all(root.join("broken")).unwrap();
    std::fs::write(root.join("broken/SKILL.md"), "---\nname: [\n---\n").unwrap();
    let srv = served(&root);
    insta::assert_json_snapshot!(
        "skill_list",
        stable(serde_json::to_value(srv.list()).unwrap(), &root)
    );
    insta::assert_json_snapshot!(
        "skill_load",
        stable(
            serde_json::to_value(srv.load("weather").unwrap()).unwrap(),
            &root
        )
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// LOAD-001: any body (CRLF, BOM, unicode, `---` lines) survives
    /// skill_load byte for byte.
    #[test]
    fn any_body_survives_skill_load(body in "(\\PC|\r|\n|\t|---\n|\u{feff})*", crlf in any::<bool>()) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("r");
        std::fs::create_dir_all(root.join("s")).unwrap();
        let nl = if crlf { "\r\n" } else { "\n" };
        std::fs::write(root.join("s/SKILL.md"), format!("---{nl}name: s{nl}description: d{nl}---{nl}{body}")).unwrap();
        let srv = served(&root);
        let loaded = srv.load("s").map_err(TestCaseError::fail)?;
        prop_assert_eq!(loaded.body, body);
    }
}
