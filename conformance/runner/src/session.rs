//! One server process driven over stdio: newline-delimited JSON-RPC.
//!
//! The process and its threads are `skill_mcp_client::Process`'s (shared
//! with the tests and the bench): a reader thread turns stdout lines into
//! events, a writer thread owns stdin (so a server that stops reading
//! cannot block the runner), a third keeps the last lines of stderr. What
//! is the runner's own is how strictly it reads: replies are matched to
//! requests by id, and one answered twice, a stray reply or a line that is
//! not JSON is a failure of the case; requests from the server are
//! answered with -32601; notifications are kept.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc::RecvTimeoutError;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use serde_json::{Value, json};
use skill_mcp_client::{Event, MAX_LINE_BYTES, Options, Process, Stderr};

use crate::json::clip;

/// Lines of stderr kept for failure reports.
pub const STDERR_TAIL_LINES: usize = 40;
/// Runner-assigned request ids start here, far from ids a raw step writes.
const FIRST_ID: u64 = 1_000_001;
/// How long the server gets to exit after its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Why a wait ended without what it waited for.
#[derive(Debug, Clone, PartialEq)]
pub enum WaitError {
    /// The step's own timeout.
    Timeout,
    /// The unit's total deadline.
    Deadline,
    /// The server broke the protocol, crashed or closed stdout.
    Broken(String),
}

pub struct Server {
    process: Process,
    pid: Pid,
    next_id: u64,
    sent_ids: HashSet<u64>,
    replies: HashMap<u64, Value>,
    taken: HashSet<u64>,
    strays: VecDeque<Value>,
    pub notifications: Vec<Value>,
    /// `notifications/progress` messages with when each was read, for a
    /// step that asked for progress.
    pub progress: Vec<(Instant, Value)>,
    pub server_requests: usize,
    broken: Option<String>,
}

/// What is known about the server once it is gone.
pub struct Finished {
    /// How it ended, in words.
    pub exit: String,
    /// The last lines of its stderr.
    pub stderr_tail: Vec<String>,
}

impl Server {
    /// Starts `argv` in `cwd` with exactly `env`, in its own process group.
    pub fn spawn(
        argv: &[String],
        env: &[(String, OsString)],
        cwd: &Path,
    ) -> Result<Server, String> {
        let (prog, args) = argv
            .split_first()
            .ok_or_else(|| "the server command is empty".to_string())?;
        let mut cmd = Command::new(prog);
        cmd.args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .process_group(0);
        let process = Process::spawn(
            &mut cmd,
            Options {
                stderr: Stderr::Tail(STDERR_TAIL_LINES),
                writer_thread: true,
            },
        )
        .map_err(|e| format!("cannot start the server `{prog}`: {e}"))?;
        let pid = Pid::from_raw(process.pid() as i32);
        Ok(Server {
            process,
            pid,
            next_id: FIRST_ID,
            sent_ids: HashSet::new(),
            replies: HashMap::new(),
            taken: HashSet::new(),
            strays: VecDeque::new(),
            notifications: Vec::new(),
            progress: Vec::new(),
            server_requests: 0,
            broken: None,
        })
    }

    /// Sends one line (a newline is appended).
    pub fn send_line(&mut self, text: &str) -> Result<(), String> {
        self.process.send_line(text.as_bytes())
    }

