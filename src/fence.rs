//! The path fence: which skill-relative paths may be read or run.
//!
//! README "The execution fence", second bullet: a path is checked **as a
//! string first** (plain segments only) and **then after resolution** (the
//! real path, symlinks followed, inside the skill's real directory, a regular
//! file). Both checks, always: the string check alone misses a symlink
//! planted in the bundle; the resolved check alone accepts shapes that should
//! never have been joined. The same fence guards `skill_file`, resources and
//! `skill_run` (spec FENCE-001..FENCE-006).
//!
//! [`open`] closes the gap between checking and reading: it opens the checked
//! real path without following a final symlink, without blocking on a FIFO,
//! and then asks the kernel which file the descriptor really is. Whatever was
//! checked is what is read.

use std::fmt;
use std::fs::{self, File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use crate::echo::excerpt;
use crate::limits::MAX_PATH_CHARS;

/// The string rules, each named so a refusal says which one refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRule {
    /// The path is the empty string.
    Empty,
    /// It starts with `/`.
    Absolute,
    /// A segment is `.` or `..`.
    DotSegment,
    /// Two slashes in a row, or a trailing slash.
    EmptySegment,
    /// A `\`, which some clients treat as a separator.
    Backslash,
    /// A `%`: raw paths never hold one, so a `skill://` URI is decoded
    /// exactly once and `%2e%2e` can never become `..` (spec FENCE-001).
    Percent,
    /// A NUL byte, which would end the path early in any C API.
    Nul,
    /// A segment of only whitespace, which no client shows legibly.
    Blank,
    /// Longer than [`MAX_PATH_CHARS`].
    TooLong,
}

impl PathRule {
    /// The rule as a sentence fragment for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            PathRule::Empty => "it is empty",
            PathRule::Absolute => {
                "it starts with \"/\" (paths are relative to the skill's directory)"
            }
            PathRule::DotSegment => "it has a \".\" or \"..\" segment",
            PathRule::EmptySegment => "it has an empty segment (\"//\" or a trailing \"/\")",
            PathRule::Backslash => "it contains a backslash",
            PathRule::Percent => "it contains \"%\" (percent escapes are refused)",
            PathRule::Nul => "it contains a NUL byte",
            PathRule::Blank => "it has a segment of only whitespace",
            PathRule::TooLong => "it is longer than 1024 characters",
        }
    }
}

/// Why the fence refused a path. Each message names the rule that refused,
/// and quotes no more of the path than an excerpt (HARD-005).
#[derive(Debug)]
pub(crate) enum FenceError {
    /// The string check refused the path before anything touched the disk.
    Shape { path: String, rule: PathRule },
    /// Nothing exists at the path.
    NotFound { path: String },
    /// The real path, symlinks followed, leaves the skill's real directory.
    Escape { path: String },
    /// The path resolves to something other than a regular file.
    NotRegular { path: String, kind: &'static str },
    /// The file changed between the check and the open (e.g. it was swapped
    /// for a symlink): what was checked is not what would be read.
    Changed { path: String },
    /// Any other I/O failure, with the OS's words.
    Io { path: String, error: io::Error },
}

impl fmt::Display for FenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenceError::Shape { path, rule } => write!(
                f,
                "path {} refused by the path fence (string check): {}",
                excerpt(path),
                rule.describe()
            ),
            FenceError::NotFound { path } => {
                write!(
                    f,
                    "path {} does not exist in this skill's directory",
                    excerpt(path)
                )
            }
            FenceError::Escape { path } => write!(
                f,
                "path {} refused by the path fence (resolved check): its real path, \
                 symlinks followed, is outside this skill's directory",
                excerpt(path)
            ),
            FenceError::NotRegular { path, kind } => write!(
                f,
                "path {} refused by the path fence (resolved check): it is {kind}, not a regular file",
                excerpt(path)
            ),
            FenceError::Changed { path } => write!(
                f,
                "path {} refused by the path fence: it changed between the check and the open",
                excerpt(path)
            ),
            FenceError::Io { path, error } => {
                write!(f, "path {} could not be read: {error}", excerpt(path))
            }
        }
    }
}

