//! A skill author's frontmatter keys (FM-007), through the built binary:
//! a key that is not a string or looks like a known one is named and
//! placed, and a long one costs the scan no more than its bytes.

use crate::common;
use common::*;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Finding 5 (FM-007, the did-you-mean of an unknown key). A key is
/// compared with each known key by edit distance over its whole length,
/// although a key more than 3 characters longer than every known key can
/// never be within the distance that is kept. YAML's explicit `? KEY` form
/// lets a key take the whole 64 KiB frontmatter: each such SKILL.md costs
/// about 40 times the scan of one of the same size, at every boot and
/// reload — a hostile author slows the catalog's start.
///
/// Issues 27 and 30: found by an outside attack; it failed on the finding it is named after.
#[test]
fn a_long_unknown_key_costs_the_scan_no_more_than_its_bytes() {
    let hostile = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    let long = format!("descriptio{}", "n".repeat(64_000));
    for i in 0..24 {
        let name = format!("s{i}");
        for (root, fm) in [
            (hostile.path(), format!("? {long}\n: x")),
            (plain.path(), format!("metadata:\n  k: {long}")),
        ] {
            std::fs::create_dir_all(root.join(&name)).unwrap();
            std::fs::write(
                root.join(&name).join("SKILL.md"),
                format!("---\nname: {name}\ndescription: d\n{fm}\n---\nbody\n"),
            )
            .unwrap();
        }
    }
    let served = |root: &Path| {
        let t = Instant::now();
        let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", root.to_str().unwrap())]);
        let list = s.tool("skill_list", json!({"limit": 1}));
        assert_eq!(list["total"], json!(24), "{list}");
        t.elapsed()
    };
    let (p, h) = (served(plain.path()), served(hostile.path()));
    eprintln!("24 SKILL.md of 64 KB: served in {p:?} as metadata, {h:?} as an unknown key");
    // The cost is the behaviour under test, so it is bounded, generously
    // (spec README, "Timing in tests"): the unknown keys are served in
    // about 0.45 s (five times the metadata's 0.08 s), and the quadratic
    // did-you-mean took 13–15 s. The bound, 3.4 s here, is over seven
    // times the one and a quarter of the other, and grows with the
    // machine's pace as the plain tree measures it.
    assert!(
        h < p * 5 + Duration::from_secs(3),
        "24 SKILL.md with a 64 KB unknown key took {h:?} to serve, the same bytes as metadata {p:?}"
    );
}

mod odd_frontmatter_keys_are_named {
    //! Newcomer attack (issue 30 §3, FM-007, CHECK-018): a skill author's odd
    //! top-level keys. FM-007: "Any other top-level key, a key that is not a
    //! string included, gives an `unknown-key` problem naming it, placed at
    //! its value". A key that is not a string (`1:`, `true:`, `~:`, `? [a, b]`)
    //! is reported by an anonymous message with no line: four identical
    //! warnings, and the author cannot tell which key. And a key spelt with a
    //! lookalike letter (Cyrillic `а` in `nаme`) is told `did you mean
    //! "name"?` in a message that shows the two as the same word.

    use std::path::Path;
    use std::process::Command;

    use serde_json::Value;

    const BIN: &str = env!("CARGO_BIN_EXE_skill-mcp");

    fn check_json(root: &Path) -> Value {
        let out = Command::new(BIN)
            .env_clear()
            .args(["check", "--format", "json"])
            .arg(root)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn unknown_keys(report: &Value) -> Vec<Value> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "unknown-key")
            .cloned()
            .collect()
    }

    /// `check`'s unknown-key findings for one skill `name` whose SKILL.md
    /// is `md`.
    fn unknown_keys_of(name: &str, md: &str) -> Vec<Value> {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), md).unwrap();
        unknown_keys(&check_json(tmp.path()))
    }

    #[test]
    fn a_key_that_is_not_a_string_is_named_and_placed() {
        let found = unknown_keys_of(
            "nonstr",
            "---\nname: nonstr\ndescription: d\n1: x\ntrue: y\n---\nbody\n",
        );
        assert_eq!(found.len(), 2, "{found:?}");
        // Placed: line 4 for `1`, line 5 for `true`.
        let lines: Vec<&Value> = found.iter().map(|f| &f["line"]).collect();
        assert_eq!(lines, [4, 5], "{found:?}");
        // Named: the message says which key.
        assert!(
            found[0]["message"].as_str().unwrap().contains('1'),
            "{found:?}"
        );
        assert!(
            found[1]["message"].as_str().unwrap().contains("true"),
            "{found:?}"
        );
        assert_ne!(found[0]["message"], found[1]["message"], "{found:?}");
    }

    #[test]
    fn a_lookalike_key_says_which_letter_is_not_the_one_it_looks_like() {
        // `nаme` with U+0430 CYRILLIC SMALL LETTER A.
        let found = unknown_keys_of(
            "lookalike",
            "---\nn\u{430}me: lookalike\ndescription: d\n---\nbody\n",
        );
        assert_eq!(found.len(), 1, "{found:?}");
        let message = found[0]["message"].as_str().unwrap();
        assert!(message.contains("did you mean \"name\""), "{message}");
        // Shown as `"nаme" … did you mean "name"?`, the two look the same; the
        // message must point at the letter that differs.
        assert!(
            message.contains("U+0430") || message.contains("\\u{430}"),
            "the message does not say which letter is not ASCII: {message}"
        );
    }
}
