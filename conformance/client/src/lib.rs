//! One MCP client over stdio for the conformance runner, the integration
//! tests and the benches (issue 28 §6): each had its own copy of the same
//! plumbing. No server code: the runner links this crate, and the runner
//! must stay a black-box client (tests/spec_sync.rs checks both manifests).
//!
//! Two layers:
//! - [`Process`]: a command started with piped stdio; a thread reads stdout
//!   line by line, timestamping each line as it is read (before anyone
//!   parses it, so a round trip does not count the client's parsing);
//!   stdin is written directly or, for a client that must not block on a
//!   server that stops reading, from a thread of its own; stderr can be
//!   kept as its last lines.
//! - [`Client`]: newline-delimited JSON-RPC on a `Process`: requests with
//!   fresh ids, replies matched by id in any order (one that comes while
//!   another is waited for is kept), deadlines on every wait.
//!
//! What stays with each user: the runner's strict reading of the server
//! (a reply twice, a stray reply, a line that is not JSON are failures of
//! the case) and its process-group teardown; the tests' assertions; the
//! bench's measurements from /proc.

use std::collections::{HashMap, VecDeque};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Longest stdout line accepted (a longer one ends the reading with
/// [`Event::TooLong`], rather than growing a buffer without bound).
pub const MAX_LINE_BYTES: u64 = 256 << 20;

/// Longest stderr line kept whole in a tail; the rest of it is dropped.
const MAX_STDERR_LINE: u64 = 1 << 20;

/// Where the server's stderr goes.
pub enum Stderr {
    /// As given: null, inherited, or a file a test reads back.
    To(Stdio),
    /// Piped and read on a thread that keeps the last this many lines
    /// (the runner's failure reports).
    Tail(usize),
}

/// How a [`Process`] is started.
pub struct Options {
    pub stderr: Stderr,
    /// Write stdin from a thread of its own, so a server that stops
    /// reading cannot block the caller (the runner); otherwise writes go
    /// straight to the pipe on the caller's thread (no hand-off to time).
    pub writer_thread: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            stderr: Stderr::To(Stdio::null()),
            writer_thread: false,
        }
    }
}

/// What the stdout reader saw.
#[derive(Debug)]
pub enum Event {
    /// One line: when it had been read, its bytes without the line end,
    /// and how many bytes it took on the wire (line end included).
    Line {
        at: Instant,
        text: Vec<u8>,
        wire_len: usize,
    },
    /// A line longer than [`MAX_LINE_BYTES`]; nothing more is read.
    TooLong,
    /// stdout was closed.
    Eof,
    ReadError(String),
}

enum Input {
    Direct(ChildStdin),
    Thread {
        to: Sender<Vec<u8>>,
        error: Arc<Mutex<Option<String>>>,
    },
    Closed,
}

struct Tail {
    lines: Arc<Mutex<VecDeque<String>>>,
    done: Receiver<()>,
}

/// A started command and its stdio. Dropping it kills and reaps the child
/// (unless the owner took it with [`Process::take_child`]).
pub struct Process {
    child: Option<Child>,
    pid: u32,
    input: Input,
    events: Receiver<Event>,
    tail: Option<Tail>,
}

