//! One typed transport between a byte stream and rmcp (issue 28, spec
//! WIRE-001..WIRE-008).
//!
//! rmcp's own stdio transport ends the session on some inputs a careful
//! server must survive and stays silent on others, and its ids are an i64
//! or a string. So each line from the client is read bounded and parsed
//! once into a JSON-RPC message here ([`message`]); what is not one is
//! answered here, by the same writer as rmcp's answers; each request takes
//! a slot under its own id, compared as JSON-RPC compares ids, and rmcp
//! sees an id of the transport's instead ([`ids`]); the lifecycle rmcp
//! picks is mirrored so that what cannot follow it is refused
//! ([`lifecycle`]). Nothing here reads rmcp's output bytes: answers are
//! typed until they are written. At end of input the transport stops
//! reading, ends the runs in progress, waits (at most [`EOF_DRAIN`]) for
//! every request in flight to be answered and written whole, and only then
//! tells rmcp the input is over.
//!
//! The rules sit in `message`, `ids` and `lifecycle`, below any byte
//! stream; this file is the stdio framing (a message a line) around them.

mod bounds;
pub(crate) mod client_id;
pub(crate) mod ids;
pub(crate) mod lifecycle;
pub mod message;
mod tree;
mod typed;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
    ErrorData, GetMeta, ProtocolVersion, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RoleServer;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};

use crate::echo::excerpt;
use ids::{InFlight, MAX_IN_FLIGHT, Taken};
use lifecycle::{Lifecycle, Step};
use message::{ClientId, Framing, Incoming, Refusal};

pub(crate) use crate::limits::MAX_LINE_BYTES;

/// How long end of input waits for the requests in flight to be answered
/// (WIRE-007). Runs end at once when input ends (WIRE-005), and every
/// other request is a read of a bounded size, so this is only reached by a
/// request stuck on the file system.
pub(crate) const EOF_DRAIN: Duration = Duration::from_secs(5);

/// What the reader and the writers share.
struct Shared<W> {
    /// The one writer of the output: rmcp's messages and the transport's
    /// refusals, a whole line at a time.
    out: tokio::sync::Mutex<W>,
    slots: Mutex<InFlight>,
    /// Requests taken and not yet answered in writing (or cancelled).
    in_flight: watch::Sender<usize>,
}

impl<W: AsyncWrite + Unpin> Shared<W> {
    async fn write_line(&self, mut bytes: Vec<u8>) -> std::io::Result<()> {
        bytes.push(b'\n');
        let mut out = self.out.lock().await;
        out.write_all(&bytes).await?;
        out.flush().await
    }

    async fn refuse(&self, r: Refusal) -> std::io::Result<()> {
        tracing::info!(code = r.code, message = %r.message, "refused a client message");
        let id = r.id.unwrap_or_else(null);
        let error = ErrorData::new(rmcp::model::ErrorCode(r.code), r.message, None);
        self.write_line(serde_json::to_vec(&ErrorLine {
            jsonrpc: "2.0",
            id: &id,
            error: &error,
        })?)
        .await
    }
}

impl<W> Shared<W> {
    fn slots(&self) -> std::sync::MutexGuard<'_, InFlight> {
        // A panic while the lock was held left the table whole (no method
        // of InFlight panics half-way), so it is used on.
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn one_fewer(&self) {
        self.in_flight.send_modify(|n| *n = n.saturating_sub(1));
    }
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".into()).unwrap_or_else(|_| unreachable!("null is JSON"))
}

#[derive(Serialize)]
struct ErrorLine<'a> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    error: &'a ErrorData,
}

#[derive(Serialize)]
struct ResultLine<'a, R: Serialize> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: &'a R,
}

/// Where a `subscriptions/listen` is named (SEP-2575): in `_meta` of its
/// notifications and of its final result.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// A JSON value written with the member `key` of the object at `path`
/// (when there is one) replaced by `raw`: rmcp names a listen by the id
/// the transport gave it, and the client knows it by its own, exactly as
/// written (WIRE-006, HTTP-012).
struct Renamed<'a> {
    value: &'a serde_json::Value,
    path: &'a [&'a str],
    key: &'a str,
    raw: &'a RawValue,
}

impl Serialize for Renamed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let serde_json::Value::Object(members) = self.value else {
            return self.value.serialize(s);
        };
        let mut map = s.serialize_map(Some(members.len()))?;
        for (k, v) in members {
            match self.path.split_first() {
                Some((head, rest)) if k == head => map.serialize_entry(
                    k,
                    &Renamed {
                        value: v,
                        path: rest,
                        ..*self
                    },
                )?,
                None if k == self.key => map.serialize_entry(k, self.raw)?,
                _ => map.serialize_entry(k, v)?,
            }
        }
        map.end()
    }
}

/// Whose a notification of rmcp's is (HTTP-012).
enum Of {
    /// No listen's: written as it is.
    Connection,
    /// The listen the client knows by this id, still in flight.
    Listen(Box<RawValue>),
    /// A listen no longer in flight (the client cancelled it): not
    /// written, as the answer to a cancelled request is not.
    Ended,
}

