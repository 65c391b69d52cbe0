//! The MCP Skills extension's view of the catalog (SEP-2640,
//! `io.modelcontextprotocol/skills`), built with each snapshot: which
//! skills that door serves (SKX-006: SEP-2640's own rules, the rest
//! reported as problems), and the digests it hands out. What exists and
//! what may be read is decided by `catalog` and `fence` exactly as for the
//! tools. The door itself — `skills/list`, `skills/get` and
//! `resources/directory/read` in rmcp's model types — is `server::skills`;
//! this module names no rmcp type (issue 28 §6, SRV-011).
//!
//! Digests are `sha256:` of each file's exact bytes, computed on first
//! use on the digest pool ([`spawn`], never the blocking threads reads
//! share), at most [`SKX_MAX_SKILL_BYTES`] for one skill per request, and
//! kept for the life of the snapshot: 32 bytes and an 8-byte validity key
//! a file, in a table per skill made when that skill is first asked for,
//! beside SKILL.md's frontmatter as compact JSON under SKILL.md's key.
//! A kept digest (or frontmatter) is handed out after one `stat` of its
//! file shows the same validity key (device, inode, size, mtime and
//! ctime), so a rewrite — even at the same size with its mtime put back —
//! is read again rather than served from what was kept (SKX-014, SKX-017).
//! Nothing is written to disk: the README's "caches nothing" is about disk.

use std::hash::{Hash, Hasher};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::FileStat;
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::os::unix::fs::OpenOptionsExt;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

use crate::catalog::{self, Catalog, Skill};
use crate::fence;
use crate::frontmatter;
use crate::limits::{DIGEST_SETTLE_SECS, DIGEST_THREADS, SKX_MAX_RESOURCES, SKX_MAX_SKILL_BYTES};
use crate::problem::{Problem, Reason};
use crate::uri;

/// One kept digest: the file's validity key when it was hashed (0: none
/// kept) and its SHA-256. 40 bytes, so 110,000 files keep 4.2 MiB.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// [`validity`] of the file as hashed, with [`SETTLED`] set when its
    /// times were old enough to trust (see [`DIGEST_SETTLE_SECS`]).
    key: u64,
    sum: [u8; 32],
}

/// The bit of a slot's key that says the digest may be handed out on a
/// matching stat alone; without it the next use hashes again.
const SETTLED: u64 = 1;

/// What a file's stat says about which bytes it holds: the fields of
/// its validity key (SKX-014). Taken from a path's `fstatat` (a request's
/// re-check) or from an open descriptor's `fstat` (the fence's), which
/// give the same numbers for the same file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl From<&std::fs::Metadata> for Stamp {
    fn from(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

impl From<&FileStat> for Stamp {
    #[allow(clippy::useless_conversion)] // the field types differ by target
    fn from(s: &FileStat) -> Stamp {
        Stamp {
            dev: u64::from(s.st_dev),
            ino: u64::from(s.st_ino),
            size: u64::try_from(s.st_size).unwrap_or(0),
            mtime: (i64::from(s.st_mtime), i64::from(s.st_mtime_nsec)),
            ctime: (i64::from(s.st_ctime), i64::from(s.st_ctime_nsec)),
        }
    }
}

/// What must be unchanged for a kept digest to describe a file's bytes:
/// which file (device and inode), its size, and its mtime and ctime to
/// the nanosecond. ctime moves on every write and on every `utimes`, and
/// no user can set it back, so restoring the mtime (`cp -p`, `rsync -t`,
/// `tar x`) cannot hide a rewrite. Folded to 64 bits with SipHash's fixed
/// keys; the low bit is left for [`SETTLED`] and the key is never 0.
fn validity(stamp: &Stamp) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    stamp.hash(&mut h);
    (h.finish() & !SETTLED) | 2
}

/// True when the file's mtime and ctime are both at least
/// [`DIGEST_SETTLE_SECS`] before `began`, so no later write can leave the
/// same stamp (a write moves ctime to "now", which is later still).
fn settled(stamp: &Stamp, began: SystemTime) -> bool {
    let Some(before) = began.checked_sub(Duration::from_secs(DIGEST_SETTLE_SECS)) else {
        return false;
    };
    let at = |(secs, nsec): (i64, i64)| {
        u64::try_from(secs)
            .ok()
            .map(|s| UNIX_EPOCH + Duration::from_secs(s) + Duration::from_nanos(nsec.max(0) as u64))
    };
    [at(stamp.mtime), at(stamp.ctime)]
        .iter()
        .all(|t| t.is_some_and(|t| t <= before))
}

/// What one served skill keeps for the snapshot's life (SKX-017): its
/// digests, a slot per manifest file (`None` until the skill is first
/// asked for), and its frontmatter as SEP-2640 carries it.
#[derive(Debug, Default)]
struct Kept {
    digests: Option<Box<[Slot]>>,
    /// SKILL.md's frontmatter as compact JSON, with SKILL.md's validity
    /// key when it was read ([`SETTLED`] set as for a digest). Kept as
    /// text, not as JSON values: a kilobyte a skill, where the values
    /// would take several.
    front: Option<(u64, Box<str>)>,
}

type Table = Mutex<Kept>;

