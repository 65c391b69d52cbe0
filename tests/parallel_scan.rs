//! DISC-017: the parallel scan's catalog is the sequential scan's — the
//! same skills in the same order with every field, and the same problems in
//! the same order — on random trees: several roots, the three layouts,
//! names two roots both contribute, broken SKILL.md files, symlinks inside
//! and leading out, nested bundles and names the read tools refuse.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use skill_mcp::catalog::{Catalog, Parallelism, scan_with};
use skill_mcp::config::Config;
use skill_mcp::problem::Reason;

/// Directory names, shared by every root so two roots often contribute one
/// name (DISC-005). "skills" is layout 3's directory; the last three are no
/// skill names (DISC-004, DISC-009).
const NAMES: &[&str] = &[
    "a", "b", "c", "d", "e", "f", "g", "h", "skills", "bad name", ".hidden", "é",
];

/// Path segments inside a bundle; "50%" and "\u{ff}" (written as a byte
/// that is not UTF-8) are names the read tools cannot address (DISC-012).
const SEGMENTS: &[&str] = &["f.md", "sub", "deep", ".h", "50%", "\u{ff}"];

/// Scripts a declaration may name: present, nested, a symlink out, absent,
/// and one that climbs out (DISC-010).
const SCRIPTS: &[&str] = &["run.js", "sub/tool.js", "link.js", "gone.js", "../up.js"];

/// What SKILL.md is.
#[derive(Debug, Clone)]
enum Md {
    Good(String),
    /// The frontmatter names another skill (DISC-002).
    OtherName,
    NoFrontmatter,
    Unclosed,
    Empty,
    NotUtf8,
    /// Absent: the directory is no skill (DISC-004).
    Missing,
    /// A directory called SKILL.md.
    Directory,
    /// A symlink to a SKILL.md inside the skill, or to one outside it.
    Link {
        inside: bool,
    },
    /// An `mcp-host:` block declaring these scripts (indices into SCRIPTS).
    Declares(Vec<usize>),
    /// An `mcp-host:` block that does not hold (an unknown version, key).
    BadBlock {
        version: bool,
    },
}

/// One bundled entry: its path (indices into SEGMENTS) and what it is.
#[derive(Debug, Clone)]
enum Kind {
    File(usize),
    LinkIn,
    LinkOut,
    LinkToDir,
    Dangling,
    Fifo,
}

#[derive(Debug, Clone)]
struct SkillDir {
    md: Md,
    files: Vec<(Vec<usize>, Kind)>,
}

/// An entry of a directory of skills.
#[derive(Debug, Clone)]
enum Top {
    Skill(SkillDir),
    /// A symlink to the entry named NAMES[i] of the same directory: the
    /// same skill reached twice, or a dangling link (DISC-006, DISC-007).
    Alias(usize),
    /// A symlink to a skill directory outside the root (DISC-006).
    Outside,
    /// A plain file (README.md): no candidate.
    Plain,
}

#[derive(Debug, Clone)]
enum Layout {
    /// The root is itself a skill, named NAMES[i] (DISC-001, DISC-003).
    Root(usize, SkillDir),
    /// A directory of skills.
    Dir(BTreeMap<usize, Top>),
    /// `<root>/skills/<name>` beside the root's own entries; `skills` is a
    /// real directory, a symlink inside the root, or one leading out.
    Sub {
        top: BTreeMap<usize, Top>,
        skills: BTreeMap<usize, Top>,
        link: u8,
    },
}

#[derive(Debug, Clone)]
struct Tree {
    roots: Vec<Layout>,
    /// The first root configured again at the end (DISC-007).
    repeat: bool,
    /// A root that does not exist, configured after the others.
    missing: bool,
}

fn md() -> impl Strategy<Value = Md> {
    prop_oneof![
        8 => "[a-z ]{0,12}".prop_map(Md::Good),
        1 => Just(Md::OtherName),
        1 => Just(Md::NoFrontmatter),
        1 => Just(Md::Unclosed),
        1 => Just(Md::Empty),
        1 => Just(Md::NotUtf8),
        1 => Just(Md::Missing),
        1 => Just(Md::Directory),
        1 => any::<bool>().prop_map(|inside| Md::Link { inside }),
        2 => prop::collection::vec(0..SCRIPTS.len(), 1..4).prop_map(Md::Declares),
        1 => any::<bool>().prop_map(|version| Md::BadBlock { version }),
    ]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        6 => (0usize..3000).prop_map(Kind::File),
        1 => Just(Kind::LinkIn),
        1 => Just(Kind::LinkOut),
        1 => Just(Kind::LinkToDir),
        1 => Just(Kind::Dangling),
        1 => Just(Kind::Fifo),
    ]
}

