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
pub fn read(fm: &Frontmatter) -> (Declaration, Vec<Note>) {
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
    notes: Vec<Note>,
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
        self.notes
            .push(Note::at(self.positions, &path.segs(), message));
    }

    fn unknown_keys(&mut self, map: &serde_yaml_ng::Mapping, path: &At<'_>, known: &[&str]) {
        for k in map.keys() {
            match k {
                Value::String(s) if known.contains(&s.as_str()) => {}
                Value::String(s) => self.note(
                    &path.key(s),
                    format!("unknown key {s:?} in \"{path}\" (ignored)"),
                ),
                _ => self.note(
                    path,
                    format!("a key in \"{path}\" that is not a string (ignored)"),
                ),
            }
        }
    }

    fn block(&mut self, block: &Value) -> Option<Declaration> {
        let path = At::top(BLOCK_KEY);
        let Value::Mapping(map) = block else {
            self.note(
                &path,
                "\"mcp-host\" is not a mapping — the block is ignored".into(),
            );
            return None;
        };
        let vpath = path.key("version");
        let major = match map.get("version") {
            Some(Value::Number(n)) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .map(|f| f.trunc() as u64)
            }),
            _ => None,
        };
        match major {
            None => {
                self.note(
                    &vpath,
                    "\"mcp-host.version\" is missing or not a number — the block is ignored".into(),
                );
                return None;
            }
            Some(v) if v != VERSION => {
                self.note(
                    &vpath,
                    format!("\"mcp-host\" declares major version {v}; this server understands version {VERSION} — the block is ignored"),
                );
                return None;
            }
            Some(_) => {}
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
            self.note(path, "\"mcp-host.run\" is not a list (ignored)".into());
            return Vec::new();
        };
        let mut out: Vec<RunEntry> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            if let Some(entry) = self.run_entry(item, &p) {
                if out.iter().any(|e| e.script == entry.script) {
                    self.note(
                        &p,
                        format!(
                            "\"{p}\" declares {:?} a second time (ignored)",
                            entry.script
                        ),
                    );
                } else {
                    out.push(entry);
                }
            }
        }
        out
    }

    fn run_entry(&mut self, item: &Value, p: &At<'_>) -> Option<RunEntry> {
        let Value::Mapping(map) = item else {
            self.note(p, format!("\"{p}\" is not a mapping (ignored)"));
            return None;
        };
        self.unknown_keys(map, p, &["script", "interpreter", "env", "timeout"]);
        let Some(Value::String(script)) = map.get("script") else {
            self.note(p, format!("\"{p}\" has no string \"script\" (ignored)"));
            return None;
        };
        if let Err(rule) = fence::check_str(script) {
            self.note(
                &p.key("script"),
                format!(
                    "\"{p}\" script {script:?} is not usable: {} (ignored)",
                    rule.describe()
                ),
            );
            return None;
        }
        let Some(Value::String(interpreter)) = map.get("interpreter") else {
            self.note(
                p,
                format!("\"{p}\" has no string \"interpreter\" (ignored)"),
            );
            return None;
        };
        let timeout_ms = match map.get("timeout") {
            None => DEFAULT_TIMEOUT_SECS * 1000,
            Some(Value::Number(n)) => {
                // At least a millisecond; NaN and negatives fail this too.
                match n.as_f64() {
                    Some(s) if s * 1000.0 >= 1.0 => {
                        if s > MAX_TIMEOUT_SECS as f64 {
                            self.note(
                                &p.key("timeout"),
                                format!("\"{p}\" asks for a {s}s timeout; clamped to the {MAX_TIMEOUT_SECS}s ceiling"),
                            );
                            MAX_TIMEOUT_SECS * 1000
                        } else {
                            (s * 1000.0).round() as u64
                        }
                    }
                    _ => {
                        self.note(&p.key("timeout"), format!("\"{p}\" has a \"timeout\" that is not a positive number of seconds (ignored)"));
                        return None;
                    }
                }
            }
            Some(_) => {
                self.note(&p.key("timeout"), format!("\"{p}\" has a \"timeout\" that is not a positive number of seconds (ignored)"));
                return None;
            }
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
                                "\"{p}\" asks for {name:?}, which is not a variable name (ignored)"
                            ),
                        ),
                        Value::String(name) => match reserved(name) {
                            Some(why) => self.note(
                                &np,
                                format!(
                                    "\"{p}\" asks for {name:?}, a variable {why}; no script may be handed \
                                     it (DECL-006) — refused"
                                ),
                            ),
                            None if !env.contains(name) => env.push(name.clone()),
                            None => {}
                        },
                        _ => self.note(
                            &np,
                            format!("\"{p}\" has an \"env\" entry that is not a string (ignored)"),
                        ),
                    }
                }
                env
            }
            Some(_) => {
                self.note(
                    &p.key("env"),
                    format!("\"{p}\" has an \"env\" that is not a list (ignored)"),
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
            self.note(path, "\"mcp-host.env\" is not a list (ignored)".into());
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let p = path.index(i);
            let Value::Mapping(map) = item else {
                self.note(&p, format!("\"{p}\" is not a mapping (ignored)"));
                continue;
            };
            self.unknown_keys(map, &p, &["name", "secret", "description", "required"]);
            let Some(Value::String(name)) = map
                .get("name")
                .filter(|n| n.as_str().is_some_and(is_env_name))
            else {
                self.note(&p, format!("\"{p}\" has no valid \"name\" (ignored)"));
                continue;
            };
            let mut flag = |k: &str| match map.get(k) {
                None => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => {
                    self.note(
                        &p.key(k),
                        format!("\"{p}\" has a {k:?} that is not a boolean (ignored)"),
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
            self.note(path, "\"mcp-host.egress\" is not a list (ignored)".into());
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
                _ => self.note(
                    &path.index(i),
                    "\"mcp-host.egress\" holds an entry that is not a hostname (ignored)".into(),
                ),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontmatter::parse;

    fn decl(yaml: &str) -> (Declaration, Vec<String>) {
        let fm = parse(yaml, 2).unwrap();
        let (d, notes) = read(&fm);
        (d, notes.into_iter().map(|n| n.message).collect())
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
        assert!(d.run.is_empty() && notes[0].contains("missing"));
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
                notes[0].contains("missing or not a number"),
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

    #[test]
    fn notes_carry_positions() {
        let fm = parse("name: a\nmcp-host:\n  version: 1\n  bogus: 1\n", 2).unwrap();
        let (_, notes) = read(&fm);
        assert_eq!((notes[0].line, notes[0].column), (Some(5), Some(10)));
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
