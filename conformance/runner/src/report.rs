//! The report (FORMAT.md, *The report*): text, JSON or JUnit XML.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::case::{Mode, Profile};
use crate::json::clip;

/// The server's identity from the preflight initialize.
#[derive(Clone, Debug, Default)]
pub struct ServerIdentity {
    pub server_info: Option<Value>,
    pub protocol_version: Option<String>,
    pub error: Option<String>,
    /// `initialize`'s `capabilities`, for the capability gates.
    pub capabilities: Option<Value>,
    /// Whether `server/discover` (the stateless mode) is answered; asked
    /// in the full profile only.
    pub stateless: Option<Result<(), String>>,
}

/// One thing that went wrong.
#[derive(Clone, Debug, Default)]
pub struct Failure {
    /// 1-based step number, when the failure belongs to a step.
    pub step: Option<usize>,
    pub step_desc: Option<String>,
    pub message: String,
    /// The line the runner sent for that step.
    pub request: Option<String>,
    /// The first differing path and the values there.
    pub path: Option<String>,
    pub expected: Option<Value>,
    pub actual: Option<Value>,
    /// The whole normalized frames.
    pub expected_frame: Option<Value>,
    pub actual_frame: Option<Value>,
    /// Labels for expected/actual (default "expected"/"actual").
    pub labels: Option<(String, String)>,
    /// Whether the server's stderr explains this failure (crash, timeout…).
    pub show_stderr: bool,
}

#[derive(Clone, Debug)]
pub struct ModeReport {
    pub mode: Mode,
    pub passed: bool,
    /// Not applicable, and why: the mode was not run (e.g. stateless
    /// against a server without `server/discover`).
    pub not_applicable: Option<String>,
    pub duration_ms: u64,
    pub failures: Vec<Failure>,
    pub exit: String,
    pub stderr_tail: Vec<String>,
    pub notifications: usize,
}

#[derive(Clone, Debug)]
pub struct CaseReport {
    pub id: String,
    pub title: String,
    pub modes: Vec<ModeReport>,
    /// Failures of the case as a whole (bless: modes disagree, golden not written).
    pub case_failures: Vec<Failure>,
    /// Bless only: "created", "updated" or "unchanged".
    pub golden: Option<&'static str>,
    /// Not applicable as a whole, and why: nothing of it was run.
    pub not_applicable: Option<String>,
    /// The skills profile: the numbered sentences of spec/sep-2640.md the
    /// case checks (empty in the other profiles).
    pub sentences: Vec<String>,
}

/// A case's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    NotApplicable,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::NotApplicable => "n/a",
        }
    }
}

impl CaseReport {
    pub fn passed(&self) -> bool {
        self.status() == Status::Pass
    }

    pub fn status(&self) -> Status {
        if self.not_applicable.is_some() {
            Status::NotApplicable
        } else if self.case_failures.is_empty() && self.modes.iter().all(|m| m.passed) {
            Status::Pass
        } else {
            Status::Fail
        }
    }

    /// A case reported `N/A` because the server lacks what it needs.
    pub fn skipped(id: &str, title: &str, why: String) -> CaseReport {
        CaseReport {
            id: id.to_string(),
            title: title.to_string(),
            modes: Vec::new(),
            case_failures: Vec::new(),
            golden: None,
            not_applicable: Some(why),
            sentences: Vec::new(),
        }
    }
}

pub struct Header {
    pub runner_version: &'static str,
    pub suite_version: String,
    pub cases_dir: String,
    pub server: ServerIdentity,
    pub bless: bool,
    pub profile: Profile,
    /// Lines said after the profile's (the skills profile: the adapter,
    /// which lifecycles are judged and why a lifecycle is not).
    pub notes: Vec<String>,
}

const FRAME_MAX: usize = 4000;

fn compact(v: &Value) -> String {
    clip(&v.to_string(), FRAME_MAX)
}

fn opt_compact(v: &Option<Value>) -> String {
    match v {
        Some(v) => compact(v),
        None => "(absent)".to_string(),
    }
}

pub fn server_line(s: &ServerIdentity) -> String {
    match (&s.server_info, &s.error) {
        (Some(info), _) => {
            let name = info.get("name").and_then(Value::as_str).unwrap_or("?");
            let version = info.get("version").and_then(Value::as_str).unwrap_or("?");
            format!(
                "{name} {version}, protocol {} (serverInfo {})",
                s.protocol_version.as_deref().unwrap_or("(none)"),
                compact(info)
            )
        }
        (None, Some(e)) => format!("unknown: the preflight initialize failed: {e}"),
        (None, None) => "unknown".to_string(),
    }
}

