//! The spec ↔ fixture ↔ transcript sync (spec/README.md): every
//! requirement has a conformance case with a golden, or names a test that
//! exists; every case belongs to a requirement; IDs are unique.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[derive(Debug, Default)]
struct Req {
    file: String,
    case: Option<String>,
    test: Option<String>,
    /// `Profile: core …` or `Profile: full …` (SUITE-006).
    profile: Option<String>,
    source: bool,
    rule: bool,
}

fn is_id(s: &str) -> bool {
    let Some((area, num)) = s.split_once('-') else {
        return false;
    };
    !area.is_empty()
        && area.bytes().all(|b| b.is_ascii_uppercase())
        && num.len() == 3
        && num.bytes().all(|b| b.is_ascii_digit())
}

fn requirements() -> BTreeMap<String, Req> {
    let mut reqs = BTreeMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("spec"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "md")
                && !["README.md", "coverage.md", "design-of-record.md"]
                    .iter()
                    .any(|n| p.ends_with(n))
        })
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let mut current: Option<String> = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("### ") {
                let id = rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                assert!(
                    is_id(&id),
                    "{name}: heading {line:?} does not start with an ID"
                );
                assert!(!reqs.contains_key(&id), "{id} is defined twice");
                reqs.insert(
                    id.clone(),
                    Req {
                        file: name.clone(),
                        ..Req::default()
                    },
                );
                current = Some(id);
                continue;
            }
            let Some(id) = &current else { continue };
            let r = reqs.get_mut(id).unwrap();
            if let Some(rest) = line.strip_prefix("Case: ") {
                let target = rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .trim_end_matches(['.', ',', ';']);
                r.case = target.strip_prefix("conformance/").map(str::to_owned);
                assert!(
                    r.case.is_some(),
                    "{id}: Case must name conformance/<ID>, got {rest:?}"
                );
            } else if let Some(rest) = line.strip_prefix("Test: ") {
                r.test = Some(
                    rest.split(" — ")
                        .next()
                        .unwrap_or_default()
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                );
            } else if let Some(rest) = line.strip_prefix("Profile: ") {
                r.profile = rest.split_whitespace().next().map(str::to_owned);
            } else if line.starts_with("Source: ") {
                r.source = true;
            } else if line.starts_with("Rule: ") {
                r.rule = true;
            }
        }
    }
    reqs
}