impl std::error::Error for FenceError {}

/// Checks one path segment (a file or directory name) against the string
/// rules. Used for whole paths by [`check_str`] and for names met while
/// scanning, so the catalog never lists a name the read tools would refuse.
pub fn check_segment(segment: &str) -> Result<(), PathRule> {
    if segment.is_empty() {
        return Err(PathRule::EmptySegment);
    }
    if segment == "." || segment == ".." {
        return Err(PathRule::DotSegment);
    }
    if segment.contains('\0') {
        return Err(PathRule::Nul);
    }
    if segment.contains('\\') {
        return Err(PathRule::Backslash);
    }
    if segment.contains('%') {
        return Err(PathRule::Percent);
    }
    if segment.chars().all(char::is_whitespace) {
        return Err(PathRule::Blank);
    }
    Ok(())
}

/// The string check (spec FENCE-001): plain segments only.
pub fn check_str(path: &str) -> Result<(), PathRule> {
    if path.is_empty() {
        return Err(PathRule::Empty);
    }
    if path.starts_with('/') {
        return Err(PathRule::Absolute);
    }
    if path.chars().count() > MAX_PATH_CHARS {
        return Err(PathRule::TooLong);
    }
    path.split('/').try_for_each(check_segment)
}

/// What the file-type check found, in words.
fn kind_of(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let ft = meta.file_type();
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a named pipe"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_block_device() || ft.is_char_device() {
        "a device"
    } else if ft.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

/// The regular-file rule, for a name's metadata or a descriptor's.
fn regular(meta: &Metadata, rel: &str) -> Result<(), FenceError> {
    if meta.file_type().is_file() {
        Ok(())
    } else {
        Err(FenceError::NotRegular {
            path: rel.to_owned(),
            kind: kind_of(meta),
        })
    }
}

/// Resolves `rel` inside `skill_dir` (which must already be a real,
/// canonical path) and checks both halves of the fence without opening
/// anything. Returns the real path and its metadata.
pub(crate) fn resolve(skill_dir: &Path, rel: &str) -> Result<(PathBuf, Metadata), FenceError> {
    let path = || rel.to_owned();
    check_str(rel).map_err(|rule| FenceError::Shape { path: path(), rule })?;
    if let Some((real, meta)) = plain(skill_dir, rel) {
        regular(&meta, rel)?;
        return Ok((real, meta));
    }
    let real = match fs::canonicalize(skill_dir.join(rel)) {
        Ok(real) => real,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // A dangling symlink is "not found" to canonicalize; say which.
            return Err(match fs::symlink_metadata(skill_dir.join(rel)) {
                Ok(_) => FenceError::Io {
                    path: path(),
                    error: io::Error::new(
                        io::ErrorKind::NotFound,
                        "a symlink whose target does not exist",
                    ),
                },
                Err(_) => FenceError::NotFound { path: path() },
            });
        }
        Err(error) => {
            return Err(FenceError::Io {
                path: path(),
                error,
            });
        }
    };
    if !real.starts_with(skill_dir) {
        return Err(FenceError::Escape { path: path() });
    }
    let meta = fs::symlink_metadata(&real).map_err(|error| FenceError::Io {
        path: path(),
        error,
    })?;
    regular(&meta, rel)?;
    Ok((real, meta))
}

/// The common case of the realpath check, without realpath: when no
/// component of `rel` is a symlink, the real path of `skill_dir/rel` is that
/// path itself, because `skill_dir` is already real and the string check
/// admits no `.` or `..` segment — so it is inside by construction. One
/// lstat per segment of `rel` replaces a readlink of every ancestor of the
/// skill, which dominated the boot scan (BENCHMARKS.md). `None` (a symlink
/// on the way, or anything that does not stat) leaves the answer to
/// canonicalize, with its errors. Whatever is checked here is verified
/// again on the opened descriptor (FENCE-005).
fn plain(skill_dir: &Path, rel: &str) -> Option<(PathBuf, Metadata)> {
    let mut at = skill_dir.to_path_buf();
    let mut last = None;
    for segment in rel.split('/') {
        at.push(segment);
        let meta = fs::symlink_metadata(&at).ok()?;
        if meta.file_type().is_symlink() {
            return None;
        }
        last = Some(meta);
    }
    last.map(|meta| (at, meta))
}

