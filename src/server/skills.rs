//! The MCP Skills extension's door (SEP-2640): `skills/list`,
//! `skills/get` and `resources/directory/read`, shaped as rmcp's model
//! types from one snapshot's catalog and its Skills extension view
//! (`skills_ext`), which decided what this door serves (spec
//! SKX-001..SKX-016). Every page and entry fits the answer budget
//! (SKX-015); the digests come from `skills_ext`, on its own pool.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    DIRECTORY_MIME_TYPE, GetSkillResult, JsonObject, ListSkillsResult, MetaObject,
    ReadResourceDirectoryResult, Resource, Skill as SkxSkill, SkillFrontmatter, SkillResource,
    SkillResources,
};

use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::bundle;
use crate::catalog;
use crate::cursor;
use crate::echo::excerpt;
use crate::limits::{KEPT_INLINE_STATS, LIST_PAGE_SIZE, SKILLS_PAGE_SIZE};
use crate::refusal::Refusal;
use crate::skills_ext::{Carried, Manifest, Reach, Take, Unservable, in_order, skill_uri};
use crate::snapshot::Snapshot;
use crate::uri;

/// Why an entry is not given: not kept (asked for with [`Reach::Kept`]),
/// or an error in the request's own words.
enum Miss {
    NotKept,
    Error(Refusal),
}

/// One skill as SEP-2640 describes it: SKILL.md's frontmatter as it is
/// on disk now, and the manifest with digests, in manifest order. An
/// edit since the scan that SEP-2640 cannot carry under the scanned
/// name is refused here in its own words (SKX-011), never handed to
/// rmcp as an entry whose URI disagrees with its name.
/// Returns the entry and the length of its compact JSON.
fn entry(snap: &Snapshot, pos: usize, reach: Reach) -> Result<(SkxSkill, usize), Miss> {
    let catalog = &snap.catalog;
    let skill = &catalog.skills[snap.skills_view.served()[pos]];
    let changed = |why: String| {
        Refusal::Changed(format!(
            "SKILL.md of {:?} changed since the catalog was scanned: {why}; \
             a rescan (SIGHUP, or --watch) picks the edit up (SKX-011)",
            skill.name
        ))
    };
    if matches!(reach, Reach::Kept) && !snap.skills_view.kept(pos) {
        return Err(Miss::NotKept);
    }
    let Carried { front, manifest } = snap
        .skills_view
        .entry(catalog, pos, room(snap), reach)
        .map_err(|e| match e {
            Unservable::NotKept => Miss::NotKept,
            Unservable::Changed(why) => Miss::Error(changed(why)),
            Unservable::Files(e) => Miss::Error(Refusal::Changed(format!(
                "the files of {:?} cannot be digested now: {e}; a rescan (SIGHUP, or --watch) \
                 picks up files removed since the scan (SKX-011)",
                skill.name
            ))),
        })?;
    let frontmatter = frontmatter_from(&front).map_err(|e| Miss::Error(changed(e)))?;
    let e = match manifest {
        Manifest::Files(files) => {
            let files = skill
                .files
                .iter()
                .zip(files)
                .map(|(f, (size, digest))| {
                    SkillResource::new(uri::for_file(&skill.name, f.path), digest, size)
                })
                .collect();
            SkxSkill::new(
                skill_uri(&skill.name),
                frontmatter,
                SkillResources::Files(files),
            )
        }
        // SEP-2640's "dynamic": no manifest, and why in `_meta` (SKX-013).
        Manifest::Dynamic(why) => {
            let mut meta = serde_json::Map::new();
            meta.insert("skill-mcp/dynamicNote".into(), why.into());
            SkxSkill::new(skill_uri(&skill.name), frontmatter, SkillResources::Dynamic)
                .with_meta(MetaObject(meta))
        }
    };
    let len = entry_len(&e, front.len());
    Ok((e, len))
}

