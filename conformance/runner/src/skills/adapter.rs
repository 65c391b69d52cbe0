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
    /// Over Streamable HTTP (`--url`) only: what else the server needs
    /// to listen (`{"args": ["--http", "127.0.0.1:0"]}`); `${PORT}` is
    /// the free port the runner picked when `--url` names one.
    #[serde(default)]
    pub http: Option<HttpPart>,
    /// Free text: where this adapter's facts come from.
    #[serde(default)]
    pub note: Option<String>,
}

/// The adapter's `http` member.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct HttpPart {
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub args: Vec<String>,
}

impl Default for Adapter {
    /// `SKILLS_DIR=${SKILLS}`: this repository's server and rmcp's peer.
    fn default() -> Adapter {
        Adapter {
            name: None,
            env: BTreeMap::from([("SKILLS_DIR".to_string(), "${SKILLS}".to_string())]),
            args: Vec::new(),
            files: BTreeMap::new(),
            http: None,
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
        let http_env = self.http.iter().flat_map(|h| h.env.keys());
        for k in self.env.keys().chain(http_env) {
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

    /// Its values with `${SKILLS}`, `${WORK}` and `${PORT}` substituted;
    /// over HTTP, with its `http` part added.
    pub fn apply(&self, work: &str, http: bool, port: Option<u16>) -> Result<Applied, String> {
        let port = port.map(|p| p.to_string()).unwrap_or_default();
        let sub = |s: &str| {
            s.replace("${SKILLS}", &format!("{work}/tree"))
                .replace("${WORK}", work)
                .replace("${PORT}", &port)
        };
        let extra = self.http.as_ref().filter(|_| http);
        let mut env: BTreeMap<&String, &String> = self.env.iter().collect();
        env.extend(extra.iter().flat_map(|h| h.env.iter()));
        Ok(Applied {
            env: env.into_iter().map(|(k, v)| (k.clone(), sub(v))).collect(),
            args: self
                .args
                .iter()
                .chain(extra.iter().flat_map(|h| h.args.iter()))
                .map(|a| sub(a))
                .collect(),
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
        if let Some(h) = &self.http {
            let mut hp: Vec<String> = h.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            if !h.args.is_empty() {
                hp.push(format!("args {}", h.args.join(" ")));
            }
            parts.push(format!("over HTTP {}", hp.join(", ")));
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
        let got = a.apply("/w", false, None).unwrap();
        assert_eq!(got.args, ["--root", "/w/tree"]);
        assert_eq!(got.files[0].0.text, "conf/x.toml");
        assert_eq!(got.files[0].1, "root = \"/w/tree\"\nwork = \"/w\"");
        let d = Adapter::default().apply("/w", true, None).unwrap();
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
        let h: Adapter = serde_json::from_str(
            r#"{"env": {"D": "${SKILLS}"}, "args": ["-v"], "http": {"args": ["--port", "${PORT}"], "env": {"MODE": "http"}}}"#,
        )
        .unwrap();
        h.check().unwrap();
        let stdio = h.apply("/w", false, Some(7)).unwrap();
        assert_eq!((stdio.args.len(), stdio.env.len()), (1, 1));
        let http = h.apply("/w", true, Some(7)).unwrap();
        assert_eq!(http.args, ["-v", "--port", "7"]);
        assert_eq!(
            http.env,
            [
                ("D".to_string(), "/w/tree".to_string()),
                ("MODE".to_string(), "http".to_string())
            ]
        );
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
