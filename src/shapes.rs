//! The JSON shapes of every tool result. Field names follow the original
//! server where it has them, so one conformance suite runs against both
//! (spec LIST-001, LOAD-001); and the rule their schemas follow on the wire
//! (SRV-002).

use schemars::transform::{RestrictFormats, Transform};
use schemars::{JsonSchema, Schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::RootsFrom;
use crate::grant::GrantFrom;
use crate::problem::Problem;

/// A tool schema as `tools/list` hands it out (spec SRV-002): plain JSON
/// Schema, which strict validators take without a warning.
///
/// schemars writes each integer's Rust width as a `format` (`uint`,
/// `uint64`, `int32`), which no JSON Schema draft defines: hosts that
/// validate with a strict validator print `unknown format "uint" ignored`
/// for each one. What matters of an unsigned width is already there as
/// `"minimum": 0`, so those formats are dropped — by schemars' own
/// [`RestrictFormats`], which removes, in every subschema, any `format`
/// the draft named by the schema's `$schema` does not define. rmcp builds
/// the schemas with fixed settings, so this runs on what it built, once.
pub fn plain_schema(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut schema = Schema::from(schema.clone());
    RestrictFormats::default().transform(&mut schema);
    match schema.to_value() {
        Value::Object(map) => map,
        other => unreachable!("a transformed object schema is an object: {other}"),
    }
}

/// `skill_list`'s result.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillList {
    /// The configured roots, absolute, in order — at most as many as fit
    /// a quarter of the answer budget (LIST-005).
    pub roots: Vec<String>,
    /// How many roots are configured, when `roots` could not hold them
    /// all (`skill-mcp check` lists every one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roots_total: Option<usize>,
    pub roots_from: RootsFrom,
    pub grant_from: GrantFrom,
    /// Present in the hosted case: why nothing runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant_note: Option<String>,
    /// Present when `MCP_SKILL_RUN` could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant_error: Option<String>,
    /// Which scan this is: 1 at boot, one more per rescan swapped in.
    pub generation: u64,
    /// When this scan started (RFC 3339, UTC).
    pub scanned_at: String,
    /// Why the last rescan was not swapped in, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_refused: Option<String>,
    /// Every skill served, sorted by name — or, when the answer is paged
    /// or searched, this page's (LIST-005, LIST-006).
    pub skills: Vec<SkillSummary>,
    /// Everything that was not served, or was read and ignored — paged
    /// after the skills when the answer is.
    pub problems: Vec<Problem>,
    /// How many skills the whole answer holds (all, or all that match the
    /// query): present when the answer is paged or searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    /// How many problems there are in all: present when the answer is
    /// paged or searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problems_total: Option<usize>,
    /// Pass it back as `cursor` (with the same query and limit) for the
    /// next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// What this page holds and how to get the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `skill_list`'s arguments, every one optional (LIST-005, LIST-006).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Words to look for in each skill's name, description and when-to-use;
    /// the best matches come first. Use it when the catalog is large.
    #[serde(default)]
    pub query: Option<String>,
    /// The nextCursor of the previous page, to continue the same listing.
    #[serde(default)]
    pub cursor: Option<String>,
    /// At most this many skills in one page.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
}

/// One skill in `skill_list`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScriptSummary {
    pub script: String,
    pub interpreter: String,
    pub timeout_ms: u64,
    /// Names of the variables it will be handed beyond the fixed allowlist.
    pub env: Vec<String>,
}

/// A declared script that may not run, with the reason.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Refused {
    pub script: String,
    pub reason: String,
}

/// `skill_load`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NameArgs {
    /// The skill's name, exactly as skill_list reports it.
    pub name: String,
    /// The filesCursor of the previous answer, for the next page of a
    /// manifest too large for one answer.
    #[serde(default)]
    pub files_cursor: Option<String>,
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
    /// The bundle's files — or, when the manifest is too large for one
    /// answer, this page of them (LIST-007).
    pub files: Vec<FileSummary>,
    /// How many files the bundle holds: present when `files` is a page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_total: Option<usize>,
    /// Pass it back as `filesCursor` for the next page of `files`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_cursor: Option<String>,
    /// What this page of `files` holds and how to get the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_note: Option<String>,
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