/// The kept frontmatter text as rmcp's type: read as one JSON object, its
/// `name` and `description` taken out (a direct read, where serde's
/// `flatten` would buffer the whole object first).
fn frontmatter_from(front: &str) -> Result<SkillFrontmatter, String> {
    let mut extra: JsonObject = serde_json::from_str(front).map_err(|e| e.to_string())?;
    match (extra.remove("name"), extra.remove("description")) {
        (Some(Value::String(name)), Some(Value::String(description))) => {
            let mut fm = SkillFrontmatter::new(name, description);
            fm.extra = extra;
            Ok(fm)
        }
        _ => Err("its kept frontmatter has no name or description".into()),
    }
}

/// The length of `e`'s compact JSON, given its frontmatter's (the kept
/// text it was parsed from, which serializes back byte for byte): summed
/// from its parts, so a page is cut to the budget (SKX-015) without
/// writing each entry twice. Held to serde's own output by a unit test.
fn entry_len(e: &SkxSkill, front_len: usize) -> usize {
    // {"uri":…,"frontmatter":…,"resources":…}
    let mut n = 7 + json_str_len(&e.uri) + 15 + front_len + 13 + 1;
    n += match &e.resources {
        SkillResources::Files(files) => {
            // [{"uri":…,"digest":…,"size":N},…]
            2 + files.len().saturating_sub(1)
                + files
                    .iter()
                    .map(|f| {
                        26 + json_str_len(&f.uri)
                            + json_str_len(&f.digest)
                            + f.size.checked_ilog10().unwrap_or(0) as usize
                            + 1
                    })
                    .sum::<usize>()
        }
        SkillResources::Dynamic => 9,
        // A shape a later rmcp adds is measured the slow way.
        other => json_len(other),
    };
    if let Some(meta) = &e.meta {
        // ,"_meta":{…}
        n += 9 + json_len(meta);
    }
    n
}

/// The length of `s` as a JSON string: quotes, and serde_json's escapes
/// (`\"`, `\\`, the short ones for \b \t \n \f \r, `\u00XX` for other
/// control characters).
fn json_str_len(s: &str) -> usize {
    s.len()
        + 2
        + s.bytes()
            .map(|b| match b {
                b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
                0..=0x1f => 5,
                _ => 0,
            })
            .sum::<usize>()
}

/// Bytes of JSON one entry may take: the answer budget less what a page
/// spends around its entries (SKX-015).
fn room(snap: &Snapshot) -> usize {
    snap.settings.budget.saturating_sub(PAGE_SLACK)
}

/// Bytes an answer spends on what is not an entry: `{"skills":[…]}`,
/// `nextCursor`, `_meta` and the JSON-RPC envelope, with room to spare.
const PAGE_SLACK: usize = 512;

/// The size of `v`'s compact JSON.
fn json_len<T: serde::Serialize>(v: &T) -> usize {
    serde_json::to_vec(v).map_or(usize::MAX, |b| b.len())
}

/// The offset a `skills/list` cursor stands for (SKX-008, SKX-015,
/// LIST-018): only one sealed by a process serving this same catalog,
/// written as it was written. Anything else is -32602 naming the cursor.
fn read_cursor(snap: &Snapshot, cursor: Option<&str>) -> Result<usize, Refusal> {
    cursor::unseal(
        cursor,
        snap.skills_view.served().len(),
        || snap.identity().to_string(),
        SKILLS_LIST,
        "SKX-008, SKX-015",
    )
}

/// The list a `skills/list` cursor is sealed for.
const SKILLS_LIST: &str = "skills/list";

/// The entries of one `skills/list` page as they are added, in order,
/// until the next would carry it past the answer budget (SKX-015).
struct Page {
    room: usize,
    used: usize,
    skills: Vec<SkxSkill>,
}

impl Page {
    fn new(snap: &Snapshot) -> Page {
        Page {
            room: room(snap),
            used: 0,
            skills: Vec::new(),
        }
    }

