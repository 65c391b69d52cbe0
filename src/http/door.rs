//! One HTTP request, from its head to rmcp's answer (spec HTTP-003..
//! HTTP-016). The head is screened ([`headers`]) and who may connect is
//! asked of [`Access`]; the body is read bounded, its bytes counted against
//! the bodies' budget as they arrive, and read once by the stdio
//! transport's own rules (`transport::message`), so what is not a JSON-RPC
//! message is answered with the same JSON-RPC error as on stdio. Only a
//! request read whole takes a slot (overall and in its session, or a
//! stream's) and room in the answer budget; then rmcp's
//! `StreamableHttpService` sees it. The slots are held by the answer's body
//! until its last byte is handed to the connection (an SSE answer until its
//! stream ends); the answer's bytes until they are written.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::request::Parts;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
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
use super::budget::{Bodies, Budget, answer_estimate};
use super::connections::{Conn, Connections, Doing};
use super::headers;
use super::sessions::{STANDALONE_EVENT_ID, Sessions};
use crate::echo::{EXCERPT_BYTES, excerpt};
use crate::limits::{
    HTTP_BUDGET_WAIT_SECS, HTTP_READ_TIMEOUT_SECS, MAX_HTTP_ANSWER_BYTES, MAX_HTTP_BODIES_BYTES,
    MAX_HTTP_BODY_BYTES, MAX_HTTP_IN_FLIGHT, MAX_HTTP_SESSIONS, MAX_HTTP_STREAMS,
};
use crate::server::SkillServer;
use crate::transport::ids::MAX_IN_FLIGHT;
use crate::transport::message::{self, ClientId, Framing, IdKey, Incoming};

/// The path the MCP endpoint is served at.
pub(crate) const PATH: &str = "/mcp";

/// What every answer's body is.
pub(crate) type Answer = Response<BoxBody<Bytes, Infallible>>;

type Rmcp = StreamableHttpService<SkillServer, Sessions>;

/// The method of a 2026-07-28 subscription: a stream, not a request in
/// flight (HTTP-012).
const LISTEN: &str = "subscriptions/listen";

/// The server's one door: shared by every connection.
pub(crate) struct Door {
    pub(crate) access: Access,
    pub(crate) rmcp: Rmcp,
    pub(crate) sessions: Arc<Sessions>,
    /// Whether `skill_run` is offered (HTTP-009).
    pub(crate) allow_run: bool,
    in_flight: Arc<Semaphore>,
    streams: Arc<Semaphore>,
    /// Every open connection: the oldest stream is closed for a new one.
    connections: Arc<Connections>,
    per_session: InFlight,
    bodies: Bodies,
    answers: Arc<Budget>,
    /// The answer budget in characters (LIST-005): what an answer held to
    /// it can be, for the answer's estimate (HTTP-015).
    answer_chars: usize,
}

/// What an answer holds until it is sent: its request's slots, the
/// request to cancel if the client goes away first, and its bytes' share
/// of the answer budget.
#[derive(Default)]
struct Hold {
    slots: Option<(OwnedSemaphorePermit, Option<SessionSlot>)>,
    cancel: Option<CancelOnDrop>,
    bytes: Option<OwnedSemaphorePermit>,
}

impl Door {
    pub(crate) fn new(
        access: Access,
        rmcp: Rmcp,
        sessions: Arc<Sessions>,
        allow_run: bool,
        answer_chars: usize,
        connections: Arc<Connections>,
    ) -> Door {
        Door {
            access,
            rmcp,
            sessions,
            allow_run,
            in_flight: Arc::new(Semaphore::new(MAX_HTTP_IN_FLIGHT)),
            streams: Arc::new(Semaphore::new(MAX_HTTP_STREAMS)),
            connections,
            per_session: Arc::default(),
            bodies: Bodies::new(MAX_HTTP_BODIES_BYTES),
            answers: Arc::new(Budget::new(MAX_HTTP_ANSWER_BYTES)),
            answer_chars,
        }
    }

    /// The head's checks that come before a browser's preflight is
    /// answered: what the head is (HTTP-006, HTTP-014, HTTP-016) and where
    /// the request comes from (HTTP-003, HTTP-014).
    pub(crate) fn screen(&self, parts: &Parts) -> Result<(), Box<Answer>> {
        if let Err(r) = headers::screen(parts) {
            tracing::info!(status = %r.status, message = %r.message, "refused an HTTP request");
            return Err(Box::new(text(r.status, r.message)));
        }
        self.access
            .check_place(parts)
            .map_err(|r| Box::new(refused(r)))
    }

