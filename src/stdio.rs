//! The line-level guard between this process's stdio and rmcp.
//!
//! rmcp's own stdio transport ends the session on some inputs a careful
//! server must survive (a notification before the handshake, for one) and
//! stays silent on others (a line that is not JSON). Every line from the
//! client passes through here first (spec WIRE-001..WIRE-005):
//!
//! * a line that is not JSON gets JSON-RPC error -32700, one that is JSON
//!   but not a JSON-RPC message -32600, a batch -32600 (MCP has none) — each
//!   with `id: null` (or the request's id when it has one) — and the session
//!   goes on;
//! * a line over [`MAX_LINE_BYTES`] is refused without being held whole;
//! * before the lifecycle starts (an `initialize`, or a request carrying
//!   2026-07-28 `_meta`), notifications and stray responses are dropped and
//!   logged rather than ending the session;
//! * at most [`MAX_IN_FLIGHT`] requests are unanswered at once: a client
//!   that stops reading its stdout stops being read from, so memory stays
//!   bounded instead of queueing answers nobody collects;
//! * what a reply would echo whole is bounded (spec HARD-005): a request
//!   id longer than [`MAX_ID_BYTES`] is refused without it; a request
//!   whose method is longer than [`MAX_METHOD_BYTES`] is -32601 here,
//!   quoting an excerpt, since rmcp's -32601 quotes the method whole; and
//!   a `skills/get` whose URI is longer than any SKILL.md URI this server
//!   can serve is -32602 here, since rmcp checks that URI's shape before
//!   the handler and quotes it whole.

use std::sync::Arc;

use serde_json::Value;

use crate::echo::{EXCERPT_BYTES, excerpt};
use crate::limits::MAX_SKILL_NAME_BYTES;
use crate::uri;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::{Semaphore, mpsc};

/// Longest line accepted from the client: 16 MiB holds any legitimate
/// request (tool arguments are capped far below it) and bounds what one
/// line can cost.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Most requests in flight at once.
pub const MAX_IN_FLIGHT: usize = 64;

/// Longest string id a request may carry. Every answer carries its
/// request's id whole (JSON-RPC), so an id is taken only when it is no
/// longer than an excerpt; real clients send numbers or UUIDs.
pub const MAX_ID_BYTES: usize = EXCERPT_BYTES;

/// Longest method passed on to rmcp, whose "method not found" quotes the
/// method whole. Every MCP method is a few dozen bytes.
pub const MAX_METHOD_BYTES: usize = EXCERPT_BYTES;

/// Longest `skills/get` URI passed on to rmcp: the SKILL.md URI of a skill
/// with the longest name this server can serve (a served name needs no
/// escaping). rmcp refuses a URI that does not end in `/SKILL.md` before
/// the handler sees it, quoting it whole.
pub const MAX_SKILL_URI_BYTES: usize = uri::PREFIX.len() + MAX_SKILL_NAME_BYTES + "/SKILL.md".len();

/// How much of an outgoing line is held before it streams: enough for any
/// error line the guard may correct.
const HEAD_BYTES: usize = 8 * 1024;

/// Buffer of each in-process pipe between this guard and rmcp.
const PIPE_BYTES: usize = 256 * 1024;

/// What the guard decided about one client line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to rmcp; `request` when it expects an answer.
    Forward {
        request: bool,
        starts_lifecycle: bool,
    },
    /// Answer it here with this error, and hand nothing on.
    Refuse {
        id: Value,
        code: i64,
        message: String,
    },
    /// Drop it (logged), e.g. a notification before the handshake.
    Drop(&'static str),
}

