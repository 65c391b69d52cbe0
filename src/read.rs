//! Bounded reads: the caps bound this process's allocation, not only the
//! answer (README "The tools": "a hosted child has a hard 256 MiB data
//! limit and a bundle may be larger than that"), and they bound the bytes
//! actually read, whatever the file does meanwhile (spec READ-015).

use std::fmt;
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;

/// What a bounded read got.
#[derive(Debug)]
pub(crate) struct Capped {
    /// Exactly min(size, cap) bytes: the file's first bytes, as they were
    /// while it did not change.
    pub(crate) bytes: Vec<u8>,
    /// True when the file held more than `cap` bytes.
    pub(crate) truncated: bool,
    /// The file's size when it was opened, which it still had after the read.
    pub(crate) size: u64,
}

/// The file changed while it was read (spec READ-015): its length or its
/// modification time moved, or it held fewer bytes than its length said.
/// Nothing of such a read is served, since no `size` would be true of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Changed {
    /// Its length when it was opened (what the caps were sized from).
    pub(crate) opened: u64,
    /// Its length after the read.
    pub(crate) now: u64,
}

impl fmt::Display for Changed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "it changed while it was read ({} bytes when opened, {} now), so nothing of it is served \
             (READ-015); read it again once it stops changing",
            self.opened, self.now
        )
    }
}

impl std::error::Error for Changed {}

/// Why a bounded read served nothing.
#[derive(Debug)]
pub(crate) enum ReadError {
    Io(io::Error),
    Changed(Changed),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => e.fmt(f),
            ReadError::Changed(c) => c.fmt(f),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

impl From<ReadError> for io::Error {
    /// For doors whose errors carry an `io::Error`; a change stays
    /// recognizable (`get_ref` downcasts to [`Changed`]).
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Io(e) => e,
            ReadError::Changed(c) => io::Error::other(c),
        }
    }
}

/// Reads the first min(size, `cap`) bytes of an opened file, given the
/// metadata its descriptor had when it was opened (the fence's own
/// `fstat`, spec READ-004, READ-015).
///
/// Never more: a batch sized from those lengths reads no more than it was
/// sized for, however the files grow meanwhile, and a 300 MiB file costs
/// `cap` of memory. `truncated` comes from the length, not from reading a
/// byte past the cap. One read into a buffer sized once, then one `fstat`:
/// a length, modification or change time that moved since the open, or
/// fewer bytes than the length promised, is [`Changed`], so what is served
/// is always consistent with the `size` reported beside it. The change
/// time is compared too because a rewrite can restore the modification
/// time (`touch -r`, `rsync -t`) but never the change time.
pub(crate) fn read_capped(file: &File, opened: &Metadata, cap: usize) -> Result<Capped, ReadError> {
    let len = opened.len();
    let want = len.min(cap as u64);
    let mut bytes = Vec::with_capacity(usize::try_from(want).unwrap_or(cap));
    file.take(want).read_to_end(&mut bytes)?;
    let after = file.metadata()?;
    let stamp = |m: &Metadata| {
        (
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        )
    };
    if stamp(opened) != stamp(&after) || bytes.len() as u64 != want {
        return Err(ReadError::Changed(Changed {
            opened: len,
            now: after.len(),
        }));
    }
    Ok(Capped {
        bytes,
        truncated: len > cap as u64,
        size: len,
    })
}

/// The longest prefix of `bytes` that is valid UTF-8, allowing only a
/// character cut at the very end (which a capped read can cause).
/// `Err(offset)` names the first invalid byte.
pub(crate) fn utf8_prefix(bytes: &[u8], cut: bool) -> Result<&str, usize> {
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

    fn file_of(n: usize) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![b'a'; n]).unwrap();
        use std::io::Seek;
        f.rewind().unwrap();
        f
    }

    #[test]
    fn a_capped_read_reads_at_most_the_cap() {
        let f = file_of(100);
        let c = read_capped(&f, &f.metadata().unwrap(), 10).unwrap();
        assert_eq!((c.bytes.len(), c.truncated, c.size), (10, true, 100));
        let f = file_of(100);
        let c = read_capped(&f, &f.metadata().unwrap(), 100).unwrap();
        assert_eq!((c.bytes.len(), c.truncated, c.size), (100, false, 100));
        let f = file_of(0);
        let c = read_capped(&f, &f.metadata().unwrap(), 100).unwrap();
        assert_eq!((c.bytes.len(), c.truncated, c.size), (0, false, 0));
    }

    #[test]
    fn a_file_that_is_not_the_length_it_was_opened_at_has_changed() {
        use std::io::{Seek, SeekFrom};
        // Grew after it was opened: reading on would exceed what was planned.
        let mut f = file_of(40);
        let opened = f.metadata().unwrap();
        f.seek(SeekFrom::End(0)).unwrap();
        f.write_all(&[b'b'; 60]).unwrap();
        f.rewind().unwrap();
        let e = read_capped(&f, &opened, 1000).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::Changed(Changed {
                    opened: 40,
                    now: 100
                })
            ),
            "{e:?}"
        );
        // Shrank: fewer bytes than the size a reply would state.
        let f = file_of(400);
        let opened = f.metadata().unwrap();
        f.set_len(100).unwrap();
        let e = read_capped(&f, &opened, 1000).unwrap_err();
        assert!(
            matches!(
                e,
                ReadError::Changed(Changed {
                    opened: 400,
                    now: 100
                })
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("READ-015"), "{e}");
        let io: io::Error = e.into();
        assert!(io.get_ref().is_some_and(|e| e.is::<Changed>()));
    }

    #[test]
    fn utf8_prefix_allows_only_a_final_cut() {
        let s = "aé".as_bytes();
        assert_eq!(utf8_prefix(&s[..2], true), Ok("a"));
        assert_eq!(utf8_prefix(&s[..2], false), Err(1));
        assert_eq!(utf8_prefix(b"a\xffb", true), Err(1));
    }
}
