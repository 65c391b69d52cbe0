//! Streamable HTTP (`--url`), the skills profile's second [`Transport`]:
//! each request POSTed to the server's endpoint and its reply read from a
//! JSON body or an SSE stream. The server is still started by the runner
//! for each unit (`--server`, with the adapter's way of handing it the
//! fixture and its `http` part); the URL is `--url`'s, with `${PORT}` a
//! free loopback port the runner picked, or — `--url stderr` — the first
//! `http://` URL the server writes on its stderr (this server's `--http
//! 127.0.0.1:0` logs `listening on http://127.0.0.1:PORT/mcp`).
//!
//! A 2025-11-25 session carries the `Mcp-Session-Id` the `initialize`
//! answer gave and `MCP-Protocol-Version` at the negotiated revision; a
//! 2026-07-28 request (its `_meta` names its protocol version) carries
//! `MCP-Protocol-Version`, `Mcp-Method` and, for the methods that name
//! something, `Mcp-Name` — SEP-2243's headers, a value no header can hold
//! as it is wrapped as `=?base64?…?=`. HTTP/1.1 by hand over a plain TCP
//! connection, one request a connection (`Connection: close`): `http://`
//! only.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use crate::json::clip;
use crate::session::Server;
use crate::skills::transport::{Broken, REQUEST_TIMEOUT, Transport};

/// How long a started server may take to say (or open) its address.
pub const LISTEN_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read (a 16 MiB skill's file, base64, with room).
const MAX_BODY: usize = 128 << 20;
/// Runner-assigned request ids start here, as over stdio.
const FIRST_ID: u64 = 1_000_001;

/// Where `--url` says the server listens.
#[derive(Clone, Debug, PartialEq)]
pub enum UrlSpec {
    /// A URL; `${PORT}` in it is replaced by the unit's free port.
    Template(String),
    /// The first `http://` URL the server writes on stderr.
    Stderr,
}

impl UrlSpec {
    pub fn parse(s: &str) -> Result<UrlSpec, String> {
        if s == "stderr" {
            return Ok(UrlSpec::Stderr);
        }
        Url::parse(&s.replace("${PORT}", "1"))
            .map_err(|e| format!("--url {s}: {e} (give http://HOST:PORT/PATH, `${{PORT}}` for a port the runner picks, or `stderr`)"))?;
        Ok(UrlSpec::Template(s.to_string()))
    }

    /// Whether the unit needs a free port picked for it.
    pub fn wants_port(&self) -> bool {
        matches!(self, UrlSpec::Template(t) if t.contains("${PORT}"))
    }
}

/// A free loopback port, as the system hands one out (closed again at
/// once: the server binds it next).
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

/// An `http://` URL, split.
#[derive(Clone, Debug, PartialEq)]
pub struct Url {
    /// `host:port` as the Host header says it.
    pub authority: String,
    pub host: String,
    pub port: u16,
    /// The path and query, `/` when none.
    pub target: String,
}

impl Url {
    pub fn parse(s: &str) -> Result<Url, String> {
        let rest = s
            .strip_prefix("http://")
            .ok_or_else(|| format!("`{s}` is not an http:// URL (https is not spoken here)"))?;
        let (authority, target) = match rest.find(['/', '?']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let target = if target.starts_with('?') {
            format!("/{target}")
        } else {
            target.to_string()
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && !p.contains(']') => (
                h.to_string(),
                p.parse::<u16>()
                    .map_err(|_| format!("`{s}`: `{p}` is not a port"))?,
            ),
            _ if !authority.is_empty() => (authority.to_string(), 80),
            _ => return Err(format!("`{s}` names no host")),
        };
        if target.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "`{s}`: the path holds a blank or a control character"
            ));
        }
        Ok(Url {
            authority: authority.to_string(),
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            target,
        })
    }
}

/// The first `http://…` word in `line`, if any.
pub fn url_in(line: &str) -> Option<&str> {
    let i = line.find("http://")?;
    let rest = &line[i..];
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '>' || c == ')')
        .unwrap_or(rest.len());
    Some(rest[..end].trim_end_matches(['.', ',', ';']))
}

