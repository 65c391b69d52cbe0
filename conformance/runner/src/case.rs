//! Loading and validating a case (`case.json`) and its golden
//! (`golden.json`); FORMAT.md, *`case.json`* and *`golden.json`*.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::{DecodeError, Engine};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::redact::{Redaction, parse_redactions};

/// Default wait for a reply.
pub const DEFAULT_TIMEOUT_MS: u64 = 20_000;
/// Largest `sleep_ms` or `timeout_ms` accepted (the per-case deadline bounds them anyway).
pub const MAX_WAIT_MS: u64 = 600_000;
/// Largest file a `write` with `repeat` may produce.
pub const MAX_REPEAT_BYTES: u64 = 1 << 30;
/// Most files one `files` action may create (names `f000000` … `f999999`).
pub const MAX_FILES: u64 = 1_000_000;

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
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Core => "core",
            Profile::Full => "full",
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

/// `case.json` as written; `setup` and `steps` are checked by hand so that
/// errors can name the item and the field.
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
    setup: Vec<Value>,
    steps: Vec<Value>,
    #[serde(default)]
    profile: Profile,
    #[serde(default)]
    requires: Vec<Capability>,
}

/// A path relative to `${WORK}`: only normal components, none of them `..`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelPath {
    pub text: String,
    pub parts: Vec<String>,
}

