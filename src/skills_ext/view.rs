//! The extension's view of one snapshot's catalog: which skills it serves
//! (SKX-006, SKX-016) and what each keeps for the snapshot's life
//! (SKX-017) — its digests and its frontmatter, handed out after one stat
//! a file shows the same validity key (SKX-011..SKX-014), and the note
//! `resources/read` adds when a file changed since its digest (SKX-005).

use std::os::unix::fs::OpenOptionsExt;
use std::sync::Mutex;
use std::time::SystemTime;

use nix::fcntl::{AtFlags, OFlag};

use super::digests::{Hashed, SETTLED, Slot, Stamp, hash, settled, shown, validity};
use super::dynamic::{file_too_large, manifest_json_len, over_limits, too_large};
use super::eligibility::{eligibility, left_out};
use super::front::read_front;
use super::{Carried, Manifest, Reach, Unservable};
use crate::catalog::{self, Catalog, Skill};
use crate::limits::{MAX_FILE_BYTES, SKX_MAX_SKILL_BYTES};
use crate::problem::Problem;

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
    /// The manifest's JSON length as the catalog scanned it (SKX-015):
    /// fixed for the snapshot, so worked out once, not on every request.
    manifest_json: Option<usize>,
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
        let dir = open_dir(skill)?;
        let md = stat_at(&dir, catalog::SKILL_MD)
            .map_err(|e| Unservable::Changed(format!("SKILL.md could not be read: {e}")))?;
        let front = self.front(table, skill, &md, began, reach)?;
        let room = room.saturating_sub(front.len());
        let json = match table.lock() {
            Ok(mut t) => *t
                .manifest_json
                .get_or_insert_with(|| manifest_json_len(skill)),
            Err(_) => manifest_json_len(skill),
        };
        if let Some(why) = over_limits(skill, json, room) {
            return Ok(Carried {
                front,
                manifest: Manifest::Dynamic(why),
            });
        }
        // One stat a file: what each is now, and whether the skill still
        // fits the byte cap (a file may have grown since the scan).
        let now = stamps(&dir, skill, md)?;
        let total = now.iter().fold(0u64, |t, s| t.saturating_add(s.size));
        if total > SKX_MAX_SKILL_BYTES {
            return Ok(Carried {
                front,
                manifest: Manifest::Dynamic(too_large(&skill.name, total)),
            });
        }
        // A file grown past what resources/read serves whole since the
        // scan (SKX-007).
        if let Some((f, s)) = skill
            .files
            .iter()
            .zip(&now)
            .find(|(_, s)| s.size > MAX_FILE_BYTES as u64)
        {
            return Ok(Carried {
                front,
                manifest: Manifest::Dynamic(file_too_large(&skill.name, f.path, s.size)),
            });
        }
        let manifest = digests(table, skill, &now, reach)?;
        Ok(Carried { front, manifest })
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

/// The skill's directory, opened for lookups, not for reading: each stat
/// then walks only the path inside the skill, and the directory's own
/// path is walked once, here. Gone or unreadable, SKILL.md goes with it:
/// an edit SEP-2640 cannot carry.
fn open_dir(skill: &Skill) -> Result<std::fs::File, Unservable> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OFlag::O_PATH.bits() | OFlag::O_DIRECTORY.bits())
        .open(&skill.dir)
        .map_err(|e| Unservable::Changed(format!("SKILL.md could not be read: {e}")))
}

/// One file's stat under `dir`, following symlinks as the fence's
/// realpath check does.
fn stat_at(dir: &std::fs::File, path: &str) -> std::io::Result<Stamp> {
    nix::sys::stat::fstatat(dir, path, AtFlags::empty())
        .map(|s| Stamp::from(&s))
        .map_err(std::io::Error::from)
}

/// Each manifest file's stat now, in manifest order; SKILL.md's, `md`,
/// was made already.
fn stamps(dir: &std::fs::File, skill: &Skill, md: Stamp) -> Result<Vec<Stamp>, Unservable> {
    let md_at = skill.files.position(catalog::SKILL_MD);
    let mut now = Vec::with_capacity(skill.files.len());
    for (fi, f) in skill.files.iter().enumerate() {
        let stamp = if Some(fi) == md_at {
            md
        } else {
            stat_at(dir, f.path)
                .map_err(|e| Unservable::Files(format!("{:?} cannot be read now: {e}", f.path)))?
        };
        now.push(stamp);
    }
    Ok(now)
}

/// Each file's size and digest (SKX-012, SKX-014): the kept one when its
/// stat `now` shows the settled key it was hashed at, else read through
/// the fence, hashed and kept — unless `reach` is [`Reach::Kept`]. Past
/// the byte cap while hashing, the skill is `Dynamic`.
fn digests(
    table: &Table,
    skill: &Skill,
    now: &[Stamp],
    reach: Reach,
) -> Result<Manifest, Unservable> {
    let kept = |fi: usize| -> Option<Slot> {
        let t = table.lock().ok()?;
        t.digests.as_ref()?.get(fi).copied()
    };
    let mut out = Vec::with_capacity(now.len());
    let mut hashed = 0u64;
    // One read buffer for the whole manifest, made on the first miss.
    let mut buf = Vec::new();
    for (fi, (f, stamp)) in skill.files.iter().zip(now).enumerate() {
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
            return Ok(Manifest::Dynamic(too_large(&skill.name, hashed)));
        }
        // Grown past 1 MiB between its stat and its read (SKX-007).
        if size > MAX_FILE_BYTES as u64 {
            return Ok(Manifest::Dynamic(file_too_large(&skill.name, f.path, size)));
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
    Ok(Manifest::Files(out))
}
