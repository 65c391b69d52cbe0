//! An answer's body, holding what its request holds until the answer's
//! last byte is handed to the connection (spec HTTP-007, HTTP-008,
//! HTTP-009, HTTP-015): its slots, its share of the answer budget, and
//! the request to cancel if the client goes away first — as a stdio
//! client's hang-up ends what it asked, a closed connection ends the call
//! it was waiting on (RUN-028, RUN-021). A stream closed for a newer one
//! is told so before its body ends.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::combinators::BoxBody;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
    RequestId,
};
use rmcp::transport::streamable_http_server::SessionId;
use rmcp::transport::streamable_http_server::session::SessionManager;
use tokio::sync::OwnedSemaphorePermit;

use super::budget::Budget;
use super::connections::Conn;
use super::replies::stream_closed_for_newer;
use super::sessions::Sessions;
use super::slots::Slot;

/// What an answer holds until it is sent: its request's slots, the
/// request to cancel if the client goes away first, and its bytes' share
/// of the answer budget.
#[derive(Default)]
pub(super) struct Hold {
    pub(super) slots: Option<Slot>,
    pub(super) cancel: Option<CancelOnDrop>,
    pub(super) bytes: Option<OwnedSemaphorePermit>,
}

/// Resolves when a stream is closed for a newer one (HTTP-008).
pub(super) type Closing = Pin<Box<dyn Future<Output = ()> + Send + Sync>>;

/// An answer's body holding its request's [`Hold`] until its last byte is
/// handed to the connection, or the client goes away; then it tells the
/// connection, which gives the answer's bytes back once they are written
/// (HTTP-007, HTTP-015).
pub(super) struct Held {
    inner: BoxBody<Bytes, Infallible>,
    hold: Hold,
    /// Bytes handed over so far.
    sent: usize,
    answers: Arc<Budget>,
    conn: Arc<Conn>,
    ended: bool,
    /// A stream's: resolves when the stream is closed for a newer one
    /// (HTTP-008), which its client is then told before the body ends.
    closing: Option<Closing>,
    /// Closed for a newer stream and told so: the body has ended.
    closed: bool,
}

/// A session's request, cancelled in rmcp when its answer's body is
/// dropped unfinished: as a stdio client's hang-up ends what it asked,
/// a closed connection ends the call it was waiting on (HTTP-009,
/// RUN-028, RUN-021).
pub(super) struct CancelOnDrop {
    pub(super) sessions: Arc<Sessions>,
    pub(super) session: SessionId,
    pub(super) id: RequestId,
}

impl Held {
    /// `inner`, holding `hold` until its last byte is handed to `conn`;
    /// a stream's body ends when `closing` resolves.
    pub(super) fn new(
        inner: BoxBody<Bytes, Infallible>,
        hold: Hold,
        answers: Arc<Budget>,
        conn: Arc<Conn>,
        closing: Option<Closing>,
    ) -> Held {
        Held {
            inner,
            hold,
            sent: 0,
            answers,
            conn,
            ended: false,
            closing,
            closed: false,
        }
    }

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
            return Poll::Ready(Some(Ok(Frame::data(stream_closed_for_newer()))));
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

#[cfg(test)]
mod tests {
    use http_body_util::{BodyExt, Full};
    use tokio::sync::Semaphore;

    use super::super::connections::{Connections, Doing};
    use super::*;

    /// A body whose bytes never come: a stream nobody writes to.
    struct Quiet;

    impl Body for Quiet {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Pending
        }
    }

    fn slot(of: &Arc<Semaphore>) -> Option<Slot> {
        Some((Arc::clone(of).try_acquire_owned().ok()?, None))
    }

    #[tokio::test]
    async fn the_slot_comes_back_with_the_last_byte_and_unsent_room_at_once() {
        let streams = Arc::new(Semaphore::new(1));
        let answers = Arc::new(Budget::new(100));
        let conn = Arc::new(Connections::default())
            .open(None)
            .unwrap_or_else(|| panic!("room"));
        let hold = Hold {
            slots: slot(&streams),
            bytes: answers.try_take(40),
            ..Hold::default()
        };
        let body = Full::new(Bytes::from_static(b"0123456789")).boxed();
        let held = Held::new(
            body,
            hold,
            Arc::clone(&answers),
            Arc::clone(&conn.conn),
            None,
        );
        assert_eq!(streams.available_permits(), 0);
        let got = held.collect().await.unwrap_or_else(|e| match e {});
        assert_eq!(got.to_bytes(), "0123456789");
        assert_eq!(streams.available_permits(), 1);
        // The 30 bytes the estimate held beyond the answer come back now;
        // the 10 sent, once the connection has written them.
        assert_eq!(answers.available(), 90);
        assert_eq!(conn.conn.doing(), Doing::Writing);
    }

    #[tokio::test]
    async fn a_stream_closed_for_a_newer_one_is_told_and_ends() {
        let streams = Arc::new(Semaphore::new(1));
        let conn = Arc::new(Connections::default())
            .open(None)
            .unwrap_or_else(|| panic!("room"));
        let (close, closed) = tokio::sync::oneshot::channel::<()>();
        let closing: Closing = Box::pin(async move {
            let _ = closed.await;
        });
        let hold = Hold {
            slots: slot(&streams),
            ..Hold::default()
        };
        let mut held = Held::new(
            BoxBody::new(Quiet),
            hold,
            Arc::new(Budget::new(1)),
            Arc::clone(&conn.conn),
            Some(closing),
        );
        assert!(!held.is_end_stream());
        drop(close);
        let told = held.frame().await;
        let words = told
            .and_then(|f| f.ok())
            .and_then(|f| f.into_data().ok())
            .unwrap_or_default();
        assert!(
            words.starts_with(b": HTTP-008: this stream was closed for a newer one"),
            "{words:?}"
        );
        assert!(held.is_end_stream());
        assert!(held.frame().await.is_none());
        assert_eq!(streams.available_permits(), 1);
    }
}
