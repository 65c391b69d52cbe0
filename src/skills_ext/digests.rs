//! Digests (SKX-012, SKX-014, SKX-017): a file's validity key from one
//! stat, whether it is settled enough to trust on a later stat alone, a
//! kept digest's slot, and the hashing itself, through the fence, at most
//! the skill's byte cap, stopped by a cancelled request.

use std::hash::{Hash, Hasher};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::sys::stat::FileStat;
use sha2::{Digest, Sha256};

use crate::catalog::Skill;
use crate::fence;
use crate::limits::DIGEST_SETTLE_SECS;

/// One kept digest: the file's validity key when it was hashed (0: none
/// kept) and its SHA-256. 40 bytes, so 110,000 files keep 4.2 MiB.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Slot {
    /// [`validity`] of the file as hashed, with [`SETTLED`] set when its
    /// times were old enough to trust (see [`DIGEST_SETTLE_SECS`]).
    pub(super) key: u64,
    pub(super) sum: [u8; 32],
}

/// The bit of a slot's key that says the digest may be handed out on a
/// matching stat alone; without it the next use hashes again.
pub(super) const SETTLED: u64 = 1;

/// What a file's stat says about which bytes it holds: the fields of
/// its validity key (SKX-014). Taken from a path's `fstatat` (a request's
/// re-check) or from an open descriptor's `fstat` (the fence's), which
/// give the same numbers for the same file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    pub(super) size: u64,
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
pub(super) fn validity(stamp: &Stamp) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    stamp.hash(&mut h);
    (h.finish() & !SETTLED) | 2
}

/// True when the file's mtime and ctime are both at least
/// [`DIGEST_SETTLE_SECS`] before `began`, so no later write can leave the
/// same stamp (a write moves ctime to "now", which is later still).
pub(super) fn settled(stamp: &Stamp, began: SystemTime) -> bool {
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

/// One file hashed: its validity key as opened, the bytes read, their
/// SHA-256, and whether the digest may be trusted on a matching stat.
pub(super) struct Hashed {
    pub(super) key: u64,
    pub(super) size: u64,
    pub(super) sum: [u8; 32],
    pub(super) settled: bool,
}

/// Hashes one file through the fence, reading at most `cap + 1` bytes:
/// its validity key as opened (the descriptor's own fstat), the bytes
/// read, the SHA-256, and whether the digest may be trusted on a matching
/// stat later (its times are older than `began` by the settle margin).
pub(super) fn hash(
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
    use nix::fcntl::AtFlags;
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
}
