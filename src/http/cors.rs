//! Browser pages of origins the owner named (spec HTTP-017): tower-http's
//! CORS layer answers their preflight and adds `Access-Control-Allow-*`
//! to their answers. Only a request whose `Origin` is one the owner named
//! is passed through it, so every other origin, loopback ones included,
//! gets no CORS header at all; and it is passed through it before the
//! token is checked, because a browser never sends `Authorization` on a
//! preflight.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderName, Method, Request, header};
use http_body::Body;
use tower_http::cors::{AllowOrigin, CorsLayer};

use super::access::origin;
use super::connections::Conn;
use super::door::{Answer, Door};

/// The headers MCP's Streamable HTTP transport sends.
const MCP_HEADERS: [&str; 5] = [
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
];

/// The layer for `origins` (as [`origin`] writes them); `None` when the
/// owner named none.
pub(crate) fn layer(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let named: Arc<[String]> = origins.into();
    let mut headers = vec![header::AUTHORIZATION, header::CONTENT_TYPE];
    headers.extend(MCP_HEADERS.map(HeaderName::from_static));
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::predicate(move |o, _| {
                o.to_str()
                    .ok()
                    .and_then(origin)
                    .is_some_and(|o| named.contains(&o))
            }))
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers(headers)
            .expose_headers([HeaderName::from_static("mcp-session-id")])
            .max_age(Duration::from_secs(600)),
    )
}

/// The door as a tower service, for the layer to wrap.
#[derive(Clone)]
pub(crate) struct DoorService {
    pub(crate) door: Arc<Door>,
    pub(crate) conn: Arc<Conn>,
}

impl<B> tower::Service<Request<B>> for DoorService
where
    B: Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    type Response = Answer;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let door = Arc::clone(&self.door);
        let conn = Arc::clone(&self.conn);
        Box::pin(async move { Ok(door.handle(req, &conn).await) })
    }
}
