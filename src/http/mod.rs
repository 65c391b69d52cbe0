//! `skill-mcp --http ADDR`: the same server over Streamable HTTP (spec
//! HTTP-001..HTTP-010, issue 29 §1–§3).
//!
//! rmcp's own `StreamableHttpService` speaks the transport — sessions
//! (`Mcp-Session-Id`) for an `initialize`, and 2026-07-28 requests carrying
//! their `_meta` served on their own — over hyper's HTTP/1 server. In front
//! of it sits [`door`]: who may connect ([`access`]), the bounds, and the
//! stdio transport's reading of each message. Every session is a clone of
//! one [`SkillServer`], so all of them answer from the same live snapshot,
//! and a reload notifies each open session.

pub mod access;
mod admission;
mod body;
mod budget;
mod connections;
mod cors;
pub(crate) mod door;
mod h2;
mod headers;
mod held;
mod replies;
mod sessions;
mod slots;

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tower::{Layer, ServiceExt};

use crate::config::Config;
use crate::limits::{
    HTTP_READ_TIMEOUT_SECS, MAX_HTTP_BODY_BYTES, MAX_HTTP_CONNECTIONS, MAX_HTTP_HEAD_BYTES,
};
use crate::offer::Offer;
use crate::reload::{self, Peers};
use crate::server::SkillServer;
use crate::settings::Settings;
use crate::snapshot::Snapshot;
use access::Access;
use connections::{Connections, Doing, Watched};
use door::Door;
use sessions::Sessions;

/// Why a script cannot run over HTTP unless the owner offers runs
/// (HTTP-009): the offer's words.
pub use crate::offer::RUNS_OFF;

/// What the owner asked of the HTTP server.
pub struct Options {
    pub addr: SocketAddr,
    pub token: Option<String>,
    /// Names a request's `Host` or `Origin` may give beyond loopback's.
    pub allow_hosts: Vec<String>,
    /// Browser origins whose pages may call the server (HTTP-017).
    pub allow_origins: Vec<String>,
}

/// `--http ADDR`: `HOST:PORT`, `[V6]:PORT`, or a bare port on 127.0.0.1
/// (HTTP-001).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    s.parse::<SocketAddr>().map_err(|_| {
        format!(
            "{s:?} is not an address to listen on; give IP:PORT (127.0.0.1:8080, [::1]:8080, 0.0.0.0:8080) or a \
             bare port for 127.0.0.1"
        )
    })
}

/// `--http-allow-host NAME`: a host name or an IP address as teammates
/// type it, no scheme, port or path (HTTP-003). A `Host` header's port is
/// not compared, so `devbox:8080` or `http://devbox` could never match and
/// every request would be refused: they are usage errors instead.
pub fn parse_host(s: &str) -> Result<String, String> {
    let bare = s
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(s);
    if bare.parse::<IpAddr>().is_ok() {
        return Ok(s.to_owned());
    }
    // A name may be written absolute, with its trailing dot (`devbox.`).
    let labels = s.strip_suffix('.').unwrap_or(s);
    let name = !labels.is_empty()
        && labels.len() <= 253
        && labels.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if name {
        return Ok(s.to_owned());
    }
    let hint = if s.contains("://") {
        "leave out the scheme"
    } else if s.contains(':') {
        "leave out the port: any port of an allowed name passes"
    } else {
        "a host name is labels of letters, digits and dashes, joined by single dots"
    };
    Err(format!(
        "{s:?} is not a host name ({hint}); give the name or IP address teammates reach this machine by, \
         e.g. devbox, devbox.example.com or 192.168.1.20"
    ))
}

/// `--http-allow-origin ORIGIN`: `http://` or `https://` a host and an
/// optional port, nothing after (HTTP-017).
pub fn parse_origin(s: &str) -> Result<String, String> {
    access::origin(s).ok_or_else(|| {
        format!(
            "{s:?} is not a browser origin; give scheme://host[:port] as the page's address bar shows it, \
             e.g. https://app.example.com or http://localhost:5173"
        )
    })
}

/// Why serving over HTTP did not start or ended.
#[derive(Debug)]
pub enum Failed {
    /// A non-loopback address without a token (HTTP-004).
    NoToken(SocketAddr),
    Bind(SocketAddr, std::io::Error),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::NoToken(addr) => write!(
                f,
                "HTTP-004: refusing to listen on {addr} without authentication: anyone who can reach that \
                 address could read every skill. Give a bearer token (--http-token-file PATH, or {}), or \
                 listen on loopback (--http 127.0.0.1:{})",
                access::TOKEN_VAR,
                addr.port()
            ),
            Failed::Bind(addr, e) if e.kind() == std::io::ErrorKind::AddrInUse => write!(
                f,
                "HTTP-001: cannot listen on {addr}: another process holds that port; choose another one \
                 (--http {}:PORT), or port 0 for a free one, which is printed once bound",
                addr.ip()
            ),
            Failed::Bind(addr, e) => write!(f, "HTTP-001: cannot listen on {addr}: {e}"),
        }
    }
}

