//! The scan from the outside of one call: layouts, problems, symlinks,
//! duplicates and caps on real trees.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use rstest::rstest;

use super::names::is_skill_name;
use super::*;
use crate::config::{Config, RootsFrom};
use crate::limits::MAX_DIRS_PER_SKILL;
use crate::problem::{Problem, Reason};

fn scan_of(root: &Path) -> Catalog {
    scan_root(root)
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

const OK: &str = "---\nname: {n}\ndescription: d\n---\nbody\n";

fn ok(n: &str) -> String {
    OK.replace("{n}", n)
}

#[rstest]
#[case::root_is_a_skill(&[("SKILL.md", "---\nname: r\ndescription: d\n---\n"), ("sub/SKILL.md", "S")], &[], &[])]
#[case::directory_of_skills(&[("a/SKILL.md", "A"), ("b/SKILL.md", "B")], &["a", "b"], &[])]
#[case::skills_subdirectory(&[("skills/c/SKILL.md", "C"), ("d/SKILL.md", "D")], &["c", "d"], &[])]
#[case::no_skill_md(&[("a/SKILL.md", "A"), ("empty/x.txt", "x")], &["a"], &[Reason::NoSkillMd])]
#[case::malformed(&[("bad/SKILL.md", "no frontmatter\n")], &[], &[Reason::MalformedFrontmatter])]
#[case::name_mismatch(&[("real/SKILL.md", "---\nname: other\ndescription: d\n---\n")], &["real"], &[Reason::NameMismatch])]
#[case::unusable_name(&[("bad name/SKILL.md", "X")], &[], &[Reason::UnusableName])]
#[case::unusable_path(&[("a/SKILL.md", "A"), ("a/50%.md", "x")], &["a"], &[Reason::UnusablePath])]
#[case::declaration(&[("a/SKILL.md", "---\nname: a\ndescription: d\nmcp-host:\n  version: 9\n---\n")], &["a"], &[Reason::Declaration])]
#[case::declared_script_missing(
    &[("a/SKILL.md", "---\nname: a\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: x.js\n      interpreter: node\n---\n")],
    &["a"],
    &[Reason::DeclaredScriptMissing]
)]
#[case::empty_file(&[("a/SKILL.md", "")], &[], &[Reason::MalformedFrontmatter])]
fn layouts_and_problem_kinds(
    #[case] files: &[(&str, &str)],
    #[case] served: &[&str],
    #[case] reasons: &[Reason],
) {
    // The root is named "r": a tempdir's own name starts with "." and
    // is no skill name (DISC-009).
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    fs::create_dir(&root).unwrap();
    for (rel, text) in files {
        // A one-letter text stands for a well-formed SKILL.md of that skill.
        let text = if text.len() == 1 {
            // The skill's name is the directory holding SKILL.md.
            ok(rel.rsplit('/').nth(1).unwrap_or(""))
        } else {
            text.to_string()
        };
        write(&root, rel, &text);
    }
    let c = scan_of(&root);
    let names: Vec<&str> = c.skills.iter().map(|s| s.name.as_str()).collect();
    if files.iter().any(|(rel, _)| *rel == "SKILL.md") {
        assert_eq!(
            names,
            ["r"],
            "the root is the one skill, named by its directory"
        );
    } else {
        assert_eq!(names, served);
    }
    let got: Vec<Reason> = c.problems.iter().map(|p| p.reason).collect();
    assert_eq!(got, reasons, "{:?}", c.problems);
}

/// A file symlink leading out of a skill (DISC-011): reported, and the
/// skill is still served without it. (An unreadable SKILL.md needs an
/// unprivileged user, which these tests may not be: conformance/DISC-008
/// runs the server under setpriv for it.)
#[test]
fn a_symlink_leading_out_of_a_skill_is_reported_and_the_skill_served() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    write(&root, "a/SKILL.md", &ok("a"));
    write(&root, "a/inside.txt", "x");
    write(tmp.path(), "secret.txt", "s");
    std::os::unix::fs::symlink(tmp.path().join("secret.txt"), root.join("a/leak.txt")).unwrap();
    std::os::unix::fs::symlink("inside.txt", root.join("a/alias.txt")).unwrap();
    let c = scan_of(&root);
    let names: Vec<&str> = c.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a"]);
    let files: Vec<&str> = c.skills[0].files.iter().map(|f| f.path).collect();
    assert!(!files.contains(&"leak.txt"), "{files:?}");
    assert!(files.contains(&"alias.txt"), "{files:?}");
    let got: Vec<(Reason, bool)> = c
        .problems
        .iter()
        .map(|p| (p.reason, p.path.ends_with("a/leak.txt")))
        .collect();
    assert_eq!(got, [(Reason::SymlinkEscape, true)], "{:?}", c.problems);
}