/// One HTTP answer.
#[derive(Debug, PartialEq)]
pub struct Answer {
    pub status: u16,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The answer read so far, when it is an SSE stream that already holds a
/// whole event replying to `id`. Streamable HTTP says a server SHOULD
/// (not MUST) close the stream once the reply is sent, so one that keeps
/// it open has still answered (issue 45 review).
pub fn sse_reply_so_far(raw: &[u8], id: u64) -> Option<Answer> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let mut a = parse_head(&raw[..end]).ok()?;
    let sse = a
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
    if !sse {
        return None;
    }
    let rest = &raw[end + 4..];
    let chunked = a
        .header("transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        dechunk_so_far(rest)
    } else {
        rest.to_vec()
    };
    // Only whole events: up to the last blank line.
    let text = String::from_utf8_lossy(&body).replace("\r\n", "\n");
    let whole = text.rfind("\n\n")?;
    a.body = text.as_bytes()[..whole + 2].to_vec();
    let msgs = messages(&a).ok()?;
    msgs.iter()
        .any(|m| m.get("id") == Some(&serde_json::json!(id)) && m.get("method").is_none())
        .then_some(a)
}

/// The whole chunks at the start of a chunked body still being read.
fn dechunk_so_far(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&rest[..eol]).ok().and_then(|t| {
            usize::from_str_radix(t.split(';').next().unwrap_or_default().trim(), 16).ok()
        });
        let Some(size) = size else { break };
        rest = &rest[eol + 2..];
        if size == 0 || rest.len() < size + 2 {
            break;
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
    out
}

/// An answer's status line and headers (the bytes before the blank line),
/// with an empty body.
fn parse_head(raw: &[u8]) -> Result<Answer, String> {
    let head = std::str::from_utf8(raw).map_err(|_| "a head that is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|_| status_line.starts_with("HTTP/1."))
        .ok_or_else(|| format!("not an HTTP/1.x status line: `{}`", clip(status_line, 100)))?;
    let mut headers = Vec::new();
    for l in lines {
        let (n, v) = l
            .split_once(':')
            .ok_or_else(|| format!("a header line without a colon: `{}`", clip(l, 100)))?;
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    Ok(Answer {
        status,
        headers,
        body: Vec::new(),
    })
}

/// Splits a whole HTTP/1.1 answer (read to the connection's end) into its
/// status, headers and body, a chunked body joined.
pub fn parse_answer(raw: &[u8]) -> Result<Answer, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("an answer without a whole head ({} bytes)", raw.len()))?;
    let mut a = parse_head(&raw[..end])?;
    let rest = &raw[end + 4..];
    let chunked = a
        .header("transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    a.body = if chunked {
        dechunk(rest)?
    } else if let Some(n) = a.header("content-length") {
        let n: usize = n
            .parse()
            .map_err(|_| format!("Content-Length `{n}` is not a number"))?;
        if rest.len() < n {
            return Err(format!(
                "the body ended after {} of its {n} bytes",
                rest.len()
            ));
        }
        rest[..n].to_vec()
    } else {
        rest.to_vec()
    };
    Ok(a)
}

fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunked body cut off before its last chunk")?;
        let size_text = std::str::from_utf8(&rest[..eol]).map_err(|_| "a chunk size not UTF-8")?;
        let size_hex = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| format!("`{}` is not a chunk size", clip(size_text, 40)))?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if rest.len() < size + 2 {
            return Err("a chunk cut off".into());
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// The JSON-RPC messages of a body: one JSON value (or a batch), or the
/// `data` of each event of an SSE stream.
pub fn messages(answer: &Answer) -> Result<Vec<Value>, String> {
    let ct = answer
        .header("content-type")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let text = std::str::from_utf8(&answer.body).map_err(|_| "a body that is not UTF-8")?;
    if ct.starts_with("text/event-stream") {
        let text = text.replace("\r\n", "\n");
        let mut out = Vec::new();
        for event in text.split("\n\n") {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if data.is_empty() || data.iter().all(|d| d.is_empty()) {
                continue;
            }
            let v: Value = serde_json::from_str(&data.join("\n")).map_err(|e| {
                format!(
                    "an SSE event whose data is not JSON ({e}): {}",
                    clip(&data.join("\n"), 200)
                )
            })?;
            out.push(v);
        }
        return Ok(out);
    }
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("a body that is not JSON ({e}): {}", clip(text, 200)))?;
    Ok(match v {
        Value::Array(a) => a,
        v => vec![v],
    })
}

