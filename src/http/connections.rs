//! The open connections and what each one is doing (spec HTTP-008,
//! HTTP-015). Two things are decided here: which connection a new one
//! closes when [`MAX_HTTP_CONNECTIONS`] are open — one that holds nothing a
//! client waits on, the longest quiet first — and when the bytes of an
//! answer have left the process, so that its share of the answer budget
//! comes back (the connection's writes are flushed).

use std::collections::HashMap;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use std::future::Future;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit};

use crate::limits::{HTTP_WRITE_TIMEOUT_SECS, MAX_HTTP_CONNECTIONS};

/// What a connection is doing, in the order one is closed for a new one:
/// the first three hold nothing a client is waiting on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub(crate) enum Doing {
    /// Accepted with no request yet, between requests, or still sending a
    /// request's head (hyper's header timeout ends it after 30 s).
    Nothing = 0,
    /// A request whose body is still arriving.
    Body = 1,
    /// An answer built and handed to the connection, not yet taken whole
    /// by its client.
    Writing = 2,
    /// A request being answered (in flight, HTTP-007): never closed for a
    /// new connection.
    Working = 3,
    /// A GET stream or a `subscriptions/listen` (HTTP-008, HTTP-012):
    /// never closed for a new connection.
    Streaming = 4,
}

impl Doing {
    fn from_u8(v: u8) -> Doing {
        match v {
            1 => Doing::Body,
            2 => Doing::Writing,
            3 => Doing::Working,
            4 => Doing::Streaming,
            _ => Doing::Nothing,
        }
    }
}

/// One open connection, shared by its task, its requests and its I/O.
pub(crate) struct Conn {
    /// The client's address: streams are closed for new ones from the
    /// address holding the most (HTTP-008).
    peer: Option<IpAddr>,
    doing: AtomicU8,
    /// Nanoseconds since the registry started, when `doing` last changed:
    /// in milliseconds a stream and the next one opened were often equal,
    /// and the tie went to whichever the map gave first, so a newcomer
    /// closed a younger stream half the time (HTTP-008).
    since: AtomicU64,
    /// The order connections were registered in: breaks any tie left.
    order: u64,
    clock: Instant,
    /// Set, and its waiters told, when the connection is to be closed:
    /// for a new one, or because its body is the slowest while others
    /// wait for room. Both its task and a request reading its body wait
    /// on it (the request answers 503 before the connection goes).
    closing: AtomicBool,
    closed: Notify,
    /// The answer budget of what was handed to this connection and not yet
    /// flushed (HTTP-015): dropped, and so given back, once the writes
    /// after the answer's last byte are flushed, or with the connection.
    unsent: Mutex<Unsent>,
}

#[derive(Default)]
struct Unsent {
    permit: Option<OwnedSemaphorePermit>,
    /// The answer's last byte has been handed to the connection: the next
    /// flush that completes has written it.
    ended: bool,
}

impl Conn {
    /// What the connection does now.
    pub(crate) fn set(&self, doing: Doing) {
        self.doing.store(doing as u8, Ordering::Relaxed);
        self.since.store(nanos(self.clock), Ordering::Relaxed);
    }

    pub(crate) fn doing(&self) -> Doing {
        Doing::from_u8(self.doing.load(Ordering::Relaxed))
    }

    /// Resolves when the connection is to be closed (at once if it was).
    pub(crate) async fn closed(&self) {
        loop {
            let told = self.closed.notified();
            let mut told = std::pin::pin!(told);
            // Registered before the flag is read: a close between the two
            // is not missed.
            told.as_mut().enable();
            if self.closing.load(Ordering::Acquire) {
                return;
            }
            told.await;
        }
    }

