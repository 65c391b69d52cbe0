//! The MCP Skills extension (SEP-2640, `io.modelcontextprotocol/skills`):
//! `skills/list`, `skills/get` and `resources/directory/read` — a third door
//! onto the **same** catalog. What exists and what may be read is decided by
//! `catalog` and `fence` exactly as for the tools; this module only shapes
//! it as rmcp's SEP-2640 model types (spec SKX-001..SKX-008).
//!
//! Digests are `sha256:` of each file's exact bytes, computed on demand,
//! streamed through a fixed buffer (never a whole file in memory), and kept
//! in memory keyed by the file's size and modification time, so a file that
//! changed since is hashed again rather than served under a stale digest.
//! Nothing is written to disk: the README's "caches nothing" is about disk.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Mutex;
use std::time::UNIX_EPOCH;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    DIRECTORY_MIME_TYPE, GetSkillResult, JsonObject, ListSkillsResult, ReadResourceDirectoryResult,
    Resource, Skill as SkxSkill, SkillFrontmatter, SkillResource, SkillResources,
};
use sha2::{Digest, Sha256};

use crate::bundle;
use crate::catalog::{self, Catalog, Skill};
use crate::fence;
use crate::frontmatter;
use crate::problem::{Problem, Reason};
use crate::server::{parse_cursor, uri};

/// Skills per `skills/list` page: a page hashes every file of its skills
/// the first time, so pages are kept smaller than resource pages.
pub const SKILLS_PAGE_SIZE: usize = 100;

/// A digest and what the file looked like when it was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime_ns: i128,
}

