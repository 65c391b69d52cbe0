//! One HTTP request, from its headers to rmcp's answer (spec HTTP-003..
//! HTTP-009). Who may connect is asked of [`Access`]; the request then
//! takes a slot (overall and in its session), its body is read bounded and
//! read once by the stdio transport's own rules (`transport::message`), so
//! what is not a JSON-RPC message is answered with the same JSON-RPC error
//! as on stdio; only then does rmcp's `StreamableHttpService` see it. The
//! slots are held by the answer's body until it has been sent whole: an
//! SSE answer is in flight until its stream ends.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full, Limited, combinators::BoxBody};
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, GetMeta, ProtocolVersion, RequestId,
};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::access::{Access, Refused};
use super::sessions::Sessions;
use crate::echo::{EXCERPT_BYTES, excerpt};
use crate::limits::{
    HTTP_READ_TIMEOUT_SECS, MAX_HTTP_BODY_BYTES, MAX_HTTP_IN_FLIGHT, MAX_HTTP_SESSIONS,
};
use crate::server::SkillServer;
use crate::transport::ids::MAX_IN_FLIGHT;
use crate::transport::message::{self, ClientId, IdKey, Incoming};

/// The path the MCP endpoint is served at.
pub(crate) const PATH: &str = "/mcp";

/// What every answer's body is.
pub(crate) type Answer = Response<BoxBody<Bytes, Infallible>>;

type Rmcp = StreamableHttpService<SkillServer, Sessions>;

/// The server's one door: shared by every connection.
pub(crate) struct Door {
    pub(crate) access: Access,
    pub(crate) rmcp: Rmcp,
    pub(crate) sessions: Arc<Sessions>,
    /// Whether `skill_run` is offered (HTTP-009).
    pub(crate) allow_run: bool,
    in_flight: Arc<Semaphore>,
    per_session: InFlight,
}

impl Door {
    pub(crate) fn new(
        access: Access,
        rmcp: Rmcp,
        sessions: Arc<Sessions>,
        allow_run: bool,
    ) -> Door {
        Door {
            access,
            rmcp,
            sessions,
            allow_run,
            in_flight: Arc::new(Semaphore::new(MAX_HTTP_IN_FLIGHT)),
            per_session: Arc::default(),
        }
    }