    /// Tells the connection's task, and a request reading its body, to
    /// close it (HTTP-007, HTTP-008).
    pub(crate) fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.closed.notify_waiters();
    }

    /// The answer's last byte was handed over, holding `permit` of the
    /// answer budget until it is written (HTTP-015).
    pub(crate) fn answer_handed_over(&self, permit: Option<OwnedSemaphorePermit>) {
        let mut u = lock(&self.unsent);
        // An answer before it may still be queued (a client that pipelines
        // its requests): both are given back at the flush after this one.
        match (&mut u.permit, permit) {
            (Some(held), Some(p)) => held.merge(p),
            (held, p) => *held = held.take().or(p),
        }
        u.ended = true;
        drop(u);
        self.set(Doing::Writing);
    }

    /// hyper flushes only once everything it queued has been written: an
    /// answer handed over before this flush has left the process.
    fn flushed(&self) {
        let mut u = lock(&self.unsent);
        if !u.ended {
            return;
        }
        u.ended = false;
        let permit = u.permit.take();
        drop(u);
        drop(permit);
        if self.doing() == Doing::Writing {
            self.set(Doing::Nothing);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing here panics while holding a lock, so a poisoned one is whole.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Every open connection.
pub(crate) struct Connections {
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    clock: Instant,
    cap: usize,
}

impl Default for Connections {
    fn default() -> Self {
        Connections::with_cap(MAX_HTTP_CONNECTIONS)
    }
}

/// A connection's place in the registry, given up when dropped.
pub(crate) struct Registered {
    connections: Arc<Connections>,
    id: u64,
    pub(crate) conn: Arc<Conn>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.connections.open).remove(&self.id);
    }
}

impl Connections {
    pub(crate) fn with_cap(cap: usize) -> Connections {
        Connections {
            open: Mutex::default(),
            next: AtomicU64::new(0),
            clock: Instant::now(),
            cap,
        }
    }

    /// Registers a new connection. At the cap, one that holds nothing a
    /// client waits on is told to close first, the longest quiet of the
    /// quietest kind (HTTP-008); `None` when every open connection is
    /// working or streaming (the caps on those keep this from happening).
    pub(crate) fn open(self: &Arc<Self>, peer: Option<IpAddr>) -> Option<Registered> {
        let mut open = lock(&self.open);
        if open.len() >= self.cap {
            let victim = open
                .iter()
                .filter(|(_, c)| c.doing() < Doing::Working)
                .min_by_key(|(_, c)| (c.doing(), c.since.load(Ordering::Relaxed), c.order))
                .map(|(id, _)| *id)?;
            if let Some(c) = open.remove(&victim) {
                tracing::debug!(doing = ?c.doing(), "closing a quiet connection for a new one");
                c.close();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            peer,
            doing: AtomicU8::new(Doing::Nothing as u8),
            since: AtomicU64::new(nanos(self.clock)),
            order: id,
            clock: self.clock,
            closing: AtomicBool::new(false),
            closed: Notify::new(),
            unsent: Mutex::default(),
        });
        open.insert(id, Arc::clone(&conn));
        Some(Registered {
            connections: Arc::clone(self),
            id,
            conn,
        })
    }

    /// Tells a stream to close, for a new stream at
    /// [`MAX_HTTP_STREAMS`](crate::limits::MAX_HTTP_STREAMS): streams last
    /// as long as their clients keep them, so without this one client
    /// holding every slot kept everyone else from listening for good
    /// (HTTP-008). The stream that goes is the oldest of the address that
    /// holds the most streams: a stranger opening streams in a loop
    /// closes its own before a teammate's. One already told is passed
    /// over. `false` when no stream is open to close.
    pub(crate) fn close_a_stream(&self) -> bool {
        let open = lock(&self.open);
        let streams = || {
            open.values()
                .filter(|c| c.doing() == Doing::Streaming && !c.closing.load(Ordering::Acquire))
        };
        // Per address: how many streams, and its oldest stream's age. Of
        // addresses holding equally many, the one whose oldest stream is
        // older gives way, so a tie never goes by the map's order.
        let mut held: HashMap<Option<IpAddr>, (usize, (u64, u64))> = HashMap::new();
        for c in streams() {
            let age = (c.since.load(Ordering::Relaxed), c.order);
            let e = held.entry(c.peer).or_insert((0, age));
            e.0 += 1;
            e.1 = e.1.min(age);
        }
        let Some((&most, _)) = held
            .iter()
            .max_by_key(|(_, (n, oldest))| (*n, std::cmp::Reverse(*oldest)))
        else {
            return false;
        };
        let oldest = streams()
            .filter(|c| c.peer == most)
            .min_by_key(|c| (c.since.load(Ordering::Relaxed), c.order));
        match oldest {
            Some(c) => {
                tracing::info!(
                    peer = ?c.peer,
                    "closed the oldest stream of the address holding the most, for a new one (HTTP-008)"
                );
                c.close();
                true
            }
            None => false,
        }
    }

    #[cfg(test)]
    fn count(&self) -> usize {
        lock(&self.open).len()
    }
}

