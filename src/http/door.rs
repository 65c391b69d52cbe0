//! One HTTP request, from its head to rmcp's answer: the routing (spec
//! HTTP-001..HTTP-016). The head is screened ([`headers`]) and who may
//! connect is asked of [`Access`]; the body is read bounded ([`body`]),
//! and read once by the stdio transport's own rules (`transport::message`,
//! framed as a body), so what is not a JSON-RPC message is answered with
//! the same JSON-RPC error as on stdio. A request must then pass the
//! [`admission`] policy; only a request read whole and let in takes its
//! [`slots`] (overall and in its session, or a stream's) and room in the
//! answer budget; then rmcp's `StreamableHttpService` sees it. The answer's
//! body ([`Held`]) holds the slots until its last byte is handed to the
//! connection (an SSE answer until its stream ends), the answer's bytes
//! until they are written. Every refusal's words are [`replies`]'.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::Body;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use rmcp::model::{ClientJsonRpcMessage, RequestId};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use tokio::sync::OwnedSemaphorePermit;

use super::access::Access;
use super::admission::{self, REMOVED_IN_2026};
use super::body::read_body;
use super::budget::{Bodies, Budget, answer_estimate};
use super::connections::{Conn, Connections, Doing};
use super::headers;
use super::held::{CancelOnDrop, Closing, Held, Hold};
use super::replies::{self, jsonrpc_error, refused, text};
use super::sessions::{STANDALONE_EVENT_ID, Sessions};
use super::slots::Slots;
use crate::limits::{MAX_HTTP_ANSWER_BYTES, MAX_HTTP_BODIES_BYTES, MAX_HTTP_BODY_BYTES};
use crate::server::SkillServer;
use crate::transport::message::{self, ClientId, Framing, Incoming, Refusal};

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
    slots: Slots,
    /// Every open connection: the oldest stream is closed for a new one.
    connections: Arc<Connections>,
    bodies: Bodies,
    answers: Arc<Budget>,
    /// The answer budget in characters (LIST-005): what an answer held to
    /// it can be, for the answer's estimate (HTTP-015).
    answer_chars: usize,
}