/// SEP-2243: a value that cannot travel as a bare header value — blanks
/// at either end, a control or non-ASCII character, or one that already
/// looks wrapped — travels as `=?base64?<base64>?=`.
pub fn header_value(v: &str) -> String {
    let needs = v.starts_with([' ', '\t'])
        || v.ends_with([' ', '\t'])
        || v.chars().any(|c| (c as u32) < 0x20 || (c as u32) > 0x7e)
        || (v.starts_with("=?base64?") && v.ends_with("?="));
    if needs {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(v)
        )
    } else {
        v.to_string()
    }
}

/// The standard headers of a 2026-07-28 request: its method, and what it
/// names for the methods that name something.
pub fn standard_headers(method: &str, params: Option<&Value>) -> Vec<(String, String)> {
    let mut h = vec![("Mcp-Method".to_string(), header_value(method))];
    let key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Some("uri"),
        _ => None,
    };
    if let Some(name) = key.and_then(|k| params?.get(k)).and_then(Value::as_str) {
        h.push(("Mcp-Name".to_string(), header_value(name)));
    }
    h
}

/// A server started by the runner, spoken to over Streamable HTTP.
pub struct Http {
    server: Server,
    url: Url,
    deadline: Instant,
    last: Option<String>,
    next_id: u64,
    /// The session's id and negotiated revision, once `initialize` gave
    /// them.
    session: Option<String>,
    session_protocol: Option<String>,
}

impl Http {
    /// Waits until `server` listens where `spec` says (its stderr names
    /// the URL, or the port opens), within [`LISTEN_TIMEOUT`]; when it
    /// does not, stops it and says why, with its stderr.
    pub fn connect(
        server: Server,
        spec: &UrlSpec,
        port: Option<u16>,
        deadline: Instant,
    ) -> Result<Http, String> {
        let until = (Instant::now() + LISTEN_TIMEOUT).min(deadline);
        let found = loop {
            if let Some(how) = server.exited() {
                break Err(format!("the server {how} before it listened"));
            }
            match spec {
                UrlSpec::Stderr => {
                    if let Some(u) = server
                        .stderr_so_far()
                        .iter()
                        .find_map(|l| url_in(l).map(String::from))
                    {
                        break Url::parse(&u).map_err(|e| format!("its stderr's URL: {e}"));
                    }
                }
                UrlSpec::Template(t) => {
                    let text = match port {
                        Some(p) => t.replace("${PORT}", &p.to_string()),
                        None => t.clone(),
                    };
                    match Url::parse(&text) {
                        Err(e) => break Err(e),
                        Ok(u) => {
                            if open(&u, Duration::from_millis(200)).is_ok() {
                                break Ok(u);
                            }
                        }
                    }
                }
            }
            if Instant::now() >= until {
                break Err(match spec {
                    UrlSpec::Stderr => format!(
                        "the server wrote no http:// URL on its stderr within {} s",
                        LISTEN_TIMEOUT.as_secs()
                    ),
                    UrlSpec::Template(t) => format!(
                        "nothing listened at {t} (port {}) within {} s",
                        port.map_or("-".into(), |p| p.to_string()),
                        LISTEN_TIMEOUT.as_secs()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(25));
        };
        match found {
            Ok(url) => Ok(Http {
                server,
                url,
                deadline,
                last: None,
                next_id: FIRST_ID,
                session: None,
                session_protocol: None,
            }),
            Err(why) => {
                let f = server.terminate(Duration::from_secs(1));
                let mut m = format!("over Streamable HTTP: {why}; the server {}", f.exit);
                if !f.stderr_tail.is_empty() {
                    m.push_str(&format!("; stderr: {}", f.stderr_tail.join(" | ")));
                }
                Err(m)
            }
        }
    }

    /// One exchange: `verb` with `body` and `extra` headers, the answer
    /// read to the connection's end — or, for a request (`want` its id),
    /// until an SSE stream holds the whole reply.
    fn exchange(
        &self,
        verb: &str,
        body: &str,
        extra: &[(String, String)],
        want: Option<u64>,
    ) -> Result<Answer, Broken> {
        let until = (Instant::now() + REQUEST_TIMEOUT).min(self.deadline);
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Broken("the case ran past its deadline".into()));
        }
        let mut s = open(&self.url, left).map_err(Broken)?;
        let mut head = format!(
            "{verb} {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.url.target,
            self.url.authority,
            body.len()
        );
        let mut all: Vec<(String, String)> = Vec::new();
        if let Some(id) = &self.session {
            all.push(("Mcp-Session-Id".into(), id.clone()));
        }
        all.extend(extra.iter().cloned());
        for (n, v) in &all {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes())
            .and_then(|()| s.write_all(body.as_bytes()))
            .map_err(|e| {
                Broken(format!(
                    "cannot send the request to {}: {e}",
                    self.url.authority
                ))
            })?;
        let mut raw = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Broken(format!(
                    "no whole answer within {} s ({} bytes read)",
                    REQUEST_TIMEOUT.as_secs(),
                    raw.len()
                )));
            }
            let _ = s.set_read_timeout(Some(left));
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    raw.extend_from_slice(&buf[..n]);
                    if raw.len() > MAX_BODY {
                        return Err(Broken(format!("an answer past {} MiB", MAX_BODY >> 20)));
                    }
                    // Looked for only when these bytes may end an event,
                    // so a long answer is not parsed once per read.
                    let from = raw.len().saturating_sub(n + 3);
                    let ends_event = raw[from..].windows(2).any(|w| w == b"\n\n")
                        || raw[from..].windows(4).any(|w| w == b"\r\n\r\n");
                    if ends_event && let Some(a) = want.and_then(|id| sse_reply_so_far(&raw, id)) {
                        return Ok(a);
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Broken(format!("reading the answer: {e}")));
                }
            }
        }
        parse_answer(&raw).map_err(Broken)
    }

    /// The headers a request carries besides the session's.
    fn headers_for(&self, method: &str, params: Option<&Value>) -> Vec<(String, String)> {
        let per_request = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
            .and_then(Value::as_str);
        match per_request {
            Some(v) => {
                let mut h = vec![("MCP-Protocol-Version".to_string(), header_value(v))];
                h.extend(standard_headers(method, params));
                h
            }
            None => self
                .session_protocol
                .iter()
                .map(|v| ("MCP-Protocol-Version".to_string(), header_value(v)))
                .collect(),
        }
    }
}