    /// Adds `entry` (`len` bytes of JSON) unless the page is full: false
    /// then, and the page ends before it. A page is never empty.
    fn add(&mut self, entry: SkxSkill, len: usize) -> bool {
        let size = len + 1;
        if !self.skills.is_empty() && self.used + size > self.room {
            return false;
        }
        self.used += size;
        self.skills.push(entry);
        true
    }

    /// The page, with the cursor of `end`, the first skill it left out.
    fn finish(self, snap: &Snapshot, end: usize) -> ListSkillsResult {
        let mut r = ListSkillsResult::with_all_items(self.skills);
        if end < snap.skills_view.served().len() {
            r.next_cursor = Some(cursor::sealed(
                &snap.identity().to_string(),
                SKILLS_LIST,
                end,
            ));
        }
        r
    }
}

/// One skill edited (or a file removed) since the scan costs only its
/// own entry on a page, never the page (SKX-011): logged and passed over.
fn leave_out(snap: &Snapshot, pos: usize, e: &Refusal) {
    tracing::warn!(
        skill = %snap.catalog.skills[snap.skills_view.served()[pos]].name,
        "skills/list leaves this skill out: {}",
        crate::snapshot::one_line(e.message())
    );
}

/// `skills/list` (SKX-001, SKX-015) from what is kept: served skills by
/// name, each page as many whole entries as the answer budget holds (at
/// most 100). `None` when the page has a file to read or hash, or more
/// than [`KEPT_INLINE_STATS`] files to stat: then [`list_read`] does it,
/// on the pool.
pub(crate) fn list_kept(
    snap: &Snapshot,
    cursor: Option<&str>,
) -> Option<Result<ListSkillsResult, McpError>> {
    let served = snap.skills_view.served();
    let start = match read_cursor(snap, cursor) {
        Ok(start) => start,
        Err(e) => return Some(Err(e.into())),
    };
    let mut page = Page::new(snap);
    let mut end = start;
    let mut stats = 0;
    while end < served.len() && end - start < SKILLS_PAGE_SIZE {
        stats += snap.catalog.skills[served[end]].files.len();
        if stats > KEPT_INLINE_STATS {
            return None;
        }
        match entry(snap, end, Reach::Kept) {
            Ok((entry, len)) => {
                if !page.add(entry, len) {
                    break;
                }
            }
            Err(Miss::NotKept) => return None,
            Err(Miss::Error(e)) => leave_out(snap, end, &e),
        }
        end += 1;
    }
    Some(Ok(page.finish(snap, end)))
}

/// `skills/list` (SKX-001, SKX-015), reading and hashing what is not
/// kept: on the digest pool (SKX-012), the page's skills worked through
/// by every digest thread at once ([`in_order`]: this job and helpers it
/// queues), each skill whole on one thread, and added to the page in
/// name order until the budget is reached. No skill starts the pool's
/// `LOOKAHEAD` or more past the last one added, so a page hashes at most
/// that many of the next page's first skills.
/// `stop` raised (SRV-009) ends the page at the next skill; its answer
/// is never sent.
pub(crate) fn list_read(
    snap: &Arc<Snapshot>,
    cursor: Option<&str>,
    stop: &Arc<AtomicBool>,
) -> Result<ListSkillsResult, McpError> {
    let start = read_cursor(snap, cursor)?;
    let count = snap
        .skills_view
        .served()
        .len()
        .saturating_sub(start)
        .min(SKILLS_PAGE_SIZE);
    let work = {
        let snap = Arc::clone(snap);
        let stop = Arc::clone(stop);
        move |i: usize| {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            Some(entry(&snap, start + i, Reach::Read(&stop)))
        }
    };
    let mut page = Page::new(snap);
    let mut end = start;
    let mut gave_up = false;
    in_order(count, work, |e| {
        match e {
            // Cancelled: the page ends here, unsent.
            None => return Take::Stop,
            Some(Ok((entry, len))) => {
                if !page.add(entry, len) {
                    return Take::Stop;
                }
            }
            Some(Err(Miss::NotKept)) => {
                gave_up = true;
                return Take::Stop;
            }
            Some(Err(Miss::Error(e))) => leave_out(snap, end, &e),
        }
        end += 1;
        Take::More
    });
    if gave_up {
        return unreached();
    }
    Ok(page.finish(snap, end))
}

