//! `--known-failures FILE` (FORMAT.md, *For implementers*): an
//! implementation's documented deviations, so a run can pass exactly when
//! the cases that fail are the listed ones — a new failure, and a listed
//! case that no longer fails, both fail the run.

use serde_json::{Value, json};

use crate::case::is_valid_id;
use crate::report::{CaseReport, Status};

/// The case IDs a deviations file lists: the first cell of each Markdown
/// table row that is a case ID (`| DISC-011 | … |`); every other line is
/// prose, the header or the divider.
pub fn read(file: &std::path::Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("--known-failures: cannot read {}: {e}", file.display()))?;
    let mut ids: Vec<String> = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix('|') else {
            continue;
        };
        let cell = rest.split('|').next().unwrap_or("").trim();
        if is_valid_id(cell) {
            if ids.iter().any(|i| i == cell) {
                return Err(format!("{} lists `{cell}` twice", file.display()));
            }
            ids.push(cell.to_string());
        }
    }
    Ok(ids)
}

/// How a run's failures compare with the list.
#[derive(Debug, PartialEq)]
pub struct Verdict {
    pub file: String,
    pub listed: Vec<String>,
    /// Failed, and not listed.
    pub unexpected_failures: Vec<String>,
    /// Listed, and passed.
    pub unexpected_passes: Vec<String>,
    /// Listed, and not applicable (not run, so not shown to fail).
    pub listed_not_run: Vec<String>,
}

pub fn judge(file: &str, listed: &[String], reports: &[CaseReport]) -> Verdict {
    let status = |id: &str| reports.iter().find(|r| r.id == id).map(CaseReport::status);
    let is_listed = |id: &str| listed.iter().any(|l| l == id);
    Verdict {
        file: file.to_string(),
        listed: listed.to_vec(),
        unexpected_failures: reports
            .iter()
            .filter(|r| r.status() == Status::Fail && !is_listed(&r.id))
            .map(|r| r.id.clone())
            .collect(),
        unexpected_passes: listed
            .iter()
            .filter(|id| status(id) == Some(Status::Pass))
            .cloned()
            .collect(),
        listed_not_run: listed
            .iter()
            .filter(|id| matches!(status(id), None | Some(Status::NotApplicable)))
            .cloned()
            .collect(),
    }
}

impl Verdict {
    /// The run passes: what failed is exactly what is listed.
    pub fn holds(&self) -> bool {
        self.unexpected_failures.is_empty()
            && self.unexpected_passes.is_empty()
            && self.listed_not_run.is_empty()
    }

    pub fn text(&self) -> String {
        let mut s = format!(
            "known failures ({}): {} listed",
            self.file,
            self.listed.len()
        );
        if self.holds() {
            s.push_str("; exactly those failed\n");
            return s;
        }
        s.push('\n');
        let mut line = |what: &str, ids: &[String]| {
            if !ids.is_empty() {
                s.push_str(&format!("  {what}: {}\n", ids.join(", ")));
            }
        };
        line("failed but not listed", &self.unexpected_failures);
        line(
            "listed but passed (remove them from the list)",
            &self.unexpected_passes,
        );
        line(
            "listed but not run (selected out, or not applicable)",
            &self.listed_not_run,
        );
        s
    }

    pub fn json(&self) -> Value {
        json!({
            "file": self.file,
            "listed": self.listed,
            "holds": self.holds(),
            "unexpected_failures": self.unexpected_failures,
            "unexpected_passes": self.unexpected_passes,
            "listed_not_run": self.listed_not_run,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(id: &str, status: Status) -> CaseReport {
        let mut r = CaseReport::skipped(id, "t", "why".into());
        if status != Status::NotApplicable {
            r.not_applicable = None;
            if status == Status::Fail {
                r.case_failures.push(crate::report::Failure::default());
            }
        }
        r
    }

    #[test]
    fn the_ids_are_the_first_cells_of_table_rows() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("d.md");
        std::fs::write(
            &f,
            "# Deviations\n\nDISC-001 in prose is not listed.\n\n| case | README | does |\n| --- | --- | --- |\n| DISC-011 | a | b |\n|RUN-013|c|d|\n",
        )
        .unwrap();
        assert_eq!(read(&f).unwrap(), ["DISC-011", "RUN-013"]);
        std::fs::write(&f, "| DISC-011 | a |\n| DISC-011 | b |\n").unwrap();
        assert!(read(&f).unwrap_err().contains("twice"));
    }

    #[test]
    fn the_run_holds_only_when_the_failures_are_the_list() {
        let reports = vec![
            report("A-001", Status::Fail),
            report("A-002", Status::Pass),
            report("A-003", Status::NotApplicable),
        ];
        let ids = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(judge("f", &ids(&["A-001"]), &reports).holds());
        let v = judge("f", &ids(&[]), &reports);
        assert_eq!(v.unexpected_failures, ["A-001"]);
        assert!(!v.holds());
        let v = judge("f", &ids(&["A-001", "A-002"]), &reports);
        assert_eq!(v.unexpected_passes, ["A-002"]);
        assert!(!v.holds());
        let v = judge("f", &ids(&["A-001", "A-003"]), &reports);
        assert_eq!(v.listed_not_run, ["A-003"]);
        assert!(!v.holds());
        assert!(v.text().contains("listed but not run"));
    }
}
