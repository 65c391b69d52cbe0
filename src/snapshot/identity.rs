//! The catalog's identity (spec LIST-018): a digest of what the listings
//! show and page over, so every process serving the same tree with the
//! same settings derives the same one, and a cursor one of them hands out
//! is honoured by all of them (replicas behind a load balancer) and
//! refused by one serving anything else.
//!
//! SHA-256 (already in the tree for SEP-2640's digests), not std's
//! `DefaultHasher`: its algorithm is unspecified and may change between
//! builds, and replicas may run different builds of the same release.
//! Every field is written with its length (before it; after a JSON value,
//! which ends itself), so no two different sequences of fields write the
//! same bytes.

use sha2::{Digest as _, Sha256};

use super::Snapshot;
use crate::catalog::Skill;
use crate::limits::EMBEDDINGS_VAR;
use crate::problem::Problem;
use crate::shapes::SkillSummary;

/// What the digest is over, and in which form: bumped whenever that
/// changes, so processes of two builds that would disagree never agree.
const VERSION: &[u8] = b"skill-mcp catalog identity 1";

/// A catalog's identity: the first 64 bits of the digest. Two different
/// catalogs share one with a chance of about 2^-64 for any pair; the cost
/// of that is a cursor of the one honoured by the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Identity(u64);

impl std::fmt::Display for Identity {
    /// 16 lowercase hex digits: the form cursors carry.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// A SHA-256 that takes length-prefixed fields.
struct Fields(Sha256);

impl Fields {
    fn put(&mut self, bytes: &[u8]) {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    fn num(&mut self, n: u64) {
        self.0.update(n.to_le_bytes());
    }

    /// A value as its compact JSON — the very bytes a listing shows —
    /// hashed as it is written, never kept; then its length. Returns the
    /// length: the pass that sizes `skill_list`'s entries is this one.
    fn json<T: serde::Serialize>(&mut self, v: &T) -> usize {
        struct Tee<'a>(&'a mut Sha256, usize);
        impl std::io::Write for Tee<'_> {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.update(buf);
                self.1 += buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut tee = Tee(&mut self.0, 0);
        let n = serde_json::to_writer(&mut tee, v).map_or(0, |()| tee.1);
        self.num(n as u64);
        n
    }

    /// A 64-bit key of these fields.
    fn key(self) -> u64 {
        let sum = self.0.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&sum[..8]);
        u64::from_be_bytes(first)
    }
}

/// A stable 64-bit key of `parts` (a cursor's listing: its query's words
/// and limit, or the skill whose manifest it pages), the same in every
/// process and build.
pub(crate) fn key(parts: &[&[u8]]) -> u64 {
    let mut h = Fields(Sha256::new());
    h.put(b"skill-mcp listing key 1");
    for p in parts {
        h.put(p);
    }
    h.key()
}

/// The identity of a snapshot's catalog (LIST-018), taken in the one
/// pass over every `skill_list` entry and problem that also sizes them
/// for paging ([`super::pages`]): the entries are serialized once, for
/// both. It covers, in order: the answer budget (it decides where pages
/// end), the embedding model setting (it orders `query`'s results,
/// LIST-017), `skill_list`'s top-level fields but `generation` and
/// `scannedAt`, the counts of skills and problems; then for each skill
/// its `skill_list` entry exactly as served (name, description,
/// when-to-use, root, file count and bytes, what of it may run and why
/// not, egress), its frontmatter name, SKILL.md's digest (the frontmatter
/// `skills/list` carries, the body `query` ranks by) and every bundled
/// file's path and size; then every problem as `skill_list` shows it, and
/// which skills the Skills extension serves. Not covered: modification
/// times, inode numbers, when the scan ran, the generation, the process —
/// nothing a second process started from the same checkout at another
/// time would see differently — nor the bytes of bundled files other than
/// SKILL.md (no listing orders or cuts pages by them; the digest a
/// `skills/list` entry shows is read live, SKX-011).
pub(super) struct Digest(Fields);