pub fn text_header(h: &Header) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "skill-mcp-conformance {}", h.runner_version);
    let _ = writeln!(s, "suite {} ({})", h.suite_version, h.cases_dir);
    let _ = writeln!(s, "server: {}", server_line(&h.server));
    let _ = writeln!(
        s,
        "profile: {} ({})",
        h.profile.as_str(),
        match h.profile {
            Profile::Core => "the design of record's rules, by hand-written expectations",
            Profile::Full => "everything this suite checks, by recorded goldens",
            Profile::Skills =>
                "SEP-2640's own sentences (spec/sep-2640.md), by hand-written expectations on fixtures",
        }
    );
    for n in &h.notes {
        let _ = writeln!(s, "{n}");
    }
    if let Some(Err(why)) = &h.server.stateless {
        let _ = writeln!(s, "stateless mode: not applicable ({why})");
    }
    if h.bless {
        let _ = writeln!(s, "mode: --bless (recording goldens)");
    }
    s
}

fn mode_list(c: &CaseReport) -> String {
    c.modes
        .iter()
        .map(|m| match m.not_applicable {
            Some(_) => format!("{} n/a", m.mode.as_str()),
            None => m.mode.as_str().to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn failure_text(out: &mut String, indent: &str, who: &str, f: &Failure, m: Option<&ModeReport>) {
    let step = match (f.step, &f.step_desc) {
        (Some(n), Some(d)) => format!("step {n} ({d}): "),
        (Some(n), None) => format!("step {n}: "),
        _ => String::new(),
    };
    let _ = writeln!(out, "{indent}{who}{step}{}", f.message);
    let d = format!("{indent}    ");
    if let Some(r) = &f.request {
        let _ = writeln!(out, "{d}sent:     {}", clip(r, FRAME_MAX));
    }
    let (el, al) = f
        .labels
        .clone()
        .unwrap_or_else(|| ("expected".to_string(), "actual".to_string()));
    if let Some(p) = &f.path {
        let _ = writeln!(out, "{d}at:       {p}");
        let _ = writeln!(out, "{d}{el:<9} {}", opt_compact(&f.expected));
        let _ = writeln!(out, "{d}{al:<9} {}", opt_compact(&f.actual));
    }
    if let Some(e) = &f.expected_frame {
        let _ = writeln!(out, "{d}{el} frame: {}", compact(e));
    }
    if let Some(a) = &f.actual_frame {
        let _ = writeln!(out, "{d}{al} frame: {}", compact(a));
    }
    if f.show_stderr
        && let Some(m) = m
    {
        if !m.exit.is_empty() {
            let _ = writeln!(out, "{d}server {}", m.exit);
        }
        if m.stderr_tail.is_empty() {
            let _ = writeln!(out, "{d}(the server wrote nothing to stderr)");
        } else {
            let _ = writeln!(out, "{d}stderr (last {} lines):", m.stderr_tail.len());
            for l in &m.stderr_tail {
                let _ = writeln!(out, "{d}  | {l}");
            }
        }
    }
}

/// One case in text: the PASS/FAIL line and, for a failure, the details.
pub fn text_case(c: &CaseReport) -> String {
    let mut s = String::new();
    if let Some(why) = &c.not_applicable {
        let _ = writeln!(s, "N/A  {} {}: {why}", c.id, c.title);
        return s;
    }
    let status = if c.passed() { "PASS" } else { "FAIL" };
    let golden = match c.golden {
        Some(g) => format!(" (golden {g})"),
        None => String::new(),
    };
    let _ = writeln!(
        s,
        "{status} {} [{}] {}{golden}",
        c.id,
        mode_list(c),
        c.title
    );
    for m in &c.modes {
        for f in &m.failures {
            failure_text(
                &mut s,
                "    ",
                &format!("{}: ", m.mode.as_str()),
                f,
                Some(m),
            );
        }
    }
    for f in &c.case_failures {
        failure_text(&mut s, "    ", "", f, None);
    }
    if !c.passed() && !c.sentences.is_empty() {
        let _ = writeln!(s, "    sentences: {}", c.sentences.join(", "));
    }
    s
}

/// Passed, failed and skipped (not applicable) cases.
pub fn counts(cases: &[CaseReport]) -> (usize, usize, usize) {
    let n = |s: Status| cases.iter().filter(|c| c.status() == s).count();
    (n(Status::Pass), n(Status::Fail), n(Status::NotApplicable))
}

/// The closing line: `N passed, M failed`, then `, K skipped` when any case
/// was not applicable.
pub fn closing_line(cases: &[CaseReport]) -> String {
    let (p, f, k) = counts(cases);
    if k == 0 {
        format!("{p} passed, {f} failed")
    } else {
        format!("{p} passed, {f} failed, {k} skipped")
    }
}

pub fn text_footer(cases: &[CaseReport], bless: bool) -> String {
    let mut s = String::new();
    if bless {
        let changed: Vec<String> = cases
            .iter()
            .filter(|c| matches!(c.golden, Some("created" | "updated")))
            .map(|c| format!("{} ({})", c.id, c.golden.unwrap_or("")))
            .collect();
        if changed.is_empty() {
            let _ = writeln!(s, "goldens changed: none");
        } else {
            let _ = writeln!(s, "goldens changed: {}", changed.join(", "));
        }
    }
    let _ = writeln!(s, "{}", closing_line(cases));
    s
}

fn failure_json(f: &Failure) -> Value {
    let mut v = json!({ "message": f.message });
    let put = |v: &mut Value, k: &str, x: Value| {
        if let Value::Object(m) = v {
            m.insert(k.to_string(), x);
        }
    };
    if let Some(n) = f.step {
        put(&mut v, "step", json!(n));
    }
    if let Some(d) = &f.step_desc {
        put(&mut v, "step_kind", json!(d));
    }
    if let Some(r) = &f.request {
        put(&mut v, "sent", json!(r));
    }
    if let Some(p) = &f.path {
        put(&mut v, "path", json!(p));
        put(
            &mut v,
            "expected",
            f.expected.clone().unwrap_or(Value::Null),
        );
        put(&mut v, "actual", f.actual.clone().unwrap_or(Value::Null));
        put(&mut v, "expected_present", json!(f.expected.is_some()));
        put(&mut v, "actual_present", json!(f.actual.is_some()));
    }
    if let Some((e, a)) = &f.labels {
        put(&mut v, "labels", json!([e, a]));
    }
    if let Some(e) = &f.expected_frame {
        put(&mut v, "expected_frame", e.clone());
    }
    if let Some(a) = &f.actual_frame {
        put(&mut v, "actual_frame", a.clone());
    }
    v
}

pub fn json_report(h: &Header, cases: &[CaseReport]) -> Value {
    let (passed, failed, skipped) = counts(cases);
    let server = json!({
        "serverInfo": h.server.server_info.clone().unwrap_or(Value::Null),
        "protocolVersion": h.server.protocol_version,
        "error": h.server.error,
        "capabilities": h.server.capabilities,
        "stateless": match &h.server.stateless {
            None => Value::Null,
            Some(Ok(())) => json!(true),
            Some(Err(why)) => json!({"not_applicable": why}),
        },
    });
    let cases: Vec<Value> = cases
        .iter()
        .map(|c| {
            let mut v = json!({
                "id": c.id,
                "title": c.title,
                "status": c.status().as_str(),
                "modes": c.modes.iter().map(|m| m.mode.as_str()).collect::<Vec<_>>(),
                "results": c.modes.iter().map(|m| json!({
                    "mode": m.mode.as_str(),
                    "status": match (&m.not_applicable, m.passed) {
                        (Some(_), _) => "n/a",
                        (None, true) => "pass",
                        (None, false) => "fail",
                    },
                    "reason": m.not_applicable,
                    "duration_ms": m.duration_ms,
                    "server_exit": m.exit,
                    "notifications": m.notifications,
                    "failures": m.failures.iter().map(failure_json).collect::<Vec<_>>(),
                    "stderr_tail": if m.passed { Vec::new() } else { m.stderr_tail.clone() },
                })).collect::<Vec<_>>(),
                "failures": c.case_failures.iter().map(failure_json).collect::<Vec<_>>(),
            });
            if let (Some(g), Value::Object(m)) = (c.golden, &mut v) {
                m.insert("golden".into(), json!(g));
            }
            if let (Some(why), Value::Object(m)) = (&c.not_applicable, &mut v) {
                m.insert("reason".into(), json!(why));
            }
            if let (false, Value::Object(m)) = (c.sentences.is_empty(), &mut v) {
                m.insert("sentences".into(), json!(c.sentences));
            }
            v
        })
        .collect();
    json!({
        "runner": {"name": "skill-mcp-conformance", "version": h.runner_version},
        "suite_version": h.suite_version,
        "cases_dir": h.cases_dir,
        "server": server,
        "bless": h.bless,
        "profile": h.profile.as_str(),
        "notes": h.notes,
        "cases": cases,
        "passed": passed,
        "failed": failed,
        "skipped": skipped,
    })
}

/// Escapes text for XML 1.0: markup characters, and characters XML cannot
/// hold at all (most control characters) replaced by U+FFFD.
pub fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

pub fn junit_report(h: &Header, cases: &[CaseReport]) -> String {
    let mut tests = 0;
    let mut failures = 0;
    let mut skipped = 0;
    let mut total_ms = 0u64;
    let mut body = String::new();
    let skip = |body: &mut String, name: String, c: &CaseReport, why: &str| {
        let _ = writeln!(
            body,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"0.000\">\n      <skipped message=\"{}\"/>\n    </testcase>",
            xml_escape(&c.id),
            xml_escape(&name),
            xml_escape(why)
        );
    };
    for c in cases {
        if let Some(why) = &c.not_applicable {
            tests += 1;
            skipped += 1;
            skip(&mut body, format!("{} {}", c.id, c.title), c, why);
            continue;
        }
        for m in &c.modes {
            tests += 1;
            total_ms += m.duration_ms;
            if let Some(why) = &m.not_applicable {
                skipped += 1;
                skip(
                    &mut body,
                    format!("{} [{}] {}", c.id, m.mode.as_str(), c.title),
                    c,
                    why,
                );
                continue;
            }
            let ok = m.passed && c.case_failures.is_empty();
            let _ = write!(
                body,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                xml_escape(&c.id),
                xml_escape(&format!("{} [{}] {}", c.id, m.mode.as_str(), c.title)),
                m.duration_ms as f64 / 1000.0
            );
            if ok {
                body.push_str("/>\n");
                continue;
            }
            failures += 1;
            body.push_str(">\n");
            let all: Vec<&Failure> = m.failures.iter().chain(&c.case_failures).collect();
            let first = all.first().map(|f| f.message.clone()).unwrap_or_default();
            let mut text = String::new();
            for f in &m.failures {
                failure_text(&mut text, "", "", f, Some(m));
            }
            for f in &c.case_failures {
                failure_text(&mut text, "", "", f, None);
            }
            if !c.sentences.is_empty() {
                let _ = writeln!(text, "sentences: {}", c.sentences.join(", "));
            }
            let _ = writeln!(
                body,
                "      <failure message=\"{}\">{}</failure>",
                xml_escape(&clip(&first, 500)),
                xml_escape(&text)
            );
            if !m.stderr_tail.is_empty() {
                let _ = writeln!(
                    body,
                    "      <system-err>{}</system-err>",
                    xml_escape(&m.stderr_tail.join("\n"))
                );
            }
            body.push_str("    </testcase>\n");
        }
    }
    let mut s = String::new();
    s.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"skill-mcp-conformance\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{:.3}\">",
        total_ms as f64 / 1000.0
    );
    let _ = writeln!(
        s,
        "  <testsuite name=\"skill-mcp-conformance\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{:.3}\">",
        total_ms as f64 / 1000.0
    );
    s.push_str("    <properties>\n");
    let props = [
        ("runner_version", h.runner_version.to_string()),
        ("suite_version", h.suite_version.clone()),
        ("server", server_line(&h.server)),
        ("profile", h.profile.as_str().to_string()),
        (
            "protocol_version",
            h.server.protocol_version.clone().unwrap_or_default(),
        ),
    ];
    for (k, v) in props {
        let _ = writeln!(
            s,
            "      <property name=\"{k}\" value=\"{}\"/>",
            xml_escape(&v)
        );
    }
    s.push_str("    </properties>\n");
    s.push_str(&body);
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// A mode that was not run, and why.
pub fn not_applicable(mode: Mode, why: String) -> ModeReport {
    ModeReport {
        mode,
        passed: true,
        not_applicable: Some(why),
        duration_ms: 0,
        failures: Vec::new(),
        exit: String::new(),
        stderr_tail: Vec::new(),
        notifications: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            runner_version: "0.1.0",
            suite_version: "0.1.0".into(),
            cases_dir: "/c".into(),
            server: ServerIdentity {
                server_info: Some(json!({"name": "srv", "version": "1.2"})),
                protocol_version: Some("2025-11-25".into()),
                error: None,
                capabilities: Some(json!({"tools": {}})),
                stateless: Some(Err("server/discover answered -32601".into())),
            },
            bless: false,
            profile: Profile::Full,
            notes: Vec::new(),
        }
    }

    fn cases() -> Vec<CaseReport> {
        let ok = ModeReport {
            mode: Mode::Initialize,
            passed: true,
            not_applicable: None,
            duration_ms: 12,
            failures: vec![],
            exit: "exited with status 0".into(),
            stderr_tail: vec![],
            notifications: 0,
        };
        let bad = ModeReport {
            mode: Mode::Stateless,
            passed: false,
            failures: vec![Failure {
                step: Some(2),
                step_desc: Some("request tools/call".into()),
                message: "replies differ at result.a: value differs".into(),
                request: Some("{\"id\":1}".into()),
                path: Some("result.a".into()),
                expected: Some(json!("x")),
                actual: Some(json!("y<&>")),
                ..Failure::default()
            }],
            stderr_tail: vec!["warn \u{1b}[0m".into()],
            ..ok.clone()
        };
        vec![
            CaseReport {
                id: "A-001".into(),
                title: "first".into(),
                modes: vec![ok.clone()],
                case_failures: vec![],
                golden: None,
                not_applicable: None,
                sentences: Vec::new(),
            },
            CaseReport {
                id: "B-002".into(),
                title: "second".into(),
                modes: vec![ok, bad],
                case_failures: vec![],
                golden: None,
                not_applicable: None,
                sentences: Vec::new(),
            },
        ]
    }

    #[test]
    fn text_lines_and_footer() {
        let c = cases();
        assert_eq!(text_case(&c[0]), "PASS A-001 [initialize] first\n");
        let t = text_case(&c[1]);
        assert!(
            t.starts_with("FAIL B-002 [initialize,stateless] second\n"),
            "{t}"
        );
        assert!(
            t.contains("stateless: step 2 (request tools/call): replies differ at result.a"),
            "{t}"
        );
        assert!(t.contains("at:       result.a"), "{t}");
        assert!(t.contains("expected  \"x\""), "{t}");
        assert_eq!(text_footer(&c, false), "1 passed, 1 failed\n");
        let h = text_header(&header());
        assert!(
            h.contains("skill-mcp-conformance 0.1.0\nsuite 0.1.0"),
            "{h}"
        );
        assert!(h.contains("server: srv 1.2, protocol 2025-11-25"), "{h}");
    }

    #[test]
    fn json_is_complete() {
        let v = json_report(&header(), &cases());
        assert_eq!(v["passed"], 1);
        assert_eq!(v["failed"], 1);
        assert_eq!(v["server"]["serverInfo"]["name"], "srv");
        assert_eq!(v["cases"][1]["status"], "fail");
        assert_eq!(
            v["cases"][1]["results"][1]["failures"][0]["path"],
            "result.a"
        );
        assert_eq!(v["cases"][1]["results"][1]["failures"][0]["step"], 2);
    }

    #[test]
    fn junit_is_escaped_and_counts_units() {
        let x = junit_report(&header(), &cases());
        assert!(x.contains("tests=\"3\" failures=\"1\""), "{x}");
        assert!(x.contains("name=\"B-002 [stateless] second\""), "{x}");
        assert!(x.contains("y&lt;&amp;&gt;"), "{x}");
        assert!(
            !x.contains('\u{1b}'),
            "control characters are not valid XML"
        );
        assert_eq!(xml_escape("a\"b'\u{0}"), "a&quot;b&apos;\u{FFFD}");
    }

    #[test]
    fn not_applicable_is_skipped_in_every_format_never_failed() {
        let mut c = cases();
        c.push(CaseReport::skipped(
            "SKX-001",
            "skills",
            "the server does not advertise the MCP Skills extension".into(),
        ));
        let mut partly = c[0].clone();
        partly.id = "C-003".into();
        partly
            .modes
            .push(not_applicable(Mode::Stateless, "no server/discover".into()));
        c.push(partly);
        assert_eq!(counts(&c), (2, 1, 1));
        assert_eq!(text_footer(&c, false), "2 passed, 1 failed, 1 skipped\n");
        assert_eq!(
            text_case(&c[2]),
            "N/A  SKX-001 skills: the server does not advertise the MCP Skills extension\n"
        );
        assert!(text_case(&c[3]).starts_with("PASS C-003 [initialize,stateless n/a]"));
        let v = json_report(&header(), &c);
        assert_eq!(v["skipped"], 1);
        assert_eq!(v["cases"][2]["status"], "n/a");
        assert!(
            v["cases"][2]["reason"]
                .as_str()
                .unwrap()
                .contains("Skills extension")
        );
        assert_eq!(v["cases"][3]["results"][1]["status"], "n/a");
        assert_eq!(v["profile"], "full");
        let x = junit_report(&header(), &c);
        assert!(x.contains("skipped=\"2\""), "{x}");
        assert!(
            x.contains("<skipped message=\"no server/discover\"/>"),
            "{x}"
        );
        let h = text_header(&header());
        assert!(h.contains("profile: full"), "{h}");
        assert!(h.contains("stateless mode: not applicable"), "{h}");
    }
}
