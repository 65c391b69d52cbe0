//! The fence's one-step open (src/fence.rs `open_plain`, spec READ-012)
//! attacked from outside by a hostile skill author.
//!
//! Found by the attack of 2026-12-06 (second pass) — a side effect, not a
//! wrong answer: the resolved check (READ-001) refuses a FIFO, socket or
//! device by its `lstat`, before anything opens it. The one-step open now
//! opens whatever sits at the path (`openat2`, `O_RDONLY|O_NONBLOCK`) and
//! only then asks the descriptor its type. For a FIFO that open is seen by
//! its other end: a writer blocked in `open(O_WRONLY)` is released by a
//! mere `skill_file` of the name, and its first write then fails with
//! EPIPE (SIGPIPE by default). For a device node (a tree unpacked as root
//! keeps them) the driver's open handler runs — opening is the one thing a
//! "not a regular file" refusal promised not to need. The answer itself is
//! unchanged ("a named pipe, not a regular file").

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use crate::common;

use serde_json::json;

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
