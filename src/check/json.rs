//! The JSON report (spec CHECK-007): a stable, versioned document of
//! what the text report says, for tools and CI.

use serde::Serialize;

use super::{Finding, Refused, Report};
use crate::config::RootsFrom;
use crate::grant::GrantFrom;
use crate::shapes::SkillSummary;

/// The version of the JSON report (spec CHECK-007). It changes only when a
/// field changes meaning or goes away; new fields may appear within it.
pub(crate) const JSON_FORMAT: u32 = 1;

/// The JSON report's counts.
#[derive(Debug, Serialize)]
pub(crate) struct Counts {
    pub(crate) skills: usize,
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
}

/// The JSON report (spec CHECK-007).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonReport<'a> {
    format: u32,
    passed: bool,
    strict: bool,
    roots: &'a [String],
    roots_from: Option<RootsFrom>,
    grant_from: Option<GrantFrom>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grant_note: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grant_error: Option<&'a str>,
    skills: &'a [SkillSummary],
    /// Served skills with an error, by name (CHECK-007).
    failing: &'a [String],
    /// Skills found and refused, each with the finding that says why.
    refused: &'a [Refused],
    findings: &'a [Finding],
    counts: Counts,
}

impl Report {
    /// The JSON report, pretty-printed, with a final newline.
    pub(crate) fn to_json(&self) -> Result<String, serde_json::Error> {
        let l = &self.list;
        let report = JsonReport {
            format: JSON_FORMAT,
            passed: self.passed(),
            strict: self.strict,
            roots: l.roots.as_deref().unwrap_or_default(),
            roots_from: l.roots_from,
            grant_from: l.grant_from,
            grant_note: l.grant_note.as_deref(),
            grant_error: l.grant_error.as_deref(),
            skills: &l.skills,
            failing: &self.failing,
            refused: &self.refused,
            findings: &self.findings,
            counts: Counts {
                skills: l.skills.len(),
                errors: self.errors(),
                warnings: self.warnings(),
            },
        };
        let mut s = serde_json::to_string_pretty(&report)?;
        s.push('\n');
        Ok(s)
    }
}
