//! `skill-mcp-conformance`: drives an MCP server over stdio through the
//! conformance suite described in `conformance/FORMAT.md`.
//!
//! It speaks only JSON-RPC over stdio (no dependency on the skill-mcp
//! library), so it can check any implementation.

mod case;
mod cli;
mod compare;
mod expect;
mod json;
mod known;
mod normalize;
mod redact;
mod report;
mod runner;
mod session;
mod workdir;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;

use serde_json::Value;

use crate::case::{Case, Golden, Mode, Profile};
use crate::cli::{Cli, Format};
use crate::report::{CaseReport, Failure, Header, ModeReport};
use crate::runner::{RunConfig, UnitRun};

/// Total time one case may take in one mode.
const UNIT_DEADLINE: Duration = Duration::from_secs(120);

fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

/// Exit 2: a usage error or an unreadable case.
fn usage_error(msg: &str) -> ExitCode {
    eprintln!("skill-mcp-conformance: {msg}");
    ExitCode::from(2)
}

fn default_cases_dir() -> PathBuf {
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        let installed = dir.join("../share/skill-mcp/conformance");
        if installed.is_dir() {
            return installed;
        }
    }
    // Built from a checkout (`cargo run`, `cargo install --path
    // conformance/runner`): the cases beside this crate.
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// A relative program path with a slash is made absolute against the
/// runner's cwd, since the server starts in `${WORK}`.
fn absolute_program(mut argv: Vec<String>) -> Result<Vec<String>, String> {
    if let Some(p) = argv.first_mut()
        && p.contains('/')
        && !p.starts_with('/')
    {
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?;
        *p = cwd.join(&*p).to_string_lossy().into_owned();
    }
    Ok(argv)
}

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