    /// Answers one request; never fails (every refusal is an answer).
    pub(crate) async fn handle<B>(&self, req: Request<B>) -> Answer
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if let Err(r) = self.access.check(req.headers()) {
            return refused(r);
        }
        if req.uri().path() != PATH {
            return text(
                StatusCode::NOT_FOUND,
                format!(
                    "HTTP-001: nothing is served at {}; the MCP endpoint is {PATH}",
                    excerpt(req.uri().path())
                ),
            );
        }
        // rmcp quotes MCP's own headers whole in its refusals; one longer
        // than an excerpt is refused here instead (HARD-005).
        if let Some((name, value)) = req
            .headers()
            .iter()
            .find(|(k, v)| k.as_str().starts_with("mcp-") && v.len() > EXCERPT_BYTES)
        {
            return text(
                StatusCode::BAD_REQUEST,
                format!(
                    "HTTP-006: the {name} header is {} bytes long; no MCP header this server reads is longer \
                     than {EXCERPT_BYTES}",
                    value.len()
                ),
            );
        }
        // A session id is visible ASCII (rmcp hands out UUIDs): one that is
        // not names no session, and rmcp, unable to read it, would treat
        // the request as sessionless and open a new session past the cap
        // the door counts (HTTP-008).
        if let Some(v) = req.headers().get("mcp-session-id") {
            let known = match v.to_str() {
                Ok(id) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_graphic()) => {
                    // DELETE of a session that is gone is 404, as every other
                    // request naming it is (rmcp answers 202 to any).
                    req.method() != Method::DELETE || self.sessions.is_open(id)
                }
                _ => false,
            };
            if !known {
                return text(
                    StatusCode::NOT_FOUND,
                    "HTTP-008: the Mcp-Session-Id header names no open session of this server; send \
                     initialize without one to open a new session"
                        .to_owned(),
                );
            }
        }
        if req.method() != Method::POST {
            // GET (a session's stream) and DELETE (its end) carry no body
            // and no request: rmcp answers them as they are.
            let (parts, _) = req.into_parts();
            let delete = parts.method == Method::DELETE;
            let mut answer = self
                .rmcp
                .handle(Request::from_parts(parts, Full::new(Bytes::new())))
                .await;
            // rmcp answers a session's end 202; the SDKs take 200 or 204
            // (the Python SDK logs a failure on any other), and nothing is
            // left pending: 204 (HTTP-008).
            if delete && answer.status() == StatusCode::ACCEPTED {
                *answer.status_mut() = StatusCode::NO_CONTENT;
                *answer.body_mut() = Full::new(Bytes::new()).boxed();
            }
            return answer;
        }
        self.post(req).await
    }

    async fn post<B>(&self, req: Request<B>) -> Answer
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // Slots first (HTTP-007), so bodies held at once are bounded too.
        let Ok(overall) = Arc::clone(&self.in_flight).try_acquire_owned() else {
            let mut a = jsonrpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                -32000,
                format!(
                    "HTTP-007: {MAX_HTTP_IN_FLIGHT} requests are in flight on this server, its limit; \
                     wait for an answer and send this again"
                ),
            );
            a.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return a;
        };
        let session = req
            .headers()
            .get("mcp-session-id")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let session_id = session.clone();
        let mut cancel = None;
        let mut mine = match session {
            None => None,
            Some(id) => match SessionSlot::take(&self.per_session, id) {
                Some(slot) => Some(slot),
                None => {
                    return jsonrpc_error(
                        StatusCode::TOO_MANY_REQUESTS,
                        None,
                        -32000,
                        format!(
                            "HTTP-007: {MAX_IN_FLIGHT} requests of this session are in flight, its limit; \
                             wait for an answer before sending more"
                        ),
                    );
                }
            },
        };
        // A body announced over the limit is refused unread, so a client
        // that sent `Expect: 100-continue` need not send it at all.
        let announced = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if announced.is_some_and(|n| n > MAX_HTTP_BODY_BYTES as u64) {
            return too_large();
        }
        let (mut parts, body) = req.into_parts();
        let bytes = match read_body(body).await {
            Ok(b) => b,
            Err(a) => return *a,
        };
        let (incoming, direct) = message::read_decoding(&bytes);
        // The message as read here, written again for rmcp when it was not
        // read as rmcp reads a body (HTTP-006): see below.
        let mut again = None;
        let initialize = match incoming {
            Incoming::Refuse(r) => {
                // A removed method's params need not be that method's, so
                // its refusal may come before its method is seen (HTTP-011);
                // the body is looked at again only on this path.
                if let Some(a) = removed_in_2026(&parts.headers, &bytes) {
                    return a;
                }
                tracing::info!(code = r.code, message = %r.message, "refused an HTTP request");
                // The rules are stdio's, whose messages are lines; here a
                // message is a request's body.
                let message = r
                    .message
                    .replace("the line is not JSON", "the request body is not JSON")
                    .replace("send one message per line", "send one message per request");
                return jsonrpc_error(StatusCode::BAD_REQUEST, r.id.as_deref(), r.code, message);
            }
            Incoming::Drop(why) => {
                tracing::info!("dropped {why}");
                return text(StatusCode::ACCEPTED, String::new());
            }
            Incoming::Request { id, mut message } => {
                if let ClientJsonRpcMessage::Request(req) = &*message
                    && REMOVED_IN_2026.contains(&req.request.method())
                    && let Some(a) = removed_in_2026(&parts.headers, &bytes)
                {
                    return a;
                }
                if let Err(a) = self
                    .admit(&id, &message, parts.headers.contains_key("mcp-session-id"))
                    .await
                {
                    return *a;
                }
                if let Some(slot) = &mut mine
                    && !slot.claim(&id.key)
                {
                    return jsonrpc_error(
                        StatusCode::BAD_REQUEST,
                        Some(&id.raw),
                        -32600,
                        format!(
                            "Invalid Request: HTTP-007: id {} is the id of a request of this session still in \
                             flight; give each request an id of its own",
                            // Bounded already: a longer id is refused (MAX_ID_BYTES).
                            id.raw.get()
                        ),
                    );
                }
                // A request of a session is cancelled if its answer is
                // not sent whole (RUN-028: nobody can approve, or see, a
                // run whose client went away). An id rmcp cannot carry
                // was refused above.
                if let Some(session) = &session_id
                    && let Ok(rid) = serde_json::from_str::<RequestId>(id.raw.get())
                {
                    cancel = Some(CancelOnDrop {
                        sessions: Arc::clone(&self.sessions),
                        session: session.as_str().into(),
                        id: rid,
                    });
                }
                let initialize = is_initialize(&message);
                if !direct
                    && let ClientJsonRpcMessage::Request(r) = &mut *message
                    && let Ok(rid) = serde_json::from_str::<RequestId>(id.raw.get())
                {
                    r.id = rid;
                    again = serde_json::to_vec(&*message).ok();
                }
                initialize
            }
            Incoming::Notification { message, .. } | Incoming::Response(message) => {
                again = serde_json::to_vec(&*message).ok();
                false
            }
        };
        // A body read through a tree (a member given twice, say, whose last
        // counts as on stdio) goes to rmcp as that tree's message, which
        // rmcp's own decode of the body would refuse or read otherwise: the
        // same message gets the same answer through either door.
        let bytes = match again {
            Some(text) => {
                parts.headers.remove(header::CONTENT_LENGTH);
                Bytes::from(text)
            }
            None => bytes,
        };
        if initialize {
            tracing::debug!("opening an HTTP session");
        }
        let answer = self
            .rmcp
            .handle(Request::from_parts(parts, Full::new(bytes)))
            .await;
        let (parts, body) = answer.into_parts();
        let body = Held {
            inner: body,
            slots: Some((overall, mine)),
            cancel,
        };
        Response::from_parts(parts, BoxBody::new(body))
    }

    /// What a request must pass before rmcp sees it: an id rmcp can carry
    /// (HTTP-006), room for another session (HTTP-008), and `skill_run`
    /// only when the owner offers it (HTTP-009).
    async fn admit(
        &self,
        id: &ClientId,
        message: &ClientJsonRpcMessage,
        in_session: bool,
    ) -> Result<(), Box<Answer>> {
        if !rmcp_holds(id) {
            return Err(Box::new(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                Some(&id.raw),
                -32600,
                format!(
                    "Invalid Request: HTTP-006: over HTTP a request's id is an integer between -2^63 and 2^63 \
                     or a string, and {} is neither; send the request again under such an id",
                    // Bounded already: a longer id is refused (MAX_ID_BYTES).
                    id.raw.get()
                ),
            )));
        }
        let ClientJsonRpcMessage::Request(req) = message else {
            return Ok(());
        };
        let per_request = req
            .request
            .get_meta()
            .missing_required_keys(&ProtocolVersion::V_2026_07_28)
            .is_empty();
        match &req.request {
            ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_) => {}
            _ if !in_session && !per_request => {
                return Err(Box::new(jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    Some(&id.raw),
                    -32600,
                    "Invalid Request: HTTP-002: this request has no Mcp-Session-Id header and no 2026-07-28 \
                     _meta, so it belongs to no lifecycle: send initialize first and then the Mcp-Session-Id it \
                     answers with on every request, or give each request _meta with \
                     io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities"
                        .to_owned(),
                )));
            }
            _ => {}
        }
        match &req.request {
            ClientRequest::InitializeRequest(_) if !in_session => {
                let open = self.sessions.count();
                if open >= MAX_HTTP_SESSIONS {
                    let mut a = jsonrpc_error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        Some(&id.raw),
                        -32000,
                        format!(
                            "HTTP-008: {open} sessions are open on this server, its limit of \
                             {MAX_HTTP_SESSIONS}; close one (DELETE with its Mcp-Session-Id), wait for an idle \
                             one to expire, or send requests with 2026-07-28 _meta, which need no session"
                        ),
                    );
                    a.headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from_static("10"));
                    return Err(Box::new(a));
                }
            }
            ClientRequest::CallToolRequest(call)
                if !self.allow_run && call.params.name == "skill_run" =>
            {
                return Err(Box::new(jsonrpc_error(
                    StatusCode::OK,
                    Some(&id.raw),
                    -32602,
                    "HTTP-009: skill_run is not offered over HTTP on this server: anyone who can reach the URL \
                     could run a skill's scripts. Its owner can turn runs on with --http-allow-run; skill_list, \
                     skill_load and skill_file work as always"
                        .to_owned(),
                )));
            }
            _ => {}
        }
        Ok(())
    }
}

