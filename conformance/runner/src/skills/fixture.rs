//! The fixture as the runner reads it: the tree a case's server serves
//! (`${WORK}/tree`, after the setup actions), its skill directories, and
//! each file's SHA-256 and size computed from its bytes here — never from
//! any server's answer or recorded golden.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// What SEP-2640 says a manifest entry carries about a file's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// `sha256:` and 64 lowercase hex digits.
    pub digest: String,
    pub size: u64,
}

/// One thing found under a directory of the fixture, without following
/// symlinks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    /// A symlink; whether what it names (followed) is a directory.
    Symlink {
        to_dir: bool,
    },
    /// A FIFO, socket or device.
    Other,
}

/// The fixture root and the facts computed so far.
pub struct Fixture {
    pub root: PathBuf,
    facts: RefCell<BTreeMap<String, Facts>>,
}

/// The SHA-256 of everything `r` yields, and how many bytes that was.
pub fn digest_of(mut r: impl Read) -> std::io::Result<Facts> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        size += n as u64;
    }
    Ok(Facts {
        digest: format!("sha256:{}", hex::encode(h.finalize())),
        size,
    })
}

/// The facts of bytes in memory (what a server sent).
pub fn digest_bytes(b: &[u8]) -> Facts {
    Facts {
        digest: format!("sha256:{}", hex::encode(Sha256::digest(b))),
        size: b.len() as u64,
    }
}

/// `a/b` joined to `c`, either side possibly empty.
pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

