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

    /// The executable for `name`, or why a script naming it cannot run here.
    pub(crate) fn lookup(&self, name: &str) -> Result<&Path, String> {
        if let Some(why) = self.off {
            return Err(why.to_owned());
        }
        match self.members.iter().find(|m| m.name == name) {
            None => Err(format!(
                "declares the interpreter {name:?}; this deployment runs: {}",
                self.listed()
            )),
            Some(Interpreter { path: Some(p), .. }) => Ok(p),
            Some(Interpreter { path: None, .. }) => Err(format!(
                "declares the interpreter {name:?}, whose executable is not installed here (none on PATH); this deployment runs: {}",
                self.listed()
            )),
        }
    }
}

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
                "declares the interpreter \"python3\"; this deployment runs: node"
            );
        }
        assert!(set.lookup("constructor").is_err());
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
