//! A server over Streamable HTTP for the integration tests (tests/http.rs,
//! tests/http/, tests/wire.rs): the built binary started with `--http` on a free
//! port, and spoken to with hand-written HTTP/1.1 over a plain `TcpStream`
//! — a request a connection (`Connection: close`), its answer read to the
//! end — so what is checked is the bytes on the wire.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::BIN;

pub const TOKEN: &str = "a-test-token-0123456789";

/// A server over HTTP, killed when dropped.
pub struct Server {
    pub child: Child,
    pub port: u16,
    pub _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tree of one skill, `demo`, with a bundled file and a declared script.
pub fn skills() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    let skill = dir.path().join("demo");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: demo\ndescription: A demo skill for the HTTP tests.\nmcp-host:\n  version: 1\n  run:\n    - script: scripts/hi.js\n      interpreter: node\n---\nRead notes.md.\n",
    )
    .expect("SKILL.md");
    std::fs::write(skill.join("notes.md"), "the notes\n").expect("notes");
    std::fs::write(
        skill.join("scripts/hi.js"),
        "if (process.argv[2]) require('fs').writeFileSync(process.argv[2], 'started');\n\
         setTimeout(() => console.log('hi'), 2000)\n",
    )
    .expect("script");
    dir
}

/// Starts `skill-mcp --http ADDR args…` and reads the port it prints.
pub fn start(addr: &str, args: &[&str], env: &[(&str, &str)]) -> Server {
    start_in(skills(), addr, args, env)
}

/// Spawns `skill-mcp args…` serving `dir` with a clean environment plus
/// `env`, and passes each line it writes on stderr to the receiver (and
/// keeps reading its stderr when the receiver is gone).
pub fn spawn(
    dir: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SKILLS_DIR", dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let stderr = child.stderr.take().expect("stderr piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            // Read on after nobody listens: a server whose stderr pipe
            // filled would block in its next log line.
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// As [`start`], serving `dir`.
pub fn start_in(dir: tempfile::TempDir, addr: &str, args: &[&str], env: &[(&str, &str)]) -> Server {
    start_logged(dir, addr, args, env).0
}

/// As [`start_in`], with what the server says on stderr after it listens.
pub fn start_logged(
    dir: tempfile::TempDir,
    addr: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Server, std::sync::mpsc::Receiver<String>) {
    let mut all = vec!["--http", addr];
    all.extend_from_slice(args);
    let (child, lines) = spawn(dir.path(), &all, env);
    let deadline = Instant::now() + Duration::from_secs(30);
    let at = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .expect("the server says where it listens");
        if let Some(i) = line.find("listening on http://") {
            break line[i + "listening on http://".len()..].to_owned();
        }
    };
    let port = at
        .split('/')
        .next()
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .expect("a port");
    (
        Server {
            child,
            port,
            _dir: dir,
        },
        lines,
    )
}

/// One HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message the body carries: the body itself, or the
    /// last `data:` event of an SSE stream.
    pub fn json(&self) -> Value {
        if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            let data = self
                .body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|d| d.starts_with('{'))
                .unwrap_or_else(|| panic!("no JSON event in {self:?}"));
            serde_json::from_str(data).expect("an event of JSON")
        } else {
            serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
        }
    }
}

pub fn raw(port: u16, request: &[u8]) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    s.write_all(request).expect("send");
    let mut bytes = Vec::new();
    s.read_to_end(&mut bytes).expect("read the answer");
    parse(&bytes)
}

/// An answer's status and fields, from its head (without the blank line).
pub fn head_fields(head: &str) -> (u16, Vec<(String, String)>) {
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    (status, headers)
}

pub fn parse(bytes: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    let (status, headers) = head_fields(head);
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        unchunk(body)
    } else {
        body.to_owned()
    };
    Answer {
        status,
        headers,
        body,
    }
}

pub fn unchunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// A POST of `body` to /mcp with the headers a Streamable HTTP client
/// sends, plus `extra`, as bytes for the wire.
pub fn post_request(port: u16, body: &str, extra: &[(&str, &str)]) -> String {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    req
}

/// POSTs `body` to /mcp ([`post_request`]) and reads the whole answer.
pub fn post(port: u16, body: &str, extra: &[(&str, &str)]) -> Answer {
    raw(port, post_request(port, body, extra).as_bytes())
}

pub fn rpc(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

pub fn initialize(port: u16, extra: &[(&str, &str)]) -> String {
    initialize_declaring(port, extra, json!({}))
}

/// As [`initialize`], declaring `capabilities`.
pub fn initialize_declaring(port: u16, extra: &[(&str, &str)], capabilities: Value) -> String {
    let a = post(
        port,
        &rpc(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "tests", "version": "0"}}),
        ),
        extra,
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.json()["result"]["serverInfo"]["name"],
        "skill-mcp",
        "{a:?}"
    );
    let session = a.header("mcp-session-id").expect("a session id").to_owned();
    let mut with = extra.to_vec();
    with.push(("Mcp-Session-Id", &session));
    let n = post(
        port,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        &with,
    );
    assert_eq!(n.status, 202, "{n:?}");
    session
}

pub fn tool_names(list: &Value) -> Vec<&str> {
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {list}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect()
}

pub use super::sockets::*;

/// What a 2026-07-28 request carries instead of a session.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A stateless (2026-07-28) request under `id`, with its `_meta`.
pub fn stateless(id: u64, method: &str, mut params: Value) -> String {
    params["_meta"] = meta();
    rpc(id, method, params)
}