fn skill_dir() -> impl Strategy<Value = SkillDir> {
    (
        md(),
        prop::collection::vec(
            (prop::collection::vec(0..SEGMENTS.len(), 1..4), kind()),
            0..6,
        ),
    )
        .prop_map(|(md, files)| SkillDir { md, files })
}

fn top() -> impl Strategy<Value = Top> {
    prop_oneof![
        6 => skill_dir().prop_map(Top::Skill),
        1 => (0..NAMES.len()).prop_map(Top::Alias),
        1 => Just(Top::Outside),
        1 => Just(Top::Plain),
    ]
}

fn entries() -> impl Strategy<Value = BTreeMap<usize, Top>> {
    prop::collection::btree_map(0..NAMES.len(), top(), 1..10)
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        1 => ((0..NAMES.len()), skill_dir()).prop_map(|(n, s)| Layout::Root(n, s)),
        3 => entries().prop_map(Layout::Dir),
        2 => (entries(), entries(), 0u8..4).prop_map(|(top, skills, link)| Layout::Sub { top, skills, link }),
    ]
}

fn tree() -> impl Strategy<Value = Tree> {
    (
        prop::collection::vec(layout(), 1..4),
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(roots, repeat, missing)| Tree {
            roots,
            repeat,
            missing,
        })
}

/// A path segment as bytes: "\u{ff}" stands for the byte 0xff.
fn segment(i: usize) -> &'static OsStr {
    match SEGMENTS[i] {
        "\u{ff}" => OsStr::from_bytes(b"\xff"),
        s => OsStr::new(s),
    }
}

/// Writes `skill` at `dir` (named `name`). Errors are ignored: random paths
/// collide (a file where a directory was asked for), and whatever the tree
/// ends up holding, both scans read the same one.
fn write_skill(dir: &Path, name: &str, skill: &SkillDir, outside: &Path) {
    let _ = fs::create_dir_all(dir);
    let good = |n: &str, d: &str| format!("---\nname: {n}\ndescription: \"{d}\"\n---\nbody\n");
    let md = dir.join("SKILL.md");
    let _ = match &skill.md {
        Md::Good(d) => fs::write(&md, good(name, d)),
        Md::OtherName => fs::write(&md, good("other", "d")),
        Md::NoFrontmatter => fs::write(&md, "no frontmatter\n"),
        Md::Unclosed => fs::write(&md, "---\nname: x\n"),
        Md::Empty => fs::write(&md, ""),
        Md::NotUtf8 => fs::write(&md, b"---\nname: \xff\n---\n"),
        Md::Missing => Ok(()),
        Md::Directory => fs::create_dir(&md),
        Md::Link { inside: true } => fs::write(dir.join("real.md"), good(name, "linked"))
            .and_then(|()| symlink("real.md", &md)),
        Md::Link { inside: false } => symlink(outside.join("SKILL.md"), &md),
        Md::Declares(scripts) => {
            let run: String = scripts
                .iter()
                .map(|&i| format!("    - script: {}\n      interpreter: node\n", SCRIPTS[i]))
                .collect();
            let _ = fs::write(dir.join("run.js"), "1");
            let _ = fs::create_dir_all(dir.join("sub"));
            let _ = fs::write(dir.join("sub/tool.js"), "2");
            let _ = symlink(outside.join("up.js"), dir.join("link.js"));
            fs::write(
                &md,
                format!(
                    "---\nname: {name}\ndescription: d\nmcp-host:\n  version: 1\n  run:\n{run}---\n"
                ),
            )
        }
        Md::BadBlock { version: true } => fs::write(
            &md,
            format!("---\nname: {name}\ndescription: d\nmcp-host:\n  version: 9\n---\n"),
        ),
        Md::BadBlock { version: false } => fs::write(
            &md,
            format!("---\nname: {name}\ndescription: d\nmcp-host:\n  version: 1\n  nope: [\n---\n"),
        ),
    };
    for (segments, kind) in &skill.files {
        let mut at = dir.to_path_buf();
        for &s in segments {
            at.push(segment(s));
        }
        if let Some(parent) = at.parent() {
            let _ = fs::create_dir_all(parent);
        }
        let _ = match kind {
            // Never through what is there already: a FIFO would block.
            Kind::File(size) => fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&at)
                .and_then(|mut f| f.write_all(&vec![b'x'; *size])),
            Kind::LinkIn => symlink(dir.join("SKILL.md"), &at),
            Kind::LinkOut => symlink(outside.join("up.js"), &at),
            Kind::LinkToDir => symlink(dir, &at),
            Kind::Dangling => symlink(dir.join("nowhere"), &at),
            Kind::Fifo => nix::unistd::mkfifo(&at, nix::sys::stat::Mode::S_IRWXU)
                .map_err(std::io::Error::from),
        };
    }
}

