//! Loading and validating a case (`case.json`) and its golden
//! (`golden.json`); FORMAT.md, *`case.json`* and *`golden.json`*.

mod entry;
mod setup;
mod step;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use setup::{FileContent, RelPath, SetupAction, WriteContent};
pub use step::{CoreStep, Progress, Step, StepKind};

#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Checks {
    Exact,
    Subset,
}

#[derive(Deserialize, Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Initialize,
    Stateless,
    Raw,
    /// The core profile's one mode: `initialize` at the design of record's
    /// protocol version. Never written in a case (`modes` cannot name it).
    #[serde(skip)]
    Core,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Initialize => "initialize",
            Mode::Stateless => "stateless",
            Mode::Raw => "raw",
            Mode::Core => "core",
        }
    }
}

/// Which rules a run checks (FORMAT.md, *Profiles*).
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// The design of record's rules only, by hand-written expectations.
    Core,
    /// Everything this implementation holds to, by recorded goldens.
    #[default]
    Full,
    /// SEP-2640's own sentences, for any implementation of the MCP Skills
    /// extension (`conformance/sep-2640/`, its cases of its own format).
    #[serde(skip)]
    Skills,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Core => "core",
            Profile::Full => "full",
            Profile::Skills => "skills",
        }
    }
}

/// A capability a case needs the server to advertise (FORMAT.md,
/// *Capability gates*).
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    #[serde(rename = "skills-extension")]
    SkillsExtension,
    #[serde(rename = "prompts.listChanged")]
    PromptsListChanged,
    #[serde(rename = "resources.listChanged")]
    ResourcesListChanged,
}

/// `case.json` as written: every part a serde type that refuses fields it
/// does not know, so a misspelt one is named, never ignored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: String,
    title: String,
    checks: Checks,
    #[serde(default)]
    modes: Option<Vec<Mode>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    unprivileged: bool,
    #[serde(default)]
    setup: Vec<SetupAction>,
    steps: Vec<Step>,
    #[serde(default)]
    profile: Profile,
    #[serde(default)]
    requires: Vec<Capability>,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub id: String,
    pub title: String,
    pub checks: Checks,
    pub modes: Vec<Mode>,
    pub env: Vec<(String, String)>,
    pub unprivileged: bool,
    pub setup: Vec<SetupAction>,
    pub steps: Vec<Step>,
    /// The case's directory (absolute, canonical): `${CASE}`.
    pub dir: PathBuf,
    pub profile: Profile,
    pub requires: Vec<Capability>,
}

impl Case {
    pub fn golden_path(&self) -> PathBuf {
        self.dir.join("golden.json")
    }

    pub fn tree_dir(&self) -> PathBuf {
        self.dir.join("tree")
    }
}

/// True for `AREA-NNN`: `^[A-Z]+-[0-9]{3}$`.
pub fn is_valid_id(s: &str) -> bool {
    let Some((area, num)) = s.split_once('-') else {
        return false;
    };
    !area.is_empty()
        && area.bytes().all(|b| b.is_ascii_uppercase())
        && num.len() == 3
        && num.bytes().all(|b| b.is_ascii_digit())
}

/// The case directories in `dir`, sorted by name. Hidden entries, plain
/// files (FORMAT.md, suite.json) and directories whose name starts with a
/// lowercase letter (`runner/`, the runner's own crate; `deviations/`) are
/// skipped; every other directory is a case, so a misnamed case is an
/// error rather than left out.
pub fn discover(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the cases directory {}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for ent in rd {
        let ent = ent.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let name = ent.file_name();
        let Some(name) = name.to_str() else {
            return Err(format!(
                "{}: a directory entry's name is not UTF-8 ({:?})",
                dir.display(),
                name
            ));
        };
        if name.starts_with('.') || name.starts_with(|c: char| c.is_ascii_lowercase()) {
            continue;
        }
        let path = ent.path();
        if std::fs::metadata(&path)
            .map(|m| m.is_dir())
            .unwrap_or(false)
        {
            out.push((name.to_string(), path));
        }
    }
    out.sort();
    Ok(out)
}

