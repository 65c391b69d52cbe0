//! DECL-006 through a declared script: a declaration asking for variables
//! that make the loader, glibc, OpenSSL, node or python3 load code or
//! weaken TLS is refused name by name, and the script, run with every one
//! of them set in the server's environment — standalone, and with a grant
//! naming them all — is handed none of them. Values that would act if
//! handed over (a `--require` of a script that prints, a preload that does
//! not exist) show it in the script's output; none may appear.

use crate::common;

use std::path::Path;

use common::{BIN, Session};
use serde_json::{Value, json};

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