/// A connection to `url`, within `within`.
fn open(url: &Url, within: Duration) -> Result<TcpStream, String> {
    let addrs: Vec<_> = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", url.authority))?
        .collect();
    let mut last = format!("{} resolves to no address", url.authority);
    for a in addrs {
        match TcpStream::connect_timeout(&a, within.max(Duration::from_millis(1))) {
            Ok(s) => {
                let _ = s.set_write_timeout(Some(REQUEST_TIMEOUT));
                return Ok(s);
            }
            Err(e) => last = format!("cannot connect to {}: {e}", url.authority),
        }
    }
    Err(last)
}

impl Transport for Http {
    fn request(&mut self, method: &str, params: Option<&Value>) -> Result<Value, Broken> {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p.clone();
        }
        let body = msg.to_string();
        self.last = Some(body.clone());
        let headers = self.headers_for(method, params);
        let a = self.exchange("POST", &body, &headers, Some(id))?;
        let msgs =
            messages(&a).map_err(|e| Broken(format!("HTTP {} to `{method}`: {e}", a.status)))?;
        let reply = msgs
            .into_iter()
            .find(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
            .ok_or_else(|| {
                Broken(format!(
                    "HTTP {} to `{method}` carried no reply to id {id}: {}",
                    a.status,
                    clip(&String::from_utf8_lossy(&a.body), 300)
                ))
            })?;
        if method == "initialize"
            && let Some(r) = reply.get("result")
        {
            self.session = a.header("mcp-session-id").map(String::from);
            self.session_protocol = r
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(String::from);
        }
        Ok(reply)
    }

