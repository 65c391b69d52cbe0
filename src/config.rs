//! Reading the environment once, into a typed [`Config`] (README
//! "Configuration"). No other module reads the environment: everything
//! downstream gets what it needs from here, so a test can build a `Config`
//! from a map and the process environment is consulted exactly once.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;

/// Variables mcp-host's runner injects. Any one present means a host
/// started this process (README: "Hosted — any variable mcp-host's runner
/// injects is present"), whatever supplied the roots.
pub(crate) const HOSTED_MARKERS: &[&str] = &[
    "MCP_SKILLS_PATH",
    "MCP_HOST_METER_FILE",
    "MCP_DATA_DIR",
    "MCP_BLOB_BASE_URL",
];

/// Proxy variables (spec RUN-016). On the isolated tier a script reaches the
/// network only through a loopback proxy, which the host names in one of
/// these; any one set, non-empty, in the server's environment makes the
/// machine look fenced. Upper and lower case both, as HTTP clients read
/// both.
pub(crate) const PROXY_VARS: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// Where the roots came from (`rootsFrom` in `skill_list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub enum RootsFrom {
    #[serde(rename = "MCP_SKILLS_PATH")]
    McpSkillsPath,
    #[serde(rename = "SKILLS_DIR")]
    SkillsDir,
    /// Neither was set: this package's own bundled `skills/`.
    #[serde(rename = "default")]
    Default,
}

/// Everything the server takes from its environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// Absolute roots in configured order (joined to the working directory,
    /// not resolved: `skill_list` reports them as configured).
    pub roots: Vec<PathBuf>,
    pub roots_from: RootsFrom,
    /// Each root written with a leading `~`, by its absolute path, to the
    /// path as written: no shell read it, so `~` names a directory called
    /// `~`, and an unreadable one says so (spec CONF-009).
    pub tilde_roots: BTreeMap<PathBuf, PathBuf>,
    /// Each root written as a relative path, by its absolute path, to the
    /// path as written: a client starts the server in a directory of its
    /// own choosing, so an unreadable one says what it was read as
    /// (CONF-004).
    pub relative_roots: BTreeMap<PathBuf, PathBuf>,
    /// `SKILLS_DIR` was set but blank, and the default roots are served
    /// for it (CONF-002): said, since an unset shell variable in a
    /// client's configuration would otherwise serve the example in silence.
    pub blank_skills_dir: bool,
    /// The hosted markers that are present, in [`HOSTED_MARKERS`] order.
    pub hosted_markers: Vec<&'static str>,
    /// The proxy variables set non-empty, in [`PROXY_VARS`] order. They
    /// make the machine look fenced; they never mark a host.
    pub proxy_vars: Vec<&'static str>,
    /// `MCP_SKILL_RUN` as given, when set and not blank.
    pub grant: Option<String>,
    /// `SKILL_MCP_WATCH` asks for the opt-in reload mode (`1` or `true`).
    pub watch: bool,
    /// The whole environment as it was at boot. `run` picks the allowlist
    /// and granted names out of it; nothing else is ever handed on.
    pub env: BTreeMap<OsString, OsString>,
}

/// A value counts as set when it holds something besides whitespace.
fn non_blank(v: Option<&OsString>) -> Option<&OsStr> {
    v.map(OsString::as_os_str)
        .filter(|v| v.to_str().is_none_or(|s| !s.trim().is_empty()))
}

/// Splits a `:`-separated list of roots, dropping empty parts, and makes
/// each absolute against `cwd`; each written with a leading `~` is also
/// kept as written (CONF-009).
fn split_roots(value: &OsStr, cwd: &Path) -> Split {
    let mut split = Split::default();
    for p in std::env::split_paths(value)
        .filter(|p| !p.as_os_str().is_empty() && p.to_str().is_none_or(|s| !s.trim().is_empty()))
    {
        let root = cwd.join(&p);
        if p.as_os_str().as_encoded_bytes().first() == Some(&b'~') {
            split.tilde.insert(root.clone(), p);
        } else if p.is_relative() {
            split.relative.insert(root.clone(), p);
        }
        split.roots.push(root);
    }
    split
}

/// Roots as [`split_roots`] reads them, with how each was written.
#[derive(Default)]
struct Split {
    roots: Vec<PathBuf>,
    tilde: BTreeMap<PathBuf, PathBuf>,
    relative: BTreeMap<PathBuf, PathBuf>,
}

