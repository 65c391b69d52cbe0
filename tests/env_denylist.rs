//! DECL-006 through a declared script: a declaration asking for variables
//! that make the loader, glibc, OpenSSL, node or python3 load code or
//! weaken TLS is refused name by name, and the script, run with every one
//! of them set in the server's environment — standalone, and with a grant
//! naming them all — is handed none of them. Values that would act if
//! handed over (a `--require` of a script that prints, a preload that does
//! not exist) show it in the script's output; none may appear.

use crate::common;
use common::{BIN, Session};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const DENIED: &[&str] = &[
    "NODE_OPTIONS",
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_LIBRARY_PATH",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "OPENSSL_CONF",
    "SSL_CERT_FILE",
    "NODE_TLS_REJECT_UNAUTHORIZED",
    "NODE_V8_COVERAGE",
    "NODE_REDIRECT_WARNINGS",
    "NODE_EXTRA_CA_CERTS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
];

fn problems_naming(list: &Value, name: &str) -> usize {
    list["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["detail"]
                .as_str()
                .is_some_and(|d| d.contains(&format!("{name:?}")) && d.contains("DECL-006"))
        })
        .count()
}

#[test]
fn no_script_is_handed_a_loader_or_interpreter_variable() {
    let root = tempfile::tempdir().unwrap();
    let s = root.path().join("s");
    std::fs::create_dir_all(&s).unwrap();
    let asked: Vec<&str> = DENIED.iter().copied().chain(["GOOD", "NODE_ENV"]).collect();
    std::fs::write(
        s.join("SKILL.md"),
        format!(
            "---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: env.js\n      interpreter: node\n      env: [{}]\n---\nbody\n",
            asked.join(", ")
        ),
    )
    .unwrap();
    std::fs::write(
        s.join("env.js"),
        "console.log(JSON.stringify(Object.keys(process.env).sort()));\n",
    )
    .unwrap();
    let evil = root.path().join("evil.js");
    std::fs::write(
        &evil,
        "console.log('EVIL: NODE_OPTIONS was handed over');\n",
    )
    .unwrap();
    let dir = root.path().to_str().unwrap().to_owned();
    let require = format!("--require {}", evil.display());
    let tmp = root.path().join("t").display().to_string();
    let mut env: Vec<(&str, &str)> = vec![
        ("SKILLS_DIR", &dir),
        ("GOOD", "g"),
        ("NODE_ENV", "production"),
    ];
    for name in DENIED {
        let value = match *name {
            "NODE_OPTIONS" => require.as_str(),
            "LD_PRELOAD" | "LD_AUDIT" => "/nonexistent/preload.so",
            "NODE_TLS_REJECT_UNAUTHORIZED" => "0",
            _ => tmp.as_str(),
        };
        env.push((name, value));
    }
    let row = json!([{"skill": "s", "script": "env.js", "env": asked}]).to_string();
    for grant in [None, Some(row.as_str())] {
        let mut env = env.clone();
        if let Some(g) = grant {
            env.push(("MCP_SKILL_RUN", g));
        }
        let mut session = Session::start(Path::new(BIN), &env);
        let list = session.tool("skill_list", json!({}));
        let expect = if grant.is_some() { 2 } else { 1 };
        for name in DENIED {
            // The declaration's refusal, and with a grant, the row's too.
            assert_eq!(problems_naming(&list, name), expect, "{name}: {list}");
        }
        assert_eq!(
            list["skills"][0]["scripts"][0]["env"],
            json!(["GOOD", "NODE_ENV"]),
            "{list}"
        );
        let run = session.tool(
            "skill_run",
            json!({"name": "s", "script": "env.js", "confirm": true}),
        );
        assert_eq!(run["exitCode"], 0, "{run}");
        let stdout = run["stdout"].as_str().unwrap();
        assert!(!stdout.contains("EVIL"), "{stdout}");
        assert_eq!(
            run["stderr"], "",
            "no loader complained of a preload: {run}"
        );
        let keys: Vec<String> = serde_json::from_str(stdout.trim()).unwrap();
        for name in DENIED {
            assert!(
                !keys.iter().any(|k| k == name),
                "{name} reached the script: {keys:?}"
            );
        }
        assert!(
            keys.iter().any(|k| k == "GOOD") && keys.iter().any(|k| k == "NODE_ENV"),
            "{keys:?}"
        );
    }
}

