//! The `mcp-host:` declaration block: which files are entry points and what
//! each wants.
//!
//! README: "**A declaration narrows; it never grants.**" Nothing here
//! authorizes anything; `grant` decides what of it may run. The block is read
//! strictly: an unknown MAJOR version is refused wholesale, unknown keys are
//! ignored and reported by name, and a refused entry costs that entry, never
//! the skill's instructions (spec DECL-001..DECL-009).

use serde_yaml_ng::Value;

use crate::fence;
use crate::frontmatter::{Frontmatter, Note, Positions, Seg};
use crate::limits::{DEFAULT_TIMEOUT_SECS, MAX_TIMEOUT_SECS};
use crate::problem::Reason;

/// The frontmatter key holding the block.
pub(crate) const BLOCK_KEY: &str = "mcp-host";

/// The one major version this server understands.
pub(crate) const VERSION: u64 = 1;

/// Variables no script may ask for (spec DECL-006): the host's own, and
/// every one that makes the dynamic loader, glibc, OpenSSL, node or
/// python3 load code, read other configuration or weaken TLS. Handing one
/// over would let a bundle inject code into its interpreter or reach the
/// host's configuration, whatever the fence does with the script itself.
/// Each name is refused with whose variable it is.
const RESERVED_NAMES: &[(&str, &str)] = &[
    ("MCP_SKILLS_PATH", HOST),
    ("MCP_SKILL_RUN", HOST),
    ("SKILLS_DIR", HOST),
    ("MCP_HOST_METER_FILE", HOST),
    ("MCP_BLOB_BASE_URL", HOST),
    ("MCP_BLOB_SIGNING_KEY", HOST),
    // glibc's unsecvars.h (the variables stripped for setuid programs);
    // its LD_* are the prefix below, and TMPDIR, also listed there, is one
    // the execution fence hands every script itself (RUN-012).
    ("GCONV_PATH", GLIBC),
    ("GETCONF_DIR", GLIBC),
    ("GLIBC_TUNABLES", GLIBC),
    ("HOSTALIASES", GLIBC),
    ("LOCALDOMAIN", GLIBC),
    ("LOCPATH", GLIBC),
    ("MALLOC_TRACE", GLIBC),
    ("NIS_PATH", GLIBC),
    ("NLSPATH", GLIBC),
    ("RESOLV_HOST_CONF", GLIBC),
    ("RES_OPTIONS", GLIBC),
    ("TZDIR", GLIBC),
    // openssl-env(7), beyond the OPENSSL* prefix.
    ("SSL_CERT_FILE", OPENSSL),
    ("SSL_CERT_DIR", OPENSSL),
    ("CTLOG_FILE", OPENSSL),
];

/// Whole families, by prefix, so a variable a new release adds is refused
/// before anyone lists it.
const RESERVED_PREFIXES: &[(&str, &str)] = &[
    (
        "LD_",
        "the dynamic loader reads (ld.so(8): LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, …)",
    ),
    ("DYLD_", "the macOS dynamic loader reads (dyld(1))"),
    // The older names of glibc's malloc tunables (MALLOC_CHECK_,
    // MALLOC_PERTURB_, MALLOC_ARENA_MAX, …), which ld.so reads as aliases
    // of GLIBC_TUNABLES' glibc.malloc.* and a setuid program ignores just
    // the same; MALLOC_TRACE keeps its own entry above.
    ("MALLOC_", GLIBC),
    ("OPENSSL", OPENSSL),
    (
        "NODE_",
        "node reads (its documented environment: NODE_OPTIONS, NODE_EXTRA_CA_CERTS, NODE_TLS_REJECT_UNAUTHORIZED, …)",
    ),
    (
        "PYTHON",
        "python3 reads (every PYTHON* variable, the ones python -E ignores)",
    ),
];

/// The one name a reserved prefix does not cover: `NODE_ENV` is an
/// application convention, not a variable node itself reads.
const NOT_RESERVED: &[&str] = &["NODE_ENV"];

const HOST: &str = "the host sets";
const GLIBC: &str =
    "glibc ignores for setuid programs because it loads code or configuration (unsecvars.h)";
const OPENSSL: &str =
    "OpenSSL reads to load configuration, modules or trusted certificates (openssl-env(7))";

/// Whose variable `name` is, when no script may be handed it (DECL-006).
pub(crate) fn reserved(name: &str) -> Option<&'static str> {
    if NOT_RESERVED.contains(&name) {
        return None;
    }
    RESERVED_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .or_else(|| RESERVED_PREFIXES.iter().find(|(p, _)| name.starts_with(p)))
        .map(|(_, why)| *why)
}