    /// Answers one request; never fails (every refusal is an answer). The
    /// answer's body tells `conn` when its last byte is handed over.
    pub(crate) async fn handle<B>(&self, req: Request<B>, conn: &Arc<Conn>) -> Answer
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
    {
        conn.set(Doing::Body);
        let (parts, body) = req.into_parts();
        let (answer, hold) = match self.screen(&parts) {
            Err(a) => (*a, Hold::default()),
            Ok(()) => self.inside(parts, body, conn).await,
        };
        let (parts, body) = answer.into_parts();
        let closing = (conn.doing() == Doing::Streaming).then(|| {
            let conn = Arc::clone(conn);
            Box::pin(async move { conn.closed().await })
                as Pin<Box<dyn Future<Output = ()> + Send + Sync>>
        });
        let held = Held {
            inner: body,
            hold,
            sent: 0,
            answers: Arc::clone(&self.answers),
            conn: Arc::clone(conn),
            ended: false,
            closing,
            closed: false,
        };
        Response::from_parts(parts, BoxBody::new(held))
    }

    async fn inside<B>(&self, mut parts: Parts, body: B, conn: &Arc<Conn>) -> (Answer, Hold)
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
    {
        let none = |a: Answer| (a, Hold::default());
        if let Err(r) = self.access.check_token(&parts.headers) {
            return none(refused(r));
        }
        // Before the path: a CONNECT names an authority, not a path.
        if !matches!(parts.method, Method::GET | Method::POST | Method::DELETE) {
            return none(method_not_served(&parts.method));
        }
        if parts.uri.path() != PATH {
            return none(text(
                StatusCode::NOT_FOUND,
                format!(
                    "HTTP-001: nothing is served at {}; the MCP endpoint is {PATH}",
                    excerpt(parts.uri.path())
                ),
            ));
        }
        // rmcp quotes MCP's own headers whole in its refusals; one longer
        // than an excerpt is refused here instead (HARD-005).
        if let Some((name, value)) = parts
            .headers
            .iter()
            .find(|(k, v)| k.as_str().starts_with("mcp-") && v.len() > EXCERPT_BYTES)
        {
            return none(text(
                StatusCode::BAD_REQUEST,
                format!(
                    "HTTP-006: the {name} header is {} bytes long; no MCP header this server reads is longer \
                     than {EXCERPT_BYTES}",
                    value.len()
                ),
            ));
        }
        // A session id is visible ASCII (rmcp hands out UUIDs): one that is
        // not names no session, and rmcp, unable to read it, would treat
        // the request as sessionless and open a new session past the cap
        // the door counts (HTTP-008).
        if let Some(v) = parts.headers.get("mcp-session-id") {
            let known = match v.to_str() {
                Ok(id) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_graphic()) => {
                    // DELETE of a session that is gone is 404, as every other
                    // request naming it is (rmcp answers 202 to any).
                    parts.method != Method::DELETE || self.sessions.is_open(id)
                }
                _ => false,
            };
            if !known {
                return none(no_session());
            }
        }
        let names_a_session = parts.headers.contains_key("mcp-session-id");
        let (answer, hold) = match parts.method {
            Method::POST => self.post(parts, body, conn).await,
            Method::GET => {
                if let Some(a) = self.no_stream(&parts) {
                    return none(a);
                }
                // rmcp cannot read a Last-Event-ID that is not visible
                // ASCII and would open the session's stream anew, ending
                // the one its client holds: such an id is one this session
                // never issued, and resumes nothing (HTTP-008).
                if let Some(v) = parts.headers.get("last-event-id")
                    && !v.as_bytes().iter().all(u8::is_ascii_graphic)
                {
                    parts
                        .headers
                        .insert("last-event-id", HeaderValue::from_static("not-issued"));
                }
                // Only a GET that opens its session's stream takes a slot:
                // a resume of an id never issued ends at once (HTTP-008).
                let opens = self.opens_its_stream(&parts);
                let slot = opens
                    .then(|| Arc::clone(&self.streams).try_acquire_owned().ok())
                    .flatten();
                conn.set(Doing::Working);
                let answer = self
                    .rmcp
                    .handle(Request::from_parts(parts, Full::new(Bytes::new())))
                    .await;
                let slot = match slot {
                    Some(slot) => Some(slot),
                    None if opens => match self.room_for(&answer).await {
                        Ok(slot) => slot,
                        Err(()) => return none(too_many_streams(None)),
                    },
                    None => None,
                };
                if slot.is_some() {
                    conn.set(Doing::Streaming);
                }
                let hold = Hold {
                    slots: slot.map(|s| (s, None)),
                    ..Hold::default()
                };
                (answer, hold)
            }
            _ => {
                // DELETE (a session's end) carries no body and no request:
                // rmcp answers it as it is.
                conn.set(Doing::Working);
                let delete = parts.method == Method::DELETE;
                let mut answer = self
                    .rmcp
                    .handle(Request::from_parts(parts, Full::new(Bytes::new())))
                    .await;
                // rmcp answers a session's end 202; the SDKs take 200 or 204
                // (the Python SDK logs a failure on any other), and nothing
                // is left pending: 204 (HTTP-008).
                if delete && answer.status() == StatusCode::ACCEPTED {
                    *answer.status_mut() = StatusCode::NO_CONTENT;
                    *answer.body_mut() = Full::new(Bytes::new()).boxed();
                }
                none(answer)
            }
        };
        // rmcp's words for a session that is gone (ended, expired, never
        // opened) are "Session not found"; these say what to do (HTTP-008).
        if names_a_session && answer.status() == StatusCode::NOT_FOUND {
            return (no_session(), hold);
        }
        (answer, hold)
    }

    /// A GET that can open no stream is 405, the Streamable HTTP answer
    /// to one (HTTP-008): without a session there is no stream to open,
    /// and a request's stream is never resumed. Both SDKs stop there; an
    /// empty stream or a 400 made the Python SDK resume a cancelled call's
    /// stream every 3 s for the session's life, and the TypeScript SDK
    /// report errors after its own DELETE.
    fn no_stream(&self, parts: &Parts) -> Option<Answer> {
        let why = match parts.headers.get("mcp-session-id") {
            None => {
                "a GET opens the stream of a session: send initialize first and then GET with its \
                     Mcp-Session-Id (a 2026-07-28 client listens with subscriptions/listen)"
            }
            Some(session) => {
                let session = session.to_str().ok()?;
                let last = parts.headers.get("last-event-id")?.to_str().ok()?;
                if !self.sessions.opened_stream_of(session, last.trim()) {
                    return None;
                }
                "a request's stream is never resumed: this server keeps no events, and the request \
                 was answered or cancelled (a request whose connection closes is cancelled, HTTP-009); \
                 send it again under a new id"
            }
        };
        let mut a = text(StatusCode::METHOD_NOT_ALLOWED, format!("HTTP-008: {why}"));
        a.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
        Some(a)
    }

    async fn post<B>(&self, mut parts: Parts, body: B, conn: &Arc<Conn>) -> (Answer, Hold)
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
    {
        let none = |a: Answer| (a, Hold::default());
        // A body announced over the limit is refused unread, so a client
        // that sent `Expect: 100-continue` need not send it at all.
        let announced = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if announced.is_some_and(|n| n > MAX_HTTP_BODY_BYTES as u64) {
            return none(too_large());
        }
        // The body first, holding no slot: a client whose body does not
        // come holds only the bytes it sent (HTTP-007).
        let (bytes, body_bytes) = match read_body(body, &self.bodies, conn).await {
            Ok(b) => b,
            Err(a) => return none(*a),
        };
        let (incoming, direct) = message::read_decoding(&bytes, Framing::Body);
        // The message as read here, written again for rmcp when it was not
        // read as rmcp reads a body (HTTP-006): see below.
        let mut again = None;
        let mut hold = Hold::default();
        // A listen at the stream cap, by its id: its slot is found once
        // rmcp has answered (HTTP-008).
        let mut pending_stream = None;
        match incoming {
            Incoming::Refuse(r) => {
                // A removed method's params need not be that method's, so
                // its refusal may come before its method is seen (HTTP-011);
                // the body is looked at again only on this path.
                if let Some(a) = removed_in_2026(&parts.headers, &bytes) {
                    return none(a);
                }
                tracing::info!(code = r.code, message = %r.message, "refused an HTTP request");
                return none(jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    r.id.as_deref(),
                    r.code,
                    r.message,
                ));
            }
            Incoming::Drop(why) => {
                tracing::info!("dropped {why}");
                return none(text(StatusCode::ACCEPTED, String::new()));
            }
            Incoming::Request { id, mut message } => {
                if let ClientJsonRpcMessage::Request(req) = &*message
                    && REMOVED_IN_2026.contains(&req.request.method())
                    && let Some(a) = removed_in_2026(&parts.headers, &bytes)
                {
                    return none(a);
                }
                let session = parts
                    .headers
                    .get("mcp-session-id")
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                if let Err(a) = self.admit(&id, &message, session.is_some()).await {
                    return none(*a);
                }
                if let Some(a) = name_no_header_can_match(&parts.headers, &id, &message) {
                    return none(a);
                }
                // A listen rmcp serves is a stream and takes a stream's
                // slot; at the cap it goes to rmcp without one, and only
                // an answer that opens a stream closes the oldest for its
                // slot (HTTP-008). One without 2026-07-28 `_meta` is
                // answered at once (-32601 in a session): a request.
                let listen = is_listen(&message);
                if listen {
                    match Arc::clone(&self.streams).try_acquire_owned() {
                        Ok(stream) => hold.slots = Some((stream, None)),
                        Err(_) => pending_stream = Some(id.clone()),
                    }
                } else {
                    match self.slots(&id, session.as_deref()) {
                        Ok(slots) => hold.slots = Some(slots),
                        Err(a) => return none(*a),
                    }
                }
                // A request of a session is cancelled if its answer is
                // not sent whole (RUN-028: nobody can approve, or see, a
                // run whose client went away). An id rmcp cannot carry
                // was refused above.
                if let Some(session) = &session
                    && let Ok(rid) = serde_json::from_str::<RequestId>(id.raw.get())
                {
                    hold.cancel = Some(CancelOnDrop {
                        sessions: Arc::clone(&self.sessions),
                        session: session.as_str().into(),
                        id: rid,
                    });
                }
                if listen {
                    conn.set(if pending_stream.is_some() {
                        Doing::Working
                    } else {
                        Doing::Streaming
                    });
                } else {
                    // Read whole and holding its slot, it is in flight: its
                    // connection is never closed for a new one, even while
                    // it waits for room for its answer (HTTP-007, HTTP-008).
                    conn.set(Doing::Working);
                    // Room for the answer before it is built (HTTP-015).
                    let estimate = answer_estimate(&message, self.answer_chars);
                    let Some(room) = self.answers.take(estimate).await else {
                        return none(answers_full(&id));
                    };
                    hold.bytes = Some(room);
                }
                if is_initialize(&message) {
                    tracing::debug!("opening an HTTP session");
                }
                if !direct
                    && let ClientJsonRpcMessage::Request(r) = &mut *message
                    && let Ok(rid) = serde_json::from_str::<RequestId>(id.raw.get())
                {
                    r.id = rid;
                    again = serde_json::to_vec(&*message).ok();
                }
            }
            Incoming::Notification { message, .. } | Incoming::Response(message) => {
                // rmcp's words for this are "Session ID is required";
                // these say which rule and what to send (HTTP-002).
                if !parts.headers.contains_key("mcp-session-id") {
                    return none(text(
                        StatusCode::BAD_REQUEST,
                        "HTTP-002: a notification or a client's answer belongs to a session: send it with \
                         the Mcp-Session-Id of the session it is for (a 2026-07-28 request needs none, and \
                         its client sends no notification)"
                            .to_owned(),
                    ));
                }
                conn.set(Doing::Working);
                again = serde_json::to_vec(&*message).ok();
            }
        }
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
        let answer = self
            .rmcp
            .handle(Request::from_parts(parts, Full::new(bytes)))
            .await;
        // rmcp has decoded the body by now.
        drop(body_bytes);
        if let Some(id) = pending_stream {
            match self.room_for(&answer).await {
                Ok(Some(stream)) => {
                    hold.slots = Some((stream, None));
                    conn.set(Doing::Streaming);
                }
                Ok(None) => {}
                Err(()) => return none(too_many_streams(Some(&id))),
            }
        }
        (answer, hold)
    }

    /// Whether a GET opens its session's stream: its session is open and
    /// it resumes nothing, or the standalone stream's priming event
    /// (HTTP-008). Any other GET ends at once or is refused.
    fn opens_its_stream(&self, parts: &Parts) -> bool {
        let Some(session) = parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        else {
            return false;
        };
        let resumes_nothing = parts
            .headers
            .get("last-event-id")
            .and_then(|v| v.to_str().ok())
            .is_none_or(|last| last.trim() == STANDALONE_EVENT_ID);
        resumes_nothing && self.sessions.is_open(session)
    }

    /// A stream's slot for an answer rmcp gave at the cap (HTTP-008): an
    /// answer that opens a stream (200, an event stream) closes the stream
    /// the server would miss least for it and waits up to
    /// [`HTTP_BUDGET_WAIT_SECS`] for the slot that frees (`Err` past it);
    /// any other answer — a refusal, an error — costs nobody their stream
    /// and takes none (`Ok(None)`).
    async fn room_for(&self, answer: &Answer) -> Result<Option<OwnedSemaphorePermit>, ()> {
        let stream = answer.status() == StatusCode::OK
            && answer
                .headers()
                .get(header::CONTENT_TYPE)
                .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if !stream {
            return Ok(None);
        }
        if let Ok(slot) = Arc::clone(&self.streams).try_acquire_owned() {
            return Ok(Some(slot));
        }
        if !self.connections.close_a_stream() {
            return Err(());
        }
        let wait = Duration::from_secs(HTTP_BUDGET_WAIT_SECS);
        match tokio::time::timeout(wait, Arc::clone(&self.streams).acquire_owned()).await {
            Ok(Ok(slot)) => Ok(Some(slot)),
            _ => Err(()),
        }
    }

    /// A request's slots: one of the server's requests in flight and one
    /// of its session's, with its id claimed in the session (HTTP-007).
    fn slots(
        &self,
        id: &ClientId,
        session: Option<&str>,
    ) -> Result<(OwnedSemaphorePermit, Option<SessionSlot>), Box<Answer>> {
        let Ok(overall) = Arc::clone(&self.in_flight).try_acquire_owned() else {
            let mut a = jsonrpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(&id.raw),
                -32000,
                format!(
                    "HTTP-007: {MAX_HTTP_IN_FLIGHT} requests are in flight on this server, its limit; \
                     wait for an answer and send this again"
                ),
            );
            a.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return Err(Box::new(a));
        };
        let Some(session) = session else {
            return Ok((overall, None));
        };
        let Some(mut mine) = SessionSlot::take(&self.per_session, session.to_owned()) else {
            return Err(Box::new(jsonrpc_error(
                StatusCode::TOO_MANY_REQUESTS,
                Some(&id.raw),
                -32000,
                format!(
                    "HTTP-007: {MAX_IN_FLIGHT} requests of this session are in flight, its limit; \
                     wait for an answer before sending more"
                ),
            )));
        };
        if !mine.claim(&id.key) {
            return Err(Box::new(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                Some(&id.raw),
                -32600,
                format!(
                    "Invalid Request: HTTP-007: id {} is the id of a request of this session still in \
                     flight; give each request an id of its own",
                    // Bounded already: a longer id is refused (MAX_ID_BYTES).
                    id.raw.get()
                ),
            )));
        }
        Ok((overall, Some(mine)))
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
                if open >= MAX_HTTP_SESSIONS && !self.sessions.make_room() {
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
        t.len() <= crate::transport::client_id::MAX_ID_BYTES
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

/// A 2026-07-28 request names its tool, prompt or resource in `Mcp-Name`
/// too, which rmcp checks against the body and, on a mismatch, answers
/// quoting the body's value whole (a 3.9 MB tool name answered with a
/// 3.9 MB error). An `Mcp-*` header is at most [`EXCERPT_BYTES`]
/// (HTTP-006), so a longer name can match none: said here, with an
/// excerpt (HARD-005), as rmcp's -32020 says it.
fn name_no_header_can_match(
    headers: &http::HeaderMap,
    id: &ClientId,
    message: &ClientJsonRpcMessage,
) -> Option<Answer> {
    if headers
        .get("mcp-protocol-version")
        .is_none_or(|v| v.as_bytes() != b"2026-07-28")
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(r) = message else {
        return None;
    };
    let name: &str = match &r.request {
        ClientRequest::CallToolRequest(c) => &c.params.name,
        ClientRequest::GetPromptRequest(p) => &p.params.name,
        ClientRequest::ReadResourceRequest(p) => &p.params.uri,
        _ => return None,
    };
    (name.len() > EXCERPT_BYTES).then(|| {
        jsonrpc_error(
            StatusCode::BAD_REQUEST,
            Some(&id.raw),
            -32020,
            format!(
                "Header mismatch: HTTP-006: the request names {} ({} bytes), which no Mcp-Name header can \
                 match (an MCP header is at most {EXCERPT_BYTES} bytes); no tool, prompt or resource of this \
                 server has such a name: call tools/list, prompts/list or resources/list for theirs",
                excerpt(name),
                name.len()
            ),
        )
    })
}

/// A `subscriptions/listen` rmcp serves as a stream: one with complete
/// 2026-07-28 `_meta` (HTTP-012). Without it, it is answered at once (an
/// error), as any request is.
fn is_listen(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(r)
        if r.request.method() == LISTEN
            && r.request
                .get_meta()
                .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty())
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
/// [`HTTP_READ_TIMEOUT_SECS`] (HTTP-006, HTTP-008), each chunk's bytes
/// taken from the bodies' budget as it arrives (HTTP-007); they are held
/// until rmcp has read the message.
async fn read_body<B>(
    body: B,
    bodies: &Bodies,
    conn: &Arc<Conn>,
) -> Result<(Bytes, Option<OwnedSemaphorePermit>), Box<Answer>>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    let me = bodies.reading(conn);
    let read = async {
        let mut body = std::pin::pin!(body);
        let mut bytes = BytesMut::new();
        let mut held: Option<OwnedSemaphorePermit> = None;
        loop {
            // Closed to make room (HTTP-007, HTTP-008): said, before the
            // connection goes.
            let frame = tokio::select! {
                f = body.frame() => f,
                () = conn.closed() => return Err(Box::new(closed_for_room())),
            };
            let Some(frame) = frame else {
                break;
            };
            let frame = frame.map_err(|e| {
                let e: Box<dyn std::error::Error + Send + Sync> = e.into();
                Box::new(text(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "HTTP-006: the request body could not be read: {}",
                        excerpt(&e.to_string())
                    ),
                ))
            })?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if bytes.len() + data.len() > MAX_HTTP_BODY_BYTES {
                return Err(Box::new(too_large()));
            }
            if data.is_empty() {
                continue;
            }
            let room = tokio::select! {
                r = bodies.take(&me, data.len()) => r,
                () = conn.closed() => return Err(Box::new(closed_for_room())),
            };
            let Some(room) = room else {
                return Err(Box::new(bodies_full()));
            };
            match &mut held {
                Some(h) => h.merge(room),
                None => held = Some(room),
            }
            bytes.extend_from_slice(&data);
        }
        Ok((bytes.freeze(), held))
    };
    match tokio::time::timeout(Duration::from_secs(HTTP_READ_TIMEOUT_SECS), read).await {
        Ok(read) => read,
        Err(_) => Err(Box::new(text(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "HTTP-008: the request body did not arrive within {HTTP_READ_TIMEOUT_SECS} s; send it whole"
            ),
        ))),
    }
}

