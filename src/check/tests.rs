//! The linter's unit tests: warnings, rendering and the report.

use super::text::{relative, render_finding};
use super::*;
use annotate_snippets::Renderer;
use rstest::rstest;

const PATH: &str = "/t/s/SKILL.md";

/// `text` as the one SKILL.md loader splits it.
fn md(text: &str) -> crate::catalog::LoadedMd {
    crate::catalog::LoadedMd::split(crate::catalog::SkillMd {
        text: text.to_owned(),
        cut: false,
    })
    .expect("a test SKILL.md splits")
}

fn warnings(text: &str) -> Vec<Finding> {
    spec_warnings(&md(text), "s", PATH, false)
}

fn kinds(fs: &[Finding]) -> Vec<&'static str> {
    fs.iter()
        .map(|f| match f.kind {
            Kind::Rule(r) => r.code(),
            Kind::Problem(_) => "problem",
        })
        .collect()
}

#[rstest]
#[case("pdf", None)]
#[case("mcp-builder", None)]
#[case("a1-b2", None)]
#[case("", Some("empty"))]
#[case("PDF", Some("'P'"))]
#[case("skill_one", Some("'_'"))]
#[case("v1.2", Some("'.'"))]
#[case("-pdf", Some("starts or ends"))]
#[case("pdf-", Some("starts or ends"))]
#[case("pdf--forms", Some("two hyphens"))]
#[case("café", Some("'é'"))]
fn the_name_rule(#[case] name: &str, #[case] why: Option<&str>) {
    match (name_violation(name), why) {
        (None, None) => {}
        (Some(got), Some(want)) => assert!(got.contains(want), "{name}: {got}"),
        (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
    }
}

#[test]
fn sixty_four_characters_is_the_most() {
    assert_eq!(name_violation(&"a".repeat(64)), None);
    assert!(name_violation(&"a".repeat(65)).is_some_and(|w| w.contains("65")));
}

#[test]
fn a_clean_skill_has_no_warnings() {
    let text = "---\nname: s\ndescription: Does a thing. Use it when a thing is needed.\ncompatibility: Needs node 20\nmetadata:\n  author: me\n  version: \"1.0\"\n---\n# S\n";
    assert_eq!(warnings(text), vec![]);
}

#[test]
fn missing_name_and_description_are_warned_without_a_position() {
    let w = warnings("---\nlicense: MIT\n---\nbody\n");
    assert_eq!(kinds(&w), ["agentskills-name", "agentskills-description"]);
    assert!(
        w.iter()
            .all(|f| f.line.is_none() && f.severity == Severity::Warning)
    );
    assert!(w[0].message.contains("name: s"), "{}", w[0].message);
}

#[test]
fn a_name_that_breaks_the_rule_points_at_its_value() {
    let w = spec_warnings(
        &md("---\nname: My_Skill\ndescription: d\n---\n"),
        "My_Skill",
        PATH,
        false,
    );
    assert_eq!(kinds(&w), ["agentskills-name"]);
    assert_eq!((w[0].line, w[0].column), (Some(2), Some(7)));
    assert_eq!(w[0].source.as_deref(), Some("name: My_Skill"));
}

#[test]
fn what_the_skills_door_refused_is_left_to_its_error() {
    let text = "---\nname: My_Skill\ndescription: \"\"\n---\n";
    assert_eq!(
        kinds(&spec_warnings(&md(text), "My_Skill", PATH, false)),
        ["agentskills-name", "agentskills-description"]
    );
    assert_eq!(spec_warnings(&md(text), "My_Skill", PATH, true), vec![]);
    assert_eq!(
        spec_warnings(&md("---\nlicense: MIT\n---\n"), "s", PATH, true),
        vec![]
    );
    // The door has no length limit: that warning stays.
    let long = format!("---\nname: s\ndescription: {}\n---\n", "x".repeat(1025));
    assert_eq!(
        kinds(&spec_warnings(&md(&long), "s", PATH, true)),
        ["agentskills-description"]
    );
}

#[test]
fn a_name_unlike_the_directory_is_left_to_the_server() {
    // The server reports name-mismatch; the check does not say it twice.
    assert_eq!(warnings("---\nname: Other\ndescription: d\n---\n"), vec![]);
}

#[test]
fn description_bounds() {
    let at = |n: usize| format!("---\nname: s\ndescription: {}\n---\n", "é".repeat(n));
    assert_eq!(warnings(&at(1024)), vec![]);
    let w = warnings(&at(1025));
    assert_eq!(kinds(&w), ["agentskills-description"]);
    assert!(w[0].message.contains("1025 characters"));
    assert_eq!((w[0].line, w[0].column), (Some(3), Some(14)));
    let w = warnings("---\nname: s\ndescription: \"  \"\n---\n");
    assert_eq!(kinds(&w), ["agentskills-description"]);
}

#[rstest]
#[case("compatibility: Needs git", 0)]
#[case("compatibility: \"\"", 1)]
#[case("compatibility:", 1)]
#[case("compatibility: [a, b]", 1)]
fn compatibility_is_a_short_string(#[case] line: &str, #[case] n: usize) {
    let w = warnings(&format!("---\nname: s\ndescription: d\n{line}\n---\n"));
    assert_eq!(w.len(), n, "{w:?}");
    assert!(w.iter().all(|f| f.kind == Kind::Rule(Rule::Compatibility)));
}

#[test]
fn compatibility_over_500_characters() {
    let w = warnings(&format!(
        "---\nname: s\ndescription: d\ncompatibility: {}\n---\n",
        "x".repeat(501)
    ));
    assert!(w[0].message.contains("501 characters"), "{w:?}");
}

#[test]
fn metadata_values_must_be_strings() {
    let w = warnings(
        "---\nname: s\ndescription: d\nmetadata:\n  author: me\n  version: 1.0\n  tags: [a]\n---\n",
    );
    assert_eq!(kinds(&w), ["agentskills-metadata", "agentskills-metadata"]);
    assert!(w[0].message.contains("\"metadata.version\" is a number"));
    assert_eq!((w[0].line, w[0].column), (Some(6), Some(12)));
    assert_eq!(w[0].source.as_deref(), Some("  version: 1.0"));
    let w = warnings("---\nname: s\ndescription: d\nmetadata: [a]\n---\n");
    assert!(w[0].message.contains("is a list"));
}

#[test]
fn a_body_over_500_lines_points_at_line_501_of_the_body() {
    let body: String = (1..=501).map(|i| format!("line {i}\n")).collect();
    let w = warnings(&format!("---\nname: s\ndescription: d\n---\n{body}"));
    assert_eq!(kinds(&w), ["agentskills-body"]);
    // The body starts on SKILL.md line 5.
    assert_eq!((w[0].line, w[0].column), (Some(505), Some(1)));
    assert_eq!(w[0].source.as_deref(), Some("line 501"));
    let body: String = (1..=500).map(|i| format!("line {i}\r\n")).collect();
    assert_eq!(
        warnings(&format!("---\nname: s\ndescription: d\n---\n{body}")),
        vec![]
    );
}

#[test]
fn a_file_that_no_longer_parses_is_an_error() {
    let w = warnings("---\nname: [oops\n---\n");
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].severity, Severity::Error);
    assert!(w[0].message.contains("changed while"));
}