/// One declared entry point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunEntry {
    /// Skill-relative path; it passed the fence's string check.
    pub script: String,
    /// The interpreter's name in the closed set (never inferred).
    pub interpreter: String,
    /// Variable names this script asks for, in order, without duplicates.
    pub env: Vec<String>,
    /// Wall-clock bound, already clamped to the 300 s ceiling.
    pub timeout_ms: u64,
}

/// A variable the skill proposes for the server's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvProposal {
    pub(crate) name: String,
    pub(crate) secret: bool,
    pub(crate) description: Option<String>,
    pub(crate) required: Option<bool>,
}

/// What a skill declares. Empty when the block is absent or refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declaration {
    pub(crate) run: Vec<RunEntry>,
    pub(crate) env: Vec<EnvProposal>,
    pub(crate) egress: Vec<String>,
}

/// True for a portable environment variable name.
pub(crate) fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '*'))
}

/// Reads the block from parsed frontmatter. Never fails: whatever is wrong
/// becomes a [`Note`] and the rest is kept.
pub fn read(fm: &Frontmatter) -> (Declaration, Vec<(Reason, Note)>) {
    let mut r = Reader {
        positions: &fm.positions,
        notes: Vec::new(),
    };
    let mut decl = match fm.map.get(BLOCK_KEY) {
        None => Declaration::default(),
        Some(block) => r.block(block).unwrap_or_default(),
    };
    decl.shrink();
    (decl, r.notes)
}

impl Declaration {
    /// Gives back what the lists grew by while being read: the catalog
    /// keeps every skill's declaration for as long as it serves, and 10,000
    /// skills are served at once.
    fn shrink(&mut self) {
        for entry in &mut self.run {
            entry.env.shrink_to_fit();
        }
        self.run.shrink_to_fit();
        self.env.shrink_to_fit();
        self.egress.shrink_to_fit();
    }
}

struct Reader<'a> {
    positions: &'a Positions,
    /// Each with its reason: `declaration`, or `timeout-clamped` for a
    /// timeout served at the ceiling.
    notes: Vec<(Reason, Note)>,
}

/// The path of the node being read, kept on the stack as the reader
/// descends: nothing is allocated for it unless a note names it, and most
/// blocks earn no note (building every path and label up front was a tenth
/// of the boot scan).
#[derive(Clone, Copy)]
struct At<'a> {
    up: Option<&'a At<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

impl<'a> At<'a> {
    fn top(k: &'a str) -> At<'a> {
        At {
            up: None,
            step: Step::Key(k),
        }
    }

    fn key<'b>(&'b self, k: &'b str) -> At<'b> {
        At {
            up: Some(self),
            step: Step::Key(k),
        }
    }

    fn index(&self, i: usize) -> At<'_> {
        At {
            up: Some(self),
            step: Step::Index(i),
        }
    }

    /// The path as [`Positions`] keys it.
    fn segs(&self) -> Vec<Seg> {
        let mut out = Vec::new();
        let mut at = Some(self);
        while let Some(a) = at {
            out.push(match a.step {
                Step::Key(k) => Seg::Key(k.to_owned()),
                Step::Index(i) => Seg::Index(i),
            });
            at = a.up;
        }
        out.reverse();
        out
    }
}

/// Renders as `mcp-host.run[0].timeout`, the way notes name a node.
impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::frontmatter::path_label(&self.segs()))
    }
}