/// A connection's socket: it tells its [`Conn`] when a flush has
/// completed, and ends a write that waits [`HTTP_WRITE_TIMEOUT_SECS`]
/// while its client takes nothing (HTTP-008; hyper has no write timeout).
/// Progress is the client's reading, not the server's writing: the kernel
/// lets a write in again only once a third of the send buffer has drained,
/// which a client reading 8 KiB a second does not do within 30 s, so a
/// timeout on the server's writes alone cut steady slow readers off
/// mid-answer. While a write waits, the bytes still queued in the socket
/// (`SIOCOUTQ`) are looked at each time the timeout runs out: fewer than
/// before is progress, and the wait starts again.
pub(crate) struct Watched {
    inner: TcpStream,
    conn: Arc<Conn>,
    /// Since when a write has waited, and the send queue then.
    stalled: Option<Stall>,
    /// The connection's first bytes, read before hyper to tell an HTTP/2
    /// client apart (HTTP-019, `super::h2`): handed to hyper first.
    first: Vec<u8>,
}

struct Stall {
    sleep: Pin<Box<tokio::time::Sleep>>,
    queued: Option<u64>,
}

impl Watched {
    pub(crate) fn new(inner: TcpStream, conn: Arc<Conn>, first: Vec<u8>) -> Watched {
        Watched {
            inner,
            conn,
            stalled: None,
            first,
        }
    }

    /// A write is pending: `Pending` while its client still takes bytes,
    /// an error once it has taken none for the whole timeout.
    fn wait(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<usize>> {
        let timeout = Duration::from_secs(HTTP_WRITE_TIMEOUT_SECS);
        let inner = &self.inner;
        let stall = self.stalled.get_or_insert_with(|| Stall {
            sleep: Box::pin(tokio::time::sleep(timeout)),
            queued: unsent(inner),
        });
        loop {
            if stall.sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let now = unsent(inner);
            match (stall.queued, now) {
                (Some(before), Some(after)) if after < before => {
                    stall.queued = now;
                    stall
                        .sleep
                        .as_mut()
                        .reset(tokio::time::Instant::now() + timeout);
                }
                _ => {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "HTTP-008: the client took none of its answer for {HTTP_WRITE_TIMEOUT_SECS} s"
                        ),
                    )));
                }
            }
        }
    }
}