/// A request whose body was still arriving when its connection was
/// closed to make room: the quietest connection at the cap, or the body
/// stalled longest while another waited for the bodies' budget.
fn closed_for_room() -> Answer {
    let mut a = busy(
        None,
        "1",
        "HTTP-008: this request's connection was closed to make room while its body was still arriving \
         (the quietest connection when the server was full, or the body stalled longest while others \
         waited); send it again, whole"
            .to_owned(),
    );
    a.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    a
}

/// 503 with `Retry-After`, naming the budget that is full.
fn busy(id: Option<&ClientId>, retry: &'static str, message: String) -> Answer {
    let mut a = jsonrpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        id.map(|i| &*i.raw),
        -32000,
        message,
    );
    a.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static(retry));
    a
}

fn bodies_full() -> Answer {
    busy(
        None,
        "5",
        format!(
            "HTTP-007: request bodies being read hold the server's {} MiB for them, and none was given back \
             within {HTTP_BUDGET_WAIT_SECS} s; send this again shortly",
            MAX_HTTP_BODIES_BYTES >> 20
        ),
    )
}

fn answers_full(id: &ClientId) -> Answer {
    busy(
        Some(id),
        "5",
        format!(
            "HTTP-015: answers being built or not yet read by their clients hold the server's {} MiB for \
             them, and none was given back within {HTTP_BUDGET_WAIT_SECS} s; send this again shortly",
            MAX_HTTP_ANSWER_BYTES >> 20
        ),
    )
}

