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
mod plan;
mod redact;
mod report;
mod runner;
mod session;
mod skills;
mod unit;
mod workdir;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;

use serde_json::Value;

use crate::case::{Case, Golden, Profile};
use crate::cli::{Cli, Format};
use crate::plan::Plan;
use crate::report::{CaseReport, Header};
use crate::runner::RunConfig;

/// Total time one case may take in one mode.
const UNIT_DEADLINE: Duration = Duration::from_secs(120);

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(stop) => stop.exit(),
    }
}

/// Why nothing was run: exit 2.
enum Stop {
    /// A usage error, or a suite that cannot be read.
    Usage(String),
    /// Case files that do not parse: each one said, then counted.
    Unreadable(Vec<String>),
}

impl Stop {
    fn exit(self) -> ExitCode {
        match self {
            Stop::Usage(msg) => eprintln!("skill-mcp-conformance: {msg}"),
            Stop::Unreadable(errors) => {
                for e in &errors {
                    eprintln!("skill-mcp-conformance: {e}");
                }
                eprintln!(
                    "skill-mcp-conformance: {} unreadable case(s); nothing was run",
                    errors.len()
                );
            }
        }
        ExitCode::from(2)
    }
}

impl From<String> for Stop {
    fn from(msg: String) -> Stop {
        Stop::Usage(msg)
    }
}

