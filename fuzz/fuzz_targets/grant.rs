//! `MCP_SKILL_RUN` as the server reads it at boot: Config::from_env, then
//! Grant::from_config. It must never panic, and the grant only narrows.
#![no_main]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use skill_mcp::config::Config;
use skill_mcp::declaration::RunEntry;
use skill_mcp::grant::{Grant, GrantFrom};

fn entry(script: &str) -> RunEntry {
    RunEntry {
        script: script.to_owned(),
        interpreter: "node".to_owned(),
        env: vec!["API_KEY".to_owned(), "REGION".to_owned()],
        timeout_ms: 60_000,
    }
}

fuzz_target!(|data: &[u8]| {
    let raw = String::from_utf8_lossy(data).into_owned();
    for hosted in [false, true] {
        let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();
        env.insert("MCP_SKILL_RUN".into(), raw.clone().into());
        if hosted {
            env.insert("MCP_HOST_METER_FILE".into(), "/dev/null".into());
        }
        let config = Config::from_env(env, Path::new("/"), PathBuf::from("/nonexistent"));
        let grant = Grant::from_config(&config);
        let _ = grant.note();
        // Whatever the rows say, a script gets at most what it declared.
        let rows: Vec<(String, String)> = serde_json::from_str::<Vec<serde_json::Value>>(&raw)
            .unwrap_or_default()
            .iter()
            .map(|r| {
                let s = |k: &str| r.get(k).and_then(|v| v.as_str()).unwrap_or("").to_owned();
                (s("skill"), s("script"))
            })
            .collect();
        for (skill, script) in rows.iter().map(|(a, b)| (a.as_str(), b.as_str())).chain([("demo", "run.js")]) {
            let e = entry(script);
            let allowed = grant.allows(skill, &e);
            if grant.error.is_some() {
                assert!(allowed.is_none(), "a broken grant granted {skill}/{script}");
            }
            if let Some(names) = allowed {
                assert!(names.iter().all(|n| e.env.contains(n)), "the grant widened {skill}/{script}: {names:?}");
                if config.grant.is_some() {
                    assert_eq!(grant.from, GrantFrom::McpSkillRun);
                }
            }
        }
    }
});
