//! RELOAD-008..RELOAD-012: `--watch` follows a root that is deleted and
//! recreated or swapped by rename (a renamed directory, a re-pointed root
//! symlink), says so while a root is missing, never watches outside the
//! roots, and still sees a symlinked skill inside its root. Each is driven
//! through MCP over stdio against the built server; the watches are
//! counted in /proc/<pid>/fdinfo of its inotify descriptor.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Longer than two debounce windows (the watcher's 300 ms, then the
/// rescan loop's 300 ms) with room for a loaded machine: a rescan a change
/// would have woken has happened by then.
const QUIET: Duration = Duration::from_millis(2000);

fn watching(root: &Path) -> Session {
    let dir = root.to_str().unwrap().to_owned();
    Session::start(
        Path::new(BIN),
        &[("SKILLS_DIR", &dir), ("SKILL_MCP_WATCH", "1")],
    )
}

/// One skill_list round trip, noting whether a `…/list_changed`
/// notification came before its reply.
fn list_noting(s: &mut Session) -> (Value, bool) {
    let id = s.send_request("tools/call", json!({"name": "skill_list", "arguments": {}}));
    let mut changed = false;
    loop {
        let v: Value = serde_json::from_str(&s.next_line()).unwrap();
        if v["method"]
            .as_str()
            .is_some_and(|m| m.ends_with("/list_changed"))
        {
            changed = true;
        }
        if v["id"] == json!(id) {
            assert_ne!(v["result"]["isError"], true, "{v}");
            return (v["result"]["structuredContent"].clone(), changed);
        }
    }
}

/// Lets any rescan already under way finish and reads past its
/// notifications, so the next `until_list_changed` counts only what
/// follows.
fn settle(s: &mut Session) -> Value {
    std::thread::sleep(QUIET);
    list_noting(s).0
}

