//! HARD-004: the server itself creates, writes and deletes nothing (README
//! "Trust posture": "no file is written anywhere"). The whole conformance
//! suite runs with every server under `strace -f`; the file syscalls of the
//! server's own threads are then checked, leaving out the scripts it runs
//! (any process that exec'd something else, and its descendants) — those
//! write what they like, which the server does not vouch for.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

const WRITES: &[&str] = &["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"];
const MUTATING: &[&str] = &[
    "unlink(",
    "unlinkat(",
    "rename(",
    "renameat(",
    "renameat2(",
    "mkdir(",
    "mkdirat(",
    "rmdir(",
    "symlink(",
    "symlinkat(",
    "link(",
    "linkat(",
    "chmod(",
    "fchmodat(",
    "chown(",
    "fchownat(",
    "lchown(",
    "truncate(",
    "ftruncate(",
    "utimensat(",
    "mknod(",
    "mknodat(",
    "creat(",
];
/// Opened for writing by the standard library to give a child its stdin.
const ALLOWED_WRITE_OPENS: &[&str] = &["\"/dev/null\""];

fn pid_of(line: &str) -> Option<u32> {
    line.split_whitespace().next()?.parse().ok()
}

#[test]
fn the_server_writes_nothing_while_the_suite_runs() {
    let logs = tempfile::tempdir().unwrap();
    let wrapper = logs.path().join("strace-server.sh");
    let bin = env!("CARGO_BIN_EXE_skill-mcp");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec strace -f -qq -o '{}/trace.'$$ -e trace=%file,ftruncate,clone,clone3,fork,vfork \"$@\"\n",
            logs.path().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(common::runner())
        .args([
            "--server",
            &format!("{} {bin}", wrapper.display()),
            "--jobs",
            "2",
        ])
        .output()
        .expect("the runner runs");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the suite failed under strace (is strace installed?):\n{report}"
    );

    let mut checked = 0;
    let mut offences = Vec::new();
    for entry in std::fs::read_dir(logs.path()).unwrap().flatten() {
        let path = entry.path();
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("trace.")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let (mut parent, mut execd, mut server) = (HashMap::new(), HashSet::new(), None);
        for line in text.lines() {
            let Some(pid) = pid_of(line) else { continue };
            // An exec line may be split ("<unfinished ...>"); its start
            // names the program, which is all that matters here.
            if line.contains(" execve(") {
                if line.contains(bin) {
                    server.get_or_insert(pid);
                } else {
                    execd.insert(pid);
                }
            }
            let spawns = [
                " clone(",
                " clone3(",
                " fork(",
                " vfork(",
                "<... clone resumed>",
                "<... clone3 resumed>",
                "<... vfork resumed>",
            ]
            .iter()
            .any(|s| line.contains(s));
            if spawns
                && let Some(child) = line
                    .rsplit("= ")
                    .next()
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(|c| c.parse::<u32>().ok())
                && child != pid
            {
                parent.insert(child, pid);
            }
        }
        // A process is a script's when it, or an ancestor, exec'd something
        // other than the server (tids are never reused within one trace, so
        // the walk ends; the hop bound makes sure of it).
        let script = |mut p: u32| {
            for _ in 0..10_000 {
                if execd.contains(&p) {
                    return true;
                }
                match parent.get(&p) {
                    Some(&q) => p = q,
                    None => return false,
                }
            }
            true
        };
        for line in text.lines() {
            let Some(pid) = pid_of(line) else { continue };
            if script(pid) {
                continue;
            }
            checked += 1;
            let opens_for_write = (line.contains(" openat(") || line.contains(" open("))
                && WRITES.iter().any(|w| line.contains(w))
                && !ALLOWED_WRITE_OPENS.iter().any(|a| line.contains(a));
            let mutates = MUTATING.iter().any(|m| line.contains(&format!(" {m}")));
            if opens_for_write || mutates {
                offences.push(format!("{}: {line}", path.display()));
            }
        }
        assert!(
            server.is_some(),
            "{}: no exec of the server found",
            path.display()
        );
    }
    eprintln!("checked {checked} file syscalls of the server's own threads across the suite");
    assert!(
        checked > 1000,
        "too few syscalls checked ({checked}): was anything traced?"
    );
    assert!(
        offences.is_empty(),
        "the server wrote or changed files:\n{}",
        offences.join("\n")
    );
    let _ = Path::new(bin);
}