/// Reads `suite.json` and returns its `suite_version`.
pub fn suite_version(dir: &Path) -> Result<String, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Suite {
        suite_version: String,
    }
    let p = dir.join("suite.json");
    let text = std::fs::read_to_string(&p).map_err(|e| {
        format!(
            "cannot read {}: {e} (is --cases a conformance suite?)",
            p.display()
        )
    })?;
    let s: Suite = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(s.suite_version)
}

/// Loads and validates `<dir>/case.json`.
pub fn load(dir_name: &str, dir: &Path) -> Result<Case, String> {
    let file = dir.join("case.json");
    let where_ = format!("{dir_name}/case.json");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("{where_}: cannot read {}: {e}", file.display()))?;
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| format!("{where_}: cannot resolve {}: {e}", dir.display()))?;
    parse_case(dir_name, &text, dir).map_err(|e| format!("{where_}: {e}"))
}

/// Parses and validates the text of a `case.json`.
pub fn parse_case(dir_name: &str, text: &str, dir: PathBuf) -> Result<Case, String> {
    let raw = read_case(text)?;
    if !is_valid_id(dir_name) {
        return Err(format!(
            "the directory name `{dir_name}` is not a case ID (AREA-NNN, e.g. DISC-001)"
        ));
    }
    if raw.id != dir_name {
        return Err(format!(
            "id `{}` does not match its directory name `{dir_name}`",
            raw.id
        ));
    }
    if raw.title.trim().is_empty() {
        return Err("title is empty".to_string());
    }
    if raw.title.contains('\n') || raw.title.contains('\r') {
        return Err("title must be one line".to_string());
    }
    let modes = match raw.modes {
        None => vec![Mode::Initialize, Mode::Stateless],
        Some(m) => {
            if m.is_empty() {
                return Err(
                    "modes is empty; omit it for the default [\"initialize\", \"stateless\"]"
                        .to_string(),
                );
            }
            for (i, a) in m.iter().enumerate() {
                if m[..i].contains(a) {
                    return Err(format!("modes lists `{}` twice", a.as_str()));
                }
            }
            if m.contains(&Mode::Raw) && m.len() > 1 {
                return Err("a raw case lists only \"raw\" in modes".to_string());
            }
            m
        }
    };
    let mut env = Vec::new();
    for (k, v) in raw.env {
        if k.is_empty() || k.contains('=') || k.contains('\0') {
            return Err(format!("env: `{k}` is not a valid variable name"));
        }
        if v.contains('\0') {
            return Err(format!("env: the value of `{k}` contains a NUL byte"));
        }
        env.push((k, v));
    }
    let (setup, steps) = (raw.setup, raw.steps);
    check_core(raw.profile, &steps)?;
    Ok(Case {
        id: raw.id,
        title: raw.title,
        checks: raw.checks,
        modes,
        env,
        unprivileged: raw.unprivileged,
        setup,
        steps,
        dir,
        profile: raw.profile,
        requires: raw.requires,
    })
}

/// `case.json`'s text read as a [`RawCase`]; an error names the field
/// (`steps[3].timeout_ms: …`) as well as the line and column.
fn read_case(text: &str) -> Result<RawCase, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let raw: RawCase =
        serde_path_to_error::deserialize(&mut de).map_err(|e| entry::at_field(&e))?;
    de.end().map_err(|e| e.to_string())?;
    Ok(raw)
}

/// A core case checks every step that has a reply, or says it skips it,
/// and checks at least one; a full case carries no core expectations.
fn check_core(profile: Profile, steps: &[Step]) -> Result<(), String> {
    let mut checked = 0;
    for (i, s) in steps.iter().enumerate() {
        match (&s.core, profile, s.expects_reply()) {
            (CoreStep::Sent, Profile::Full, _) | (CoreStep::Sent, _, false) => {}
            (CoreStep::Skip, Profile::Core, _) => {}
            (CoreStep::Expect(_), Profile::Core, true) => checked += 1,
            (CoreStep::Expect(_), Profile::Core, false) => {
                return Err(format!("steps[{i}]: `expect` on a step that has no reply"));
            }
            (CoreStep::Sent, Profile::Core, true) => {
                return Err(format!(
                    "steps[{i}]: a core case gives every step with a reply an `expect` pattern or \"core\": \"skip\""
                ));
            }
            (_, Profile::Full, _) => {
                return Err(format!(
                    "steps[{i}]: `expect` and `core` belong to core cases (\"profile\": \"core\")"
                ));
            }
            (_, Profile::Skills, _) => {
                return Err(
                    "the skills profile's cases are conformance/sep-2640/'s, in their own format"
                        .to_string(),
                );
            }
        }
    }
    if profile == Profile::Core && checked == 0 {
        return Err("a core case checks at least one step with `expect`".to_string());
    }
    Ok(())
}