/// Any method but the three Streamable HTTP uses is refused in words with
/// the methods served (HTTP-001); rmcp's own 405 said "Method Not
/// Allowed" and no rule.
fn method_not_served(method: &Method) -> Answer {
    let mut a = text(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "HTTP-001: {} is not a method this server serves; {PATH} takes POST (a JSON-RPC message), GET \
             (a session's stream) and DELETE (a session's end)",
            excerpt(method.as_str())
        ),
    );
    a.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
    a
}

fn no_session() -> Answer {
    text(
        StatusCode::NOT_FOUND,
        "HTTP-008: the Mcp-Session-Id header names no open session of this server; send initialize \
         without one to open a new session"
            .to_owned(),
    )
}

fn too_many_streams(id: Option<&ClientId>) -> Answer {
    busy(
        id,
        "10",
        format!(
            "HTTP-008: {MAX_HTTP_STREAMS} streams (GET streams and subscriptions/listen) are open on this \
             server, its limit; close one, or open this one again later"
        ),
    )
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

/// An answer's body holding its request's [`Hold`] until its last byte is
/// handed to the connection, or the client goes away; then it tells the
/// connection, which gives the answer's bytes back once they are written
/// (HTTP-007, HTTP-015).
struct Held {
    inner: BoxBody<Bytes, Infallible>,
    hold: Hold,
    /// Bytes handed over so far.
    sent: usize,
    answers: Arc<Budget>,
    conn: Arc<Conn>,
    ended: bool,
    /// A stream's: resolves when the stream is closed for a newer one
    /// (HTTP-008), which its client is then told before the body ends.
    closing: Option<Pin<Box<dyn Future<Output = ()> + Send + Sync>>>,
    /// Closed for a newer stream and told so: the body has ended.
    closed: bool,
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

impl Held {
    /// The last byte was handed over: the request is no longer in flight,
    /// nothing is left to cancel, and the answer's bytes beyond what it
    /// holds go back to the budget.
    fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.hold.cancel = None;
        self.hold.slots = None;
        let mut bytes = self.hold.bytes.take();
        if let Some(b) = &mut bytes
            && b.num_permits() > self.sent
        {
            drop(b.split(b.num_permits() - self.sent));
        }
        self.conn.answer_handed_over(bytes);
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.inner.is_end_stream() {
            // An empty answer, which hyper never polls: sent whole.
            self.end();
        }
        let Some(c) = self.hold.cancel.take() else {
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
        // The id stays taken until the cancellation is handed to rmcp, so
        // a request reusing it cannot be the one cancelled.
        let slots = self.hold.slots.take();
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
        if self.closed {
            return Poll::Ready(None);
        }
        if let Some(closing) = &mut self.closing
            && closing.as_mut().poll(cx).is_ready()
        {
            // Closed for a newer stream (HTTP-008): said on the stream as
            // an SSE comment, and the body ends as an HTTP message ends.
            self.closing = None;
            self.closed = true;
            self.end();
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(format!(
                ": HTTP-008: this stream was closed for a newer one: {MAX_HTTP_STREAMS} streams are open \
                 on this server, its limit; open it again to go on listening\n\n"
            ))))));
        }
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            self.sent += data.len();
            // An answer built larger than its estimate counts what room
            // there is; it exists already, and is sent all the same.
            let sent = self.sent;
            let answers = Arc::clone(&self.answers);
            if let Some(b) = &mut self.hold.bytes
                && sent > b.num_permits()
                && let Some(more) = answers.try_take(sent - b.num_permits())
            {
                b.merge(more);
            }
        }
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            // Handed over whole (hyper may not poll a body past its last
            // frame).
            self.end();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.closed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        if self.closing.is_some() {
            // More may come than the inner body says: the closing word.
            return SizeHint::default();
        }
        self.inner.size_hint()
    }
}

