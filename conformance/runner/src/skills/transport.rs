//! How the skills profile reaches a server: a [`Transport`] carries one
//! request and its reply (stdio here; Streamable HTTP, `--url`, is
//! `http::Http`), and a [`Client`] speaks one
//! of the two lifecycles over it — a 2025-11-25 `initialize` session, or
//! 2026-07-28 requests that each carry their protocol version and client
//! capabilities in `_meta`.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::case::Mode;
use crate::runner::{INIT_PROTOCOL, with_stateless_meta};
use crate::session::{Server, WaitError};

/// How long one request may wait for its reply.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// Why a request got no reply: the server, not the case, is at fault.
#[derive(Debug, Clone, PartialEq)]
pub struct Broken(pub String);

/// One request at a time to a server, and its reply.
pub trait Transport {
    /// Sends a request and waits for its reply (the whole JSON-RPC
    /// message); the text sent is kept for reports.
    fn request(&mut self, method: &str, params: Option<&Value>) -> Result<Value, Broken>;
    /// Sends a notification.
    fn notify(&mut self, method: &str, params: Option<&Value>) -> Result<(), Broken>;
    /// The last request sent, as sent.
    fn last_sent(&self) -> Option<&str>;
    /// Stops the server when the transport started it: how it ended, and
    /// the last lines of its stderr.
    fn finish(self: Box<Self>) -> (String, Vec<String>);
}

/// A server started as a command, speaking newline-delimited JSON-RPC on
/// its stdin and stdout.
pub struct Stdio {
    server: Server,
    deadline: Instant,
    last: Option<String>,
}

impl Stdio {
    /// Starts `argv` in `cwd` with exactly `env`; every wait ends by
    /// `deadline` at the latest.
    pub fn spawn(
        argv: &[String],
        env: &[(String, OsString)],
        cwd: &Path,
        deadline: Instant,
    ) -> Result<Stdio, String> {
        Ok(Stdio {
            server: Server::spawn(argv, env, cwd)?,
            deadline,
            last: None,
        })
    }
}

impl Transport for Stdio {
    fn request(&mut self, method: &str, params: Option<&Value>) -> Result<Value, Broken> {
        let (id, sent) = self.server.send_request(method, params).map_err(Broken)?;
        self.last = Some(sent);
        let timeout = Instant::now() + REQUEST_TIMEOUT;
        let got = self.server.wait_reply(id, timeout, self.deadline);
        let strays = self.server.strays_note();
        got.map_err(|e| {
            Broken(match e {
                WaitError::Timeout => format!(
                    "no reply to `{method}` within {} s{}",
                    REQUEST_TIMEOUT.as_secs(),
                    strays.unwrap_or_default()
                ),
                WaitError::Deadline => {
                    format!("the case ran past its deadline waiting for `{method}`")
                }
                WaitError::Broken(m) => format!("{m} (waiting for the reply to `{method}`)"),
            })
        })
    }

    fn notify(&mut self, method: &str, params: Option<&Value>) -> Result<(), Broken> {
        self.server
            .send_notification(method, params)
            .map(|_| ())
            .map_err(Broken)
    }

    fn last_sent(&self) -> Option<&str> {
        self.last.as_deref()
    }

    fn finish(self: Box<Self>) -> (String, Vec<String>) {
        let f = self.server.finish();
        (f.exit, f.stderr_tail)
    }
}

/// A lifecycle over a transport: `Mode::Initialize` is a 2025-11-25
/// session, `Mode::Stateless` the 2026-07-28 per-request `_meta`.
pub struct Client {
    transport: Box<dyn Transport>,
    pub mode: Mode,
    /// The `initialize` result, in a session.
    pub initialized: Option<Value>,
    /// Requests sent so far (the handshake included).
    pub requests: usize,
}

/// A reply without `jsonrpc` and `id`: its `result` or `error`.
pub fn body(mut reply: Value) -> Value {
    if let Value::Object(m) = &mut reply {
        m.remove("jsonrpc");
        m.remove("id");
    }
    reply
}

impl Client {
    /// A client of `mode` over `transport`, not yet opened.
    pub fn new(transport: Box<dyn Transport>, mode: Mode) -> Client {
        Client {
            transport,
            mode,
            initialized: None,
            requests: 0,
        }
    }