/// `golden.json`.
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Golden {
    pub id: String,
    pub steps: Vec<GoldenStep>,
}

#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GoldenStep {
    pub reply: Option<Value>,
}

/// Reads a case's golden: `Ok(None)` when there is none yet.
pub fn load_golden(case: &Case) -> Result<Option<Golden>, String> {
    let p = case.golden_path();
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}/golden.json: cannot read: {e}", case.id)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{}/golden.json: {e} (re-record it with --bless)", case.id))
}

/// The exact text `--bless` writes: 2-space indent, keys sorted, trailing newline.
pub fn golden_text(g: &Golden) -> Result<String, String> {
    let v = serde_json::to_value(g).map_err(|e| format!("cannot serialize golden: {e}"))?;
    let mut s = serde_json::to_string_pretty(&crate::json::canonical(&v))
        .map_err(|e| format!("cannot serialize golden: {e}"))?;
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::setup::{MAX_FILES, MAX_REPEAT_BYTES, base64_decode, hex_decode, hex_encode};
    use super::step::DEFAULT_TIMEOUT_MS;
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Case, String> {
        parse_case("DEMO-001", &v.to_string(), PathBuf::from("/cases/DEMO-001"))
    }

    fn minimal() -> Value {
        json!({"id": "DEMO-001", "title": "t", "checks": "exact", "steps": []})
    }

    #[test]
    fn ids() {
        for ok in ["DISC-001", "A-000", "RUN-999"] {
            assert!(is_valid_id(ok), "{ok}");
        }
        for bad in [
            "disc-001",
            "DISC-01",
            "DISC-0001",
            "DISC001",
            "-001",
            "DI5C-001",
            "DISC-00a",
            "DISC-001-2",
            "",
        ] {
            assert!(!is_valid_id(bad), "{bad}");
        }
    }

    #[test]
    fn minimal_case_gets_defaults() {
        let c = parse(minimal()).unwrap();
        assert_eq!(c.modes, vec![Mode::Initialize, Mode::Stateless]);
        assert!(!c.unprivileged);
        assert!(c.setup.is_empty() && c.steps.is_empty() && c.env.is_empty());
    }

    #[test]
    fn unknown_field_is_named() {
        let mut v = minimal();
        v["unprivilegd"] = json!(true);
        let e = parse(v).unwrap_err();
        assert!(e.contains("unknown field `unprivilegd`"), "{e}");
        let mut v = minimal();
        v["steps"] = json!([{"request": "tools/list", "timeout": 5}]);
        let e = parse(v).unwrap_err();
        assert!(
            e.contains("steps[0]") && e.contains("unknown field `timeout`"),
            "{e}"
        );
        let mut v = minimal();
        v["setup"] = json!([{"mkdir": "a"}, {"write": "a/b", "txt": "x"}]);
        let e = parse(v).unwrap_err();
        assert!(
            e.contains("setup[1]") && e.contains("unknown field `txt`"),
            "{e}"
        );
    }

    #[test]
    fn a_misspelt_field_is_refused_naming_the_file_and_the_field() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("DEMO-001");
        std::fs::create_dir(&dir).unwrap();
        let mut v = minimal();
        v["steps"] = json!([
            {"request": "tools/list"},
            {"notify": "notifications/x"},
            {"request": "tools/list", "expcet": {}}
        ]);
        std::fs::write(dir.join("case.json"), v.to_string()).unwrap();
        let e = load("DEMO-001", &dir).unwrap_err();
        assert!(
            e.starts_with("DEMO-001/case.json: steps[2]")
                && e.contains("unknown field `expcet`, expected one of `request`"),
            "{e}"
        );
        let mut v = minimal();
        v["setup"] = json!([{"chmod": "a", "mod": "0755"}]);
        std::fs::write(dir.join("case.json"), v.to_string()).unwrap();
        let e = load("DEMO-001", &dir).unwrap_err();
        assert!(
            e.starts_with("DEMO-001/case.json: setup[0]") && e.contains("unknown field `mod`"),
            "{e}"
        );
    }

    #[test]
    fn id_must_match_dir() {
        let mut v = minimal();
        v["id"] = json!("DEMO-002");
        assert!(parse(v).unwrap_err().contains("does not match"));
        let e = parse_case("demo", &minimal().to_string(), PathBuf::from("/x")).unwrap_err();
        assert!(e.contains("not a case ID"), "{e}");
    }

    #[test]
    fn modes_validation() {
        for (modes, ok) in [
            (json!(["raw"]), true),
            (json!(["stateless"]), true),
            (json!(["raw", "initialize"]), false),
            (json!([]), false),
            (json!(["initialize", "initialize"]), false),
            (json!(["handshake"]), false),
        ] {
            let mut v = minimal();
            v["modes"] = modes.clone();
            assert_eq!(parse(v).is_ok(), ok, "{modes}");
        }
    }

    #[test]
    fn setup_paths_must_stay_inside_work() {
        for bad in ["/etc/passwd", "../x", "tree/../../x", "", "."] {
            let mut v = minimal();
            v["setup"] = json!([{"mkdir": bad}]);
            assert!(parse(v).is_err(), "{bad:?} should be refused");
        }
        let mut v = minimal();
        v["setup"] = json!([{"mkdir": "./tree/a/b"}]);
        let c = parse(v).unwrap();
        assert_eq!(
            c.setup,
            vec![SetupAction::Mkdir(RelPath {
                text: "./tree/a/b".into(),
                parts: vec!["tree".into(), "a".into(), "b".into()]
            })]
        );
        // rawname's DIR may be ${WORK} itself.
        let mut v = minimal();
        v["setup"] = json!([{"rawname": ".", "hex": "ff", "text": ""}]);
        assert!(parse(v).is_ok());
    }

    #[test]
    fn setup_actions_parse() {
        let mut v = minimal();
        v["setup"] = json!([
            {"write": "a", "text": "hi"},
            {"write": "b", "base64": "aGk="},
            {"write": "c", "repeat": "ab", "count": 3},
            {"sparse": "d", "size": 1048576},
            {"symlink": "e", "target": "${WORK}/a"},
            {"fifo": "f"},
            {"chmod": "a", "mode": "000"},
            {"chmod": "a", "mode": "0755"},
            {"remove": "b"},
            {"rawname": "tree", "hex": "66ff6f", "text": "x"},
            {"rawdir": "tree", "hex": "6e6f742d75746638ff", "file": "SKILL.md", "text": "x"},
            {"files": "tree/s/many", "count": 10001, "text": "x"}
        ]);
        let c = parse(v).unwrap();
        assert_eq!(c.setup.len(), 12);
        assert!(matches!(
            &c.setup[11],
            SetupAction::Files { count: 10001, .. }
        ));
        assert!(
            matches!(&c.setup[1], SetupAction::Write { content: WriteContent::Bytes(b), .. } if b == b"hi")
        );
        assert!(matches!(&c.setup[6], SetupAction::Chmod { mode: 0, .. }));
        assert!(matches!(
            &c.setup[7],
            SetupAction::Chmod { mode: 0o755, .. }
        ));
        assert!(
            matches!(&c.setup[9], SetupAction::RawName { name, .. } if name == &[0x66, 0xff, 0x6f])
        );
        for bad in [
            json!({"write": "a"}),
            json!({"write": "a", "text": "x", "base64": "eA=="}),
            json!({"write": "a", "repeat": "x"}),
            json!({"write": "a", "text": "x", "count": 2}),
            json!({"write": "a", "base64": "!!"}),
            json!({"chmod": "a", "mode": "999"}),
            json!({"chmod": "a", "mode": 644}),
            json!({"rawname": "t", "hex": "2f", "text": ""}),
            json!({"rawname": "t", "hex": "zz", "text": ""}),
            json!({"mkdir": "a", "fifo": "b"}),
            json!({"touch": "a"}),
            json!({"write": "a", "repeat": "xx", "count": MAX_REPEAT_BYTES}),
            json!({"rawdir": "t", "hex": "ff", "file": "a/b", "text": ""}),
            json!({"rawdir": "t", "hex": "ff", "text": ""}),
            json!({"rawdir": "t", "hex": "ff", "file": "..", "text": ""}),
            json!({"files": "t", "count": MAX_FILES + 1, "text": ""}),
            json!({"files": "t", "text": ""}),
            json!({"files": "/t", "count": 1, "text": ""}),
        ] {
            let mut v = minimal();
            v["setup"] = json!([bad.clone()]);
            assert!(parse(v).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn steps_parse() {
        let mut v = minimal();
        v["steps"] = json!([
            {"request": "tools/call", "params": {"name": "x"}, "timeout_ms": 500,
             "redact": {"result.b": {"any": true}, "result.a": {"type": "string"}}},
            {"notify": "notifications/x"},
            {"raw": "{bad", "reply": true},
            {"raw": "{}"},
            {"sleep_ms": 10}
        ]);
        let c = parse(v).unwrap();
        assert_eq!(c.steps[0].timeout_ms, 500);
        assert_eq!(c.steps[1].timeout_ms, DEFAULT_TIMEOUT_MS);
        let sels: Vec<&str> = c.steps[0]
            .redact
            .iter()
            .map(|r| r.selector.text.as_str())
            .collect();
        assert_eq!(sels, vec!["result.a", "result.b"]);
        let expects: Vec<bool> = c.steps.iter().map(Step::expects_reply).collect();
        assert_eq!(expects, vec![true, false, true, false, false]);
        for bad in [
            json!({"request": "x", "params": [1]}),
            json!({"request": ""}),
            json!({"request": "x", "params": {"_meta": 1}}),
            json!({"request": "x", "timeout_ms": 0}),
            json!({"request": "x", "redact": {"a..b": {"any": true}}}),
            json!({"notify": "x", "timeout_ms": 5}),
            json!({"raw": "x", "redact": {}}),
            json!({"raw": 5}),
            json!({"sleep_ms": -1}),
            json!({"request": "x", "notify": "y"}),
            json!({}),
            json!("tools/list"),
        ] {
            let mut v = minimal();
            v["steps"] = json!([bad.clone()]);
            assert!(parse(v).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn env_validation() {
        let mut v = minimal();
        v["env"] = json!({"A=B": "x"});
        assert!(parse(v).is_err());
        let mut v = minimal();
        v["env"] = json!({"SKILLS_DIR": 5});
        assert!(parse(v).is_err());
    }

    #[test]
    fn base64_and_hex() {
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("Zg==").unwrap(), b"f");
        assert_eq!(base64_decode("Zm8=").unwrap(), b"fo");
        assert_eq!(base64_decode("Zm9v").unwrap(), b"foo");
        assert_eq!(base64_decode("Zm9vYg").unwrap(), b"foob");
        assert_eq!(base64_decode("/+8A").unwrap(), vec![0xff, 0xef, 0x00]);
        assert!(base64_decode("Zm9vY").is_err());
        assert!(base64_decode("Zm=9").is_err());
        assert!(base64_decode("Zm9v!").is_err());
        assert_eq!(hex_decode("00fFa1").unwrap(), vec![0, 0xff, 0xa1]);
        assert!(hex_decode("abc").is_err());
        assert!(hex_decode("zz").is_err());
        assert!(hex_decode("é0").is_err());
        assert_eq!(hex_encode(&[0, 0xff]), "00ff");
    }

    #[test]
    fn golden_text_is_deterministic() {
        let g = Golden {
            id: "DEMO-001".into(),
            steps: vec![
                GoldenStep {
                    reply: Some(json!({"result": {"b": 1, "a": [true]}})),
                },
                GoldenStep { reply: None },
            ],
        };
        let t = golden_text(&g).unwrap();
        assert_eq!(
            t,
            "{\n  \"id\": \"DEMO-001\",\n  \"steps\": [\n    {\n      \"reply\": {\n        \"result\": {\n          \"a\": [\n            true\n          ],\n          \"b\": 1\n        }\n      }\n    },\n    {\n      \"reply\": null\n    }\n  ]\n}\n"
        );
        let back: Golden = serde_json::from_str(&t).unwrap();
        assert_eq!(back, g);
    }
}