fn write_entries(dir: &Path, entries: &BTreeMap<usize, Top>, outside: &Path) {
    let _ = fs::create_dir_all(dir);
    for (&n, entry) in entries {
        let at = dir.join(NAMES[n]);
        let _ = match entry {
            Top::Skill(skill) => {
                write_skill(&at, NAMES[n], skill, outside);
                Ok(())
            }
            Top::Alias(to) => symlink(NAMES[*to], &at),
            Top::Outside => symlink(outside.join("a"), &at),
            Top::Plain => fs::write(&at, "README\n"),
        };
    }
}

/// Lays `tree` out under `base` and returns the configured roots.
fn lay_out(base: &Path, tree: &Tree) -> Vec<PathBuf> {
    let outside = base.join("outside");
    fs::create_dir_all(outside.join("a")).unwrap();
    fs::write(outside.join("up.js"), "out").unwrap();
    let good = "---\nname: a\ndescription: d\n---\n";
    fs::write(outside.join("SKILL.md"), good).unwrap();
    fs::write(outside.join("a/SKILL.md"), good).unwrap();
    let mut roots = Vec::new();
    for (i, layout) in tree.roots.iter().enumerate() {
        let holder = base.join(format!("r{i}"));
        let root = match layout {
            Layout::Root(n, skill) => {
                let root = holder.join(NAMES[*n]);
                write_skill(&root, NAMES[*n], skill, &outside);
                root
            }
            Layout::Dir(entries) => {
                let root = holder.join("root");
                write_entries(&root, entries, &outside);
                root
            }
            Layout::Sub { top, skills, link } => {
                let root = holder.join("root");
                write_entries(&root, top, &outside);
                let sub = root.join("skills");
                let _ = fs::remove_dir_all(&sub);
                let _ = fs::remove_file(&sub);
                match link {
                    0 | 1 => write_entries(&sub, skills, &outside),
                    2 => {
                        write_entries(&root.join(".store"), skills, &outside);
                        let _ = symlink(".store", &sub);
                    }
                    _ => {
                        write_entries(&outside.join("store"), skills, &outside);
                        let _ = symlink(outside.join("store"), &sub);
                    }
                }
                root
            }
        };
        roots.push(root);
    }
    if tree.repeat {
        roots.push(roots[0].clone());
    }
    if tree.missing {
        roots.push(base.join("missing"));
    }
    roots
}

fn config(roots: Vec<PathBuf>) -> Config {
    Config {
        roots,
        ..Config::from_env(BTreeMap::new(), Path::new("/"), PathBuf::from("/nowhere"))
    }
}

/// Both scans of one tree. The parallel one runs on four threads, more
/// than this machine's cores, so skills finish out of order.
fn both(tree: &Tree) -> (Catalog, Catalog) {
    let tmp = tempfile::tempdir().unwrap();
    let config = config(lay_out(tmp.path(), tree));
    let sequential = scan_with(&config, Parallelism::Sequential);
    let parallel = scan_with(&config, Parallelism::Threads(4));
    (sequential, parallel)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn the_parallel_scan_is_the_sequential_scan(tree in tree()) {
        let (sequential, parallel) = both(&tree);
        prop_assert_eq!(parallel, sequential);
    }
}

/// The generator is not vacuous: over as many trees as the property sees,
/// the scans serve skills, refuse duplicates and meet every kind of
/// problem a discovery can report but `file-limit`, which takes 10,000
/// files a tree and is left to the unit test and conformance/DISC-013.
#[test]
fn the_random_trees_meet_every_problem() {
    let mut runner = TestRunner::deterministic();
    let mut reasons = BTreeSet::new();
    let (mut served, mut problems, mut duplicates_served_nowhere) = (0, 0, 0);
    for _ in 0..96 {
        let tree = tree().new_tree(&mut runner).unwrap().current();
        let (sequential, _) = both(&tree);
        served += sequential.skills.len();
        problems += sequential.problems.len();
        for p in &sequential.problems {
            reasons.insert(format!("{:?}", p.reason));
            if p.reason == Reason::DuplicateName {
                duplicates_served_nowhere += 1;
            }
        }
    }
    eprintln!(
        "{served} skills served, {problems} problems, {duplicates_served_nowhere} refused as duplicates, {reasons:?}"
    );
    assert!(served > 96 * 2, "only {served} skills served");
    assert!(duplicates_served_nowhere > 0);
    let want: BTreeSet<String> = [
        Reason::RootUnreadable,
        Reason::NoSkillMd,
        Reason::UnusableName,
        Reason::NameMismatch,
        Reason::DuplicateName,
        Reason::SymlinkEscape,
        Reason::MalformedFrontmatter,
        Reason::UnreadableSkillMd,
        Reason::Declaration,
        Reason::DeclaredScriptMissing,
        Reason::UnusablePath,
    ]
    .iter()
    .map(|r| format!("{r:?}"))
    .collect();
    let missed: Vec<&String> = want.difference(&reasons).collect();
    assert!(missed.is_empty(), "no tree met {missed:?}");
}