/// The extension's view of one snapshot's catalog.
#[derive(Debug, Default)]
pub(crate) struct SkillsView {
    /// Indices into `catalog.skills` of the skills this surface serves,
    /// in the catalog's order (by name).
    served: Vec<usize>,
    /// What each served skill keeps (same order as `served`), filled on
    /// that skill's first use.
    tables: Box<[Table]>,
}

/// One served skill as this door hands it out: SKILL.md's frontmatter as
/// compact JSON (`{"name":…,"description":…,…}`, SKX-001) and its files.
#[derive(Debug)]
pub(crate) struct Carried {
    pub(crate) front: String,
    pub(crate) manifest: Manifest,
}

/// Why a carried skill cannot be handed out now (SKX-011).
#[derive(Debug)]
pub(crate) enum Unservable {
    /// SKILL.md was edited since the scan so that SEP-2640 cannot carry it
    /// under its scanned name; why, in words.
    Changed(String),
    /// One of its files can no longer be stat'ed, opened or read.
    Files(String),
    /// Asked for with [`Reach::Kept`], it has a file to read or hash.
    NotKept,
}

/// How far a request goes for an entry (SKX-012, SKX-017).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reach<'a> {
    /// Its stats and what is kept, nothing else: a file to read or hash
    /// ends the attempt with [`Unservable::NotKept`]. Work this small is
    /// answered where the request arrived, without the pool's hop.
    Kept,
    /// Read and hash what is not kept (on the digest pool); the flag
    /// turning true (SRV-009) ends the work at the next chunk.
    Read(&'a AtomicBool),
}

/// A served skill's files as this door hands them out (SKX-013).
#[derive(Debug)]
pub(crate) enum Manifest {
    /// `(size, "sha256:…")` of each manifest file, in manifest order.
    Files(Vec<(u64, String)>),
    /// The skill is served with `resources: "dynamic"`; why, in words.
    Dynamic(String),
}

/// The JSON size of one manifest entry as SEP-2640 writes it,
/// `{"uri":"…","digest":"sha256:<64>","size":N}`, known before hashing:
/// a digest's width never changes.
pub(crate) fn resource_json_len(skill: &str, path: &str, size: u64) -> usize {
    // {"uri":,"digest":"sha256:","size":} is 35 bytes; 64 hex digits;
    // the URI as a JSON string; the size's digits; one comma.
    let uri_len = serde_json::to_string(&uri::for_file(skill, path)).map_or(0, |s| s.len());
    35 + 64 + uri_len + size.to_string().len() + 1
}

/// A digest as the extension writes it: `sha256:` and 64 hex digits
/// (a table, not `format!`: a walk of 1,000 skills writes 10,000).
pub(crate) fn shown(sum: &[u8; 32]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = Vec::with_capacity(7 + 64);
    s.extend_from_slice(b"sha256:");
    for b in sum {
        s.push(HEX[usize::from(b >> 4)]);
        s.push(HEX[usize::from(b & 15)]);
    }
    String::from_utf8(s).unwrap_or_default()
}

/// A job for the digest pool.
type Job = Box<dyn FnOnce() + Send + 'static>;

/// The digest pool (SKX-012): its own threads, built on first use, fed by
/// one queue. Plain threads blocked on a channel rather than a work-
/// stealing pool: an idle one sleeps in the kernel instead of spinning
/// (rayon's idle workers called `sched_yield` 37 times per `skills/get`,
/// which cost more than the stats the request itself makes).
static POOL: OnceLock<Result<mpsc::Sender<Job>, String>> = OnceLock::new();