fn main() -> ExitCode {
    let began = Instant::now();
    let cli = Cli::parse();

    let cases_dir = cli.cases.clone().unwrap_or_else(default_cases_dir);
    if !cases_dir.is_dir() {
        return usage_error(&format!(
            "the cases directory {} does not exist",
            cases_dir.display()
        ));
    }
    let cases_dir = std::fs::canonicalize(&cases_dir).unwrap_or(cases_dir);
    let suite_version = match case::suite_version(&cases_dir) {
        Ok(v) => v,
        Err(e) => return usage_error(&e),
    };
    let found = match case::discover(&cases_dir) {
        Ok(f) => f,
        Err(e) => return usage_error(&e),
    };
    let only = cli::only_ids(&cli.only);
    for id in &only {
        if !found.iter().any(|(n, _)| n == id) {
            return usage_error(&format!(
                "--only: there is no case `{id}` in {}",
                cases_dir.display()
            ));
        }
    }
    let selected: Vec<&(String, PathBuf)> = found
        .iter()
        .filter(|(n, _)| only.is_empty() || only.contains(n))
        .collect();

    if cli.bless && cli.profile == Profile::Core {
        return usage_error(
            "--bless records goldens, which only the full profile uses; core cases carry hand-written `expect` patterns",
        );
    }
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    for (name, dir) in &selected {
        match case::load(name, dir) {
            Ok(c) => cases.push(c),
            Err(e) => errors.push(e),
        }
    }
    if cli.profile == Profile::Core {
        if let Some(c) = cases
            .iter()
            .find(|c| c.profile != Profile::Core && only.contains(&c.id))
        {
            return usage_error(&format!(
                "--only: `{}` is not a core case (its rule is this implementation's, not the design of record's); run it with --profile full",
                c.id
            ));
        }
        cases.retain(|c| c.profile == Profile::Core);
    }
    let known = match &cli.known_failures {
        None => None,
        Some(f) => match known::read(f) {
            Ok(ids) => Some((f.display().to_string(), ids)),
            Err(e) => return usage_error(&e),
        },
    };
    if let Some((file, ids)) = &known
        && let Some(id) = ids.iter().find(|id| !found.iter().any(|(n, _)| n == *id))
    {
        return usage_error(&format!("{file} lists `{id}`, which is not a case"));
    }
    let mut goldens: Vec<Option<Golden>> = Vec::new();
    if !cli.bless && !cli.list && cli.profile == Profile::Full {
        for c in &cases {
            match case::load_golden(c) {
                Ok(g) => goldens.push(g),
                Err(e) => {
                    errors.push(e);
                    goldens.push(None);
                }
            }
        }
    }
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("skill-mcp-conformance: {e}");
        }
        return usage_error(&format!(
            "{} unreadable case(s); nothing was run",
            errors.len()
        ));
    }

    if cli.list {
        let mut s = String::new();
        for c in &cases {
            let modes: Vec<&str> = runner::modes_for(c, cli.profile)
                .iter()
                .map(|m| m.as_str())
                .collect();
            s.push_str(&format!(
                "{} [{}] ({}) {}\n",
                c.id,
                modes.join(","),
                c.profile.as_str(),
                c.title
            ));
        }
        out(&s);
        return ExitCode::SUCCESS;
    }

    let Some(server) = cli.server.as_deref() else {
        return usage_error("--server is required");
    };
    let argv = match cli::split_command(server).and_then(absolute_program) {
        Ok(a) => a,
        Err(e) => return usage_error(&e),
    };
    let cfg = Arc::new(RunConfig {
        argv,
        path_env: std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
        unit_deadline: UNIT_DEADLINE,
        is_root: nix::unistd::geteuid().is_root(),
        profile: cli.profile,
    });

    let header = Header {
        runner_version: env!("CARGO_PKG_VERSION"),
        suite_version,
        cases_dir: cases_dir.display().to_string(),
        server: runner::preflight(&cfg),
        bless: cli.bless,
        profile: cli.profile,
    };
    let text = cli.format == Format::Text;
    if text {
        out(&report::text_header(&header));
    }

    // What runs: each case's modes under this profile, less what the
    // server does not advertise (reported N/A, never failed).
    let gates: Vec<Option<String>> = cases
        .iter()
        .map(|c| runner::case_gate(c, &header.server))
        .collect();
    let plan: Vec<Vec<Mode>> = cases
        .iter()
        .zip(&gates)
        .map(|(c, gate)| match gate {
            Some(_) => Vec::new(),
            None => runner::modes_for(c, cli.profile),
        })
        .collect();
    let skipped_modes: Vec<Vec<ModeReport>> = plan
        .iter()
        .map(|modes| {
            modes
                .iter()
                .filter_map(|&m| {
                    runner::mode_gate(m, &header.server).map(|why| report::not_applicable(m, why))
                })
                .collect()
        })
        .collect();
    let plan: Vec<Vec<Mode>> = plan
        .into_iter()
        .map(|modes| {
            modes
                .into_iter()
                .filter(|&m| runner::mode_gate(m, &header.server).is_none())
                .collect()
        })
        .collect();

    // One unit per case and runnable mode, in case-ID order.
    let cases = Arc::new(cases);
    let plan = Arc::new(plan);
    let units: Vec<(usize, usize)> = plan
        .iter()
        .enumerate()
        .flat_map(|(ci, modes)| (0..modes.len()).map(move |mi| (ci, mi)))
        .collect();
    let units = Arc::new(units);
    let rx = {
        let (cases, units, cfg, plan) = (
            Arc::clone(&cases),
            Arc::clone(&units),
            Arc::clone(&cfg),
            Arc::clone(&plan),
        );
        runner::run_pool(units.len(), cli.jobs, move |u| {
            let (ci, mi) = units[u];
            runner::run_unit(&cases[ci], plan[ci][mi], &cfg)
        })
    };

    let mut slots: Vec<Vec<Option<UnitRun>>> = plan
        .iter()
        .map(|modes| modes.iter().map(|_| None).collect())
        .collect();
    let mut reports: Vec<CaseReport> = Vec::new();
    let mut next_case = 0;
    let mut received = 0;
    while next_case < cases.len() {
        // Report every case whose units are all in, in order.
        while next_case < cases.len() && slots[next_case].iter().all(Option::is_some) {
            let c = &cases[next_case];
            let runs: Vec<UnitRun> = slots[next_case]
                .iter_mut()
                .filter_map(Option::take)
                .collect();
            let r = if let Some(why) = &gates[next_case] {
                CaseReport::skipped(&c.id, &c.title, why.clone())
            } else if runs.is_empty() {
                let why = skipped_modes[next_case]
                    .iter()
                    .filter_map(|m| m.not_applicable.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                CaseReport::skipped(&c.id, &c.title, why)
            } else if cli.profile == Profile::Core {
                CaseReport {
                    id: c.id.clone(),
                    title: c.title.clone(),
                    modes: runs.iter().map(|run| runner::judge_core(c, run)).collect(),
                    case_failures: Vec::new(),
                    golden: None,
                    not_applicable: None,
                }
            } else if cli.bless {
                let (modes, mut case_failures, golden) = runner::judge_bless(c, &runs);
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
                CaseReport {
                    id: c.id.clone(),
                    title: c.title.clone(),
                    modes,
                    case_failures,
                    golden: status,
                    not_applicable: None,
                }
            } else {
                let g = goldens.get(next_case).and_then(Option::as_ref);
                let mut modes: Vec<ModeReport> =
                    runs.iter().map(|run| runner::judge(c, g, run)).collect();
                modes.extend(skipped_modes[next_case].iter().cloned());
                CaseReport {
                    id: c.id.clone(),
                    title: c.title.clone(),
                    modes,
                    case_failures: Vec::new(),
                    golden: None,
                    not_applicable: None,
                }
            };
            if text {
                out(&report::text_case(&r));
            }
            reports.push(r);
            next_case += 1;
        }
        if next_case >= cases.len() {
            break;
        }
        match rx.recv() {
            Ok((u, result)) => {
                received += 1;
                let (ci, mi) = units[u];
                let run = result.unwrap_or_else(|msg| UnitRun {
                    mode: plan[ci][mi],
                    replies: vec![None; cases[ci].steps.len()],
                    sent: vec![None; cases[ci].steps.len()],
                    error: Some(Failure {
                        message: msg,
                        ..Failure::default()
                    }),
                    exit: String::new(),
                    stderr_tail: Vec::new(),
                    notifications: 0,
                    duration: Duration::ZERO,
                });
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
                            *s = Some(UnitRun {
                                mode: plan[ci][mi],
                                replies: vec![None; cases[ci].steps.len()],
                                sent: vec![None; cases[ci].steps.len()],
                                error: Some(Failure {
                                    message: "internal error: this unit never ran".into(),
                                    ..Failure::default()
                                }),
                                exit: String::new(),
                                stderr_tail: Vec::new(),
                                notifications: 0,
                                duration: Duration::ZERO,
                            });
                        }
                    }
                }
            }
        }
    }

    let verdict = known
        .as_ref()
        .map(|(file, ids)| known::judge(file, ids, &reports));
    match cli.format {
        Format::Text => {
            // Said before the closing count, which stays the last line.
            if let Some(v) = &verdict {
                out(&v.text());
            }
            out(&format!(
                "wall time: {:.1} s, {} case(s) at a time\n",
                began.elapsed().as_secs_f64(),
                cli.jobs
            ));
            out(&report::text_footer(&reports, cli.bless))
        }
        Format::Json => {
            let mut v = report::json_report(&header, &reports);
            if let (Some(k), Value::Object(m)) = (&verdict, &mut v) {
                m.insert("known_failures".into(), k.json());
            }
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&v)
                    .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
            ));
        }
        Format::Junit => out(&report::junit_report(&header, &reports)),
    }
    let (_, failed, _) = report::counts(&reports);
    let ok = match &verdict {
        Some(v) => v.holds(),
        None => failed == 0,
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