/// A file the fence opened: the descriptor, the real path it was checked
/// as, and the metadata of the descriptor itself (not of the name).
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) file: File,
    /// Read only by the fence's property test (an opened file's real
    /// path stays inside its skill).
    #[cfg_attr(not(test), expect(dead_code))]
    pub(crate) real: PathBuf,
    pub(crate) meta: Metadata,
}

/// Resolves, checks and opens `rel` inside `skill_dir`, closing the
/// time-of-check/time-of-use gap (spec FENCE-005):
///
/// * `O_NOFOLLOW`: if the checked real path became a symlink, the open fails;
/// * `O_NONBLOCK`: a FIFO swapped in never blocks the server (and is then
///   refused by the descriptor's own type);
/// * the descriptor's own metadata must be a regular file, and the kernel's
///   name for it must still be the checked real path, so an intermediate
///   directory swapped for a symlink is caught too.
pub(crate) fn open(skill_dir: &Path, rel: &str) -> Result<Opened, FenceError> {
    check_str(rel).map_err(|rule| FenceError::Shape {
        path: rel.to_owned(),
        rule,
    })?;
    if let Some(opened) = open_plain(skill_dir, rel) {
        return Ok(opened);
    }
    let (real, _) = resolve(skill_dir, rel)?;
    open_checked(real, rel)
}

/// The common case of [`open`] in one open (spec READ-012, FENCE-005; Decision in
/// spec/reads.md): `openat2` with `RESOLVE_NO_SYMLINKS` opens
/// `skill_dir/rel` only if no component of the whole path is a symlink.
/// `skill_dir` is real and `rel` passed the string check (no `.`, `..` or
/// empty segment), so such a path is its own real path and lies inside the
/// skill by construction; a regular file by the descriptor's own type is
/// then everything [`resolve`] and [`open_checked`] would have proven, and
/// by the descriptor itself, so nothing can change between check and use.
/// `None` (a symlink on the way, nothing there, not a regular file, a
/// kernel or sandbox without `openat2`) leaves the answer to the checked
/// path, with its own errors, unchanged. What is not a regular file by its
/// `lstat` is never opened, as the checked path never opens it: opening a
/// FIFO releases its writer, opening a device runs its driver.
#[cfg(target_os = "linux")]
fn open_plain(skill_dir: &Path, rel: &str) -> Option<Opened> {
    use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
    let real = skill_dir.join(rel);
    if !fs::symlink_metadata(&real).ok()?.file_type().is_file() {
        return None;
    }
    let how = OpenHow::new()
        .flags(
            OFlag::O_RDONLY
                | OFlag::O_NOFOLLOW
                | OFlag::O_NONBLOCK
                | OFlag::O_NOCTTY
                | OFlag::O_CLOEXEC,
        )
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS);
    let fd = nix::fcntl::openat2(nix::fcntl::AT_FDCWD, &real, how).ok()?;
    let file = File::from(fd);
    let meta = file.metadata().ok()?;
    meta.file_type()
        .is_file()
        .then_some(Opened { file, real, meta })
}

/// No `openat2` here: every open takes the checked path.
#[cfg(not(target_os = "linux"))]
#[cfg_attr(mutants, mutants::skip)]
fn open_plain(_skill_dir: &Path, _rel: &str) -> Option<Opened> {
    None
}

