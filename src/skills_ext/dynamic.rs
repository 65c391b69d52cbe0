//! When a skill is served with `resources: "dynamic"` rather than a
//! manifest (SKX-013, SKX-015): over SEP-2640's 512 resources or 16 MiB,
//! or a manifest whose JSON would not fit one answer, known before any
//! file is hashed.

use crate::catalog::Skill;
use crate::echo::excerpt;
use crate::limits::{MAX_FILE_BYTES, SKX_MAX_RESOURCES, SKX_MAX_SKILL_BYTES};
use crate::uri;

/// The JSON size of one manifest entry as SEP-2640 writes it,
/// `{"uri":"…","digest":"sha256:<64>","size":N}`, known before hashing:
/// a digest's width never changes.
pub(crate) fn resource_json_len(skill: &str, path: &str, size: u64) -> usize {
    // {"uri":,"digest":"sha256:","size":} is 35 bytes; 64 hex digits;
    // the URI as a JSON string; the size's digits; one comma.
    let uri_len = serde_json::to_string(&uri::for_file(skill, path)).map_or(0, |s| s.len());
    35 + 64 + uri_len + size.to_string().len() + 1
}

/// The JSON size of `skill`'s whole manifest as the catalog scanned it:
/// the same for the snapshot's life, so the view keeps it (SKX-017).
pub(super) fn manifest_json_len(skill: &Skill) -> usize {
    skill
        .files
        .iter()
        .map(|f| resource_json_len(&skill.name, f.path, f.size))
        .sum()
}

/// Why a skill is served `dynamic` before any file but SKILL.md is
/// touched, if it is: its manifest, as the catalog scanned it (`json`
/// long, [`manifest_json_len`]), is over SEP-2640's limits or would not
/// fit `room` bytes of one answer (SKX-013, SKX-015).
pub(super) fn over_limits(skill: &Skill, json: usize, room: usize) -> Option<String> {
    let n = skill.files.len();
    if n > SKX_MAX_RESOURCES {
        return Some(format!(
            "this skill has {n} files, over the {SKX_MAX_RESOURCES} resources SEP-2640 lets a manifest list (SKX-013); \
             list its files with resources/directory/read (skill://{}) and read them with resources/read",
            skill.name
        ));
    }
    if skill.bytes > SKX_MAX_SKILL_BYTES {
        return Some(too_large(&skill.name, skill.bytes));
    }
    (json > room).then(|| {
        format!(
            "its manifest of {n} files would take {json} characters, more than one answer holds (SKX-015); \
             list its files with resources/directory/read (skill://{}) and read them with resources/read",
            skill.name
        )
    })
}

/// The words for a skill over the byte cap.
pub(super) fn too_large(name: &str, bytes: u64) -> String {
    format!(
        "its files hold {bytes} bytes, over the 16 MiB ({SKX_MAX_SKILL_BYTES} bytes) SEP-2640 lets a skill with \
         a manifest hold, so no digests are computed for it (SKX-013); list its files with \
         resources/directory/read (skill://{name}) and read them with resources/read"
    )
}

/// The words for a skill with a file `resources/read` cannot serve whole
/// (SKX-007): a digest of all its bytes would be one no host can check
/// against a read, and SEP-2640 gives each entry the digest of the bytes
/// at its URI. The path is quoted as an excerpt (HARD-005), so a note
/// never carries a page past its budget (SKX-015). Judged on the request's
/// stat, never the scan's sizes: a file shrunk back is served again.
pub(super) fn file_too_large(name: &str, path: &str, bytes: u64) -> String {
    format!(
        "its file {} holds {bytes} bytes, over the 1 MiB ({MAX_FILE_BYTES} bytes) resources/read serves \
         whole, so no manifest is given for it: a digest of bytes a read cannot return could never be checked \
         (SKX-007); list its files with resources/directory/read (skill://{name}) and read them with \
         resources/read (a file past 1 MiB comes truncated, saying so), or use skill_file",
        excerpt(path)
    )
}
