//! rmcp's own SEP-2640 catalog (`SkillCatalog`, feature `skills-fs`) as a
//! stdio server, the peer the `skills-ext` phase measures the Skills
//! extension against (issue "The Skills extension at a peer's speed").
//! Its sources are `benches/rmcp-peer/`, a crate outside the workspace;
//! it is built here with cargo, in release mode, into its own target
//! directory under this one, so its build never waits on the lock of the
//! build that is running this benchmark.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::tree::target_dir;

/// The peer's binary, built if needed (`cargo` decides what is stale), or
/// why the comparison is skipped. Says what it did on stderr.
pub fn prepare() -> Result<PathBuf, String> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/rmcp-peer/Cargo.toml");
    if !manifest.is_file() {
        return Err(format!("{} is missing", manifest.display()));
    }
    let dir = target_dir().join("rmcp-peer");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let began = Instant::now();
    eprintln!(
        "rmcp SkillCatalog peer: building into {} (a few minutes the first time)",
        dir.display()
    );
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&dir)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("cargo does not start: {e}"))?;
    if !status.success() {
        return Err(format!("its build failed ({status})"));
    }
    eprintln!(
        "rmcp SkillCatalog peer: ready in {:.1}s",
        began.elapsed().as_secs_f64()
    );
    Ok(dir.join("release").join("skill-mcp-rmcp-peer"))
}