impl Process {
    /// Starts `cmd` (its program, arguments, environment, directory and
    /// process group are the caller's) with stdin and stdout piped.
    pub fn spawn(cmd: &mut Command, options: Options) -> io::Result<Process> {
        let keep = match options.stderr {
            Stderr::To(s) => {
                cmd.stderr(s);
                None
            }
            Stderr::Tail(n) => {
                cmd.stderr(Stdio::piped());
                Some(n)
            }
        };
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let pid = child.id();
        let fail = |mut child: Child, e: io::Error| {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        };
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return fail(child, io::Error::other("the stdio pipes were not created"));
        };
        let (tx, events) = mpsc::channel();
        if let Err(e) = thread::Builder::new()
            .name("server-stdout".into())
            .spawn(move || read_stdout(stdout, tx))
        {
            return fail(child, e);
        }
        let input = if options.writer_thread {
            match writer(stdin) {
                Ok(input) => input,
                Err(e) => return fail(child, e),
            }
        } else {
            Input::Direct(stdin)
        };
        let tail = match (keep, child.stderr.take()) {
            (Some(n), Some(stderr)) => match tail(stderr, n) {
                Ok(t) => Some(t),
                Err(e) => return fail(child, e),
            },
            _ => None,
        };
        Ok(Process {
            child: Some(child),
            pid,
            input,
            events,
            tail,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Writes `line` and a newline. With a writer thread, queued: an error
    /// of an earlier write is reported here.
    pub fn send_line(&mut self, line: &[u8]) -> Result<(), String> {
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        match &mut self.input {
            Input::Direct(stdin) => stdin
                .write_all(&buf)
                .and_then(|()| stdin.flush())
                .map_err(|e| format!("cannot write to the server's stdin: {e}")),
            Input::Thread { to, error } => {
                if let Some(e) = error.lock().ok().and_then(|g| g.clone()) {
                    return Err(format!("cannot write to the server's stdin: {e}"));
                }
                to.send(buf).map_err(|_| {
                    "cannot write to the server's stdin: the writer has stopped".to_string()
                })
            }
            Input::Closed => Err("the server's stdin is already closed".to_string()),
        }
    }

    /// Closes the server's stdin (with a writer thread, once what is
    /// queued has been written).
    pub fn close_stdin(&mut self) {
        self.input = Input::Closed;
    }

    /// The next event from stdout, waiting at most `within`.
    pub fn recv(&self, within: Duration) -> Result<Event, RecvTimeoutError> {
        self.events.recv_timeout(within)
    }

    /// An event that has already arrived, if any.
    pub fn try_recv(&self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    /// The last lines of stderr, once it has been closed or `grace` has
    /// passed (empty without [`Stderr::Tail`]).
    pub fn stderr_tail(&self, grace: Duration) -> Vec<String> {
        let Some(t) = &self.tail else {
            return Vec::new();
        };
        let _ = t.done.recv_timeout(grace);
        match t.lines.lock() {
            Ok(l) => l.iter().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The child, for an owner that stops it its own way (the runner kills
    /// its process group); dropping the `Process` then leaves it alone.
    pub fn take_child(&mut self) -> Option<Child> {
        self.child.take()
    }

    /// Whether the child has exited (and its status), without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        match &mut self.child {
            Some(c) => c.try_wait(),
            None => Err(io::Error::other("the child was taken")),
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.input = Input::Closed;
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn writer(stdin: ChildStdin) -> io::Result<Input> {
    let (to, from) = mpsc::channel::<Vec<u8>>();
    let error = Arc::new(Mutex::new(None));
    let e2 = Arc::clone(&error);
    thread::Builder::new()
        .name("server-stdin".into())
        .spawn(move || {
            let mut stdin = stdin;
            for buf in from {
                if let Err(e) = stdin.write_all(&buf).and_then(|()| stdin.flush()) {
                    if let Ok(mut g) = e2.lock() {
                        *g = Some(e.to_string());
                    }
                    break;
                }
            }
            // Dropping `stdin` here closes the server's stdin.
        })?;
    Ok(Input::Thread { to, error })
}

fn tail(stderr: std::process::ChildStderr, keep: usize) -> io::Result<Tail> {
    let lines = Arc::new(Mutex::new(VecDeque::new()));
    let l2 = Arc::clone(&lines);
    let (done_tx, done) = mpsc::channel();
    thread::Builder::new()
        .name("server-stderr".into())
        .spawn(move || {
            let mut r = BufReader::new(stderr);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match (&mut r).take(MAX_STDERR_LINE).read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']).to_owned();
                        if let Ok(mut t) = l2.lock() {
                            t.push_back(line);
                            while t.len() > keep {
                                t.pop_front();
                            }
                        }
                    }
                }
            }
            let _ = done_tx.send(());
        })?;
    Ok(Tail { lines, done })
}

fn read_stdout(stdout: ChildStdout, tx: Sender<Event>) {
    let mut r = BufReader::with_capacity(1 << 20, stdout);
    loop {
        let mut buf = Vec::new();
        let ev = match (&mut r)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buf)
        {
            Ok(0) => Event::Eof,
            Ok(n) if n as u64 > MAX_LINE_BYTES => Event::TooLong,
            Ok(wire_len) => {
                let at = Instant::now();
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                }
                Event::Line {
                    at,
                    text: buf,
                    wire_len,
                }
            }
            Err(e) => Event::ReadError(e.to_string()),
        };
        let last = !matches!(ev, Event::Line { .. });
        if tx.send(ev).is_err() || last {
            return;
        }
    }
}

/// One JSON message the server wrote.
#[derive(Debug, Clone)]
pub struct Message {
    /// When its line had been read.
    pub at: Instant,
    /// Its line exactly as written (without the line end).
    pub line: String,
    /// Bytes on the wire, line end included.
    pub wire_len: usize,
    pub value: Value,
}

/// Why a wait ended without what it waited for.
#[derive(Debug, Clone, PartialEq)]
pub enum WaitError {
    Timeout,
    /// stdout closed, broke, or carried something that is not a JSON line.
    Closed(String),
}

impl std::fmt::Display for WaitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WaitError::Timeout => f.write_str("no answer in time"),
            WaitError::Closed(why) => f.write_str(why),
        }
    }
}

