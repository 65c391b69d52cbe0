//! The original TypeScript skill-mcp (the design of record's own server),
//! when its sources sit beside the checkout at
//! `../shared/peers/skill-mcp-ts`: built once with its `build.sh` into the
//! target directory and reused, so the boot phase can boot it side by side
//! with this server on the same trees. None of its code is used here; it is
//! only run, as `node DEST/dist/index.js` with `SKILLS_DIR`.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::client::node_on_path;
use crate::tree::target_dir;

/// The tree sizes the original is booted at. It serves at most 32 skills
/// (its own cap), but scans every one, so boot and RSS still compare.
pub const PEER_SIZES: &[usize] = &[100, 1_000];

/// What boots the original: node and its entry script.
pub struct Peer {
    pub node: PathBuf,
    pub script: PathBuf,
}

/// Where the original's sources are expected: beside the repository root,
/// unless SKILL_MCP_BENCH_PEER names another directory.
fn sources() -> PathBuf {
    std::env::var_os("SKILL_MCP_BENCH_PEER").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/skill-mcp-ts"),
        PathBuf::from,
    )
}

/// The original, built if it is not already (or when `fresh`), or why the
/// comparison is skipped. Says what it did on stderr.
pub fn prepare(fresh: bool) -> Result<Peer, String> {
    let src = sources();
    let build = src.join("build.sh");
    if !build.is_file() {
        return Err(format!(
            "the original TypeScript server's sources are not there: {} does not exist",
            build.display()
        ));
    }
    let node = node_on_path().ok_or("node is not on PATH, and the original runs on node")?;
    let dest = target_dir().join("skill-mcp-ts");
    let script = dest.join("dist").join("index.js");
    if script.is_file() && !fresh {
        eprintln!(
            "original TypeScript server: reusing the build in {}",
            dest.display()
        );
        return Ok(Peer { node, script });
    }
    let log = target_dir().join("skill-mcp-ts-build.log");
    let out = fs::File::create(&log).map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    eprintln!(
        "original TypeScript server: building into {} (about 20 s; log {})",
        dest.display(),
        log.display()
    );
    let t = Instant::now();
    let status = Command::new("bash")
        .arg(&build)
        .arg(&dest)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| format!("{} does not start: {e}", build.display()))?;
    if !status.success() || !script.is_file() {
        let tail: Vec<String> = fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .rev()
            .take(5)
            .map(str::to_owned)
            .collect();
        let tail: Vec<String> = tail.into_iter().rev().collect();
        return Err(format!(
            "building the original failed ({status}); the end of {}: {}",
            log.display(),
            tail.join(" / ")
        ));
    }
    eprintln!(
        "original TypeScript server: built in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    Ok(Peer { node, script })
}