impl Reader<'_> {
    fn note(&mut self, path: &At<'_>, message: String) {
        self.notes.push((
            Reason::Declaration,
            Note::at(self.positions, &path.segs(), message),
        ));
    }

    fn unknown_keys(&mut self, map: &serde_yaml_ng::Mapping, path: &At<'_>, known: &[&str]) {
        for k in map.keys() {
            match k {
                Value::String(s) if known.contains(&s.as_str()) => {}
                Value::String(s) => {
                    let fix = match nearest(s, known) {
                        Some(k) => format!("did you mean {k:?}? rename it"),
                        None => format!("the keys read there are {}; remove it", and_list(known)),
                    };
                    self.note(
                        &path.key(s),
                        format!("unknown key {s:?} in \"{path}\" (ignored): {fix}"),
                    );
                }
                other => self.note(
                    path,
                    format!(
                        "a key in \"{path}\" that is not a string ({}) (ignored): the keys read there are {}; \
                         remove it",
                        crate::frontmatter::key_text(other),
                        and_list(known)
                    ),
                ),
            }
        }
    }

    fn block(&mut self, block: &Value) -> Option<Declaration> {
        let path = At::top(BLOCK_KEY);
        let Value::Mapping(map) = block else {
            let what = match block {
                Value::Null => "is empty, not a mapping",
                _ => "is not a mapping",
            };
            self.note(
                &path,
                format!(
                    "\"mcp-host\" {what}, so the block is ignored and the skill has no scripts: write its keys \
                     on the lines below mcp-host:, indented — version: 1, then run: with an entry \
                     \"- script: <path>\" and \"interpreter: node\" for each script"
                ),
            );
            return None;
        };
        let vpath = path.key("version");
        let version = map.get("version");
        let major = match version {
            Some(Value::Number(n)) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .map(|f| f.trunc() as u64)
            }),
            _ => None,
        };
        match (major, version) {
            (None, None) => {
                // No `version:` line to point at: the block's first key,
                // where the line goes.
                self.note(
                    &path,
                    format!(
                        "\"mcp-host\" has no \"version\", so the block is ignored and the skill has no scripts: \
                         add the line version: {VERSION} under mcp-host:, indented as the keys below it are"
                    ),
                );
                return None;
            }
            (None, Some(v)) => {
                let shown = match v {
                    Value::String(s) => format!("{s:?}, not a number"),
                    Value::Number(_) => {
                        format!("{}, not a version number", crate::frontmatter::key_text(v))
                    }
                    other => format!("{}, not a number", crate::frontmatter::key_text(other)),
                };
                self.note(
                    &vpath,
                    format!(
                        "\"mcp-host.version\" is {shown}, so the block is ignored and the skill has no scripts: \
                         write version: {VERSION}"
                    ),
                );
                return None;
            }
            (Some(v), _) if v != VERSION => {
                self.note(
                    &vpath,
                    format!(
                        "\"mcp-host\" declares major version {v}, and this server reads version {VERSION} only, \
                         so the block is ignored and the skill has no scripts: write version: {VERSION} if the \
                         block is written as version {VERSION} is (run entries of script, interpreter, env, \
                         timeout), or serve the skill with a server that reads version {v}"
                    ),
                );
                return None;
            }
            (Some(_), _) => {}
        }
        self.unknown_keys(map, &path, &["version", "run", "env", "egress", "state"]);
        Some(Declaration {
            run: map
                .get("run")
                .map(|v| self.run(v, &path.key("run")))
                .unwrap_or_default(),
            env: map
                .get("env")
                .map(|v| self.env_proposals(v, &path.key("env")))
                .unwrap_or_default(),
            egress: map
                .get("egress")
                .map(|v| self.egress(v, &path.key("egress")))
                .unwrap_or_default(),
        })
    }

    fn run(&mut self, value: &Value, path: &At<'_>) -> Vec<RunEntry> {
        let Value::Sequence(items) = value else {
            self.note(
                path,
                "\"mcp-host.run\" is not a list (ignored), so the skill has no scripts: write each script as \
                 an entry on the lines below run:, \"- script: <path>\" with \"interpreter: node\" under it"
                    .into(),
            );
            return Vec::new();
        };
        let mut out: Vec<RunEntry> = Vec::new();
        // Where each kept entry is in the list, to name the first of two.
        let mut kept_at: Vec<usize> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            if let Some(entry) = self.run_entry(item, &p) {
                if let Some(first) = out.iter().position(|e| e.script == entry.script) {
                    self.note(
                        &p,
                        format!(
                            "\"{p}\" declares {:?} a second time (ignored): delete this entry, or merge it into \
                             the first, \"{}\"",
                            entry.script,
                            path.index(kept_at[first])
                        ),
                    );
                } else {
                    out.push(entry);
                    kept_at.push(i);
                }
            }
        }
        out
    }

    fn run_entry(&mut self, item: &Value, p: &At<'_>) -> Option<RunEntry> {
        let Value::Mapping(map) = item else {
            let fix = match item {
                Value::String(s) if fence::check_str(s).is_ok() => format!(
                    "write it as - script: {}, with interpreter: {} on the line below, under script:",
                    scalar(s),
                    interpreter_for(s)
                ),
                _ => "write it as - script: <path>, with interpreter: node on the line below, under script:"
                    .to_owned(),
            };
            self.note(p, format!("\"{p}\" is not a mapping (ignored): {fix}"));
            return None;
        };
        self.unknown_keys(map, p, &["script", "interpreter", "env", "timeout"]);
        let script = match map.get("script") {
            Some(Value::String(script)) => script,
            None => {
                self.note(
                    p,
                    format!(
                        "\"{p}\" has no string \"script\" (ignored): add script: <the file's path in the skill, \
                         like scripts/run.js>"
                    ),
                );
                return None;
            }
            Some(other) => {
                let text = crate::frontmatter::key_text(other);
                self.note(
                    &p.key("script"),
                    format!(
                        "\"{p}\" has no string \"script\" (ignored): its script is {text}; write the file's \
                         path in the skill: script: {}",
                        crate::frontmatter::scalar(&text)
                    ),
                );
                return None;
            }
        };
        if let Err(rule) = fence::check_str(script) {
            self.note(
                &p.key("script"),
                format!(
                    "\"{p}\" script {script:?} is not usable: {} (ignored); {}",
                    rule.describe(),
                    script_fix(script, rule)
                ),
            );
            return None;
        }
        let Some(Value::String(interpreter)) = map.get("interpreter") else {
            let at = if map.contains_key("interpreter") {
                p.key("interpreter")
            } else {
                p.key("script")
            };
            self.note(
                &at,
                format!(
                    "\"{p}\" has no string \"interpreter\" (ignored): add interpreter: {} under its script: line",
                    interpreter_for(script)
                ),
            );
            return None;
        };
        let timeout_ms = match map.get("timeout") {
            None => DEFAULT_TIMEOUT_SECS * 1000,
            Some(value) => match value.as_f64() {
                // At least a millisecond; NaN and negatives fail this too.
                Some(s) if s * 1000.0 >= 1.0 => {
                    if s > MAX_TIMEOUT_SECS as f64 {
                        // Served, with the ceiling: a warning, not a
                        // refusal (DECL-001, CHECK-004).
                        self.notes.push((
                            Reason::TimeoutClamped,
                            Note::at(
                                self.positions,
                                &p.key("timeout").segs(),
                                format!(
                                    "\"{p}\" asks for a {s}s timeout, over the {MAX_TIMEOUT_SECS}s ceiling, so it is \
                                     clamped: the script runs with {MAX_TIMEOUT_SECS}s; set timeout: \
                                     {MAX_TIMEOUT_SECS} or less"
                                ),
                            ),
                        ));
                        MAX_TIMEOUT_SECS * 1000
                    } else {
                        (s * 1000.0).round() as u64
                    }
                }
                _ => {
                    self.note(
                        &p.key("timeout"),
                        format!(
                            "\"{p}\" has a \"timeout\" that is not a positive number of seconds (ignored): {}",
                            timeout_fix(value)
                        ),
                    );
                    return None;
                }
            },
        };
        let env = match map.get("env") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Sequence(names)) => {
                let mut env: Vec<String> = Vec::new();
                let envs = p.key("env");
                for (j, n) in names.iter().enumerate() {
                    let np = envs.index(j);
                    match n {
                        Value::String(name) if !is_env_name(name) => self.note(
                            &np,
                            format!(
                                "\"{p}\" asks for {name:?}, which is not a variable name (ignored): {}",
                                env_name_fix(name)
                            ),
                        ),
                        Value::String(name) => match reserved(name) {
                            Some(why) => self.note(
                                &np,
                                format!(
                                    "\"{p}\" asks for {name:?}, a variable {why}; no script may be handed \
                                     it (DECL-006) — refused: remove it from env (an owner who needs it sets it \
                                     for the interpreter outside this server)"
                                ),
                            ),
                            None if !env.contains(name) => env.push(name.clone()),
                            None => {}
                        },
                        other => self.note(
                            &np,
                            format!(
                                "\"{p}\" has an \"env\" entry that is not a string ({}) (ignored): write the \
                                 variable's name",
                                crate::frontmatter::key_text(other)
                            ),
                        ),
                    }
                }
                env
            }
            Some(other) => {
                let fix = match other {
                    Value::String(s) if is_env_name(s) => format!("write it as a list: env: [{s}]"),
                    _ => "write it as a list of variable names: env: [API_KEY]".to_owned(),
                };
                self.note(
                    &p.key("env"),
                    format!(
                        "\"{p}\" has an \"env\" that is not a list, so the entry is ignored: {fix}"
                    ),
                );
                return None;
            }
        };
        Some(RunEntry {
            script: script.clone(),
            interpreter: interpreter.clone(),
            env,
            timeout_ms,
        })
    }

    fn env_proposals(&mut self, value: &Value, path: &At<'_>) -> Vec<EnvProposal> {
        let Value::Sequence(items) = value else {
            self.note(
                path,
                "\"mcp-host.env\" is not a list (ignored): write each variable as an entry on the lines below \
                 env:, \"- name: <VARIABLE>\" (with secret: true for a secret)"
                    .into(),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            let Value::Mapping(map) = item else {
                let fix = match item {
                    Value::String(s) if is_env_name(s) => format!("write it as - name: {s}"),
                    _ => "write it as - name: <VARIABLE>".to_owned(),
                };
                self.note(&p, format!("\"{p}\" is not a mapping (ignored): {fix}"));
                continue;
            };
            self.unknown_keys(map, &p, &["name", "secret", "description", "required"]);
            let Some(Value::String(name)) = map
                .get("name")
                .filter(|n| n.as_str().is_some_and(is_env_name))
            else {
                match map.get("name") {
                    Some(Value::String(bad)) => self.note(
                        &p.key("name"),
                        format!(
                            "\"{p}\" has no valid \"name\" (ignored): {bad:?} is not a variable name; {}",
                            env_name_fix(bad)
                        ),
                    ),
                    _ => self.note(
                        &p,
                        format!("\"{p}\" has no valid \"name\" (ignored): add name: <VARIABLE>"),
                    ),
                }
                continue;
            };
            let mut flag = |k: &str| match map.get(k) {
                None => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => {
                    self.note(
                        &p.key(k),
                        format!(
                            "\"{p}\" has a {k:?} that is not a boolean (ignored): write {k}: true or {k}: false, \
                             unquoted"
                        ),
                    );
                    None
                }
            };
            let secret = flag("secret").unwrap_or(false);
            let required = flag("required");
            let description = map
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            out.push(EnvProposal {
                name: name.clone(),
                secret,
                description,
                required,
            });
        }
        out
    }

    fn egress(&mut self, value: &Value, path: &At<'_>) -> Vec<String> {
        let Value::Sequence(items) = value else {
            let fix = match value {
                Value::String(h) if is_hostname(h) => format!("write it as a list: egress: [{h}]"),
                _ => "write it as a list of hostnames: egress: [api.example.com]".to_owned(),
            };
            self.note(
                path,
                format!("\"mcp-host.egress\" is not a list (ignored): {fix}"),
            );
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(h) if is_hostname(h) => {
                    if !out.contains(h) {
                        out.push(h.clone());
                    }
                }
                other => {
                    let (shown, fix) = match other {
                        Value::String(s) => (
                            format!("{s:?}"),
                            match host_of(s) {
                                Some(h) => format!("write the host alone: {h}"),
                                None => "write a hostname alone, like api.example.com (no scheme, port or path)"
                                    .to_owned(),
                            },
                        ),
                        other => (
                            crate::frontmatter::key_text(other),
                            "write a hostname, like api.example.com".to_owned(),
                        ),
                    };
                    self.note(
                        &path.index(i),
                        format!(
                            "\"mcp-host.egress\" holds {shown}, which is not a hostname (ignored): {fix}"
                        ),
                    );
                }
            }
        }
        out
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The key of `known` that `key` most likely misspells: the nearest by
/// edit distance (a transposition counts one), within a quarter of its
/// length (at least 1, at most 3), as FM-007 suggests top-level keys.
fn nearest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let lower = key.to_lowercase();
    let limit = (lower.chars().count() / 4).clamp(1, 3);
    known
        .iter()
        .filter(|k| k.len().abs_diff(lower.len()) <= limit)
        .map(|k| (strsim::osa_distance(&lower, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The interpreter to suggest for `script`: python3 for a `.py` file (run
/// by a build with the `python3` feature), node otherwise.
fn interpreter_for(script: &str) -> &'static str {
    if script.ends_with(".py") {
        "python3"
    } else {
        "node"
    }
}

/// `s` as a `key: ` value, quoted when it must be.
fn scalar(s: &str) -> String {
    crate::frontmatter::scalar(s)
}

/// What to write instead of a declared script path the string check
/// refuses (the fence's rules, DECL-005): the path mended where that is
/// plain, else the rule to follow.
fn script_fix(script: &str, rule: fence::PathRule) -> String {
    use fence::PathRule;
    let mended = match rule {
        PathRule::Absolute => Some(script.trim_start_matches('/').to_owned()),
        PathRule::Backslash => Some(script.replace('\\', "/")),
        PathRule::EmptySegment => Some(
            script
                .split('/')
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("/"),
        ),
        PathRule::DotSegment if script.split('/').all(|s| s != "..") => Some(
            script
                .split('/')
                .filter(|s| *s != ".")
                .collect::<Vec<_>>()
                .join("/"),
        ),
        _ => None,
    }
    .filter(|m| fence::check_str(m).is_ok());
    match mended {
        Some(m) => format!("write it from the skill's own folder: script: {}", scalar(&m)),
        None if rule == PathRule::DotSegment => {
            "a script must be a file inside the skill's own folder: move it there and write its path from \
             that folder, like scripts/run.js"
                .to_owned()
        }
        None => "write the path from the skill's own folder with / between folders, like scripts/run.js".to_owned(),
    }
}

/// What to write for a `timeout` that is not a positive number of
/// seconds.
fn timeout_fix(value: &Value) -> String {
    let seconds = match value {
        Value::String(s) => {
            let t = s.trim();
            let t = t
                .strip_suffix("seconds")
                .or_else(|| t.strip_suffix('s'))
                .unwrap_or(t)
                .trim();
            t.parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n * 1000.0 >= 1.0)
        }
        _ => None,
    };
    match seconds {
        Some(n) if n <= MAX_TIMEOUT_SECS as f64 => {
            format!("write it as a number of seconds, unquoted: timeout: {n}")
        }
        _ => format!(
            "write timeout: <seconds>, a number from 0.001 to {MAX_TIMEOUT_SECS} (timeout: 30, say), or leave it \
             out for the default of {DEFAULT_TIMEOUT_SECS}"
        ),
    }
}

/// What to write instead of a variable name that is not one.
fn env_name_fix(name: &str) -> String {
    let mended: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if is_env_name(&mended) && mended != name {
        format!(
            "a variable name is letters, digits and _, not starting with a digit: {mended}, say"
        )
    } else {
        "a variable name is letters, digits and _, not starting with a digit".to_owned()
    }
}

/// The host of an egress entry written as a URL or `host:port`, when it is
/// a hostname.
fn host_of(s: &str) -> Option<&str> {
    let rest = s.split_once("://").map_or(s, |(_, r)| r);
    let host = rest.split(['/', ':', '?', '#']).next()?;
    (is_hostname(host) && host != s).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontmatter::parse;

    fn decl(yaml: &str) -> (Declaration, Vec<String>) {
        let fm = parse(yaml, 2).unwrap();
        let (d, notes) = read(&fm);
        (d, notes.into_iter().map(|(_, n)| n.message).collect())
    }

    #[test]
    fn a_full_block_reads() {
        let (d, notes) = decl(
            "mcp-host:\n  version: 1\n  run:\n    - script: scripts/f.js\n      interpreter: node\n      env: [API_KEY, API_KEY]\n      timeout: 30\n  env:\n    - name: API_KEY\n      secret: true\n  egress: [api.example, api.example]\n",
        );
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(
            d.run,
            vec![RunEntry {
                script: "scripts/f.js".into(),
                interpreter: "node".into(),
                env: vec!["API_KEY".into()],
                timeout_ms: 30_000
            }]
        );
        assert_eq!(d.env[0].name, "API_KEY");
        assert!(d.env[0].secret);
        assert_eq!(d.egress, vec!["api.example".to_owned()]);
    }

    #[test]
    fn an_unknown_major_version_is_refused_wholesale() {
        let (d, notes) =
            decl("mcp-host:\n  version: 2\n  run:\n    - script: a.js\n      interpreter: node\n");
        assert!(d.run.is_empty());
        assert!(notes[0].contains("major version 2"), "{notes:?}");
        let (d, _) = decl(
            "mcp-host:\n  version: 1.3\n  run:\n    - script: a.js\n      interpreter: node\n",
        );
        assert_eq!(d.run.len(), 1, "a minor version of major 1 is understood");
        let (d, notes) = decl("mcp-host:\n  run:\n    - script: a.js\n      interpreter: node\n");
        assert!(d.run.is_empty() && notes[0].contains("has no \"version\""));
    }

    #[test]
    fn unknown_keys_are_reported_by_name_and_ignored() {
        let (d, notes) = decl(
            "mcp-host:\n  version: 1\n  sandbox: true\n  run:\n    - script: a.js\n      interpreter: node\n      timeot: 5\n",
        );
        assert_eq!(d.run.len(), 1);
        assert!(notes.iter().any(|n| n.contains("\"sandbox\"")), "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("\"timeot\"")), "{notes:?}");
    }

    #[test]
    fn timeouts_default_clamp_and_refuse() {
        let (d, _) =
            decl("mcp-host:\n  version: 1\n  run:\n    - script: a.js\n      interpreter: node\n");
        assert_eq!(d.run[0].timeout_ms, 60_000);
        let (d, notes) = decl(
            "mcp-host:\n  version: 1\n  run:\n    - script: a.js\n      interpreter: node\n      timeout: 900\n",
        );
        assert_eq!(d.run[0].timeout_ms, 300_000);
        assert!(notes[0].contains("clamped"));
        let (d, _) = decl(
            "mcp-host:\n  version: 1\n  run:\n    - script: a.js\n      interpreter: node\n      timeout: 2.5\n",
        );
        assert_eq!(d.run[0].timeout_ms, 2_500);
        for bad in ["0", "-1", "\"30\"", ".nan", "yes"] {
            let (d, notes) = decl(&format!(
                "mcp-host:\n  version: 1\n  run:\n    - script: a.js\n      interpreter: node\n      timeout: {bad}\n"
            ));
            assert!(d.run.is_empty(), "timeout {bad} accepted");
            assert!(notes[0].contains("timeout"));
        }
    }

    #[test]
    fn timeout_boundaries() {
        let t = |v: &str| {
            decl(&format!(
                "mcp-host:\n  version: 1\n  run:\n    - script: a.js\n      interpreter: node\n      timeout: {v}\n"
            ))
        };
        let (d, notes) = t("300");
        assert_eq!(d.run[0].timeout_ms, 300_000);
        assert!(
            notes.is_empty(),
            "exactly the ceiling is not clamped: {notes:?}"
        );
        let (d, _) = t("0.001");
        assert_eq!(d.run[0].timeout_ms, 1, "a millisecond is the least");
        for tiny in ["0.0001", "-.inf", ".nan"] {
            let (d, notes) = t(tiny);
            assert!(
                d.run.is_empty() && notes[0].contains("positive number"),
                "{tiny}: {notes:?}"
            );
        }
        let (d, notes) = t(".inf");
        assert_eq!(d.run[0].timeout_ms, 300_000);
        assert!(notes[0].contains("clamped"));
    }

    #[test]
    fn versions_that_are_not_finite_non_negative_numbers_are_not_numbers() {
        for v in [".inf", "-1.5", ".nan"] {
            let (d, notes) = decl(&format!(
                "mcp-host:\n  version: {v}\n  run:\n    - script: a.js\n      interpreter: node\n"
            ));
            assert!(d.run.is_empty());
            assert!(
                notes[0].contains("not a version number") && notes[0].ends_with("write version: 1"),
                "{v}: {notes:?}"
            );
        }
    }

    #[test]
    fn entries_fail_alone() {
        let (d, notes) = decl(
            "mcp-host:\n  version: 1\n  run:\n    - script: ../x.js\n      interpreter: node\n    - script: ok.js\n      interpreter: node\n    - interpreter: node\n    - script: ok.js\n      interpreter: node\n    - script: e.js\n      interpreter: node\n      env: [LD_PRELOAD, \"1BAD\", GOOD]\n",
        );
        assert_eq!(
            d.run.iter().map(|e| e.script.as_str()).collect::<Vec<_>>(),
            ["ok.js", "e.js"]
        );
        assert_eq!(d.run[1].env, ["GOOD"]);
        assert_eq!(notes.len(), 5, "{notes:?}");
    }

    /// The notes a newcomer meets first, each with its fix (issue 41 §3).
    #[test]
    fn each_note_says_what_to_write() {
        let note = |yaml: &str| {
            let fm = parse(yaml, 2).unwrap();
            let (_, notes) = read(&fm);
            assert_eq!(notes.len(), 1, "{notes:?}");
            notes.into_iter().next().unwrap()
        };
        // No version: at the block's first key, where the line goes.
        let (reason, n) =
            note("name: a\nmcp-host:\n  run:\n    - script: a.js\n      interpreter: node\n");
        assert_eq!(reason, Reason::Declaration);
        assert_eq!(
            n.message,
            "\"mcp-host\" has no \"version\", so the block is ignored and the skill has no scripts: add the line \
             version: 1 under mcp-host:, indented as the keys below it are"
        );
        assert_eq!((n.line, n.column), (Some(4), Some(3)));
        // A clamp is its own reason, served, with the fix at the value.
        let (reason, n) = note(
            "mcp-host:\n  version: 1\n  run:\n    - script: a.js\n      interpreter: node\n      timeout: 600\n",
        );
        assert_eq!(reason, Reason::TimeoutClamped);
        assert_eq!(
            n.message,
            "\"mcp-host.run[0]\" asks for a 600s timeout, over the 300s ceiling, so it is clamped: the script runs \
             with 300s; set timeout: 300 or less"
        );
        assert_eq!((n.line, n.column), (Some(7), Some(16)));
        let entry = |more: &str| {
            note(&format!(
                "mcp-host:\n  version: 1\n  run:\n    - script: a.js\n      interpreter: node\n{more}"
            ))
            .1
            .message
        };
        assert!(
            entry("      timeout: \"30s\"\n")
                .ends_with("write it as a number of seconds, unquoted: timeout: 30"),
        );
        assert!(entry("      timout: 30\n").ends_with("did you mean \"timeout\"? rename it"));
        assert!(entry("      env: API_KEY\n").ends_with("write it as a list: env: [API_KEY]"));
        assert!(entry("      env: [api-key]\n").ends_with(
            "a variable name is letters, digits and _, not starting with a digit: API_KEY, say"
        ));
        assert!(
            entry("      env: [LD_PRELOAD]\n").ends_with(
                "remove it from env (an owner who needs it sets it for the interpreter outside this server)"
            )
        );
        let block = |more: &str| note(&format!("mcp-host:\n  version: 1\n{more}")).1.message;
        assert!(
            block("  egress: [\"https://api.example.com/v1\"]\n")
                .ends_with("is not a hostname (ignored): write the host alone: api.example.com")
        );
        assert!(
            block("  sandbox: true\n").ends_with(
                "the keys read there are version, run, env, egress and state; remove it"
            )
        );
        assert!(
            block("  run:\n    - script: /scripts/e.js\n      interpreter: node\n")
                .ends_with("write it from the skill's own folder: script: scripts/e.js")
        );
        assert!(
            block("  run:\n    - script: scripts\\e.js\n      interpreter: node\n")
                .ends_with("write it from the skill's own folder: script: scripts/e.js")
        );
        assert!(
            block("  run:\n    - scripts/e.py\n")
                .ends_with("write it as - script: scripts/e.py, with interpreter: python3 on the line below, under script:")
        );
        assert!(
            block("  run:\n    - script: e.js\n")
                .ends_with("add interpreter: node under its script: line")
        );
        let (_, n) = note("mcp-host:\n  version: \"1\"\n");
        assert_eq!(
            n.message,
            "\"mcp-host.version\" is \"1\", not a number, so the block is ignored and the skill has no scripts: \
             write version: 1"
        );
    }

    /// A script declared twice names the entry that declares it first, as
    /// written, though an entry before it was refused.
    #[test]
    fn a_second_declaration_names_the_first() {
        let (_, notes) = decl(
            "mcp-host:\n  version: 1\n  run:\n    - script: a.js\n    - script: b.js\n      interpreter: node\n    - script: b.js\n      interpreter: node\n",
        );
        assert!(
            notes[1]
                .ends_with("delete this entry, or merge it into the first, \"mcp-host.run[1]\""),
            "{notes:?}"
        );
    }

    #[test]
    fn notes_carry_positions() {
        let fm = parse("name: a\nmcp-host:\n  version: 1\n  bogus: 1\n", 2).unwrap();
        let (_, notes) = read(&fm);
        assert_eq!((notes[0].1.line, notes[0].1.column), (Some(5), Some(10)));
    }

    #[test]
    fn a_block_that_is_not_a_mapping_is_ignored() {
        for yaml in ["mcp-host:\n", "mcp-host: [1]\n", "mcp-host: yes\n"] {
            let (d, notes) = decl(yaml);
            assert_eq!(d, Declaration::default());
            assert!(notes[0].contains("not a mapping"), "{notes:?}");
        }
    }

    #[test]
    fn the_deny_list_covers_loader_glibc_openssl_node_and_python() {
        for name in [
            "LD_PRELOAD",
            "LD_AUDIT",
            "LD_LIBRARY_PATH",
            "DYLD_INSERT_LIBRARIES",
            "GCONV_PATH",
            "GLIBC_TUNABLES",
            "OPENSSL_CONF",
            "OPENSSL_MODULES",
            "SSL_CERT_FILE",
            "NODE_OPTIONS",
            "NODE_TLS_REJECT_UNAUTHORIZED",
            "NODE_V8_COVERAGE",
            "NODE_REDIRECT_WARNINGS",
            "NODE_EXTRA_CA_CERTS",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHON_BASIC_REPL",
            "MCP_SKILL_RUN",
        ] {
            assert!(reserved(name).is_some(), "{name}");
        }
        for name in [
            "NODE_ENV",
            "API_KEY",
            "GOOD",
            "ld_preload",
            "NODEJS",
            "TMPDIR",
        ] {
            assert_eq!(reserved(name), None, "{name}");
        }
    }
}