fn run(s: &mut Session, skill: &str, script: &str) -> Value {
    let r = s.tool(
        "skill_run",
        json!({"name": skill, "script": script, "confirm": true}),
    );
    assert_eq!(r["exitCode"], 0, "{skill}/{script} ran to the end: {r}");
    r
}

fn start(cmd: Command, env: &[(&str, String)]) -> Session {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Session::start_command(cmd, &env)
}

/// DECL-006 refuses GLIBC_TUNABLES and cites glibc's own list of what it
/// ignores for setuid programs; glibc reads the same tunables under their
/// older names, each an alias of a `glibc.malloc.*` tunable that a
/// setuid program ignores just the same (ld.so holds MALLOC_CHECK_,
/// MALLOC_PERTURB_, MALLOC_ARENA_MAX, MALLOC_ARENA_TEST, MALLOC_MMAP_MAX_,
/// MALLOC_MMAP_THRESHOLD_, MALLOC_TOP_PAD_, MALLOC_TRIM_THRESHOLD_ beside
/// MALLOC_TRACE). They are asked for and handed over.
///
/// Should hold: the `MALLOC_` family is refused like `GLIBC_TUNABLES`,
/// by the declaration and by a grant row, and no script is handed one.
///
/// Issue 26: found by an outside attack; it failed on the tree it was written on.
#[test]
fn glibcs_malloc_tunable_aliases_are_refused_like_glibc_tunables() {
    const ALIASES: &[&str] = &[
        "MALLOC_CHECK_",
        "MALLOC_PERTURB_",
        "MALLOC_ARENA_MAX",
        "MALLOC_ARENA_TEST",
        "MALLOC_MMAP_MAX_",
        "MALLOC_MMAP_THRESHOLD_",
        "MALLOC_TOP_PAD_",
        "MALLOC_TRIM_THRESHOLD_",
    ];
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("s");
    std::fs::create_dir_all(&dir).unwrap();
    let asked: Vec<&str> = ALIASES.iter().copied().chain(["GOOD"]).collect();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: s\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: env.js\n      interpreter: node\n      env: [{}]\n---\nbody\n",
            asked.join(", ")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("env.js"),
        "process.stdout.write(JSON.stringify(Object.keys(process.env).sort()));\n",
    )
    .unwrap();
    let row = json!([{"skill": "s", "script": "env.js", "env": asked}]).to_string();
    for grant in [None, Some(row)] {
        let mut env = vec![
            ("SKILLS_DIR", root.path().display().to_string()),
            ("GOOD", "g".to_owned()),
        ];
        for name in ALIASES {
            env.push((name, "3".to_owned()));
        }
        if let Some(g) = &grant {
            env.push(("MCP_SKILL_RUN", g.clone()));
        }
        let mut s = start(Command::new(BIN), &env);
        let list = s.tool("skill_list", json!({}));
        let problems = list["problems"].as_array().unwrap();
        for name in ALIASES {
            let named = problems
                .iter()
                .filter(|p| {
                    p["detail"]
                        .as_str()
                        .is_some_and(|d| d.contains(&format!("{name:?}")) && d.contains("DECL-006"))
                })
                .count();
            assert!(named >= 1, "{name} is not refused under DECL-006: {list}");
        }
        let keys: Vec<String> =
            serde_json::from_str(run(&mut s, "s", "env.js")["stdout"].as_str().unwrap()).unwrap();
        let handed: Vec<&String> = keys.iter().filter(|k| k.starts_with("MALLOC_")).collect();
        assert!(handed.is_empty(), "handed to the script: {handed:?}");
        assert!(keys.iter().any(|k| k == "GOOD"), "{keys:?}");
        s.finish();
    }
}
