//! The suite catches a wrong server (issue "The conformance suite as a
//! product" §4): the conformance runner, run through a proxy that breaks
//! one rule at a time, fails the cases about that rule — and passes them
//! through a proxy that breaks nothing.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

const SERVER: &str = env!("CARGO_BIN_EXE_skill-mcp");
const PROXY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/mutating_proxy.py"
);

/// The shape proxy of `.ci/test core-reshaped`: another shape the design
/// of record allows, a renamed server, `"x-impl": "shape-proxy"` in every
/// object of every result.
const SHAPE_PROXY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/shape_proxy.py");

/// Runs `cases` through the proxy with `mutation`; returns the IDs that failed.
fn failing(mutation: &str, cases: &str) -> Vec<String> {
    failing_in(
        "full",
        &format!("python3 {PROXY} {mutation} {SERVER}"),
        cases,
    )
}

/// Runs `cases` in `profile` against the server command `server`; returns
/// the IDs that did not pass.
fn failing_in(profile: &str, server: &str, cases: &str) -> Vec<String> {
    statuses(profile, server, Some(cases))
        .into_iter()
        .filter(|(_, status)| status != "pass")
        .map(|(id, _)| id)
        .collect()
}

/// The runner's JSON report of a run with `args`.
fn report(args: &[&str]) -> serde_json::Value {
    let out = Command::new(common::runner())
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("the runner runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Runs `only` (or every case) of `profile` against the server command
/// `server`; returns each case's ID and status.
fn statuses(profile: &str, server: &str, only: Option<&str>) -> Vec<(String, String)> {
    let mut args = vec!["--profile", profile, "--server", server, "--jobs", "2"];
    if let Some(cases) = only {
        args.extend(["--only", cases]);
    }
    let report = report(&args);
    let cases = report["cases"].as_array().expect("cases in the report");
    cases
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn an_honest_proxy_passes() {
    assert_eq!(
        failing("none", "DISC-014,LOAD-001,READ-004,RUN-012,DISC-002"),
        Vec::<String>::new()
    );
}

#[test]
fn each_broken_rule_is_caught_by_its_cases() {
    for (mutation, cases) in [
        ("drop-problems", "DISC-014"),
        ("normalize-newlines", "LOAD-001"),
        ("never-truncated", "READ-004"),
        ("leak-env", "RUN-012"),
        ("frontmatter-name", "DISC-002"),
    ] {
        assert_eq!(
            failing(mutation, cases),
            vec![cases.to_owned()],
            "{mutation} was not caught by {cases}"
        );
    }
}

/// Issue 29 §6: the core profile judges the design of record, not this
/// server. Behind the shape proxy the server calls itself something else
/// and every object carries a field of the proxy's own; SRV-001 (which
/// once required the name `skill-mcp`) and RUN-017 (which once scanned
/// the whole result for "proxy") still pass.
#[test]
fn core_passes_a_renamed_server_with_fields_of_its_own() {
    // The proxy really does rename and add: otherwise this proves nothing.
    let mut proxy = Command::new("python3")
        .args([SHAPE_PROXY, SERVER])
        .env("SKILLS_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/skills"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 runs the shape proxy");
    let mut stdin = proxy.stdin.take().expect("piped");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .expect("write");
    drop(stdin);
    let out = proxy.wait_with_output().expect("the proxy ends at EOF");
    let init: serde_json::Value =
        serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap_or_default())
            .expect("the proxy answers initialize with JSON");
    let result = &init["result"];
    assert_ne!(result["serverInfo"]["name"], "skill-mcp", "{init}");
    assert_eq!(result["x-impl"], "shape-proxy", "{init}");
    assert_eq!(
        result["capabilities"]["tools"]["x-impl"], "shape-proxy",
        "{init}"
    );
    assert_eq!(
        failing_in(
            "core",
            &format!("python3 {SHAPE_PROXY} {SERVER}"),
            "RUN-017,SRV-001"
        ),
        Vec::<String>::new()
    );
}

/// RUN-017 looks where a fenced-machine note can be, and only there: a
/// 403 in a number or beside a lone "proxy" passes; the original's note
/// under its own key fails.
#[test]
fn run_017_finds_a_note_under_any_key_and_nothing_else() {
    let through = |m: &str| format!("python3 {PROXY} {m} {SERVER}");
    assert_eq!(
        failing_in("core", &through("noise-403"), "RUN-017"),
        Vec::<String>::new()
    );
    assert_eq!(
        failing_in("core", &through("fenced-note-elsewhere"), "RUN-017"),
        vec!["RUN-017".to_owned()]
    );
}

/// The skills profile's shape proxy (issue 45 §4): where SEP-2640 leaves
/// a choice, it makes another one than this server.
const SKILLS_SHAPE_PROXY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/skills_shape_proxy.py"
);

/// Issue 45 §4: a server that answers every SEP-2640 request validly but
/// differently from this one passes the skills profile whole. Behind the
/// proxy, pages hold two entries under cursors of the proxy's own, one
/// skill is `"dynamic"`, every object but the frontmatter carries a member
/// of the proxy's own, keys and manifests come reversed and errors are
/// worded otherwise — checked here first, or the run below proves nothing.
#[test]
fn skills_passes_a_server_that_chooses_otherwise_wherever_the_extension_lets_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["alpha", "beta", "gamma"] {
        common::skill(dir.path(), name);
        std::fs::write(dir.path().join(name).join("notes.md"), name).expect("write");
    }
    let root = dir.path().to_str().expect("a UTF-8 temp path");
    let mut cmd = Command::new("python3");
    cmd.args([SKILLS_SHAPE_PROXY, SERVER]);
    let mut s = common::Session::start_command(cmd, &[("SKILLS_DIR", root)]);
    s.notify("notifications/initialized", serde_json::json!({}));

    let line = s.request_line("skills/list", serde_json::json!({}));
    let first: serde_json::Value = serde_json::from_str(&line).expect("JSON");
    let page = first["result"]["skills"]
        .as_array()
        .expect("a page of skills");
    assert_eq!(page.len(), 2, "{first}");
    let cursor = first["result"]["nextCursor"].as_str().expect("a next page");
    assert!(cursor.starts_with("reshaped."), "{first}");
    assert_eq!(
        first["result"]["x-reshaped"], "skills-shape-proxy",
        "{first}"
    );
    // Keys in reverse order, as written (a Value would sort them).
    let at = |k: &str| line.find(&format!("\"{k}\"")).expect("the key is there");
    assert!(
        at("x-reshaped") < at("skills") && at("skills") < at("nextCursor"),
        "{line}"
    );
    let second = s.request("skills/list", serde_json::json!({"cursor": cursor}));
    let mut all: Vec<serde_json::Value> = page.clone();
    all.extend(
        second["result"]["skills"]
            .as_array()
            .expect("page 2")
            .iter()
            .cloned(),
    );
    assert!(second["result"].get("nextCursor").is_none(), "{second}");
    let uri_of = |n: &str| format!("skill://{n}/SKILL.md");
    let dynamic: Vec<_> = all.iter().filter(|e| e["resources"] == "dynamic").collect();
    assert_eq!(dynamic.len(), 1, "{all:?}");
    assert_eq!(dynamic[0]["uri"], uri_of("alpha"), "{all:?}");
    for e in &all {
        assert!(e["frontmatter"].get("x-reshaped").is_none(), "{e}");
    }
    let got = s.request("skills/get", serde_json::json!({"uri": uri_of("alpha")}));
    assert_eq!(got["result"]["skill"]["resources"], "dynamic", "{got}");
    let beta = s.request("skills/get", serde_json::json!({"uri": uri_of("beta")}));
    let manifest = beta["result"]["skill"]["resources"]
        .as_array()
        .expect("a manifest");
    assert_eq!(
        manifest[0]["uri"], "skill://beta/notes.md",
        "reversed: {beta}"
    );

    let bad = s.request("skills/list", serde_json::json!({"cursor": "not-ours"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let wording = bad["error"]["message"].as_str().expect("a message");
    let server_says = common::Session::start(SERVER.as_ref(), &[("SKILLS_DIR", root)])
        .request("skills/list", serde_json::json!({"cursor": "not-ours"}));
    assert_eq!(server_says["error"]["code"], -32602, "{server_says}");
    assert_ne!(server_says["error"]["message"], wording, "{bad}");

    let all = statuses(
        "skills",
        &format!("python3 {SKILLS_SHAPE_PROXY} {SERVER}"),
        None,
    );
    assert!(all.len() >= 30, "the whole profile ran: {all:?}");
    let failed: Vec<_> = all.iter().filter(|(_, s)| s != "pass").collect();
    assert!(failed.is_empty(), "{failed:?}");
}

/// The variant proxy of the issue 45 review: one valid (or, for the
/// robustness of the runner, odd) choice at a time, named by `--variant=`.
const SKILLS_VARIANT_PROXY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/skills_variant_proxy.py"
);

/// Streamable HTTP in front of the variant proxy: an SSE answer kept open
/// `--hold` seconds after the reply.
const SKILLS_HTTP_FRONT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/clients/skills_http_front.py"
);

/// `only` of the skills profile against this server behind the variant
/// proxy with `variant`; returns the IDs that did not pass.
fn skills_failing_with(variant: &str, only: &str) -> Vec<String> {
    failing_in(
        "skills",
        &format!("python3 {SKILLS_VARIANT_PROXY} --variant={variant} {SERVER}"),
        only,
    )
}

/// Issue 45 review: every skill served `"dynamic"` (SEP2640-RES-01, R7)
/// lists no files, so a symlink inside its skill that the server serves
/// with its target's bytes (R6: "may be listed (then with … the target's
/// bytes)") is valid; SKL-028 must find the file by the Resource Mapping
/// as it does a regular one.
#[test]
fn skills_a_dynamic_skill_may_serve_a_symlink_inside_it() {
    assert_eq!(
        skills_failing_with("alldynamic", "SKL-028"),
        Vec::<String>::new()
    );
}

/// Issue 45 review: R6 — a dot-file "may be listed … or left out …, or
/// the server may leave the whole skill out (R2)". Leaving `dotted` out
/// (not listed, `skills/get` -32602) must pass SKL-027.
#[test]
fn skills_a_skill_with_dot_files_may_be_left_out_whole() {
    assert_eq!(
        skills_failing_with("hide=dotted", "SKL-027"),
        Vec::<String>::new()
    );
}

/// Issue 45 review: Streamable HTTP says the server SHOULD (not MUST)
/// close the SSE stream once the response is sent. A server that keeps
/// it open (with keep-alive comments) after the reply has answered; the
/// runner must take the reply rather than wait for the connection to end.
#[test]
fn skills_over_http_takes_the_reply_from_an_sse_stream_left_open() {
    let adapter = tempfile::NamedTempFile::new().expect("tempfile");
    std::fs::write(
        adapter.path(),
        r#"{"name": "front", "env": {"SKILLS_DIR": "${SKILLS}"}}"#,
    )
    .expect("write");
    let server = format!("python3 {SKILLS_HTTP_FRONT} --hold=30 --variant= {SERVER}");
    let report = report(&[
        "--profile",
        "skills",
        "--server",
        &server,
        "--url",
        "stderr",
        "--adapter",
        adapter.path().to_str().expect("UTF-8"),
        "--only",
        "SKL-003",
    ]);
    assert_eq!(report["cases"][0]["status"], "pass", "{report}");
}

/// Issue 45 review: a skill below a folder that is not a skill may be
/// published under any prefix (SEP2640-MAP-11: "a server-chosen
/// organizational prefix"; NEST-02 binds only a skill nested in a
/// skill). Served as `skill://sub-skill/SKILL.md`, `group/sub-skill` is a
/// valid listing that SKL-025 must pass (today it does not map the entry
/// to its folder, and fails it as "neither listed nor refused").
#[test]
fn skills_a_skill_below_a_plain_folder_may_take_any_prefix() {
    // The proxy serves the folder itself at the mirrored path too, and
    // that passes: the proxy is not what fails.
    assert_eq!(
        skills_failing_with("serve=group/sub-skill>group/sub-skill", "SKL-025"),
        Vec::<String>::new()
    );
    assert_eq!(
        skills_failing_with("serve=group/sub-skill>sub-skill", "SKL-025"),
        Vec::<String>::new()
    );
}

/// Issue 45 review, a false pass: `team-a/dup` and `team-b/dup` listed
/// as `skill://a/dup/SKILL.md` and `skill://b/dup/SKILL.md` (a valid
/// prefix) with a wrong SKILL.md digest and a frontmatter member the
/// SKILL.md does not have (SEP2640-RES-05, FM-06) pass SKL-026 today:
/// entries the runner cannot map to a folder are judged by no case but
/// the basic fixture's `unmapped: []`.
#[test]
fn skills_a_wrong_manifest_under_another_prefix_is_caught() {
    // Under the mirrored prefix the same mutation is caught.
    assert_eq!(
        skills_failing_with(
            "serve=team-a/dup>team-a/dup,serve=team-b/dup>team-b/dup,only=dup,baddigest=SKILL.md,fmextra",
            "SKL-026"
        ),
        vec!["SKL-026".to_owned()]
    );
    assert_eq!(
        skills_failing_with(
            "serve=team-a/dup>a/dup,serve=team-b/dup>b/dup,only=dup,baddigest=SKILL.md,fmextra",
            "SKL-026"
        ),
        vec!["SKL-026".to_owned()]
    );
}

/// Issue 45 review, a false pass: with every skill `"dynamic"` (R7) no
/// case reads a SKILL.md, so one served with a description other than the
/// entry's frontmatter (SEP2640-FM-06: "identical in content to the
/// frontmatter of the `SKILL.md` it describes") — or as text/plain
/// (META-01) — passes the profile. (SKL-028 is left out: it fails a
/// "dynamic" skill for another reason, above.)
#[test]
fn skills_a_dynamic_skill_s_skill_md_is_still_read() {
    let all = "SKL-001,SKL-002,SKL-003,SKL-004,SKL-005,SKL-010,SKL-012,SKL-013,SKL-017,\
               SKL-018,SKL-020,SKL-022,SKL-024,SKL-043,SKL-044";
    assert_ne!(
        skills_failing_with("alldynamic,skillmdbytes", all),
        Vec::<String>::new()
    );
    assert_ne!(
        skills_failing_with("alldynamic,mimeplain", all),
        Vec::<String>::new()
    );
}

/// Issue 45 review, a false pass: a server whose `resources/read` follows
/// symlinks wherever they lead serves `skill://leaky/leak.txt` with the
/// bytes of a file outside the folder it serves — and passes all of SKL-029
/// (and the profile) by leaving `leaky` out of its listing, because then
/// `${root:leaky}` is unresolved and the URIs are never asked. R6: "its
/// target's bytes are never listed or served as the skill's"; the URIs
/// the skill could have (as the `skill` probe's candidates) are still
/// there to ask.
#[test]
fn skills_a_symlink_out_of_a_left_out_skill_is_still_asked() {
    assert_eq!(
        skills_failing_with("naiveread", "SKL-029"),
        vec!["SKL-029".to_owned()]
    );
    assert_eq!(
        skills_failing_with("hide=leaky,naiveread", "SKL-029"),
        vec!["SKL-029".to_owned()]
    );
}

/// Issue 45 review: a skill of a fixture that is not plain (reading R2: a
/// 2 MiB file, 512 files, a nested skill inside it) may be left out
/// whole; a plain one — whatever its files' bytes — may not.
#[test]
fn skills_only_a_plain_skill_must_be_served() {
    for (variant, case) in [
        ("hide=big-file", "SKL-023"),
        ("hide=outer", "SKL-024"),
        ("hide=at-count", "SKL-032"),
    ] {
        assert_eq!(
            skills_failing_with(variant, case),
            Vec::<String>::new(),
            "{variant}"
        );
    }
    assert_eq!(
        skills_failing_with("hide=raw-bytes", "SKL-021"),
        vec!["SKL-021".to_owned()]
    );
}

/// Issue 45 review: a server that serves a skill of its own beside the
/// fixture's (SEP2640-LIST-01: "the skills it serves"; reading R11)
/// passes the cases that count the catalog.
#[test]
fn skills_a_skill_of_the_servers_own_is_set_apart() {
    assert_eq!(
        skills_failing_with(
            "extraskill",
            "SKL-005,SKL-006,SKL-014,SKL-015,SKL-016,SKL-017,SKL-018,SKL-045"
        ),
        Vec::<String>::new()
    );
}

/// Issue 45 review: a reply under an id of another JSON type than the
/// request's (`"1000004"`) answers nothing the runner asked, so the case
/// fails — and the report says why, naming the stray reply, rather than
/// only that none came.
#[test]
fn skills_a_reply_under_another_id_type_is_named_in_the_failure() {
    let server = format!("python3 {SKILLS_VARIANT_PROXY} --variant=rob=strid {SERVER}");
    let text = report(&[
        "--profile",
        "skills",
        "--server",
        &server,
        "--only",
        "SKL-011",
        "--jobs",
        "2",
    ])
    .to_string();
    assert!(
        text.contains(
            "no reply to `skills/get` within 20 s; the server sent 1 reply under an id the runner never used"
        ),
        "{text}"
    );
}

/// Issue 45 review, finding 9: a manifest may write its entries' URIs
/// with the scheme in capitals (`SKILL://alpha/x`, RFC 3986-equal to the
/// skill's `skill://alpha/…`, reading R3): the manifest cases accept it.
/// Behind the proxy this server is asked to read those URIs as written,
/// and refuses them (R3 lets it: an equivalent URI may be refused), so
/// exactly the cases that read every listed file fail — a server that
/// lists URIs it will not serve.
#[test]
fn skills_a_manifest_may_write_the_scheme_in_capitals() {
    let mut failed = skills_failing_with(
        "upperscheme",
        "SKL-005,SKL-017,SKL-018,SKL-020,SKL-021,SKL-022,SKL-043",
    );
    failed.sort();
    assert_eq!(failed, ["SKL-021", "SKL-022", "SKL-043"]);
}
