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
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("README.md"))
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