/// A request let in: what its answer holds, a listen still waiting for a
/// stream's slot (by its id), and the message written again for rmcp.
#[derive(Default)]
struct LetIn {
    hold: Hold,
    pending_stream: Option<ClientId>,
    again: Option<Vec<u8>>,
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
            slots: Slots::new(),
            connections,
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
            Box::pin(async move { conn.closed().await }) as Closing
        });
        let held = Held::new(
            body,
            hold,
            Arc::clone(&self.answers),
            Arc::clone(conn),
            closing,
        );
        Response::from_parts(parts, BoxBody::new(held))
    }

    async fn inside<B>(&self, parts: Parts, body: B, conn: &Arc<Conn>) -> (Answer, Hold)
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
            return none(replies::method_not_served(&parts.method));
        }
        if parts.uri.path() != PATH {
            return none(replies::nothing_at(parts.uri.path()));
        }
        if let Err(a) = admission::head(&parts, &self.sessions) {
            return none(*a);
        }
        let names_a_session = parts.headers.contains_key("mcp-session-id");
        let (answer, hold) = match parts.method {
            Method::POST => self.post(parts, body, conn).await,
            Method::GET => self.get(parts, conn).await,
            _ => none(self.delete(parts, conn).await),
        };
        // rmcp's words for a session that is gone (ended, expired, never
        // opened) are "Session not found"; these say what to do (HTTP-008).
        if names_a_session && answer.status() == StatusCode::NOT_FOUND {
            return (replies::no_session(), hold);
        }
        (answer, hold)
    }

    /// A GET: a session's stream (HTTP-008).
    async fn get(&self, mut parts: Parts, conn: &Arc<Conn>) -> (Answer, Hold) {
        if let Some(a) = self.no_stream(&parts) {
            return (a, Hold::default());
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
        let slot = opens.then(|| self.slots.stream()).flatten();
        conn.set(Doing::Working);
        let answer = self
            .rmcp
            .handle(Request::from_parts(parts, Full::new(Bytes::new())))
            .await;
        let slot = match slot {
            Some(slot) => Some(slot),
            None if opens => match self.stream_for(&answer).await {
                Ok(slot) => slot,
                Err(()) => return (replies::too_many_streams(None), Hold::default()),
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

    /// A DELETE (a session's end) carries no body and no request: rmcp
    /// answers it as it is.
    async fn delete(&self, parts: Parts, conn: &Arc<Conn>) -> Answer {
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
        answer
    }

    /// A GET that can open no stream is 405, the Streamable HTTP answer
    /// to one (HTTP-008): without a session there is no stream to open,
    /// and a request's stream is never resumed. Both SDKs stop there; an
    /// empty stream or a 400 made the Python SDK resume a cancelled call's
    /// stream every 3 s for the session's life, and the TypeScript SDK
    /// report errors after its own DELETE.
    fn no_stream(&self, parts: &Parts) -> Option<Answer> {
        let Some(session) = parts.headers.get("mcp-session-id") else {
            return Some(replies::get_without_session());
        };
        let session = session.to_str().ok()?;
        let last = parts.headers.get("last-event-id")?.to_str().ok()?;
        self.sessions
            .opened_stream_of(session, last.trim())
            .then(replies::request_stream_not_resumed)
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
            return none(replies::too_large());
        }
        // The body first, holding no slot: a client whose body does not
        // come holds only the bytes it sent (HTTP-007).
        let (bytes, body_bytes) = match read_body(body, &self.bodies, conn).await {
            Ok(b) => b,
            Err(a) => return none(*a),
        };
        let (incoming, direct) = message::read_decoding(&bytes, Framing::Body);
        let let_in = match incoming {
            Incoming::Refuse(r) => return none(refusal(&parts.headers, &bytes, r)),
            Incoming::Drop(why) => {
                tracing::info!("dropped {why}");
                return none(text(StatusCode::ACCEPTED, String::new()));
            }
            Incoming::Request { id, mut message } => {
                match self
                    .let_in(&parts.headers, &bytes, id, &mut message, direct, conn)
                    .await
                {
                    Ok(let_in) => let_in,
                    Err(a) => return none(*a),
                }
            }
            Incoming::Notification { message, .. } | Incoming::Response(message) => {
                // rmcp's words for this are "Session ID is required";
                // these say which rule and what to send (HTTP-002).
                if !parts.headers.contains_key("mcp-session-id") {
                    return none(replies::notification_without_session());
                }
                conn.set(Doing::Working);
                LetIn {
                    again: serde_json::to_vec(&*message).ok(),
                    ..LetIn::default()
                }
            }
        };
        let LetIn {
            mut hold,
            pending_stream,
            again,
        } = let_in;
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
            match self.stream_for(&answer).await {
                Ok(Some(stream)) => {
                    hold.slots = Some((stream, None));
                    conn.set(Doing::Streaming);
                }
                Ok(None) => {}
                Err(()) => return none(replies::too_many_streams(Some(&id))),
            }
        }
        (answer, hold)
    }

    /// A request read whole, let in by the [`admission`] policy: its slots
    /// (a stream's for a listen), the call to cancel if its answer is not
    /// sent whole, and room for its answer. The message, when it was read
    /// through a tree (`direct` false), is written again for rmcp
    /// (HTTP-006).
    async fn let_in(
        &self,
        headers: &HeaderMap,
        bytes: &[u8],
        id: ClientId,
        message: &mut ClientJsonRpcMessage,
        direct: bool,
        conn: &Arc<Conn>,
    ) -> Result<LetIn, Box<Answer>> {
        if let ClientJsonRpcMessage::Request(req) = &*message
            && REMOVED_IN_2026.contains(&req.request.method())
            && let Some(a) = admission::removed_in_2026(headers, bytes)
        {
            return Err(Box::new(a));
        }
        let session = headers
            .get("mcp-session-id")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        admission::admit(
            &id,
            message,
            session.is_some(),
            &self.sessions,
            self.allow_run,
        )?;
        if let Some(a) = admission::name_no_header_can_match(headers, &id, message) {
            return Err(Box::new(a));
        }
        let mut let_in = LetIn::default();
        // A listen rmcp serves is a stream and takes a stream's
        // slot; at the cap it goes to rmcp without one, and only
        // an answer that opens a stream closes the oldest for its
        // slot (HTTP-008). One without 2026-07-28 `_meta` is
        // answered at once (-32601 in a session): a request.
        let listen = admission::is_listen(message);
        if listen {
            match self.slots.stream() {
                Some(stream) => let_in.hold.slots = Some((stream, None)),
                None => let_in.pending_stream = Some(id.clone()),
            }
        } else {
            let_in.hold.slots = Some(self.slots.request(&id, session.as_deref())?);
        }
        // A request of a session is cancelled if its answer is
        // not sent whole (RUN-028: nobody can approve, or see, a
        // run whose client went away). An id rmcp cannot carry
        // was refused above.
        if let Some(session) = &session
            && let Ok(rid) = serde_json::from_str::<RequestId>(id.raw.get())
        {
            let_in.hold.cancel = Some(CancelOnDrop {
                sessions: Arc::clone(&self.sessions),
                session: session.as_str().into(),
                id: rid,
            });
        }
        if listen {
            conn.set(if let_in.pending_stream.is_some() {
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
            let estimate = answer_estimate(message, self.answer_chars);
            let Some(room) = self.answers.take(estimate).await else {
                return Err(Box::new(replies::answers_full(&id)));
            };
            let_in.hold.bytes = Some(room);
        }
        if admission::is_initialize(message) {
            tracing::debug!("opening an HTTP session");
        }
        if !direct
            && let ClientJsonRpcMessage::Request(r) = message
            && let Ok(rid) = serde_json::from_str::<RequestId>(id.raw.get())
        {
            r.id = rid;
            let_in.again = serde_json::to_vec(&*message).ok();
        }
        Ok(let_in)
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

    /// A stream's slot for an answer rmcp gave at the cap (HTTP-008); see
    /// [`Slots::stream_for`].
    async fn stream_for(&self, answer: &Answer) -> Result<Option<OwnedSemaphorePermit>, ()> {
        self.slots.stream_for(answer, &self.connections).await
    }
}

/// The answer to a body the transport's rules refuse: its JSON-RPC error,
/// worded for a body. A removed method's params need not be that
/// method's, so its refusal may come before its method is seen (HTTP-011);
/// the body is looked at again only on this path.
fn refusal(headers: &HeaderMap, body: &[u8], r: Refusal) -> Answer {
    if let Some(a) = admission::removed_in_2026(headers, body) {
        return a;
    }
    tracing::info!(code = r.code, message = %r.message, "refused an HTTP request");
    jsonrpc_error(StatusCode::BAD_REQUEST, r.id.as_deref(), r.code, r.message)
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
    use std::time::Duration;

    use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
    use serde_json::{Value, json};

    use super::super::connections::Connections;
    use super::*;
    use crate::config::Config;
    use crate::limits::MAX_HTTP_IN_FLIGHT;
    use crate::snapshot::Snapshot;
    use crate::transport::ids::MAX_IN_FLIGHT;

    fn door(root: &Path) -> Arc<Door> {
        let mut env = BTreeMap::new();
        env.insert(OsString::from("SKILLS_DIR"), root.as_os_str().to_owned());
        let snapshot = Snapshot::boot(Config::from_env(env, Path::new("/"), PathBuf::from("/x")));
        let chars = snapshot.settings.budget;
        let server = SkillServer::new(snapshot, crate::offer::Offer::http(false, Duration::ZERO));
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
