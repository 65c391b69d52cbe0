//! Running the skills profile: which lifecycles the server answers the
//! extension in (asked once, before the cases), each case in each of
//! them against a fresh server and fixture, and the reports.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::case::{Mode, RelPath, SetupAction, WriteContent};
use crate::expect::check;
use crate::json::clip;
use crate::report::{self, CaseReport, Failure, ModeReport};
use crate::runner::run_pool;
use crate::session::Server;
use crate::skills::adapter::Adapter;
use crate::skills::case::{Gate, SepCase};
use crate::skills::fixture::Fixture;
use crate::skills::http::{Http, UrlSpec, free_port};
use crate::skills::instantiate::{Ctx, instantiate};
use crate::skills::probe::Prober;
use crate::skills::transport::{Broken, Client, Stdio, server_info};
use crate::workdir::WorkDir;

/// How every unit starts its server.
pub struct Config {
    /// `--server`, its program made absolute.
    pub argv: Vec<String>,
    /// The runner's PATH, passed on.
    pub path_env: OsString,
    pub adapter: Adapter,
    /// Total time one case may take in one lifecycle.
    pub unit_deadline: Duration,
    /// `--url`: Streamable HTTP to where it says, instead of stdio.
    pub url: Option<UrlSpec>,
}

/// The two lifecycles, as the report names them.
pub fn lifecycle_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Stateless => "2026-07-28 per-request _meta (stateless)",
        _ => "2025-11-25 initialize session",
    }
}

/// What the preflight learned of one lifecycle.
#[derive(Clone, Debug)]
pub struct Lifecycle {
    pub mode: Mode,
    /// Ok when the server answers `skills/list` in it; else why not.
    pub judged: Result<(), String>,
    pub capabilities: Option<Value>,
    pub server_info: Option<Value>,
    pub protocol: Option<String>,
}

impl Lifecycle {
    /// Whether the server declares `directoryRead: true` in it.
    fn directory_read(&self) -> bool {
        self.capabilities
            .as_ref()
            .and_then(|c| c.get("extensions"))
            .and_then(|e| e.get("io.modelcontextprotocol/skills"))
            .and_then(|s| s.get("directoryRead"))
            .and_then(Value::as_bool)
            == Some(true)
    }
}

/// The server's environment: built from nothing (FORMAT.md, *Isolation*)
/// but for what the adapter sets.
fn environment(
    work: &WorkDir,
    cfg: &Config,
    adapter_env: &[(String, String)],
) -> Vec<(String, OsString)> {
    let mut env: BTreeMap<String, OsString> = BTreeMap::new();
    env.insert("PATH".into(), cfg.path_env.clone());
    env.insert("HOME".into(), work.path.join("home").into_os_string());
    env.insert("TMPDIR".into(), work.path.join("tmp").into_os_string());
    env.insert("LANG".into(), "C.UTF-8".into());
    for (k, v) in adapter_env {
        env.insert(k.clone(), v.into());
    }
    env.into_iter().collect()
}

/// A server started on `work`'s fixture, through the adapter, in `mode`
/// (its lifecycle not yet opened).
fn start(
    work: &mut WorkDir,
    cfg: &Config,
    mode: Mode,
    deadline: Instant,
) -> Result<Client, String> {
    let port = match &cfg.url {
        Some(u) if u.wants_port() => Some(free_port()?),
        _ => None,
    };
    let applied = cfg
        .adapter
        .apply(work.path_str()?, cfg.url.is_some(), port)?;
    for (path, text) in &applied.files {
        work.apply(&SetupAction::Write {
            path: path.clone(),
            content: WriteContent::Bytes(text.clone().into_bytes()),
        })
        .map_err(|e| format!("the adapter's file {}: {e}", path.text))?;
    }
    let env = environment(work, cfg, &applied.env);
    let port_text = port.map(|p| p.to_string()).unwrap_or_default();
    let mut argv: Vec<String> = cfg
        .argv
        .iter()
        .map(|a| a.replace("${PORT}", &port_text))
        .collect();
    argv.extend(applied.args);
    let Some(spec) = &cfg.url else {
        let t = Stdio::spawn(&argv, &env, &work.path, deadline)?;
        return Ok(Client::new(Box::new(t), mode));
    };
    let server = Server::spawn(&argv, &env, &work.path)?;
    let t = Http::connect(server, spec, port, deadline)?;
    Ok(Client::new(Box::new(t), mode))
}

