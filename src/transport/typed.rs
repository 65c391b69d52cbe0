//! Each request rmcp types, decoded by its own type (spec WIRE-002,
//! HTTP-006): the common request straight from its text, without a tree
//! (the HTTP door reads every POST body here), and, for the tree's rules,
//! why a request of a method rmcp types does not decode as it. Which
//! requests are read here and which by the tree changes no answer.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ConstString};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::bounds::{MAX_METHOD_BYTES, MAX_SKILL_URI_BYTES};
use super::client_id::client_id;
use super::message::Incoming;

/// A request's envelope, borrowed from its text: just what `read_value`
/// checks before it decodes a request, without building a tree of it.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: &'a RawValue,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    params: Present<'a>,
    /// A response's members: with either, rmcp reads no request.
    #[serde(borrow, default)]
    result: Present<'a>,
    #[serde(borrow, default)]
    error: Present<'a>,
}

/// A member as written, told apart from one left out: `"params": null`
/// is present (and refused), where an `Option` would read it as absent.
#[derive(Default)]
struct Present<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Present<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| Present(Some(raw)))
    }
}

/// The request `read_value` would pass on, decoded as rmcp's typed
/// message directly from the text rather than through a `Value` (the HTTP
/// door reads every POST body here; the tree and its conversion were most
/// of this function's cost). `None` whenever the message is anything but a
/// plain request that every check of `read_value` passes: an object with
/// `"jsonrpc": "2.0"`, a string or integer id within bounds (WIRE-006,
/// HARD-005), a method within bounds, object params, a request rmcp
/// types that decodes, and for `skills/get` a URI within its bound (one
/// past it is refused by the tree, in its words). Everything else, every refusal included, is `read_value`'s,
/// so no answer changes.
pub(super) fn read_typed(text: &[u8]) -> Option<Incoming> {
    // serde reads a struct from a JSON array too: only an object is read.
    if text.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let head: Envelope = serde_json::from_slice(text).ok()?;
    if head.jsonrpc.get() != "\"2.0\""
        || head.method.len() > MAX_METHOD_BYTES
        || head.params.0.is_some_and(|p| !p.get().starts_with('{'))
        || head.result.0.is_some()
        || head.error.0.is_some()
    {
        return None;
    }
    let v: Value = serde_json::from_str(head.id.get()).ok()?;
    if !(v.is_string() || v.is_i64()) {
        return None;
    }
    let id = client_id(&v, text).ok()?;
    // Unknown to rmcp, or typed and its params did not decode: the tree
    // says which.
    let mut request = typed_request(&head.method, head.params.0.is_some(), text)?;
    if let ClientRequest::GetSkillRequest(get) = &request.request
        && get.params.uri.len() > MAX_SKILL_URI_BYTES
    {
        return None;
    }
    // rmcp's own id type holds an i64 or a string; the caller replaces
    // this one with its own before rmcp sees it, as read_value does.
    request.id = rmcp::model::RequestId::Number(0);
    Some(Incoming::Request {
        id,
        message: Box::new(ClientJsonRpcMessage::Request(request)),
    })
}

/// Implemented by each request type rmcp decodes: its method.
trait Method {
    const METHOD: &'static str;
    /// rmcp's params are an `Option` here, which serde turns into `None`
    /// on any error inside them (a member given twice, say), where the
    /// decode through a tree keeps the last: such a request with params is
    /// left to `read_value`.
    const OPTIONAL_PARAMS: bool = false;
}

impl<M: ConstString, P> Method for rmcp::model::Request<M, P> {
    const METHOD: &'static str = M::VALUE;
}

impl<M: ConstString, P> Method for rmcp::model::RequestOptionalParam<M, P> {
    const METHOD: &'static str = M::VALUE;
    const OPTIONAL_PARAMS: bool = true;
}

impl<M: ConstString> Method for rmcp::model::RequestNoParam<M> {
    const METHOD: &'static str = M::VALUE;
}

/// Why `message` does not decode as the request rmcp types for `method`,
/// or `None` when rmcp types no request of that method (it is unknown).
/// Also `typed_request`: the request of `method` decoded from `text` as
/// that method's own type, which is what rmcp's untagged `ClientRequest`
/// ends at (no two of its requests share a method), without trying each
/// request before it; `None` for a method rmcp does not type here, or
/// params that do not decode as it.
macro_rules! why_not_typed {
    ($($t:ident),* $(,)?) => {
        #[allow(deprecated)]
        fn typed_request(
            method: &str,
            with_params: bool,
            text: &[u8],
        ) -> Option<rmcp::model::JsonRpcRequest<ClientRequest>> {
            $(
                if method == <rmcp::model::$t as Method>::METHOD {
                    if with_params && <rmcp::model::$t as Method>::OPTIONAL_PARAMS {
                        return None;
                    }
                    let r: rmcp::model::JsonRpcRequest<rmcp::model::$t> =
                        serde_json::from_slice(text).ok()?;
                    return Some(rmcp::model::JsonRpcRequest {
                        jsonrpc: r.jsonrpc,
                        id: r.id,
                        request: r.request.into(),
                    });
                }
            )*
            None
        }

        // Deprecated requests are still decoded by rmcp, so still checked.
        #[allow(deprecated)]
        pub(super) fn why_not_typed(method: &str, message: &Value) -> Option<String> {
            $(
                if method == <rmcp::model::$t as Method>::METHOD {
                    return Some(match rmcp::model::$t::deserialize(message) {
                        Err(e) => e.to_string(),
                        Ok(_) => "it decodes alone, but not as a message".to_owned(),
                    });
                }
            )*
            None
        }
    };
}

// The requests of rmcp's `ClientRequest`, each by its own type.
why_not_typed!(
    PingRequest,
    InitializeRequest,
    DiscoverRequest,
    CompleteRequest,
    SetLevelRequest,
    GetPromptRequest,
    ListPromptsRequest,
    ListResourcesRequest,
    ListResourceTemplatesRequest,
    ReadResourceRequest,
    SubscribeRequest,
    UnsubscribeRequest,
    CallToolRequest,
    ListToolsRequest,
    GetTaskRequest,
    UpdateTaskRequest,
    CancelTaskRequest,
    ListSkillsRequest,
    GetSkillRequest,
    ReadResourceDirectoryRequest,
);
