//! The per-unit work dir `${WORK}` (FORMAT.md, *Isolation*): the copy of
//! `tree/`, `home/` and `tmp/`, the setup actions, and cleanup.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use crate::case::{FileContent, RelPath, SetupAction, WriteContent};

pub struct WorkDir {
    dir: Option<tempfile::TempDir>,
    /// The path as created (what `${WORK}` expands to).
    pub path: PathBuf,
    /// Its real path (symlinks in the temp dir's location resolved).
    pub real: PathBuf,
    /// chmod'ed paths with their original modes, in the order first changed.
    chmods: Vec<(PathBuf, u32)>,
}

impl WorkDir {
    /// A new empty work dir with `home/`, `tmp/` and `tree/`.
    pub fn create() -> Result<WorkDir, String> {
        let dir = tempfile::Builder::new()
            .prefix("skill-mcp-conformance-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary work dir: {e}"))?;
        let path = dir.path().to_path_buf();
        let real = fs::canonicalize(&path)
            .map_err(|e| format!("cannot resolve the work dir {}: {e}", path.display()))?;
        for sub in ["home", "tmp", "tree"] {
            fs::create_dir(path.join(sub))
                .map_err(|e| format!("cannot create {}/{sub}: {e}", path.display()))?;
        }
        Ok(WorkDir {
            dir: Some(dir),
            path,
            real,
            chmods: Vec::new(),
        })
    }

    pub fn path_str(&self) -> Result<&str, String> {
        self.path
            .to_str()
            .ok_or_else(|| format!("the work dir {} is not valid UTF-8", self.path.display()))
    }

    /// Both spellings of the work dir, for normalization.
    pub fn spellings(&self) -> Vec<String> {
        let mut v = vec![self.path.to_string_lossy().into_owned()];
        let r = self.real.to_string_lossy().into_owned();
        if r != v[0] {
            v.push(r);
        }
        v
    }

    /// Copies the case's `tree/` to `${WORK}/tree`, keeping symlinks as symlinks.
    pub fn copy_tree(&self, src: &Path) -> Result<(), String> {
        match fs::symlink_metadata(src) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot read {}: {e}", src.display())),
            Ok(m) if !m.is_dir() => Err(format!("{} is not a directory", src.display())),
            Ok(_) => copy_dir(src, &self.path.join("tree")),
        }
    }

    /// Resolves `rel` under the work dir. Every existing directory on the
    /// way must stay inside `${WORK}` (a symlinked directory is followed only
    /// when it resolves inside); missing ones are created when `create`.
    /// Returns the resolved directory that holds the last component, and
    /// that component's name (None when `rel` is `${WORK}` itself).
    fn resolve(
        &self,
        rel: &RelPath,
        create_parents: bool,
        whole: bool,
    ) -> Result<(PathBuf, Option<String>), String> {
        let (dirs, last) = if whole {
            (&rel.parts[..], None)
        } else {
            match rel.parts.split_last() {
                Some((last, dirs)) => (dirs, Some(last.clone())),
                None => (&rel.parts[..], None),
            }
        };
        let mut cur = self.real.clone();
        for part in dirs {
            let next = cur.join(part);
            match fs::symlink_metadata(&next) {
                Ok(m) if m.file_type().is_symlink() => {
                    let target = fs::canonicalize(&next).map_err(|e| {
                        format!(
                            "`{}`: `{part}` is a symlink that does not resolve: {e}",
                            rel.text
                        )
                    })?;
                    if !target.starts_with(&self.real) {
                        return Err(format!(
                            "`{}`: `{part}` is a symlink leading outside ${{WORK}}; setup will not write through it",
                            rel.text
                        ));
                    }
                    if !target.is_dir() {
                        return Err(format!("`{}`: `{part}` is not a directory", rel.text));
                    }
                    cur = target;
                }
                Ok(m) if m.is_dir() => cur = next,
                Ok(_) => return Err(format!("`{}`: `{part}` is not a directory", rel.text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && create_parents => {
                    fs::create_dir(&next)
                        .map_err(|e| format!("`{}`: cannot create `{part}`: {e}", rel.text))?;
                    cur = next;
                }
                Err(e) => return Err(format!("`{}`: `{part}`: {e}", rel.text)),
            }
        }
        Ok((cur, last))
    }

    /// The full path of `rel`, parents created, refusing to act through a
    /// final symlink (the action would change what it points at).
    fn file_target(&self, rel: &RelPath) -> Result<PathBuf, String> {
        let (dir, last) = self.resolve(rel, true, false)?;
        let p = dir.join(last.unwrap_or_default());
        if let Ok(m) = fs::symlink_metadata(&p)
            && m.file_type().is_symlink()
        {
            return Err(format!(
                "`{}` is a symlink; setup will not follow it",
                rel.text
            ));
        }
        Ok(p)
    }

    /// Runs one setup action.
    pub fn apply(&mut self, action: &SetupAction) -> Result<(), String> {
        let io = |what: &str, p: &Path, e: std::io::Error| format!("{what} {}: {e}", p.display());
        match action {
            SetupAction::Mkdir(rel) => {
                self.resolve(rel, true, true)?;
            }
            SetupAction::Write { path, content } => {
                let p = self.file_target(path)?;
                let mut f = fs::File::create(&p).map_err(|e| io("cannot create", &p, e))?;
                match content {
                    WriteContent::Bytes(b) => {
                        f.write_all(b).map_err(|e| io("cannot write", &p, e))?
                    }
                    WriteContent::Repeat { text, count } => {
                        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
                        for _ in 0..*count {
                            w.write_all(text.as_bytes())
                                .map_err(|e| io("cannot write", &p, e))?;
                        }
                        w.flush().map_err(|e| io("cannot write", &p, e))?;
                    }
                }
            }
            SetupAction::Sparse { path, size } => {
                let p = self.file_target(path)?;
                let f = fs::File::create(&p).map_err(|e| io("cannot create", &p, e))?;
                f.set_len(*size).map_err(|e| io("cannot size", &p, e))?;
            }
            SetupAction::Symlink { path, target } => {
                let (dir, last) = self.resolve(path, true, false)?;
                let p = dir.join(last.unwrap_or_default());
                let target = target.replace("${WORK}", self.path_str()?);
                symlink(&target, &p).map_err(|e| io("cannot create symlink", &p, e))?;
            }
            SetupAction::Fifo(rel) => {
                let p = self.file_target(rel)?;
                nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o644))
                    .map_err(|e| format!("cannot create fifo {}: {e}", p.display()))?;
            }
            SetupAction::Chmod { path, mode } => {
                let (dir, last) = self.resolve(path, false, false)?;
                let p = dir.join(last.unwrap_or_default());
                let m = fs::symlink_metadata(&p).map_err(|e| io("cannot chmod", &p, e))?;
                if m.file_type().is_symlink() {
                    return Err(format!(
                        "`{}` is a symlink; chmod would change its target",
                        path.text
                    ));
                }
                if !self.chmods.iter().any(|(q, _)| q == &p) {
                    self.chmods
                        .push((p.clone(), m.permissions().mode() & 0o7777));
                }
                fs::set_permissions(&p, fs::Permissions::from_mode(*mode))
                    .map_err(|e| io("cannot chmod", &p, e))?;
            }
            SetupAction::Remove(rel) => {
                let (dir, last) = self.resolve(rel, false, false)?;
                let p = dir.join(last.unwrap_or_default());
                let m = fs::symlink_metadata(&p).map_err(|e| io("cannot remove", &p, e))?;
                if m.is_dir() {
                    fs::remove_dir_all(&p).map_err(|e| io("cannot remove", &p, e))?;
                } else {
                    fs::remove_file(&p).map_err(|e| io("cannot remove", &p, e))?;
                }
            }
            SetupAction::RawName { dir, name, text } => {
                let (d, _) = self.resolve(dir, true, true)?;
                let p = d.join(OsStr::from_bytes(name));
                if fs::symlink_metadata(&p).is_ok() {
                    return Err(format!("{} already exists", p.display()));
                }
                fs::write(&p, text.as_bytes()).map_err(|e| io("cannot write", &p, e))?;
            }
            SetupAction::RawDir {
                dir,
                name,
                file,
                text,
            } => {
                let (d, _) = self.resolve(dir, true, true)?;
                let sub = d.join(OsStr::from_bytes(name));
                fs::create_dir(&sub).map_err(|e| io("cannot create directory", &sub, e))?;
                let p = sub.join(file);
                fs::write(&p, text.as_bytes()).map_err(|e| io("cannot write", &p, e))?;
            }
            SetupAction::Files {
                dir,
                count,
                content,
            } => {
                let (d, _) = self.resolve(dir, true, true)?;
                for i in 0..*count {
                    let p = d.join(format!("f{i:06}"));
                    if fs::symlink_metadata(&p).is_ok() {
                        return Err(format!("{} already exists", p.display()));
                    }
                    match content {
                        FileContent::Text(text) => {
                            fs::write(&p, text.as_bytes())
                                .map_err(|e| io("cannot write", &p, e))?;
                        }
                        FileContent::Sparse(size) => {
                            let f = fs::File::create(&p).map_err(|e| io("cannot create", &p, e))?;
                            f.set_len(*size).map_err(|e| io("cannot size", &p, e))?;
                        }
                    }
                }
            }
            SetupAction::Skills { dir, count, text } => {
                let (d, _) = self.resolve(dir, true, true)?;
                for i in 0..*count {
                    let name = format!("s{i:06}");
                    let sub = d.join(&name);
                    fs::create_dir(&sub).map_err(|e| io("cannot create directory", &sub, e))?;
                    let p = sub.join("SKILL.md");
                    fs::write(&p, text.replace("{name}", &name).as_bytes())
                        .map_err(|e| io("cannot write", &p, e))?;
                }
            }
        }
        Ok(())
    }

    /// Restores chmod'ed permissions (never through a symlink) and removes
    /// the work dir. Errors are reported, not fatal.
    pub fn cleanup(mut self) -> Result<(), String> {
        self.restore_modes();
        let Some(dir) = self.dir.take() else {
            return Ok(());
        };
        let path = dir.path().to_path_buf();
        if dir.close().is_ok() {
            return Ok(());
        }
        // The server may have left unreadable or unwritable directories.
        make_removable(&path);
        fs::remove_dir_all(&path)
            .map_err(|e| format!("cannot remove the work dir {}: {e}", path.display()))
    }

    fn restore_modes(&mut self) {
        for (p, mode) in self.chmods.drain(..).rev() {
            if let Ok(m) = fs::symlink_metadata(&p)
                && !m.file_type().is_symlink()
            {
                let _ = fs::set_permissions(&p, fs::Permissions::from_mode(mode));
            }
        }
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        self.restore_modes();
        if let Some(dir) = self.dir.take() {
            let path = dir.path().to_path_buf();
            if dir.close().is_err() {
                make_removable(&path);
                let _ = fs::remove_dir_all(&path);
            }
        }
    }
}

