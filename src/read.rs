//! Bounded reads: the caps bound this process's allocation, not only the
//! answer (README "The tools": "a hosted child has a hard 256 MiB data
//! limit and a bundle may be larger than that").

use std::fs::File;
use std::io::{self, Read};

/// What a bounded read got.
#[derive(Debug)]
pub struct Capped {
    /// At most `cap` bytes.
    pub bytes: Vec<u8>,
    /// True when the file held more than `cap` bytes.
    pub truncated: bool,
    /// The file's size: its metadata length, or what was read if more
    /// (files such as those in procfs report 0).
    pub size: u64,
}

/// Reads at most `cap + 1` bytes from an opened file (spec READ-004): the
/// buffer is sized from the descriptor's own length, never beyond `cap + 1`,
/// so a 300 MiB file costs about `cap` of memory.
pub fn read_capped(file: &File, len: u64, cap: usize) -> io::Result<Capped> {
    let want = (len.min(cap as u64) as usize).saturating_add(1);
    let mut bytes = Vec::with_capacity(want);
    file.take(cap as u64 + 1).read_to_end(&mut bytes)?;
    let truncated = bytes.len() > cap;
    let read = bytes.len() as u64;
    bytes.truncate(cap);
    Ok(Capped {
        bytes,
        truncated,
        size: len.max(read),
    })
}

/// The longest prefix of `bytes` that is valid UTF-8, allowing only a
/// character cut at the very end (which a capped read can cause).
/// `Err(offset)` names the first invalid byte.
pub fn utf8_prefix(bytes: &[u8], cut: bool) -> Result<&str, usize> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) if cut && e.error_len().is_none() => {
            // Only an incomplete final character: keep what precedes it.
            std::str::from_utf8(&bytes[..e.valid_up_to()]).map_err(|e| e.valid_up_to())
        }
        Err(e) => Err(e.valid_up_to()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_capped_read_stops_at_cap_plus_one() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[b'a'; 100]).unwrap();
        let len = f.metadata().unwrap().len();
        use std::io::Seek;
        f.rewind().unwrap();
        let c = read_capped(&f, len, 10).unwrap();
        assert_eq!((c.bytes.len(), c.truncated, c.size), (10, true, 100));
        f.rewind().unwrap();
        let c = read_capped(&f, len, 100).unwrap();
        assert_eq!((c.bytes.len(), c.truncated), (100, false));
    }

    #[test]
    fn utf8_prefix_allows_only_a_final_cut() {
        let s = "aé".as_bytes();
        assert_eq!(utf8_prefix(&s[..2], true), Ok("a"));
        assert_eq!(utf8_prefix(&s[..2], false), Err(1));
        assert_eq!(utf8_prefix(b"a\xffb", true), Err(1));
    }
}