fn start_pool() -> Result<mpsc::Sender<Job>, String> {
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    for i in 0..DIGEST_THREADS {
        let rx = Arc::clone(&rx);
        std::thread::Builder::new()
            .name(format!("skill-mcp-digest-{i}"))
            .spawn(move || {
                loop {
                    // The lock is held only while waiting for the next job.
                    let job = match rx.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    // A panicking job drops its reply, which the door
                    // reports as lost work; this thread carries on.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })
            .map_err(|e| format!("the digest pool could not start: {e}"))?;
    }
    Ok(tx)
}

/// Runs `job` on the digest pool, never on the blocking threads that
/// every read shares, so a skill being hashed delays only digests.
pub(crate) fn spawn(job: impl FnOnce() + Send + 'static) -> Result<(), String> {
    match POOL.get_or_init(start_pool) {
        Ok(tx) => tx
            .send(Box::new(job))
            .map_err(|_| "the digest pool is gone".to_owned()),
        Err(e) => Err(e.clone()),
    }
}

/// The SKILL.md URI of a skill.
pub(crate) fn skill_uri(name: &str) -> String {
    uri::for_file(name, catalog::SKILL_MD)
}

/// Why a catalog skill cannot be on this surface, by SEP-2640's own rules:
/// a name of lowercase letters, digits and single hyphens equal to its URI
/// segment, which is our directory name — so the frontmatter `name` must
/// be present and agree — and a description. **Decision** (SKX-006): the
/// checks, their order and their words are those of rmcp's validator
/// (`Skill::validate`), written here so the rule needs no protocol type;
/// a test at the door (`server::skills`) holds the two to one verdict.
/// `dir_name` is the skill's (catalog) name, `fm_name` and `description`
/// its frontmatter's.
pub(crate) fn eligibility(
    dir_name: &str,
    fm_name: Option<&str>,
    description: Option<&str>,
) -> Result<(), String> {
    let Some(name) = fm_name else {
        return Err("its frontmatter has no \"name\", and SEP-2640 requires one equal to the skill's URI segment".into());
    };
    if description.is_none_or(|d| d.trim().is_empty()) {
        return Err("its frontmatter has no \"description\", which SEP-2640 requires".to_owned());
    }
    let refused = |why: String| Err(format!("SEP-2640 refuses it: {why}"));
    let uri = skill_uri(dir_name);
    let Some(segment) = uri_segment(&uri) else {
        return refused(format!("skill uri {uri} does not end in /SKILL.md"));
    };
    if !valid_name(name) {
        return refused(format!(
            "invalid skill name {name:?}: after NFKC normalization, use 1–64 characters with lowercase letters, \
             numbers, and single internal hyphens"
        ));
    }
    if !percent_decode_str(segment)
        .decode_utf8()
        .is_ok_and(|s| s.nfkc().eq(name.nfkc()))
    {
        return refused(format!(
            "skill uri {uri} does not end in the frontmatter name {name}"
        ));
    }
    Ok(())
}

/// The name segment of a SKILL.md URI: the last path segment before
/// `/SKILL.md`, in a URI with no query or fragment.
fn uri_segment(uri: &str) -> Option<&str> {
    if uri.contains(['?', '#']) {
        return None;
    }
    let path = uri.strip_suffix(catalog::SKILL_MD)?.strip_suffix('/')?;
    path.rsplit('/').next().filter(|n| !n.is_empty())
}

/// SEP-2640's name, counted after NFKC: 1–64 letters of lowercase or
/// caseless scripts, digits and single internal hyphens.
fn valid_name(name: &str) -> bool {
    let mut needs_alphanumeric = true;
    for (index, ch) in name.nfkc().enumerate() {
        if index >= 64 {
            return false;
        }
        match get_general_category(ch) {
            GeneralCategory::LowercaseLetter
            | GeneralCategory::ModifierLetter
            | GeneralCategory::OtherLetter
            | GeneralCategory::DecimalNumber
            | GeneralCategory::LetterNumber
            | GeneralCategory::OtherNumber => needs_alphanumeric = false,
            _ if ch == '-' && !needs_alphanumeric => needs_alphanumeric = true,
            _ => return false,
        }
    }
    !needs_alphanumeric
}

/// What leaving a skill out of this door means, said once per report.
const LEFT_OUT: &str =
    "the MCP Skills extension (SEP-2640) leaves it out of skills/list and skills/get";

/// SEP-2640's name rule, in words.
const NAME_RULE: &str = "1-64 lowercase letters, digits and single hyphens";

/// Why `skill` is left out of this door, said as its author needs it
/// (SKX-006, issue 41 §3): each cause once, where it is and what to write.
/// A cause the catalog already reported — a `name` unlike the folder's
/// (`name-mismatch`), a `name` or `description` that is not a string
/// (`declaration`) — gets this door's consequence added to that one
/// report; every other cause (no `name`, no or an empty `description`, a
/// name SEP-2640 does not take) goes into one `skills-extension` problem
/// at the first cause's line, each with its fix. `validator` (rmcp's
/// words for the same verdict) is said only when no cause is found, which
/// the unit tests hold never happens.
fn left_out(skill: &Skill, validator: String, problems: &mut Vec<Problem>) {
    let path = skill
        .dir
        .join(catalog::SKILL_MD)
        .to_string_lossy()
        .into_owned();
    let dir = skill.name.as_str();
    let spots = skill.spots;
    let close = Some((spots.close, 1));
    let also = format!("; this is also why {LEFT_OUT}");
    // The catalog's own report of a cause, amended; false when it has none.
    let mut fold = |reason: Reason, at: Option<(u32, u32)>, more: &str| {
        let at = at.map(|(l, c)| (Some(l as usize), Some(c as usize)));
        match problems
            .iter_mut()
            .find(|p| p.reason == reason && p.path == path && Some((p.line, p.column)) == at)
        {
            Some(p) => {
                p.amend(more);
                true
            }
            None => false,
        }
    };
    let mut causes: Vec<String> = Vec::new();
    let mut place: Option<(u32, u32)> = None;
    let mut folded = false;
    match skill.frontmatter_name() {
        // A `name:` that is there but no string is the catalog's report.
        None if spots.name.is_some() && fold(Reason::Declaration, spots.name, &also) => {
            folded = true
        }
        // No `name:`, or one left empty (null, which the catalog does not
        // report): the line to write, where.
        None => {
            let (wrong, write) = match spots.name {
                Some(_) => ("\"name\" is empty", "write it as"),
                None => (
                    "no \"name\" in the frontmatter",
                    "add the line before the closing \"---\":",
                ),
            };
            causes.push(match sep_name_like(dir) {
                _ if valid_name(dir) => format!(
                    "{wrong}: {write} name: {} (the folder's name)",
                    frontmatter::scalar(dir)
                ),
                Some(like) => format!(
                    "{wrong}, and the folder's name {dir:?} is not one SEP-2640 takes ({NAME_RULE}): rename the \
                     folder to {like:?} and {write} name: {like}"
                ),
                None => format!(
                    "{wrong}, and the folder's name {dir:?} is not one SEP-2640 takes ({NAME_RULE}): rename the \
                     folder to such a name and {write} name: <that name>"
                ),
            });
            place = place.or(spots.name).or(close);
        }
        Some(n) if !n.nfkc().eq(dir.nfkc()) => {
            let more = match (valid_name(n), valid_name(dir)) {
                (true, true) => also.clone(),
                // The catalog offers renaming the folder only to a name a
                // folder can have (DISC-009).
                (false, true) if catalog::is_skill_name(n) => format!(
                    "{also}, which takes only name: {}: {n:?} is not a SEP-2640 name ({NAME_RULE})",
                    frontmatter::scalar(dir)
                ),
                (false, true) => also.clone(),
                (true, false) => format!(
                    "{also}, which takes only the folder renamed to {n:?}: {dir:?} is not a SEP-2640 name ({NAME_RULE})"
                ),
                (false, false) => match sep_name_like(dir) {
                    Some(like) => format!(
                        "{also}, which takes neither name: call both the folder and name: {like:?} ({NAME_RULE})"
                    ),
                    None => {
                        format!("{also}, which takes neither name: it needs {NAME_RULE} for both")
                    }
                },
            };
            if fold(Reason::NameMismatch, spots.name, &more) {
                folded = true;
            } else {
                causes.push(format!("SEP-2640 refuses it: {validator}"));
                place = place.or(spots.name);
            }
        }
        Some(n) if !valid_name(n) => {
            causes.push(match sep_name_like(n) {
                Some(like) => format!(
                    "the name {n:?} (the folder's, and its name:) is not one SEP-2640 takes ({NAME_RULE}): \
                     rename the folder and its name: to {like:?}"
                ),
                None => format!(
                    "the name {n:?} (the folder's, and its name:) is not one SEP-2640 takes ({NAME_RULE}): \
                     rename the folder and its name: to such a name"
                ),
            });
            place = place.or(spots.name);
        }
        Some(_) => {}
    }
    match skill.description.as_deref() {
        Some(d) if !d.trim().is_empty() => {}
        Some(_) => {
            causes.push(
                "\"description\" is empty: write what the skill does, and when to use it"
                    .to_owned(),
            );
            place = place.or(spots.description);
        }
        // A `description:` that is there but no string is the catalog's
        // report; one left empty (null) is not, and is said here.
        None if spots.description.is_some()
            && fold(Reason::Declaration, spots.description, &also) =>
        {
            folded = true
        }
        None if spots.description.is_some() => {
            causes.push(
                "\"description\" is empty: write what the skill does, and when to use it"
                    .to_owned(),
            );
            place = place.or(spots.description);
        }
        None => {
            causes.push(
                "no \"description\" in the frontmatter: add a line description: <what the skill does, and when to use it> \
                 before the closing \"---\""
                    .to_owned(),
            );
            place = place.or(close);
        }
    }
    if causes.is_empty() && !folded {
        causes.push(format!("SEP-2640 refuses it: {validator}"));
    }
    if causes.is_empty() {
        return;
    }
    let (line, column) = place.map_or((None, None), |(l, c)| (Some(l as usize), Some(c as usize)));
    problems.push(
        Problem::new(
            path,
            Reason::SkillsExtension,
            format!(
                "{}; until then {LEFT_OUT} (the tools, prompts and resources still serve it)",
                causes.join("; ")
            ),
        )
        .at(line, column),
    );
}

/// A SEP-2640 name made from `s`, to suggest: lowercase, each run of other
/// characters one hyphen, none at either end, at most 64; `None` when
/// nothing is left.
fn sep_name_like(s: &str) -> Option<String> {
    let mut out = String::new();
    for c in s.chars().map(|c| c.to_ascii_lowercase()) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(64);
    let out = out.trim_end_matches('-').to_owned();
    valid_name(&out).then_some(out)
}

/// SKILL.md's frontmatter as SEP-2640 writes it: `name`, `description`,
/// then every other field (the shape the door reads back into rmcp's
/// `SkillFrontmatter`).
#[derive(serde::Serialize)]
struct Front {
    name: String,
    description: String,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl SkillsView {
    /// Decides which skills this surface serves; why each other one is
    /// left out goes into `problems`, in its author's words (SKX-006).
    pub(crate) fn boot(catalog: &Catalog, problems: &mut Vec<Problem>) -> SkillsView {
        let mut served = Vec::new();
        for (i, skill) in catalog.skills.iter().enumerate() {
            match eligibility(
                &skill.name,
                skill.frontmatter_name(),
                skill.description.as_deref(),
            ) {
                Ok(()) => served.push(i),
                Err(why) => left_out(skill, why, problems),
            }
        }
        let tables = served.iter().map(|_| Mutex::default()).collect();
        SkillsView { served, tables }
    }

    /// Indices into `catalog.skills` of the skills this door serves, in
    /// the catalog's order (by name).
    pub(crate) fn served(&self) -> &[usize] {
        &self.served
    }

    /// The position in [`served`](Self::served) of the skill served as
    /// `name`: a bisection of the catalog's sorted names (SKX-016).
    pub(crate) fn find(&self, catalog: &Catalog, name: &str) -> Option<usize> {
        self.served
            .binary_search_by(|&si| catalog.skills[si].name.as_str().cmp(name))
            .ok()
    }

    /// True when the served skill at `pos` has its frontmatter and every
    /// digest it was given kept and settled: an entry that, its stats
    /// permitting, needs nothing read ([`Reach::Kept`]).
    pub(crate) fn kept(&self, pos: usize) -> bool {
        let Some(Ok(t)) = self.tables.get(pos).map(Mutex::lock) else {
            return false;
        };
        t.front.as_ref().is_some_and(|(k, _)| k & SETTLED != 0)
            && t.digests
                .as_ref()
                .is_none_or(|d| d.iter().all(|slot| slot.key & SETTLED != 0))
    }

    /// The served skill at `pos` (SKX-011..SKX-014, SKX-017): its
    /// frontmatter and its manifest. A skill over SEP-2640's 512 resources
    /// or 16 MiB, or whose manifest alone would take more than `room` bytes
    /// of JSON beside its frontmatter, is `Dynamic`; otherwise each file's
    /// size and digest. One stat a file shows its validity key: a kept
    /// digest (and SKILL.md's kept frontmatter) is handed out when the key
    /// is unchanged, anything else is read through the fence — unless
    /// `reach` is [`Reach::Kept`].
    pub(crate) fn entry(
        &self,
        catalog: &Catalog,
        pos: usize,
        room: usize,
        reach: Reach,
    ) -> Result<Carried, Unservable> {
        let skill = &catalog.skills[self.served[pos]];
        let table = self
            .tables
            .get(pos)
            .ok_or_else(|| Unservable::Files("no such skill in this snapshot".into()))?;
        let began = SystemTime::now();
        // Each stat walks only the path inside the skill: the directory's
        // own path is walked once, by this open (a descriptor for lookups,
        // not for reading). Gone or unreadable, SKILL.md goes with it: an
        // edit SEP-2640 cannot carry.
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(OFlag::O_PATH.bits() | OFlag::O_DIRECTORY.bits())
            .open(&skill.dir)
            .map_err(|e| Unservable::Changed(format!("SKILL.md could not be read: {e}")))?;
        // Following symlinks, as the fence's realpath check does.
        let stat = |path: &str| {
            nix::sys::stat::fstatat(&dir, path, AtFlags::empty())
                .map(|s| Stamp::from(&s))
                .map_err(std::io::Error::from)
        };
        let md_at = skill.files.position(catalog::SKILL_MD);
        let md = stat(catalog::SKILL_MD)
            .map_err(|e| Unservable::Changed(format!("SKILL.md could not be read: {e}")))?;
        let front = self.front(table, skill, &md, began, reach)?;
        let room = room.saturating_sub(front.len());
        if let Some(why) = over_limits(skill, room) {
            return Ok(Carried {
                front,
                manifest: Manifest::Dynamic(why),
            });
        }
        // One stat a file: what each is now, and whether the skill still
        // fits the byte cap (a file may have grown since the scan).
        // SKILL.md's was made above.
        let mut now = Vec::with_capacity(skill.files.len());
        let mut total = 0u64;
        for (fi, f) in skill.files.iter().enumerate() {
            let stamp = if Some(fi) == md_at {
                md
            } else {
                stat(f.path).map_err(|e| {
                    Unservable::Files(format!("{:?} cannot be read now: {e}", f.path))
                })?
            };
            total = total.saturating_add(stamp.size);
            now.push(stamp);
        }
        if total > SKX_MAX_SKILL_BYTES {
            return Ok(Carried {
                front,
                manifest: Manifest::Dynamic(too_large(&skill.name, total)),
            });
        }
        let kept = |fi: usize| -> Option<Slot> {
            let t = table.lock().ok()?;
            t.digests.as_ref()?.get(fi).copied()
        };
        let mut out = Vec::with_capacity(now.len());
        let mut hashed = 0u64;
        // One read buffer for the whole manifest, made on the first miss.
        let mut buf = Vec::new();
        for (fi, (f, stamp)) in skill.files.iter().zip(&now).enumerate() {
            let key = validity(stamp);
            if let Some(slot) = kept(fi)
                && slot.key == key | SETTLED
            {
                out.push((stamp.size, shown(&slot.sum)));
                continue;
            }
            let Reach::Read(stop) = reach else {
                return Err(Unservable::NotKept);
            };
            let began = SystemTime::now();
            let left = SKX_MAX_SKILL_BYTES.saturating_sub(hashed);
            let Hashed {
                key: opened_key,
                size,
                sum,
                settled,
            } = hash(skill, f.path, left, began, &mut buf, stop).map_err(Unservable::Files)?;
            hashed = hashed.saturating_add(size);
            if hashed > SKX_MAX_SKILL_BYTES {
                return Ok(Carried {
                    front,
                    manifest: Manifest::Dynamic(too_large(&skill.name, hashed)),
                });
            }
            if let Ok(mut t) = table.lock() {
                let t = t
                    .digests
                    .get_or_insert_with(|| vec![Slot::default(); skill.files.len()].into());
                if let Some(slot) = t.get_mut(fi) {
                    *slot = Slot {
                        key: opened_key | u64::from(settled),
                        sum,
                    };
                }
            }
            out.push((size, shown(&sum)));
        }
        Ok(Carried {
            front,
            manifest: Manifest::Files(out),
        })
    }

    /// SKILL.md's frontmatter as compact JSON: the kept one when `stamp`
    /// (SKILL.md's stat, made at or after `began`) shows the settled key
    /// it was read at, else read and parsed through the fence now and
    /// kept. A write after the stat gives SKILL.md another key, so text
    /// newer than its key is read again, never the reverse (SKX-014).
    fn front(
        &self,
        table: &Table,
        skill: &Skill,
        stamp: &Stamp,
        began: SystemTime,
        reach: Reach,
    ) -> Result<String, Unservable> {
        let key = validity(stamp);
        if let Ok(t) = table.lock()
            && let Some((k, json)) = &t.front
            && *k == key | SETTLED
        {
            return Ok(json.to_string());
        }
        if let Reach::Kept = reach {
            return Err(Unservable::NotKept);
        }
        let json = read_front(skill).map_err(Unservable::Changed)?;
        if let Ok(mut t) = table.lock() {
            let key = key | u64::from(settled(stamp, began));
            t.front = Some((key, json.as_str().into()));
        }
        Ok(json)
    }

    /// For `resources/read`: when a digest of this file is kept and the
    /// file no longer has the validity key it was hashed at, say so
    /// (SKX-005, SKX-014), and forget the digest so the next `skills/get`
    /// hashes anew.
    pub(crate) fn stale_note(
        &self,
        catalog: &Catalog,
        skill_name: &str,
        path: &str,
        meta: &std::fs::Metadata,
    ) -> Option<String> {
        let pos = self.find(catalog, skill_name)?;
        let fi = catalog.skills[self.served[pos]].files.position(path)?;
        let mut table = self.tables.get(pos)?.lock().ok()?;
        let slot = table.digests.as_mut()?.get_mut(fi)?;
        if slot.key == 0 || slot.key & !SETTLED == validity(&meta.into()) & !SETTLED {
            return None;
        }
        *slot = Slot::default();
        Some("This file changed after its digest was given by skills/list or skills/get; call skills/get again for a fresh one.".into())
    }
}

/// SKILL.md's frontmatter as SEP-2640 carries it (`name`, `description`,
/// every other field), read and parsed through the fence now, as compact
/// JSON; or why SEP-2640 cannot carry it under its scanned name (SKX-011).
fn read_front(skill: &Skill) -> Result<String, String> {
    let loaded = catalog::load_skill_md(&skill.dir).map_err(|e| match e {
        catalog::LoadError::Read(_, d, _) => d,
        catalog::LoadError::Split(e) => e.to_string(),
    })?;
    let fm = loaded.parse().map_err(|e| e.to_string())?;
    let mut extra = Map::new();
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
        return Err("its name or description is gone".into());
    };
    if name != skill.name {
        return Err(format!(
            "its frontmatter name is now {name:?}, not the directory name it was served under"
        ));
    }
    if description.trim().is_empty() {
        return Err("its description is now empty".into());
    }
    let front = Front {
        name,
        description,
        extra,
    };
    serde_json::to_string(&front)
        .map_err(|e| format!("its frontmatter cannot be written as JSON: {e}"))
}

/// Why a skill is served `dynamic` before any file but SKILL.md is
/// touched, if it is: its manifest, as the catalog scanned it, is over SEP-2640's limits or
/// would not fit `room` bytes of one answer (SKX-013, SKX-015).
fn over_limits(skill: &Skill, room: usize) -> Option<String> {
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
    let json: usize = skill
        .files
        .iter()
        .map(|f| resource_json_len(&skill.name, f.path, f.size))
        .sum();
    (json > room).then(|| {
        format!(
            "its manifest of {n} files would take {json} characters, more than one answer holds (SKX-015); \
             list its files with resources/directory/read (skill://{}) and read them with resources/read",
            skill.name
        )
    })
}

/// The words for a skill over the byte cap.
fn too_large(name: &str, bytes: u64) -> String {
    format!(
        "its files hold {bytes} bytes, over the 16 MiB ({SKX_MAX_SKILL_BYTES} bytes) SEP-2640 lets a skill with \
         a manifest hold, so no digests are computed for it (SKX-013); list its files with \
         resources/directory/read (skill://{name}) and read them with resources/read"
    )
}

/// One file hashed: its validity key as opened, the bytes read, their
/// SHA-256, and whether the digest may be trusted on a matching stat.
struct Hashed {
    key: u64,
    size: u64,
    sum: [u8; 32],
    settled: bool,
}

/// Hashes one file through the fence, reading at most `cap + 1` bytes:
/// its validity key as opened (the descriptor's own fstat), the bytes
/// read, the SHA-256, and whether the digest may be trusted on a matching
/// stat later (its times are older than `began` by the settle margin).
fn hash(
    skill: &Skill,
    path: &str,
    cap: u64,
    began: SystemTime,
    buf: &mut Vec<u8>,
    stop: &AtomicBool,
) -> Result<Hashed, String> {
    let opened = fence::open(&skill.dir, path).map_err(|e| e.to_string())?;
    let stamp = Stamp::from(&opened.meta);
    let key = validity(&stamp);
    let settled = settled(&stamp, began);
    let mut hasher = Sha256::new();
    let mut file = (&opened.file).take(cap.saturating_add(1));
    if buf.is_empty() {
        buf.resize(64 * 1024, 0);
    }
    let mut size = 0u64;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err("the request was cancelled".into());
        }
        let n = file
            .read(buf)
            .map_err(|e| format!("{path:?} could not be read: {e}"))?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    // Bytes that are not the size the descriptor had were written while
    // they were read: serve them, but keep nothing that could outlive them.
    let settled = settled && size == opened.meta.len();
    Ok(Hashed {
        key,
        size,
        sum: hasher.finalize().into(),
        settled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A digest is written as `sha256:` and lowercase hex, high nibble first.
    #[test]
    fn a_digest_is_written_in_lowercase_hex() {
        let mut sum = [0u8; 32];
        sum[0] = 0x0f;
        sum[1] = 0xa0;
        sum[31] = 0xff;
        let s = shown(&sum);
        assert_eq!(s.len(), 71);
        assert!(s.starts_with("sha256:0fa0000000"), "{s}");
        assert!(s.ends_with("00ff"), "{s}");
    }

    /// SKX-014: a file written just now is not settled; one whose times
    /// are older than the margin is; the key changes with the bytes'
    /// file even at the same size and mtime.
    #[test]
    fn validity_moves_with_a_rewrite_and_fresh_files_are_not_settled() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"one").unwrap();
        let first_meta = std::fs::metadata(&p).unwrap();
        let first = Stamp::from(&first_meta);
        let now = SystemTime::now();
        assert!(!settled(&first, now));
        assert!(settled(
            &first,
            now + Duration::from_secs(DIGEST_SETTLE_SECS + 1)
        ));
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&p, b"two").unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(first_meta.modified().unwrap()).unwrap();
        let second_meta = std::fs::metadata(&p).unwrap();
        let second = Stamp::from(&second_meta);
        assert_eq!(
            (first_meta.len(), first_meta.modified().unwrap()),
            (second_meta.len(), second_meta.modified().unwrap())
        );
        assert_ne!(validity(&first), validity(&second));
        assert_eq!(
            validity(&second),
            validity(&Stamp::from(&std::fs::metadata(&p).unwrap()))
        );
        // A path's fstatat gives the key a descriptor's fstat gives.
        let at = nix::sys::stat::fstatat(
            std::fs::File::open(dir.path()).unwrap(),
            "f",
            AtFlags::empty(),
        )
        .unwrap();
        assert_eq!(validity(&second), validity(&Stamp::from(&at)));
        assert_eq!(validity(&second) & SETTLED, 0);
    }

    /// The problems of a tree whose skills are `skills` (folder, SKILL.md
    /// text): the catalog's, then this door's.
    fn problems_of(skills: &[(&str, &str)]) -> Vec<Problem> {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("r");
        for (dir, text) in skills {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            std::fs::write(root.join(dir).join("SKILL.md"), text).unwrap();
        }
        let catalog = catalog::scan_root(&root);
        let mut problems = catalog.problems.clone();
        SkillsView::boot(&catalog, &mut problems);
        problems
    }

    /// Each problem as `reason line:column detail`, the temporary root cut.
    fn said(problems: &[Problem]) -> Vec<String> {
        problems
            .iter()
            .map(|p| {
                let file = p.path.rsplit('/').nth(1).unwrap_or_default();
                format!(
                    "{} {file}:{}:{} {}",
                    p.reason.code(),
                    p.line.unwrap_or(0),
                    p.column.unwrap_or(0),
                    p.detail
                )
            })
            .collect()
    }

    /// A folder named unlike its skill is one report, at the `name:`
    /// value, with both fixes and this door's consequence (issue 41 §3).
    #[test]
    fn a_name_mismatch_is_one_report_with_its_fix_and_the_door_s_consequence() {
        let got = said(&problems_of(&[(
            "other",
            "---\nname: weather\ndescription: d\n---\n",
        )]));
        assert_eq!(
            got,
            [
                "name-mismatch other:2:7 the frontmatter says name \"weather\", but the folder is \"other\", and a skill is \
                 served under its folder's name: it is served as \"other\" (the name skill_load and a grant use); make the \
                 two agree: change this line to name: other, or rename the folder to \"weather\"; this is also why the MCP \
                 Skills extension (SEP-2640) leaves it out of skills/list and skills/get (line 2, column 7)"
            ]
        );
    }

    /// Which of the two fixes SEP-2640 also takes, when it takes only one.
    #[test]
    fn a_mismatch_says_which_fix_the_door_takes() {
        let got = said(&problems_of(&[
            ("lower", "---\nname: Lower_Case\ndescription: d\n---\n"),
            ("My_Dir", "---\nname: my-dir\ndescription: d\n---\n"),
            ("Both_Bad", "---\nname: Other_Bad\ndescription: d\n---\n"),
        ]));
        assert_eq!(got.len(), 3, "{got:#?}");
        assert!(
            got[0].contains("Both_Bad:2:7 ")
                && got[0].contains(
                    "which takes neither name: call both the folder and name: \"both-bad\""
                ),
            "{got:#?}"
        );
        assert!(got[1].contains("My_Dir:2:7 ") && got[1].contains("which takes only the folder renamed to \"my-dir\": \"My_Dir\" is not a SEP-2640 name"), "{got:#?}");
        assert!(
            got[2].contains("lower:2:7 ")
                && got[2].contains(
                    "which takes only name: lower: \"Lower_Case\" is not a SEP-2640 name"
                ),
            "{got:#?}"
        );
        assert!(
            got.iter().all(|p| p.starts_with("name-mismatch ")),
            "{got:#?}"
        );
    }

    /// No description, no name, an empty description and a name SEP-2640
    /// does not take: each said once, with the line to write and where.
    #[test]
    fn what_the_door_needs_is_said_with_the_line_to_write() {
        let got = said(&problems_of(&[
            ("nodesc", "---\nname: nodesc\n---\n"),
            ("noname", "---\ndescription: d\nlicense: MIT\n---\n"),
            ("blank", "---\nname: blank\ndescription: \"  \"\n---\n"),
            ("Loud_Name", "---\nname: Loud_Name\ndescription: d\n---\n"),
            ("neither", "---\nlicense: MIT\n---\n"),
            ("nullname", "---\nname:\ndescription: d\n---\n"),
        ]));
        let tail = "; until then the MCP Skills extension (SEP-2640) leaves it out of skills/list and skills/get \
                    (the tools, prompts and resources still serve it)";
        assert_eq!(
            got,
            [
                format!(
                    "skills-extension Loud_Name:2:7 the name \"Loud_Name\" (the folder's, and its name:) is not one SEP-2640 \
                     takes (1-64 lowercase letters, digits and single hyphens): rename the folder and its name: to \
                     \"loud-name\"{tail} (line 2, column 7)"
                ),
                format!(
                    "skills-extension blank:3:14 \"description\" is empty: write what the skill does, and when to use it{tail} \
                     (line 3, column 14)"
                ),
                format!(
                    "skills-extension neither:3:1 no \"name\" in the frontmatter: add the line before the closing \"---\": \
                     name: neither (the folder's name); no \"description\" in the frontmatter: add a line description: <what \
                     the skill does, and when to use it> before the closing \"---\"{tail} (line 3, column 1)"
                ),
                format!(
                    "skills-extension nodesc:3:1 no \"description\" in the frontmatter: add a line description: <what the \
                     skill does, and when to use it> before the closing \"---\"{tail} (line 3, column 1)"
                ),
                format!(
                    "skills-extension noname:4:1 no \"name\" in the frontmatter: add the line before the closing \"---\": \
                     name: noname (the folder's name){tail} (line 4, column 1)"
                ),
                format!(
                    "skills-extension nullname:2:5 \"name\" is empty: write it as name: nullname (the folder's \
                     name){tail} (line 2, column 5)"
                ),
            ]
        );
    }

    /// A `name` or `description` that is no string is the catalog's
    /// `declaration` report, which says to quote it; this door's
    /// consequence joins it rather than being a second report.
    #[test]
    fn a_field_that_is_no_string_is_one_report() {
        let got = said(&problems_of(&[
            ("numname", "---\nname: 1.0\ndescription: d\n---\n"),
            ("numdesc", "---\nname: numdesc\ndescription: 12\n---\n"),
        ]));
        assert_eq!(
            got,
            [
                "declaration numdesc:3:14 frontmatter \"description\" is not a string (ignored); quote it: description: \
                 \"12\"; this is also why the MCP Skills extension (SEP-2640) leaves it out of skills/list and skills/get \
                 (line 3, column 14)",
                "declaration numname:2:7 frontmatter \"name\" is not a string (ignored); quote it: name: \"1.0\"; this is \
                 also why the MCP Skills extension (SEP-2640) leaves it out of skills/list and skills/get (line 2, column 7)",
            ]
        );
    }

    /// Every folder name and frontmatter name the verdict test tries: a
    /// refusal is always said as its cause, never in the validator's words
    /// alone, and a skill the door carries gets no word at all.
    #[test]
    fn every_refusal_is_said_as_its_cause() {
        let names = [
            "good",
            "a-b",
            "a--b",
            "-a",
            "a-",
            "Loud_Name",
            "x1",
            "template",
            "v1.2",
            "ünï",
            "ｆｕｌｌ",
            "Ⅻ",
            "a b",
            "1.0",
        ];
        let dirs: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| catalog::is_skill_name(n))
            .collect();
        for dir in &dirs {
            for fm in names {
                let text = format!("---\nname: \"{fm}\"\ndescription: d\n---\n");
                let problems = problems_of(&[(dir, &text)]);
                let carried = eligibility(dir, Some(fm), Some("d")).is_ok();
                assert!(
                    problems
                        .iter()
                        .all(|p| !p.detail.contains("SEP-2640 refuses it")),
                    "{dir} / {fm}: {problems:#?}"
                );
                assert_eq!(
                    problems.iter().any(|p| p.detail.contains("skills/list")),
                    !carried,
                    "{dir} / {fm}: {problems:#?}"
                );
                assert!(problems.len() <= 1, "{dir} / {fm}: {problems:#?}");
            }
        }
    }
}