/// Decides what to do with one client line (public for the fuzz targets);
/// `started` is whether the lifecycle has begun.
pub fn classify(line: &[u8], started: bool) -> Verdict {
    let v: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Refuse {
                id: Value::Null,
                code: -32700,
                message: format!("Parse error: the line is not JSON ({e})"),
            };
        }
    };
    let Value::Object(obj) = v else {
        let message = if v.is_array() {
            "Invalid Request: batches are not part of MCP; send one message per line".to_owned()
        } else {
            "Invalid Request: a JSON-RPC message is a JSON object".to_owned()
        };
        return Verdict::Refuse {
            id: Value::Null,
            code: -32600,
            message,
        };
    };
    let id = obj.get("id").cloned();
    let id_ok = matches!(id, None | Some(Value::String(_)) | Some(Value::Number(_)));
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") || !id_ok {
        return Verdict::Refuse {
            id: id.filter(|_| id_ok).unwrap_or(Value::Null),
            code: -32600,
            message: "Invalid Request: expected {\"jsonrpc\": \"2.0\", \"method\": …} with a string or number id".into(),
        };
    }
    if let Some(Value::String(long)) = &id
        && long.len() > MAX_ID_BYTES
    {
        return Verdict::Refuse {
            id: Value::Null,
            code: -32600,
            message: format!(
                "Invalid Request: an id of {} bytes is over the {MAX_ID_BYTES}-byte limit (an answer carries its \
                 request's id whole); use a number or a shorter string",
                long.len()
            ),
        };
    }
    if obj.get("params").is_some_and(|p| !p.is_object()) {
        return Verdict::Refuse {
            id: id.unwrap_or(Value::Null),
            code: -32602,
            message: "Invalid params: \"params\" must be an object".into(),
        };
    }
    let method = obj.get("method").and_then(Value::as_str);
    if let (Some(m), Some(id)) = (method, &id)
        && m.len() > MAX_METHOD_BYTES
    {
        return Verdict::Refuse {
            id: id.clone(),
            code: -32601,
            message: format!(
                "Method not found: {} (no method this server answers is longer than {MAX_METHOD_BYTES} bytes)",
                excerpt(m)
            ),
        };
    }
    if let (Some("skills/get"), Some(id)) = (method, &id)
        && let Some(u) = obj
            .get("params")
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
        && u.len() > MAX_SKILL_URI_BYTES
    {
        return Verdict::Refuse {
            id: id.clone(),
            code: -32602,
            message: format!(
                "no skill at {}: the URI is {} bytes long, and no SKILL.md URI this server serves is longer than \
                 {MAX_SKILL_URI_BYTES}; skills/get takes the SKILL.md URI skills/list gives",
                excerpt(u),
                u.len()
            ),
        };
    }
    match (method, id) {
        (Some(m), Some(_)) => {
            let has_meta = obj
                .get("params")
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
                .is_some();
            Verdict::Forward {
                request: true,
                starts_lifecycle: m == "initialize" || (has_meta && m != "server/discover"),
            }
        }
        (Some(_), None) if !started => Verdict::Drop("a notification before the session started"),
        (Some(_), None) => Verdict::Forward {
            request: false,
            starts_lifecycle: false,
        },
        (None, Some(_)) if obj.contains_key("result") || obj.contains_key("error") => {
            if started {
                Verdict::Forward {
                    request: false,
                    starts_lifecycle: false,
                }
            } else {
                Verdict::Drop("a response before the session started")
            }
        }
        (None, id) => Verdict::Refuse {
            id: id.unwrap_or(Value::Null),
            code: -32600,
            message: "Invalid Request: no \"method\" (and not a response)".into(),
        },
    }
}

fn error_line(id: Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string();
    line.push('\n');
    line.into_bytes()
}

/// Reads one line of at most [`MAX_LINE_BYTES`]; an overlong line is
/// consumed to its end and reported as `Err(len)` without being held.
async fn read_line<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<Result<(), usize>>> {
    buf.clear();
    let n = (&mut *r)
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', buf)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if buf.len() > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
        let mut skipped = buf.len();
        buf.clear();
        loop {
            let chunk = r.fill_buf().await?;
            if chunk.is_empty() {
                break;
            }
            match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    skipped += i + 1;
                    r.consume(i + 1);
                    break;
                }
                None => {
                    let len = chunk.len();
                    skipped += len;
                    r.consume(len);
                }
            }
        }
        return Ok(Some(Err(skipped)));
    }
    Ok(Some(Ok(())))
}