/// `skill_file`'s arguments: `path` or `paths`, never both.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FileArgs {
    /// The skill's name, exactly as skill_list reports it.
    pub name: String,
    /// One path relative to the skill's directory, as skill_load lists it.
    #[serde(default)]
    pub path: Option<String>,
    /// Up to 8 such paths, read in one call (at most 4 MiB served in all).
    #[serde(default)]
    pub paths: Option<Vec<String>>,
}

/// `skill_file`'s result: one entry per path asked for, in request order.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileRead {
    pub skill: String,
    pub files: Vec<FileSlot>,
}

/// One entry: the file, or why this path alone was refused.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum FileSlot {
    Served(FileEntryOut),
    Refused(FileRefused),
}

/// A file served.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileEntryOut {
    /// The path exactly as asked for.
    pub path: String,
    /// The file's full size in bytes.
    pub size: u64,
    pub media_type: String,
    /// `utf-8` (valid UTF-8, no NUL) or `base64`.
    pub encoding: String,
    /// True when the file is over 1 MiB and only its first 1 MiB is here.
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation_note: Option<String>,
    pub content: String,
}

/// A path refused on its own.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileRefused {
    // The path as asked for; past a couple of hundred bytes, its start and
    // how many bytes were left out (`echo::shorten`, HARD-005). A `///`
    // here would change the published outputSchema.
    pub path: String,
    /// Which rule refused it, and why.
    pub error: String,
}

/// `skill_run`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunArgs {
    /// The skill's name, exactly as skill_list reports it.
    pub name: String,
    /// The script, exactly as skill_list reports it in that skill's scripts.
    pub script: String,
    /// Arguments, passed verbatim as an argv array (never through a shell).
    #[serde(default)]
    pub args: Vec<String>,
    /// true runs the script; anything else returns a dry-run preview of exactly what would run.
    #[serde(default)]
    pub confirm: Option<bool>,
}

/// `skill_run`'s answer: a dry-run preview, or the outcome of a run.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunAnswer {
    /// True for a preview: no process was started.
    pub dry_run: bool,
    /// The preview: exactly what would run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub will_run: Option<WillRun>,
    /// What the preview means, or the fenced-machine note of a failed run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub result: Option<RunOutcome>,
}

/// What a confirmed call would execute.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WillRun {
    pub skill: String,
    pub script: String,
    pub interpreter: String,
    /// The exact argv: the interpreter's absolute path, the script's real path, then the arguments.
    pub argv: Vec<String>,
    pub cwd: String,
    pub timeout_ms: u64,
    /// Names (never values) of the variables the script would be handed.
    pub env_names: Vec<String>,
    /// Granted names the server's environment does not set.
    pub env_not_set: Vec<String>,
}

/// What a run did.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunOutcome {
    pub skill: String,
    pub script: String,
    pub interpreter: String,
    /// The exit code; null when a signal ended the script.
    pub exit_code: Option<i32>,
    /// The signal that ended it (e.g. SIGTERM), or null.
    pub signal: Option<String>,
    pub timed_out: bool,
    pub timeout_ms: u64,
    pub duration_ms: u64,
    pub stdout: String,
    pub stderr: String,
    /// `utf-8`, or `base64` when the output was not UTF-8.
    pub stdout_encoding: String,
    pub stderr_encoding: String,
    /// Which streams went past 1 MiB and were cut.
    pub truncated: Truncated,
    /// Names of the variables the script was handed.
    pub env: Vec<String>,
}

/// Per-stream truncation.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Truncated {
    pub stdout: bool,
    pub stderr: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_schema_drops_invented_formats_and_keeps_the_rest() {
        let Value::Object(raw) = serde_json::json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint64", "minimum": 0},
                "code": {"type": ["integer", "null"], "format": "int32"},
                "at": {"type": "string", "format": "date-time"},
            },
            "$defs": {"D": {"properties": {"k": {"type": "integer", "format": "uint", "minimum": 0}}}},
        }) else {
            unreachable!()
        };
        let plain = Value::Object(plain_schema(&raw));
        assert_eq!(
            plain["properties"]["n"],
            serde_json::json!({"type": "integer", "minimum": 0})
        );
        assert_eq!(
            plain["properties"]["code"],
            serde_json::json!({"type": ["integer", "null"]})
        );
        assert_eq!(
            plain["properties"]["at"]["format"], "date-time",
            "a format the draft defines stays"
        );
        assert_eq!(
            plain["$defs"]["D"]["properties"]["k"],
            serde_json::json!({"type": "integer", "minimum": 0})
        );
    }
}
