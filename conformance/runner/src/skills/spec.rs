//! spec/sep-2640.md held to the cases of conformance/sep-2640/: every
//! sentence a case names exists and binds a server, and every server
//! sentence with a keyword is checked by a case or says, under *Not
//! checked*, why not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::skills::case::is_sentence_id;

#[derive(Debug, Clone, PartialEq)]
pub struct Sentence {
    pub level: String,
    pub who: String,
}

/// The numbered sentences, the readings and the *Not checked* list.
pub struct Spec {
    pub sentences: BTreeMap<String, Sentence>,
    pub readings: BTreeSet<String>,
    pub not_checked: BTreeSet<String>,
}

pub fn read(text: &str) -> Result<Spec, String> {
    let mut spec = Spec {
        sentences: BTreeMap::new(),
        readings: BTreeSet::new(),
        not_checked: BTreeSet::new(),
    };
    let mut fenced = false;
    let mut in_not_checked = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(h) = line.strip_prefix("## ") {
            in_not_checked = h.trim() == "Not checked";
            continue;
        }
        if let Some(r) = line.strip_prefix("* **R")
            && let Some((n, _)) = r.split_once(' ')
        {
            spec.readings.insert(format!("R{n}"));
            continue;
        }
        let Some(rest) = line.strip_prefix("- ") else {
            continue;
        };
        let id = rest.split_whitespace().next().unwrap_or_default();
        if !is_sentence_id(id) {
            continue;
        }
        if in_not_checked {
            spec.not_checked.insert(id.to_string());
            continue;
        }
        let parts: Vec<&str> = rest.splitn(3, " · ").collect();
        let [_, level, tail] = parts.as_slice() else {
            return Err(format!("{id}: not `ID · LEVEL · WHO — \"quote\"`"));
        };
        let who = tail.split(" — ").next().unwrap_or_default().trim();
        if spec
            .sentences
            .insert(
                id.to_string(),
                Sentence {
                    level: level.trim().to_string(),
                    who: who.to_string(),
                },
            )
            .is_some()
        {
            return Err(format!("{id} is numbered twice"));
        }
    }
    Ok(spec)
}

/// Whether a sentence's level asks something of whom it binds.
fn binding(level: &str) -> bool {
    matches!(
        level,
        "MUST" | "MUST NOT" | "REQUIRED" | "SHOULD" | "SHOULD NOT"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
    }

    #[test]
    fn every_line_has_a_level_and_a_party_the_text_uses() {
        let text = std::fs::read_to_string(root().join("spec/sep-2640.md")).unwrap();
        let spec = read(&text).unwrap();
        assert!(spec.sentences.len() > 300, "{}", spec.sentences.len());
        for (id, s) in &spec.sentences {
            assert!(
                [
                    "MUST",
                    "MUST NOT",
                    "REQUIRED",
                    "SHOULD",
                    "SHOULD NOT",
                    "MAY",
                    "(definition)",
                    "(informative)"
                ]
                .contains(&s.level.as_str()),
                "{id}: level {:?}",
                s.level
            );
            assert!(
                ["server", "host", "client", "—"].contains(&s.who.as_str()),
                "{id}: who {:?}",
                s.who
            );
        }
        assert!(spec.readings.contains("R1") && spec.readings.contains("R10"));
    }

    #[test]
    fn the_cases_and_the_sentences_agree() {
        let text = std::fs::read_to_string(root().join("spec/sep-2640.md")).unwrap();
        let spec = read(&text).unwrap();
        let suite = root().join("conformance/sep-2640");
        let cases = crate::skills::load_cases(&suite, &[]).unwrap();
        assert!(cases.len() >= 30, "only {} cases", cases.len());
        let mut checked = BTreeSet::new();
        for c in &cases {
            let mut binds_a_server = false;
            for id in &c.sentences {
                let s = spec
                    .sentences
                    .get(id)
                    .unwrap_or_else(|| panic!("{}: {id} is not in spec/sep-2640.md", c.id));
                if s.who == "server" && s.level != "(informative)" {
                    binds_a_server = true;
                }
                assert!(
                    s.who == "server" || s.level == "(definition)",
                    "{}: {id} binds a {} ({}), which no probe of a server can check",
                    c.id,
                    s.who,
                    s.level
                );
                checked.insert(id.clone());
            }
            assert!(
                binds_a_server,
                "{}: none of its sentences binds a server",
                c.id
            );
            for r in &c.readings {
                assert!(spec.readings.contains(r), "{}: no reading {r}", c.id);
            }
        }
        let mut unchecked = Vec::new();
        for (id, s) in &spec.sentences {
            if s.who == "server"
                && binding(&s.level)
                && !checked.contains(id)
                && !spec.not_checked.contains(id)
            {
                unchecked.push(id.clone());
            }
        }
        assert!(
            unchecked.is_empty(),
            "server sentences no case checks and *Not checked* does not explain: {unchecked:?}"
        );
        for id in &spec.not_checked {
            assert!(
                spec.sentences.contains_key(id),
                "Not checked: {id} is not a sentence"
            );
            assert!(
                !checked.contains(id),
                "Not checked lists {id}, which a case checks"
            );
        }
    }

    #[test]
    fn a_line_reads_as_its_parts() {
        let s = read("## X\n\n```\n- SEP2640-X-01 · not · read\n```\n- SEP2640-X-01 · MUST · server — \"a\"\n* **R3 — x.**\n## Not checked\n- SEP2640-X-01 — why\n").unwrap();
        assert_eq!(
            s.sentences["SEP2640-X-01"],
            Sentence {
                level: "MUST".into(),
                who: "server".into()
            }
        );
        assert!(s.readings.contains("R3") && s.not_checked.contains("SEP2640-X-01"));
        assert!(
            read("- SEP2640-X-01 · MUST · server — a\n- SEP2640-X-01 · MAY · server — b\n")
                .is_err()
        );
    }
}
