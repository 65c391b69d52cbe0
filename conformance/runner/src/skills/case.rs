//! A case of the skills profile (`conformance/sep-2640/<ID>/case.json`,
//! conformance/sep-2640/README.md): the sentences of SEP-2640 it checks, a
//! fixture tree, and probes whose views must match hand-written patterns.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::case::{Mode, SetupAction, is_valid_id};

/// A capability a case needs in a lifecycle, or it is not applicable there.
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// The extension's `directoryRead: true`.
    #[serde(rename = "directoryRead")]
    DirectoryRead,
}

/// What a probe asks the server, and so what its view holds
/// (conformance/sep-2640/README.md, *Probes and their views*).
#[derive(Clone, Debug, PartialEq)]
pub enum Probe {
    /// The capabilities declared in this lifecycle.
    Capabilities,
    /// `skills/list`, paged to its end.
    Catalog,
    /// `skills/get` of each listed skill.
    Get,
    /// `resources/read` of each file each listed manifest names.
    Read,
    /// `resources/directory/read` from each listed skill's root, down.
    Directory,
    /// One fixture folder: listed or not, and whether it is served.
    Skill { dir: String, names: Vec<String> },
    /// One method asked of each URI (templates resolved).
    Uris {
        method: String,
        uris: Vec<String>,
        secrets: Vec<String>,
    },
    /// One request as written (templates resolved).
    Request { method: String, params: Value },
}

