//! The MCP Skills extension's door (SEP-2640): `skills/list`,
//! `skills/get` and `resources/directory/read`, shaped as rmcp's model
//! types from one snapshot's catalog and its Skills extension view
//! (`skills_ext`), which decided what this door serves (spec
//! SKX-001..SKX-011).

use std::sync::atomic::AtomicBool;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    DIRECTORY_MIME_TYPE, GetSkillResult, JsonObject, ListSkillsResult, ReadResourceDirectoryResult,
    Resource, Skill as SkxSkill, SkillFrontmatter, SkillResource, SkillResources,
};

use crate::bundle;
use crate::catalog;
use crate::cursor;
use crate::echo::excerpt;
use crate::frontmatter;
use crate::limits::SKILLS_PAGE_SIZE;
use crate::skills_ext::skill_uri;
use crate::snapshot::Snapshot;
use crate::uri;

/// One skill as SEP-2640 describes it: SKILL.md's frontmatter as it is
/// on disk now, and the manifest with digests, in manifest order. An
/// edit since the scan that SEP-2640 cannot carry under the scanned
/// name is refused here in its own words (SKX-011), never handed to
/// rmcp as an entry whose URI disagrees with its name.
fn entry(snap: &Snapshot, si: usize, stop: &AtomicBool) -> Result<SkxSkill, McpError> {
    let catalog = &snap.catalog;
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
    let fm = frontmatter::parse(split.yaml, split.yaml_line).map_err(|e| changed(e.to_string()))?;
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
        let (size, digest) = snap
            .skills_view
            .digest(catalog, si, fi, stop)
            .map_err(|e| {
                McpError::internal_error(
                    format!(
                        "{:?} of {:?} cannot be digested now: {e}",
                        f.path, skill.name
                    ),
                    None,
                )
            })?;
        files.push(SkillResource::new(
            uri::for_file(&skill.name, f.path),
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
    snap: &Snapshot,
    cursor: Option<&str>,
    stop: &AtomicBool,
) -> Result<ListSkillsResult, McpError> {
    let catalog = &snap.catalog;
    let served = snap.skills_view.served();
    let start = cursor::parse(cursor, served.len(), SKILLS_PAGE_SIZE)?;
    let end = (start + SKILLS_PAGE_SIZE).min(served.len());
    // One skill edited (or a file removed) since the scan costs only
    // its own entry on this page, never the page (SKX-011).
    // A cancelled request (SRV-009) stops at the next skill; its answer is
    // never sent.
    let skills = served[start..end]
        .iter()
        .take_while(|_| !stop.load(std::sync::atomic::Ordering::Relaxed))
        .filter_map(|&si| match entry(snap, si, stop) {
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
    r.next_cursor = cursor::next(end, served.len());
    Ok(r)
}

/// `skills/get` (SKX-002): one skill by its SKILL.md URI.
pub fn get(snap: &Snapshot, uri_text: &str, stop: &AtomicBool) -> Result<GetSkillResult, McpError> {
    let catalog = &snap.catalog;
    let si = snap
        .skills_view
        .served()
        .iter()
        .copied()
        .find(|&si| skill_uri(&catalog.skills[si].name) == uri_text)
        .ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "no skill at {}: skills/get takes the SKILL.md URI skills/list gives",
                    excerpt(uri_text)
                ),
                None,
            )
        })?;
    Ok(GetSkillResult::new(entry(snap, si, stop)?))
}

/// `resources/directory/read` (SKX-004): the direct children of a
/// skill's directory (`skill://<name>`) or of a directory inside it,
/// from the manifest.
pub fn directory(snap: &Snapshot, uri_text: &str) -> Result<ReadResourceDirectoryResult, McpError> {
    let catalog = &snap.catalog;
    let not_dir = || {
        McpError::invalid_params(
            format!(
                "{} is not a directory of a served skill (expected skill://<name> or skill://<name>/<dir>)",
                excerpt(uri_text)
            ),
            None,
        )
    };
    let rest = uri_text.strip_prefix(uri::PREFIX).ok_or_else(not_dir)?;
    let (name, dir) = match rest.split_once('/') {
        Some((n, d)) => {
            let (_, d) = uri::parse(&format!("{}{n}/{d}", uri::PREFIX)).map_err(|_| not_dir())?;
            (n.to_owned(), d)
        }
        None => (rest.to_owned(), String::new()),
    };
    let si = snap
        .skills_view
        .served()
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
    for f in skill.files.iter() {
        let Some(rest) = f.path.strip_prefix(prefix.as_str()) else {
            continue;
        };
        any = true;
        match rest.split_once('/') {
            None => children.push(
                Resource::new(uri::for_file(&skill.name, f.path), rest)
                    .with_mime_type(bundle::media_type(f.path))
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
