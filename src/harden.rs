//! The serving process's own hardening at boot: nothing of the server is
//! reachable from a script it runs (spec RUN-023..RUN-025).
//!
//! A declared script runs as the server's own uid. Without this, it could
//! read the server's environment (every credential of a registration) from
//! `/proc/<ppid>/environ`, open its memory, list its descriptors or attach
//! a debugger, which would make the environment allowlist (RUN-012) one
//! `readFileSync` away from moot. [`harden`] is called once, after the
//! environment is read into `Config` and while the process still has one
//! thread, before anything can spawn a script.

use std::fs;
use std::io;

use nix::libc;

/// What [`harden`] could not do, for the log. Each step is independent:
/// one that fails leaves the others in place.
#[derive(Debug, Default)]
pub struct Report {
    pub failures: Vec<String>,
}

/// Makes the process non-dumpable (RUN-023), wipes its exec-time
/// environment block (RUN-024), makes it a child subreaper (RUN-027) and marks every inherited descriptor above
/// 2 close-on-exec (RUN-025).
///
/// # Safety
///
/// Call it while the process has a single thread and nothing holds a
/// pointer into the environment (`getenv`'s results, `environ`): it clears
/// `environ` and overwrites the strings it pointed to.
pub unsafe fn harden() -> Report {
    let mut report = Report::default();
    if let Err(e) = forbid_dumping() {
        report.failures.push(format!(
            "could not make the process non-dumpable, so a script running as this uid can read \
             /proc/<pid>/environ, fd/ and mem and attach to it (RUN-023): {e}"
        ));
    }
    // SAFETY: forwarded from this function's own contract.
    if let Err(e) = unsafe { wipe_environment() } {
        report.failures.push(format!(
            "could not wipe the exec-time environment block, so /proc/<pid>/environ and a core \
             dump still hold it (RUN-024): {e}"
        ));
    }
    if let Err(e) = adopt_orphans() {
        report.failures.push(format!(
            "could not become a child subreaper, so a process a script detached from its run \
             outlives the run and can read the next script's environment (RUN-027): {e}"
        ));
    }
    if let Err(e) = inherited_descriptors_close_on_exec() {
        report.failures.push(format!(
            "could not mark inherited descriptors close-on-exec, so one might reach a script \
             (RUN-025): {e}"
        ));
    }
    report
}

/// The `[env_start, env_end)` range of a `/proc/<pid>/stat` line: fields
/// 50 and 51 (proc(5)). The fields are counted after the last `)`, since
/// the command name (field 2) may itself hold spaces and parentheses.
pub(crate) fn env_range(stat: &str) -> Option<(usize, usize)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // After ")" the first field is field 3.
    let mut fields = rest.split_ascii_whitespace().skip(50 - 3);
    let start = fields.next()?.parse().ok()?;
    let end = fields.next()?.parse().ok()?;
    (start <= end).then_some((start, end))
}

/// True when `/proc/<pid>/maps` shows `[start, end)` inside one mapping
/// the process may write: the range is only ever written after this says
/// so, so a stat line this code misread costs the wipe, never the process.
pub(crate) fn writable_mapping_holds(maps: &str, start: usize, end: usize) -> bool {
    maps.lines().any(|line| {
        let mut parts = line.split_ascii_whitespace();
        let (Some(range), Some(perms)) = (parts.next(), parts.next()) else {
            return false;
        };
        let Some((lo, hi)) = range.split_once('-') else {
            return false;
        };
        let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        else {
            return false;
        };
        perms.starts_with("rw") && lo <= start && end <= hi
    })
}

/// RUN-027: every process a script leaves behind, however it detached
/// (its own session, a double fork), is re-parented to this server rather
/// than to init, so `run` can find it and end it when the run settles.
#[cfg(target_os = "linux")]
fn adopt_orphans() -> io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true).map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
#[cfg_attr(mutants, mutants::skip)]
fn adopt_orphans() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "only Linux has PR_SET_CHILD_SUBREAPER; a detached process outlives its run here",
    ))
}

/// RUN-023: the kernel then refuses /proc/<pid>/environ, fd/, mem and
/// ptrace to every process without CAP_SYS_PTRACE, same uid included.
#[cfg(target_os = "linux")]
fn forbid_dumping() -> io::Result<()> {
    nix::sys::prctl::set_dumpable(false).map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
#[cfg_attr(mutants, mutants::skip)]
fn forbid_dumping() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "only Linux has PR_SET_DUMPABLE; this OS keeps the process open to its own uid",
    ))
}

/// RUN-024: clears `environ`, then zeroes the strings the kernel shows as
/// `/proc/<pid>/environ` (the block execve laid out on the stack), which a
/// root-run script (CAP_SYS_PTRACE passes RUN-023's refusal) or a core
/// dump would otherwise still read. `Config` holds its own copy.
///
/// # Safety
///
/// As [`harden`]: one thread, and no pointer into the environment held.
#[cfg(target_os = "linux")]
unsafe fn wipe_environment() -> io::Result<()> {
    // SAFETY: single-threaded (the caller's contract), so no other thread
    // reads or writes the environment while glibc drops it.
    unsafe { libc::clearenv() };
    let stat = fs::read_to_string("/proc/self/stat")?;
    let (start, end) = env_range(&stat).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "no env_start/env_end in /proc/self/stat",
        )
    })?;
    if start == end {
        return Ok(());
    }
    let maps = fs::read_to_string("/proc/self/maps")?;
    if !writable_mapping_holds(&maps, start, end) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{start:#x}..{end:#x} is not inside one writable mapping"),
        ));
    }
    // SAFETY: the range is this process's own exec-time environment block,
    // inside a writable mapping (checked above). `environ` no longer points
    // into it, the process has one thread, and Rust code never borrowed it
    // (std copies every variable it reads into an owned OsString), so
    // nothing reads these bytes again but the kernel, for /proc.
    unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
    Ok(())
}