/// Whether a refusal with `status` is said at warn now: the first, and
/// then one a minute.
fn owner_hears(status: StatusCode) -> bool {
    use std::sync::OnceLock;
    use std::time::Instant;
    static LAST: OnceLock<Mutex<HashMap<u16, Instant>>> = OnceLock::new();
    let mut last = LAST
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = Instant::now();
    match last.get(&status.as_u16()) {
        Some(t) if now.duration_since(*t) < Duration::from_secs(60) => false,
        _ => {
            last.insert(status.as_u16(), now);
            true
        }
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

/// A refusal of [`Access`]: 401 carries `WWW-Authenticate: Bearer`. The
/// owner hears of it at the default log level, once a minute for each
/// status at most: a teammate refused for their Host or token is what an
/// owner must see (a newcomer saw only "listening" while teammates got 403
/// and 401), and a stranger's flood of them must not fill the log.
fn refused(r: Refused) -> Answer {
    if owner_hears(r.status) {
        tracing::warn!(
            "{} (refused with {}; more such refusals this minute are logged at info, SKILL_MCP_LOG=info)",
            r.message,
            r.status
        );
    } else {
        tracing::info!(status = %r.status, message = %r.message, "refused an HTTP request");
    }
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

#[cfg(test)]
mod tests {
    //! The in-flight caps (HTTP-007) at the door itself: a request is in
    //! flight until the last byte of its answer is handed to its
    //! connection, which a test holds back by not polling the answer. From
    //! outside, no request of this server stays in rmcp's hands long
    //! enough (a run is one at a time, RUN-011) to fill 128 slots.

    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::path::{Path, PathBuf};

    use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
    use serde_json::{Value, json};

    use super::super::connections::Connections;
    use super::*;
    use crate::config::Config;
    use crate::snapshot::Snapshot;

    fn door(root: &Path) -> Arc<Door> {
        let mut env = BTreeMap::new();
        env.insert(OsString::from("SKILLS_DIR"), root.as_os_str().to_owned());
        let snapshot = Snapshot::boot(Config::from_env(env, Path::new("/"), PathBuf::from("/x")));
        let chars = snapshot.budget;
        let server = SkillServer::new(snapshot).without_run();
        let sessions = Arc::new(Sessions::new(Duration::from_secs(300)));
        let rmcp = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::clone(&sessions),
            StreamableHttpServerConfig::default()
                .disable_allowed_hosts()
                .disable_allowed_origins()
                .with_json_response(true),
        );
        let access = Access::new(
            "127.0.0.1:1".parse().unwrap_or_else(|e| panic!("{e}")),
            &[],
            &[],
            None,
        );
        Arc::new(Door::new(
            access,
            rmcp,
            sessions,
            false,
            chars,
            Arc::default(),
        ))
    }

    fn request(body: Value, extra: &[(&str, &str)]) -> Request<Full<Bytes>> {
        let mut b = Request::builder()
            .method(Method::POST)
            .uri("/mcp")
            .header("host", "127.0.0.1:1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (k, v) in extra {
            b = b.header(*k, *v);
        }
        b.body(Full::new(Bytes::from(body.to_string())))
            .unwrap_or_else(|e| panic!("a request: {e}"))
    }

    fn stateless(id: u64) -> Request<Full<Bytes>> {
        request(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}}),
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
            ],
        )
    }

    async fn whole(a: Answer) -> String {
        let bytes = a
            .into_body()
            .collect()
            .await
            .unwrap_or_else(|e| match e {})
            .to_bytes();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[tokio::test]
    async fn the_server_holds_at_most_128_requests_until_their_answers_are_handed_over() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = door(dir.path());
        let conns = Arc::new(Connections::default());
        let conn = conns.open(None).unwrap_or_else(|| panic!("room"));
        let mut held = Vec::new();
        for id in 0..MAX_HTTP_IN_FLIGHT as u64 {
            let a = d.handle(stateless(id), &conn.conn).await;
            assert_eq!(a.status(), StatusCode::OK);
            held.push(a);
        }
        let refused = d.handle(stateless(999), &conn.conn).await;
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            refused.headers().get(header::RETRY_AFTER),
            Some(&HeaderValue::from_static("1"))
        );
        let text = whole(refused).await;
        assert!(
            text.contains("HTTP-007") && text.contains("\"id\":999"),
            "{text}"
        );
        // One answer handed over whole frees one slot.
        let one = held.pop().unwrap_or_else(|| panic!("held"));
        assert!(whole(one).await.contains("skill_list"));
        let a = d.handle(stateless(1000), &conn.conn).await;
        assert_eq!(a.status(), StatusCode::OK);
        held.push(a);
        assert_eq!(
            d.handle(stateless(1001), &conn.conn).await.status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        // Answers dropped unsent (the client went away) free theirs too.
        drop(held);
        assert_eq!(
            d.handle(stateless(1002), &conn.conn).await.status(),
            StatusCode::OK
        );
    }

    #[tokio::test]
    async fn a_session_holds_at_most_64_and_never_two_under_one_id() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = door(dir.path());
        let conns = Arc::new(Connections::default());
        let conn = conns.open(None).unwrap_or_else(|| panic!("room"));
        let init = d
            .handle(
                request(
                    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                        "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "0"}}}),
                    &[],
                ),
                &conn.conn,
            )
            .await;
        let sid = init
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("a session"))
            .to_owned();
        whole(init).await;
        let h = [
            ("mcp-session-id", sid.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        whole(d.handle(request(note, &h), &conn.conn).await).await;
        let ping = |id: u64| request(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}), &h);
        let mut held = Vec::new();
        for id in 1..=MAX_IN_FLIGHT as u64 {
            let a = d.handle(ping(id), &conn.conn).await;
            assert_eq!(a.status(), StatusCode::OK);
            held.push(a);
        }
        let again = d.handle(ping(1), &conn.conn).await;
        assert_eq!(again.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(whole(again).await.contains("HTTP-007"));
        // Below the session's cap, an id still in flight is refused.
        let first = held.remove(0);
        assert!(whole(first).await.contains("\"id\":1"));
        let twice = d.handle(ping(2), &conn.conn).await;
        assert_eq!(twice.status(), StatusCode::BAD_REQUEST);
        assert!(whole(twice).await.contains("still in flight"));
        let fresh = d.handle(ping(1), &conn.conn).await;
        assert_eq!(fresh.status(), StatusCode::OK);
        assert!(whole(fresh).await.contains("\"id\":1"));
    }
}
