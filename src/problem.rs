//! `problems`: everything that kept something from being served, or that
//! was read and ignored, with where and why (README "Discovery reports, it
//! never goes quiet").

use schemars::JsonSchema;
use serde::Serialize;

/// A stable, machine-readable reason code. The set only grows; clients
/// should tolerate codes they do not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// A configured root does not exist or is not a directory (spec CONF-004).
    RootUnreadable,
    /// A directory where a skill was expected holds no SKILL.md (DISC-004).
    NoSkillMd,
    /// SKILL.md exists but cannot be read as UTF-8 text (DISC-008).
    UnreadableSkillMd,
    /// The frontmatter does not split or does not parse (FM-*).
    MalformedFrontmatter,
    /// Something in the frontmatter or `mcp-host:` block was ignored (DECL-*).
    Declaration,
    /// A top-level frontmatter key neither the Agent Skills spec, Claude
    /// Code nor this server defines; ignored, and the skill served (FM-007).
    UnknownKey,
    /// Two directories contribute one name; neither is served (DISC-005).
    DuplicateName,
    /// The frontmatter (or a symlink) names the skill otherwise than its
    /// directory does (DISC-003).
    NameMismatch,
    /// A directory name cannot be served as a skill name (DISC-009).
    UnusableName,
    /// A declared script is not a regular file inside the skill (DISC-010).
    DeclaredScriptMissing,
    /// A symlink leads out of the root or out of a skill (DISC-006, DISC-011).
    SymlinkEscape,
    /// A bundled file the read tools could not address (DISC-012).
    UnusablePath,
    /// A bundle over the file or directory cap; the walk stopped (DISC-013).
    FileLimit,
    /// A row of `MCP_SKILL_RUN` that grants nothing (GRANT-*).
    Grant,
    /// A server setting from the environment could not be used; its
    /// default holds (LIST-005).
    Setting,
    /// Served by the tools, but left out of the MCP Skills extension's
    /// `skills/list`, whose rules it does not meet (SKX-006).
    SkillsExtension,
    /// A declared `timeout` over the 300 s ceiling: the script is served,
    /// and runs with the ceiling (DECL-001). It refuses nothing, so
    /// `check` shows it as a warning (CHECK-004).
    TimeoutClamped,
}

impl Reason {
    /// The code as `problems` spells it (`root-unreadable`): its serde
    /// spelling, so a log line or report cannot drift from the wire.
    pub(crate) fn code(self) -> std::borrow::Cow<'static, str> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(s)) => s.into(),
            _ => "problem".into(),
        }
    }
}

/// One entry of `problems`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, JsonSchema)]
pub struct Problem {
    /// The file or directory concerned.
    pub(crate) path: String,
    pub reason: Reason,
    /// What happened, for a person.
    pub(crate) detail: String,
    /// Line in SKILL.md, for frontmatter and declaration findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<usize>,
    /// Column in SKILL.md, with `line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) column: Option<usize>,
}

impl Problem {
    pub(crate) fn new(
        path: impl Into<String>,
        reason: Reason,
        detail: impl Into<String>,
    ) -> Problem {
        Problem {
            path: path.into(),
            reason,
            detail: detail.into(),
            line: None,
            column: None,
        }
    }

    /// With a SKILL.md position, also written into the detail for people.
    pub(crate) fn at(mut self, line: Option<usize>, column: Option<usize>) -> Problem {
        if let (Some(l), Some(c)) = (line, column)
            && !self.detail.contains("(line ")
        {
            self.detail.push_str(&format!(" (line {l}, column {c})"));
        }
        self.line = line;
        self.column = column;
        self
    }

    /// Adds `more` to what the detail says, before the position `at`
    /// wrote, so the detail still ends with it: a consequence found by a
    /// later pass joins the one report of its cause (issue 41 §3).
    pub(crate) fn amend(&mut self, more: &str) {
        let at = match (self.line, self.column) {
            (Some(l), Some(c)) => self
                .detail
                .strip_suffix(&format!(" (line {l}, column {c})"))
                .map(str::len),
            _ => None,
        };
        self.detail
            .insert_str(at.unwrap_or(self.detail.len()), more);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_amendment_goes_before_the_position() {
        let mut p =
            Problem::new("/s/SKILL.md", Reason::NameMismatch, "what; fix").at(Some(2), Some(7));
        p.amend("; and more");
        assert_eq!(p.detail, "what; fix; and more (line 2, column 7)");
        let mut p = Problem::new("/s", Reason::DuplicateName, "what");
        p.amend("; and more");
        assert_eq!(p.detail, "what; and more");
    }
}
