//! Client bytes fed to the whole server loop, in process: the stdio door
//! (the transport, rmcp's service and the handlers) over a small fixed
//! catalog, served on in-memory pipes. Per input a
//! fresh session gets `initialize`, `notifications/initialized`, then the
//! fuzzed bytes as they are (split into lines by the guard), then EOF.
//!
//! It must never panic, every line it writes must be one JSON-RPC message,
//! and the session must end once its input has: a hang is caught by the
//! per-input deadline below (and by libFuzzer's -timeout).
#![no_main]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use skill_mcp::config::Config;
use skill_mcp::offer::Offer;
use skill_mcp::settings::Settings;
use skill_mcp::stdio;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const INIT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

/// The catalog every input talks to: one skill with a bundled file and a
/// declared script (a run is refused before any process starts unless the
/// input confirms it; the grant below lets nothing run at all).
fn tree() -> &'static Path {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("skill-mcp-fuzz-{}", std::process::id()));
        let skill = dir.join("demo");
        std::fs::create_dir_all(skill.join("scripts")).expect("fuzz tree");
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: demo\ndescription: A demo.\nmcp-host:\n  version: 1\n  run:\n    - script: scripts/run.js\n      interpreter: node\n---\n# Demo\n",
        )
        .expect("fuzz tree");
        std::fs::write(skill.join("scripts/run.js"), "console.log(1)\n").expect("fuzz tree");
        std::fs::write(skill.join("notes.txt"), "hello\n").expect("fuzz tree");
        dir
    })
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

fn config() -> Config {
    let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();
    env.insert("SKILLS_DIR".into(), tree().as_os_str().to_owned());
    // An empty grant: nothing may run, so no input can start a process.
    env.insert("MCP_SKILL_RUN".into(), "[]".into());
    Config::from_env(env, Path::new("/"), PathBuf::from("/nonexistent"))
}

async fn session(input: Vec<u8>) -> Vec<u8> {
    let (client_in, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, mut client_out) = tokio::io::duplex(1 << 20);
    let config = config();
    let settings = Settings::resolve(&config, false);
    let offer = Offer::stdio(false, settings.elicit_timeout());
    // No SIGHUP: each input is a session of its own, and nothing rescans.
    let serving = tokio::spawn(stdio::serve(
        settings, offer, config, server_in, server_out, None,
    ));
    let writer = tokio::spawn(async move {
        let mut w = client_in;
        let _ = w.write_all(INIT.as_bytes()).await;
        let _ = w.write_all(&input).await;
        let _ = w.write_all(b"\n").await;
        let _ = w.shutdown().await;
    });
    let mut out = Vec::new();
    let _ = client_out.read_to_end(&mut out).await;
    let _ = writer.await;
    let _ = serving.await;
    out
}

fuzz_target!(|data: &[u8]| {
    let out = runtime().block_on(async {
        tokio::time::timeout(Duration::from_secs(10), session(data.to_vec())).await
    });
    let Ok(out) = out else {
        panic!("the session did not end within 10 s of its input ending");
    };
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("a line that is not JSON ({e}): {:?}", String::from_utf8_lossy(line)));
        assert_eq!(v["jsonrpc"], "2.0", "not JSON-RPC 2.0: {v}");
    }
});