/// The extension's view of the catalog, built at boot.
#[derive(Debug, Default)]
pub struct SkillsDoor {
    /// Indices into `catalog.skills` of the skills this surface serves.
    served: Vec<usize>,
    /// `(skill index, file index)` → digest, with the stamp it was taken at.
    digests: Mutex<HashMap<(usize, usize), (Stamp, String)>>,
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

impl SkillsDoor {
    /// Decides which skills this surface serves; the rest are reported
    /// (SKX-006).
    pub fn boot(catalog: &Catalog) -> (SkillsDoor, Vec<Problem>) {
        let mut served = Vec::new();
        let mut problems = Vec::new();
        for (i, skill) in catalog.skills.iter().enumerate() {
            match eligibility(skill, skill.frontmatter_name.as_deref()) {
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
            SkillsDoor {
                served,
                digests: Mutex::default(),
            },
            problems,
        )
    }

    /// The `sha256:` digest of one manifest file, from the cache when the
    /// file's size and mtime still match, else streamed from disk through
    /// the fence.
    fn digest(&self, catalog: &Catalog, si: usize, fi: usize) -> Result<(u64, String), String> {
        let skill = &catalog.skills[si];
        let path = &skill.files[fi].path;
        let opened = fence::open(&skill.dir, path).map_err(|e| e.to_string())?;
        let now = stamp(&opened.meta);
        if let Ok(cache) = self.digests.lock()
            && let Some((s, d)) = cache.get(&(si, fi))
            && *s == now
        {
            return Ok((now.size, d.clone()));
        }
        let mut hasher = Sha256::new();
        let mut file = opened.file;
        let mut buf = vec![0u8; 64 * 1024];
        let mut size = 0u64;
        loop {
            let n = file
                .read(&mut buf)
                .map_err(|e| format!("{path:?} could not be read: {e}"))?;
            if n == 0 {
                break;
            }
            size += n as u64;
            hasher.update(&buf[..n]);
        }
        let hex: String = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let digest = format!("sha256:{hex}");
        if let Ok(mut cache) = self.digests.lock() {
            cache.insert(
                (si, fi),
                (
                    Stamp {
                        size,
                        mtime_ns: now.mtime_ns,
                    },
                    digest.clone(),
                ),
            );
        }
        Ok((size, digest))
    }

    /// One skill as SEP-2640 describes it: SKILL.md's frontmatter as it is
    /// on disk now, and the manifest with digests, in manifest order. An
    /// edit since the scan that SEP-2640 cannot carry under the scanned
    /// name is refused here in its own words (SKX-011), never handed to
    /// rmcp as an entry whose URI disagrees with its name.
    fn entry(&self, catalog: &Catalog, si: usize) -> Result<SkxSkill, McpError> {
        let skill = &catalog.skills[si];
        let changed = |why: String| {
            McpError::internal_error(
                format!(
                    "SKILL.md of {:?} changed since the catalog was scanned: {why}; \
                     a rescan (SIGHUP, or --watch) picks the edit up (SKX-011)",
                    skill.name
                ),
                None,
            )
        };
        let md = catalog::read_skill_md(&skill.dir).map_err(|(_, d)| changed(d))?;
        let split = frontmatter::split(&md.text).map_err(|e| changed(e.to_string()))?;
        let fm =
            frontmatter::parse(split.yaml, split.yaml_line).map_err(|e| changed(e.to_string()))?;
        let mut extra = JsonObject::new();
        let mut name = None;
        let mut description = None;
        for (k, v) in &fm.map {
            let (Some(k), Ok(v)) = (k.as_str(), serde_json::to_value(v)) else {
                continue;
            };
            match (k, v) {
                ("name", serde_json::Value::String(s)) => name = Some(s),
                ("description", serde_json::Value::String(s)) => description = Some(s),
                (k, v) => {
                    extra.insert(k.to_owned(), v);
                }
            }
        }
        let (Some(name), Some(description)) = (name, description) else {
            return Err(changed("its name or description is gone".into()));
        };
        if name != skill.name {
            return Err(changed(format!(
                "its frontmatter name is now {name:?}, not the directory name it was served under"
            )));
        }
        if description.trim().is_empty() {
            return Err(changed("its description is now empty".into()));
        }
        let mut files = Vec::with_capacity(skill.files.len());
        for (fi, f) in skill.files.iter().enumerate() {
            let (size, digest) = self.digest(catalog, si, fi).map_err(|e| {
                McpError::internal_error(
                    format!(
                        "{:?} of {:?} cannot be digested now: {e}",
                        f.path, skill.name
                    ),
                    None,
                )
            })?;
            files.push(SkillResource::new(
                uri::for_file(&skill.name, &f.path),
                digest,
                size,
            ));
        }
        let mut frontmatter = SkillFrontmatter::new(name, description);
        frontmatter.extra = extra;
        Ok(SkxSkill::new(
            skill_uri(&skill.name),
            frontmatter,
            SkillResources::Files(files),
        ))
    }

    /// `skills/list` (SKX-001): served skills by name, pages of 100.
    pub fn list(
        &self,
        catalog: &Catalog,
        cursor: Option<&str>,
    ) -> Result<ListSkillsResult, McpError> {
        let start = parse_cursor(cursor, self.served.len())?;
        let end = (start + SKILLS_PAGE_SIZE).min(self.served.len());
        // One skill edited (or a file removed) since the scan costs only
        // its own entry on this page, never the page (SKX-011).
        let skills = self.served[start..end]
            .iter()
            .filter_map(|&si| match self.entry(catalog, si) {
                Ok(entry) => Some(entry),
                Err(e) => {
                    tracing::warn!(
                        skill = %catalog.skills[si].name,
                        "skills/list leaves this skill out: {}",
                        e.message
                    );
                    None
                }
            })
            .collect();
        let mut r = ListSkillsResult::with_all_items(skills);
        r.next_cursor = (end < self.served.len()).then(|| end.to_string());
        Ok(r)
    }

    /// `skills/get` (SKX-002): one skill by its SKILL.md URI.
    pub fn get(&self, catalog: &Catalog, uri_text: &str) -> Result<GetSkillResult, McpError> {
        let si = self
            .served
            .iter()
            .copied()
            .find(|&si| skill_uri(&catalog.skills[si].name) == uri_text)
            .ok_or_else(|| {
                McpError::invalid_params(
                    format!("no skill at {uri_text:?}: skills/get takes the SKILL.md URI skills/list gives"),
                    None,
                )
            })?;
        Ok(GetSkillResult::new(self.entry(catalog, si)?))
    }

    /// `resources/directory/read` (SKX-004): the direct children of a
    /// skill's directory (`skill://<name>`) or of a directory inside it,
    /// from the manifest.
    pub fn directory(
        &self,
        catalog: &Catalog,
        uri_text: &str,
    ) -> Result<ReadResourceDirectoryResult, McpError> {
        let not_dir = || {
            McpError::invalid_params(
                format!(
                    "{uri_text:?} is not a directory of a served skill (expected skill://<name> or skill://<name>/<dir>)"
                ),
                None,
            )
        };
        let rest = uri_text.strip_prefix(uri::PREFIX).ok_or_else(not_dir)?;
        let (name, dir) = match rest.split_once('/') {
            Some((n, d)) => {
                let (_, d) =
                    uri::parse(&format!("{}{n}/{d}", uri::PREFIX)).map_err(|_| not_dir())?;
                (n.to_owned(), d)
            }
            None => (rest.to_owned(), String::new()),
        };
        let si = self
            .served
            .iter()
            .copied()
            .find(|&si| catalog.skills[si].name == name)
            .ok_or_else(not_dir)?;
        let skill = &catalog.skills[si];
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut children: Vec<Resource> = Vec::new();
        let mut seen_dirs: Vec<String> = Vec::new();
        let mut any = false;
        for f in &skill.files {
            let Some(rest) = f.path.strip_prefix(prefix.as_str()) else {
                continue;
            };
            any = true;
            match rest.split_once('/') {
                None => children.push(
                    Resource::new(uri::for_file(&skill.name, &f.path), rest)
                        .with_mime_type(bundle::media_type(&f.path))
                        .with_size(f.size),
                ),
                Some((sub, _)) if !seen_dirs.iter().any(|d| d == sub) => {
                    seen_dirs.push(sub.to_owned());
                    children.push(
                        Resource::new(uri::for_file(&skill.name, &format!("{prefix}{sub}")), sub)
                            .with_mime_type(DIRECTORY_MIME_TYPE),
                    );
                }
                Some(_) => {}
            }
        }
        if !any {
            return Err(not_dir());
        }
        Ok(ReadResourceDirectoryResult::with_all_items(children))
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
        let fi = catalog.skills[si]
            .files
            .iter()
            .position(|f| &*f.path == path)?;
        let mut cache = self.digests.lock().ok()?;
        let (s, _) = cache.get(&(si, fi))?;
        if *s == stamp(meta) {
            return None;
        }
        cache.remove(&(si, fi));
        Some("This file changed after its digest was given by skills/list or skills/get; call skills/get again for a fresh one.".into())
    }
}