/// Methods the 2026-07-28 revision removed (SEP-2575): a request for one
/// under that version's `MCP-Protocol-Version` header is HTTP 404 with
/// -32601, as that revision says, rather than a lifecycle error (HTTP-011).
const REMOVED_IN_2026: [&str; 5] = [
    "initialize",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    // rmcp serves no ping under 2026-07-28 and says only "ping".
    "ping",
];

fn removed_in_2026(headers: &http::HeaderMap, body: &[u8]) -> Option<Answer> {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Box<RawValue>>,
        method: Option<String>,
    }
    if headers
        .get("mcp-protocol-version")
        .is_none_or(|v| v.as_bytes() != b"2026-07-28")
    {
        return None;
    }
    let head: Head = serde_json::from_slice(body).ok()?;
    let method = head.method?;
    if !REMOVED_IN_2026.contains(&method.as_str()) {
        return None;
    }
    // Echoed only when it is an id (a string or a number) of bounded size.
    let id = head.id.filter(|raw| {
        let t = raw.get();
        t.len() <= message::MAX_ID_BYTES
            && t.starts_with(|c: char| c == '"' || c == '-' || c.is_ascii_digit())
    });
    Some(jsonrpc_error(
        StatusCode::NOT_FOUND,
        id.as_deref(),
        -32601,
        format!(
            "Method not found: HTTP-011: {method} is not part of protocol 2026-07-28, which this request's \
             MCP-Protocol-Version header names; a 2026-07-28 client needs no initialize (each request carries \
             _meta), and a 2025-11-25 client sends MCP-Protocol-Version: 2025-11-25"
        ),
    ))
}

fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

/// Whether rmcp's id (an i64 or a string) holds this id exactly, so its
/// answer carries the id as the client wrote it (HTTP-006). An integer
/// spelled `7.0` or `7e0` would come back as `7`.
fn rmcp_holds(id: &ClientId) -> bool {
    match &id.key {
        IdKey::Text(_) => true,
        IdKey::Whole(_) => {
            let raw = id.raw.get();
            // `-0` parses, but rmcp would answer it as `0`: an id the
            // client did not send (as `7.0` would be `7`).
            raw != "-0"
                && raw.bytes().all(|b| b.is_ascii_digit() || b == b'-')
                && raw.parse::<i64>().is_ok()
        }
        IdKey::Fraction(_) => false,
    }
}

/// Reads a body of at most [`MAX_HTTP_BODY_BYTES`] within
/// [`HTTP_READ_TIMEOUT_SECS`] (HTTP-006, HTTP-008).
async fn read_body<B>(body: B) -> Result<Bytes, Box<Answer>>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let read = Limited::new(body, MAX_HTTP_BODY_BYTES).collect();
    match tokio::time::timeout(Duration::from_secs(HTTP_READ_TIMEOUT_SECS), read).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(Box::new(too_large())),
        Ok(Err(e)) => Err(Box::new(text(
            StatusCode::BAD_REQUEST,
            format!(
                "HTTP-006: the request body could not be read: {}",
                excerpt(&e.to_string())
            ),
        ))),
        Err(_) => Err(Box::new(text(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "HTTP-008: the request body did not arrive within {HTTP_READ_TIMEOUT_SECS} s; send it whole"
            ),
        ))),
    }
}

fn too_large() -> Answer {
    jsonrpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        None,
        -32700,
        format!(
            "Parse error: HTTP-006: the request body is over the {MAX_HTTP_BODY_BYTES}-byte limit; no MCP \
             request this server answers needs more"
        ),
    )
}

/// What a session has in flight: how many requests, and their ids.
#[derive(Default)]
struct InSession {
    count: usize,
    ids: HashSet<IdKey>,
}

type InFlight = Arc<Mutex<HashMap<String, InSession>>>;

/// One request's slot in its session (HTTP-007), and its id once read;
/// both freed on drop.
struct SessionSlot {
    sessions: InFlight,
    session: String,
    id: Option<IdKey>,
}