/// One lifecycle asked once, over a fixture of one skill: does the
/// server answer `skills/list` in it?
pub fn preflight(cfg: &Config, mode: Mode) -> Lifecycle {
    let mut lc = Lifecycle {
        mode,
        judged: Err(String::new()),
        capabilities: None,
        server_info: None,
        protocol: None,
    };
    let result = (|| -> Result<Result<(), String>, String> {
        let mut work = WorkDir::create()?;
        let skill = RelPath::parse("tree/preflight-skill/SKILL.md", false)?;
        work.apply(&SetupAction::Write {
            path: skill,
            content: WriteContent::Bytes(
                b"---\nname: preflight-skill\ndescription: The conformance runner's preflight.\n---\n".to_vec(),
            ),
        })?;
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut client = start(&mut work, cfg, mode, deadline)?;
        let judged = (|| -> Result<Result<(), String>, Broken> {
            client.open()?;
            if let Some(init) = &client.initialized {
                lc.server_info = server_info(init);
                lc.protocol = init
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(String::from);
                lc.capabilities = init.get("capabilities").cloned();
            } else {
                let d = client.call("server/discover", json!({}))?;
                if let Some(r) = d.get("result") {
                    lc.server_info = server_info(r);
                    lc.capabilities = r.get("capabilities").cloned();
                    lc.protocol = Some(crate::runner::STATELESS_PROTOCOL.into());
                }
            }
            let reply = client.call("skills/list", json!({}))?;
            Ok(match reply.get("result") {
                Some(r) if r.is_object() => Ok(()),
                _ => Err(format!(
                    "skills/list answered {}",
                    clip(&reply.get("error").unwrap_or(&reply).to_string(), 300)
                )),
            })
        })();
        let (exit, tail) = client.finish();
        if let Err(e) = work.cleanup() {
            eprintln!("warning: {e}");
        }
        Ok(match judged {
            Ok(j) => j,
            Err(b) => {
                let mut m = format!("{}; the server {exit}", b.0);
                if !tail.is_empty() {
                    m.push_str(&format!("; stderr: {}", tail.join(" | ")));
                }
                Err(m)
            }
        })
    })();
    lc.judged = match result {
        Ok(j) => j,
        Err(e) => Err(e),
    };
    lc
}

/// Runs `case` in `mode` against a fresh server and fixture.
pub fn run_unit(case: &SepCase, mode: Mode, cfg: &Config) -> ModeReport {
    let began = Instant::now();
    let deadline = began + cfg.unit_deadline;
    let mut report = ModeReport {
        mode,
        passed: false,
        not_applicable: None,
        duration_ms: 0,
        failures: Vec::new(),
        exit: String::new(),
        stderr_tail: Vec::new(),
        notifications: 0,
    };
    let quiet = |message: String| Failure {
        message,
        ..Failure::default()
    };
    let mut work = match WorkDir::create() {
        Ok(w) => w,
        Err(e) => {
            report.failures.push(quiet(e));
            return report;
        }
    };
    let prepared = (|| -> Result<(), String> {
        if let Some(f) = &case.fixture {
            work.copy_tree(f)
                .map_err(|e| format!("copying the fixture: {e}"))?;
        }
        work.copy_tree(&case.tree)
            .map_err(|e| format!("copying tree/: {e}"))?;
        for (i, a) in case.setup.iter().enumerate() {
            work.apply(a)
                .map_err(|e| format!("setup[{i}] ({}) failed: {e}", a.describe()))?;
        }
        Ok(())
    })();
    if let Err(e) = prepared {
        report.failures.push(quiet(e));
        return report;
    }
    let mut client = match start(&mut work, cfg, mode, deadline) {
        Err(e) => {
            report.failures.push(quiet(e));
            return report;
        }
        Ok(c) => c,
    };
    let fixture = Fixture::new(work.path.join("tree"));
    match client.open() {
        Ok(()) => steps(case, mode, &mut client, &fixture, &mut report),
        Err(b) => report.failures.push(Failure {
            message: format!("the {} did not open: {}", lifecycle_name(mode), b.0),
            show_stderr: true,
            ..Failure::default()
        }),
    }
    let (exit, tail) = client.finish();
    report.exit = exit;
    report.stderr_tail = tail;
    if let Err(e) = work.cleanup() {
        eprintln!("warning: {e}");
    }
    report.passed = report.failures.is_empty();
    report.duration_ms = began.elapsed().as_millis() as u64;
    report
}

/// Each probe, its view against its pattern; a server that stops
/// answering ends the unit.
fn steps(
    case: &SepCase,
    mode: Mode,
    client: &mut Client,
    fixture: &Fixture,
    report: &mut ModeReport,
) {
    let mut prober = match Prober::new(client, fixture) {
        Ok(p) => p,
        Err(e) => {
            report.failures.push(Failure {
                message: e,
                ..Failure::default()
            });
            return;
        }
    };
    let ctx = Ctx { fixture, mode };
    for (i, step) in case.steps.iter().enumerate() {
        let mut f = Failure {
            step: Some(i + 1),
            step_desc: Some(step.probe.describe()),
            ..Failure::default()
        };
        let view = match prober.run(&step.probe) {
            Ok(v) => v,
            Err(b) => {
                f.message = b.0;
                f.request = prober.client.last_sent().map(String::from);
                f.show_stderr = true;
                report.failures.push(f);
                return;
            }
        };
        let pattern = match instantiate(&step.expect, &ctx).and_then(|p| {
            crate::expect::validate(&p)
                .map(|()| p)
                .map_err(|e| format!("the instantiated pattern is not valid: {e}"))
        }) {
            Ok(p) => p,
            Err(e) => {
                f.message = format!("case error: {e}");
                report.failures.push(f);
                continue;
            }
        };
        if let Some(d) = check(&pattern, &view) {
            f.message = format!("the view does not match at {}: {}", d.path, d.what);
            f.path = Some(d.path);
            f.expected = d.expected;
            f.actual = d.actual;
            f.expected_frame = Some(pattern);
            f.actual_frame = Some(view);
            f.labels = Some(("expected (pattern)".into(), "actual (view)".into()));
            report.failures.push(f);
        }
    }
}