/// The walk settles a declared script it met as a plain file; every
/// other script still goes through the fence, which must give the same
/// verdict as before the shortcut (DISC-010, DISC-011).
#[test]
fn declared_scripts_get_the_fence_verdict_whichever_way_they_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    let md = "---\nname: a\ndescription: d\nmcp-host:\n  version: 1\n  run:\n".to_owned()
        + &[
            "plain.js",
            "alias.js",
            "via/x.js",
            "out.js",
            "out-dir/x.js",
            "dir.js",
            "gone.js",
        ]
        .iter()
        .map(|s| format!("    - script: {s}\n      interpreter: node\n"))
        .collect::<String>()
        + "---\n";
    write(&root, "a/SKILL.md", &md);
    write(&root, "a/plain.js", "1");
    write(&root, "a/real/x.js", "1");
    write(tmp.path(), "outside/x.js", "1");
    fs::create_dir_all(root.join("a/dir.js")).unwrap();
    let link = |to: &Path, at: &str| std::os::unix::fs::symlink(to, root.join(at)).unwrap();
    link(Path::new("plain.js"), "a/alias.js");
    link(Path::new("real"), "a/via");
    link(&tmp.path().join("outside/x.js"), "a/out.js");
    link(&tmp.path().join("outside"), "a/out-dir");
    let c = scan_of(&root);
    let missing: Vec<&str> = c.skills[0]
        .missing_scripts
        .iter()
        .map(|(s, _)| s.as_str())
        .collect();
    // plain.js, alias.js and via/x.js run; the rest are reported.
    assert_eq!(missing, ["out.js", "out-dir/x.js", "dir.js", "gone.js"]);
}

/// Two roots, one name: neither served, and one report for the name
/// (issue 41 §3), at the first folder, naming both and the fix — rename
/// one, or drop a root. Within one root the fix is only the rename; three
/// folders say "all but one".
#[test]
fn a_duplicate_name_is_one_report_naming_every_folder_and_the_fix() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let c = tempfile::tempdir().unwrap();
    for root in [&a, &b, &c] {
        write(root.path(), "twin/SKILL.md", &ok("twin"));
    }
    // In `a`, a second "solo" under skills/ (layout 3), beside its own.
    write(a.path(), "solo/SKILL.md", &ok("solo"));
    write(a.path(), "skills/solo/SKILL.md", &ok("solo"));
    let scan_roots = |roots: &[&Path]| {
        let joined: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        let mut env = BTreeMap::new();
        env.insert(
            OsString::from("SKILLS_DIR"),
            OsString::from(joined.join(":")),
        );
        scan(&Config::from_env(
            env,
            Path::new("/"),
            PathBuf::from("/nowhere"),
        ))
    };
    let real = |t: &tempfile::TempDir| fs::canonicalize(t.path()).unwrap();
    let (a, b, c) = (real(&a), real(&b), real(&c));
    let (a, b, c) = (a.as_path(), b.as_path(), c.as_path());
    let dups = |cat: &Catalog| -> Vec<Problem> {
        cat.problems
            .iter()
            .filter(|p| p.reason == Reason::DuplicateName)
            .cloned()
            .collect()
    };

    let cat = scan_roots(&[a, b]);
    assert_eq!(
        cat.skills
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        Vec::<&str>::new()
    );
    let d = dups(&cat);
    assert_eq!(d.len(), 2, "{d:#?}");
    let (ta, tb) = (a.join("twin"), b.join("twin"));
    // In the order the names were met: a/solo before a/twin.
    assert_eq!(d[1].path, ta.display().to_string());
    assert_eq!(
        d[1].detail,
        format!(
            "the skill name \"twin\" comes from 2 folders, {} and {}, so neither is served: a grant names a skill, and \
             no scan order may choose between them; rename one of them (the folder, and the name: in its SKILL.md), \
             or drop one of the roots {} and {}",
            ta.display(),
            tb.display(),
            a.display(),
            b.display()
        )
    );
    // One root: the rename alone.
    assert_eq!(
        d[0].detail,
        format!(
            "the skill name \"solo\" comes from 2 folders, {} and {}, so neither is served: a grant names a skill, and \
             no scan order may choose between them; rename one of them (the folder, and the name: in its SKILL.md)",
            a.join("solo").display(),
            a.join("skills/solo").display()
        )
    );

    let d = dups(&scan_roots(&[a, b, c]));
    assert!(
        d[1].detail.contains("comes from 3 folders")
            && d[1].detail.contains("none of them is served")
            && d[1].detail.contains("rename all but one of them")
            && d[1].detail.ends_with(&format!(
                "or drop all but one of the roots {}, {} and {}",
                a.display(),
                b.display(),
                c.display()
            )),
        "{d:#?}"
    );
}