/// The open half of [`open`]: opens `real` (already resolved and checked)
/// and verifies that the descriptor is still what was checked. Separate so
/// the tests can hand it a path that changed after its check.
fn open_checked(real: PathBuf, rel: &str) -> Result<Opened, FenceError> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = || rel.to_owned();
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_flags::NOFOLLOW | libc_flags::NONBLOCK | libc_flags::NOCTTY)
        .open(&real)
        .map_err(|error| match error.raw_os_error() {
            Some(code) if code == libc_flags::ELOOP => FenceError::Changed { path: path() },
            _ if error.kind() == io::ErrorKind::NotFound => FenceError::Changed { path: path() },
            _ => FenceError::Io {
                path: path(),
                error,
            },
        })?;
    let meta = file.metadata().map_err(|error| FenceError::Io {
        path: path(),
        error,
    })?;
    regular(&meta, rel)?;
    match descriptor_path(&file) {
        Some(actual) if actual == real => {}
        Some(_) => return Err(FenceError::Changed { path: path() }),
        // No way to ask this kernel; the O_NOFOLLOW open and the descriptor's
        // type check above still hold.
        None => {}
    }
    Ok(Opened { file, real, meta })
}

/// The kernel's own name for an open descriptor.
#[cfg(target_os = "linux")]
fn descriptor_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