/// The id of an outgoing answer (a line with an id and no method).
fn answer_id(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Value>,
        method: Option<serde::de::IgnoredAny>,
    }
    let h: Head = serde_json::from_slice(line).ok()?;
    h.method
        .is_none()
        .then(|| h.id.map(|id| id.to_string()))
        .flatten()
}

/// Methods this server answers. rmcp reports one of these whose params do
/// not decode as -32601 "method not found"; the guard corrects that to
/// -32602 invalid params, which is what happened (spec WIRE-002).
const SERVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/directory/read",
    "skills/list",
    "skills/get",
    "server/discover",
];

/// Rewrites rmcp's "method not found" for a served method into the
/// invalid-params error it really is; other lines pass unchanged.
fn correct(line: Vec<u8>) -> Vec<u8> {
    if !line.windows(6).any(|w| w == b"-32601") {
        return line;
    }
    let Ok(mut v) = serde_json::from_slice::<Value>(&line) else {
        return line;
    };
    let Some(err) = v.get_mut("error") else {
        return line;
    };
    let served = err.get("code").and_then(Value::as_i64) == Some(-32601)
        && err
            .get("message")
            .and_then(Value::as_str)
            .is_some_and(|m| SERVED_METHODS.contains(&m));
    if !served {
        return line;
    }
    let method = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    err["code"] = (-32602).into();
    err["message"] =
        format!("Invalid params: the parameters of {method} do not match its schema").into();
    let mut out = v.to_string().into_bytes();
    out.push(b'\n');
    out
}