impl RelPath {
    pub fn parse(s: &str, allow_root: bool) -> Result<RelPath, String> {
        if s.is_empty() {
            return Err("path is empty".to_string());
        }
        if s.contains('\0') {
            return Err(format!("path `{s}` contains a NUL byte"));
        }
        let p = Path::new(s);
        let mut parts = Vec::new();
        for c in p.components() {
            match c {
                Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(format!(
                        "path `{s}` has a `..` segment; paths stay inside ${{WORK}}"
                    ));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(format!(
                        "path `{s}` is absolute; paths are relative to ${{WORK}}"
                    ));
                }
            }
        }
        if parts.is_empty() && !allow_root {
            return Err(format!("path `{s}` names ${{WORK}} itself"));
        }
        Ok(RelPath {
            text: s.to_string(),
            parts,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteContent {
    Bytes(Vec<u8>),
    Repeat { text: String, count: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupAction {
    Mkdir(RelPath),
    Write {
        path: RelPath,
        content: WriteContent,
    },
    Sparse {
        path: RelPath,
        size: u64,
    },
    Symlink {
        path: RelPath,
        target: String,
    },
    Fifo(RelPath),
    Chmod {
        path: RelPath,
        mode: u32,
    },
    Remove(RelPath),
    RawName {
        dir: RelPath,
        name: Vec<u8>,
        text: String,
    },
    RawDir {
        dir: RelPath,
        name: Vec<u8>,
        file: String,
        text: String,
    },
    Files {
        dir: RelPath,
        count: u64,
        text: String,
    },
    /// N skill directories `s000000`… each holding a SKILL.md (`{name}`
    /// in the text becomes the directory's name).
    Skills {
        dir: RelPath,
        count: u64,
        text: String,
    },
}

impl SetupAction {
    /// A short description for error messages.
    pub fn describe(&self) -> String {
        match self {
            SetupAction::Mkdir(p) => format!("mkdir {}", p.text),
            SetupAction::Write { path, .. } => format!("write {}", path.text),
            SetupAction::Sparse { path, size } => format!("sparse {} ({size} bytes)", path.text),
            SetupAction::Symlink { path, target } => format!("symlink {} -> {target}", path.text),
            SetupAction::Fifo(p) => format!("fifo {}", p.text),
            SetupAction::Chmod { path, mode } => format!("chmod {:03o} {}", mode, path.text),
            SetupAction::Remove(p) => format!("remove {}", p.text),
            SetupAction::RawName { dir, name, .. } => {
                format!("rawname {}/<hex {}>", dir.text, hex_encode(name))
            }
            SetupAction::RawDir {
                dir, name, file, ..
            } => {
                format!("rawdir {}/<hex {}>/{file}", dir.text, hex_encode(name))
            }
            SetupAction::Files { dir, count, .. } => format!("files {} ({count})", dir.text),
            SetupAction::Skills { dir, count, .. } => format!("skills {} ({count})", dir.text),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum StepKind {
    Request {
        method: String,
        params: Option<Value>,
    },
    Notify {
        method: String,
        params: Option<Value>,
    },
    Raw {
        text: String,
        reply: bool,
        /// Keep the reply's `id` in the record: the raw line chose it, not
        /// the runner (for cases about ids themselves).
        keep_id: bool,
    },
    Sleep {
        ms: u64,
    },
    /// Setup actions run while the server runs.
    Act {
        actions: Vec<SetupAction>,
    },
    /// Requests sent together before any reply is awaited; the recorded
    /// reply is `{"replies": [...]}` in the order sent.
    Concurrent {
        requests: Vec<(String, Option<Value>)>,
    },
    /// A request cancelled with `notifications/cancelled` `after_ms` after
    /// it was sent; the recorded reply is `{"replied": false}` when nothing
    /// answers it within `quiet_ms`, else `{"replied": REPLY}`.
    Cancel {
        method: String,
        params: Option<Value>,
        after_ms: u64,
        quiet_ms: u64,
    },
}

/// What the core profile does with a step (FORMAT.md, *Core expectations*).
#[derive(Clone, Debug, PartialEq)]
pub enum CoreStep {
    /// A step without a reply (notify, sleep, act, a raw line): sent, and
    /// nothing to check.
    Sent,
    /// Sent, and its reply's core view must match this pattern.
    Expect(Value),
    /// Not sent in the core profile (only this implementation answers it).
    Skip,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub kind: StepKind,
    pub timeout_ms: u64,
    pub redact: Vec<Redaction>,
    pub core: CoreStep,
    /// `"progress": "ask"`: the request carries a progress token, and its
    /// recorded reply gains a `progress` summary of what that token got;
    /// `"listen"`: no token, and the summary counts every progress
    /// notification in the same window (there should be none).
    pub progress: Option<Progress>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    Ask,
    Listen,
}

impl Step {
    /// Whether this step records a reply.
    pub fn expects_reply(&self) -> bool {
        matches!(
            self.kind,
            StepKind::Request { .. }
                | StepKind::Raw { reply: true, .. }
                | StepKind::Concurrent { .. }
                | StepKind::Cancel { .. }
        )
    }

    pub fn describe(&self) -> String {
        match &self.kind {
            StepKind::Request { method, .. } => format!("request {method}"),
            StepKind::Notify { method, .. } => format!("notify {method}"),
            StepKind::Raw { reply: true, .. } => "raw (reply)".to_string(),
            StepKind::Raw { .. } => "raw".to_string(),
            StepKind::Sleep { ms } => format!("sleep {ms} ms"),
            StepKind::Act { actions } => format!("act ({} actions)", actions.len()),
            StepKind::Concurrent { requests } => {
                format!("concurrent ({} requests)", requests.len())
            }
            StepKind::Cancel {
                method, after_ms, ..
            } => {
                format!("request {method}, cancelled after {after_ms} ms")
            }
        }
    }
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
    let raw: RawCase = serde_json::from_str(text).map_err(|e| e.to_string())?;
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
    let setup = raw
        .setup
        .iter()
        .enumerate()
        .map(|(i, v)| parse_action(v).map_err(|e| format!("setup[{i}]: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let steps = raw
        .steps
        .iter()
        .enumerate()
        .map(|(i, v)| parse_step(v).map_err(|e| format!("steps[{i}]: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
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
        }
    }
    if profile == Profile::Core && checked == 0 {
        return Err("a core case checks at least one step with `expect`".to_string());
    }
    Ok(())
}

fn check_fields(obj: &Map<String, Value>, kind: &str, allowed: &[&str]) -> Result<(), String> {
    for k in obj.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(format!(
                "unknown field `{k}` in a `{kind}` entry (allowed: {})",
                allowed.join(", ")
            ));
        }
    }
    Ok(())
}

fn which_kind<'a>(
    obj: &Map<String, Value>,
    kinds: &[&'a str],
    what: &str,
) -> Result<&'a str, String> {
    let present: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| obj.contains_key(*k))
        .collect();
    match present.as_slice() {
        [one] => Ok(one),
        [] => {
            let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
            Err(format!(
                "not a known {what}: expected one of the keys {} (got {})",
                kinds.join(", "),
                if keys.is_empty() {
                    "an empty object".to_string()
                } else {
                    keys.join(", ")
                }
            ))
        }
        many => Err(format!(
            "has both `{}` and `{}`; one {what} per entry",
            many[0], many[1]
        )),
    }
}

fn str_field<'a>(obj: &'a Map<String, Value>, k: &str) -> Result<&'a str, String> {
    match obj.get(k) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("`{k}` must be a string, got {other}")),
        None => Err(format!("`{k}` is missing")),
    }
}

fn u64_field(obj: &Map<String, Value>, k: &str) -> Result<u64, String> {
    match obj.get(k) {
        Some(v) => v
            .as_u64()
            .ok_or_else(|| format!("`{k}` must be a whole number ≥ 0, got {v}")),
        None => Err(format!("`{k}` is missing")),
    }
}

fn parse_action(v: &Value) -> Result<SetupAction, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| format!("a setup action must be an object, got {v}"))?;
    const KINDS: [&str; 11] = [
        "mkdir", "write", "sparse", "symlink", "fifo", "chmod", "remove", "rawname", "rawdir",
        "files", "skills",
    ];
    let kind = which_kind(obj, &KINDS, "setup action")?;
    let path = |k: &str, allow_root: bool| -> Result<RelPath, String> {
        RelPath::parse(str_field(obj, k)?, allow_root).map_err(|e| format!("{kind}: {e}"))
    };
    Ok(match kind {
        "mkdir" => {
            check_fields(obj, kind, &["mkdir"])?;
            SetupAction::Mkdir(path("mkdir", false)?)
        }
        "write" => {
            check_fields(obj, kind, &["write", "text", "base64", "repeat", "count"])?;
            let p = path("write", false)?;
            let forms: Vec<&str> = ["text", "base64", "repeat"]
                .into_iter()
                .filter(|k| obj.contains_key(*k))
                .collect();
            let content = match forms.as_slice() {
                ["text"] => {
                    if obj.contains_key("count") {
                        return Err("write: `count` goes with `repeat`, not `text`".to_string());
                    }
                    WriteContent::Bytes(str_field(obj, "text")?.as_bytes().to_vec())
                }
                ["base64"] => {
                    if obj.contains_key("count") {
                        return Err("write: `count` goes with `repeat`, not `base64`".to_string());
                    }
                    let b = str_field(obj, "base64")?;
                    WriteContent::Bytes(
                        base64_decode(b).map_err(|e| format!("write: base64: {e}"))?,
                    )
                }
                ["repeat"] => {
                    let text = str_field(obj, "repeat")?.to_string();
                    let count =
                        u64_field(obj, "count").map_err(|e| format!("write with repeat: {e}"))?;
                    let total = (text.len() as u64).saturating_mul(count);
                    if total > MAX_REPEAT_BYTES {
                        return Err(format!(
                            "write: repeat × count is {total} bytes, more than the {MAX_REPEAT_BYTES} allowed"
                        ));
                    }
                    WriteContent::Repeat { text, count }
                }
                [] => {
                    return Err(
                        "write needs one of `text`, `base64` or `repeat` (+ `count`)".to_string(),
                    );
                }
                many => {
                    return Err(format!(
                        "write has both `{}` and `{}`; give one",
                        many[0], many[1]
                    ));
                }
            };
            SetupAction::Write { path: p, content }
        }
        "sparse" => {
            check_fields(obj, kind, &["sparse", "size"])?;
            SetupAction::Sparse {
                path: path("sparse", false)?,
                size: u64_field(obj, "size")?,
            }
        }
        "symlink" => {
            check_fields(obj, kind, &["symlink", "target"])?;
            let target = str_field(obj, "target")?;
            if target.is_empty() || target.contains('\0') {
                return Err("symlink: `target` must be a non-empty string without NUL".to_string());
            }
            SetupAction::Symlink {
                path: path("symlink", false)?,
                target: target.to_string(),
            }
        }
        "fifo" => {
            check_fields(obj, kind, &["fifo"])?;
            SetupAction::Fifo(path("fifo", false)?)
        }
        "chmod" => {
            check_fields(obj, kind, &["chmod", "mode"])?;
            let m = str_field(obj, "mode")?;
            let ok = !m.is_empty() && m.len() <= 4 && m.bytes().all(|b| (b'0'..=b'7').contains(&b));
            let mode = if ok {
                u32::from_str_radix(m, 8).ok()
            } else {
                None
            }
            .ok_or_else(|| {
                format!("chmod: mode `{m}` is not an octal string like \"000\" or \"0755\"")
            })?;
            SetupAction::Chmod {
                path: path("chmod", false)?,
                mode,
            }
        }
        "remove" => {
            check_fields(obj, kind, &["remove"])?;
            SetupAction::Remove(path("remove", false)?)
        }
        "rawname" => {
            check_fields(obj, kind, &["rawname", "hex", "text"])?;
            let name = raw_name(obj, kind)?;
            SetupAction::RawName {
                dir: path("rawname", true)?,
                name,
                text: str_field(obj, "text")?.to_string(),
            }
        }
        "rawdir" => {
            check_fields(obj, kind, &["rawdir", "hex", "file", "text"])?;
            let name = raw_name(obj, kind)?;
            let file = str_field(obj, "file")?;
            if file.is_empty()
                || file.contains('/')
                || file.contains('\0')
                || file == "."
                || file == ".."
            {
                return Err(format!(
                    "rawdir: `file` must be a plain file name, got `{file}`"
                ));
            }
            SetupAction::RawDir {
                dir: path("rawdir", true)?,
                name,
                file: file.to_string(),
                text: str_field(obj, "text")?.to_string(),
            }
        }
        "files" => {
            check_fields(obj, kind, &["files", "count", "text"])?;
            let count = u64_field(obj, "count")?;
            if count > MAX_FILES {
                return Err(format!("files: `count` {count} is more than {MAX_FILES}"));
            }
            SetupAction::Files {
                dir: path("files", true)?,
                count,
                text: str_field(obj, "text")?.to_string(),
            }
        }
        "skills" => {
            check_fields(obj, kind, &["skills", "count", "text"])?;
            let count = u64_field(obj, "count")?;
            if count > MAX_FILES {
                return Err(format!("skills: `count` {count} is more than {MAX_FILES}"));
            }
            SetupAction::Skills {
                dir: path("skills", true)?,
                count,
                text: str_field(obj, "text")?.to_string(),
            }
        }
        _ => return Err(format!("unhandled setup action `{kind}`")),
    })
}

/// The decoded, checked `hex` name of a `rawname`/`rawdir` action.
fn raw_name(obj: &Map<String, Value>, kind: &str) -> Result<Vec<u8>, String> {
    let name = hex_decode(str_field(obj, "hex")?).map_err(|e| format!("{kind}: hex: {e}"))?;
    if name.is_empty() || name.contains(&b'/') || name.contains(&0) || name == b"." || name == b".."
    {
        return Err(format!(
            "{kind}: the name (hex) must be non-empty, not `.` or `..`, and hold no `/` or NUL byte"
        ));
    }
    Ok(name)
}

fn params_field(obj: &Map<String, Value>) -> Result<Option<Value>, String> {
    match obj.get("params") {
        None => Ok(None),
        Some(Value::Object(m)) => {
            if let Some(meta) = m.get("_meta")
                && !meta.is_object()
            {
                return Err(format!("`params._meta` must be an object, got {meta}"));
            }
            Ok(Some(Value::Object(m.clone())))
        }
        Some(other) => Err(format!("`params` must be an object, got {other}")),
    }
}

fn method_field(obj: &Map<String, Value>, k: &str) -> Result<String, String> {
    let m = str_field(obj, k)?;
    if m.is_empty() {
        return Err(format!("`{k}` (the method) is empty"));
    }
    Ok(m.to_string())
}

fn parse_step(v: &Value) -> Result<Step, String> {
    let obj = v
        .as_object()
        .ok_or_else(|| format!("a step must be an object, got {v}"))?;
    let kind = which_kind(
        obj,
        &[
            "request",
            "notify",
            "raw",
            "sleep_ms",
            "act",
            "concurrent",
            "cancel",
        ],
        "step",
    )?;
    let timeout_ms = match obj.get("timeout_ms") {
        None => DEFAULT_TIMEOUT_MS,
        Some(t) => match t.as_u64() {
            Some(n) if n > 0 && n <= MAX_WAIT_MS => n,
            _ => {
                return Err(format!(
                    "`timeout_ms` must be a whole number from 1 to {MAX_WAIT_MS}, got {t}"
                ));
            }
        },
    };
    let redact = match obj.get("redact") {
        None => Vec::new(),
        Some(r) => parse_redactions(r)?,
    };
    let kind = match kind {
        "request" => {
            check_fields(
                obj,
                kind,
                &[
                    "request",
                    "params",
                    "timeout_ms",
                    "redact",
                    "expect",
                    "core",
                    "progress",
                ],
            )?;
            StepKind::Request {
                method: method_field(obj, "request")?,
                params: params_field(obj)?,
            }
        }
        "notify" => {
            check_fields(obj, kind, &["notify", "params"])?;
            StepKind::Notify {
                method: method_field(obj, "notify")?,
                params: params_field(obj)?,
            }
        }
        "raw" => {
            check_fields(
                obj,
                kind,
                &[
                    "raw",
                    "reply",
                    "keep_id",
                    "timeout_ms",
                    "redact",
                    "expect",
                    "core",
                ],
            )?;
            let text = str_field(obj, "raw")?.to_string();
            let reply = match obj.get("reply") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => return Err(format!("`reply` must be true or false, got {other}")),
            };
            let keep_id = match obj.get("keep_id") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => return Err(format!("`keep_id` must be true or false, got {other}")),
            };
            if !reply
                && (obj.contains_key("timeout_ms")
                    || obj.contains_key("redact")
                    || obj.contains_key("keep_id"))
            {
                return Err(
                    "`timeout_ms`, `redact` and `keep_id` only apply to a raw step with \"reply\": true"
                        .to_string(),
                );
            }
            StepKind::Raw {
                text,
                reply,
                keep_id,
            }
        }
        "sleep_ms" => {
            check_fields(obj, kind, &["sleep_ms"])?;
            let ms = u64_field(obj, "sleep_ms")?;
            if ms > MAX_WAIT_MS {
                return Err(format!("`sleep_ms` {ms} is more than {MAX_WAIT_MS}"));
            }
            StepKind::Sleep { ms }
        }
        "act" => {
            check_fields(obj, kind, &["act"])?;
            let list = obj
                .get("act")
                .and_then(Value::as_array)
                .ok_or_else(|| "`act` must be a list of setup actions".to_string())?;
            let actions = list
                .iter()
                .enumerate()
                .map(|(i, a)| parse_action(a).map_err(|e| format!("act[{i}]: {e}")))
                .collect::<Result<Vec<_>, _>>()?;
            StepKind::Act { actions }
        }
        "concurrent" => {
            check_fields(
                obj,
                kind,
                &["concurrent", "timeout_ms", "redact", "expect", "core"],
            )?;
            let list = obj
                .get("concurrent")
                .and_then(Value::as_array)
                .filter(|l| l.len() >= 2)
                .ok_or_else(|| {
                    "`concurrent` must be a list of at least two requests".to_string()
                })?;
            let requests = list
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let o = r
                        .as_object()
                        .ok_or_else(|| format!("concurrent[{i}] must be an object"))?;
                    check_fields(o, "request", &["request", "params"])
                        .map_err(|e| format!("concurrent[{i}]: {e}"))?;
                    Ok((
                        method_field(o, "request").map_err(|e| format!("concurrent[{i}]: {e}"))?,
                        params_field(o).map_err(|e| format!("concurrent[{i}]: {e}"))?,
                    ))
                })
                .collect::<Result<Vec<_>, String>>()?;
            StepKind::Concurrent { requests }
        }
        "cancel" => {
            check_fields(
                obj,
                kind,
                &["cancel", "params", "after_ms", "quiet_ms", "redact", "core"],
            )?;
            let ms = |k: &str| match obj.get(k) {
                None => Err(format!("a cancel step needs `{k}`")),
                Some(v) => match v.as_u64() {
                    Some(n) if n <= MAX_WAIT_MS => Ok(n),
                    _ => Err(format!(
                        "`{k}` must be a whole number from 0 to {MAX_WAIT_MS}, got {v}"
                    )),
                },
            };
            StepKind::Cancel {
                method: method_field(obj, "cancel")?,
                params: params_field(obj)?,
                after_ms: ms("after_ms")?,
                quiet_ms: ms("quiet_ms")?,
            }
        }
        _ => return Err(format!("unhandled step kind `{kind}`")),
    };
    let progress = match obj.get("progress").map(|v| (v, v.as_str())) {
        None => None,
        Some((_, Some("ask"))) => Some(Progress::Ask),
        Some((_, Some("listen"))) => Some(Progress::Listen),
        Some((other, _)) => {
            return Err(format!("`progress` is \"ask\" or \"listen\", got {other}"));
        }
    };
    let core = match (obj.get("expect"), obj.get("core")) {
        (Some(_), Some(_)) => {
            return Err("a step has `expect` or \"core\": \"skip\", not both".to_string());
        }
        (Some(p), None) => {
            crate::expect::validate(p).map_err(|e| format!("expect: {e}"))?;
            CoreStep::Expect(p.clone())
        }
        (None, Some(Value::String(s))) if s == "skip" => CoreStep::Skip,
        (None, Some(other)) => {
            return Err(format!("`core` takes \"skip\", got {other}"));
        }
        (None, None) => CoreStep::Sent,
    };
    Ok(Step {
        kind,
        timeout_ms,
        redact,
        core,
        progress,
    })
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

/// `write`'s base64: the standard alphabet, padding optional and stray
/// low bits accepted, as the suite has always read it.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Decodes standard base64 (RFC 4648 alphabet; padding optional).
pub fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    BASE64.decode(s).map_err(|e| match e {
        DecodeError::InvalidByte(at, b'=') => format!("`=` padding inside the data (offset {at})"),
        DecodeError::InvalidByte(at, b) => {
            format!("invalid character {:?} at offset {at}", b as char)
        }
        DecodeError::InvalidLength(n) => format!("length {n} is not a valid base64 length"),
        DecodeError::InvalidLastSymbol(at, b) => {
            format!("invalid last character {:?} at offset {at}", b as char)
        }
        DecodeError::InvalidPadding => "invalid `=` padding".to_string(),
    })
}

/// Decodes a hex string (either case, even length).
pub fn hex_decode(s: &str) -> Result<Vec<u8>, String> {
    hex::decode(s).map_err(|e| match e {
        hex::FromHexError::OddLength => format!("`{s}` has an odd number of digits"),
        _ => format!("`{s}` is not hex"),
    })
}

pub fn hex_encode(b: &[u8]) -> String {
    hex::encode(b)
}

#[cfg(test)]
mod tests {
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
