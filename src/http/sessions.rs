//! The HTTP door's 2025-11-25 sessions (HTTP-008), as rmcp's
//! `SessionManager`.
//!
//! Why not rmcp's `LocalSessionManager`: it gives every session a worker
//! task and five tokio channels, and a tokio channel allocates its first
//! block of 32 message slots up front — about 53 KiB resident a session,
//! most of issue 29 §7's 64 MiB at 1,000 sessions. What it adds over this
//! module (an event store, resumable streams, priming events) this server
//! does not use: it answers in JSON and hands out no event ids. Here a
//! session is a map entry, one inbound channel of boxed messages (a block
//! of pointers), and the routes of its requests in flight; rmcp's own
//! service still serves each session, so the protocol is rmcp's.
//!
//! Routing follows rmcp's: an answer goes to the stream of the request it
//! answers, and ends it; a request the server sends while handling one
//! (an elicitation, SEP-2260) goes to that request's stream, as does a
//! progress notification naming its token and a cancellation of a server
//! request sent there; everything else goes to the standalone (GET)
//! stream, if one is open.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, GetExtensions, GetMeta, ProgressToken, RequestId,
    ServerJsonRpcMessage, ServerNotification,
};
use rmcp::service::{OriginatingRequestId, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId, session_id};
use rmcp::transport::streamable_http_server::session::SessionManager;
use tokio::sync::mpsc;

/// Messages a session's service has not taken yet. The door lets a
/// session have few requests in flight (HTTP-007), so this is rarely full.
const INBOUND: usize = 16;
/// The reconnection delay a request's stream primes its client with
/// (SEP-1699), as rmcp's own session manager does.
const SSE_RETRY: Duration = Duration::from_secs(3);
/// Server messages a standalone stream holds unread; past it a message
/// for it is dropped (it carries only notifications here), so a client
/// that opens a GET and never reads cannot hold the session's memory.
const STANDALONE: usize = 64;
/// The one event id the standalone stream carries: rmcp primes it with
/// `0` (no event store), and its messages have none.
pub(crate) const STANDALONE_EVENT_ID: &str = "0";

/// Every open session.
pub(crate) struct Sessions {
    open: RwLock<HashMap<SessionId, Arc<Session>>>,
    /// A session no message has touched for this long, with no request
    /// in flight, is closed (HTTP-008).
    idle: Duration,
}

/// Why a session could not be used.
#[derive(Debug)]
pub(crate) enum SessionError {
    /// No open session has this id (closed, expired, or never opened).
    Gone(SessionId),
    /// The session's service ended before it answered.
    Ended(SessionId),
    /// A `Last-Event-ID` naming no stream that can be resumed: nothing
    /// is kept to replay, and a request's stream ended with its request.
    NotResumable(SessionId),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::Gone(id) => write!(
                f,
                "HTTP-008: no session {id} is open; send initialize without an Mcp-Session-Id to open one"
            ),
            SessionError::Ended(id) => write!(
                f,
                "HTTP-008: session {id} ended before it answered; send initialize to open a new one"
            ),
            SessionError::NotResumable(id) => write!(
                f,
                "HTTP-008: session {id} keeps no events, and a request's stream ended with its connection \
                 (its request was cancelled then); send the request again"
            ),
        }
    }
}

impl std::error::Error for SessionError {}

/// One session: what the door hands its service, and where the service's
/// messages go.
struct Session {
    id: SessionId,
    /// To the session's service; taken when the session is closed, which
    /// ends the service (its transport's `receive` sees the end).
    inbound: Mutex<Option<mpsc::Sender<Box<ClientJsonRpcMessage>>>>,
    routes: Mutex<Routes>,
    touched: Mutex<Instant>,
}

/// Where the service's messages go.
/// One request's stream: where its messages go, and the event id of the
/// next (`INDEX/STREAM`, the form rmcp's manager gives).
struct Stream {
    tx: mpsc::UnboundedSender<ServerSseMessage>,
    stream: u64,
    next: u64,
}