/// Bytes written to `socket` and not yet taken by its peer (Linux's
/// `SIOCOUTQ`, which `TIOCOUTQ` is); `None` where it cannot be asked.
fn unsent(socket: &TcpStream) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let mut n: nix::libc::c_int = 0;
        // SAFETY: TIOCOUTQ writes one int through the pointer, which is
        // valid for the call; the descriptor is the stream's own, open
        // while `socket` is borrowed.
        let r = unsafe { nix::libc::ioctl(socket.as_raw_fd(), nix::libc::TIOCOUTQ, &mut n) };
        (r == 0).then(|| u64::try_from(n).unwrap_or(0))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = socket;
        None
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if !self.first.is_empty() {
            let n = self.first.len().min(buf.remaining());
            buf.put_slice(&self.first[..n]);
            if n == self.first.len() {
                self.first = Vec::new();
            } else {
                self.first.drain(..n);
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Pending => self.wait(cx),
            ready => {
                self.stalled = None;
                ready
            }
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Pending => self.wait(cx),
            ready => {
                self.stalled = None;
                ready
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        if matches!(polled, Poll::Ready(Ok(()))) {
            self.conn.flushed();
        }
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Nanoseconds from `start` to now (a u64 holds 584 years of them).
fn nanos(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_quietest_goes_first_and_working_ones_never() {
        let c = Arc::new(Connections::with_cap(3));
        let a = c.open(None).unwrap_or_else(|| panic!("room"));
        let b = c.open(None).unwrap_or_else(|| panic!("room"));
        let d = c.open(None).unwrap_or_else(|| panic!("room"));
        a.conn.set(Doing::Working);
        b.conn.set(Doing::Body);
        d.conn.set(Doing::Nothing);
        // d is idle: it goes before b, whose body is still arriving.
        let e = c.open(None).unwrap_or_else(|| panic!("room"));
        assert_eq!(c.count(), 3);
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut told = std::pin::pin!(d.conn.closed());
        assert!(
            told.as_mut().poll(&mut cx).is_ready(),
            "the idle one was told"
        );
        {
            let mut not_told = std::pin::pin!(a.conn.closed());
            assert!(not_told.as_mut().poll(&mut cx).is_pending());
        }
        e.conn.set(Doing::Streaming);
        // Next: b (a body), then nothing is left to close.
        let _f = c.open(None).unwrap_or_else(|| panic!("room"));
        let mut told = std::pin::pin!(b.conn.closed());
        assert!(told.as_mut().poll(&mut cx).is_ready());
        _f.conn.set(Doing::Working);
        assert!(
            c.open(None).is_none(),
            "only working and streaming ones are left"
        );
        drop(a);
        assert!(
            c.open(None).is_some(),
            "a closed connection frees its place"
        );
    }

    #[test]
    fn the_oldest_stream_goes_first_and_once() {
        let c = Arc::new(Connections::with_cap(8));
        let open = || c.open(None).unwrap_or_else(|| panic!("room"));
        let (old, young, working) = (open(), open(), open());
        old.conn.set(Doing::Streaming);
        std::thread::sleep(Duration::from_millis(5));
        young.conn.set(Doing::Streaming);
        working.conn.set(Doing::Working);
        assert!(c.close_a_stream());
        assert!(
            old.conn.closing.load(Ordering::Acquire),
            "the oldest was told"
        );
        assert!(!young.conn.closing.load(Ordering::Acquire));
        assert!(c.close_a_stream(), "one told is passed over");
        assert!(young.conn.closing.load(Ordering::Acquire));
        assert!(!c.close_a_stream(), "no stream is left to close");
        assert!(!working.conn.closing.load(Ordering::Acquire));
    }

    /// Two streams that started in the same instant (a GET stream and a
    /// listen opened right after it, within one clock tick): the one
    /// registered first goes, every time — not whichever the map yields.
    #[test]
    fn of_streams_started_together_the_first_registered_goes() {
        for _ in 0..50 {
            let c = Arc::new(Connections::with_cap(64));
            let open = || c.open(None).unwrap_or_else(|| panic!("room"));
            let conns: Vec<_> = (0..20).map(|_| open()).collect();
            for r in &conns {
                r.conn.set(Doing::Streaming);
                r.conn.since.store(7, Ordering::Relaxed);
            }
            assert!(c.close_a_stream());
            let told: Vec<bool> = conns
                .iter()
                .map(|r| r.conn.closing.load(Ordering::Acquire))
                .collect();
            assert!(told[0] && told[1..].iter().all(|t| !t), "{told:?}");
        }
    }

    /// Two addresses holding equally many streams: the one whose oldest
    /// stream is older gives way, every time (found by the outside attack
    /// of 2026-12-07: the pick was the first maximum a fresh map yielded).
    #[test]
    fn at_a_tie_between_addresses_the_older_address_gives_way() {
        let (a, b): (IpAddr, IpAddr) = ([127, 0, 0, 3].into(), [127, 0, 0, 2].into());
        for _ in 0..50 {
            let c = Arc::new(Connections::with_cap(64));
            let open = |ip: IpAddr| c.open(Some(ip)).unwrap_or_else(|| panic!("room"));
            let older: Vec<_> = (0..3).map(|_| open(a)).collect();
            let younger: Vec<_> = (0..3).map(|_| open(b)).collect();
            for (i, r) in older.iter().chain(&younger).enumerate() {
                r.conn.set(Doing::Streaming);
                r.conn.since.store(i as u64, Ordering::Relaxed);
            }
            assert!(c.close_a_stream());
            assert!(older[0].conn.closing.load(Ordering::Acquire));
            assert!(
                younger
                    .iter()
                    .all(|r| !r.conn.closing.load(Ordering::Acquire))
            );
        }
    }

    #[test]
    fn an_answers_budget_comes_back_on_the_flush_after_it() {
        let budget = Arc::new(tokio::sync::Semaphore::new(10));
        let c = Arc::new(Connections::with_cap(4));
        let r = c.open(None).unwrap_or_else(|| panic!("room"));
        let permit = Arc::clone(&budget)
            .try_acquire_many_owned(10)
            .unwrap_or_else(|_| panic!("room in the budget"));
        r.conn.answer_handed_over(Some(permit));
        assert_eq!(r.conn.doing(), Doing::Writing);
        assert_eq!(budget.available_permits(), 0);
        r.conn.flushed();
        assert_eq!(budget.available_permits(), 10);
        assert_eq!(r.conn.doing(), Doing::Nothing);
    }
}
