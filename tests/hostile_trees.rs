//! Hardening: hostile trees, generated at test time (spec HARD-001). Each
//! boots in bounded time, reports what it refuses, and serves the good
//! skill beside it. Times are printed for the note.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::fs::OpenOptions;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BOOT_BOUND: Duration = Duration::from_secs(20);

fn list_of(root: &Path) -> (Value, Duration) {
    let t = Instant::now();
    let dir = root.to_str().unwrap().to_owned();
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &dir)]);
    let list = s.tool("skill_list", json!({}));
    let took = t.elapsed();
    s.finish();
    (list, took)
}

fn reasons(list: &Value) -> Vec<String> {
    list["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["reason"].as_str().unwrap().to_owned())
        .collect()
}

fn assert_good_served(list: &Value) {
    assert!(
        names(list).contains(&"good".to_owned()),
        "the good skill was not served: {list}"
    );
}

#[test]
fn a_hundred_thousand_files_in_one_skill() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "good");
    skill(root.path(), "huge");
    for d in 0..100 {
        let dir = root.path().join(format!("huge/d{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..1000 {
            std::fs::write(dir.join(format!("f{f:04}")), b"").unwrap();
        }
    }
    let (list, took) = list_of(root.path());
    eprintln!(
        "100,000 files: boot + skill_list in {} ms",
        took.as_millis()
    );
    assert!(took < BOOT_BOUND);
    assert_good_served(&list);
    assert!(reasons(&list).contains(&"file-limit".to_owned()));
    let huge = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "huge")
        .unwrap();
    assert_eq!(huge["files"], 10_000);
}

#[test]
fn a_thousand_deep_nesting() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "good");
    skill(root.path(), "deep");
    let mut p = root.path().join("deep");
    for _ in 0..1000 {
        p = p.join("d");
    }
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("bottom.md"), "x").unwrap();
    let (list, took) = list_of(root.path());
    eprintln!(
        "1,000-deep nesting: boot + skill_list in {} ms",
        took.as_millis()
    );
    assert!(took < BOOT_BOUND);
    assert_good_served(&list);
    assert!(
        list["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["reason"] == "unusable-path"
                && p["detail"].as_str().unwrap().contains("1024")),
        "{list}"
    );
}

#[test]
fn symlink_loops_self_links_and_a_link_to_root() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "good");
    skill(root.path(), "loops");
    let l = root.path().join("loops");
    std::os::unix::fs::symlink("self", l.join("self")).unwrap();
    std::os::unix::fs::symlink("b", l.join("a")).unwrap();
    std::os::unix::fs::symlink("a", l.join("b")).unwrap();
    std::os::unix::fs::symlink(".", l.join("dot")).unwrap();
    std::os::unix::fs::symlink("..", l.join("up")).unwrap();
    std::os::unix::fs::symlink("/", root.path().join("rootlink")).unwrap();
    std::os::unix::fs::symlink("loop2", root.path().join("loop1")).unwrap();
    std::os::unix::fs::symlink("loop1", root.path().join("loop2")).unwrap();
    let (list, took) = list_of(root.path());
    eprintln!(
        "symlink loops: boot + skill_list in {} ms",
        took.as_millis()
    );
    assert!(took < BOOT_BOUND);
    assert_good_served(&list);
    let ps = list["problems"].as_array().unwrap();
    let has = |path_end: &str, reason: &str| {
        ps.iter()
            .any(|p| p["path"].as_str().unwrap().ends_with(path_end) && p["reason"] == reason)
    };
    assert!(has("/rootlink", "symlink-escape"), "{list}");
    assert!(has("/loop1", "symlink-escape"), "{list}");
    assert!(has("/loops/self", "unusable-path"), "{list}");
    assert!(has("/loops/a", "unusable-path"), "{list}");
    assert!(has("/loops/up", "symlink-escape"), "{list}");
    let loops = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "loops")
        .unwrap();
    assert_eq!(loops["files"], 1, "only SKILL.md is listed: {loops}");
}

#[test]
fn hostile_names() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "good");
    for name in [
        "new\nline",
        "100%",
        "back\\slash",
        "-dash",
        "Café",
        "Cafe\u{301}",
        "UPPER",
        "upper",
    ] {
        let d = root.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("SKILL.md"), "---\ndescription: d\n---\nb\n").unwrap();
    }
    let raw = root
        .path()
        .join(std::ffi::OsStr::from_bytes(b"bad\xffname"));
    std::fs::create_dir_all(&raw).unwrap();
    std::fs::write(raw.join("SKILL.md"), "---\ndescription: d\n---\nb\n").unwrap();
    let f = root.path().join("good");
    for name in ["new\nline.md", "100%.md", "back\\slash.md", "-dash.md"] {
        std::fs::write(f.join(name), "x").unwrap();
    }
    std::fs::write(f.join(std::ffi::OsStr::from_bytes(b"bad\xff.md")), "x").unwrap();
    let (list, took) = list_of(root.path());
    eprintln!(
        "hostile names: boot + skill_list in {} ms",
        took.as_millis()
    );
    assert!(took < BOOT_BOUND);
    let mut served = names(&list);
    served.sort();
    assert_eq!(served, ["UPPER", "good", "upper"], "{list}");
    let unusable = list["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["reason"] == "unusable-name")
        .count();
    assert_eq!(unusable, 7, "{list}");
    let good = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "good")
        .unwrap();
    // SKILL.md, the newline name and the leading dash are addressable; %,
    // backslash and the non-UTF-8 name are reported.
    assert_eq!(good["files"], 3, "{good}");
}