impl Digest {
    /// Starts the digest of `snap` with what precedes its entries.
    pub(super) fn start(snap: &Snapshot) -> Digest {
        let mut h = Fields(Sha256::new());
        h.put(VERSION);
        h.num(snap.settings.budget as u64);
        let model = snap.config.var(EMBEDDINGS_VAR).unwrap_or_default();
        h.put(model.as_encoded_bytes());
        h.num(u64::from(snap.settings.model.is_some()));
        // The top-level fields but this process's own (roots, where the
        // roots and the grant came from, the grant's note or error):
        // their size moves where pages end.
        let mut header = snap.list_header();
        header.generation = Some(0);
        header.scanned_at = Some(String::new());
        h.json(&header);
        h.num(snap.catalog.skills.len() as u64);
        h.num(snap.problems.len() as u64);
        Digest(h)
    }

    /// Adds the `i`th skill with its `skill_list` entry; returns the
    /// entry's JSON size.
    pub(super) fn skill(&mut self, s: &Skill, entry: &SkillSummary) -> usize {
        let h = &mut self.0;
        let n = h.json(entry);
        h.put(s.frontmatter_name().unwrap_or("").as_bytes());
        h.num(u64::from(s.frontmatter_name().is_some()));
        h.put(&s.md_digest);
        h.num(s.files.len() as u64);
        for f in s.files.iter() {
            h.put(f.path.as_bytes());
            h.num(f.size);
        }
        n
    }

    /// Adds a problem; returns its JSON size.
    pub(super) fn problem(&mut self, p: &Problem) -> usize {
        self.0.json(p)
    }

    /// Ends with which skills the Skills extension serves.
    pub(super) fn finish(mut self, snap: &Snapshot) -> Identity {
        let served = snap.skills_view.served();
        self.0.num(served.len() as u64);
        for &i in served {
            self.0.num(i as u64);
        }
        Identity(self.0.key())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::path::{Path, PathBuf};

    use proptest::prelude::*;

    use super::super::Snapshot;
    use crate::config::Config;

    fn boot(root: &Path) -> Snapshot {
        let mut env = BTreeMap::new();
        env.insert(OsString::from("SKILLS_DIR"), root.as_os_str().to_owned());
        Snapshot::boot(Config::from_env(
            env,
            Path::new("/"),
            PathBuf::from("/nowhere"),
        ))
    }

    /// A scan numbered `generation`, its settings resolved from `config`.
    fn scan(config: Config, generation: u64) -> Snapshot {
        let settings = std::sync::Arc::new(crate::settings::Settings::resolve(&config, false));
        let offer = crate::offer::Offer::stdio(false, settings.elicit_timeout);
        Snapshot::build(config, settings, &offer, generation)
    }

    /// One skill of a generated tree: its description, body, extra files.
    type Shape = (String, String, Vec<u8>);

    fn write(root: &Path, skills: &[Shape]) {
        let _ = std::fs::remove_dir_all(root);
        for (i, (description, body, files)) in skills.iter().enumerate() {
            let dir = root.join(format!("s{i:02}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("SKILL.md"),
                format!("---\nname: s{i:02}\ndescription: {description}\n---\n{body}\n"),
            )
            .unwrap();
            for (j, size) in files.iter().enumerate() {
                std::fs::write(
                    dir.join(format!("f{j}.txt")),
                    "x".repeat(usize::from(*size)),
                )
                .unwrap();
            }
        }
    }

    /// What one edit does to a tree; `None` is no edit at all.
    #[derive(Debug, Clone)]
    enum Edit {
        None,
        /// Rewrites every file with the same bytes (new mtimes, new inodes).
        Rewrite,
        Description(usize),
        /// The body, same length, one letter changed.
        Body(usize),
        FileSize(usize),
        AddFile(usize),
        AddSkill,
        RemoveSkill(usize),
    }

    fn apply(skills: &mut Vec<Shape>, edit: &Edit) {
        let n = skills.len();
        match *edit {
            Edit::None | Edit::Rewrite => {}
            Edit::Description(i) => skills[i % n].0.push_str(" more"),
            Edit::Body(i) => {
                let b = &mut skills[i % n].1;
                let first = if b.starts_with('a') { "b" } else { "a" };
                b.replace_range(0..1, first);
            }
            Edit::FileSize(i) => match skills[i % n].2.first_mut() {
                Some(s) => *s = s.wrapping_add(1),
                None => skills[i % n].2.push(0),
            },
            Edit::AddFile(i) => skills[i % n].2.push(3),
            Edit::AddSkill => skills.push(("new".into(), "body".into(), Vec::new())),
            Edit::RemoveSkill(i) => {
                skills.remove(i % n);
            }
        }
    }

    fn shape() -> impl Strategy<Value = Shape> {
        (
            "[a-z]{1,12}( [a-z]{1,8}){0,3}",
            "[a-z]{1,40}",
            proptest::collection::vec(0u8..40, 0..3),
        )
    }

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            Just(Edit::None),
            Just(Edit::Rewrite),
            any::<usize>().prop_map(Edit::Description),
            any::<usize>().prop_map(Edit::Body),
            any::<usize>().prop_map(Edit::FileSize),
            any::<usize>().prop_map(Edit::AddFile),
            Just(Edit::AddSkill),
            any::<usize>().prop_map(Edit::RemoveSkill),
        ]
    }

