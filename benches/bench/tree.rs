//! The synthetic skill trees: generated skills of ten files each (the
//! first holding a 1 MiB file), kept in the target directory so a second
//! run reuses them. Apart from the measurements so the shape of what is
//! measured is stated in one place.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use crate::SERVER;
use crate::rng::Rng;

/// Files in every generated skill, SKILL.md included: 10,000 skills make
/// the 100,000-file catalog `resources/list` is walked over.
const FILES_PER_SKILL: usize = 10;

const PREFIXES: &[&str] = &[
    "pdf", "docx", "brand", "webapp", "data", "api", "mcp", "art", "slides", "sheets",
];
const WORDS: &[&str] = &[
    "report", "builder", "checker", "guide", "export", "review", "format", "render",
];

fn skill_name(i: usize) -> String {
    format!(
        "{}-{}-{i:05}",
        PREFIXES[i % PREFIXES.len()],
        WORDS[(i / PREFIXES.len()) % WORDS.len()]
    )
}

/// A word only skill `i`'s description holds (not its name: that has the
/// digits, not the `ref`), so a `query` for it finds exactly that skill.
fn ref_word(i: usize) -> String {
    format!("ref{i:05}")
}

/// The word only `name`'s description holds (see `ref_word`).
pub fn description_word(name: &str) -> String {
    let digits = &name[name.len() - 5..];
    format!("ref{digits}")
}

fn skill_md(name: &str, i: usize) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "---\n\
name: {name}\n\
description: Builds, checks and exports {w} documents for the {p} workflow; use it to turn raw notes into a reviewed, formatted deliverable with a consistent house style (catalog entry {r}).\n\
when-to-use: When the user asks for a {w} in the {p} format, or to check that an existing one follows the guide in references/guide.md.\n\
license: MIT\n\
compatibility: Needs node 18 or later for the bundled scripts.\n\
allowed-tools: skill_file skill_run\n\
metadata:\n  author: bench\n  version: \"1.{i}\"\n  tags: \"{p}, {w}\"\n\
mcp-host:\n\
\x20 version: 1\n\
\x20 run:\n\
\x20   - script: scripts/noop.js\n\
\x20     interpreter: node\n\
\x20     timeout: 15\n\
\x20   - script: scripts/build.js\n\
\x20     interpreter: node\n\
\x20     env: [BENCH_API_KEY, BENCH_REGION]\n\
\x20     timeout: 120\n\
\x20 env:\n\
\x20   - name: BENCH_API_KEY\n\
\x20     secret: true\n\
\x20     description: The key the export API wants.\n\
\x20     required: true\n\
\x20   - name: BENCH_REGION\n\
\x20     description: Which region to export to.\n\
\x20 egress: [api.example.com, cdn.example.com]\n\
---\n\
# {name}\n\n",
        p = PREFIXES[i % PREFIXES.len()],
        w = WORDS[(i / PREFIXES.len()) % WORDS.len()],
        r = ref_word(i),
    );
    for section in ["Overview", "Steps", "Checks", "Output", "Troubleshooting"] {
        let _ = write!(
            body,
            "## {section}\n\n\
1. Read `references/guide.md` with skill_file before starting, and keep its rules in mind.\n\
2. Gather the inputs; when a table is needed, start from `data/sample.csv`.\n\
3. Run `scripts/build.js` with skill_run (preview first, then confirm) to produce the draft.\n\
4. Compare the draft with `assets/template.json` and fix what differs.\n\n"
        );
    }
    body
}

/// Deterministic filler text of exactly `n` bytes (ASCII, so UTF-8).
fn text(n: usize, seed: u64) -> Vec<u8> {
    const LINE: &[u8] =
        b"The quick brown fox checks every path against the fence before it reads a byte.\n";
    let mut v = Vec::with_capacity(n);
    let mut k = seed as usize;
    while v.len() < n {
        v.push(LINE[k % LINE.len()]);
        k += 1;
    }
    v
}

/// The nine bundled files besides SKILL.md: (path, contents).
pub fn bundle_files() -> Vec<(&'static str, Vec<u8>)> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    while png.len() < 4096 {
        png.push(r.next() as u8);
    }
    let mut csv = b"id,name,amount,region\n".to_vec();
    let mut row = 0;
    while csv.len() < 8 * 1024 - 40 {
        csv.extend(format!("{row},item-{row},{}.{:02},eu-west\n", row * 7, row % 100).bytes());
        row += 1;
    }
    vec![
        ("scripts/noop.js", b"process.exit(0);\n".to_vec()),
        ("scripts/build.js", text(3 * 1024, 1)),
        ("references/guide.md", text(1024, 2)),
        ("references/api.md", text(6 * 1024, 3)),
        ("references/notes.txt", text(300, 4)),
        ("assets/logo.png", png),
        ("assets/template.json", text(700, 5)),
        ("data/sample.csv", csv),
        ("LICENSE.txt", text(1100, 6)),
    ]
}

/// The 1 MiB file, in the first skill only (as `data/sample.csv`).
pub const BIG_FILE: &str = "data/sample.csv";
pub const ONE_MIB: usize = 1024 * 1024;

pub struct Tree {
    pub root: PathBuf,
    pub names: Vec<String>,
    pub files: usize,
    pub reused: bool,
}

/// Bump when the generated trees change, so a kept tree is never reused
/// with the wrong shape.
const TREE_VERSION: u32 = 2;

/// The target directory the server was built into: what the benchmark
/// keeps (trees, the original's build) lives here, so `cargo clean`
/// removes it and a second run reuses it.
pub fn target_dir() -> PathBuf {
    let release = Path::new(SERVER).parent().expect("the server's directory");
    release.parent().unwrap_or(release).to_owned()
}

fn trees_dir() -> PathBuf {
    target_dir().join("skill-mcp-bench-trees")
}

/// An empty skills directory: a server with nothing to serve, for what the
/// binary, the runtime and rmcp hold before any catalog.
pub fn empty_tree() -> PathBuf {
    let root = trees_dir().join("empty").join("skills");
    fs::create_dir_all(&root).expect("make the empty tree");
    root
}

/// The tree of `n` skills, generated unless a complete one is kept.
pub fn make_tree(n: usize, fresh: bool) -> Tree {
    let dir = trees_dir().join(format!("v{TREE_VERSION}-{n}"));
    let root = dir.join("skills");
    let marker = dir.join("complete");
    let mut names: Vec<String> = (0..n).map(skill_name).collect();
    names.sort();
    let reused = !fresh && marker.is_file();
    if !reused {
        if dir.exists() {
            fs::remove_dir_all(&dir).expect("remove an incomplete or stale tree");
        }
        let files = bundle_files();
        let big = text(ONE_MIB, 7);
        for i in 0..n {
            let name = skill_name(i);
            let s = root.join(&name);
            for sub in ["scripts", "references", "assets", "data"] {
                fs::create_dir_all(s.join(sub)).expect("mkdir in the tree");
            }
            fs::write(s.join("SKILL.md"), skill_md(&name, i)).expect("write SKILL.md");
            for (path, bytes) in &files {
                let bytes = if i == 0 && *path == BIG_FILE {
                    &big
                } else {
                    bytes
                };
                fs::write(s.join(path), bytes).expect("write a bundled file");
            }
        }
        fs::write(&marker, "").expect("mark the tree complete");
    }
    Tree {
        root,
        names,
        files: n * FILES_PER_SKILL,
        reused,
    }
}

/// The skill that holds the 1 MiB file.
pub fn big_skill() -> String {
    skill_name(0)
}
