//! How a fixture reaches an implementation (`--adapter FILE`,
//! conformance/sep-2640/README.md, *Adapters*): each implementation takes
//! its skills directory its own way — an environment variable, an
//! argument, a configuration file — and a small JSON file says which, so
//! another implementation needs no change to the runner.
//!
//! `${SKILLS}` is the fixture's root (`${WORK}/tree`), `${WORK}` the
//! unit's work dir.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::case::RelPath;

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Adapter {
    /// What implementation this is, for the report.
    #[serde(default)]
    pub name: Option<String>,
    /// Variables set for the server (beside PATH, HOME, TMPDIR and LANG).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Arguments added after `--server`'s.
    #[serde(default)]
    pub args: Vec<String>,
    /// Files written below `${WORK}` before the server starts (a
    /// configuration naming `${SKILLS}`), path → text.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Free text: where this adapter's facts come from.
    #[serde(default)]
    pub note: Option<String>,
}

impl Default for Adapter {
    /// `SKILLS_DIR=${SKILLS}`: this repository's server and rmcp's peer.
    fn default() -> Adapter {
        Adapter {
            name: None,
            env: BTreeMap::from([("SKILLS_DIR".to_string(), "${SKILLS}".to_string())]),
            args: Vec::new(),
            files: BTreeMap::new(),
            note: None,
        }
    }
}

/// What the adapter makes of one unit's work dir.
#[derive(Debug, PartialEq)]
pub struct Applied {
    pub env: Vec<(String, String)>,
    pub args: Vec<String>,
    /// Below `${WORK}`: the path and the text to write.
    pub files: Vec<(RelPath, String)>,
}

impl Adapter {
    pub fn read(path: &Path) -> Result<Adapter, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--adapter: cannot read {}: {e}", path.display()))?;
        let a: Adapter = serde_json::from_str(&text)
            .map_err(|e| format!("--adapter {}: {e}", path.display()))?;
        a.check()
            .map_err(|e| format!("--adapter {}: {e}", path.display()))?;
        Ok(a)
    }

    fn check(&self) -> Result<(), String> {
        for k in self.env.keys() {
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                return Err(format!("env: `{k}` is not a variable name"));
            }
        }
        for p in self.files.keys() {
            RelPath::parse(p, false).map_err(|e| format!("files: {e}"))?;
        }
        if self.env.is_empty() && self.args.is_empty() && self.files.is_empty() {
            return Err(
                "it says nothing of how the server gets its skills directory (env, args or files)"
                    .into(),
            );
        }
        let all = self
            .env
            .values()
            .chain(&self.args)
            .chain(self.files.values());
        if !all.into_iter().any(|v| v.contains("${SKILLS}")) {
            return Err("no value names ${SKILLS}, the fixture's root".into());
        }
        Ok(())
    }

    /// Its values with `${SKILLS}` and `${WORK}` substituted.
    pub fn apply(&self, work: &str) -> Result<Applied, String> {
        let sub = |s: &str| {
            s.replace("${SKILLS}", &format!("{work}/tree"))
                .replace("${WORK}", work)
        };
        Ok(Applied {
            env: self.env.iter().map(|(k, v)| (k.clone(), sub(v))).collect(),
            args: self.args.iter().map(|a| sub(a)).collect(),
            files: self
                .files
                .iter()
                .map(|(p, t)| Ok((RelPath::parse(p, false)?, sub(t))))
                .collect::<Result<_, String>>()?,
        })
    }

    /// One line for the report's header.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in &self.env {
            parts.push(format!("{k}={v}"));
        }
        if !self.args.is_empty() {
            parts.push(format!("args {}", self.args.join(" ")));
        }
        for p in self.files.keys() {
            parts.push(format!("file {p}"));
        }
        match &self.name {
            Some(n) => format!("{n}: {}", parts.join(", ")),
            None => parts.join(", "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adapter_says_where_the_skills_are_in_the_implementation_s_terms() {
        let a: Adapter = serde_json::from_str(
            r#"{"name": "x", "args": ["--root", "${SKILLS}"], "files": {"conf/x.toml": "root = \"${SKILLS}\"\nwork = \"${WORK}\""}}"#,
        )
        .unwrap();
        a.check().unwrap();
        let got = a.apply("/w").unwrap();
        assert_eq!(got.args, ["--root", "/w/tree"]);
        assert_eq!(got.files[0].0.text, "conf/x.toml");
        assert_eq!(got.files[0].1, "root = \"/w/tree\"\nwork = \"/w\"");
        let d = Adapter::default().apply("/w").unwrap();
        assert_eq!(d.env, [("SKILLS_DIR".to_string(), "/w/tree".to_string())]);
        for bad in [
            r#"{"env": {"A": "/fixed"}}"#,
            r#"{}"#,
            r#"{"files": {"../x": "${SKILLS}"}}"#,
            r#"{"env": {"A=B": "${SKILLS}"}}"#,
        ] {
            let a: Adapter = serde_json::from_str(bad).unwrap();
            assert!(a.check().is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<Adapter>(r#"{"envs": {}}"#).is_err());
    }

    #[test]
    fn every_adapter_of_the_suite_reads() {
        let dir =
            std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../sep-2640/adapters"));
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            Adapter::read(&p).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
        assert!(n >= 2, "{n} adapters");
    }
}