/// Serves until SIGINT or SIGTERM, shaped as [`crate::stdio::serve`] is:
/// the settings and the offer in (runs offered only with
/// `--http-allow-run`, HTTP-009), the boot scan made here, and `hangups`
/// SIGHUP taken over at startup.
pub async fn serve(
    settings: Settings,
    offer: Offer,
    config: Config,
    options: Options,
    hangups: Option<tokio::signal::unix::Signal>,
) -> Result<(), Failed> {
    let watch = settings.watch;
    let idle = settings.http_session_idle;
    let answer_chars = settings.budget;
    let snapshot = Snapshot::serving(config.clone(), settings, &offer);
    if !options.addr.ip().is_loopback() && options.token.is_none() {
        return Err(Failed::NoToken(options.addr));
    }
    raise_descriptor_limit();
    let listener = TcpListener::bind(options.addr)
        .await
        .map_err(|e| Failed::Bind(options.addr, e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Failed::Bind(options.addr, e))?;

    let peers = Arc::new(Peers::default());
    // Every run over HTTP is a human's to approve, when runs are offered at
    // all (HTTP-009, RUN-028): the offer says so.
    let server = SkillServer::new(snapshot, offer).with_peers(Arc::clone(&peers));
    let live = server.live();
    let sessions = Arc::new(Sessions::new(idle));
    sessions.expire_idle();
    let rmcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::clone(&sessions),
        StreamableHttpServerConfig::default()
            // Host and Origin are checked by the door, which says what to
            // do about a refusal and knows the owner's names (HTTP-003).
            .disable_allowed_hosts()
            .disable_allowed_origins()
            .with_json_response(true)
            .with_max_request_body_bytes(MAX_HTTP_BODY_BYTES),
    );
    let access = Access::new(
        bound,
        &options.allow_hosts,
        &options.allow_origins,
        options.token.as_deref(),
    );
    tracing::info!(hosts = ?access.hosts(), origins = ?access.origins(), token = options.token.is_some(), run = offer.runs(), "serving over HTTP");
    let cors = cors::layer(access.origins());
    let connections = Arc::new(Connections::default());
    let door = Arc::new(Door::new(
        access,
        rmcp,
        sessions,
        offer.runs(),
        answer_chars,
        Arc::clone(&connections),
    ));
    let _reloader = reload::start(live, config, peers, watch, hangups);
    // Said whatever the log level: it is what a client connects to.
    eprintln!("skill-mcp: listening on http://{bound}{}", door::PATH);
    tell_the_owner_about_teammates(bound, &options);

    let ended = ended();
    tokio::pin!(ended);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut ended => break,
        };
        let (stream, peer) = match accepted {
            Ok((stream, peer)) => (stream, peer),
            Err(e) => {
                // Out of descriptors, most often: wait, then accept again.
                tracing::warn!(error = %e, "could not accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // An answer goes out in several writes (head, then body or SSE
        // events): with Nagle's algorithm on, each later write waited for
        // the client's delayed ACK, ~40 ms a request in a session (HTTP-013).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        // At the cap, a quiet connection is closed for this one (HTTP-008).
        let Some(registered) = connections.open(Some(peer.ip())) else {
            tracing::warn!("every connection is answering or streaming: a new one was closed");
            continue;
        };
        let door = Arc::clone(&door);
        let cors = cors.clone();
        // The first head is due HTTP_READ_TIMEOUT_SECS after the
        // connection opened, however long its first bytes took (HTTP-008):
        // hyper's own header timeout starts only once they are handed on.
        let head_due = tokio::time::Instant::now() + Duration::from_secs(HTTP_READ_TIMEOUT_SECS);
        tokio::spawn(connection(stream, registered, door, cors, head_due));
    }
    Ok(())
}

/// At start, what teammates will meet when the server listens beyond
/// loopback and no host is allowed (HTTP-018): said whatever the log
/// level, after where it listens.
fn tell_the_owner_about_teammates(bound: SocketAddr, options: &Options) {
    if !bound.ip().is_loopback() && options.allow_hosts.is_empty() {
        // A teammate's client names this machine in its Host header, which
        // only loopback names (and a bound address that is no wildcard)
        // pass until the owner allows it (HTTP-018).
        eprintln!(
            "skill-mcp: teammates' requests will be refused (403, Host not allowed) unless they name {}; \
             start with --http-allow-host NAME for each name they reach this machine by",
            if bound.ip().is_unspecified() {
                "localhost".to_owned()
            } else {
                bound.ip().to_string()
            }
        );
    }
}

/// One accepted connection, from its first bytes to its close: an HTTP/2
/// client told so (HTTP-019), else hyper's HTTP/1 server over the door,
/// closed when the registry says (a new connection needs its place, or a
/// new stream its slot: HTTP-008) or when its first head is late.
async fn connection(
    mut stream: tokio::net::TcpStream,
    registered: connections::Registered,
    door: Arc<Door>,
    cors: Option<tower_http::cors::CorsLayer>,
    head_due: tokio::time::Instant,
) {
    // An HTTP/2 client is told, in its framing, that this port
    // speaks HTTP/1.1 (HTTP-019); the first bytes are read within
    // the header timeout, and a connection closed for a new one
    // ends here too, as does one being told.
    let first = tokio::select! {
        first = tokio::time::timeout_at(head_due, h2::first(&mut stream)) => first,
        () = registered.conn.closed() => return,
    };
    let first = match first {
        Ok(Ok(h2::First::Http1(first))) => first,
        Ok(Ok(h2::First::Http2(got))) => {
            tokio::select! {
                () = h2::refuse(stream, got) => {}
                () = registered.conn.closed() => {}
            }
            return;
        }
        Ok(Err(_)) | Err(_) => return,
    };
    let got_head = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let head_late = {
        let got_head = Arc::clone(&got_head);
        async move {
            tokio::time::sleep_until(head_due).await;
            if got_head.load(std::sync::atomic::Ordering::Relaxed) {
                std::future::pending::<()>().await;
            }
        }
    };
    // A write whose client takes nothing for HTTP_WRITE_TIMEOUT_SECS
    // ends the connection (`Watched`; hyper has no write timeout).
    let io = TokioIo::new(Watched::new(stream, Arc::clone(&registered.conn), first));
    let conn = Arc::clone(&registered.conn);
    let service = hyper::service::service_fn(move |req: hyper::Request<_>| {
        got_head.store(true, std::sync::atomic::Ordering::Relaxed);
        let door = Arc::clone(&door);
        let conn = Arc::clone(&conn);
        let cors = cors.clone();
        async move {
            match cors.filter(|_| door.access.sent_from_a_named_origin(req.headers())) {
                // A page of an origin the owner named: its preflight
                // is answered here, before the token (HTTP-017).
                Some(cors) => {
                    let (parts, body) = req.into_parts();
                    if let Err(a) = door.screen(&parts) {
                        return Ok(*a);
                    }
                    conn.set(Doing::Nothing);
                    cors.layer(cors::DoorService { door, conn })
                        .oneshot(hyper::Request::from_parts(parts, body))
                        .await
                }
                None => Ok::<_, Infallible>(door.handle(req, &conn).await),
            }
        }
    });
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(HTTP_READ_TIMEOUT_SECS))
        .max_buf_size(MAX_HTTP_HEAD_BYTES)
        // The head's bound however its bytes arrive (HTTP-006);
        // the door measures it again for the refusal's words.
        .max_header_size(MAX_HTTP_HEAD_BYTES)
        .serve_connection(io, service);
    let mut served = std::pin::pin!(served);
    tokio::select! {
        served = served.as_mut() => if let Err(e) = served {
            tracing::debug!(error = %e, "an HTTP connection ended with an error");
        },
        () = registered.conn.closed() => {
            // A request whose body was arriving is answered 503 by
            // the door (it waits on the same close): let that
            // answer out, briefly, then drop the connection
            // (HTTP-008). An idle one closes at once; a stream
            // closed for a new one ends with a word on why.
            served.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(Duration::from_secs(1), served).await;
        }
        // No answer: before a head is whole there is no request to
        // answer (as hyper's header timeout does).
        () = head_late => {}
    }
    drop(registered);
}

