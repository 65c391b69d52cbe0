//! The closed interpreter set (README "An interpreter from a closed set";
//! "What v1 cannot run").
//!
//! A script's interpreter is the name its declaration gives, looked up
//! here — never inferred from the file's extension and never taken from its
//! shebang, since a file that can choose its own interpreter has already
//! chosen its own program. Each name maps to one executable, resolved once
//! per snapshot from the boot environment: a path pinned at build time where the packaging provides one
//! (`SKILL_MCP_NODE`, `SKILL_MCP_PYTHON3`), else the first match on the
//! boot `PATH` (spec RUN-004).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The names in this build's set. `node` always; `python3` only in a build
/// with the `python3` feature (the Nix `with-python` package).
pub(crate) fn names() -> &'static [&'static str] {
    if cfg!(feature = "python3") {
        &["node", "python3"]
    } else {
        &["node"]
    }
}

fn pinned(name: &str) -> Option<&'static str> {
    match name {
        "node" => option_env!("SKILL_MCP_NODE"),
        "python3" => option_env!("SKILL_MCP_PYTHON3"),
        _ => None,
    }
}

/// One member of the set and where its executable is, if anywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Interpreter {
    pub(crate) name: &'static str,
    pub(crate) path: Option<PathBuf>,
}

/// The set as resolved from the boot `PATH`, once per snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Interpreters {
    members: Vec<Interpreter>,
    /// Why nothing runs here whatever a script declares (HTTP-009).
    off: Option<&'static str>,
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl Interpreters {
    /// Resolves every name in the set against `path_var` (the boot `PATH`).
    pub(crate) fn resolve(path_var: Option<&OsStr>) -> Interpreters {
        let search = |name: &str| -> Option<PathBuf> {
            std::env::split_paths(path_var?)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join(name))
                .find(|p| is_executable(p))
        };
        let members = names()
            .iter()
            .map(|&name| Interpreter {
                name,
                path: pinned(name)
                    .map(PathBuf::from)
                    .filter(|p| is_executable(p))
                    .or_else(|| search(name)),
            })
            .collect();
        Interpreters { members, off: None }
    }

    /// The same set with every lookup refused for `why` (HTTP-009: over
    /// HTTP without `--http-allow-run`, so that `skill_list` and
    /// `skill_load` list no script as runnable where no run is offered).
    pub(crate) fn off(self, why: Option<&'static str>) -> Interpreters {
        Interpreters { off: why, ..self }
    }

    /// The names, for messages: "this deployment runs: node".
    pub(crate) fn listed(&self) -> String {
        self.members
            .iter()
            .map(|m| m.name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The executable for `name`, or why a script naming it cannot run
    /// here and what to do about it (issue 41 §3).
    pub(crate) fn lookup(&self, name: &str) -> Result<&Path, String> {
        if let Some(why) = self.off {
            return Err(why.to_owned());
        }
        match self.members.iter().find(|m| m.name == name) {
            None => Err(format!(
                "declares the interpreter {name:?}; this deployment runs: {}; {}",
                self.listed(),
                self.outside_fix(name)
            )),
            Some(Interpreter { path: Some(p), .. }) => Ok(p),
            Some(Interpreter { path: None, .. }) => Err(format!(
                "declares the interpreter {name:?}, whose executable is not installed here (none on PATH); this \
                 deployment runs: {}; install {name} where the PATH the server starts with finds it",
                self.listed()
            )),
        }
    }

    /// What to do about a script whose interpreter `name` is outside this
    /// build's set: the build that runs it, or the name it likely means.
    fn outside_fix(&self, name: &str) -> String {
        let meant = KNOWN
            .iter()
            .copied()
            .find(|k| name != *k && name.starts_with(k.trim_end_matches('3')))
            .or_else(|| {
                KNOWN
                    .iter()
                    .copied()
                    .find(|k| strsim::osa_distance(name, k) <= 2)
            });
        let here = |k: &str| self.members.iter().any(|m| m.name == k);
        match meant {
            Some(k) if here(k) => format!("did you mean interpreter: {k}?"),
            Some(k) if k == name => format!(
                "a build with --features {k} runs {k} scripts (cargo install --features {k}, or the Nix package \
                 with-python); or declare interpreter: node for a script node can run"
            ),
            Some(k) => format!(
                "it likely means {k}, which a build with --features {k} runs (cargo install --features {k}, or \
                 the Nix package with-python): declare interpreter: {k} and serve it with such a build, or \
                 declare interpreter: node for a script node can run"
            ),
            None => format!(
                "no build of this server runs {name:?}: declare interpreter: {} for a script it can run",
                self.members.first().map_or("node", |m| m.name)
            ),
        }
    }
}

/// Every interpreter some build of this server runs: node always, python3
/// with the `python3` feature.
const KNOWN: &[&str] = &["node", "python3"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_outside_the_set_is_refused_naming_the_set() {
        let set = Interpreters::resolve(None);
        let err = set.lookup("python3").unwrap_err();
        if cfg!(feature = "python3") {
            assert!(err.contains("not installed"), "{err}");
        } else {
            assert_eq!(
                err,
                "declares the interpreter \"python3\"; this deployment runs: node; a build with --features \
                 python3 runs python3 scripts (cargo install --features python3, or the Nix package \
                 with-python); or declare interpreter: node for a script node can run"
            );
        }
        assert!(set.lookup("constructor").is_err());
    }

    /// A name outside the set is told what to do: the build that runs
    /// python3, the name a near miss means, or the one this build runs.
    #[test]
    fn a_name_outside_the_set_is_told_what_to_do() {
        let set = Interpreters::resolve(None);
        let err = |name: &str| set.lookup(name).unwrap_err();
        assert!(
            err("nodejs").ends_with("; did you mean interpreter: node?"),
            "{}",
            err("nodejs")
        );
        assert!(
            err("ruby").ends_with("; no build of this server runs \"ruby\": declare interpreter: node for a script it can run"),
            "{}",
            err("ruby")
        );
        if !cfg!(feature = "python3") {
            assert!(
                err("python").ends_with(
                    "; it likely means python3, which a build with --features python3 runs (cargo install --features \
                     python3, or the Nix package with-python): declare interpreter: python3 and serve it with such a \
                     build, or declare interpreter: node for a script node can run"
                ),
                "{}",
                err("python")
            );
        } else {
            assert!(
                err("python").ends_with("; did you mean interpreter: python3?"),
                "{}",
                err("python")
            );
        }
    }

    #[test]
    fn a_member_is_found_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("node");
        std::fs::write(&node, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
        let set = Interpreters::resolve(Some(dir.path().as_os_str()));
        if pinned("node").is_none() {
            assert_eq!(set.lookup("node").unwrap(), node);
        }
        let empty = tempfile::tempdir().unwrap();
        if pinned("node").is_none() {
            assert!(
                Interpreters::resolve(Some(empty.path().as_os_str()))
                    .lookup("node")
                    .unwrap_err()
                    .contains("not installed")
            );
        }
    }
}