#[rstest]
#[case(true, None, None, true)]
#[case(false, None, None, false)]
#[case(true, Some("1"), None, false)]
#[case(true, Some(""), None, true)]
#[case(true, None, Some("dumb"), false)]
#[case(true, None, Some("xterm-256color"), true)]
fn colour_only_on_a_terminal_without_no_color(
    #[case] tty: bool,
    #[case] no_color: Option<&str>,
    #[case] term: Option<&str>,
    #[case] want: bool,
) {
    assert_eq!(
        use_color(tty, no_color.map(OsStr::new), term.map(OsStr::new)),
        want
    );
}

#[test]
fn untrusted_text_cannot_drive_the_terminal() {
    let s = clean("a\u{1b}[31mred\nnext\u{9b}2J\u{202e}evil");
    assert!(!s.contains('\u{1b}'));
    assert!(!s.contains('\n'));
    assert!(!s.contains('\u{9b}'));
    assert!(!s.contains('\u{202e}'));
    assert!(s.contains("red") && s.contains("evil"));
}

fn finding(line: Option<usize>, column: Option<usize>, source: Option<&str>) -> Finding {
    Finding {
        severity: Severity::Error,
        kind: Kind::Problem(Reason::MalformedFrontmatter),
        path: "/r/x/SKILL.md".into(),
        line,
        column,
        message: match (line, column) {
            (Some(l), Some(c)) => format!("bad (line {l}, column {c})"),
            _ => "bad".into(),
        },
        source: source.map(str::to_owned),
    }
}

#[test]
fn a_positioned_finding_shows_its_line_and_a_caret() {
    let out = render_finding(
        &finding(Some(3), Some(8), Some("name: [oops")),
        "x/SKILL.md",
        &Renderer::plain(),
        false,
    );
    assert_eq!(
        out,
        "x/SKILL.md:3:8: error[malformed-frontmatter]: bad\n  |\n3 | name: [oops\n  |        ^\n"
    );
}

#[test]
fn a_caret_past_the_end_of_the_line_still_renders() {
    let out = render_finding(
        &finding(Some(2), Some(40), Some("a: [")),
        "x/SKILL.md",
        &Renderer::plain(),
        false,
    );
    assert!(out.contains("2 | a: ["), "{out}");
    assert!(out.ends_with("^\n"), "{out}");
}