impl Stream {
    fn outbound(&mut self) -> Outbound {
        self.next += 1;
        Outbound::Request(self.tx.clone(), format!("{}/{}", self.next, self.stream))
    }
}

#[derive(Default)]
struct Routes {
    /// The stream of each client request in flight, by its id.
    requests: HashMap<RequestId, Stream>,
    /// Numbers the session's request streams, for their event ids.
    streams: u64,
    /// A request's progress token, to the request.
    progress: HashMap<ProgressToken, RequestId>,
    /// A request the server sent on a client request's stream, to that
    /// client request: its cancellation follows it there.
    sent: HashMap<RequestId, RequestId>,
    standalone: Option<mpsc::Sender<ServerSseMessage>>,
}

impl Routes {
    /// Where `message` goes; `None` when nowhere (no stream wants it).
    fn route(&mut self, message: &ServerJsonRpcMessage) -> Option<Outbound> {
        let of_request =
            |routes: &mut Routes, id: &RequestId| routes.requests.get_mut(id).map(Stream::outbound);
        let found = match message {
            ServerJsonRpcMessage::Response(r) => self.finish(&r.id),
            ServerJsonRpcMessage::Error(e) => e.id.as_ref().and_then(|id| self.finish(id)),
            ServerJsonRpcMessage::Request(r) => {
                let origin = r.request.extensions().get::<OriginatingRequestId>();
                let to = origin.and_then(|o| of_request(self, &o.0.clone()));
                if let (Some(o), Some(_)) = (origin, &to) {
                    self.sent.insert(r.id.clone(), o.0.clone());
                }
                to
            }
            ServerJsonRpcMessage::Notification(n) => match &n.notification {
                ServerNotification::ProgressNotification(p) => self
                    .progress
                    .get(&p.params.progress_token)
                    .cloned()
                    .and_then(|id| of_request(self, &id)),
                ServerNotification::CancelledNotification(c) => c
                    .params
                    .request_id
                    .as_ref()
                    .and_then(|id| self.sent.get(id))
                    .cloned()
                    .and_then(|id| of_request(self, &id)),
                _ => None,
            },
        };
        found.or_else(|| {
            self.standalone
                .as_ref()
                .map(|tx| Outbound::Standalone(tx.clone()))
        })
    }

    /// The stream of the request `id` answers, which the answer ends.
    fn finish(&mut self, id: &RequestId) -> Option<Outbound> {
        let mut stream = self.requests.remove(id)?;
        self.progress.retain(|_, r| r != id);
        self.sent.retain(|_, r| r != id);
        Some(stream.outbound())
    }
}

enum Outbound {
    /// A request's stream, and the message's event id there.
    Request(mpsc::UnboundedSender<ServerSseMessage>, String),
    Standalone(mpsc::Sender<ServerSseMessage>),
}

impl Session {
    fn touch(&self) {
        *lock(&self.touched) = Instant::now();
    }

    /// Hands `message` to the session's service.
    async fn push(&self, message: ClientJsonRpcMessage) -> Result<(), SessionError> {
        self.touch();
        let inbound = lock(&self.inbound).clone();
        let Some(inbound) = inbound else {
            return Err(SessionError::Ended(self.id.clone()));
        };
        inbound
            .send(Box::new(message))
            .await
            .map_err(|_| SessionError::Ended(self.id.clone()))
    }

    /// Sends a message of the service where it goes.
    /// Only the client's messages count as use (HTTP-008): a notification
    /// the server sends every session does not keep idle ones open.
    fn deliver(&self, message: ServerJsonRpcMessage) {
        let to = lock(&self.routes).route(&message);
        match to {
            // A stream whose client went away takes nothing: the message
            // is dropped, as it would be on the wire.
            Some(Outbound::Request(tx, event_id)) => {
                let _ = tx.send(ServerSseMessage::new(event_id, message));
            }
            Some(Outbound::Standalone(tx)) => {
                if tx
                    .try_send(ServerSseMessage::from_message(message))
                    .is_err()
                {
                    tracing::debug!(session = %self.id, "a message for an unread or closed standalone stream was dropped");
                }
            }
            None => {
                tracing::debug!(session = %self.id, "a server message no stream of the session wants was dropped");
            }
        }
    }