/// The modes `case` runs in against this server, and the ones it cannot
/// (each with its reason).
fn plan_modes(case: &SepCase, lifecycles: &[Lifecycle]) -> (Vec<Mode>, Vec<ModeReport>) {
    let mut run = Vec::new();
    let mut skipped = Vec::new();
    for &m in &case.modes {
        let Some(lc) = lifecycles.iter().find(|l| l.mode == m) else {
            continue;
        };
        let why = match (&lc.judged, case.requires.contains(&Gate::DirectoryRead)) {
            (Err(e), _) => Some(format!(
                "the server does not answer the extension in the {} ({e})",
                lifecycle_name(m)
            )),
            (Ok(()), true) if !lc.directory_read() => Some(format!(
                "the server does not declare directoryRead: true in the {}",
                lifecycle_name(m)
            )),
            _ => None,
        };
        match why {
            Some(w) => skipped.push(report::not_applicable(m, w)),
            None => run.push(m),
        }
    }
    (run, skipped)
}

/// Every case in every mode it runs in, `jobs` at a time; `each` is told
/// each case's report, in order, as soon as all its modes are in.
pub fn run_cases(
    cases: Vec<SepCase>,
    lifecycles: &[Lifecycle],
    cfg: Arc<Config>,
    jobs: usize,
    mut each: impl FnMut(&CaseReport),
) -> Vec<CaseReport> {
    let cases = Arc::new(cases);
    let plans: Vec<(Vec<Mode>, Vec<ModeReport>)> =
        cases.iter().map(|c| plan_modes(c, lifecycles)).collect();
    let units: Arc<Vec<(usize, Mode)>> = Arc::new(
        plans
            .iter()
            .enumerate()
            .flat_map(|(ci, (modes, _))| modes.iter().map(move |&m| (ci, m)))
            .collect(),
    );
    let rx = {
        let (cases, units, cfg) = (Arc::clone(&cases), Arc::clone(&units), Arc::clone(&cfg));
        run_pool(units.len(), jobs, move |u| {
            let (ci, m) = units[u];
            run_unit(&cases[ci], m, &cfg)
        })
    };
    let mut slots: Vec<Vec<Option<ModeReport>>> = plans
        .iter()
        .map(|(modes, _)| modes.iter().map(|_| None).collect())
        .collect();
    let mut reports = Vec::new();
    loop {
        while let Some(row) = slots.get_mut(reports.len())
            && row.iter().all(Option::is_some)
        {
            let ci = reports.len();
            let c = &cases[ci];
            let mut modes: Vec<ModeReport> = row.iter_mut().filter_map(Option::take).collect();
            modes.extend(plans[ci].1.iter().cloned());
            let r = if modes.iter().all(|m| m.not_applicable.is_some()) {
                let why = modes
                    .iter()
                    .filter_map(|m| m.not_applicable.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                let mut r = CaseReport::skipped(
                    &c.id,
                    &c.title,
                    if why.is_empty() {
                        "no lifecycle to run it in".into()
                    } else {
                        why
                    },
                );
                r.sentences = c.sentences.clone();
                r
            } else {
                CaseReport {
                    id: c.id.clone(),
                    title: c.title.clone(),
                    modes,
                    case_failures: Vec::new(),
                    golden: None,
                    not_applicable: None,
                    sentences: c.sentences.clone(),
                }
            };
            each(&r);
            reports.push(r);
        }
        if reports.len() >= cases.len() {
            break;
        }
        match rx.recv() {
            Ok((u, result)) => {
                let (ci, m) = units[u];
                let rep = result.unwrap_or_else(|msg| ModeReport {
                    mode: m,
                    passed: false,
                    not_applicable: None,
                    duration_ms: 0,
                    failures: vec![Failure {
                        message: msg,
                        ..Failure::default()
                    }],
                    exit: String::new(),
                    stderr_tail: Vec::new(),
                    notifications: 0,
                });
                if let Some(mi) = plans[ci].0.iter().position(|&x| x == m) {
                    slots[ci][mi] = Some(rep);
                }
            }
            Err(_) => {
                for row in slots.iter_mut() {
                    for s in row.iter_mut().filter(|s| s.is_none()) {
                        *s = Some(ModeReport {
                            mode: Mode::Initialize,
                            passed: false,
                            not_applicable: None,
                            duration_ms: 0,
                            failures: vec![Failure {
                                message: "internal error: this unit never ran".into(),
                                ..Failure::default()
                            }],
                            exit: String::new(),
                            stderr_tail: Vec::new(),
                            notifications: 0,
                        });
                    }
                }
            }
        }
    }
    reports
}
