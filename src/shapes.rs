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
pub(crate) fn plain_schema(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut schema = Schema::from(schema.clone());
    RestrictFormats::default().transform(&mut schema);
    match schema.to_value() {
        Value::Object(map) => map,
        other => unreachable!("a transformed object schema is an object: {other}"),
    }
}

/// `skill_list`'s result. A plain listing (no `query`) is the catalog's
/// record, read by hosts and people as well as models: every top-level
/// field, `roots` on its first page only. A query answer carries what a
/// model needs to choose among the skills that match, and nothing else of
/// the catalog (LIST-019): the fields below that it leaves out are
/// `Option`s, absent there.
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillList {
    /// The configured roots, absolute, in order — at most as many as fit
    /// a quarter of the answer budget (LIST-005); on a plain listing's
    /// first page only (LIST-019).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) roots: Option<Vec<String>>,
    /// How many roots are configured, when `roots` could not hold them
    /// all (`skill-mcp check` lists every one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) roots_total: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) roots_from: Option<RootsFrom>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) grant_from: Option<GrantFrom>,
    /// Present in the hosted case: why nothing runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) grant_note: Option<String>,
    /// Present when `MCP_SKILL_RUN` could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) grant_error: Option<String>,
    /// Which scan this is: 1 at boot, one more per rescan swapped in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) generation: Option<u64>,
    /// When this scan started (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scanned_at: Option<String>,
    /// Why the last rescan was not swapped in, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reload_refused: Option<String>,
    /// Every skill served, sorted by name — or, when the answer is paged
    /// or searched, this page's (LIST-005, LIST-006).
    pub(crate) skills: Vec<SkillSummary>,
    /// Everything that was not served, or was read and ignored — paged
    /// after the skills when the answer is. In a query answer, only the
    /// problems about the skills on the page, absent when there are none
    /// (LIST-019).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) problems: Option<Vec<Problem>>,
    /// How many skills the whole answer holds (all, or all that match the
    /// query): present when the answer is paged or searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) total: Option<usize>,
    /// How many problems the catalog has in all: present when the answer
    /// is paged, or searched in a catalog with problems.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) problems_total: Option<usize>,
    /// Pass it back as `cursor` (with the same query and limit) for the
    /// next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next_cursor: Option<String>,
    /// What this page holds and how to get the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
}

/// `skill_list`'s arguments, every one optional (LIST-005, LIST-006).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(crate) struct ListArgs {
    /// Words to look for in each skill's name, description and when-to-use;
    /// the best matches come first. Use it when the catalog is large.
    #[serde(default)]
    pub(crate) query: Option<String>,
    /// The nextCursor of the previous page, to continue the same listing.
    #[serde(default)]
    pub(crate) cursor: Option<String>,
    /// At most this many skills in one page.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) limit: Option<u32>,
}

/// One skill in `skill_list`. In a query answer (LIST-019) it has no
/// `source` and no empty list: a model choosing a skill uses neither.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SkillSummary {
    pub(crate) name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) when_to_use: Option<String>,
    /// The configured root it was found under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<String>,
    /// Number of bundled files, SKILL.md included.
    pub(crate) files: usize,
    /// Their total size.
    pub(crate) bytes: u64,
    /// True when at least one script may run here.
    pub(crate) executable: bool,
    /// Exactly the scripts that may run here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scripts: Option<Vec<ScriptSummary>>,
    /// Declared scripts this deployment cannot run, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) unavailable_scripts: Option<Vec<Refused>>,
    /// Declared, runnable scripts the owner did not grant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ungranted_scripts: Option<Vec<Refused>>,
    /// Hosts the skill says it reaches (a proposal, never a permission).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) declared_egress: Vec<String>,
}

impl SkillSummary {
    /// The entry as a query answer carries it (LIST-019): no `source`, no
    /// empty list.
    pub(crate) fn lean(mut self) -> SkillSummary {
        fn some<T>(v: Option<Vec<T>>) -> Option<Vec<T>> {
            v.filter(|v| !v.is_empty())
        }
        self.source = None;
        self.scripts = some(self.scripts);
        self.unavailable_scripts = some(self.unavailable_scripts);
        self.ungranted_scripts = some(self.ungranted_scripts);
        self
    }
}

/// A script that may run.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScriptSummary {
    pub(crate) script: String,
    pub(crate) interpreter: String,
    pub(crate) timeout_ms: u64,
    /// Names of the variables it will be handed beyond the fixed allowlist.
    pub(crate) env: Vec<String>,
}

/// A declared script that may not run, with the reason.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Refused {
    pub(crate) script: String,
    pub(crate) reason: String,
}

/// `skill_load`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NameArgs {
    /// The skill's name, exactly as skill_list reports it.
    pub(crate) name: String,
    /// The filesCursor of the previous answer, for the next page of a
    /// manifest too large for one answer.
    #[serde(default)]
    pub(crate) files_cursor: Option<String>,
}

