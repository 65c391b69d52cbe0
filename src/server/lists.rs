//! Prompts and resources (spec READ-009..READ-011): each skill as a
//! prompt, each bundled file as a `skill://` resource, paged from one
//! snapshot, and `resources/read` through the same fence and caps as
//! `skill_file`.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptResult, ListPromptsResult, ListResourcesResult, MetaObject, Prompt, PromptMessage,
    ReadResourceResult, Resource, ResourceContents, Role,
};

use crate::bundle;
use crate::catalog::Skill;
use crate::cursor;
use crate::limits::{INLINE_READ_BYTES, LIST_PAGE_SIZE};
use crate::refusal::Refusal;
use crate::snapshot::Snapshot;
use crate::uri;

/// The description a prompt and a skill share.
fn prompt_description(skill: &Skill) -> String {
    let parts: Vec<&str> = [skill.description.as_deref(), skill.when_to_use.as_deref()]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect();
    if parts.is_empty() {
        format!("The {} skill.", skill.name)
    } else {
        parts.join(" ")
    }
}

/// One page of prompts (READ-009, READ-011).
pub(crate) fn prompts_page(
    snap: &Snapshot,
    cursor: Option<&str>,
) -> Result<ListPromptsResult, McpError> {
    let skills = &snap.catalog.skills;
    let catalog = || snap.identity().to_string();
    let start = cursor::parse(
        cursor,
        skills.len(),
        LIST_PAGE_SIZE,
        catalog,
        "prompts/list",
    )?;
    let end = (start + LIST_PAGE_SIZE).min(skills.len());
    let mut r = ListPromptsResult::with_all_items(
        skills[start..end]
            .iter()
            .map(|s| Prompt::new(&s.name, Some(prompt_description(s)), None).with_title(&s.name))
            .collect(),
    );
    r.next_cursor = cursor::next(end, skills.len(), catalog);
    Ok(r)
}

/// `prompts/get`: the skill's body as one user message.
pub(crate) fn prompt(snap: &Snapshot, name: &str) -> Result<GetPromptResult, McpError> {
    let loaded = snap.load(name).map_err(Refusal::InvalidParams)?;
    let mut r = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, loaded.body)]);
    r.description = Some(match loaded.truncation_note {
        Some(note) => format!("The instructions of the {name} skill. {note}"),
        None => format!("The instructions of the {name} skill."),
    });
    Ok(r)
}

/// One page of resources: every bundled file (READ-010, READ-011).
pub(crate) fn resources_page(
    snap: &Snapshot,
    cursor: Option<&str>,
) -> Result<ListResourcesResult, McpError> {
    let total = snap.files_total();
    let catalog = || snap.identity().to_string();
    let start = cursor::parse(cursor, total, LIST_PAGE_SIZE, catalog, "resources/list")?;
    let end = (start + LIST_PAGE_SIZE).min(total);
    let items = snap
        .files_from(start)
        .take(end - start)
        .map(|(skill, f)| file_resource(skill, f.path, f.size))
        .collect();
    let mut r = ListResourcesResult::with_all_items(items);
    r.next_cursor = cursor::next(end, total, catalog);
    Ok(r)
}

/// One bundled file as a resource. A skill's own SKILL.md is named and
/// described as its frontmatter names and describes the skill (READ-017,
/// SEP-2640's SHOULD), so a host listing resources sees the skill itself;
/// every other file is `<skill>/<path>`.
fn file_resource(skill: &Skill, path: &str, size: u64) -> Resource {
    let is_skill_md = path == crate::catalog::SKILL_MD;
    let name = if is_skill_md {
        skill.name.clone()
    } else {
        format!("{}/{}", skill.name, path)
    };
    let mut r = Resource::new(uri::for_file(&skill.name, path), name)
        .with_title(format!("{}: {}", skill.name, path))
        .with_mime_type(bundle::media_type(path))
        .with_size(size);
    if is_skill_md && let Some(d) = skill.description.as_deref().filter(|d| !d.is_empty()) {
        r = r.with_description(d);
    }
    r
}

/// A resource that is not there (SEP-2164), with the URI asked for.
fn not_found(message: String, uri_text: &str) -> Refusal {
    Refusal::NotFound {
        message,
        uri: uri_text.to_owned(),
    }
}

/// `resources/read`: the same fence, cap and encoding as `skill_file`.
/// Past 1 MiB the first 1 MiB is served and the contents' `_meta` says
/// so (`skill-mcp/truncated`, `skill-mcp/size`, `skill-mcp/note`).
/// Whether `uri_text` names a file the scan saw at no more than
/// [`INLINE_READ_BYTES`], which `resources/read` reads without leaving the
/// async thread. Anything else (a larger file, a name the catalog does not
/// hold, a malformed URI) goes to the blocking pool, whose answer is the
/// same.
pub(crate) fn read_inline(snap: &Snapshot, uri_text: &str) -> bool {
    let Ok((name, path)) = uri::parse(uri_text) else {
        return false;
    };
    let Ok(skill) = snap.skill_named(&name) else {
        return false;
    };
    skill
        .files
        .position(&path)
        .and_then(|i| skill.files.get(i))
        .is_some_and(|f| f.size <= INLINE_READ_BYTES)
}

pub(crate) fn read_resource(
    snap: &Snapshot,
    uri_text: &str,
) -> Result<ReadResourceResult, McpError> {
    let (name, path) = uri::parse(uri_text).map_err(|message| Refusal::InvalidUri {
        message,
        uri: uri_text.to_owned(),
    })?;
    let skill = snap
        .skill_named(&name)
        .map_err(|m| not_found(m, uri_text))?;
    let (f, stale) = bundle::read_one_with(&skill.dir, &path, |meta| {
        snap.skills_view
            .stale_note(&snap.catalog, &name, &path, meta)
    })
    .map_err(|e| not_found(e.to_string(), uri_text))?;
    let mut m = serde_json::Map::new();
    if let Some(note) = f.truncation_note() {
        m.insert("skill-mcp/truncated".into(), true.into());
        m.insert("skill-mcp/size".into(), f.size.into());
        m.insert("skill-mcp/note".into(), note.into());
    }
    if let Some(note) = stale {
        m.insert("skill-mcp/changed".into(), true.into());
        m.insert("skill-mcp/changedNote".into(), note.into());
    }
    let meta = (!m.is_empty()).then_some(MetaObject(m));
    let uri = uri_text.to_owned();
    let mime = Some(f.media_type.to_owned());
    let contents = match f.encoding {
        bundle::Encoding::Utf8 => ResourceContents::TextResourceContents {
            uri,
            mime_type: mime,
            text: f.content,
            meta,
        },
        bundle::Encoding::Base64 => ResourceContents::BlobResourceContents {
            uri,
            mime_type: mime,
            blob: f.content,
            meta,
        },
    };
    Ok(ReadResourceResult::new(vec![contents]))
}