/// The id of a long outgoing line, from its start alone: rmcp writes
/// answers as `{"jsonrpc":"2.0","id":ID,"result"…` or `…,"error"…`, while a
/// request of its own has `"method"` after the id.
fn prefix_answer_id(head: &[u8]) -> Option<String> {
    let rest = head.strip_prefix(br#"{"jsonrpc":"2.0","id":"#)?;
    let end = if rest.first() == Some(&b'"') {
        1 + rest[1..].iter().position(|&b| b == b'"')? + 1
    } else {
        rest.iter().position(|&b| b == b',')?
    };
    let after = &rest[end..];
    (after.starts_with(br#","result""#) || after.starts_with(br#","error""#))
        .then(|| String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// The id of a line that starts as rmcp writes a result to a request with
/// a number id, `{"jsonrpc":"2.0","id":<digits>,"result"…`: such a line
/// needs no correction (only an error does) and no parse to be known.
fn numbered_result(line: &[u8]) -> Option<String> {
    let rest = line.strip_prefix(br#"{"jsonrpc":"2.0","id":"#)?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    // Up to 18 digits, no leading zero: a u64 that the full parse writes
    // back digit for digit, so the id matches the one recorded.
    let plain = (1..=18).contains(&digits) && (digits == 1 || rest[0] != b'0');
    (plain && rest[digits..].starts_with(br#","result""#))
        .then(|| String::from_utf8_lossy(&rest[..digits]).into_owned())
}

/// Requests forwarded and not yet answered, bounding how many there are.
struct InFlight {
    ids: std::sync::Mutex<std::collections::HashSet<String>>,
    permits: Semaphore,
}

impl InFlight {
    /// Waits for room, then records `id`. A repeated id takes no room.
    async fn enter(&self, id: String) -> bool {
        let fresh = self
            .ids
            .lock()
            .map(|ids| !ids.contains(&id))
            .unwrap_or(true);
        if !fresh {
            return true;
        }
        match self.permits.acquire().await {
            Ok(p) => p.forget(),
            Err(_) => return false,
        }
        if let Ok(mut ids) = self.ids.lock() {
            ids.insert(id);
        }
        true
    }

    /// The request `id` is answered (or cancelled): free its room.
    fn leave(&self, id: &str) {
        if self.ids.lock().is_ok_and(|mut ids| ids.remove(id)) {
            self.permits.add_permits(1);
        }
    }
}

/// The request id a `notifications/cancelled` names.
fn cancelled_id(line: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(line).ok()?;
    (v.get("method")?.as_str()? == "notifications/cancelled")
        .then(|| v.get("params")?.get("requestId").map(Value::to_string))?
}

fn request_id(line: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(line).ok()?;
    v.get("id").map(Value::to_string)
}

/// Puts the guard between `input`/`output` (the process's stdin/stdout)
/// and the returned pair, which rmcp serves as its transport. `hangup` is
/// set when the input ends.
pub fn guard<I, O>(
    input: I,
    output: O,
    hangup: tokio::sync::watch::Sender<bool>,
) -> (DuplexStream, DuplexStream)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, mut to_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (lines_tx, mut lines_rx) = mpsc::channel::<Vec<u8>>(MAX_IN_FLIGHT);
    let in_flight = Arc::new(InFlight {
        ids: std::sync::Mutex::default(),
        permits: Semaphore::new(MAX_IN_FLIGHT),
    });

    // One writer owns stdout: rmcp's output is streamed through in chunks
    // (a 10 MiB answer is never copied whole), the guard's own error lines
    // go between lines, never inside one.
    let answers = Arc::clone(&in_flight);
    tokio::spawn(async move {
        let (mut out, mut rmcp) = (output, from_rmcp);
        let mut buf = vec![0u8; 64 * 1024];
        // The current line's start while it is short enough to hold whole
        // (so an error line can be corrected); past HEAD_BYTES it streams.
        let mut head: Vec<u8> = Vec::new();
        let mut streaming = false;
        let mut errors_open = true;
        loop {
            let mid_line = streaming || !head.is_empty();
            tokio::select! {
                read = rmcp.read(&mut buf) => {
                    let n = match read { Ok(0) | Err(_) => break, Ok(n) => n };
                    let mut chunk = &buf[..n];
                    while !chunk.is_empty() {
                        let (part, ends) = match chunk.iter().position(|&b| b == b'\n') {
                            Some(i) => (&chunk[..=i], true),
                            None => (chunk, false),
                        };
                        chunk = &chunk[part.len()..];
                        let written = if streaming {
                            out.write_all(part).await
                        } else {
                            head.extend_from_slice(part);
                            if ends {
                                let line = std::mem::take(&mut head);
                                // rmcp's usual answer, a result to a
                                // numbered request, is known from its
                                // start; anything else is parsed whole.
                                let (answered, line) = match numbered_result(&line) {
                                    Some(id) => (Some(id), line),
                                    None => (answer_id(&line), correct(line)),
                                };
                                let r = out.write_all(&line).await;
                                if let Some(id) = answered { answers.leave(&id); }
                                r
                            } else if head.len() > HEAD_BYTES {
                                streaming = true;
                                out.write_all(&head).await
                            } else {
                                Ok(())
                            }
                        };
                        if written.is_err() { return; }
                        if ends && streaming {
                            streaming = false;
                            if let Some(id) = prefix_answer_id(&head) { answers.leave(&id); }
                            head.clear();
                        }
                    }
                    if out.flush().await.is_err() { return; }
                }
                line = lines_rx.recv(), if errors_open && !mid_line => {
                    match line {
                        Some(line) => {
                            if out.write_all(&line).await.is_err() || out.flush().await.is_err() { return; }
                        }
                        None => errors_open = false,
                    }
                }
            }
        }
    });

    tokio::spawn(async move {
        let mut r = BufReader::new(input);
        let mut line = Vec::new();
        let mut started = false;
        loop {
            let verdict = match read_line(&mut r, &mut line).await {
                Ok(None) | Err(_) => break,
                Ok(Some(Err(len))) => Verdict::Refuse {
                    id: Value::Null,
                    code: -32700,
                    message: format!(
                        "Parse error: a line of {len} bytes is over the {MAX_LINE_BYTES}-byte limit"
                    ),
                },
                Ok(Some(Ok(()))) if line.iter().all(u8::is_ascii_whitespace) => continue,
                Ok(Some(Ok(()))) => classify(&line, started),
            };
            match verdict {
                Verdict::Forward {
                    request,
                    starts_lifecycle,
                } => {
                    if request {
                        // Backpressure: with MAX_IN_FLIGHT requests
                        // unanswered, wait for an answer to be written
                        // before reading another line.
                        if let Some(id) = request_id(&line)
                            && !in_flight.enter(id).await
                        {
                            break;
                        }
                    } else if let Some(id) = cancelled_id(&line) {
                        in_flight.leave(&id);
                    }
                    started |= starts_lifecycle;
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    if to_rmcp.write_all(&line).await.is_err() {
                        break;
                    }
                }
                Verdict::Refuse { id, code, message } => {
                    tracing::info!(code, %message, "refused a client line");
                    if lines_tx.send(error_line(id, code, &message)).await.is_err() {
                        break;
                    }
                }
                Verdict::Drop(why) => tracing::info!("dropped {why}"),
            }
        }
        // stdin closed: runs in progress end now, and rmcp sees end of
        // input and ends the session.
        let _ = hangup.send(true);
        let _ = to_rmcp.shutdown().await;
    });
    (rmcp_in, rmcp_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified() {
        assert!(matches!(
            classify(b"{not json", true),
            Verdict::Refuse { code: -32700, .. }
        ));
        assert!(matches!(
            classify(b"[1,2]", true),
            Verdict::Refuse { code: -32600, .. }
        ));
        assert!(matches!(
            classify(b"42", true),
            Verdict::Refuse { code: -32600, .. }
        ));
        assert!(matches!(
            classify(br#"{"id":1,"method":"x"}"#, true),
            Verdict::Refuse { code: -32600, .. }
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#, true),
            Verdict::Refuse {
                code: -32600,
                id: Value::Null,
                ..
            }
        ));
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#, false),
            Verdict::Forward {
                request: true,
                starts_lifecycle: true
            }
        );
        assert_eq!(
            classify(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                false
            ),
            Verdict::Drop("a notification before the session started")
        );
        assert_eq!(
            classify(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                true
            ),
            Verdict::Forward {
                request: false,
                starts_lifecycle: false
            }
        );
        assert_eq!(
            classify(
                br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
                false
            ),
            Verdict::Forward { request: true, starts_lifecycle: true }
        );
        assert_eq!(
            classify(
                br#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
                false
            ),
            Verdict::Forward { request: true, starts_lifecycle: false }
        );
    }

    #[test]
    fn what_a_reply_would_echo_whole_is_bounded_here() {
        let big = "x".repeat(10 * 1024 * 1024);
        let line = |v: Value| v.to_string().into_bytes();
        let refused = |v: Value| match classify(&line(v), true) {
            Verdict::Refuse { id, code, message } => (id, code, message),
            other => panic!("passed on: {other:?}"),
        };
        let (id, code, m) =
            refused(serde_json::json!({"jsonrpc": "2.0", "id": big, "method": "ping"}));
        assert_eq!((id, code), (Value::Null, -32600));
        assert!(m.contains("10485760 bytes") && m.len() < 300, "{m}");
        let (id, code, m) = refused(serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": big}));
        assert_eq!((id, code), (Value::from(3), -32601));
        assert!(m.contains("(10485560 more bytes)") && m.len() < 400, "{m}");
        let uri = format!("skill://{big}/SKILL.md");
        let (id, code, m) = refused(
            serde_json::json!({"jsonrpc": "2.0", "id": "a", "method": "skills/get", "params": {"uri": uri}}),
        );
        assert_eq!((id, code), (Value::from("a"), -32602));
        assert!(
            m.contains(&format!("{} bytes long", uri.len())) && m.len() < 500,
            "{m}"
        );
        // At the bounds, everything passes on to rmcp as before.
        let longest = format!("skill://{}/SKILL.md", "n".repeat(MAX_SKILL_NAME_BYTES));
        assert_eq!(longest.len(), MAX_SKILL_URI_BYTES);
        for v in [
            serde_json::json!({"jsonrpc": "2.0", "id": "i".repeat(MAX_ID_BYTES), "method": "ping"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "m".repeat(MAX_METHOD_BYTES)}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "skills/get", "params": {"uri": longest}}),
            // A notification gets no reply, so nothing of it is echoed.
            serde_json::json!({"jsonrpc": "2.0", "method": big}),
        ] {
            assert!(matches!(classify(&line(v), true), Verdict::Forward { .. }));
        }
    }

    #[test]
    fn a_served_method_with_bad_params_becomes_invalid_params() {
        let fixed = correct(
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"tools/call"}}"#.to_vec(),
        );
        let v: Value = serde_json::from_slice(&fixed).unwrap();
        assert_eq!(v["error"]["code"], -32602);
        assert_eq!(v["id"], 3);
        let other =
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no/such"}}"#.to_vec();
        assert_eq!(correct(other.clone()), other);
        assert!(matches!(
            classify(
                br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#,
                true
            ),
            Verdict::Refuse { code: -32602, .. }
        ));
    }

    #[test]
    fn long_answers_are_recognised_from_their_start() {
        assert_eq!(
            prefix_answer_id(br#"{"jsonrpc":"2.0","id":42,"result":{"content"#).as_deref(),
            Some("42")
        );
        assert_eq!(
            prefix_answer_id(br#"{"jsonrpc":"2.0","id":"a,b","result":"#).as_deref(),
            Some("\"a,b\"")
        );
        assert_eq!(
            prefix_answer_id(br#"{"jsonrpc":"2.0","id":3,"method":"roots/list""#),
            None
        );
    }

    #[test]
    fn answers_and_cancels_are_recognised() {
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).as_deref(),
            Some("3")
        );
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","id":"a","error":{}}"#).as_deref(),
            Some("\"a\"")
        );
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#),
            None
        );
        assert_eq!(
            answer_id(br#"{"jsonrpc":"2.0","id":3,"method":"roots/list"}"#),
            None
        );
        assert_eq!(
            cancelled_id(
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#
            )
            .as_deref(),
            Some("7")
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_without_being_held() {
        let mut data = vec![b'x'; MAX_LINE_BYTES + 10];
        data.extend_from_slice(b"\n{\"ok\":1}\n");
        let mut r = BufReader::new(&data[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_line(&mut r, &mut buf).await.unwrap(),
            Some(Err(MAX_LINE_BYTES + 11))
        );
        assert_eq!(read_line(&mut r, &mut buf).await.unwrap(), Some(Ok(())));
        assert_eq!(buf, b"{\"ok\":1}\n");
    }

    /// The fast path names exactly the results `answer_id` names, and
    /// leaves every other line to the full parse (and `correct`).
    #[test]
    fn a_numbered_result_is_known_from_its_start() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":7,"result":{}}"#[..],
            br#"{"jsonrpc":"2.0","id":1234567,"result":{"skill":{"uri":"-32601"}}}"#,
        ] {
            assert_eq!(numbered_result(line), answer_id(line));
            assert!(numbered_result(line).is_some());
        }
        for line in [
            &br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"ping"}}"#[..],
            br#"{"jsonrpc":"2.0","id":"7","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":-7,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":7,"method":"roots/list"}"#,
            br#"{"jsonrpc":"2.0","id":,"result":{}}"#,
            br#"{"id":7,"jsonrpc":"2.0","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":12345678901234567890123,"result":{}}"#,
        ] {
            assert_eq!(
                numbered_result(line),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