impl Config {
    /// Builds the configuration from an environment snapshot (spec
    /// CONF-001..CONF-003): `MCP_SKILLS_PATH` wins when it names at least
    /// one root; else `SKILLS_DIR`; else `default_root`.
    pub fn from_env(
        env: BTreeMap<OsString, OsString>,
        cwd: &Path,
        default_root: PathBuf,
    ) -> Config {
        let get = |k: &str| env.get(OsStr::new(k));
        let from = |k: &str| {
            non_blank(get(k))
                .map(|v| split_roots(v, cwd))
                .filter(|r| !r.roots.is_empty())
        };
        let (split, roots_from) = if let Some(r) = from("MCP_SKILLS_PATH") {
            (r, RootsFrom::McpSkillsPath)
        } else if let Some(r) = from("SKILLS_DIR") {
            (r, RootsFrom::SkillsDir)
        } else {
            let default = Split {
                roots: vec![default_root],
                ..Split::default()
            };
            (default, RootsFrom::Default)
        };
        let blank_skills_dir = roots_from == RootsFrom::Default && get("SKILLS_DIR").is_some();
        let Split {
            roots,
            tilde: tilde_roots,
            relative: relative_roots,
        } = split;
        // Presence alone marks a host, even empty: the check may only ever
        // move the default toward fail-closed (spec GRANT-004).
        let hosted_markers = HOSTED_MARKERS
            .iter()
            .copied()
            .filter(|k| get(k).is_some())
            .collect();
        let proxy_vars = PROXY_VARS
            .iter()
            .copied()
            .filter(|k| get(k).is_some_and(|v| !v.is_empty()))
            .collect();
        let grant = non_blank(get("MCP_SKILL_RUN")).map(|v| v.to_string_lossy().into_owned());
        let watch = get("SKILL_MCP_WATCH")
            .and_then(|v| v.to_str())
            .is_some_and(|v| matches!(v.trim(), "1" | "true"));
        Config {
            roots,
            roots_from,
            tilde_roots,
            relative_roots,
            blank_skills_dir,
            hosted_markers,
            proxy_vars,
            grant,
            watch,
            env,
        }
    }

    /// Reads the process environment (the only place that does). Serving
    /// wipes it right after (spec RUN-024), so this is its one reading.
    pub fn from_process(default_root: PathBuf) -> Config {
        let env = std::env::vars_os().collect();
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Config::from_env(env, &cwd, default_root)
    }

    /// True when a host started this process.
    pub(crate) fn hosted(&self) -> bool {
        !self.hosted_markers.is_empty()
    }

    /// True when the machine looks fenced (spec RUN-016): a host started
    /// this process (any hosted marker), or the server's environment names
    /// a proxy (any of [`PROXY_VARS`] set, non-empty), which is how a
    /// script on the isolated tier reaches the network. A failed run gets
    /// the note that a blocked host shows as a 403 or a timeout. A proxy
    /// alone does not make the server hosted: the grant and `--watch` go by
    /// [`Config::hosted`].
    pub(crate) fn looks_fenced(&self) -> bool {
        self.hosted() || !self.proxy_vars.is_empty()
    }

    /// What to add to the `root-unreadable` detail of `root` when it was
    /// written with a leading `~` (spec CONF-009): that `~` is not
    /// expanded, and the path to write instead when `HOME` says it.
    pub(crate) fn tilde_hint(&self, root: &Path) -> Option<String> {
        let written = self.tilde_roots.get(root)?;
        let home = self.var("HOME").filter(|h| !h.is_empty()).map(Path::new);
        // `~` and `~/x` name HOME (a component of its own); `~user/x`
        // names another user's home, which is not known here.
        let instead = match (home, written.strip_prefix("~")) {
            (Some(home), Ok(rest)) if rest.as_os_str().is_empty() => {
                format!(", {}", home.display())
            }
            (Some(home), Ok(rest)) => format!(", {}", home.join(rest).display()),
            _ => String::new(),
        };
        Some(format!(
            "; it was written {:?}, and `~` is not expanded here (no shell reads this setting, \
             so `~` is taken as a directory's name): write the path out in full{instead}",
            written.to_string_lossy()
        ))
    }

    /// What to add to the `root-unreadable` detail of `root` when it was
    /// written as a relative path (CONF-004): what it was read as, since a
    /// client starts the server in a directory of its own choosing.
    pub(crate) fn relative_hint(&self, root: &Path) -> Option<String> {
        let written = self.relative_roots.get(root)?;
        Some(format!(
            "; it was written {:?}, a relative path, so it was read against the server's working directory, \
             as {} (a client starts the server in a directory of its own choosing): write the path out in full",
            written.to_string_lossy(),
            root.display()
        ))
    }

    /// Why the default roots are served when `SKILLS_DIR` was set but
    /// blank (CONF-002): most often a shell variable that was not set.
    pub(crate) fn blank_roots_note(&self) -> Option<String> {
        self.blank_skills_dir.then(|| {
            format!(
                "SKILLS_DIR is set but empty, so the bundled skills ({}) are served instead of yours: set it to \
                 your skills folder (an absolute path), or unset it",
                self.roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            )
        })
    }

    /// Why `SKILL_MCP_WATCH` was not understood, when it holds something
    /// other than `1`/`true` (watch) or `0`/`false`/empty (do not): a
    /// `yes` or `on` is not silently read as off (RELOAD-001).
    pub(crate) fn watch_refusal(&self) -> Option<String> {
        let raw = self.var("SKILL_MCP_WATCH")?;
        let v = raw.to_string_lossy();
        match v.trim() {
            "" | "0" | "false" | "1" | "true" => None,
            other => Some(format!(
                "SKILL_MCP_WATCH is {}, which is neither 1/true (watch the roots) nor 0/false (do not) (RELOAD-001); \
                 the roots are not watched: set it to 1, or pass --watch",
                crate::echo::excerpt(other)
            )),
        }
    }