/// JSON-RPC over a [`Process`]: ids from 1, replies matched by id.
pub struct Client {
    pub process: Process,
    next_id: u64,
    /// Replies read while another was waited for.
    early: HashMap<u64, Message>,
    /// Lines that are not JSON are handed on as a `Message` with `Null`
    /// rather than ending the wait (a wrapper under the bench may print).
    lenient: bool,
}

impl Client {
    pub fn new(process: Process) -> Client {
        Client {
            process,
            next_id: 1,
            early: HashMap::new(),
            lenient: false,
        }
    }

    /// Lines that are not JSON are skipped (printed to stderr) instead of
    /// ending a wait: for a server started under a wrapper that prints.
    pub fn lenient(mut self) -> Client {
        self.lenient = true;
        self
    }

    /// Writes `msg` as one line.
    pub fn send(&mut self, msg: &Value) -> Result<(), String> {
        let line = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        self.process.send_line(&line)
    }

    /// Sends a request with a fresh id; returns the id and when the line
    /// was about to be written.
    pub fn send_request(&mut self, method: &str, params: Value) -> Result<(u64, Instant), String> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let line = serde_json::to_vec(&msg).map_err(|e| e.to_string())?;
        let t = Instant::now();
        self.process.send_line(&line)?;
        Ok((id, t))
    }

    /// Sends a notification (`params` left out when `None`).
    pub fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), String> {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg)
    }

    /// The next JSON message from the wire, waiting at most `within`.
    pub fn next_message(&mut self, within: Duration) -> Result<Message, WaitError> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = match self.process.recv(left) {
                Ok(ev) => ev,
                Err(RecvTimeoutError::Timeout) => return Err(WaitError::Timeout),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(WaitError::Closed("the stdout reader stopped".into()));
                }
            };
            let (at, text, wire_len) = match ev {
                Event::Line { at, text, wire_len } => (at, text, wire_len),
                Event::TooLong => {
                    return Err(WaitError::Closed(format!(
                        "a stdout line is longer than {MAX_LINE_BYTES} bytes"
                    )));
                }
                Event::Eof => return Err(WaitError::Closed("the server closed stdout".into())),
                Event::ReadError(e) => {
                    return Err(WaitError::Closed(format!("cannot read stdout: {e}")));
                }
            };
            let line = match String::from_utf8(text) {
                Ok(l) => l,
                Err(e) => return Err(WaitError::Closed(format!("stdout is not UTF-8: {e}"))),
            };
            match serde_json::from_str(&line) {
                Ok(value) => {
                    return Ok(Message {
                        at,
                        line,
                        wire_len,
                        value,
                    });
                }
                Err(_) if self.lenient => eprintln!("(wrapper) {line}"),
                Err(e) => {
                    return Err(WaitError::Closed(format!(
                        "the server wrote a line that is not JSON ({e}): {line:.200}"
                    )));
                }
            }
        }
    }

    /// The reply to `id`, waiting at most `within`. A reply to another id
    /// read meanwhile is kept for its own wait; notifications and requests
    /// from the server are passed over.
    pub fn wait_reply(&mut self, id: u64, within: Duration) -> Result<Message, WaitError> {
        if let Some(m) = self.early.remove(&id) {
            return Ok(m);
        }
        let deadline = Instant::now() + within;
        loop {
            let m = self.next_message(deadline.saturating_duration_since(Instant::now()))?;
            if m.value.get("method").is_some() {
                continue;
            }
            match m.value.get("id").and_then(Value::as_u64) {
                Some(got) if got == id => return Ok(m),
                Some(got) => {
                    self.early.insert(got, m);
                }
                None => {}
            }
        }
    }

    /// The next notification named `method`, keeping replies read
    /// meanwhile; other notifications are passed over.
    pub fn wait_notification(
        &mut self,
        method: &str,
        within: Duration,
    ) -> Result<Message, WaitError> {
        let deadline = Instant::now() + within;
        loop {
            let m = self.next_message(deadline.saturating_duration_since(Instant::now()))?;
            if m.value.get("method").and_then(Value::as_str) == Some(method) {
                return Ok(m);
            }
            if m.value.get("method").is_none()
                && let Some(got) = m.value.get("id").and_then(Value::as_u64)
            {
                self.early.insert(got, m);
            }
        }
    }

    /// `initialize` at `protocol` declaring `capabilities`, then
    /// `notifications/initialized`; the reply to `initialize`.
    pub fn initialize(
        &mut self,
        protocol: &str,
        capabilities: Value,
        client_name: &str,
        within: Duration,
    ) -> Result<Message, String> {
        let (id, _) = self.send_request(
            "initialize",
            json!({"protocolVersion": protocol, "capabilities": capabilities,
                   "clientInfo": {"name": client_name, "version": "0"}}),
        )?;
        let reply = self
            .wait_reply(id, within)
            .map_err(|e| format!("initialize: {e}"))?;
        self.notify("notifications/initialized", None)?;
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, options: Options) -> Process {
        Process::spawn(Command::new("sh").args(["-c", script]), options).unwrap()
    }

    #[test]
    fn replies_are_matched_by_id_in_any_order() {
        let p = sh(
            r#"read a; read b
            echo '{"jsonrpc":"2.0","method":"notifications/message","params":{}}'
            echo '{"jsonrpc":"2.0","id":2,"result":{"n":2}}'
            printf '{"jsonrpc":"2.0","id":1,"result":{"n":1}}\r\n'
            cat >/dev/null"#,
            Options::default(),
        );
        let mut c = Client::new(p);
        let (a, _) = c.send_request("a", json!({})).unwrap();
        let (b, _) = c.send_request("b", json!({})).unwrap();
        let r1 = c.wait_reply(a, Duration::from_secs(5)).unwrap();
        assert_eq!(r1.value["result"]["n"], 1);
        assert_eq!(r1.line, r#"{"jsonrpc":"2.0","id":1,"result":{"n":1}}"#);
        assert_eq!(r1.wire_len, r1.line.len() + 2);
        let r2 = c.wait_reply(b, Duration::from_secs(5)).unwrap();
        assert_eq!(r2.value["result"]["n"], 2);
        assert!(matches!(
            c.wait_reply(9, Duration::from_millis(100)),
            Err(WaitError::Timeout)
        ));
    }

    #[test]
    fn a_line_that_is_not_json_ends_a_wait_unless_lenient() {
        let script = r#"read a; echo 'hello'; echo '{"id":1,"result":{}}'; cat >/dev/null"#;
        let mut c = Client::new(sh(script, Options::default()));
        let (id, _) = c.send_request("x", json!({})).unwrap();
        match c.wait_reply(id, Duration::from_secs(5)) {
            Err(WaitError::Closed(m)) => assert!(m.contains("not JSON"), "{m}"),
            other => panic!("{other:?}"),
        }
        let mut c = Client::new(sh(script, Options::default())).lenient();
        let (id, _) = c.send_request("x", json!({})).unwrap();
        assert!(c.wait_reply(id, Duration::from_secs(5)).is_ok());
    }

    #[test]
    fn a_writer_thread_and_a_stderr_tail() {
        let mut p = sh(
            "read a; echo \"$a\" >&2; echo one >&2; echo two >&2; exit 3",
            Options {
                stderr: Stderr::Tail(2),
                writer_thread: true,
            },
        );
        p.send_line(b"hi").unwrap();
        assert!(matches!(p.recv(Duration::from_secs(5)), Ok(Event::Eof)));
        assert_eq!(p.stderr_tail(Duration::from_secs(5)), vec!["one", "two"]);
    }

    #[test]
    fn a_closed_stdout_ends_a_wait() {
        let mut c = Client::new(sh("exit 0", Options::default()));
        match c.wait_reply(1, Duration::from_secs(5)) {
            Err(WaitError::Closed(m)) => assert!(m.contains("closed"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
