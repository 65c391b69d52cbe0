//! The `mcp-host:` declaration block: which files are entry points and what
//! each wants.
//!
//! README: "**A declaration narrows; it never grants.**" Nothing here
//! authorizes anything; `grant` decides what of it may run. The block is read
//! strictly: an unknown MAJOR version is refused wholesale, unknown keys are
//! ignored and reported by name, and a refused entry costs that entry, never
//! the skill's instructions (spec DECL-001..DECL-009).
//!
//! One file a concern: the reader and the block (`reader.rs`), one `run[]`
//! entry (`run_entry.rs`), `env` and `egress` proposals (`proposals.rs`),
//! the reserved variables (`reserved.rs`), the path a note names
//! (`at.rs`) and the fix each note ends with (`fixes.rs`).

use crate::frontmatter::{Frontmatter, Note};
use crate::problem::Reason;

mod at;
mod fixes;
mod proposals;
mod reader;
mod reserved;
mod run_entry;

pub(crate) use reserved::reserved;

use reader::Reader;

/// The frontmatter key holding the block.
pub(crate) const BLOCK_KEY: &str = "mcp-host";

/// The one major version this server understands.
pub(crate) const VERSION: u64 = 1;

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
}