    /// Ends the session: its service sees the end of its input, its
    /// streams end.
    fn close(&self) {
        lock(&self.inbound).take();
        *lock(&self.routes) = Routes::default();
    }

    /// In use whatever its last message: a request in flight, or a GET
    /// stream its client still holds open to hear notifications.
    fn busy(&self) -> bool {
        let routes = lock(&self.routes);
        !routes.requests.is_empty() || routes.standalone.as_ref().is_some_and(|tx| !tx.is_closed())
    }
}

/// A poisoned lock still holds consistent maps here (no code panics while
/// holding one), so its contents are used as they are.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Sessions {
    pub(crate) fn new(idle: Duration) -> Sessions {
        Sessions {
            open: RwLock::default(),
            idle,
        }
    }

    /// How many sessions are open (HTTP-008's cap).
    pub(crate) fn count(&self) -> usize {
        self.read().len()
    }

    pub(crate) fn is_open(&self, id: &str) -> bool {
        self.read().contains_key(id)
    }

    /// Whether `last_event_id` names an event of a request's stream this
    /// session opened (`I/N`, N one of its streams). Such a stream is not
    /// resumed — no events are kept, and its request was cancelled or
    /// answered — so the door says so with 405 rather than an empty
    /// stream, which a client takes as another break and resumes again
    /// for ever (HTTP-008).
    pub(crate) fn opened_stream_of(&self, id: &str, last_event_id: &str) -> bool {
        let Some((event, stream)) = last_event_id.split_once('/') else {
            return false;
        };
        let (Ok(_), Ok(stream)) = (event.parse::<u64>(), stream.parse::<u64>()) else {
            return false;
        };
        let Some(session) = self.read().get(id).cloned() else {
            return false;
        };
        stream >= 1 && stream <= lock(&session.routes).streams
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<SessionId, Arc<Session>>> {
        self.open
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<SessionId, Arc<Session>>> {
        self.open
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn get(&self, id: &SessionId) -> Result<Arc<Session>, SessionError> {
        self.read()
            .get(id)
            .cloned()
            .ok_or_else(|| SessionError::Gone(id.clone()))
    }

    fn remove(&self, id: &SessionId) {
        if let Some(session) = self.write().remove(id) {
            session.close();
        }
    }

    /// Closes every session idle for longer than `idle` with no request
    /// in flight; runs until the manager is dropped.
    /// At the cap, closes the session its client has left untouched the
    /// longest, if that is at least the idle time — even one whose GET
    /// stream is open, which the sweep keeps: one client holding every
    /// session with a GET stream each could otherwise keep everyone else
    /// from opening one for good (HTTP-008). A session with a request in
    /// flight is never closed for it. True when one was closed.
    pub(crate) fn make_room(&self) -> bool {
        let stalest = self
            .read()
            .values()
            .filter(|s| lock(&s.routes).requests.is_empty())
            .map(|s| (lock(&s.touched).elapsed(), s.id.clone()))
            .filter(|(quiet, _)| *quiet >= self.idle)
            .max_by_key(|(quiet, _)| *quiet);
        let Some((quiet, id)) = stalest else {
            return false;
        };
        tracing::debug!(session = %id, quiet_secs = quiet.as_secs(), "closing a quiet HTTP session for a new one");
        self.remove(&id);
        true
    }

    pub(crate) fn expire_idle(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let every = (self.idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(30));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(sessions) = weak.upgrade() else {
                    return;
                };
                let idle: Vec<SessionId> = sessions
                    .read()
                    .values()
                    .filter(|s| !s.busy() && lock(&s.touched).elapsed() >= sessions.idle)
                    .map(|s| s.id.clone())
                    .collect();
                for id in idle {
                    tracing::debug!(session = %id, "closing an idle HTTP session");
                    sessions.remove(&id);
                }
            }
        });
    }

    /// Routes a client request into its session; the stream carries what
    /// the service sends for it and ends with its answer. It opens with a
    /// priming event (an event id, no data, a retry delay: SEP-1699), as
    /// rmcp's own manager's streams do; the answer then comes as an SSE
    /// event rather than a JSON body.
    async fn open_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<Answers, SessionError> {
        let session = self.get(id)?;
        let (tx, rx) = mpsc::unbounded_channel();
        if let ClientJsonRpcMessage::Request(r) = &message {
            let mut routes = lock(&session.routes);
            routes.streams += 1;
            let stream = routes.streams;
            let _ = tx.send(ServerSseMessage::priming(format!("0/{stream}"), SSE_RETRY));
            routes.requests.insert(
                r.id.clone(),
                Stream {
                    tx,
                    stream,
                    next: 0,
                },
            );
            if let Some(token) = r.request.get_meta().get_progress_token() {
                routes.progress.insert(token, r.id.clone());
            }
        }
        session.push(message).await?;
        Ok(Answers(rx))
    }
}