/// `skill_load`'s result.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillLoad {
    pub(crate) name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) when_to_use: Option<String>,
    pub(crate) source: String,
    /// The SKILL.md body after the frontmatter, byte for byte.
    pub body: String,
    /// True when the body was over 1 MiB and was cut.
    pub(crate) truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) truncation_note: Option<String>,
    /// The bundle's files — or, when the manifest is too large for one
    /// answer, this page of them (LIST-007).
    pub(crate) files: Vec<FileSummary>,
    /// How many files the bundle holds: present when `files` is a page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) files_total: Option<usize>,
    /// Pass it back as `filesCursor` for the next page of `files`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) files_cursor: Option<String>,
    /// What this page of `files` holds and how to get the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) files_note: Option<String>,
    /// Every declared script, and whether it may run here.
    pub(crate) scripts: Vec<LoadScript>,
}

/// One manifest entry.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FileSummary {
    pub(crate) path: String,
    pub(crate) size: u64,
}

/// A declared script in `skill_load`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LoadScript {
    pub(crate) script: String,
    pub(crate) interpreter: String,
    pub(crate) runnable_here: bool,
}

/// `skill_file`'s arguments: `path` or `paths`, never both.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct FileArgs {
    /// The skill's name, exactly as skill_list reports it.
    pub(crate) name: String,
    /// One path relative to the skill's directory, as skill_load lists it.
    #[serde(default)]
    pub(crate) path: Option<String>,
    /// Up to 8 such paths, read in one call (at most 4 MiB served in all).
    #[serde(default)]
    pub(crate) paths: Option<Vec<String>>,
}

/// `skill_file`'s result: one entry per path asked for, in request order.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FileRead {
    pub(crate) skill: String,
    pub(crate) files: Vec<FileSlot>,
}

/// One entry: the file, or why this path alone was refused.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum FileSlot {
    Served(FileEntryOut),
    Refused(FileRefused),
}

/// A file served.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileEntryOut {
    /// The path exactly as asked for.
    pub(crate) path: String,
    /// The file's full size in bytes.
    pub(crate) size: u64,
    pub(crate) media_type: String,
    /// `utf-8` (valid UTF-8, no NUL) or `base64`.
    pub(crate) encoding: String,
    /// True when the file is over 1 MiB and only its first 1 MiB is here.
    pub(crate) truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) truncation_note: Option<String>,
    pub(crate) content: String,
}

/// A path refused on its own.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct FileRefused {
    // The path as asked for; past a couple of hundred bytes, its start and
    // how many bytes were left out (`echo::shorten`, HARD-005). A `///`
    // here would change the published outputSchema.
    pub(crate) path: String,
    /// Which rule refused it, and why.
    pub(crate) error: String,
}

/// `skill_run`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct RunArgs {
    /// The skill's name, exactly as skill_list reports it.
    pub(crate) name: String,
    /// The script, exactly as skill_list reports it in that skill's scripts.
    pub(crate) script: String,
    /// Arguments, passed verbatim as an argv array (never through a shell).
    #[serde(default)]
    pub(crate) args: Vec<String>,
    /// true runs the script; anything else returns a dry-run preview of exactly what would run.
    #[serde(default)]
    pub(crate) confirm: Option<bool>,
}

/// `skill_run`'s answer: a dry-run preview, or the outcome of a run.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunAnswer {
    /// True for a preview: no process was started.
    pub(crate) dry_run: bool,
    /// The preview: exactly what would run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) will_run: Option<WillRun>,
    /// What the preview means, or the fenced-machine note of a failed run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
    #[serde(flatten)]
    pub(crate) result: Option<RunOutcome>,
}

/// What a confirmed call would execute.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WillRun {
    pub(crate) skill: String,
    pub(crate) script: String,
    pub(crate) interpreter: String,
    /// The exact argv: the interpreter's absolute path, the script's real path, then the arguments.
    pub(crate) argv: Vec<String>,
    pub(crate) cwd: String,
    pub(crate) timeout_ms: u64,
    /// Names (never values) of the variables the script would be handed.
    pub(crate) env_names: Vec<String>,
    /// Granted names the server's environment does not set.
    pub(crate) env_not_set: Vec<String>,
}

/// What a run did.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunOutcome {
    pub(crate) skill: String,
    pub(crate) script: String,
    pub(crate) interpreter: String,
    /// The exit code; null when a signal ended the script.
    pub(crate) exit_code: Option<i32>,
    /// The signal that ended it (e.g. SIGTERM), or null.
    pub(crate) signal: Option<String>,
    pub(crate) timed_out: bool,
    pub(crate) timeout_ms: u64,
    pub(crate) duration_ms: u64,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// `utf-8`, or `base64` when the output was not UTF-8.
    pub(crate) stdout_encoding: String,
    pub(crate) stderr_encoding: String,
    /// Which streams went past 1 MiB and were cut.
    pub(crate) truncated: Truncated,
    /// Names of the variables the script was handed.
    pub(crate) env: Vec<String>,
}

/// Per-stream truncation.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Truncated {
    pub(crate) stdout: bool,
    pub(crate) stderr: bool,
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