#[test]
fn hostile_skill_md_and_a_skills_file() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "good");
    std::fs::create_dir_all(root.path().join("fifo")).unwrap();
    nix::unistd::mkfifo(
        &root.path().join("fifo/SKILL.md"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    std::fs::create_dir_all(root.path().join("dir/SKILL.md")).unwrap();
    std::fs::create_dir_all(root.path().join("sock")).unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(root.path().join("sock/SKILL.md")).unwrap();
    std::fs::create_dir_all(root.path().join("sparse")).unwrap();
    let big = std::fs::File::create(root.path().join("sparse/SKILL.md")).unwrap();
    big.set_len(1 << 30).unwrap();
    std::fs::write(
        root.path().join("skills"),
        "a file where the skills/ layout would be",
    )
    .unwrap();
    let (list, took) = list_of(root.path());
    eprintln!(
        "hostile SKILL.md (FIFO, dir, socket, 1 GiB sparse): boot + skill_list in {} ms",
        took.as_millis()
    );
    assert!(took < BOOT_BOUND);
    assert_good_served(&list);
    let ps = list["problems"].as_array().unwrap();
    for (dir, reason) in [
        ("fifo", "unreadable-skill-md"),
        ("dir", "unreadable-skill-md"),
        ("sock", "unreadable-skill-md"),
        ("sparse", "malformed-frontmatter"),
    ] {
        assert!(
            ps.iter().any(
                |p| p["path"].as_str().unwrap().contains(&format!("/{dir}/"))
                    && p["reason"] == reason
            ),
            "{dir}: {list}"
        );
    }
    // A file named `skills` is no layout-3 directory and no skill candidate
    // (only directories are, DISC-001): nothing is refused, so nothing is
    // reported for it, and the four above are the only problems.
    assert_eq!(ps.len(), 4, "{list}");
    assert!(
        !ps.iter()
            .any(|p| p["path"].as_str().unwrap().ends_with("/skills")),
        "{list}"
    );
}

#[test]
fn a_root_that_is_a_file_and_a_missing_root() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "good");
    std::fs::write(root.path().join("file-root"), "x").unwrap();
    let roots = format!(
        "{}:{}:{}",
        root.path().join("file-root").display(),
        root.path().join("nope").display(),
        root.path().display()
    );
    let mut s = Session::start(Path::new(BIN), &[("SKILLS_DIR", &roots)]);
    let list = s.tool("skill_list", json!({}));
    assert_good_served(&list);
    assert_eq!(
        reasons(&list)
            .iter()
            .filter(|r| *r == "root-unreadable")
            .count(),
        2,
        "{list}"
    );
    s.finish();
}

/// The fence's one-step open (src/fence.rs `open_plain`, spec READ-012)
/// attacked from outside by a hostile skill author.
///
/// Found by the attack of 2026-12-06 (second pass) — a side effect, not a
/// wrong answer: the resolved check (READ-001) refuses a FIFO, socket or
/// device by its `lstat`, before anything opens it. The one-step open now
/// opens whatever sits at the path (`openat2`, `O_RDONLY|O_NONBLOCK`) and
/// only then asks the descriptor its type. For a FIFO that open is seen by
/// its other end: a writer blocked in `open(O_WRONLY)` is released by a
/// mere `skill_file` of the name, and its first write then fails with
/// EPIPE (SIGPIPE by default). For a device node (a tree unpacked as root
/// keeps them) the driver's open handler runs — opening is the one thing a
/// "not a regular file" refusal promised not to need. The answer itself is
/// unchanged ("a named pipe, not a regular file").
#[test]
fn reading_a_fifo_by_name_does_not_open_it() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let skill = dir.path().join("demo");
    std::fs::create_dir(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: demo\ndescription: A skill with a FIFO.\n---\nbody\n",
    )
    .expect("SKILL.md");
    let fifo = skill.join("pipe.md");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs")
            .success()
    );
    let root = dir.path().to_str().expect("UTF-8").to_owned();
    let mut s = common::Session::start(common::BIN.as_ref(), &[("SKILLS_DIR", &root)]);

    // The FIFO's writer: blocks in open until something opens the read end.
    let (tx, rx) = mpsc::channel();
    let writer_path = fifo.clone();
    std::thread::spawn(move || {
        let opened = OpenOptions::new().write(true).open(&writer_path);
        let _ = tx.send(opened.is_ok());
    });
    std::thread::sleep(Duration::from_millis(300));

    let r = s.request(
        "tools/call",
        json!({"name": "skill_file", "arguments": {"name": "demo", "path": "pipe.md"}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("named pipe"), "{r}");
    let released = rx.recv_timeout(Duration::from_millis(1000));

    // Let the writer go, whatever happened.
    let _ = OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(&fifo);
    assert!(
        released.is_err(),
        "a skill_file of a FIFO opened it: its blocked writer was released"
    );
}