#[test]
fn only_the_default_root_hints_at_skills_dir() {
    let missing = |from| {
        let config = Config {
            roots: vec![PathBuf::from("/definitely/missing")],
            roots_from: from,
            ..Config::from_env(BTreeMap::new(), Path::new("/"), PathBuf::from("/x"))
        };
        scan(&config).problems[0].detail.clone()
    };
    assert!(missing(RootsFrom::Default).contains("set SKILLS_DIR"));
    assert!(!missing(RootsFrom::SkillsDir).contains("set SKILLS_DIR"));
}

#[test]
fn a_skills_directory_leading_out_of_the_root_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, outside) = (tmp.path().join("r"), tmp.path().join("outside"));
    write(&outside, "stolen/SKILL.md", &ok("stolen"));
    write(&root, "mine/SKILL.md", &ok("mine"));
    std::os::unix::fs::symlink(&outside, root.join("skills")).unwrap();
    let c = scan_of(&root);
    assert_eq!(
        c.skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["mine"]
    );
    assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
    assert_eq!(c.problems[0].reason, Reason::SymlinkEscape);
    assert!(c.problems[0].path.ends_with("/r/skills"));
}

#[test]
fn a_symlink_named_like_its_target_is_no_mismatch() {
    // skills/foo -> ../.shared/foo: reached only through the link (the
    // hidden directory is not a candidate), under the same name.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    write(&root, ".shared/foo/SKILL.md", &ok("foo"));
    fs::create_dir_all(root.join("skills")).unwrap();
    std::os::unix::fs::symlink("../.shared/foo", root.join("skills/foo")).unwrap();
    let c = scan_of(&root);
    assert_eq!(
        c.skills.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["foo"]
    );
    assert!(c.problems.is_empty(), "{:?}", c.problems);
}

#[test]
fn a_bundle_over_the_directory_cap_is_cut_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    write(&root, "big/SKILL.md", &ok("big"));
    for i in 0..MAX_DIRS_PER_SKILL {
        fs::create_dir_all(root.join(format!("big/d{i:05}"))).unwrap();
    }
    let c = scan_of(&root);
    assert!(
        c.problems.is_empty(),
        "exactly the cap is fine: {:?}",
        c.problems
    );
    fs::create_dir_all(root.join("big/zz")).unwrap();
    fs::write(root.join("big/zz/late.md"), "x").unwrap();
    let c = scan_of(&root);
    assert_eq!(c.problems.len(), 1);
    assert_eq!(c.problems[0].reason, Reason::FileLimit);
    assert!(c.problems[0].detail.contains("directories"));
    assert!(!c.skills[0].files.iter().any(|f| f.path == "zz/late.md"));
}

#[test]
fn skill_names_are_kept_to_safe_characters() {
    for good in ["a", "skill-mcp-demo", "A.b_c-1", &"x".repeat(64)] {
        assert!(is_skill_name(good), "{good}");
    }
    for bad in [
        "",
        "-a",
        ".a",
        "_a",
        "a b",
        "a%",
        "é",
        &"x".repeat(65),
        "a/b",
    ] {
        assert!(!is_skill_name(bad), "{bad}");
    }
}