impl Probe {
    pub fn describe(&self) -> String {
        match self {
            Probe::Capabilities => "probe capabilities".into(),
            Probe::Catalog => "probe catalog (skills/list, every page)".into(),
            Probe::Get => "probe get (skills/get of each listed skill)".into(),
            Probe::Read => "probe read (resources/read of each manifest entry)".into(),
            Probe::Directory => "probe directory (resources/directory/read, every level)".into(),
            Probe::Skill { dir, .. } => format!("probe skill {dir}"),
            Probe::Uris { method, uris, .. } => {
                format!("probe uris ({method} of {} URIs)", uris.len())
            }
            Probe::Request { method, .. } => format!("probe request {method}"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ProbeStep {
    pub probe: Probe,
    /// The hand-written pattern, fixture matchers not yet resolved.
    pub expect: Value,
}

#[derive(Clone, Debug)]
pub struct SepCase {
    pub id: String,
    pub title: String,
    /// The numbered sentences of spec/sep-2640.md it checks.
    pub sentences: Vec<String>,
    /// The readings of spec/sep-2640.md it relies on (`R1` …).
    pub readings: Vec<String>,
    pub modes: Vec<Mode>,
    /// A shared fixture (`conformance/sep-2640/fixtures/<name>`), copied first.
    pub fixture: Option<PathBuf>,
    /// The case's own `tree/`, copied over it.
    pub tree: PathBuf,
    pub setup: Vec<SetupAction>,
    pub requires: Vec<Gate>,
    pub steps: Vec<ProbeStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: String,
    title: String,
    sentences: Vec<String>,
    #[serde(default)]
    readings: Vec<String>,
    #[serde(default)]
    modes: Option<Vec<Mode>>,
    #[serde(default)]
    fixture: Option<String>,
    #[serde(default)]
    setup: Vec<SetupAction>,
    #[serde(default)]
    requires: Vec<Gate>,
    steps: Vec<RawStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    probe: String,
    #[serde(default)]
    dir: Option<String>,
    #[serde(default)]
    names: Option<Vec<String>>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    uris: Option<Vec<String>>,
    #[serde(default)]
    secrets: Option<Vec<String>>,
    #[serde(default)]
    params: Option<Value>,
    expect: Value,
}

/// `SEP2640-<SECTION>-<NN>`.
pub fn is_sentence_id(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("SEP2640-") else {
        return false;
    };
    let Some((sec, num)) = rest.split_once('-') else {
        return false;
    };
    !sec.is_empty()
        && sec.bytes().all(|b| b.is_ascii_uppercase())
        && num.len() == 2
        && num.bytes().all(|b| b.is_ascii_digit())
}

fn is_reading(s: &str) -> bool {
    s.strip_prefix('R')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

impl RawStep {
    fn probe(self, i: usize) -> Result<ProbeStep, String> {
        let at = |what: &str| format!("steps[{i}] ({}): {what}", self.probe);
        let mut unused: Vec<&str> = Vec::new();
        let probe = match self.probe.as_str() {
            "capabilities" | "catalog" | "get" | "read" | "directory" => {
                for (k, set) in [
                    ("dir", self.dir.is_some()),
                    ("names", self.names.is_some()),
                    ("method", self.method.is_some()),
                    ("uris", self.uris.is_some()),
                    ("secrets", self.secrets.is_some()),
                    ("params", self.params.is_some()),
                ] {
                    if set {
                        unused.push(k);
                    }
                }
                match self.probe.as_str() {
                    "capabilities" => Probe::Capabilities,
                    "catalog" => Probe::Catalog,
                    "get" => Probe::Get,
                    "read" => Probe::Read,
                    _ => Probe::Directory,
                }
            }
            "skill" => {
                for (k, set) in [
                    ("method", self.method.is_some()),
                    ("uris", self.uris.is_some()),
                    ("secrets", self.secrets.is_some()),
                    ("params", self.params.is_some()),
                ] {
                    if set {
                        unused.push(k);
                    }
                }
                let dir = self.dir.clone().ok_or_else(|| at("`dir` is required"))?;
                if dir.is_empty()
                    || dir.starts_with('/')
                    || dir.split('/').any(|s| s == ".." || s.is_empty())
                {
                    return Err(at(&format!(
                        "`dir` {dir:?} must be a relative folder of the fixture"
                    )));
                }
                Probe::Skill {
                    dir,
                    names: self.names.clone().unwrap_or_default(),
                }
            }
            "uris" => {
                for (k, set) in [
                    ("dir", self.dir.is_some()),
                    ("names", self.names.is_some()),
                    ("params", self.params.is_some()),
                ] {
                    if set {
                        unused.push(k);
                    }
                }
                let uris = self.uris.clone().unwrap_or_default();
                if uris.is_empty() {
                    return Err(at("`uris` must list at least one URI"));
                }
                Probe::Uris {
                    method: self
                        .method
                        .clone()
                        .unwrap_or_else(|| "resources/read".into()),
                    uris,
                    secrets: self.secrets.clone().unwrap_or_default(),
                }
            }
            "request" => {
                for (k, set) in [
                    ("dir", self.dir.is_some()),
                    ("names", self.names.is_some()),
                    ("uris", self.uris.is_some()),
                    ("secrets", self.secrets.is_some()),
                ] {
                    if set {
                        unused.push(k);
                    }
                }
                let method = self
                    .method
                    .clone()
                    .ok_or_else(|| at("`method` is required"))?;
                let params = self
                    .params
                    .clone()
                    .unwrap_or_else(|| Value::Object(Default::default()));
                if !params.is_object() {
                    return Err(at("`params` must be an object"));
                }
                Probe::Request { method, params }
            }
            other => {
                return Err(format!(
                    "steps[{i}]: `{other}` is not a probe (capabilities, catalog, get, read, directory, skill, uris, request)"
                ));
            }
        };
        if let Some(k) = unused.first() {
            return Err(at(&format!("`{k}` does not apply to this probe")));
        }
        crate::skills::instantiate::validate(&self.expect)
            .map_err(|e| at(&format!("expect: {e}")))?;
        Ok(ProbeStep {
            probe,
            expect: self.expect,
        })
    }
}

/// Reads and checks `<dir>/case.json`; `suite` is `conformance/sep-2640`.
pub fn load(name: &str, dir: &Path, suite: &Path) -> Result<SepCase, String> {
    let file = dir.join("case.json");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("{name}/case.json: cannot read {}: {e}", file.display()))?;
    parse(name, &text, dir, suite).map_err(|e| format!("{name}/case.json: {e}"))
}

pub fn parse(name: &str, text: &str, dir: &Path, suite: &Path) -> Result<SepCase, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let raw: RawCase = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
    de.end().map_err(|e| e.to_string())?;
    if !is_valid_id(name) || raw.id != name {
        return Err(format!(
            "id `{}` must be the directory's name `{name}`, an AREA-NNN id",
            raw.id
        ));
    }
    if raw.title.trim().is_empty() || raw.title.contains('\n') {
        return Err("title must be one non-empty line".into());
    }
    if raw.sentences.is_empty() {
        return Err(
            "sentences is empty: a case checks at least one sentence of spec/sep-2640.md".into(),
        );
    }
    if let Some(s) = raw.sentences.iter().find(|s| !is_sentence_id(s)) {
        return Err(format!(
            "sentences: `{s}` is not a SEP2640-<SECTION>-<NN> number"
        ));
    }
    if let Some(r) = raw.readings.iter().find(|r| !is_reading(r)) {
        return Err(format!("readings: `{r}` is not a reading (R1, R2 …)"));
    }
    let modes = match raw.modes {
        None => vec![Mode::Initialize, Mode::Stateless],
        Some(m) if m.is_empty() => return Err("modes is empty".into()),
        Some(m) => {
            if m.iter()
                .any(|x| !matches!(x, Mode::Initialize | Mode::Stateless))
            {
                return Err(
                    "modes: the skills profile runs \"initialize\" and \"stateless\" only".into(),
                );
            }
            let mut d = m.clone();
            d.dedup();
            if d.len() != m.len() {
                return Err("modes lists a mode twice".into());
            }
            m
        }
    };
    let fixture = match raw.fixture {
        None => None,
        Some(f) => {
            if f.is_empty() || f.contains('/') || f.starts_with('.') {
                return Err(format!(
                    "fixture `{f}` must be the name of a folder of fixtures/"
                ));
            }
            let p = suite.join("fixtures").join(&f);
            if !p.is_dir() {
                return Err(format!("fixture `{f}`: there is no {}", p.display()));
            }
            Some(p)
        }
    };
    if raw.steps.is_empty() {
        return Err("steps is empty".into());
    }
    let steps = raw
        .steps
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.probe(i))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SepCase {
        id: raw.id,
        title: raw.title,
        sentences: raw.sentences,
        readings: raw.readings,
        modes,
        fixture,
        tree: dir.join("tree"),
        setup: raw.setup,
        requires: raw.requires,
        steps,
    })
}

/// The case folders of the suite, sorted (fixtures/ and adapters/ are not
/// cases, nor is any name starting with a lower-case letter or a dot).
pub fn discover(suite: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let rd = std::fs::read_dir(suite)
        .map_err(|e| format!("cannot read the skills cases {}: {e}", suite.display()))?;
    let mut out = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| format!("cannot read {}: {e}", suite.display()))?;
        let name = ent.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.starts_with(|c: char| c.is_ascii_lowercase()) {
            continue;
        }
        if ent.path().is_dir() {
            out.push((name, ent.path()));
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_at(text: &str) -> Result<SepCase, String> {
        let d = tempfile::tempdir().unwrap();
        parse("SKL-001", text, d.path(), d.path())
    }

    #[test]
    fn a_case_names_its_sentences_and_its_probes_fit_their_fields() {
        let ok = r#"{"id": "SKL-001", "title": "t", "sentences": ["SEP2640-LIST-01"],
            "steps": [{"probe": "catalog", "expect": {"skills": {"a": {"$manifest": {"dir": "a"}}}}},
                      {"probe": "skill", "dir": "g/h", "expect": {"listed": false}},
                      {"probe": "uris", "uris": ["${root:a}/x"], "expect": []},
                      {"probe": "request", "method": "skills/list", "params": {"cursor": "x"}, "expect": {}}]}"#;
        let c = parse_at(ok).unwrap();
        assert_eq!(c.modes, [Mode::Initialize, Mode::Stateless]);
        assert_eq!(c.steps.len(), 4);
        assert!(
            matches!(&c.steps[2].probe, Probe::Uris { method, .. } if method == "resources/read")
        );
        let bad = |t: &str| parse_at(t).unwrap_err();
        assert!(
            bad(r#"{"id": "SKL-001", "title": "t", "sentences": [], "steps": []}"#)
                .contains("at least one sentence")
        );
        assert!(
            bad(r#"{"id": "SKL-001", "title": "t", "sentences": ["LIST-01"], "steps": []}"#)
                .contains("SEP2640-")
        );
        assert!(bad(r#"{"id": "SKL-001", "title": "t", "sentences": ["SEP2640-LIST-01"], "steps": [{"probe": "catalog", "dir": "a", "expect": {}}]}"#).contains("`dir` does not apply"));
        assert!(bad(r#"{"id": "SKL-001", "title": "t", "sentences": ["SEP2640-LIST-01"], "steps": [{"probe": "skill", "dir": "../x", "expect": {}}]}"#).contains("relative folder"));
        assert!(bad(r#"{"id": "SKL-001", "title": "t", "sentences": ["SEP2640-LIST-01"], "steps": [{"probe": "nope", "expect": {}}]}"#).contains("not a probe"));
        assert!(bad(r#"{"id": "SKL-001", "title": "t", "sentences": ["SEP2640-LIST-01"], "steps": [{"probe": "catalog", "expect": {"$manifest": {"dir": 3}}}]}"#).contains("expect"));
        assert!(bad(r#"{"id": "SKL-001", "title": "t", "sentences": ["SEP2640-LIST-01"], "modes": ["raw"], "steps": [{"probe": "catalog", "expect": {}}]}"#).contains("modes"));
        assert!(bad(r#"{"id": "SKL-002", "title": "t", "sentences": ["SEP2640-LIST-01"], "steps": [{"probe": "catalog", "expect": {}}]}"#).contains("directory's name"));
        assert!(bad(r#"{"id": "SKL-001", "title": "t", "sentences": ["SEP2640-LIST-01"], "extra": 1, "steps": []}"#).contains("extra"));
    }

    #[test]
    fn sentence_numbers_have_one_form() {
        assert!(is_sentence_id("SEP2640-LIST-01"));
        assert!(!is_sentence_id("SEP2640-LIST-1"));
        assert!(!is_sentence_id("SEP2640-list-01"));
        assert!(!is_sentence_id("SEP-2640-LIST-01"));
        assert!(is_reading("R10") && !is_reading("R") && !is_reading("X1"));
    }
}
