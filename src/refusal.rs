//! Why a request is refused, typed until the door (issue 28 §6): the
//! modules below the doors say what kind of refusal it is and what its
//! message says; only the MCP door (`server`) turns one into the protocol
//! library's error, with the JSON-RPC code and `data` of its kind. So no
//! rule below the doors depends on rmcp, and one conversion decides every
//! code a client sees.

use std::fmt;

/// A refused request, by kind. Each message names the rule that refused
/// and what to do next; the door adds nothing to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The request's own parameters name nothing this server hands out: a
    /// cursor it never handed out or one of another catalog (READ-011,
    /// SKX-008, LIST-018), a name no skill has, a URI that is no served
    /// skill's. JSON-RPC invalid params (-32602), no `data`.
    InvalidParams(String),
    /// A `resources/read` URI that is not a `skill://` file URI: invalid
    /// params (-32602) whose `data` carries `uri`, the URI as asked for,
    /// when it is short enough to quote (READ-016, HARD-005).
    InvalidUri { message: String, uri: String },
    /// A resource that is not there or cannot be read through the fence:
    /// resource not found (-32002, SEP-2164), `data` as [`InvalidUri`](Refusal::InvalidUri).
    NotFound { message: String, uri: String },
    /// What the scan found has changed on disk since, so it cannot be
    /// served as listed (SKX-011): internal error (-32603), no `data`;
    /// the message says a rescan picks the edit up.
    Changed(String),
}

impl Refusal {
    /// The message a client is shown.
    pub(crate) fn message(&self) -> &str {
        match self {
            Refusal::InvalidParams(m) | Refusal::Changed(m) => m,
            Refusal::InvalidUri { message, .. } | Refusal::NotFound { message, .. } => message,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}