/// Polls skill_list until a list_changed notification arrives (no SIGHUP
/// is sent); the listing then, and how long it took.
fn until_list_changed(s: &mut Session, what: &str) -> (Value, Duration) {
    let t = Instant::now();
    loop {
        let (list, changed) = list_noting(s);
        if changed {
            return (list, t.elapsed());
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "{what}: no list_changed within 15 s; skill_list says {list}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Polls skill_list until `done` holds for it.
fn until(s: &mut Session, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let t = Instant::now();
    loop {
        let (list, _) = list_noting(s);
        if done(&list) {
            return list;
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "{what}: not within 15 s; skill_list says {list}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn hup(s: &Session) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.pid() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
}

fn described(dir: &Path, name: &str, description: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(
        dir.join(name).join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\nbody\n"),
    )
    .unwrap();
}

fn description_of(list: &Value, name: &str) -> String {
    list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .and_then(|s| s["description"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The inotify watches the process holds, from the `inotify wd:` lines of
/// each inotify descriptor's fdinfo.
fn inotify_watches(pid: u32) -> usize {
    let mut n = 0;
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
    {
        let is_inotify =
            std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == "anon_inode:inotify");
        if is_inotify {
            let info = std::fs::read_to_string(format!(
                "/proc/{pid}/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .unwrap_or_default();
            n += info
                .lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count();
        }
    }
    n
}

/// RELOAD-008 and RELOAD-010: the root is deleted under a running
/// `--watch` server; without a SIGHUP, skill_list keeps the last catalog
/// and says why in `reloadRefused`; the root is recreated, the refusal
/// clears, and the next change in the new directory is seen.
#[test]
fn a_root_deleted_and_recreated_is_watched_again_and_said_missing_meanwhile() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("skills");
    skill(&root, "alpha");
    let mut s = watching(&root);
    settle(&mut s);

    std::fs::remove_dir_all(&root).unwrap();
    let list = until(&mut s, "reloadRefused after the root was deleted", |l| {
        l.get("reloadRefused").is_some()
    });
    assert_eq!(
        names(&list),
        ["alpha"],
        "the last catalog is served: {list}"
    );
    assert_eq!(list["generation"], 1, "{list}");
    assert_eq!(list["problems"], json!([]), "no problem is added: {list}");
    let why = list["reloadRefused"].as_str().unwrap();
    for part in [root.to_str().unwrap(), "RELOAD-010", "SIGHUP"] {
        assert!(why.contains(part), "reloadRefused names {part:?}: {why}");
    }

    // Recreated as it was: nothing to swap, but the refusal clears.
    skill(&root, "alpha");
    let list = until(&mut s, "reloadRefused cleared", |l| {
        l.get("reloadRefused").is_none()
    });
    assert_eq!(names(&list), ["alpha"], "{list}");
    settle(&mut s);

    skill(&root, "beta");
    let (list, took) = until_list_changed(&mut s, "a skill added to the recreated root");
    assert_eq!(names(&list), ["alpha", "beta"], "{list}");
    assert_eq!(list["generation"], 2, "{list}");
    eprintln!(
        "recreated root: change seen {} ms after it",
        took.as_millis()
    );
    s.finish();
}

/// RELOAD-008: a root missing at boot (a deploy not done yet) is served
/// with its problem, and picked up when it appears, without a SIGHUP.
#[test]
fn a_root_missing_at_boot_is_watched_once_it_appears() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("skills");
    let mut s = watching(&root);
    let boot = settle(&mut s);
    assert_eq!(names(&boot), Vec::<String>::new(), "{boot}");
    assert_eq!(boot["problems"][0]["reason"], "root-unreadable", "{boot}");

    skill(&root, "alpha");
    let (list, took) = until_list_changed(&mut s, "the root, created after boot");
    assert_eq!(names(&list), ["alpha"], "{list}");
    assert_eq!(list["problems"], json!([]), "{list}");
    eprintln!(
        "root created after boot: seen {} ms after it",
        took.as_millis()
    );
    settle(&mut s);
    skill(&root, "beta");
    let (list, _) = until_list_changed(&mut s, "a skill added to it");
    assert_eq!(names(&list), ["alpha", "beta"], "{list}");
    s.finish();
}

/// How a new directory takes the root's place.
#[derive(Debug, Clone, Copy)]
enum Swap {
    /// `mv skills skills.old; mv skills.new skills`.
    RenameAwayThenIn,
    /// `renameat2(RENAME_EXCHANGE)`: one atomic step, after which the old
    /// tree is at `skills.new`.
    Exchange,
}

/// RELOAD-009: a directory put into the root's place is served and
/// watched; the one it replaced is not.
#[rstest::rstest]
fn a_directory_put_into_the_roots_place_is_served_and_watched(
    #[values(Swap::RenameAwayThenIn, Swap::Exchange)] swap: Swap,
) {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("skills");
    let next = base.path().join("skills.new");
    let old = base.path().join("skills.old");
    skill(&root, "alpha");
    let mut s = watching(&root);
    settle(&mut s);

    skill(&next, "alpha");
    skill(&next, "beta");
    let old = match swap {
        Swap::RenameAwayThenIn => {
            std::fs::rename(&root, &old).unwrap();
            std::fs::rename(&next, &root).unwrap();
            old
        }
        Swap::Exchange => {
            use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
            renameat2(
                AT_FDCWD,
                &next,
                AT_FDCWD,
                &root,
                RenameFlags::RENAME_EXCHANGE,
            )
            .unwrap();
            next
        }
    };
    let (list, took) = until_list_changed(&mut s, "the swapped-in directory");
    assert_eq!(names(&list), ["alpha", "beta"], "{list}");
    assert!(list.get("reloadRefused").is_none(), "{list}");
    eprintln!(
        "{swap:?}: list_changed {} ms after the swap",
        took.as_millis()
    );
    let generation = settle(&mut s)["generation"].clone();

    // The replaced directory is no longer watched.
    skill(&old, "stale");
    std::thread::sleep(QUIET);
    let (list, changed) = list_noting(&mut s);
    assert!(!changed, "a write to the replaced root woke a swap: {list}");
    assert_eq!(list["generation"], generation, "{list}");

    skill(&root, "gamma");
    let (list, took) = until_list_changed(&mut s, "a skill added after the swap");
    assert_eq!(names(&list), ["alpha", "beta", "gamma"], "{list}");
    eprintln!(
        "{swap:?}: next change seen {} ms after it",
        took.as_millis()
    );
    s.finish();
}

/// RELOAD-009: a root symlink re-pointed by renaming a new link over it
/// (`ln -s releases/2 skills.tmp; mv -T skills.tmp skills`).
#[test]
fn a_root_symlink_repointed_by_rename_is_watched_where_it_points_now() {
    let base = tempfile::tempdir().unwrap();
    let (one, two) = (
        base.path().join("releases/1"),
        base.path().join("releases/2"),
    );
    let root = base.path().join("skills");
    skill(&one, "alpha");
    std::os::unix::fs::symlink(&one, &root).unwrap();
    let mut s = watching(&root);
    settle(&mut s);

    // Before the swap the symlinked root is watched where it points.
    skill(&one, "beta");
    let (list, _) = until_list_changed(&mut s, "a skill added through the root symlink");
    assert_eq!(names(&list), ["alpha", "beta"], "{list}");
    settle(&mut s);

    skill(&two, "alpha");
    skill(&two, "gamma");
    let tmp = base.path().join("skills.tmp");
    std::os::unix::fs::symlink(&two, &tmp).unwrap();
    std::fs::rename(&tmp, &root).unwrap();
    let (list, took) = until_list_changed(&mut s, "the re-pointed root symlink");
    assert_eq!(names(&list), ["alpha", "gamma"], "{list}");
    eprintln!(
        "symlink swap: list_changed {} ms after the rename",
        took.as_millis()
    );
    let generation = settle(&mut s)["generation"].clone();

    skill(&one, "stale");
    std::thread::sleep(QUIET);
    let (list, changed) = list_noting(&mut s);
    assert!(!changed, "a write to the old release woke a swap: {list}");
    assert_eq!(list["generation"], generation, "{list}");

    skill(&two, "delta");
    let (list, took) = until_list_changed(&mut s, "a skill added to the new release");
    assert_eq!(names(&list), ["alpha", "delta", "gamma"], "{list}");
    eprintln!(
        "symlink swap: next change seen {} ms after it",
        took.as_millis()
    );
    s.finish();
}

/// RELOAD-011: symlinks out of the root (to /usr, and to a sibling tree)
/// add no watch: the watches are the root's two directories and the one on
/// the directory holding the root. Deleting the sibling tree — an event in
/// that directory, and one a followed link would report — changes what a
/// rescan would say (the link's problem) but wakes none; SIGHUP does.
#[test]
fn no_watch_follows_a_symlink_out_of_a_root() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("skills");
    let outside = base.path().join("outside");
    skill(&root, "alpha");
    for i in 0..40 {
        std::fs::create_dir_all(outside.join(format!("ext/d{i}/e"))).unwrap();
    }
    std::fs::write(
        outside.join("ext/SKILL.md"),
        "---\nname: ext\ndescription: d\n---\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.join("ext"), root.join("ext")).unwrap();
    std::os::unix::fs::symlink("/usr", root.join("usr")).unwrap();
    let mut s = watching(&root);

    // skills/, skills/alpha/, and the directory holding skills/.
    let t = Instant::now();
    while inotify_watches(s.pid()) < 3 && t.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(25));
    }
    let boot = settle(&mut s);
    let watches = inotify_watches(s.pid());
    eprintln!(
        "watches with links to /usr and an 81-directory tree: {watches}; VmRSS {} KiB",
        proc_kib(s.pid(), "VmRSS")
    );
    assert_eq!(
        watches, 3,
        "one watch per directory in the root, one on its parent"
    );
    let escape = |l: &Value| {
        l["problems"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| {
                p["path"]
                    .as_str()
                    .is_some_and(|q| q.ends_with("/skills/ext"))
            })
            .map(|p| p["detail"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    assert!(escape(&boot).contains("outside"), "{boot}");

    std::fs::remove_dir_all(&outside).unwrap();
    std::thread::sleep(QUIET);
    let (list, changed) = list_noting(&mut s);
    assert!(!changed, "a change outside every root woke a swap: {list}");
    assert_eq!(list["generation"], 1, "{list}");
    assert_eq!(escape(&list), escape(&boot), "{list}");

    hup(&s);
    let list = until(&mut s, "SIGHUP rescans", |l| l["generation"] == 2);
    assert!(escape(&list).contains("could not be resolved"), "{list}");
    assert_eq!(inotify_watches(s.pid()), 3);
    s.finish();
}

/// RELOAD-012: a skill served through a symlink inside its root
/// (`tool -> .store/v1/tool`) is watched where it really is: an edit to
/// it, and re-pointing the link, are seen without SIGHUP; and without
/// --watch a SIGHUP rescans it.
#[test]
fn a_symlinked_skill_inside_the_root_is_still_seen() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("skills");
    let store = root.join(".store");
    described(&store.join("v1"), "tool", "one");
    std::os::unix::fs::symlink(".store/v1/tool", root.join("tool")).unwrap();
    let mut s = watching(&root);
    let boot = settle(&mut s);
    assert_eq!(names(&boot), ["tool"], "{boot}");
    assert_eq!(description_of(&boot, "tool"), "one");

    described(&store.join("v1"), "tool", "one, edited");
    let (list, _) = until_list_changed(&mut s, "an edit behind the symlink");
    assert_eq!(description_of(&list, "tool"), "one, edited", "{list}");
    settle(&mut s);

    described(&store.join("v2"), "tool", "two");
    std::os::unix::fs::symlink(".store/v2/tool", root.join("tool.tmp")).unwrap();
    std::fs::rename(root.join("tool.tmp"), root.join("tool")).unwrap();
    let (list, _) = until_list_changed(&mut s, "the re-pointed skill link");
    assert_eq!(description_of(&list, "tool"), "two", "{list}");
    s.finish();

    let dir = root.to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    described(&store.join("v2"), "tool", "two, edited");
    hup(&s);
    let list = until(&mut s, "SIGHUP rescans the symlinked skill", |l| {
        l["generation"] == 2
    });
    assert_eq!(description_of(&list, "tool"), "two, edited", "{list}");
    s.finish();
}

fn start(cmd: Command, env: &[(&str, String)]) -> Session {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Session::start_command(cmd, &env)
}

fn description_or_none(list: &Value, name: &str) -> Option<String> {
    list["skills"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)
        .and_then(|s| s["description"].as_str())
        .map(str::to_owned)
}

/// Polls skill_list (no SIGHUP) until `done` holds, for at most `within`.
fn until_within(
    s: &mut Session,
    within: Duration,
    done: impl Fn(&Value) -> bool,
) -> Result<Value, Value> {
    let t = Instant::now();
    loop {
        let list = s.tool("skill_list", json!({}));
        if done(&list) {
            return Ok(list);
        }
        if t.elapsed() > within {
            return Err(list);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// RELOAD-001 ("--watch watches every root recursively") under
/// RELOAD-009's re-pointed root symlink, when another root is where that
/// symlink pointed: `SKILLS_DIR=base/s:base/link` with `link -> s` (the
/// same tree reached twice, or a personal root linked into a shared one).
/// Re-pointing `link` to `t` lets go of the old directory's watches by
/// path (notify removes a recursive watch with everything under it), and
/// those were `s`'s own: from then on no change in `s` wakes a rescan —
/// and since `s` itself never changed identity, no resync ever watches it
/// again; only a SIGHUP rescans it.
///
/// Should hold: a directory still watched for another root keeps its
/// watch when one root stops pointing at it; an edit in `s` is seen.
///
/// Issue 26: found by an outside attack; it failed on the tree it was written on.
#[test]
fn repointing_one_root_leaves_another_root_at_the_old_target_watched() {
    let base = tempfile::tempdir().unwrap();
    let (s_dir, t_dir, link) = (
        base.path().join("s"),
        base.path().join("t"),
        base.path().join("link"),
    );
    described(&s_dir, "alpha", "one");
    described(&t_dir, "beta", "bee");
    std::os::unix::fs::symlink("s", &link).unwrap();
    let roots = format!("{}:{}", s_dir.display(), link.display());
    let mut s = start(
        Command::new(BIN),
        &[("SKILLS_DIR", roots), ("SKILL_MCP_WATCH", "1".to_owned())],
    );
    // Let the watcher take hold before anything moves.
    std::thread::sleep(Duration::from_millis(1500));

    let tmp = base.path().join("link.tmp");
    std::os::unix::fs::symlink("t", &tmp).unwrap();
    std::fs::rename(&tmp, &link).unwrap();
    // Each change is seen in about 0.7 s; 30 s only ends a test whose
    // change is never seen (spec README, "Timing in tests").
    until_within(&mut s, Duration::from_secs(30), |l| {
        description_or_none(l, "beta").is_some()
    })
    .expect("the re-pointed root is served (RELOAD-009)");
    std::thread::sleep(Duration::from_millis(1500));

    described(&s_dir, "alpha", "two");
    let seen = until_within(&mut s, Duration::from_secs(30), |l| {
        description_or_none(l, "alpha").as_deref() == Some("two")
    });
    assert!(
        seen.is_ok(),
        "an edit in the root {} was never seen after the other root stopped pointing at it: {}",
        s_dir.display(),
        seen.unwrap_err()
    );
    s.finish();
}