/// Whether `path` is `prefix` or lies below it (both `/`-separated).
pub fn under(path: &str, prefix: &str) -> bool {
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl Fixture {
    pub fn new(root: PathBuf) -> Fixture {
        Fixture {
            root,
            facts: RefCell::new(BTreeMap::new()),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        }
    }

    /// The digest and size of the file at `rel` (symlinks followed), read
    /// once per unit.
    pub fn facts(&self, rel: &str) -> Result<Facts, String> {
        if let Some(f) = self.facts.borrow().get(rel) {
            return Ok(f.clone());
        }
        let p = self.path(rel);
        let f = fs::File::open(&p)
            .and_then(digest_of)
            .map_err(|e| format!("the fixture file {rel} cannot be read: {e}"))?;
        self.facts.borrow_mut().insert(rel.to_string(), f.clone());
        Ok(f)
    }

    /// True when `rel` (below `dir`) is a file, or a symlink whose target
    /// is a file inside `dir` (R6: such a symlink may be served with its
    /// target's bytes).
    pub fn file_within(&self, dir: &str, rel: &str) -> bool {
        let (Ok(base), Ok(target)) = (
            fs::canonicalize(self.path(dir)),
            fs::canonicalize(self.path(&join(dir, rel))),
        ) else {
            return false;
        };
        target.starts_with(&base) && target.is_file()
    }

    /// Every directory of the fixture that holds an entry named
    /// `SKILL.md` (of any kind), found without following symlinked
    /// directories, sorted; the root itself is not one (SEP-2640's skill
    /// path has at least one segment).
    pub fn skill_dirs(&self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        let mut stack = vec![String::new()];
        while let Some(dir) = stack.pop() {
            for (name, kind) in self.children(&dir)? {
                let rel = join(&dir, &name);
                if name == "SKILL.md" && !dir.is_empty() {
                    out.push(dir.clone());
                }
                if kind == Kind::Dir {
                    stack.push(rel);
                }
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The entries of directory `rel`, by name, without following symlinks.
    pub fn children(&self, rel: &str) -> Result<Vec<(String, Kind)>, String> {
        let p = self.path(rel);
        let rd = fs::read_dir(&p)
            .map_err(|e| format!("the fixture directory {rel:?} cannot be read: {e}"))?;
        let mut out = Vec::new();
        for ent in rd {
            let ent = ent.map_err(|e| format!("reading the fixture directory {rel:?}: {e}"))?;
            let name = ent.file_name().to_string_lossy().into_owned();
            out.push((name.clone(), kind_of(&ent.path())));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Everything below `dir` (relative to it), depth first, by name:
    /// directories are entered, symlinks are not.
    pub fn walk(&self, dir: &str) -> Result<Vec<(String, Kind)>, String> {
        let mut out = Vec::new();
        self.walk_into(dir, "", &mut out)?;
        Ok(out)
    }

    fn walk_into(
        &self,
        base: &str,
        sub: &str,
        out: &mut Vec<(String, Kind)>,
    ) -> Result<(), String> {
        for (name, kind) in self.children(&join(base, sub))? {
            let rel = join(sub, &name);
            let descend = kind == Kind::Dir;
            out.push((rel.clone(), kind));
            if descend {
                self.walk_into(base, &rel, out)?;
            }
        }
        Ok(())
    }

    /// The files reached through a symlinked directory at `dir/link`
    /// (relative to `dir`, followed once; symlinks inside are not).
    pub fn files_through(&self, dir: &str, link: &str) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        let mut stack = vec![link.to_string()];
        while let Some(d) = stack.pop() {
            let rd = fs::read_dir(self.path(&join(dir, &d)))
                .map_err(|e| format!("the fixture directory {d:?} cannot be read: {e}"))?;
            for ent in rd {
                let ent = ent.map_err(|e| format!("reading {d:?}: {e}"))?;
                let rel = join(&d, &ent.file_name().to_string_lossy());
                match kind_of(&ent.path()) {
                    Kind::Dir => stack.push(rel),
                    Kind::File => out.push(rel),
                    _ => {}
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Whether the file or directory at `rel` exists (symlinks followed).
    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }
}

fn kind_of(p: &Path) -> Kind {
    match fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Kind::Symlink {
            to_dir: fs::metadata(p).is_ok_and(|t| t.is_dir()),
        },
        Ok(m) if m.is_dir() => Kind::Dir,
        Ok(m) if m.is_file() => Kind::File,
        _ => Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha256_of_the_bytes_in_lowercase_hex() {
        // The empty string's and "abc"'s SHA-256 (FIPS 180-2 test vectors).
        assert_eq!(
            digest_bytes(b"").digest,
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            digest_bytes(b"abc"),
            Facts {
                digest: "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
                    .into(),
                size: 3
            }
        );
    }

    #[test]
    fn a_file_s_facts_are_its_bytes_read_here_streamed_past_one_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        fs::create_dir_all(dir.path().join("a/sub")).unwrap();
        fs::write(dir.path().join("a/sub/big.bin"), &big).unwrap();
        std::os::unix::fs::symlink("sub/big.bin", dir.path().join("a/link")).unwrap();
        let fx = Fixture::new(dir.path().to_path_buf());
        let f = fx.facts("a/sub/big.bin").unwrap();
        assert_eq!(f, digest_bytes(&big));
        assert_eq!(f.size, 200_000);
        // Through a symlink: the target's bytes.
        assert_eq!(fx.facts("a/link").unwrap(), f);
        assert!(fx.facts("a/none").unwrap_err().contains("a/none"));
    }

    #[test]
    fn skill_dirs_are_every_folder_with_a_skill_md_below_the_root() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["x/y", "a", "a/n", "g/h"] {
            fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        for f in ["a/SKILL.md", "a/n/SKILL.md", "g/h/SKILL.md", "SKILL.md"] {
            fs::write(dir.path().join(f), "---\n").unwrap();
        }
        std::os::unix::fs::symlink("../a", dir.path().join("x/alias")).unwrap();
        let fx = Fixture::new(dir.path().to_path_buf());
        assert_eq!(fx.skill_dirs().unwrap(), ["a", "a/n", "g/h"]);
        let walk = fx.walk("a").unwrap();
        assert_eq!(
            walk,
            [
                ("SKILL.md".to_string(), Kind::File),
                ("n".to_string(), Kind::Dir),
                ("n/SKILL.md".to_string(), Kind::File)
            ]
        );
        assert_eq!(fx.walk("x").unwrap()[0].1, Kind::Symlink { to_dir: true });
        assert_eq!(
            fx.files_through("x", "alias").unwrap(),
            ["alias/SKILL.md", "alias/n/SKILL.md"]
        );
        assert!(under("a/b", "a") && under("a", "a") && !under("ab", "a"));
    }
}