/// Elsewhere the exec-time block cannot be found through /proc: say so.
///
/// # Safety
///
/// None needed; `unsafe` only to match the Linux version.
#[cfg(not(target_os = "linux"))]
#[cfg_attr(mutants, mutants::skip)]
unsafe fn wipe_environment() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "the exec-time environment block is found through /proc/self/stat, which only Linux has",
    ))
}

/// RUN-025: every descriptor above 2 becomes close-on-exec. Everything the
/// server opens itself is already `O_CLOEXEC` (std, tokio, notify), so
/// what this adds is the descriptors it inherited: a host's fd 3 would
/// otherwise reach every script. At boot rather than in the child between
/// fork and exec, so a run keeps std's `posix_spawn` path (no fork of the
/// server's memory per run).
fn inherited_descriptors_close_on_exec() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // close_range(2) with CLOSE_RANGE_CLOEXEC (Linux 5.11): one call.
        // SAFETY: a plain syscall on integers; it closes nothing.
        let r = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC as libc::c_uint,
            )
        };
        if r == 0 {
            return Ok(());
        }
    }
    // An older kernel, or another OS: each open descriptor, as listed.
    mark_listed_close_on_exec()
}

/// RUN-025's fallback: `fcntl(F_SETFD, FD_CLOEXEC)` on each descriptor
/// above 2 that `/proc/self/fd` (or `/dev/fd`) lists.
fn mark_listed_close_on_exec() -> io::Result<()> {
    let listing = if cfg!(target_os = "linux") {
        "/proc/self/fd"
    } else {
        "/dev/fd"
    };
    let fds: Vec<i32> = fs::read_dir(listing)?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: fcntl on an integer; a descriptor that was the listing's
        // own, now closed, fails with EBADF, which is fine.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 {
            // SAFETY: as above.
            unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stat line whose field N (from 3 on) is N, but for env_start (50)
    /// and env_end (51), with a command name that holds `) ` as a hostile
    /// one could.
    fn stat(start: &str, end: &str) -> String {
        let fields: Vec<String> = (3..=52)
            .map(|n| match n {
                50 => start.to_owned(),
                51 => end.to_owned(),
                n => n.to_string(),
            })
            .collect();
        format!("4242 (a) b (c) {}", fields.join(" "))
    }

    #[test]
    fn the_env_range_is_fields_50_and_51_counted_after_the_last_paren() {
        assert_eq!(
            env_range(&stat("140733597346100", "140733597347815")),
            Some((140733597346100, 140733597347815))
        );
    }

    #[test]
    fn a_short_or_garbled_stat_line_gives_no_range() {
        assert_eq!(env_range("1 (x) S 1 2 3"), None);
        assert_eq!(env_range("no paren at all"), None);
        assert_eq!(env_range(&stat("1000", "x")), None);
        assert_eq!(
            env_range(&stat("1000", "999")),
            None,
            "an end before the start"
        );
        assert_eq!(
            env_range(&stat("1000", "1000")),
            Some((1000, 1000)),
            "empty"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_processs_own_stat_line_parses() {
        let stat = fs::read_to_string("/proc/self/stat").expect("procfs");
        let (start, end) = env_range(&stat).expect("env_start and env_end");
        assert!(start < end, "the test runner has an environment");
        let maps = fs::read_to_string("/proc/self/maps").expect("procfs");
        assert!(writable_mapping_holds(&maps, start, end));
    }

    /// The fallback for kernels without CLOSE_RANGE_CLOEXEC, run here on
    /// a descriptor opened without close-on-exec (the primary path is
    /// tests/nothing_reachable.rs's, through MCP).
    #[test]
    fn the_fallback_marks_an_inherited_descriptor_close_on_exec() {
        use std::os::fd::AsRawFd;
        let file = tempfile::tempfile().expect("tempfile");
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this test owns.
        let cloexec = || unsafe { libc::fcntl(fd, libc::F_GETFD) } & libc::FD_CLOEXEC;
        // SAFETY: as above; clears the flag, as a host's fd 3 would lack it.
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) }, 0);
        assert_eq!(cloexec(), 0);
        mark_listed_close_on_exec().expect("listing");
        assert_eq!(cloexec(), libc::FD_CLOEXEC);
    }

    #[test]
    fn only_a_writable_mapping_that_holds_the_whole_range_counts() {
        let maps = "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n\
                    55d000000000-55d000001000 r--p 00000000 08:01 42 /bin/x\n";
        assert!(writable_mapping_holds(maps, 0x7ffc00001000, 0x7ffc00002000));
        assert!(
            !writable_mapping_holds(maps, 0x7ffc00020000, 0x7ffc00022000),
            "runs past the end"
        );
        assert!(
            !writable_mapping_holds(maps, 0x55d000000010, 0x55d000000020),
            "read-only"
        );
        assert!(!writable_mapping_holds("garbage\n- rw\n", 1, 2));
    }
}
