//! The stdio door (spec SRV-001, WIRE-*): one client, one session, over
//! any reader and writer — stdin and stdout in the binary, in-memory
//! pipes in the fuzz target — shaped as [`crate::http::serve`] is: the
//! settings and the offer in, a typed error out for the binary to print.

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::signal::unix::Signal;

use crate::config::Config;
use crate::offer::Offer;
use crate::reload::{self, Peers};
use crate::server::SkillServer;
use crate::settings::Settings;
use crate::snapshot::Snapshot;
use crate::transport;

/// Why a stdio session did not start or ended badly.
#[derive(Debug)]
pub enum Failed {
    /// The client left, or spoke no MCP, before initializing: not an error
    /// worth a backtrace, but said.
    NotStarted(Box<ServerInitializeError>),
    /// The session's task ended abnormally.
    Ended(tokio::task::JoinError),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::NotStarted(e) => write!(f, "the session did not start: {e}"),
            Failed::Ended(e) => write!(f, "the session ended with an error: {e}"),
        }
    }
}

impl std::error::Error for Failed {}

/// Serves one session over `input` and `output` until the client's input
/// ends. `hangups` is SIGHUP taken over at startup (`None`: reload on
/// SIGHUP is off).
pub async fn serve<R, W>(
    settings: Settings,
    offer: Offer,
    config: Config,
    input: R,
    output: W,
    hangups: Option<Signal>,
) -> Result<(), Failed>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let watch = settings.watch;
    let snapshot = Snapshot::serving(config.clone(), settings, &offer);
    // Runs end when the client's input does (RUN-028, RUN-021).
    let (hangup_tx, hangup_rx) = tokio::sync::watch::channel(false);
    let server = SkillServer::with_hangup(snapshot, offer, hangup_rx);
    let live = server.live();
    // Every client line passes the guard before rmcp sees it (spec WIRE-*).
    let versions = rmcp::ServerHandler::supported_protocol_versions(&server).into_owned();
    let transport = transport::Lines::new(input, output, hangup_tx, versions);
    let service = server
        .serve(transport)
        .await
        .map_err(|e| Failed::NotStarted(Box::new(e)))?;
    let peers = Arc::new(Peers::default());
    peers.add(service.peer().clone());
    let _reloader = reload::start(live, config, peers, watch, hangups);
    service.waiting().await.map_err(Failed::Ended)?;
    Ok(())
}