    /// A variable from the boot environment.
    pub fn var(&self, name: &str) -> Option<&OsStr> {
        self.env.get(OsStr::new(name)).map(OsString::as_os_str)
    }
}

/// The bundled `skills/` directory (spec CONF-005). An installed binary
/// finds it beside itself first (`<exe>/../share/skill-mcp/skills`, the
/// layout the Nix package and the image use), then at the path fixed at
/// build time (`SKILL_MCP_SKILLS_DIR`, else the checkout it was built from).
pub fn default_skills_dir() -> PathBuf {
    let beside_exe = std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.parent()
                .map(|bin| bin.join("../share/skill-mcp/skills"))
        })
        .filter(|p| p.is_dir());
    let built_in = PathBuf::from(
        option_env!("SKILL_MCP_SKILLS_DIR")
            .unwrap_or(concat!(env!("CARGO_MANIFEST_DIR"), "/skills")),
    );
    beside_exe.unwrap_or(built_in)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(vars: &[(&str, &str)]) -> Config {
        let env = vars
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
        Config::from_env(env, Path::new("/work"), PathBuf::from("/pkg/skills"))
    }

    #[test]
    fn precedence_is_mcp_skills_path_then_skills_dir_then_default() {
        let c = cfg(&[("MCP_SKILLS_PATH", "/a:b"), ("SKILLS_DIR", "/c")]);
        assert_eq!(c.roots, [PathBuf::from("/a"), PathBuf::from("/work/b")]);
        assert_eq!(c.roots_from, RootsFrom::McpSkillsPath);
        let c = cfg(&[("SKILLS_DIR", "/c::/d")]);
        assert_eq!(c.roots, [PathBuf::from("/c"), PathBuf::from("/d")]);
        assert_eq!(c.roots_from, RootsFrom::SkillsDir);
        let c = cfg(&[]);
        assert_eq!(c.roots, [PathBuf::from("/pkg/skills")]);
        assert_eq!(c.roots_from, RootsFrom::Default);
    }

    #[test]
    fn a_root_written_with_a_tilde_is_taken_as_written_and_hinted() {
        let c = cfg(&[
            ("SKILLS_DIR", "~/skills:~:~bob/s:/x/~y"),
            ("HOME", "/home/me"),
        ]);
        assert_eq!(c.roots[0], PathBuf::from("/work/~/skills"));
        let hint = |r: &str| c.tilde_hint(Path::new(r));
        assert!(
            hint("/work/~/skills").is_some_and(|h| h.contains("`~` is not expanded")
                && h.ends_with("write the path out in full, /home/me/skills")),
            "{:?}",
            hint("/work/~/skills")
        );
        assert!(hint("/work/~").is_some_and(|h| h.ends_with("in full, /home/me")));
        // Another user's home is not known here: no path is suggested.
        assert!(hint("/work/~bob/s").is_some_and(|h| h.ends_with("in full")));
        // A `~` further down a path is a name someone chose.
        assert_eq!(hint("/x/~y"), None);
        let no_home = cfg(&[("SKILLS_DIR", "~/skills")]);
        assert!(
            no_home
                .tilde_hint(Path::new("/work/~/skills"))
                .is_some_and(|h| h.ends_with("write the path out in full"))
        );
    }

    #[test]
    fn a_blank_mcp_skills_path_falls_through_but_still_marks_a_host() {
        let c = cfg(&[("MCP_SKILLS_PATH", "  "), ("SKILLS_DIR", "/c")]);
        assert_eq!(c.roots_from, RootsFrom::SkillsDir);
        assert!(c.hosted());
    }

    #[test]
    fn each_marker_alone_marks_a_host() {
        for m in HOSTED_MARKERS {
            assert_eq!(cfg(&[(m, "x")]).hosted_markers, [*m]);
        }
        assert!(!cfg(&[("SKILLS_DIR", "/x")]).hosted());
    }

    #[test]
    fn a_proxy_variable_in_either_case_looks_fenced_but_is_no_host() {
        for v in PROXY_VARS {
            let c = cfg(&[(v, "http://127.0.0.1:3128")]);
            assert_eq!(c.proxy_vars, [*v]);
            assert!(c.looks_fenced(), "{v}");
            assert!(!c.hosted(), "{v} is not a hosted marker");
        }
        assert!(
            !cfg(&[("HTTPS_PROXY", "")]).looks_fenced(),
            "an empty proxy is none"
        );
        assert!(!cfg(&[("Https_Proxy", "x"), ("NO_PROXY", "x")]).looks_fenced());
        assert!(
            cfg(&[("MCP_DATA_DIR", "/d")]).looks_fenced(),
            "a hosted marker"
        );
        assert!(!cfg(&[("SKILLS_DIR", "/x")]).looks_fenced(), "standalone");
    }

    #[test]
    fn a_blank_grant_is_absent() {
        assert_eq!(cfg(&[("MCP_SKILL_RUN", " ")]).grant, None);
        assert_eq!(cfg(&[("MCP_SKILL_RUN", "[]")]).grant.as_deref(), Some("[]"));
    }
}
