//! A skill's manifest, held compactly (DISC-015): what the walk found,
//! sorted by path, in one buffer a skill.

/// One bundled file: its skill-relative path and size in bytes, borrowed
/// from its skill's [`Files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileEntry<'a> {
    pub(crate) path: &'a str,
    pub(crate) size: u64,
}

/// A skill's manifest, held compactly: every path in one shared buffer,
/// cut by end offsets, beside the sizes. A skill may bundle 10,000 files,
/// and 10,000 skills are served at once, so one owned string a file (its
/// allocation and its header) would be most of the catalog's memory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Files {
    /// Every path, one after another, sorted by path bytes.
    paths: Box<str>,
    /// Where each path ends in `paths`.
    ends: Box<[u32]>,
    sizes: Box<[u64]>,
}

impl Files {
    /// The manifest of `(path, size)` pairs, sorted here by path bytes. No
    /// skill's paths come near 4 GiB (MAX_FILES_PER_SKILL files of at most
    /// a path's length each), so the offsets fit `u32`.
    pub(crate) fn new(mut files: Vec<(String, u64)>) -> Files {
        files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut paths = String::with_capacity(files.iter().map(|f| f.0.len()).sum());
        let mut ends = Vec::with_capacity(files.len());
        let mut sizes = Vec::with_capacity(files.len());
        for (path, size) in files {
            paths.push_str(&path);
            ends.push(u32::try_from(paths.len()).unwrap_or(u32::MAX));
            sizes.push(size);
        }
        Files {
            paths: paths.into_boxed_str(),
            ends: ends.into_boxed_slice(),
            sizes: sizes.into_boxed_slice(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The `i`th file in path order.
    pub(crate) fn get(&self, i: usize) -> Option<FileEntry<'_>> {
        (i < self.len()).then(|| self.entry(i))
    }

    /// The `i`th file, for `i` below `len()`.
    fn entry(&self, i: usize) -> FileEntry<'_> {
        let end = self.ends.get(i).map_or(0, |&e| e as usize);
        let start = match i {
            0 => 0,
            _ => self.ends.get(i - 1).map_or(0, |&e| e as usize),
        };
        FileEntry {
            path: self.paths.get(start..end).unwrap_or(""),
            size: self.sizes.get(i).copied().unwrap_or(0),
        }
    }

    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = FileEntry<'_>> + Clone + '_ {
        (0..self.len()).map(move |i| self.entry(i))
    }

    /// The position of `path`, found by bisection (the paths are sorted).
    pub(crate) fn position(&self, path: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.entry(mid).path.as_bytes().cmp(path.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }
}
