//! The JSON shapes of every tool result. Field names follow the original
//! server where it has them, so one conformance suite runs against both
//! (spec LIST-001, LOAD-001).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::RootsFrom;
use crate::grant::GrantFrom;
use crate::problem::Problem;

/// `skill_list`'s result.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillList {
    /// The configured roots, absolute, in order.
    pub roots: Vec<String>,
    pub roots_from: RootsFrom,
    pub grant_from: GrantFrom,
    /// Present in the hosted case: why nothing runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant_note: Option<String>,
    /// Present when `MCP_SKILL_RUN` could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant_error: Option<String>,
    /// Every skill served, sorted by name.
    pub skills: Vec<SkillSummary>,
    /// Everything that was not served, or was read and ignored.
    pub problems: Vec<Problem>,
}

/// One skill in `skill_list`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillSummary {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when_to_use: Option<String>,
    /// The configured root it was found under.
    pub source: String,
    /// Number of bundled files, SKILL.md included.
    pub files: usize,
    /// Their total size.
    pub bytes: u64,
    /// True when at least one script may run here.
    pub executable: bool,
    /// Exactly the scripts that may run here.
    pub scripts: Vec<ScriptSummary>,
    /// Declared scripts this deployment cannot run, and why.
    pub unavailable_scripts: Vec<Refused>,
    /// Declared, runnable scripts the owner did not grant.
    pub ungranted_scripts: Vec<Refused>,
    /// Hosts the skill says it reaches (a proposal, never a permission).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub declared_egress: Vec<String>,
}

/// A script that may run.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScriptSummary {
    pub script: String,
    pub interpreter: String,
    pub timeout_ms: u64,
    /// Names of the variables it will be handed beyond the fixed allowlist.
    pub env: Vec<String>,
}

/// A declared script that may not run, with the reason.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Refused {
    pub script: String,
    pub reason: String,
}

/// `skill_load`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NameArgs {
    /// The skill's name, exactly as skill_list reports it.
    pub name: String,
}

/// `skill_load`'s result.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillLoad {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when_to_use: Option<String>,
    pub source: String,
    /// The SKILL.md body after the frontmatter, byte for byte.
    pub body: String,
    /// True when the body was over 1 MiB and was cut.
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation_note: Option<String>,
    /// The bundle's files.
    pub files: Vec<FileSummary>,
    /// Every declared script, and whether it may run here.
    pub scripts: Vec<LoadScript>,
}

/// One manifest entry.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileSummary {
    pub path: String,
    pub size: u64,
}

/// A declared script in `skill_load`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoadScript {
    pub script: String,
    pub interpreter: String,
    pub runnable_here: bool,
}