/// A declared script that is not in the bundle is one report at its
/// `script:` line, naming the skill's file it most likely means (issue 41
/// §3); with none near, to add the file or correct the path.
#[test]
fn a_missing_script_is_placed_and_names_the_file_it_likely_means() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    write(
        &root,
        "a/SKILL.md",
        "---\nname: a\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: x.js\n    - script: script/run.js\n      interpreter: node\n    - script: tools/other.js\n      interpreter: node\n---\n",
    );
    write(&root, "a/scripts/run.js", "1");
    let c = scan_of(&root);
    let missing: Vec<&Problem> = c
        .problems
        .iter()
        .filter(|p| p.reason == Reason::DeclaredScriptMissing)
        .collect();
    assert_eq!(missing.len(), 2, "{:?}", c.problems);
    // The index is the entry's as written: entry 0 was refused (no
    // interpreter) and is not counted out.
    assert_eq!(
        missing[0].detail,
        "\"mcp-host.run[1]\" declares \"script/run.js\", which is not a file in this skill, so it can never run: \
         did you mean \"scripts/run.js\"? change this line to script: scripts/run.js (line 8, column 15)"
    );
    assert_eq!((missing[0].line, missing[0].column), (Some(8), Some(15)));
    assert_eq!(
        missing[1].detail,
        "\"mcp-host.run[2]\" declares \"tools/other.js\", which is not a file in this skill, so it can never run: \
         add the file at \"tools/other.js\" in the skill's folder, or change this line to the path of a file that \
         is there (line 10, column 15)"
    );
    assert_eq!(
        c.skills[0].missing_scripts[0].1,
        "it is not a file in this skill"
    );
}

/// A declared script that is a symlink leading out of the skill is one
/// report, the walk's, at the symlink, saying what it costs the
/// declaration too (it was two, at one path).
#[test]
fn a_declared_script_leading_out_is_one_report() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    write(
        &root,
        "a/SKILL.md",
        "---\nname: a\ndescription: d\nmcp-host:\n  version: 1\n  run:\n    - script: leak.js\n      interpreter: node\n---\n",
    );
    write(tmp.path(), "secret.js", "s");
    std::os::unix::fs::symlink(tmp.path().join("secret.js"), root.join("a/leak.js")).unwrap();
    let c = scan_of(&root);
    assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
    assert_eq!(c.problems[0].reason, Reason::SymlinkEscape);
    assert!(
        c.problems[0].detail.ends_with(
            "; mcp-host.run declares \"leak.js\" as a script, which can never run until it is a file inside the skill"
        ),
        "{}",
        c.problems[0].detail
    );
}

/// A root that is not there names a folder beside it with a name near
/// its own; a SKILL.md given as a root names its folder; a directory
/// name that cannot be a skill's is told one that can.
#[test]
fn roots_and_folders_are_told_what_to_use_instead() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    write(&base, "skills/a/SKILL.md", &ok("a"));
    write(&base, "skills/bad name!/SKILL.md", &ok("x"));
    let at = |root: PathBuf| {
        let config = Config {
            roots: vec![root],
            roots_from: RootsFrom::SkillsDir,
            ..Config::from_env(BTreeMap::new(), Path::new("/"), PathBuf::from("/x"))
        };
        scan(&config).problems
    };
    let p = at(base.join("skils"));
    assert!(
        p[0].detail.ends_with(&format!(
            "; did you mean {}?",
            base.join("skills").display()
        )),
        "{p:?}"
    );
    let p = at(base.join("elsewhere"));
    assert!(
        p[0].detail
            .ends_with("; no such folder: correct the path, or create the folder"),
        "{p:?}"
    );
    let p = at(base.join("skills/a/SKILL.md"));
    assert!(
        p[0].detail.ends_with(&format!(
            "this root is not a directory; it is a SKILL.md: point at the folder that holds it, {}",
            base.join("skills/a").display()
        )),
        "{p:?}"
    );
    let p = at(base.join("skills"));
    assert!(
        p[0].detail.ends_with(
            "skipped: rename the folder to \"bad-name\" (and its SKILL.md's name: to match)"
        ),
        "{p:?}"
    );
}
