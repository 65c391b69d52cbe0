//! The connection's lifecycle, one state machine for both of MCP's (spec
//! WIRE-003, WIRE-008): the 2025-11-25 session an `initialize` opens, and
//! the 2026-07-28 lifecycle in which each request carries its protocol
//! version and capabilities in `_meta`. rmcp picks one on the first request
//! that starts either; this mirrors its choice so that what cannot follow
//! it is refused here, with a reason, rather than half-served.

use rmcp::model::{ClientRequest, GetMeta, ProtocolVersion};

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    /// Nothing has started either lifecycle yet.
    Fresh,
    /// An `initialize` was answered: a 2025-11-25 (or earlier) session.
    Session,
    /// A request with complete 2026-07-28 `_meta` was served: every request
    /// carries its own.
    PerRequest,
}

/// What a request does to the lifecycle.
#[derive(Debug, PartialEq)]
pub(crate) enum Step {
    /// Pass it to rmcp (the lifecycle may have moved).
    Pass,
    /// Refuse it with this message (-32600); the lifecycle stays.
    Refuse(String),
}

impl Lifecycle {
    /// True once a lifecycle has started: notifications and responses
    /// before it are dropped (WIRE-003).
    pub(crate) fn started(self) -> bool {
        self != Lifecycle::Fresh
    }

    /// Applies `request` (WIRE-008). `supported` is what the server
    /// serves: a request naming another version starts nothing (rmcp
    /// refuses it), so it must not move the lifecycle here either.
    pub(crate) fn request(
        &mut self,
        request: &ClientRequest,
        supported: &[ProtocolVersion],
    ) -> Step {
        let initialize = matches!(request, ClientRequest::InitializeRequest(_));
        let meta = request.get_meta();
        // Exactly rmcp's test (serve_server_with_ct_inner): both keys there
        // and a version it serves — whichever version that is, a handshake
        // version included — and neither a `ping` (rmcp answers a ping
        // before any lifecycle without looking at its `_meta`) nor a
        // `server/discover`.
        let inline = meta.protocol_version().filter(|v| {
            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
                && supported.contains(v)
        });
        let starts_nothing = matches!(
            request,
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
        );
        match (*self, initialize) {
            (Lifecycle::Fresh, true) => *self = Lifecycle::Session,
            (Lifecycle::Fresh, false) if inline.is_some() && !starts_nothing => {
                *self = Lifecycle::PerRequest
            }
            (Lifecycle::PerRequest, true) => {
                return Step::Refuse(
                    "Invalid Request: this connection already follows the 2026-07-28 lifecycle (its first \
                     request carried _meta with the protocol version and client capabilities), where there is \
                     no initialize: keep sending that _meta with each request, or open a new connection for an \
                     initialize session"
                        .into(),
                );
            }
            _ => {}
        }
        Step::Pass
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ClientJsonRpcMessage;

    fn request(line: &str) -> ClientRequest {
        match serde_json::from_str::<ClientJsonRpcMessage>(line) {
            Ok(ClientJsonRpcMessage::Request(r)) => r.request,
            other => panic!("{other:?}"),
        }
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    const INLINE: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    const HALF: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    const PING: &str = r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#;

    static PING_META: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| INLINE.replace("tools/list", "ping"));
    static OLD_INLINE: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| INLINE.replace("2026-07-28", "2025-11-25"));

    fn all() -> Vec<ProtocolVersion> {
        vec![ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28]
    }

    #[test]
    fn the_transitions_are_those_spec_wire_008_lists() {
        let mut l = Lifecycle::Fresh;
        for line in [PING, DISCOVER, HALF] {
            assert_eq!(l.request(&request(line), &all()), Step::Pass);
            assert_eq!(l, Lifecycle::Fresh, "{line}");
        }
        assert_eq!(
            l.request(&request(INLINE), &[ProtocolVersion::V_2025_11_25]),
            Step::Pass
        );
        assert_eq!(l, Lifecycle::Fresh, "an unsupported version starts nothing");
        assert_eq!(l.request(&request(INLINE), &all()), Step::Pass);
        assert_eq!(l, Lifecycle::PerRequest);
        assert!(matches!(l.request(&request(INIT), &all()), Step::Refuse(_)));
        assert_eq!(l, Lifecycle::PerRequest);

        // rmcp answers a ping before any lifecycle whatever its _meta, and
        // starts the per-request lifecycle on a handshake version too.
        let mut l = Lifecycle::Fresh;
        assert_eq!(l.request(&request(&PING_META), &all()), Step::Pass);
        assert_eq!(l, Lifecycle::Fresh);
        assert_eq!(l.request(&request(&OLD_INLINE), &all()), Step::Pass);
        assert_eq!(l, Lifecycle::PerRequest);

        let mut l = Lifecycle::Fresh;
        assert_eq!(l.request(&request(INIT), &all()), Step::Pass);
        assert_eq!(l, Lifecycle::Session);
        for line in [INLINE, INIT, PING] {
            assert_eq!(l.request(&request(line), &all()), Step::Pass);
            assert_eq!(l, Lifecycle::Session, "{line}");
        }
    }
}