/// What a Skills extension request that may read answers when it says it
/// could not: never, since only [`Reach::Kept`] gives up.
pub(crate) fn unreached<T>() -> Result<T, McpError> {
    Err(McpError::internal_error(
        "the Skills extension gave up on a request it could read (a bug); ask again",
        None,
    ))
}

/// `skills/get` (SKX-002, SKX-016): one skill by its SKILL.md URI, parsed
/// once and found by bisection of the sorted catalog. With
/// [`Reach::Kept`], `None` when the skill has a file to read or hash.
pub(crate) fn get(
    snap: &Snapshot,
    uri_text: &str,
    reach: Reach,
) -> Option<Result<GetSkillResult, McpError>> {
    let pos = uri::parse(uri_text)
        .ok()
        .filter(|(name, path)| path == catalog::SKILL_MD && skill_uri(name) == uri_text)
        .and_then(|(name, _)| snap.skills_view.find(&snap.catalog, &name));
    let Some(pos) = pos else {
        return Some(Err(Refusal::InvalidParams(format!(
            "no skill at {}: skills/get takes the SKILL.md URI skills/list gives",
            excerpt(uri_text)
        ))
        .into()));
    };
    match entry(snap, pos, reach) {
        Ok((e, _)) => Some(Ok(GetSkillResult::new(e))),
        Err(Miss::NotKept) => None,
        Err(Miss::Error(e)) => Some(Err(e.into())),
    }
}