impl SessionSlot {
    /// `None` when the session has [`MAX_IN_FLIGHT`] requests in flight.
    /// An entry lives only while a request of its session is in flight,
    /// so the table is bounded by [`MAX_HTTP_IN_FLIGHT`].
    fn take(sessions: &InFlight, session: String) -> Option<SessionSlot> {
        let mut map = lock(sessions);
        let s = map.entry(session.clone()).or_default();
        if s.count >= MAX_IN_FLIGHT {
            return None;
        }
        s.count += 1;
        Some(SessionSlot {
            sessions: Arc::clone(sessions),
            session,
            id: None,
        })
    }

    /// Claims the request's id in its session: false when a request of the
    /// session still in flight has it (WIRE-006's rule; rmcp would route
    /// both answers by that id).
    fn claim(&mut self, id: &IdKey) -> bool {
        let mut map = lock(&self.sessions);
        let Some(s) = map.get_mut(&self.session) else {
            return false;
        };
        if !s.ids.insert(id.clone()) {
            return false;
        }
        self.id = Some(id.clone());
        true
    }
}

fn lock(sessions: &InFlight) -> std::sync::MutexGuard<'_, HashMap<String, InSession>> {
    // No method here panics half-way, so a poisoned table is whole.
    sessions
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        let mut map = lock(&self.sessions);
        if let Some(s) = map.get_mut(&self.session) {
            if let Some(id) = &self.id {
                s.ids.remove(id);
            }
            s.count -= 1;
            if s.count == 0 {
                map.remove(&self.session);
            }
        }
    }
}

/// An answer's body holding its request's slots until it is sent whole
/// or the client goes away.
struct Held {
    inner: BoxBody<Bytes, Infallible>,
    /// Freed when the body is dropped, or once its cancellation is handed
    /// to rmcp: the id stays taken until then, so a request reusing it
    /// cannot be the one cancelled.
    slots: Option<(OwnedSemaphorePermit, Option<SessionSlot>)>,
    /// Until the body has been sent whole: the request to cancel if it is
    /// dropped before then (the client went away).
    cancel: Option<CancelOnDrop>,
}

/// A session's request, cancelled in rmcp when its answer's body is
/// dropped unfinished: as a stdio client's hang-up ends what it asked,
/// a closed connection ends the call it was waiting on (HTTP-009,
/// RUN-028, RUN-021).
struct CancelOnDrop {
    sessions: Arc<Sessions>,
    session: rmcp::transport::streamable_http_server::SessionId,
    id: RequestId,
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(c) = self.cancel.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let note = ClientJsonRpcMessage::notification(ClientNotification::CancelledNotification(
            CancelledNotification::new(CancelledNotificationParam::new(
                Some(c.id),
                Some("the client's connection closed before the answer was sent".to_owned()),
            )),
        ));
        let slots = self.slots.take();
        runtime.spawn(async move {
            // A session already gone has nothing left to cancel.
            let _ = c.sessions.accept_message(&c.session, note).await;
            drop(slots);
        });
    }
}

impl Body for Held {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            // Sent whole (hyper may not poll a body past its last frame):
            // nothing to cancel.
            self.cancel = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RawValue>,
    error: ErrorData,
}

#[derive(Serialize)]
struct ErrorData {
    code: i32,
    message: String,
}

/// A JSON-RPC error as the whole answer, under the request's id exactly
/// as the client wrote it (or `null`).
pub(crate) fn jsonrpc_error(
    status: StatusCode,
    id: Option<&RawValue>,
    code: i32,
    message: String,
) -> Answer {
    let body = serde_json::to_vec(&ErrorBody {
        jsonrpc: "2.0",
        id,
        error: ErrorData { code, message },
    })
    .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}").into_bytes());
    let mut a = Response::new(Full::new(Bytes::from(body)).boxed());
    *a.status_mut() = status;
    a.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    a
}

/// A plain-text answer.
pub(crate) fn text(status: StatusCode, message: String) -> Answer {
    let mut a = Response::new(Full::new(Bytes::from(message)).boxed());
    *a.status_mut() = status;
    a.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    a
}

/// A refusal of [`Access`]: 401 carries `WWW-Authenticate: Bearer`.
fn refused(r: Refused) -> Answer {
    tracing::info!(status = %r.status, message = %r.message, "refused an HTTP request");
    let unauthorized = r.status == StatusCode::UNAUTHORIZED;
    let mut a = text(r.status, r.message);
    if unauthorized {
        a.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"skill-mcp\""),
        );
    }
    a
}