    /// Sends a request with a fresh id; returns the id and the line sent.
    pub fn send_request(
        &mut self,
        method: &str,
        params: Option<&Value>,
    ) -> Result<(u64, String), String> {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p.clone();
        }
        let text = msg.to_string();
        self.sent_ids.insert(id);
        self.send_line(&text)?;
        Ok((id, text))
    }

    /// Sends a notification; returns the line sent.
    pub fn send_notification(
        &mut self,
        method: &str,
        params: Option<&Value>,
    ) -> Result<String, String> {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p.clone();
        }
        let text = msg.to_string();
        self.send_line(&text)?;
        Ok(text)
    }

    /// Waits for the reply to request `id`.
    pub fn wait_reply(
        &mut self,
        id: u64,
        timeout: Instant,
        deadline: Instant,
    ) -> Result<Value, WaitError> {
        loop {
            if let Some(v) = self.replies.remove(&id) {
                self.taken.insert(id);
                return Ok(v);
            }
            self.pump_until(timeout, deadline)?;
        }
    }

    /// The reply to request `id`, if it has arrived (a cancelled request's
    /// must not).
    pub fn take_reply(&mut self, id: u64) -> Option<Value> {
        let v = self.replies.remove(&id)?;
        self.taken.insert(id);
        Some(v)
    }

    /// What a wait that timed out may owe to the server: replies under ids
    /// the runner never sent (a string, `1.0`, `null`), which it keeps
    /// as strays; said so a report names the real fault.
    pub fn strays_note(&self) -> Option<String> {
        let last = self.strays.back()?;
        Some(format!(
            "; the server sent {} repl{} under an id the runner never used (the last: {})",
            self.strays.len(),
            if self.strays.len() == 1 { "y" } else { "ies" },
            clip(&last.to_string(), 200)
        ))
    }

    /// Waits for the next reply that answers none of the runner's requests.
    pub fn wait_stray(&mut self, timeout: Instant, deadline: Instant) -> Result<Value, WaitError> {
        loop {
            if let Some(v) = self.strays.pop_front() {
                return Ok(v);
            }
            self.pump_until(timeout, deadline)?;
        }
    }

    /// Keeps handling server messages until `until` (a sleep step).
    pub fn idle_until(&mut self, until: Instant, deadline: Instant) -> Result<(), WaitError> {
        loop {
            match self.pump_until(until, deadline) {
                Ok(()) => {}
                Err(WaitError::Timeout) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    /// Handles whatever already arrived, without waiting.
    pub fn drain(&mut self) -> Result<(), WaitError> {
        if let Some(b) = &self.broken {
            return Err(WaitError::Broken(b.clone()));
        }
        while let Some(ev) = self.process.try_recv() {
            self.handle(ev).map_err(WaitError::Broken)?;
        }
        Ok(())
    }

    /// Receives and handles one event, waiting at most until the earlier of
    /// `timeout` and `deadline`.
    fn pump_until(&mut self, timeout: Instant, deadline: Instant) -> Result<(), WaitError> {
        if let Some(b) = &self.broken {
            return Err(WaitError::Broken(b.clone()));
        }
        let now = Instant::now();
        let (until, why) = if deadline <= timeout {
            (deadline, WaitError::Deadline)
        } else {
            (timeout, WaitError::Timeout)
        };
        if now >= until {
            return Err(why);
        }
        match self.process.recv(until - now) {
            Ok(ev) => self.handle(ev).map_err(WaitError::Broken),
            Err(RecvTimeoutError::Timeout) => Err(why),
            Err(RecvTimeoutError::Disconnected) => {
                let b = "the server's stdout reader stopped".to_string();
                self.broken = Some(b.clone());
                Err(WaitError::Broken(b))
            }
        }
    }

    fn handle(&mut self, ev: Event) -> Result<(), String> {
        let r = self.classify(ev);
        if let Err(e) = &r {
            self.broken = Some(e.clone());
        }
        r
    }

    fn classify(&mut self, ev: Event) -> Result<(), String> {
        let msg = match ev {
            Event::Line { text, .. } => {
                if text.iter().all(u8::is_ascii_whitespace) {
                    return Ok(());
                }
                match serde_json::from_slice::<Value>(&text) {
                    Ok(v) => v,
                    Err(err) => {
                        return Err(format!(
                            "the server wrote a line to stdout that is not JSON ({err}): {}",
                            clip(&String::from_utf8_lossy(&text), 300)
                        ));
                    }
                }
            }
            Event::Eof => {
                return Err("the server closed its stdout (it exited or crashed)".to_string());
            }
            Event::TooLong => {
                return Err(format!(
                    "cannot read the server's stdout: a stdout line is longer than {MAX_LINE_BYTES} bytes"
                ));
            }
            Event::ReadError(e) => return Err(format!("cannot read the server's stdout: {e}")),
        };
        let Some(obj) = msg.as_object() else {
            return Err(format!(
                "the server sent a JSON message that is not an object: {}",
                clip(&msg.to_string(), 300)
            ));
        };
        if obj.get("method").is_some_and(Value::is_string) {
            match obj.get("id") {
                Some(id) if !id.is_null() => {
                    // A request from the server: this client implements none.
                    self.server_requests += 1;
                    let reply = json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {"code": -32601, "message": "Method not found: the conformance runner answers no requests"}
                    });
                    self.send_line(&reply.to_string())?;
                }
                _ => {
                    if obj.get("method").and_then(Value::as_str) == Some("notifications/progress") {
                        self.progress.push((Instant::now(), msg.clone()));
                    }
                    self.notifications.push(msg)
                }
            }
            return Ok(());
        }
        if obj.contains_key("result") || obj.contains_key("error") {
            let ours = obj
                .get("id")
                .and_then(Value::as_u64)
                .filter(|id| self.sent_ids.contains(id));
            match ours {
                Some(id) => {
                    if self.taken.contains(&id) || self.replies.contains_key(&id) {
                        return Err(format!(
                            "the server answered request id {id} twice; second reply: {}",
                            clip(&msg.to_string(), 300)
                        ));
                    }
                    self.replies.insert(id, msg);
                }
                None => self.strays.push_back(msg),
            }
            return Ok(());
        }
        Err(format!(
            "the server sent a JSON object that is neither a request, a notification nor a reply: {}",
            clip(&msg.to_string(), 300)
        ))
    }

    /// Closes stdin, gives the server up to 5 s to exit, then kills its
    /// whole process group and reaps it.
    pub fn finish(mut self) -> Finished {
        self.process.close_stdin();
        let exit = self.stop(EXIT_GRACE, false);
        self.finished(exit)
    }

    /// Stops a server that does not end with its stdin (one serving
    /// HTTP): SIGTERM to its group, up to `grace` to exit, then SIGKILL.
    pub fn terminate(mut self, grace: Duration) -> Finished {
        self.process.close_stdin();
        let exit = self.stop(grace, true);
        self.finished(exit)
    }

    /// The lines of stderr read so far (the last [`STDERR_TAIL_LINES`]).
    pub fn stderr_so_far(&self) -> Vec<String> {
        self.process.stderr_tail(Duration::ZERO)
    }

    /// How the server ended, when it has (without reaping it).
    pub fn exited(&self) -> Option<String> {
        match waitid(
            Id::Pid(self.pid),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT,
        ) {
            Ok(WaitStatus::StillAlive) => None,
            Ok(WaitStatus::Exited(_, code)) => Some(format!("exited with status {code}")),
            Ok(WaitStatus::Signaled(_, sig, _)) => Some(format!("killed by signal {sig:?}")),
            Ok(other) => Some(format!("stopped ({other:?})")),
            Err(e) => Some(format!("cannot be waited for: {e}")),
        }
    }

    fn finished(self, exit: String) -> Finished {
        // Let the stderr reader see EOF (the group is dead now).
        let stderr_tail = self
            .process
            .stderr_tail(Duration::from_secs(1))
            .iter()
            .map(|l| clip(l, 1000))
            .collect();
        Finished { exit, stderr_tail }
    }

    fn stop(&mut self, grace: Duration, term: bool) -> String {
        let Some(mut child) = self.process.take_child() else {
            return "already stopped".to_string();
        };
        let start = Instant::now();
        if term {
            let _ = killpg(self.pid, Signal::SIGTERM);
        }
        // Look without reaping, so the pid (and so the group id) stays ours
        // until the group is killed.
        let mut status = None;
        loop {
            match waitid(
                Id::Pid(self.pid),
                WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT,
            ) {
                Ok(WaitStatus::StillAlive) => {}
                Ok(s) => {
                    status = Some(s);
                    break;
                }
                Err(_) => break,
            }
            if start.elapsed() >= grace {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let _ = killpg(self.pid, Signal::SIGKILL);
        let reaped = child.wait();
        match status {
            Some(WaitStatus::Exited(_, code)) => format!("exited with status {code}"),
            Some(WaitStatus::Signaled(_, sig, _)) => format!("killed by signal {sig:?}"),
            Some(other) => format!("stopped ({other:?})"),
            None => match reaped {
                Ok(_) if term => format!(
                    "still running {} ms after SIGTERM; killed",
                    grace.as_millis()
                ),
                Ok(_) => format!(
                    "still running {} s after its stdin was closed; killed",
                    grace.as_secs()
                ),
                Err(e) => format!("could not be reaped: {e}"),
            },
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.process.take_child() {
            let _ = killpg(self.pid, Signal::SIGKILL);
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Vec<(String, OsString)> {
        vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())]
    }

    fn sh(script: &str) -> Server {
        let argv = vec!["sh".to_string(), "-c".to_string(), script.to_string()];
        Server::spawn(&argv, &env(), Path::new("/")).unwrap()
    }

    fn later(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    #[test]
    fn matches_replies_by_id_out_of_order_and_answers_server_requests() {
        // Replies to ids 1000002 then 1000001, a notification, a server
        // request and a stray parse error come first.
        let mut s = sh(r#"
            read a; read b
            echo '{"jsonrpc":"2.0","method":"notifications/message","params":{}}'
            echo '{"jsonrpc":"2.0","id":"s1","method":"roots/list"}'
            read answer; echo "$answer" >&2
            echo '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
            echo '{"jsonrpc":"2.0","id":1000002,"result":{"n":2}}'
            echo '{"jsonrpc":"2.0","id":1000001,"result":{"n":1}}'
            cat >/dev/null
        "#);
        let (id1, _) = s.send_request("a", None).unwrap();
        let (id2, _) = s.send_request("b", Some(&json!({"x": 1}))).unwrap();
        assert_eq!((id1, id2), (1_000_001, 1_000_002));
        let r1 = s.wait_reply(id1, later(5000), later(10000)).unwrap();
        assert_eq!(r1["result"]["n"], 1);
        let r2 = s.wait_reply(id2, later(5000), later(10000)).unwrap();
        assert_eq!(r2["result"]["n"], 2);
        let stray = s.wait_stray(later(5000), later(10000)).unwrap();
        assert_eq!(stray["error"]["code"], -32700);
        assert_eq!(s.notifications.len(), 1);
        assert_eq!(s.server_requests, 1);
        let f = s.finish();
        assert!(f.exit.contains("status 0"), "{}", f.exit);
        let answer: Value = serde_json::from_str(&f.stderr_tail[0]).unwrap();
        assert_eq!(answer["id"], "s1");
        assert_eq!(answer["error"]["code"], -32601);
    }

    #[test]
    fn timeout_and_deadline_are_distinguished() {
        let mut s = sh("cat >/dev/null");
        let (id, _) = s.send_request("x", None).unwrap();
        assert_eq!(
            s.wait_reply(id, later(100), later(5000)),
            Err(WaitError::Timeout)
        );
        assert_eq!(
            s.wait_reply(id, later(5000), later(100)),
            Err(WaitError::Deadline)
        );
        let f = s.finish();
        assert!(
            f.exit.contains("status 0"),
            "closing stdin ends cat: {}",
            f.exit
        );
    }

    #[test]
    fn non_json_stdout_is_a_failure() {
        let mut s = sh("echo 'hello there'; cat >/dev/null");
        let (id, _) = s.send_request("x", None).unwrap();
        match s.wait_reply(id, later(5000), later(5000)) {
            Err(WaitError::Broken(m)) => {
                assert!(m.contains("not JSON") && m.contains("hello there"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        s.finish();
    }

    #[test]
    fn early_exit_is_reported_with_stderr() {
        let mut s = sh("echo boom >&2; exit 3");
        let (id, _) = s
            .send_request("x", None)
            .ok()
            .unwrap_or((1_000_001, String::new()));
        match s.wait_reply(id, later(5000), later(5000)) {
            Err(WaitError::Broken(m)) => assert!(m.contains("closed its stdout"), "{m}"),
            other => panic!("{other:?}"),
        }
        let f = s.finish();
        assert_eq!(f.exit, "exited with status 3");
        assert_eq!(f.stderr_tail, vec!["boom"]);
    }

    #[test]
    fn a_server_ignoring_stdin_close_is_killed_with_its_group() {
        // The shell ignores EOF and starts a grandchild; both must die.
        let s = sh("sleep 300 & while :; do sleep 1; done");
        thread::sleep(Duration::from_millis(200));
        let start = Instant::now();
        let pgid = s.pid;
        let f = s.finish();
        assert!(f.exit.contains("killed"), "{}", f.exit);
        // Killed after EXIT_GRACE rather than waited on: the shell would
        // loop forever and its grandchild sleep 300 s. The deadline only
        // has to tell that apart (about 5 s: six times that).
        assert!(start.elapsed() < Duration::from_secs(30));
        // Killed members may linger as zombies until init reaps them; none may
        // still be running once SIGKILL has been acted on, which a busy
        // machine can take a while to schedule: polled, for at most 30 s of
        // the grandchild's 300.
        let live = || -> Vec<String> {
            std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
                .filter(|st| {
                    // pid (comm) state ppid pgrp ...
                    let after = st.rsplit_once(')').map(|x| x.1).unwrap_or("");
                    let f: Vec<&str> = after.split_whitespace().collect();
                    f.len() > 2 && f[2] == pgid.as_raw().to_string() && f[0] != "Z"
                })
                .collect()
        };
        let killed = Instant::now();
        while !live().is_empty() && killed.elapsed() < Duration::from_secs(30) {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(
            live().is_empty(),
            "still running in the group: {:?}",
            live()
        );
    }

    #[test]
    fn duplicate_reply_is_a_failure() {
        let mut s = sh(
            r#"read a; echo '{"id":1000001,"result":{}}'; echo '{"id":1000001,"result":{}}'; cat >/dev/null"#,
        );
        let (id, _) = s.send_request("x", None).unwrap();
        s.wait_reply(id, later(5000), later(5000)).unwrap();
        thread::sleep(Duration::from_millis(200));
        match s.drain() {
            Err(WaitError::Broken(m)) => assert!(m.contains("twice"), "{m}"),
            other => panic!("{other:?}"),
        }
        s.finish();
    }

    #[test]
    fn spawn_failure_is_an_error() {
        let argv = vec!["/nonexistent/server".to_string()];
        let e = Server::spawn(&argv, &env(), Path::new("/")).err().unwrap();
        assert!(e.contains("cannot start the server"), "{e}");
    }
}