fn make_removable(p: &Path) {
    let Ok(m) = fs::symlink_metadata(p) else {
        return;
    };
    if m.is_dir() {
        let _ = fs::set_permissions(p, fs::Permissions::from_mode(0o700));
        if let Ok(rd) = fs::read_dir(p) {
            for e in rd.flatten() {
                make_removable(&e.path());
            }
        }
    }
}

fn copy_dir(src: &Path, dst: &Path) -> Result<(), String> {
    if !dst.exists() {
        fs::create_dir(dst).map_err(|e| format!("cannot create {}: {e}", dst.display()))?;
    }
    let rd = fs::read_dir(src).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
    let mut entries: Vec<_> = rd
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot read {}: {e}", src.display()))?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let from = e.path();
        let to = dst.join(e.file_name());
        let m = fs::symlink_metadata(&from)
            .map_err(|err| format!("cannot stat {}: {err}", from.display()))?;
        let ft = m.file_type();
        if ft.is_symlink() {
            let target = fs::read_link(&from)
                .map_err(|err| format!("cannot read link {}: {err}", from.display()))?;
            symlink(&target, &to)
                .map_err(|err| format!("cannot create {}: {err}", to.display()))?;
        } else if ft.is_dir() {
            copy_dir(&from, &to)?;
            // The copy is the case's own work dir: always writable by its
            // owner, even when the suite is installed read-only (the Nix
            // store keeps cases at 555/444).
            let _ = fs::set_permissions(
                &to,
                fs::Permissions::from_mode((m.permissions().mode() & 0o7777) | 0o700),
            );
        } else if ft.is_file() {
            fs::copy(&from, &to).map_err(|err| {
                format!("cannot copy {} to {}: {err}", from.display(), to.display())
            })?;
            let _ = fs::set_permissions(
                &to,
                fs::Permissions::from_mode((m.permissions().mode() & 0o7777) | 0o600),
            );
        } else {
            return Err(format!(
                "{}: only files, directories and symlinks can be in tree/ (use a setup action for others)",
                from.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_tree_is_copied_writable() {
        let src = tempfile::tempdir().unwrap();
        fs::create_dir(src.path().join("d")).unwrap();
        fs::write(src.path().join("d/f"), "x").unwrap();
        fs::set_permissions(src.path().join("d/f"), fs::Permissions::from_mode(0o444)).unwrap();
        fs::set_permissions(src.path().join("d"), fs::Permissions::from_mode(0o555)).unwrap();
        let dst = tempfile::tempdir().unwrap();
        copy_dir(src.path(), &dst.path().join("t")).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dst.path().join("t/d")), 0o755);
        assert_eq!(mode(&dst.path().join("t/d/f")), 0o644);
        fs::set_permissions(src.path().join("d"), fs::Permissions::from_mode(0o755)).unwrap();
    }
    use std::os::unix::fs::FileTypeExt;

    fn rel(s: &str) -> RelPath {
        RelPath::parse(s, true).unwrap()
    }

    #[test]
    fn setup_actions_make_what_they_say() {
        let mut w = WorkDir::create().unwrap();
        let p = w.path.clone();
        for sub in ["home", "tmp", "tree"] {
            assert!(p.join(sub).is_dir());
        }
        w.apply(&SetupAction::Mkdir(rel("tree/a/b"))).unwrap();
        assert!(p.join("tree/a/b").is_dir());
        w.apply(&SetupAction::Write {
            path: rel("tree/x/f.txt"),
            content: WriteContent::Bytes(b"hi".to_vec()),
        })
        .unwrap();
        assert_eq!(fs::read(p.join("tree/x/f.txt")).unwrap(), b"hi");
        w.apply(&SetupAction::Write {
            path: rel("r"),
            content: WriteContent::Repeat {
                text: "ab".into(),
                count: 3,
            },
        })
        .unwrap();
        assert_eq!(fs::read(p.join("r")).unwrap(), b"ababab");
        w.apply(&SetupAction::Sparse {
            path: rel("s"),
            size: 10 << 20,
        })
        .unwrap();
        let m = fs::metadata(p.join("s")).unwrap();
        assert_eq!(m.len(), 10 << 20);
        use std::os::unix::fs::MetadataExt;
        assert!(m.blocks() < 64, "sparse file has {} blocks", m.blocks());
        w.apply(&SetupAction::Symlink {
            path: rel("tree/l"),
            target: "${WORK}/r".into(),
        })
        .unwrap();
        assert_eq!(fs::read_link(p.join("tree/l")).unwrap(), p.join("r"));
        w.apply(&SetupAction::Fifo(rel("tree/fifo"))).unwrap();
        assert!(
            fs::symlink_metadata(p.join("tree/fifo"))
                .unwrap()
                .file_type()
                .is_fifo()
        );
        w.apply(&SetupAction::RawName {
            dir: rel("tree/raw"),
            name: vec![b'a', 0xff],
            text: "z".into(),
        })
        .unwrap();
        assert_eq!(
            fs::read(p.join("tree/raw").join(OsStr::from_bytes(&[b'a', 0xff]))).unwrap(),
            b"z"
        );
        w.apply(&SetupAction::RawDir {
            dir: rel("tree"),
            name: vec![b'd', 0xfe],
            file: "SKILL.md".into(),
            text: "s".into(),
        })
        .unwrap();
        assert_eq!(
            fs::read(
                p.join("tree")
                    .join(OsStr::from_bytes(&[b'd', 0xfe]))
                    .join("SKILL.md")
            )
            .unwrap(),
            b"s"
        );
        w.apply(&SetupAction::Files {
            dir: rel("tree/many/x"),
            count: 12,
            content: FileContent::Text("q".into()),
        })
        .unwrap();
        let mut names: Vec<String> = fs::read_dir(p.join("tree/many/x"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names.len(), 12);
        assert_eq!(
            (names[0].as_str(), names[11].as_str()),
            ("f000000", "f000011")
        );
        assert_eq!(fs::read(p.join("tree/many/x/f000003")).unwrap(), b"q");
        w.apply(&SetupAction::Remove(rel("tree/a"))).unwrap();
        assert!(!p.join("tree/a").exists());
        w.apply(&SetupAction::Remove(rel("tree/l"))).unwrap();
        assert!(
            p.join("r").exists(),
            "removing a symlink must not remove its target"
        );
        assert!(w.apply(&SetupAction::Remove(rel("nope"))).is_err());
    }

    #[test]
    fn chmod_is_restored_and_dir_removed() {
        let mut w = WorkDir::create().unwrap();
        let p = w.path.clone();
        w.apply(&SetupAction::Mkdir(rel("tree/locked"))).unwrap();
        w.apply(&SetupAction::Write {
            path: rel("tree/locked/f"),
            content: WriteContent::Bytes(b"x".to_vec()),
        })
        .unwrap();
        w.apply(&SetupAction::Chmod {
            path: rel("tree/locked/f"),
            mode: 0,
        })
        .unwrap();
        w.apply(&SetupAction::Chmod {
            path: rel("tree/locked"),
            mode: 0,
        })
        .unwrap();
        assert_eq!(
            fs::symlink_metadata(p.join("tree/locked"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0
        );
        w.restore_modes();
        assert_eq!(
            fs::metadata(p.join("tree/locked"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o755
        );
        assert_eq!(
            fs::metadata(p.join("tree/locked/f"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o644
        );
        w.cleanup().unwrap();
        assert!(!p.exists());
    }

    #[test]
    fn setup_never_acts_through_symlinks_leading_out() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("victim"), "keep").unwrap();
        let mut w = WorkDir::create().unwrap();
        let out = outside.path().to_str().unwrap().to_string();
        w.apply(&SetupAction::Symlink {
            path: rel("tree/out"),
            target: out.clone(),
        })
        .unwrap();
        w.apply(&SetupAction::Symlink {
            path: rel("tree/v"),
            target: format!("{out}/victim"),
        })
        .unwrap();
        let e = w
            .apply(&SetupAction::Write {
                path: rel("tree/out/new"),
                content: WriteContent::Bytes(vec![]),
            })
            .unwrap_err();
        assert!(e.contains("outside"), "{e}");
        assert!(w.apply(&SetupAction::Mkdir(rel("tree/out/d"))).is_err());
        let e = w
            .apply(&SetupAction::Chmod {
                path: rel("tree/v"),
                mode: 0,
            })
            .unwrap_err();
        assert!(e.contains("symlink"), "{e}");
        assert!(
            w.apply(&SetupAction::Write {
                path: rel("tree/v"),
                content: WriteContent::Bytes(vec![])
            })
            .is_err()
        );
        assert!(!outside.path().join("new").exists());
        assert_eq!(
            fs::read_to_string(outside.path().join("victim")).unwrap(),
            "keep"
        );
        let md = fs::metadata(outside.path().join("victim")).unwrap();
        assert_ne!(md.permissions().mode() & 0o777, 0);
        // A symlinked dir that stays inside is fine.
        w.apply(&SetupAction::Mkdir(rel("tree/real"))).unwrap();
        w.apply(&SetupAction::Symlink {
            path: rel("tree/in"),
            target: "real".into(),
        })
        .unwrap();
        w.apply(&SetupAction::Write {
            path: rel("tree/in/f"),
            content: WriteContent::Bytes(b"1".to_vec()),
        })
        .unwrap();
        assert!(w.path.join("tree/real/f").exists());
    }

    #[test]
    fn copies_tree_with_symlinks() {
        let src = tempfile::tempdir().unwrap();
        fs::create_dir_all(src.path().join("a/b")).unwrap();
        fs::write(src.path().join("a/b/f"), "data").unwrap();
        fs::set_permissions(src.path().join("a/b/f"), fs::Permissions::from_mode(0o755)).unwrap();
        symlink("/etc/passwd", src.path().join("a/link")).unwrap();
        let w = WorkDir::create().unwrap();
        w.copy_tree(src.path()).unwrap();
        let t = w.path.join("tree");
        assert_eq!(fs::read_to_string(t.join("a/b/f")).unwrap(), "data");
        assert_eq!(
            fs::metadata(t.join("a/b/f")).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(
            fs::read_link(t.join("a/link")).unwrap(),
            PathBuf::from("/etc/passwd")
        );
        // No tree/ at all: ${WORK}/tree stays empty.
        let w2 = WorkDir::create().unwrap();
        w2.copy_tree(&src.path().join("missing")).unwrap();
        assert_eq!(fs::read_dir(w2.path.join("tree")).unwrap().count(), 0);
    }
}