/// The 2026-07-28 headers of a request for `method`.
pub fn headers(method: &str) -> Vec<(&str, &str)> {
    vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ]
}

/// As [`headers`], with the `Mcp-Name` of the methods that carry one.
pub fn headers_named<'a>(method: &'a str, name: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut h = headers(method);
    h.push(("Mcp-Name", name));
    h
}

/// A 2025-11-25 `initialize` under `id`, as a body.
pub fn init_body(id: u64) -> String {
    rpc(
        id,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "attack", "version": "0"}}),
    )
}

/// A stateless `tools/list` under `id`, its connection closed after.
pub fn tools_list(port: u16, id: u64) -> Answer {
    post(
        port,
        &stateless(id, "tools/list", json!({})),
        &headers("tools/list"),
    )
}

/// A stateless `tools/list` under `id` as bytes for the wire, on a kept
/// connection (no `Connection: close`) unless `close`.
pub fn tools_list_bytes(port: u16, id: u64, close: bool) -> String {
    let r = post_request(
        port,
        &stateless(id, "tools/list", json!({})),
        &headers("tools/list"),
    );
    if close {
        r
    } else {
        r.replace("Connection: close\r\n", "")
    }
}

/// A plain stateless `tools/list` on a connection of its own, timed: its
/// status (`None` when no answer came within 60 s) and its body.
pub fn timed_tools_list(port: u16) -> (Option<u16>, String, Duration) {
    let t = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let req = post_request(
        port,
        &stateless(9, "tools/list", json!({})),
        &headers("tools/list"),
    );
    s.write_all(req.as_bytes()).expect("send");
    let mut bytes = Vec::new();
    match s.read_to_end(&mut bytes) {
        Ok(_) if !bytes.is_empty() => {
            let a = parse(&bytes);
            (Some(a.status), a.body, t.elapsed())
        }
        _ => (None, String::new(), t.elapsed()),
    }
}

/// The bytes of a `subscriptions/listen` under `id` on a kept connection.
pub fn listen_request(port: u16, id: u64) -> String {
    let body = stateless(
        id,
        "subscriptions/listen",
        json!({"notifications": {"promptsListChanged": true}}),
    );
    post_request(port, &body, &headers("subscriptions/listen")).replace("Connection: close\r\n", "")
}

/// A `subscriptions/listen` opened on a connection of its own and held,
/// once its head is read; its head when it was not served.
pub fn open_listen(port: u16, id: u64) -> Result<TcpStream, String> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(listen_request(port, id).as_bytes())
        .expect("send the listen");
    let head = head_of(&mut c);
    if head.starts_with("HTTP/1.1 200") {
        Ok(c)
    } else {
        Err(head)
    }
}

/// A tree with the `demo` skill and a skill `big` bundling four text
/// files of 1,048,476 bytes each (a skill author's large references):
/// together just under the 4 MiB a `skill_file` batch returns.
pub fn big_files() -> tempfile::TempDir {
    let dir = skills();
    let big = dir.path().join("big");
    std::fs::create_dir_all(&big).expect("mkdir");
    std::fs::write(
        big.join("SKILL.md"),
        "---\nname: big\ndescription: Large reference files.\n---\nRead f0.md to f3.md.\n",
    )
    .expect("SKILL.md");
    let alphabet = b"abcdefghij \n";
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..4 {
        let text: Vec<u8> = (0..1_048_476)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize]
            })
            .collect();
        std::fs::write(big.join(format!("f{i}.md")), text).expect("a big file");
    }
    dir
}

/// A 2025-11-25 session over HTTP, what [`super::Session`] is over stdio:
/// opened with `initialize` and `notifications/initialized`, each request
/// sent under its id with the headers it was opened with, closed with a
/// DELETE. Requests are numbered from 2 (the `initialize` is 1).
pub struct HttpSession {
    pub port: u16,
    pub id: String,
    extra: Vec<(String, String)>,
    next: u64,
}

impl HttpSession {
    /// A session on `port`, declaring no capabilities.
    pub fn open(port: u16) -> HttpSession {
        Self::open_declaring(port, &[], json!({}))
    }

    /// A session on `port` sending `extra` with every request (a token, an
    /// origin), declaring `capabilities`.
    pub fn open_declaring(port: u16, extra: &[(&str, &str)], capabilities: Value) -> HttpSession {
        let id = initialize_declaring(port, extra, capabilities);
        HttpSession {
            port,
            id,
            extra: extra
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            next: 2,
        }
    }

    /// The headers of a request in this session.
    pub fn headers(&self) -> Vec<(&str, &str)> {
        let mut h: Vec<(&str, &str)> = self
            .extra
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        h.push(("Mcp-Session-Id", &self.id));
        h
    }

    /// POSTs `body` in this session and reads the whole answer.
    pub fn post(&self, body: &str) -> Answer {
        post(self.port, body, &self.headers())
    }

    /// Sends `method` under the next id; the JSON-RPC answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.post(&rpc(id, method, params)).json()
    }

    /// Calls the tool `name` with `arguments`; the JSON-RPC answer.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Ends the session with a DELETE; its answer.
    pub fn close(self) -> Answer {
        delete(self.port, &self.id)
    }
}

/// A DELETE of `session`, on a connection of its own; its answer.
pub fn delete(port: u16, session: &str) -> Answer {
    raw(
        port,
        format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {session}\r\n\
             Connection: close\r\n\r\n"
        )
        .as_bytes(),
    )
}

/// The bytes of a GET of `session`'s stream, on a kept connection.
pub fn get_request(port: u16, session: &str) -> String {
    format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\n\r\n"
    )
}