/// The command line → the suite → (a listing, or) a run → its report.
fn run() -> Result<ExitCode, Stop> {
    let began = Instant::now();
    let cli = Cli::parse();
    if cli.profile == Profile::Skills {
        return run_skills(&cli, began);
    }
    if cli.url.is_some() {
        return Err(Stop::Usage(
            "--url belongs to --profile skills; the core and full profiles speak stdio".into(),
        ));
    }
    if cli.adapter.is_some() {
        return Err(Stop::Usage(
            "--adapter belongs to --profile skills; the core and full profiles set SKILLS_DIR per case".into(),
        ));
    }
    let suite = Suite::read(&cli)?;
    if cli.list {
        out(&listing(&suite.cases, cli.profile));
        return Ok(ExitCode::SUCCESS);
    }
    let cfg = Arc::new(run_config(&cli)?);
    let header = Header {
        runner_version: env!("CARGO_PKG_VERSION"),
        suite_version: suite.version,
        cases_dir: suite.dir.display().to_string(),
        server: runner::preflight(&cfg),
        bless: cli.bless,
        profile: cli.profile,
        notes: Vec::new(),
    };
    let text = cli.format == Format::Text;
    if text {
        out(&report::text_header(&header));
    }
    let mut plan = Plan::new(suite.cases, &header.server, cli.profile);
    plan.bless = cli.bless;
    plan.goldens = suite.goldens;
    let reports = plan.run(&cfg, cli.jobs, |r| {
        if text {
            out(&report::text_case(r));
        }
    });
    let verdict = suite
        .known
        .as_ref()
        .map(|(file, ids)| known::judge(file, ids, &reports));
    write_report(&cli, &header, &reports, verdict.as_ref(), began);
    let (_, failed, _) = report::counts(&reports);
    let ok = match &verdict {
        Some(v) => v.holds(),
        None => failed == 0,
    };
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--profile skills`: SEP-2640's sentences, against any server, in each
/// lifecycle it answers the extension in.
fn run_skills(cli: &Cli, began: Instant) -> Result<ExitCode, Stop> {
    use crate::case::Mode;
    use crate::skills::run::{Config, lifecycle_name, preflight};
    if cli.bless {
        return Err(Stop::Usage(
            "--bless records goldens; the skills profile has hand-written expectations only".into(),
        ));
    }
    let dir = cli.cases.clone().unwrap_or_else(default_cases_dir);
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let version = case::suite_version(&dir)?;
    let suite = skills::suite_dir(&dir);
    let only = cli::only_ids(&cli.only);
    let cases = skills::load_cases(&suite, &only).map_err(Stop::Unreadable)?;
    if cli.list {
        out(&skills::listing(&cases));
        return Ok(ExitCode::SUCCESS);
    }
    let known = match &cli.known_failures {
        None => None,
        Some(f) => {
            let ids = known::read(f)?;
            let all = skills::case_ids(&suite)?;
            if let Some(id) = ids.iter().find(|id| !all.contains(id)) {
                return Err(Stop::Usage(format!(
                    "{} lists `{id}`, which is not a case of {}",
                    f.display(),
                    suite.display()
                )));
            }
            Some((f.display().to_string(), ids))
        }
    };
    let adapter = match &cli.adapter {
        Some(p) => skills::adapter::Adapter::read(p)?,
        None => skills::adapter::Adapter::default(),
    };
    let server = cli
        .server
        .as_deref()
        .ok_or("--server is required".to_string())?;
    let argv = cli::split_command(server).and_then(absolute_program)?;
    let url = cli
        .url
        .as_deref()
        .map(skills::http::UrlSpec::parse)
        .transpose()?;
    let mut notes = vec![format!("adapter: {}", adapter.describe())];
    notes.push(match &cli.url {
        Some(u) => format!("transport: Streamable HTTP, --url {u}"),
        None => "transport: stdio".into(),
    });
    let cfg = Arc::new(Config {
        argv,
        path_env: std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
        adapter,
        unit_deadline: UNIT_DEADLINE,
        url,
    });
    let lifecycles: Vec<_> = [Mode::Initialize, Mode::Stateless]
        .into_iter()
        .map(|m| preflight(&cfg, m))
        .collect();
    for l in &lifecycles {
        notes.push(match &l.judged {
            Ok(()) => format!("lifecycle {}: judged", lifecycle_name(l.mode)),
            Err(why) => format!(
                "lifecycle {}: not judged, the server does not answer the extension in it ({why})",
                lifecycle_name(l.mode)
            ),
        });
    }
    let judged = lifecycles.iter().any(|l| l.judged.is_ok());
    // The identity of a lifecycle the server is judged in first: one that
    // only refuses the extension (FastMCP's 2025-11-25 session) still
    // names the server, but not the protocol the cases run at.
    let known_server = lifecycles
        .iter()
        .find(|l| l.judged.is_ok() && l.server_info.is_some())
        .or_else(|| lifecycles.iter().find(|l| l.server_info.is_some()));
    let header = Header {
        runner_version: env!("CARGO_PKG_VERSION"),
        suite_version: version,
        cases_dir: suite.display().to_string(),
        server: report::ServerIdentity {
            server_info: known_server.and_then(|l| l.server_info.clone()),
            protocol_version: known_server.and_then(|l| l.protocol.clone()),
            error: (!judged)
                .then(|| "the server answers the extension in neither lifecycle".to_string()),
            capabilities: known_server.and_then(|l| l.capabilities.clone()),
            stateless: None,
        },
        bless: false,
        profile: Profile::Skills,
        notes,
    };
    let text = cli.format == Format::Text;
    if text {
        out(&report::text_header(&header));
    }
    let reports = skills::run::run_cases(cases, &lifecycles, cfg, cli.jobs, |r| {
        if text {
            out(&report::text_case(r));
        }
    });
    let verdict = known
        .as_ref()
        .map(|(file, ids)| known::judge(file, ids, &reports));
    write_report(cli, &header, &reports, verdict.as_ref(), began);
    let (_, failed, _) = report::counts(&reports);
    let ok = judged
        && match &verdict {
            Some(v) => v.holds(),
            None => failed == 0,
        };
    if !judged {
        eprintln!(
            "skill-mcp-conformance: the server answers skills/list in neither lifecycle; nothing was judged"
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The cases a run takes: found, selected by `--only` and the profile,
/// read, with their goldens and the list of known failures.
struct Suite {
    dir: PathBuf,
    version: String,
    cases: Vec<Case>,
    goldens: Vec<Option<Golden>>,
    /// `--known-failures`: the file's name and the IDs it lists.
    known: Option<(String, Vec<String>)>,
}

impl Suite {
    fn read(cli: &Cli) -> Result<Suite, Stop> {
        let dir = cli.cases.clone().unwrap_or_else(default_cases_dir);
        if !dir.is_dir() {
            return Err(Stop::Usage(format!(
                "the cases directory {} does not exist",
                dir.display()
            )));
        }
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        let version = case::suite_version(&dir)?;
        let found = case::discover(&dir)?;
        let only = cli::only_ids(&cli.only);
        if let Some(id) = only.iter().find(|id| !found.iter().any(|(n, _)| n == *id)) {
            return Err(Stop::Usage(format!(
                "--only: there is no case `{id}` in {}",
                dir.display()
            )));
        }
        if cli.bless && cli.profile == Profile::Core {
            return Err(Stop::Usage(
                "--bless records goldens, which only the full profile uses; core cases carry hand-written `expect` patterns".into(),
            ));
        }
        let mut errors = Vec::new();
        let mut cases: Vec<Case> = found
            .iter()
            .filter(|(n, _)| only.is_empty() || only.contains(n))
            .filter_map(|(name, d)| case::load(name, d).map_err(|e| errors.push(e)).ok())
            .collect();
        if cli.profile == Profile::Core {
            if let Some(c) = cases
                .iter()
                .find(|c| c.profile != Profile::Core && only.contains(&c.id))
            {
                return Err(Stop::Usage(format!(
                    "--only: `{}` is not a core case (its rule is this implementation's, not the design of record's); run it with --profile full",
                    c.id
                )));
            }
            cases.retain(|c| c.profile == Profile::Core);
        }
        let known = match &cli.known_failures {
            None => None,
            Some(f) => Some((f.display().to_string(), known::read(f)?)),
        };
        if let Some((file, ids)) = &known
            && let Some(id) = ids.iter().find(|id| !found.iter().any(|(n, _)| n == *id))
        {
            return Err(Stop::Usage(format!(
                "{file} lists `{id}`, which is not a case"
            )));
        }
        let mut goldens = Vec::new();
        if !cli.bless && !cli.list && cli.profile == Profile::Full {
            goldens = cases
                .iter()
                .map(|c| {
                    case::load_golden(c)
                        .map_err(|e| errors.push(e))
                        .ok()
                        .flatten()
                })
                .collect();
        }
        if !errors.is_empty() {
            return Err(Stop::Unreadable(errors));
        }
        Ok(Suite {
            dir,
            version,
            cases,
            goldens,
            known,
        })
    }
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

/// `--list`: each case's ID, modes, profile and title, one a line.
fn listing(cases: &[Case], profile: Profile) -> String {
    let mut s = String::new();
    for c in cases {
        let modes: Vec<&str> = runner::modes_for(c, profile)
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
    s
}

/// How each unit starts its server: `--server` split, its program made
/// absolute, with the runner's PATH.
fn run_config(cli: &Cli) -> Result<RunConfig, Stop> {
    let server = cli
        .server
        .as_deref()
        .ok_or("--server is required".to_string())?;
    let argv = cli::split_command(server).and_then(absolute_program)?;
    Ok(RunConfig {
        argv,
        path_env: std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
        unit_deadline: UNIT_DEADLINE,
        is_root: nix::unistd::geteuid().is_root(),
        profile: cli.profile,
    })
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

/// The report in `--format`: text closes with the verdict, the wall time
/// and the count (the last line); JSON and JUnit are written whole.
fn write_report(
    cli: &Cli,
    header: &Header,
    reports: &[CaseReport],
    verdict: Option<&known::Verdict>,
    began: Instant,
) {
    match cli.format {
        Format::Text => {
            // Said before the closing count, which stays the last line.
            if let Some(v) = verdict {
                out(&v.text());
            }
            out(&format!(
                "wall time: {:.1} s, {} case(s) at a time\n",
                began.elapsed().as_secs_f64(),
                cli.jobs
            ));
            out(&report::text_footer(reports, cli.bless))
        }
        Format::Json => {
            let mut v = report::json_report(header, reports);
            if let (Some(k), Value::Object(m)) = (verdict, &mut v) {
                m.insert("known_failures".into(), k.json());
            }
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&v)
                    .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
            ));
        }
        Format::Junit => out(&report::junit_report(header, reports)),
    }
}

fn out(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}