fn listen_of<W>(shared: &Shared<W>, item: &ServerJsonRpcMessage) -> Of {
    let ServerJsonRpcMessage::Notification(n) = item else {
        return Of::Connection;
    };
    let Some(ours) = n.notification.get_meta().subscription_id() else {
        return Of::Connection;
    };
    match shared.slots().client_id(&ours) {
        Some(id) => Of::Listen(id.raw.clone()),
        None => Of::Ended,
    }
}

/// The stdio transport: messages a line each, in from `R`, out to `W`.
pub struct Lines<W> {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    shared: Arc<Shared<W>>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> Lines<W> {
    /// Starts reading `input` (on its own task, so rmcp may drop a
    /// `receive` at any point without losing a byte). `hangup` turns true
    /// when input ends; `supported` are the protocol versions the server
    /// serves (for the lifecycle, WIRE-008).
    pub fn new<R: AsyncRead + Unpin + Send + 'static>(
        input: R,
        output: W,
        hangup: watch::Sender<bool>,
        supported: Vec<ProtocolVersion>,
    ) -> Lines<W> {
        let shared = Arc::new(Shared {
            out: tokio::sync::Mutex::new(output),
            slots: Mutex::new(InFlight::default()),
            in_flight: watch::Sender::new(0),
        });
        let (tx, incoming) = mpsc::channel(1);
        tokio::spawn(read_loop(input, Arc::clone(&shared), tx, hangup, supported));
        Lines { incoming, shared }
    }
}

/// Reads messages until input ends, then waits for the answers in flight.
async fn read_loop<R, W>(
    input: R,
    shared: Arc<Shared<W>>,
    tx: mpsc::Sender<ClientJsonRpcMessage>,
    hangup: watch::Sender<bool>,
    supported: Vec<ProtocolVersion>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut r = BufReader::new(input);
    let mut line = Vec::new();
    let mut lifecycle = Lifecycle::Fresh;
    let mut count = shared.in_flight.subscribe();
    loop {
        // Room first (WIRE-004): with MAX_IN_FLIGHT requests unanswered,
        // nothing more is read until an answer is written.
        if count.wait_for(|n| *n < MAX_IN_FLIGHT).await.is_err() {
            break;
        }
        let incoming = match read_line(&mut r, &mut line).await {
            Ok(None) | Err(_) => break,
            Ok(Some(Err(len))) => Incoming::Refuse(Refusal {
                id: None,
                code: -32700,
                message: format!(
                    "Parse error: a line of {len} bytes is over the {MAX_LINE_BYTES}-byte limit"
                ),
            }),
            Ok(Some(Ok(()))) if line.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(Some(Ok(()))) => message::read(&line, Framing::Line),
        };
        let pass = match incoming {
            Incoming::Request { id, message } => {
                match take(&shared, &mut lifecycle, &supported, id, *message) {
                    Ok(m) => m,
                    Err(r) => {
                        if shared.refuse(r).await.is_err() {
                            break;
                        }
                        continue;
                    }
                }
            }
            Incoming::Notification { .. } | Incoming::Response(_) if !lifecycle.started() => {
                tracing::info!("dropped a notification or response before the session started");
                continue;
            }
            Incoming::Notification { message, cancels } => {
                let mut message = *message;
                if let Some(key) = cancels {
                    let ours = shared.slots().cancel(&key);
                    let Some(ours) = ours else {
                        tracing::info!("dropped a cancellation of no request in flight");
                        continue;
                    };
                    shared.one_fewer();
                    // rmcp is told under its own id, in a message built
                    // here: the client's may not decode as a cancel at all
                    // for rmcp (an id of `1.5` or past i64 is no rmcp id),
                    // and then the request would go on uncancelled.
                    let reason = match &message {
                        ClientJsonRpcMessage::Notification(n) => match &n.notification {
                            ClientNotification::CancelledNotification(c) => c.params.reason.clone(),
                            _ => None,
                        },
                        _ => None,
                    };
                    message = ClientJsonRpcMessage::notification(
                        ClientNotification::CancelledNotification(CancelledNotification::new(
                            CancelledNotificationParam::new(Some(ours), reason),
                        )),
                    );
                }
                message
            }
            Incoming::Response(message) => *message,
            Incoming::Refuse(r) => {
                if shared.refuse(r).await.is_err() {
                    break;
                }
                continue;
            }
            Incoming::Drop(why) => {
                tracing::info!("dropped {why}");
                continue;
            }
        };
        if tx.send(pass).await.is_err() {
            break;
        }
    }
    // End of input (WIRE-005, WIRE-007): runs end now; every request in
    // flight is answered before rmcp is told the input is over.
    let _ = hangup.send(true);
    if tokio::time::timeout(EOF_DRAIN, count.wait_for(|n| *n == 0))
        .await
        .is_err()
    {
        tracing::warn!(
            "input ended with requests unanswered after {EOF_DRAIN:?}; ending without them"
        );
    }
    drop(tx);
}