// Not compiled on Linux, where the mutation run is made, so cargo-mutants
// is told to leave it (`cfg(mutants)` is never set: no dependency needed).
#[cfg(target_os = "macos")]
#[cfg_attr(mutants, mutants::skip)]
fn descriptor_path(file: &File) -> Option<PathBuf> {
    let mut buf = PathBuf::new();
    nix::fcntl::fcntl(file, nix::fcntl::FcntlArg::F_GETPATH(&mut buf)).ok()?;
    Some(buf)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
#[cfg_attr(mutants, mutants::skip)]
fn descriptor_path(_file: &File) -> Option<PathBuf> {
    None
}

/// The open(2) flags and errno values the fence needs, from `nix` so no
/// `libc` dependency is added for four constants.
mod libc_flags {
    use nix::fcntl::OFlag;
    pub(crate) const NOFOLLOW: i32 = OFlag::O_NOFOLLOW.bits();
    pub(crate) const NONBLOCK: i32 = OFlag::O_NONBLOCK.bits();
    pub(crate) const NOCTTY: i32 = OFlag::O_NOCTTY.bits();
    pub(crate) const ELOOP: i32 = nix::errno::Errno::ELOOP as i32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rstest::rstest;

    #[rstest]
    #[case("", PathRule::Empty)]
    #[case("/etc/passwd", PathRule::Absolute)]
    #[case("..", PathRule::DotSegment)]
    #[case("a/../b", PathRule::DotSegment)]
    #[case("./a", PathRule::DotSegment)]
    #[case("a/.", PathRule::DotSegment)]
    #[case("a//b", PathRule::EmptySegment)]
    #[case("a/", PathRule::EmptySegment)]
    #[case("a\\b", PathRule::Backslash)]
    #[case("..\\x", PathRule::Backslash)]
    #[case("%2e%2e/x", PathRule::Percent)]
    #[case("100%", PathRule::Percent)]
    #[case("a\0b", PathRule::Nul)]
    #[case("a/ /b", PathRule::Blank)]
    fn string_check_refuses_each_shape(#[case] path: &str, #[case] rule: PathRule) {
        assert_eq!(check_str(path), Err(rule));
    }

    #[rstest]
    #[case("SKILL.md")]
    #[case("scripts/run.js")]
    #[case(".hidden/file")]
    #[case("...")]
    #[case("a b/c d.txt")]
    #[case("-leading-dash")]
    #[case("ünïcödé/名前.md")]
    fn string_check_accepts_plain_segments(#[case] path: &str) {
        assert_eq!(check_str(path), Ok(()));
    }

    fn forbidden() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["..", ".", "", "\\", "%", "\0"])
    }

    proptest! {
        /// Any path holding a forbidden shape anywhere is refused.
        #[test]
        fn any_forbidden_shape_is_refused(
            before in prop::collection::vec("[a-z]{1,4}", 0..3),
            bad in forbidden(),
            after in prop::collection::vec("[a-z]{1,4}", 0..3),
            inline in any::<bool>(),
        ) {
            let mut segs: Vec<String> = before.clone();
            if inline && (bad == "\\" || bad == "%" || bad == "\0") {
                segs.push(format!("x{bad}y"));
            } else {
                segs.push(bad.to_owned());
            }
            segs.extend(after.clone());
            let path = segs.join("/");
            prop_assert!(check_str(&path).is_err(), "accepted {:?}", path);
        }

        /// Whatever the fence opens is a regular file inside the skill,
        /// over generated trees whose symlinks (chained, relative with
        /// `..`, absolute, dangling, to directories) lead inside, outside
        /// or nowhere (spec FENCE-002, FENCE-003). The oracle does not
        /// trust the fence: every file's bytes say where it lives, so an
        /// opened file must read `in:`.
        #[test]
        fn whatever_opens_is_a_regular_file_inside(
            links in prop::collection::vec((any::<bool>(), 0usize..LINK_TARGETS.len()), 0..6),
            segs in prop::collection::vec(prop::sample::select(PATH_SEGMENTS.to_vec()), 1..4),
        ) {
            let fail = |e: io::Error| TestCaseError::fail(e.to_string());
            let base = tempfile::tempdir().map_err(fail)?;
            let base = fs::canonicalize(base.path()).map_err(fail)?;
            let skill = base.join("skill");
            for (path, bytes) in [
                ("skill/a", "in:a"),
                ("skill/d/b", "in:d/b"),
                ("skill/d/f", "in:d/f"),
                ("out/a", "out:a"),
                ("out/d/b", "out:d/b"),
                ("secret", "out:secret"),
            ] {
                let full = base.join(path);
                if let Some(parent) = full.parent() {
                    fs::create_dir_all(parent).map_err(fail)?;
                }
                fs::write(&full, bytes).map_err(fail)?;
            }
            let secret = base.join("secret");
            for (i, (in_sub, t)) in links.iter().enumerate() {
                let at = if *in_sub { skill.join("d") } else { skill.clone() };
                let target = match LINK_TARGETS[*t] {
                    "ABSOLUTE" => secret.clone(),
                    other => PathBuf::from(other),
                };
                std::os::unix::fs::symlink(&target, at.join(format!("l{i}"))).map_err(fail)?;
            }
            let path = segs.join("/");
            if let Ok(opened) = open(&skill, &path) {
                prop_assert!(opened.real.starts_with(&skill), "{path:?} opened {:?}", opened.real);
                prop_assert!(opened.meta.is_file(), "{path:?} is not a regular file");
                let mut text = String::new();
                let mut file = opened.file;
                io::Read::read_to_string(&mut file, &mut text).map_err(fail)?;
                prop_assert!(text.starts_with("in:"), "{path:?} read {text:?} (links {links:?})");
            }
        }
    }

    /// Link targets for the generated trees: inside, outside through `..`,
    /// back inside through `..`, absolute (`ABSOLUTE` becomes a path out of
    /// the skill), chains to other links, a directory, and nothing.
    const LINK_TARGETS: &[&str] = &[
        "a",
        "d",
        "d/b",
        "../out/a",
        "../out",
        "../out/d",
        "../secret",
        "../skill/a",
        "../a",
        "ABSOLUTE",
        "l0",
        "l1",
        "l2",
        "missing",
        ".",
        "..",
    ];

    /// Path segments, for paths through files, directories and links.
    const PATH_SEGMENTS: &[&str] = &["a", "b", "d", "f", "l0", "l1", "l2", "l3", "l4", "l5"];

    /// A link that loops is refused as what it is, not as a dangling
    /// link or a missing file: only "not found" from realpath is read as
    /// either of those.
    #[test]
    fn a_symlink_loop_is_refused_as_a_loop() {
        let dir = tempfile::tempdir().unwrap();
        let skill = fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink("loop", skill.join("loop")).unwrap();
        match resolve(&skill, "loop") {
            Err(FenceError::Io { error, .. }) => {
                assert_eq!(
                    error.raw_os_error(),
                    Some(nix::errno::Errno::ELOOP as i32),
                    "{error}"
                )
            }
            other => panic!("a loop was refused as {other:?}"),
        }
    }

    /// The lstat fast path answers exactly when no segment is a symlink
    /// (and everything stats), and hands canonicalize everything else. Its
    /// answer must then equal canonicalize's, or it would widen the fence.
    #[test]
    fn the_fast_path_answers_only_for_symlink_free_paths() {
        let dir = tempfile::tempdir().unwrap();
        let skill = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir(skill.join("d")).unwrap();
        fs::write(skill.join("d/f.md"), "hi").unwrap();
        std::os::unix::fs::symlink("d", skill.join("via")).unwrap();
        std::os::unix::fs::symlink("f.md", skill.join("d/link")).unwrap();

        let (real, meta) =
            plain(&skill, "d/f.md").expect("a symlink-free path takes the fast path");
        assert_eq!(real, fs::canonicalize(skill.join("d/f.md")).unwrap());
        assert!(meta.is_file());
        let (real, meta) = plain(&skill, "d").expect("a directory stats too");
        assert_eq!(real, skill.join("d"));
        assert!(meta.is_dir());

        assert!(
            plain(&skill, "via/f.md").is_none(),
            "a symlinked directory on the way"
        );
        assert!(
            plain(&skill, "d/link").is_none(),
            "a symlink as the last segment"
        );
        assert!(
            plain(&skill, "d/missing").is_none(),
            "a name that does not stat"
        );
        // Through resolve, both paths end at the same checked file.
        assert_eq!(
            resolve(&skill, "via/f.md").unwrap().0,
            resolve(&skill, "d/f.md").unwrap().0
        );
    }

    #[test]
    fn symlink_out_of_the_skill_is_refused_and_inside_is_served() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let skill = base.join("skill");
        fs::create_dir(&skill).unwrap();
        fs::write(skill.join("real.md"), "hi").unwrap();
        fs::write(base.join("outside.md"), "secret").unwrap();
        std::os::unix::fs::symlink("real.md", skill.join("inside")).unwrap();
        std::os::unix::fs::symlink("../outside.md", skill.join("out")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", skill.join("abs")).unwrap();
        assert!(open(&skill, "inside").is_ok());
        assert!(matches!(
            open(&skill, "out"),
            Err(FenceError::Escape { .. })
        ));
        assert!(matches!(
            open(&skill, "abs"),
            Err(FenceError::Escape { .. })
        ));
        assert!(matches!(
            open(&skill, "missing"),
            Err(FenceError::NotFound { .. })
        ));
        fs::create_dir(skill.join("d")).unwrap();
        assert!(matches!(
            open(&skill, "d"),
            Err(FenceError::NotRegular {
                kind: "a directory",
                ..
            })
        ));
    }

    /// The one-step open serves exactly the symlink-free regular files;
    /// everything else takes the checked path, whose answers stand: a
    /// symlink inside the skill is still served, one out of it refused.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_one_step_open_serves_only_symlink_free_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let skill = base.join("skill");
        fs::create_dir_all(skill.join("assets")).unwrap();
        fs::write(skill.join("assets/logo.png"), "in").unwrap();
        fs::write(base.join("outside.md"), "out").unwrap();
        std::os::unix::fs::symlink("assets", skill.join("via")).unwrap();
        std::os::unix::fs::symlink("logo.png", skill.join("assets/link")).unwrap();
        std::os::unix::fs::symlink("../outside.md", skill.join("out")).unwrap();
        std::os::unix::fs::symlink(&base, skill.join("up")).unwrap();

        let fast = open_plain(&skill, "assets/logo.png").expect("a plain file opens in one step");
        assert_eq!(fast.real, skill.join("assets/logo.png"));
        assert!(fast.meta.is_file());
        let mut text = String::new();
        io::Read::read_to_string(&mut &fast.file, &mut text).unwrap();
        assert_eq!(text, "in");
        assert_eq!(open(&skill, "assets/logo.png").unwrap().real, fast.real);

        for inside in ["via/logo.png", "assets/link"] {
            assert!(open_plain(&skill, inside).is_none(), "{inside}");
            let opened = open(&skill, inside).unwrap();
            assert_eq!(opened.real, skill.join("assets/logo.png"), "{inside}");
        }
        for escaping in ["out", "up/outside.md"] {
            assert!(open_plain(&skill, escaping).is_none(), "{escaping}");
            assert!(
                matches!(open(&skill, escaping), Err(FenceError::Escape { .. })),
                "{escaping}"
            );
        }
        // Not regular, or not there: the checked path answers, as before.
        assert!(open_plain(&skill, "assets").is_none());
        assert!(matches!(
            open(&skill, "assets"),
            Err(FenceError::NotRegular {
                kind: "a directory",
                ..
            })
        ));
        assert!(open_plain(&skill, "missing").is_none());
        // A FIFO is not served in one step; that it is not even opened is
        // seen from outside by tests/hostile_trees.rs (`reading_a_fifo_by_name_does_not_open_it`).
        nix::unistd::mkfifo(&skill.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(open_plain(&skill, "pipe").is_none());
        assert!(matches!(
            open(&skill, "missing"),
            Err(FenceError::NotFound { .. })
        ));
        // A skill directory reached through a symlink is no real path: the
        // one-step open declines it rather than vouch for it.
        std::os::unix::fs::symlink(&skill, base.join("alias")).unwrap();
        assert!(open_plain(&base.join("alias"), "assets/logo.png").is_none());
    }

    #[test]
    fn what_changed_after_its_check_is_refused_at_the_open() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::write(base.join("real.md"), "x").unwrap();
        // The checked real path became a symlink: O_NOFOLLOW refuses it.
        std::os::unix::fs::symlink("real.md", base.join("now-a-link")).unwrap();
        assert!(matches!(
            open_checked(base.join("now-a-link"), "f"),
            Err(FenceError::Changed { .. })
        ));
        // It vanished.
        assert!(matches!(
            open_checked(base.join("gone"), "f"),
            Err(FenceError::Changed { .. })
        ));
        // A directory on the way became a symlink: the descriptor's real
        // name is not the checked path.
        fs::create_dir(base.join("d")).unwrap();
        fs::write(base.join("d/f"), "x").unwrap();
        std::os::unix::fs::symlink("d", base.join("dlink")).unwrap();
        assert!(matches!(
            open_checked(base.join("dlink/f"), "f"),
            Err(FenceError::Changed { .. })
        ));
        // A FIFO swapped in: refused at once, never blocking.
        nix::unistd::mkfifo(
            &base.join("p"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        assert!(matches!(
            open_checked(base.join("p"), "p"),
            Err(FenceError::NotRegular {
                kind: "a named pipe",
                ..
            })
        ));
        // And the path as checked opens.
        assert!(open_checked(base.join("real.md"), "real.md").is_ok());
    }

    #[test]
    fn devices_dangling_links_and_the_length_bound() {
        assert!(matches!(
            open_checked(PathBuf::from("/dev/null"), "n"),
            Err(FenceError::NotRegular {
                kind: "a device",
                ..
            })
        ));
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink("nowhere", base.join("dangling")).unwrap();
        let e = resolve(&base, "dangling").unwrap_err();
        assert!(e.to_string().contains("target does not exist"), "{e}");
        assert!(matches!(
            resolve(&base, "missing"),
            Err(FenceError::NotFound { .. })
        ));
        let longest = "a".repeat(MAX_PATH_CHARS);
        assert_eq!(check_str(&longest), Ok(()));
        assert_eq!(check_str(&format!("{longest}b")), Err(PathRule::TooLong));
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let skill = fs::canonicalize(dir.path()).unwrap();
        nix::unistd::mkfifo(
            &skill.join("pipe"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        assert!(matches!(
            open(&skill, "pipe"),
            Err(FenceError::NotRegular {
                kind: "a named pipe",
                ..
            })
        ));
    }
}