/// `resources/directory/read` (SKX-004): the direct children of a
/// skill's directory (`skill://<name>`) or of a directory inside it,
/// from the manifest.
/// Pages of 500 children, as every other list (SKX-018, READ-011): a
/// `dynamic` skill (SKX-013) may hold 10,000 files in one directory.
pub(crate) fn directory(
    snap: &Snapshot,
    uri_text: &str,
    cursor: Option<&str>,
) -> Result<ReadResourceDirectoryResult, McpError> {
    let catalog = &snap.catalog;
    let not_dir = || {
        Refusal::InvalidParams(format!(
            "{} is not a directory of a served skill (expected skill://<name> or skill://<name>/<dir>)",
            excerpt(uri_text)
        ))
    };
    // Read by the same rules as resources/read's URIs (READ-010): the
    // name decoded as the path is, an escaped `/` refused in its words.
    let (name, dir) = uri::parse_dir(uri_text).map_err(Refusal::InvalidParams)?;
    let pos = snap.skills_view.find(catalog, &name).ok_or_else(not_dir)?;
    let skill = &catalog.skills[snap.skills_view.served()[pos]];
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
        return Err(not_dir().into());
    }
    let catalog = || snap.identity().to_string();
    let start = cursor::parse(
        cursor,
        children.len(),
        LIST_PAGE_SIZE,
        catalog,
        "resources/directory/read",
    )?;
    let end = (start + LIST_PAGE_SIZE).min(children.len());
    let next = cursor::next(end, children.len(), catalog);
    children.truncate(end);
    let mut r = ReadResourceDirectoryResult::with_all_items(children.split_off(start));
    r.next_cursor = next;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills_ext::{eligibility, resource_json_len, shown};

    /// SKX-006: `skills_ext` decides who is served by SEP-2640's rules
    /// without rmcp; its verdict and words must be rmcp's validator's.
    #[test]
    fn eligibility_is_rmcp_s_verdict() {
        let names = [
            "good",
            "a-b",
            "a--b",
            "-a",
            "a-",
            "",
            "Loud_Name",
            "ünï",
            "ｆｕｌｌ",
            "日本語",
            "a?b",
            "a#b",
            "a%20b",
            "a b",
            "x1",
            "template",
            "template-skill",
            "Ⅻ",
        ];
        let long = "a".repeat(65);
        let names: Vec<&str> = names
            .into_iter()
            .chain([long.as_str(), &long[1..]])
            .collect();
        for dir in &names {
            for fm in &names {
                let ours = eligibility(dir, Some(fm), Some("d"));
                let theirs = SkxSkill::new(
                    skill_uri(dir),
                    SkillFrontmatter::new(*fm, "d"),
                    SkillResources::Dynamic,
                )
                .validate()
                .map_err(|e| format!("SEP-2640 refuses it: {e}"));
                assert_eq!(ours, theirs, "directory {dir:?}, name {fm:?}");
            }
        }
        assert!(eligibility("a", None, Some("d")).is_err_and(|e| e.contains("no \"name\"")));
        assert!(
            eligibility("a", Some("a"), Some(" ")).is_err_and(|e| e.contains("no \"description\""))
        );
    }

    /// The size `skills_ext` knows before hashing is the size rmcp writes
    /// (SKX-015): a page is cut from it, so it must never be short.
    #[test]
    fn a_resource_s_json_length_is_known_before_hashing() {
        let digest = shown(&[0xab; 32]);
        for (skill, path, size) in [
            ("good", "SKILL.md", 0),
            ("a-b", "dir/sub dir/ünï \"quoted\".txt", 1_048_577),
            ("x", "tab\there/%", u64::MAX),
        ] {
            let written = serde_json::to_string(&SkillResource::new(
                uri::for_file(skill, path),
                digest.clone(),
                size,
            ))
            .unwrap();
            assert_eq!(
                resource_json_len(skill, path, size),
                written.len() + 1,
                "{written}"
            );
        }
    }

    /// SKX-015 cuts pages by `entry_len`: it must be the length serde
    /// writes, for every shape an entry takes.
    #[test]
    fn an_entry_s_length_is_the_length_serde_writes() {
        let mut fm = SkillFrontmatter::new("a-b", "say \"hi\"\tthen\u{1} go ünï");
        fm.extra.insert("version".into(), serde_json::json!(1.5));
        fm.extra.insert(
            "metadata".into(),
            serde_json::json!({"tags": ["x", "y\\z"], "n": -3, "big": 1e300, "none": null}),
        );
        let front = serde_json::to_string(&fm).unwrap();
        let parsed = frontmatter_from(&front).unwrap();
        assert_eq!(parsed, fm);
        let digest = format!("sha256:{}", "ab".repeat(32));
        let files = |n: usize| {
            (0..n)
                .map(|i| {
                    SkillResource::new(
                        uri::for_file("a-b", &format!("dir/sub \"{i}\"\n.txt")),
                        digest.clone(),
                        [0, 9, 10, 99, 1_048_577, u64::MAX][i % 6],
                    )
                })
                .collect::<Vec<_>>()
        };
        let mut meta = serde_json::Map::new();
        meta.insert("skill-mcp/dynamicNote".into(), "too \"big\"\n".into());
        let entries = [
            SkxSkill::new(
                skill_uri("a-b"),
                parsed.clone(),
                SkillResources::Files(files(1)),
            ),
            SkxSkill::new(
                skill_uri("a-b"),
                parsed.clone(),
                SkillResources::Files(files(7)),
            ),
            SkxSkill::new(
                skill_uri("a-b"),
                parsed.clone(),
                SkillResources::Files(vec![]),
            ),
            SkxSkill::new(skill_uri("a-b"), parsed, SkillResources::Dynamic)
                .with_meta(MetaObject(meta)),
        ];
        for e in entries {
            let written = serde_json::to_string(&e).unwrap();
            assert_eq!(entry_len(&e, front.len()), written.len(), "{written}");
        }
    }
}