    fn notify(&mut self, method: &str, params: Option<&Value>) -> Result<(), Broken> {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p.clone();
        }
        let headers = self.headers_for(method, params);
        let a = self.exchange("POST", &msg.to_string(), &headers, None)?;
        if (200..300).contains(&a.status) {
            Ok(())
        } else {
            Err(Broken(format!(
                "HTTP {} to the notification `{method}`: {}",
                a.status,
                clip(&String::from_utf8_lossy(&a.body), 300)
            )))
        }
    }

    fn last_sent(&self) -> Option<&str> {
        self.last.as_deref()
    }

    fn finish(self: Box<Self>) -> (String, Vec<String>) {
        if self.session.is_some() {
            // Ending the session is the client's courtesy; its answer is
            // not judged.
            let _ = self.exchange("DELETE", "", &[], None);
        }
        let f = self.server.terminate(Duration::from_secs(2));
        (f.exit, f.stderr_tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_and_the_stderr_form_is_found() {
        let u = Url::parse("http://127.0.0.1:8080/mcp").unwrap();
        assert_eq!(
            (
                u.host.as_str(),
                u.port,
                u.target.as_str(),
                u.authority.as_str()
            ),
            ("127.0.0.1", 8080, "/mcp", "127.0.0.1:8080")
        );
        let u = Url::parse("http://[::1]:9/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 9));
        assert_eq!(Url::parse("http://h").unwrap().target, "/");
        assert!(Url::parse("https://h/").is_err());
        assert!(Url::parse("http://h:x/").is_err());
        assert_eq!(
            url_in("skill-mcp: listening on http://127.0.0.1:41234/mcp"),
            Some("http://127.0.0.1:41234/mcp")
        );
        assert_eq!(
            url_in("Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C)"),
            Some("http://0.0.0.0:8000")
        );
        assert_eq!(url_in("nothing here"), None);
        assert_eq!(UrlSpec::parse("stderr").unwrap(), UrlSpec::Stderr);
        assert!(
            UrlSpec::parse("http://127.0.0.1:${PORT}/mcp")
                .unwrap()
                .wants_port()
        );
        assert!(UrlSpec::parse("ftp://x").is_err());
    }

    #[test]
    fn answers_are_read_as_json_or_sse_chunked_or_not() {
        let a = parse_answer(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 26\r\n\r\n{\"id\":1,\"result\":{\"x\":1}}\nextra",
        )
        .unwrap();
        assert_eq!(a.status, 200);
        assert_eq!(
            messages(&a).unwrap(),
            vec![json!({"id": 1, "result": {"x": 1}})]
        );
        let sse = "event: message\r\ndata: {\"method\":\"n\"}\r\n\r\nid: 3\ndata: {\"id\":2,\ndata: \"result\":{}}\n\n";
        let chunked = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\nMcp-Session-Id: s1\r\n\r\n{:x}\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
            10,
            &sse[..10],
            sse.len() - 10,
            &sse[10..]
        );
        let a = parse_answer(chunked.as_bytes()).unwrap();
        assert_eq!(a.header("mcp-session-id"), Some("s1"));
        assert_eq!(
            messages(&a).unwrap(),
            vec![json!({"method": "n"}), json!({"id": 2, "result": {}})]
        );
        let a = parse_answer(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert_eq!((a.status, messages(&a).unwrap()), (202, vec![]));
        assert!(parse_answer(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}").is_err());
        assert!(parse_answer(b"garbage").is_err());
        assert!(parse_answer(b"SIP/2.0 200 OK\r\n\r\n").is_err());
    }

    #[test]
    fn the_2026_headers_name_the_method_and_what_it_names() {
        assert_eq!(
            standard_headers(
                "resources/read",
                Some(&json!({"uri": "skill://a/SKILL.md"}))
            ),
            vec![
                ("Mcp-Method".to_string(), "resources/read".to_string()),
                ("Mcp-Name".to_string(), "skill://a/SKILL.md".to_string())
            ]
        );
        assert_eq!(standard_headers("skills/list", Some(&json!({}))).len(), 1);
        assert_eq!(
            header_value("skill://a/b\0c"),
            "=?base64?c2tpbGw6Ly9hL2IAYw==?="
        );
        assert!(header_value("skill://é").starts_with("=?base64?"));
        assert!(header_value(" x").starts_with("=?base64?"));
        assert_eq!(header_value("a b"), "a b");
    }
}