/// Room for [`MAX_HTTP_CONNECTIONS`] connections and the files reads
/// open beside them (HTTP-008): under a soft limit of 1,024 descriptors, a
/// common default, accepting would fail before the cap is reached and no
/// quiet connection would be closed for a new one. Raised up to the hard
/// limit; a hard limit below it is said once.
fn raise_descriptor_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let want = 2 * MAX_HTTP_CONNECTIONS as u64 + 1_024;
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return;
    };
    if soft >= want {
        return;
    }
    let to = want.min(hard);
    if let Err(e) = setrlimit(Resource::RLIMIT_NOFILE, to, hard) {
        tracing::warn!(error = %e, "could not raise the open-file limit");
    }
    if to < want {
        tracing::warn!(
            limit = to,
            "the open-file limit is below what {MAX_HTTP_CONNECTIONS} connections need: past it new \
             connections wait"
        );
    }
}

/// Resolves on SIGINT or SIGTERM: the server stops accepting and ends.
async fn ended() {
    use tokio::signal::unix::{SignalKind, signal};
    let term = async {
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_or_a_bare_port() {
        assert_eq!(
            parse_addr("8080"),
            Ok("127.0.0.1:8080".parse().unwrap_or_else(|_| unreachable!()))
        );
        assert_eq!(parse_addr("0.0.0.0:1").map(|a| a.port()), Ok(1));
        assert_eq!(
            parse_addr("[::1]:9").map(|a| a.ip().is_loopback()),
            Ok(true)
        );
        assert!(parse_addr("localhost:80").is_err());
        assert!(parse_addr("99999").is_err());
    }
}