/// A request's slot and lifecycle step (WIRE-006, WIRE-008): the message
/// rmcp gets, under the transport's id, or the refusal.
fn take<W>(
    shared: &Shared<W>,
    lifecycle: &mut Lifecycle,
    supported: &[ProtocolVersion],
    id: ClientId,
    mut message: ClientJsonRpcMessage,
) -> Result<ClientJsonRpcMessage, Refusal> {
    let ClientJsonRpcMessage::Request(req) = &mut message else {
        return Ok(message);
    };
    let raw = id.raw.clone();
    let ours = match shared.slots().enter(id) {
        Ok(ours) => ours,
        Err(Taken::InUse) => {
            return Err(Refusal {
                message: format!(
                    "Invalid Request: id {} is the id of a request still in flight; give each request an id of its own",
                    excerpt(raw.get())
                ),
                id: Some(raw),
                code: -32600,
            });
        }
    };
    if let Step::Refuse(why) = lifecycle.request(&req.request, supported) {
        shared.slots().answer(&ours);
        return Err(Refusal {
            id: Some(raw),
            code: -32600,
            message: why,
        });
    }
    shared.in_flight.send_modify(|n| *n += 1);
    req.id = ours;
    Ok(message)
}

/// Reads one line of at most [`MAX_LINE_BYTES`], without its newline; an
/// overlong line is consumed to its end and reported as `Err(len)` without
/// being held.
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
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    Ok(Some(Ok(())))
}

impl<W: AsyncWrite + Unpin + Send + 'static> rmcp::transport::Transport<RoleServer> for Lines<W> {
    type Error = std::io::Error;

    /// Writes one message of rmcp's. An answer goes out under its
    /// request's own id, exactly as the client wrote it; an answer to a
    /// request no longer in flight (cancelled) is not written.
    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let shared = Arc::clone(&self.shared);
        async move {
            let answered = match &item {
                ServerJsonRpcMessage::Response(r) => Some(shared.slots().answer(&r.id)),
                ServerJsonRpcMessage::Error(e) => e.id.as_ref().map(|id| shared.slots().answer(id)),
                _ => None,
            };
            let freed = matches!(answered, Some(Some(_)));
            let bytes = match (&item, answered) {
                (_, Some(None)) => {
                    tracing::debug!("dropped the answer to a request no longer in flight");
                    return Ok(());
                }
                // The final result of a listen names it in `_meta`, by
                // the client's id (HTTP-012).
                (ServerJsonRpcMessage::Response(r), Some(Some(id)))
                    if matches!(r.result, ServerResult::SubscriptionsListenResult(_)) =>
                {
                    serde_json::to_value(&r.result).and_then(|result| {
                        serde_json::to_vec(&ResultLine {
                            jsonrpc: "2.0",
                            id: &id.raw,
                            result: &Renamed {
                                value: &result,
                                path: &["_meta"],
                                key: SUBSCRIPTION_ID,
                                raw: &id.raw,
                            },
                        })
                    })
                }
                (ServerJsonRpcMessage::Response(r), Some(Some(id))) => {
                    serde_json::to_vec(&ResultLine {
                        jsonrpc: "2.0",
                        id: &id.raw,
                        result: &r.result,
                    })
                }
                (ServerJsonRpcMessage::Error(e), Some(Some(id))) => {
                    serde_json::to_vec(&ErrorLine {
                        jsonrpc: "2.0",
                        id: &id.raw,
                        error: &e.error,
                    })
                }
                (item, _) => match listen_of(&shared, item) {
                    Of::Connection => serde_json::to_vec(item),
                    Of::Listen(raw) => serde_json::to_value(item).and_then(|v| {
                        serde_json::to_vec(&Renamed {
                            value: &v,
                            path: &["params", "_meta"],
                            key: SUBSCRIPTION_ID,
                            raw: &raw,
                        })
                    }),
                    Of::Ended => {
                        tracing::debug!("dropped a notification of a listen no longer in flight");
                        return Ok(());
                    }
                },
            };
            let written = shared.write_line(bytes?).await;
            if freed {
                shared.one_fewer();
            }
            written
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.shared.out.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HTTP-012: a listen's notification names it by the client's id,
    /// exactly as written; nothing else of it changes.
    #[test]
    fn a_subscription_id_is_written_as_the_client_wrote_it() {
        let value = serde_json::json!({"jsonrpc": "2.0", "method": "m", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": 3, "other": 3}, "x": 3}});
        let raw = RawValue::from_string("1.0".into()).unwrap_or_else(|_| unreachable!());
        let text = serde_json::to_string(&Renamed {
            value: &value,
            path: &["params", "_meta"],
            key: SUBSCRIPTION_ID,
            raw: &raw,
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","method":"m","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1.0,"other":3},"x":3}}"#
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_without_being_held() {
        let mut data = vec![b'x'; MAX_LINE_BYTES + 10];
        data.extend_from_slice(b"\n{\"ok\":1}\n");
        let mut r = BufReader::new(&data[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_line(&mut r, &mut buf).await.ok(),
            Some(Some(Err(MAX_LINE_BYTES + 11)))
        );
        assert_eq!(read_line(&mut r, &mut buf).await.ok(), Some(Some(Ok(()))));
        assert_eq!(buf, b"{\"ok\":1}");
    }
}