    /// Opens the lifecycle: in a session, `initialize` (whose reply must
    /// be a result) and `notifications/initialized`; per request, nothing.
    pub fn open(&mut self) -> Result<(), Broken> {
        if self.mode != Mode::Initialize {
            return Ok(());
        }
        let params = json!({
            "protocolVersion": INIT_PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "skill-mcp-conformance", "version": env!("CARGO_PKG_VERSION")}
        });
        let reply = self.transport.request("initialize", Some(&params))?;
        self.requests += 1;
        match reply.get("result") {
            Some(r) if r.is_object() => self.initialized = Some(r.clone()),
            _ => {
                return Err(Broken(format!(
                    "the server did not accept initialize: {}",
                    crate::json::clip(&reply.to_string(), 400)
                )));
            }
        }
        self.transport.notify("notifications/initialized", None)
    }

    /// One request in this lifecycle: the reply's `result` or `error`.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, Broken> {
        let params = match self.mode {
            Mode::Stateless => with_stateless_meta(Some(&params)),
            _ => params,
        };
        self.requests += 1;
        self.transport.request(method, Some(&params)).map(body)
    }

    /// The capabilities the server declares in this lifecycle: the
    /// session's `initialize` result's, or `server/discover`'s.
    pub fn capabilities(&mut self) -> Result<Value, Broken> {
        if let Some(init) = &self.initialized {
            return Ok(
                json!({"capabilities": init.get("capabilities").cloned().unwrap_or(Value::Null)}),
            );
        }
        let reply = self.call("server/discover", Value::Object(Map::new()))?;
        Ok(match reply.get("result") {
            Some(r) => {
                json!({"capabilities": r.get("capabilities").cloned().unwrap_or(Value::Null)})
            }
            None => {
                json!({"capabilities": null, "error": reply.get("error").cloned().unwrap_or(reply)})
            }
        })
    }

    pub fn last_sent(&self) -> Option<&str> {
        self.transport.last_sent()
    }

    pub fn finish(self) -> (String, Vec<String>) {
        self.transport.finish()
    }
}

/// What the server calls itself: the session's `serverInfo`, or the one
/// `server/discover` carries (in `_meta`, or as a member).
pub fn server_info(result: &Value) -> Option<Value> {
    result
        .get("serverInfo")
        .or_else(|| {
            result
                .get("_meta")?
                .get("io.modelcontextprotocol/serverInfo")
        })
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transport that answers from a script, for the lifecycle logic.
    struct Scripted {
        sent: Vec<(String, Option<Value>)>,
        replies: Vec<Value>,
    }

    impl Transport for Scripted {
        fn request(&mut self, method: &str, params: Option<&Value>) -> Result<Value, Broken> {
            self.sent.push((method.into(), params.cloned()));
            if self.replies.is_empty() {
                return Err(Broken("no more replies".into()));
            }
            Ok(self.replies.remove(0))
        }
        fn notify(&mut self, method: &str, params: Option<&Value>) -> Result<(), Broken> {
            self.sent.push((method.into(), params.cloned()));
            Ok(())
        }
        fn last_sent(&self) -> Option<&str> {
            self.sent.last().map(|(m, _)| m.as_str())
        }
        fn finish(self: Box<Self>) -> (String, Vec<String>) {
            (format!("{:?}", self.sent), Vec::new())
        }
    }

    #[test]
    fn a_session_initializes_and_per_request_sends_meta_on_every_call() {
        let t = Scripted {
            sent: Vec::new(),
            replies: vec![
                json!({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {"x": {}}}}),
                json!({"jsonrpc": "2.0", "id": 2, "result": {"skills": []}}),
            ],
        };
        let mut c = Client::new(Box::new(t), Mode::Initialize);
        c.open().unwrap();
        assert_eq!(
            c.call("skills/list", json!({})).unwrap(),
            json!({"result": {"skills": []}})
        );
        assert_eq!(
            c.capabilities().unwrap(),
            json!({"capabilities": {"x": {}}})
        );
        let (log, _) = c.finish();
        assert!(
            log.contains("initialize") && log.contains("notifications/initialized"),
            "{log}"
        );
        assert!(
            !log.contains("protocolVersion\\\": String(\\\"2026"),
            "{log}"
        );

        let t = Scripted {
            sent: Vec::new(),
            replies: vec![json!({"id": 1, "result": {"capabilities": {"y": {}}}})],
        };
        let mut c = Client::new(Box::new(t), Mode::Stateless);
        c.open().unwrap();
        assert_eq!(
            c.capabilities().unwrap(),
            json!({"capabilities": {"y": {}}})
        );
        let (log, _) = c.finish();
        assert!(log.starts_with("[(\"server/discover\""), "{log}");
        assert!(log.contains("2026-07-28"), "{log}");
    }

    #[test]
    fn a_refused_initialize_is_a_broken_server() {
        let t = Scripted {
            sent: Vec::new(),
            replies: vec![json!({"id": 1, "error": {"code": -32600, "message": "no"}})],
        };
        let e = Client::new(Box::new(t), Mode::Initialize)
            .open()
            .unwrap_err();
        assert!(e.0.contains("did not accept initialize"), "{e:?}");
    }

    #[test]
    fn server_info_is_found_in_either_place() {
        assert_eq!(
            server_info(&json!({"serverInfo": {"name": "a"}})),
            Some(json!({"name": "a"}))
        );
        assert_eq!(
            server_info(&json!({"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "b"}}})),
            Some(json!({"name": "b"}))
        );
        assert_eq!(server_info(&json!({})), None);
    }
}