    /// LIST-018: where `skill_list`'s pages end does not depend on how
    /// many rescans a process has made: a process at generation 1 and
    /// one at 10^12 hand out the same cursors and honour each other's.
    #[test]
    fn pages_end_alike_whatever_the_generation() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skills");
        let skills: Vec<Shape> = (0..60)
            .map(|i| (format!("skill number {i}"), "body".into(), vec![1]))
            .collect();
        write(&root, &skills);
        let config = |budget: &str| {
            let mut env = BTreeMap::new();
            env.insert(OsString::from("SKILLS_DIR"), root.as_os_str().to_owned());
            env.insert(
                OsString::from(crate::limits::ANSWER_BUDGET_VAR),
                budget.into(),
            );
            Config::from_env(env, Path::new("/"), PathBuf::from("/nowhere"))
        };
        // Budgets 4 bytes apart over more than one entry's size: the
        // 12 bytes a longer generation adds fall across a page's end for
        // some of them.
        for budget in (2000..2400).step_by(4) {
            let budget = budget.to_string();
            let young = scan(config(&budget), 1);
            let old = scan(config(&budget), 1_000_000_000_000);
            assert_eq!(young.identity(), old.identity());
            let mut args = crate::shapes::ListArgs::default();
            let mut seen = Vec::new();
            for turn in 0.. {
                let (this, other) = if turn % 2 == 0 {
                    (&young, &old)
                } else {
                    (&old, &young)
                };
                let page = this.list_page(&args).unwrap();
                assert_eq!(
                    page.next_cursor,
                    other.list_page(&args).unwrap().next_cursor,
                    "budget {budget}, page {turn}"
                );
                seen.extend(page.skills.iter().map(|s| s.name.clone()));
                match page.next_cursor {
                    Some(c) => args.cursor = Some(c),
                    None => break,
                }
            }
            assert_eq!(seen.len(), 60);
        }
        let young = scan(config("2000"), 1);
        // Another budget is another catalog.
        assert_ne!(young.identity(), scan(config("3000"), 1).identity());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// LIST-018: two scans of one tree path agree on the identity
        /// exactly when what the listings show is the same — rewriting
        /// the same bytes (new mtimes) keeps it, any edit a listing shows
        /// or pages by changes it.
        #[test]
        fn the_identity_is_equal_exactly_when_the_catalog_is(
            mut skills in proptest::collection::vec(shape(), 1..6),
            edit in edit(),
        ) {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("skills");
            write(&root, &skills);
            let before = boot(&root).identity();
            prop_assert_eq!(before, boot(&root).identity(), "two scans of one tree");
            apply(&mut skills, &edit);
            write(&root, &skills);
            let after = boot(&root).identity();
            let same = matches!(edit, Edit::None | Edit::Rewrite);
            prop_assert_eq!(before == after, same, "{:?}", edit);
        }
    }
}