fn cases() -> BTreeSet<String> {
    std::fs::read_dir(Path::new(ROOT).join("conformance"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // `runner/` (the runner's crate) and `deviations/` are tooling, as
        // the runner itself reads them: not cases.
        .filter(|n| !n.starts_with(|c: char| c.is_ascii_lowercase()))
        .collect()
}

#[test]
fn every_requirement_has_a_case_or_a_named_test() {
    let reqs = requirements();
    assert!(reqs.len() > 40, "only {} requirements parsed", reqs.len());
    let cases = cases();
    let mut missing = Vec::new();
    for (id, r) in &reqs {
        assert!(
            r.source && r.rule,
            "{id} ({}) lacks a Source: or Rule: line",
            r.file
        );
        match (&r.case, &r.test) {
            (Some(c), _) => {
                if !cases.contains(c) {
                    missing.push(format!("{id}: no conformance/{c}"));
                } else if !Path::new(ROOT)
                    .join("conformance")
                    .join(c)
                    .join("golden.json")
                    .exists()
                {
                    missing.push(format!(
                        "{id}: conformance/{c} has no golden.json (record it with --bless)"
                    ));
                }
            }
            (None, Some(t)) => {
                if !Path::new(ROOT).join(t).exists() {
                    missing.push(format!("{id}: its test {t} does not exist"));
                }
            }
            (None, None) => missing.push(format!("{id}: neither a Case: nor a Test: line")),
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn every_case_belongs_to_a_requirement_of_its_own_id() {
    let reqs = requirements();
    for c in cases() {
        assert!(
            reqs.contains_key(&c),
            "conformance/{c} has no requirement in spec/"
        );
        assert_eq!(
            reqs[&c].case.as_deref(),
            Some(c.as_str()),
            "{c}'s requirement does not name conformance/{c} as its case"
        );
        let text = std::fs::read_to_string(
            Path::new(ROOT)
                .join("conformance")
                .join(&c)
                .join("case.json"),
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["id"],
            c.as_str(),
            "conformance/{c}/case.json has another id"
        );
    }
}

/// Collapses runs of whitespace, so a fragment matches across line breaks.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The design of record's sections: (title, text), the intro under its `#` title.
fn design_sections() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("spec/design-of-record.md")).unwrap();
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let heading = line
            .strip_prefix("### ")
            .or_else(|| line.strip_prefix("## "))
            .or_else(|| line.strip_prefix("# "));
        match heading {
            Some(h) => out.push((h.trim().to_owned(), String::new())),
            None => {
                if let Some(last) = out.last_mut() {
                    last.1.push_str(line);
                    last.1.push('\n');
                }
            }
        }
    }
    out
}

#[test]
fn every_sentence_of_the_design_of_record_maps_to_requirements() {
    let reqs = requirements();
    let sections = design_sections();
    assert!(
        sections.len() >= 12,
        "the design of record lost its sections"
    );
    let table = std::fs::read_to_string(Path::new(ROOT).join("spec/coverage.md")).unwrap();
    let mut covered: BTreeSet<String> = BTreeSet::new();
    let mut errors = Vec::new();
    for line in table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| section") && !l.starts_with("| ---"))
    {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let [section, fragment, ids, why] = cells[..] else {
            errors.push(format!("malformed row: {line}"));
            continue;
        };
        let title = section.replace('`', "");
        let Some((_, body)) = sections.iter().find(|(t, _)| t.replace('`', "") == title) else {
            errors.push(format!("no README section {section:?}"));
            continue;
        };
        if !squash(body).contains(&squash(fragment)) {
            errors.push(format!(
                "{section}: the fragment {fragment:?} is not in the README"
            ));
        }
        if ids == "—" {
            if why.is_empty() {
                errors.push(format!(
                    "{section}: {fragment:?} is marked untestable without a reason"
                ));
            }
        } else {
            for id in ids.split(", ") {
                if !reqs.contains_key(id) {
                    errors.push(format!(
                        "{section}: {fragment:?} names {id}, which spec/ does not define"
                    ));
                }
            }
        }
        covered.insert(title);
    }
    for (title, _) in &sections {
        if !covered.contains(&title.replace('`', "")) {
            errors.push(format!(
                "README section {title:?} has no row in spec/coverage.md"
            ));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_runner_crate_does_not_depend_on_the_server() {
    // SUITE-009: the crate boundary is the guarantee; check it holds. The
    // runner's one path dependency is the stdio client it shares with the
    // tests and the bench (conformance/client), held to the same rule.
    for (manifest, allowed) in [
        ("conformance/runner/Cargo.toml", Some("skill-mcp-client")),
        ("conformance/client/Cargo.toml", None),
    ] {
        let text = std::fs::read_to_string(Path::new(ROOT).join(manifest)).unwrap();
        let deps = text
            .split("[dependencies]")
            .nth(1)
            .unwrap_or_else(|| panic!("{manifest} has [dependencies]"));
        for line in deps.lines() {
            let name = line.split(['=', ' ']).next().unwrap_or_default().trim();
            if Some(name) == allowed {
                assert!(
                    line.contains(r#"path = "../client""#),
                    "{manifest}: {line:?} is not the client crate beside it"
                );
                continue;
            }
            assert!(
                !name.starts_with("skill-mcp") && !line.contains("path ="),
                "{manifest} depends on {line:?}: it may use only the wire protocol"
            );
        }
    }
    let root = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    assert!(
        root.contains(r#"members = [".", "conformance/runner", "conformance/client"]"#),
        "the runner and the client are workspace members"
    );
}

#[test]
fn each_requirement_says_which_profile_holds_it() {
    // SUITE-006: a requirement with a case says `Profile: core` or
    // `Profile: full`, and the case agrees.
    for (id, r) in requirements() {
        let Some(c) = &r.case else { continue };
        let text = std::fs::read_to_string(
            Path::new(ROOT)
                .join("conformance")
                .join(c)
                .join("case.json"),
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let case_profile = v["profile"].as_str().unwrap_or("full");
        assert_eq!(
            r.profile.as_deref(),
            Some(case_profile),
            "{id} ({}): its Profile: line must say {case_profile}, as conformance/{c}/case.json does",
            r.file
        );
    }
}

/// Every file a requirement's `Test:` line names exists: tests move (issue
/// 42 folded the attack files by subject), and a line naming a file that
/// is gone sends a reader nowhere.
#[test]
fn every_path_a_test_line_names_exists() {
    let mut missing = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("spec"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines().filter(|l| l.starts_with("Test:")) {
            for word in line.split(|c: char| c.is_whitespace() || c == ';' || c == ',') {
                let word = word.trim_matches(|c: char| "().`'\"".contains(c));
                let rooted = ["tests/", "src/", "conformance/", "benches/", "fuzz/"]
                    .iter()
                    .any(|r| word.starts_with(r));
                let named = [
                    ".rs", ".md", ".sh", ".py", ".mjs", ".yaml", ".json", ".toml",
                ]
                .iter()
                .any(|x| word.ends_with(x));
                if rooted && named && !Path::new(ROOT).join(word).exists() {
                    missing.push(format!("{}: {word}", file.display()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "Test: lines name files that do not exist: {missing:#?}"
    );
}