#[test]
fn a_finding_without_a_position_is_one_line() {
    let out = render_finding(&finding(None, None, None), "x", &Renderer::plain(), false);
    assert_eq!(out, "x: error[malformed-frontmatter]: bad\n");
}

#[test]
fn kinds_are_the_wire_codes() {
    assert_eq!(
        Kind::Problem(Reason::DeclaredScriptMissing).code(),
        "declared-script-missing"
    );
    for rule in [
        Rule::Name,
        Rule::Description,
        Rule::Compatibility,
        Rule::Metadata,
        Rule::Body,
        Rule::NoSkills,
    ] {
        assert_eq!(
            serde_json::to_value(Kind::Rule(rule)).ok(),
            Some(serde_json::json!(rule.code()))
        );
    }
    assert_eq!(Kind::Rule(Rule::Body).code(), "agentskills-body");
}

#[test]
fn paths_are_shown_relative_to_the_base() {
    let bases = [PathBuf::from("/real/repo"), PathBuf::from("/work/repo")];
    assert_eq!(
        relative("/work/repo/skills/a/SKILL.md", &bases),
        "skills/a/SKILL.md"
    );
    assert_eq!(relative("/real/repo/x", &bases), "x");
    assert_eq!(relative("/work/repo", &bases), ".");
    assert_eq!(relative("/elsewhere/a", &bases), "/elsewhere/a");
    assert_eq!(relative("MCP_SKILL_RUN[0]", &bases), "MCP_SKILL_RUN[0]");
}

#[test]
fn dirs_are_read_as_skills_dir_would_read_them() {
    let env = [("MCP_SKILL_RUN".into(), "[]".into())]
        .into_iter()
        .collect();
    let base = Config::from_env(env, Path::new("/w"), PathBuf::from("/pkg/skills"));
    let c = with_dirs(
        base.clone(),
        &[PathBuf::from("a"), PathBuf::from("/b")],
        Some(Path::new("/w")),
    )
    .unwrap();
    assert_eq!(c.roots, [PathBuf::from("/w/a"), PathBuf::from("/b")]);
    assert_eq!(c.roots_from, RootsFrom::SkillsDir);
    assert_eq!(c.grant.as_deref(), Some("[]"));
    let same = with_dirs(base.clone(), &[], None).unwrap();
    assert_eq!(same.roots_from, RootsFrom::Default);
    assert_eq!(
        with_dirs(base.clone(), &[PathBuf::new()], None).unwrap_err(),
        UsageError::EmptyDir
    );
    assert!(matches!(
        with_dirs(base, &[PathBuf::from("rel")], None),
        Err(UsageError::NoWorkingDir(_))
    ));
}

/// The report of the tree at `root`, as `check ROOT` builds it.
fn report_of(root: &Path) -> Report {
    let config = with_dirs(
        Config::from_env(
            Default::default(),
            Path::new("/"),
            PathBuf::from("/pkg/skills"),
        ),
        &[root.to_path_buf()],
        Some(Path::new("/")),
    )
    .unwrap();
    Report::new(&Snapshot::boot(config), false)
}

fn put(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The summary says which served skills have errors, which skills were
/// refused, and the errors by code (CHECK-002, CHECK-004): a skill served
/// with a name unlike its folder's fails the check as surely as one
/// refused for its YAML.
#[test]
fn the_summary_names_what_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    put(&root, "ok/SKILL.md", "---\nname: ok\ndescription: d\n---\n");
    put(
        &root,
        "renamed/SKILL.md",
        "---\nname: other\ndescription: d\n---\n",
    );
    put(
        &root,
        "broken/SKILL.md",
        "---\nname: broken\ndescription: \"x\n---\n",
    );
    put(&root, "notes/a.md", "a\n");
    let r = report_of(&root);
    assert_eq!(r.failing, ["renamed"]);
    assert_eq!(
        r.refused
            .iter()
            .map(|x| x.name.as_str())
            .collect::<Vec<_>>(),
        ["broken"]
    );
    assert_eq!(
        r.summary(),
        "2 skills served (1 with errors: renamed); 1 skill refused (broken); 3 errors (1 malformed-frontmatter, \
         1 name-mismatch, 1 no-skill-md), 0 warnings"
    );
    assert!(!r.passed());
}

/// A timeout over the ceiling is served at the ceiling: a warning, which
/// fails the check only with --strict (CHECK-004).
#[test]
fn a_clamped_timeout_is_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    put(
        &root,
        "t/SKILL.md",
        "---\nname: t\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: run.js\n      interpreter: node\n      timeout: 600\n---\n",
    );
    put(&root, "t/run.js", "1");
    let r = report_of(&root);
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert_eq!(r.findings[0].severity, Severity::Warning);
    assert_eq!(r.findings[0].kind.code(), "timeout-clamped");
    assert!(r.passed());
    assert_eq!(r.summary(), "1 skill served; 0 errors, 1 warning");
    assert!(!Report { strict: true, ..r }.passed());
}
