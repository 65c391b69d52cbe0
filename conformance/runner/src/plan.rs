//! The plan of a run: each case's modes under the profile, less what the
//! server does not advertise (reported N/A, never failed); its units run
//! on the pool, and each case reported, in case-ID order, as soon as all
//! of its units are in.

use std::sync::Arc;
use std::time::Duration;

use crate::case::{self, Case, Golden, Mode, Profile};
use crate::report::{self, CaseReport, Failure, ModeReport, ServerIdentity};
use crate::runner::{self, RunConfig, UnitRun};
use crate::unit;

/// What the run does with each case, and how it judges the results.
pub struct Plan {
    cases: Arc<Vec<Case>>,
    /// Why a case cannot run against this server at all, if it cannot.
    gates: Vec<Option<String>>,
    /// The modes each case runs in.
    modes: Arc<Vec<Vec<Mode>>>,
    /// The modes each case would run in but for the server: N/A.
    skipped: Vec<Vec<ModeReport>>,
    pub profile: Profile,
    pub bless: bool,
    /// Each case's golden (full profile, not blessing).
    pub goldens: Vec<Option<Golden>>,
}

impl Plan {
    pub fn new(cases: Vec<Case>, server: &ServerIdentity, profile: Profile) -> Plan {
        let gates: Vec<Option<String>> =
            cases.iter().map(|c| runner::case_gate(c, server)).collect();
        let wanted: Vec<Vec<Mode>> = cases
            .iter()
            .zip(&gates)
            .map(|(c, gate)| match gate {
                Some(_) => Vec::new(),
                None => runner::modes_for(c, profile),
            })
            .collect();
        let skipped = wanted
            .iter()
            .map(|modes| {
                modes
                    .iter()
                    .filter_map(|&m| {
                        runner::mode_gate(m, server).map(|why| report::not_applicable(m, why))
                    })
                    .collect()
            })
            .collect();
        let modes = wanted
            .into_iter()
            .map(|modes| {
                modes
                    .into_iter()
                    .filter(|&m| runner::mode_gate(m, server).is_none())
                    .collect()
            })
            .collect();
        Plan {
            cases: Arc::new(cases),
            gates,
            modes: Arc::new(modes),
            skipped,
            profile,
            bless: false,
            goldens: Vec::new(),
        }
    }

    /// Runs every unit on `jobs` threads; `each` is told every case's
    /// report as soon as it is complete, in case-ID order.
    pub fn run(
        &self,
        cfg: &Arc<RunConfig>,
        jobs: usize,
        mut each: impl FnMut(&CaseReport),
    ) -> Vec<CaseReport> {
        // One unit per case and runnable mode, in case-ID order.
        let units: Arc<Vec<(usize, usize)>> = Arc::new(
            self.modes
                .iter()
                .enumerate()
                .flat_map(|(ci, modes)| (0..modes.len()).map(move |mi| (ci, mi)))
                .collect(),
        );
        let rx = {
            let (cases, units, cfg, modes) = (
                Arc::clone(&self.cases),
                Arc::clone(&units),
                Arc::clone(cfg),
                Arc::clone(&self.modes),
            );
            runner::run_pool(units.len(), jobs, move |u| {
                let (ci, mi) = units[u];
                unit::run_unit(&cases[ci], modes[ci][mi], &cfg)
            })
        };
        let mut slots: Vec<Vec<Option<UnitRun>>> = self
            .modes
            .iter()
            .map(|modes| modes.iter().map(|_| None).collect())
            .collect();
        let mut reports = Vec::new();
        let mut received = 0;
        while reports.len() < self.cases.len() {
            // Report every case whose units are all in, in order.
            while let Some(row) = slots.get_mut(reports.len())
                && row.iter().all(Option::is_some)
            {
                let runs: Vec<UnitRun> = row.iter_mut().filter_map(Option::take).collect();
                let r = self.judge(reports.len(), &runs);
                each(&r);
                reports.push(r);
            }
            if reports.len() >= self.cases.len() {
                break;
            }
            match rx.recv() {
                Ok((u, result)) => {
                    received += 1;
                    let (ci, mi) = units[u];
                    let run = result.unwrap_or_else(|msg| self.not_run(ci, mi, msg));
                    slots[ci][mi] = Some(run);
                }
                Err(_) => {
                    // Every worker is gone: fill in what never came back.
                    eprintln!(
                        "skill-mcp-conformance: the workers stopped after {received} of {} units",
                        units.len()
                    );
                    for (ci, row) in slots.iter_mut().enumerate() {
                        for (mi, s) in row.iter_mut().enumerate() {
                            if s.is_none() {
                                let why = "internal error: this unit never ran".to_string();
                                *s = Some(self.not_run(ci, mi, why));
                            }
                        }
                    }
                }
            }
        }
        reports
    }

    /// A unit that did not run, failed with `message`.
    fn not_run(&self, ci: usize, mi: usize, message: String) -> UnitRun {
        let steps = self.cases[ci].steps.len();
        UnitRun {
            mode: self.modes[ci][mi],
            replies: vec![None; steps],
            sent: vec![None; steps],
            error: Some(Failure {
                message,
                ..Failure::default()
            }),
            exit: String::new(),
            stderr_tail: Vec::new(),
            notifications: 0,
            duration: Duration::ZERO,
        }
    }

    /// Case `ci`'s report from its units' runs.
    fn judge(&self, ci: usize, runs: &[UnitRun]) -> CaseReport {
        let c = &self.cases[ci];
        if let Some(why) = &self.gates[ci] {
            return CaseReport::skipped(&c.id, &c.title, why.clone());
        }
        if runs.is_empty() {
            let why = self.skipped[ci]
                .iter()
                .filter_map(|m| m.not_applicable.clone())
                .collect::<Vec<_>>()
                .join("; ");
            return CaseReport::skipped(&c.id, &c.title, why);
        }
        let report = |modes, case_failures, golden| CaseReport {
            id: c.id.clone(),
            title: c.title.clone(),
            modes,
            case_failures,
            golden,
            not_applicable: None,
            sentences: Vec::new(),
        };
        if self.profile == Profile::Core {
            let modes = runs.iter().map(|run| runner::judge_core(c, run)).collect();
            return report(modes, Vec::new(), None);
        }
        if self.bless {
            let (modes, mut case_failures, golden) = runner::judge_bless(c, runs);
            let mut status = None;
            if let Some(g) = golden {
                match write_golden(c, &g) {
                    Ok(s) => status = Some(s),
                    Err(e) => case_failures.push(Failure {
                        message: e,
                        ..Failure::default()
                    }),
                }
            }
            return report(modes, case_failures, status);
        }
        let g = self.goldens.get(ci).and_then(Option::as_ref);
        let mut modes: Vec<ModeReport> = runs.iter().map(|run| runner::judge(c, g, run)).collect();
        modes.extend(self.skipped[ci].iter().cloned());
        report(modes, Vec::new(), None)
    }
}

/// Records `g` as the case's golden, replacing the file whole; says
/// whether it was created, updated or unchanged.
fn write_golden(case: &Case, g: &Golden) -> Result<&'static str, String> {
    let text = case::golden_text(g)?;
    let path = case.golden_path();
    let old = std::fs::read_to_string(&path).ok();
    if old.as_deref() == Some(text.as_str()) {
        return Ok("unchanged");
    }
    let tmp = case
        .dir
        .join(format!(".golden.json.tmp-{}", std::process::id()));
    std::fs::write(&tmp, &text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write {}: {e}", path.display())
        })?;
    Ok(if old.is_some() { "updated" } else { "created" })
}
