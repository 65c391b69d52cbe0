//! The MCP Skills extension's view of the catalog (SEP-2640,
//! `io.modelcontextprotocol/skills`), built with each snapshot: which
//! skills that door serves (SKX-006: SEP-2640's own rules, the rest
//! reported as problems), and the digests it hands out. What exists and
//! what may be read is decided by `catalog` and `fence` exactly as for the
//! tools. The door itself — `skills/list`, `skills/get` and
//! `resources/directory/read` in rmcp's model types — is `server::skills`.
//!
//! Digests are `sha256:` of each file's exact bytes, computed on demand,
//! streamed through a fixed buffer (never a whole file in memory), and kept
//! in memory keyed by the file's size and modification time, so a file that
//! changed since is hashed again rather than served under a stale digest.
//! Nothing is written to disk: the README's "caches nothing" is about disk.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::UNIX_EPOCH;

use rmcp::model::{Skill as SkxSkill, SkillFrontmatter, SkillResources};
use sha2::{Digest, Sha256};

use crate::catalog::{self, Catalog, Skill};
use crate::fence;
use crate::limits::MAX_DIGESTS_KEPT;
use crate::problem::{Problem, Reason};
use crate::uri;

/// A digest and what the file looked like when it was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime_ns: i128,
}

/// A kept digest: the SHA-256 and the stamp it was taken at.
type Kept = (Stamp, [u8; 32]);

/// The extension's view of one snapshot's catalog.
#[derive(Debug, Default)]
pub struct SkillsView {
    /// Indices into `catalog.skills` of the skills this surface serves.
    served: Vec<usize>,
    /// `(skill index, file index)` → SHA-256, with the stamp it was taken
    /// at; at most MAX_DIGESTS_KEPT of them.
    digests: Mutex<HashMap<(u32, u32), Kept>>,
}

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    Stamp {
        size: meta.len(),
        mtime_ns,
    }
}

/// A digest's key: the skill's and the file's index, which fit 32 bits
/// each (MAX_FILES_PER_SKILL; a catalog is far from 4 billion skills).
fn digest_key(si: usize, fi: usize) -> (u32, u32) {
    (
        u32::try_from(si).unwrap_or(u32::MAX),
        u32::try_from(fi).unwrap_or(u32::MAX),
    )
}

/// A digest as the extension writes it: `sha256:` and 64 hex digits.
fn shown(sum: &[u8; 32]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in sum {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The SKILL.md URI of a skill.
pub fn skill_uri(name: &str) -> String {
    uri::for_file(name, catalog::SKILL_MD)
}

/// Why a catalog skill cannot be on this surface, by SEP-2640's own rules
/// (rmcp's validator): a name of lowercase letters, digits and single
/// hyphens equal to its URI segment, which is our directory name — so the
/// frontmatter `name` must be present and agree — and a description.
fn eligibility(skill: &Skill, fm_name: Option<&str>) -> Result<(), String> {
    let Some(name) = fm_name else {
        return Err("its frontmatter has no \"name\", and SEP-2640 requires one equal to the skill's URI segment".into());
    };
    let description = skill
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .ok_or_else(|| {
            "its frontmatter has no \"description\", which SEP-2640 requires".to_owned()
        })?;
    SkxSkill::new(
        skill_uri(&skill.name),
        SkillFrontmatter::new(name, description),
        SkillResources::Dynamic,
    )
    .validate()
    .map_err(|e| format!("SEP-2640 refuses it: {e}"))
}

impl SkillsView {
    /// Decides which skills this surface serves; the rest are reported
    /// (SKX-006).
    pub fn boot(catalog: &Catalog) -> (SkillsView, Vec<Problem>) {
        let mut served = Vec::new();
        let mut problems = Vec::new();
        for (i, skill) in catalog.skills.iter().enumerate() {
            match eligibility(skill, skill.frontmatter_name()) {
                Ok(()) => served.push(i),
                Err(why) => problems.push(Problem::new(
                    skill.dir.join(catalog::SKILL_MD).to_string_lossy(),
                    Reason::SkillsExtension,
                    format!(
                        "left out of skills/list and skills/get (the MCP Skills extension): {why}; the tools, prompts and \
                         resources still serve it"
                    ),
                )),
            }
        }
        (
            SkillsView {
                served,
                digests: Mutex::default(),
            },
            problems,
        )
    }

    /// Indices into `catalog.skills` of the skills this door serves, in
    /// the catalog's order (by name).
    pub fn served(&self) -> &[usize] {
        &self.served
    }

    /// The `sha256:` digest of one manifest file, from the cache when the
    /// file's size and mtime still match, else streamed from disk through
    /// the fence.
    /// `stop` turning true (the request was cancelled, SRV-009) ends the
    /// stream at the next chunk.
    pub fn digest(
        &self,
        catalog: &Catalog,
        si: usize,
        fi: usize,
        stop: &AtomicBool,
    ) -> Result<(u64, String), String> {
        let skill = &catalog.skills[si];
        let path = skill
            .files
            .get(fi)
            .ok_or("no such file in this snapshot")?
            .path;
        let opened = fence::open(&skill.dir, path).map_err(|e| e.to_string())?;
        let now = stamp(&opened.meta);
        let key = digest_key(si, fi);
        if let Ok(cache) = self.digests.lock()
            && let Some((s, d)) = cache.get(&key)
            && *s == now
        {
            return Ok((now.size, shown(d)));
        }
        let mut hasher = Sha256::new();
        let mut file = opened.file;
        let mut buf = vec![0u8; 64 * 1024];
        let mut size = 0u64;
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err("the request was cancelled".into());
            }
            let n = file
                .read(&mut buf)
                .map_err(|e| format!("{path:?} could not be read: {e}"))?;
            if n == 0 {
                break;
            }
            size += n as u64;
            hasher.update(&buf[..n]);
        }
        let sum: [u8; 32] = hasher.finalize().into();
        if let Ok(mut cache) = self.digests.lock() {
            if cache.len() >= MAX_DIGESTS_KEPT {
                cache.clear();
            }
            cache.insert(
                key,
                (
                    Stamp {
                        size,
                        mtime_ns: now.mtime_ns,
                    },
                    sum,
                ),
            );
        }
        Ok((size, shown(&sum)))
    }

    /// For `resources/read`: when a digest was handed out for this file and
    /// the file no longer has the size and mtime it had then, say so
    /// (SKX-005), and forget the digest so the next `skills/get` hashes anew.
    pub fn stale_note(
        &self,
        catalog: &Catalog,
        skill_name: &str,
        path: &str,
        meta: &std::fs::Metadata,
    ) -> Option<String> {
        let si = catalog
            .skills
            .binary_search_by(|s| s.name.as_str().cmp(skill_name))
            .ok()?;
        let fi = catalog.skills[si].files.position(path)?;
        let mut cache = self.digests.lock().ok()?;
        let key = digest_key(si, fi);
        let (s, _) = cache.get(&key)?;
        if *s == stamp(meta) {
            return None;
        }
        cache.remove(&key);
        Some("This file changed after its digest was given by skills/list or skills/get; call skills/get again for a fresh one.".into())
    }
}