/// What the service sends for one request, as rmcp's HTTP service reads it.
pub(crate) struct Answers(mpsc::UnboundedReceiver<ServerSseMessage>);

impl futures_core::Stream for Answers {
    type Item = ServerSseMessage;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

/// The standalone (GET) stream.
pub(crate) struct Standalone(mpsc::Receiver<ServerSseMessage>);

impl futures_core::Stream for Standalone {
    type Item = ServerSseMessage;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

/// A session's side of rmcp's service: what it reads and where its
/// messages go.
pub(crate) struct SessionTransport {
    session: Arc<Session>,
    inbound: mpsc::Receiver<Box<ClientJsonRpcMessage>>,
}

impl Transport<RoleServer> for SessionTransport {
    type Error = SessionError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.session.deliver(item);
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.inbound.recv().await.map(|m| *m)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.session.close();
        Ok(())
    }
}

impl SessionManager for Sessions {
    type Error = SessionError;
    type Transport = SessionTransport;

    async fn create_session(&self) -> Result<(SessionId, SessionTransport), SessionError> {
        let id = session_id();
        let (tx, rx) = mpsc::channel(INBOUND);
        let session = Arc::new(Session {
            id: id.clone(),
            inbound: Mutex::new(Some(tx)),
            routes: Mutex::default(),
            touched: Mutex::new(Instant::now()),
        });
        self.write().insert(id.clone(), Arc::clone(&session));
        Ok((
            id,
            SessionTransport {
                session,
                inbound: rx,
            },
        ))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionError> {
        let mut answers = self.open_stream(id, message).await?;
        while let Some(m) = answers.0.recv().await {
            if let Some(m) = m.message
                && matches!(
                    *m,
                    ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)
                )
            {
                return Ok(Arc::unwrap_or_clone(m));
            }
        }
        Err(SessionError::Ended(id.clone()))
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionError> {
        Ok(self.is_open(id))
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionError> {
        self.remove(id);
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        SessionError,
    > {
        self.open_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionError> {
        let session = self.get(id)?;
        match &message {
            // A cancelled request's stream ends, as in rmcp's manager.
            ClientJsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(rid) = &c.params.request_id
                {
                    lock(&session.routes).finish(rid);
                }
            }
            ClientJsonRpcMessage::Response(r) => {
                lock(&session.routes).sent.remove(&r.id);
            }
            ClientJsonRpcMessage::Error(e) => {
                if let Some(rid) = &e.id {
                    lock(&session.routes).sent.remove(rid);
                }
            }
            ClientJsonRpcMessage::Request(_) => {}
        }
        session.push(message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        SessionError,
    > {
        let session = self.get(id)?;
        session.touch();
        let (tx, rx) = mpsc::channel(STANDALONE);
        // A newer GET takes the session's notifications; an older one ends.
        lock(&session.routes).standalone = Some(tx);
        Ok(Standalone(rx))
    }

    /// Nothing is replayed (this server keeps no event store). A
    /// `Last-Event-ID` of the standalone stream's priming event (`0`) opens
    /// the standalone stream again, from now; any other — a request's
    /// stream, whose request was cancelled when its connection closed
    /// (HTTP-009), or an id this server never gave — is refused, which
    /// rmcp answers with an empty stream that ends at once. Opening the
    /// standalone stream for it instead would end the client's live GET
    /// stream (a newer GET takes it) and hand it notifications as the
    /// request's resumption, where its answer never comes (HTTP-008).
    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        SessionError,
    > {
        if last_event_id.trim() != STANDALONE_EVENT_ID {
            self.get(id)?.touch();
            return Err(SessionError::NotResumable(id.clone()));
        }
        self.create_standalone_stream(id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::GetExtensions;
    use serde_json::{Value, json};

    fn client(v: Value) -> ClientJsonRpcMessage {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("a client message: {e}"))
    }

    fn server(v: Value) -> ServerJsonRpcMessage {
        serde_json::from_value(v).unwrap_or_else(|e| panic!("a server message: {e}"))
    }

    fn ping(id: u64) -> ClientJsonRpcMessage {
        client(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
    }

    fn answer(id: u64) -> ServerJsonRpcMessage {
        server(json!({"jsonrpc": "2.0", "id": id, "result": {}}))
    }

    /// What a stream holds now: (event id, message as JSON, retry).
    fn drain(
        rx: &mut (impl futures_core::Stream<Item = ServerSseMessage> + Unpin),
    ) -> Vec<(Option<String>, Option<Value>, Option<Duration>)> {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut seen = Vec::new();
        while let Poll::Ready(Some(m)) = Pin::new(&mut *rx).poll_next(&mut cx) {
            let json = m
                .message
                .map(|m| serde_json::to_value(&*m).unwrap_or(Value::Null));
            seen.push((m.event_id, json, m.retry));
        }
        seen
    }

    /// The session's standalone (GET) stream, as a GET opens it.
    async fn standalone(
        sessions: &Sessions,
        id: &SessionId,
    ) -> Pin<Box<dyn futures_core::Stream<Item = ServerSseMessage> + Send + Sync>> {
        Box::pin(
            sessions
                .create_standalone_stream(id)
                .await
                .unwrap_or_else(|_| unreachable!()),
        )
    }

    /// The service sends a notification of no request (`method`, no params).
    async fn notify(t: &mut SessionTransport, method: &str) {
        t.send(server(json!({"jsonrpc": "2.0", "method": method})))
            .await
            .unwrap_or_else(|_| unreachable!());
    }

    fn ended(rx: &mut (impl futures_core::Stream<Item = ServerSseMessage> + Unpin)) -> bool {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        matches!(Pin::new(rx).poll_next(&mut cx), Poll::Ready(None))
    }

    #[tokio::test]
    async fn a_request_stream_is_primed_carries_its_answer_and_ends() {
        let sessions = Sessions::new(Duration::from_secs(300));
        let (id, mut t) = sessions
            .create_session()
            .await
            .unwrap_or_else(|_| unreachable!());
        let mut first = Box::pin(
            sessions
                .create_stream(&id, ping(7))
                .await
                .unwrap_or_else(|_| unreachable!()),
        );
        let got = t
            .receive()
            .await
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null));
        assert_eq!(got.as_ref().and_then(|m| m.get("id")), Some(&json!(7)));
        t.send(answer(7)).await.unwrap_or_else(|_| unreachable!());
        let seen = drain(&mut first);
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0], (Some("0/1".into()), None, Some(SSE_RETRY)));
        assert_eq!(seen[1].0.as_deref(), Some("1/1"));
        assert_eq!(
            seen[1].1.as_ref().and_then(|m| m.get("id")),
            Some(&json!(7))
        );
        assert!(ended(&mut first), "the answer ends its stream");
        // The next request's stream is numbered on.
        let mut second = Box::pin(
            sessions
                .create_stream(&id, ping(8))
                .await
                .unwrap_or_else(|_| unreachable!()),
        );
        assert_eq!(drain(&mut second)[0].0.as_deref(), Some("0/2"));
    }

    #[tokio::test]
    async fn a_server_request_rides_the_stream_of_the_request_it_serves_and_so_does_its_cancel() {
        let sessions = Sessions::new(Duration::from_secs(300));
        let (id, mut t) = sessions
            .create_session()
            .await
            .unwrap_or_else(|_| unreachable!());
        let mut call = Box::pin(
            sessions
                .create_stream(&id, ping(1))
                .await
                .unwrap_or_else(|_| unreachable!()),
        );
        let mut other = Box::pin(
            sessions
                .create_stream(&id, ping(2))
                .await
                .unwrap_or_else(|_| unreachable!()),
        );
        let mut get = standalone(&sessions, &id).await;
        drain(&mut call);
        drain(&mut other);
        let mut ask = server(json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}));
        if let ServerJsonRpcMessage::Request(r) = &mut ask {
            r.request
                .extensions_mut()
                .insert(OriginatingRequestId(RequestId::Number(1)));
        }
        t.send(ask).await.unwrap_or_else(|_| unreachable!());
        let cancel = server(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 0, "reason": "no answer"}}),
        );
        t.send(cancel).await.unwrap_or_else(|_| unreachable!());
        let on_call: Vec<_> = drain(&mut call).into_iter().filter_map(|m| m.1).collect();
        assert_eq!(on_call.len(), 2, "{on_call:?}");
        assert_eq!(on_call[0]["method"], "ping");
        assert_eq!(on_call[1]["method"], "notifications/cancelled");
        assert!(drain(&mut other).is_empty());
        assert!(drain(&mut get).is_empty());
        // A notification of no request goes to the standalone stream.
        notify(&mut t, "notifications/tools/list_changed").await;
        let on_get = drain(&mut get);
        assert_eq!(on_get.len(), 1);
        assert_eq!(
            on_get[0].1.as_ref().map(|m| m["method"].clone()),
            Some(json!("notifications/tools/list_changed"))
        );
    }

    #[tokio::test]
    async fn an_unread_standalone_stream_never_blocks_the_session() {
        let sessions = Sessions::new(Duration::from_secs(300));
        let (id, mut t) = sessions
            .create_session()
            .await
            .unwrap_or_else(|_| unreachable!());
        let mut get = standalone(&sessions, &id).await;
        for _ in 0..STANDALONE * 3 {
            notify(&mut t, "notifications/resources/list_changed").await;
        }
        assert_eq!(drain(&mut get).len(), STANDALONE);
        // A newer GET takes the stream; the older one ends.
        let mut newer = standalone(&sessions, &id).await;
        assert!(ended(&mut get));
        notify(&mut t, "notifications/resources/list_changed").await;
        assert_eq!(drain(&mut newer).len(), 1);
    }

    #[tokio::test]
    async fn only_the_standalone_stream_is_resumed_and_a_refused_resume_leaves_it_open() {
        let sessions = Sessions::new(Duration::from_secs(300));
        let (id, mut t) = sessions
            .create_session()
            .await
            .unwrap_or_else(|_| unreachable!());
        let mut get = standalone(&sessions, &id).await;
        for last in ["1/1", "0/1", "garbage", "-1", ""] {
            assert!(
                matches!(
                    sessions.resume(&id, last.to_owned()).await,
                    Err(SessionError::NotResumable(_))
                ),
                "{last:?}"
            );
        }
        assert!(!ended(&mut get), "a refused resume ends no stream");
        notify(&mut t, "notifications/tools/list_changed").await;
        assert_eq!(drain(&mut get).len(), 1);
        let mut resumed = Box::pin(
            sessions
                .resume(&id, "0".to_owned())
                .await
                .unwrap_or_else(|_| unreachable!()),
        );
        assert!(ended(&mut get), "the resumed standalone stream takes over");
        assert!(!ended(&mut resumed));
    }

    #[tokio::test]
    async fn a_client_cancel_ends_its_stream_and_a_closed_session_ends_its_service() {
        let sessions = Sessions::new(Duration::from_secs(300));
        let (id, mut t) = sessions
            .create_session()
            .await
            .unwrap_or_else(|_| unreachable!());
        let mut call = Box::pin(
            sessions
                .create_stream(&id, ping(3))
                .await
                .unwrap_or_else(|_| unreachable!()),
        );
        assert!(t.receive().await.is_some());
        let cancel = client(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}),
        );
        sessions
            .accept_message(&id, cancel)
            .await
            .unwrap_or_else(|_| unreachable!());
        drain(&mut call);
        assert!(ended(&mut call), "a cancelled request's stream ends");
        assert!(
            t.receive().await.is_some(),
            "the service is told of the cancel"
        );
        sessions
            .close_session(&id)
            .await
            .unwrap_or_else(|_| unreachable!());
        assert!(
            t.receive().await.is_none(),
            "the service sees the end of its input"
        );
        assert!(!sessions.is_open(&id));
        assert!(matches!(
            sessions.create_stream(&id, ping(4)).await,
            Err(SessionError::Gone(_))
        ));
        assert!(matches!(
            sessions.accept_message(&id, ping(5)).await,
            Err(SessionError::Gone(_))
        ));
    }

    #[tokio::test]
    async fn an_idle_session_is_closed_and_a_busy_one_is_kept() {
        let sessions = Arc::new(Sessions::new(Duration::from_millis(100)));
        sessions.expire_idle();
        let (idle, mut idle_t) = sessions
            .create_session()
            .await
            .unwrap_or_else(|_| unreachable!());
        let (busy, _busy_t) = sessions
            .create_session()
            .await
            .unwrap_or_else(|_| unreachable!());
        let _in_flight = sessions
            .create_stream(&busy, ping(1))
            .await
            .unwrap_or_else(|_| unreachable!());
        let (listening, _listening_t) = sessions
            .create_session()
            .await
            .unwrap_or_else(|_| unreachable!());
        let get = sessions
            .create_standalone_stream(&listening)
            .await
            .unwrap_or_else(|_| unreachable!());
        let (left, _left_t) = sessions
            .create_session()
            .await
            .unwrap_or_else(|_| unreachable!());
        drop(
            sessions
                .create_standalone_stream(&left)
                .await
                .unwrap_or_else(|_| unreachable!()),
        );
        // Until both the idle session and the one whose GET stream ended
        // have been closed (a sweep every 25 ms: about 125 ms), then the
        // other two must still be open: judged by order, with 30 s only
        // against a sweep that never comes (spec README, "Timing in tests").
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while sessions.is_open(&idle) || sessions.is_open(&left) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "idle: {}, left: {} after 30 s of a 100 ms idle time",
                sessions.is_open(&idle),
                sessions.is_open(&left)
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(!sessions.is_open(&idle), "idle past its limit");
        assert!(idle_t.receive().await.is_none(), "its service ends");
        assert!(
            sessions.is_open(&busy),
            "a request in flight keeps its session open"
        );
        assert!(
            sessions.is_open(&listening),
            "so does a GET stream held open"
        );
        assert!(
            !sessions.is_open(&left),
            "a GET stream its client closed does not"
        );
        assert_eq!(sessions.count(), 2);
        drop(get);
    }
}
