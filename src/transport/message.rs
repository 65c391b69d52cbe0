//! One client message, read once (spec WIRE-001, WIRE-002, WIRE-006,
//! HARD-005): what it is, or the JSON-RPC error it gets instead. No I/O and
//! no state, so any byte stream (stdio now, HTTP later) applies the same
//! rules to each message it frames.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ConstString};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::echo::{EXCERPT_BYTES, excerpt};
use crate::limits::{
    MAX_LASTING_MESSAGE_BYTES, MAX_MESSAGE_DEPTH, MAX_MESSAGE_VALUES, MAX_RUN_MESSAGE_BYTES,
    MAX_SKILL_NAME_BYTES,
};
use crate::uri;

/// Longest id a request may carry, as its JSON text. Every answer carries
/// its request's id whole (JSON-RPC), so an id is taken only when it is no
/// longer than an excerpt (HARD-005); real clients send numbers or UUIDs.
pub(crate) const MAX_ID_BYTES: usize = EXCERPT_BYTES;

/// Longest method handed to rmcp, whose "method not found" quotes the
/// method whole. Every MCP method is a few dozen bytes.
pub(crate) const MAX_METHOD_BYTES: usize = EXCERPT_BYTES;

/// Longest `skills/get` URI handed to rmcp: the SKILL.md URI of a skill
/// with the longest name this server can serve. rmcp refuses a URI that
/// does not end in `/SKILL.md` before the handler sees it, quoting it whole.
pub(crate) const MAX_SKILL_URI_BYTES: usize =
    uri::PREFIX.len() + MAX_SKILL_NAME_BYTES + "/SKILL.md".len();

/// A request id as the client wrote it, and as JSON-RPC compares it.
#[derive(Debug, Clone)]
pub struct ClientId {
    /// The id's JSON text, echoed exactly in the answer.
    pub(crate) raw: Box<RawValue>,
    /// What two ids are compared by (WIRE-006).
    pub(crate) key: IdKey,
}

/// What makes two ids the same id (WIRE-006): a string by its characters
/// (however escaped), a number by its value — `1`, `1.0` and `1e0` are one
/// id, as they are to a JavaScript client; numbers past 2^53 compare as the
/// doubles such a client holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    Text(String),
    Whole(i128),
    /// A number with a fraction, by its bits (never NaN: JSON has none).
    Fraction(u64),
}

impl IdKey {
    /// The key of an id already decoded; `None` when it is not a string or
    /// a number.
    pub(crate) fn of(v: &Value) -> Option<IdKey> {
        match v {
            Value::String(s) => Some(IdKey::Text(s.clone())),
            Value::Number(n) => {
                // Past 2^53 a whole number is the double a JavaScript
                // client would hold, as when it is spelled `….0` or `…e0`.
                const EXACT: u64 = 1 << 53;
                if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= EXACT) {
                    Some(IdKey::Whole(i.into()))
                } else if let Some(u) = n.as_u64().filter(|&u| u <= EXACT) {
                    Some(IdKey::Whole(u.into()))
                } else {
                    let f = n.as_f64()?;
                    if f.fract() == 0.0 && f.abs() < 1e38 {
                        Some(IdKey::Whole(f as i128))
                    } else {
                        Some(IdKey::Fraction(f.to_bits()))
                    }
                }
            }
            _ => None,
        }
    }
}

/// A JSON-RPC error the transport answers itself; `id` is `None` when the
/// request's id could not be read (written as `null`).
#[derive(Debug)]
pub struct Refusal {
    pub id: Option<Box<RawValue>>,
    pub code: i32,
    pub message: String,
}

/// What one client message is.
#[derive(Debug)]
pub enum Incoming {
    /// A request for rmcp; its id is still the client's (the caller gives
    /// rmcp its own, WIRE-006).
    Request {
        id: ClientId,
        message: Box<ClientJsonRpcMessage>,
    },
    /// A notification; `cancels` is the id a `notifications/cancelled` names.
    Notification {
        message: Box<ClientJsonRpcMessage>,
        cancels: Option<IdKey>,
    },
    /// The client's answer to a request of the server's.
    Response(Box<ClientJsonRpcMessage>),
    /// Answered here with this error; nothing goes to rmcp.
    Refuse(Refusal),
    /// Neither answered nor passed on (logged): a message that is never
    /// answered, and that rmcp could not take.
    Drop(String),
}

fn refuse(id: Option<Box<RawValue>>, code: i32, message: impl Into<String>) -> Incoming {
    Incoming::Refuse(Refusal {
        id,
        code,
        message: message.into(),
    })
}

/// Reads one message (a line without its newline). A well-formed request
/// rmcp types is decoded by its own type straight from the text
/// ([`read_typed`]); anything else by [`read_value`], whose refusals and
/// messages are the rules.
pub fn read(text: &[u8]) -> Incoming {
    read_decoding(text).0
}

/// [`read`], and whether the message was decoded straight from its text
/// as rmcp decodes it (`true`), or through a tree whose reading rmcp's
/// may not share — a member given twice, say, where the tree keeps the
/// last and rmcp refuses. The HTTP door, which hands rmcp the body, hands
/// it the message written again from the tree in the second case, so both
/// doors answer alike (HTTP-006).
pub fn read_decoding(text: &[u8]) -> (Incoming, bool) {
    if let Some(why) = too_complex(text) {
        let refused = match role_alone(text) {
            // A notification or a client's answer is never answered
            // (WIRE-001): an error under a response's id would be a
            // second answer to one of the client's own requests.
            Role::NotRequest => {
                Incoming::Drop(format!("a notification or response refused unread: {why}"))
            }
            Role::Request(id) => refuse(id, -32600, why),
            Role::Unknown => refuse(None, -32600, why),
        };
        return (refused, false);
    }
    if let Some(why) = too_long_to_keep(text) {
        return (refuse(role_alone(text).id(), -32600, why), false);
    }
    match read_typed(text) {
        Some(incoming) => (incoming, true),
        None => (read_value(text), false),
    }
}

/// Why a message is refused for its shape before any tree of it is built
/// (WIRE-009), from one pass over its bytes: how deep it nests, and how
/// many values it holds (each container and each `,` outside strings).
/// Every decoder of a message builds a tree whose nodes cost tens of bytes
/// each, so a 4 MiB body of arrays nested 100 deep took the server from
/// 22 MB to 737 MB and its worker threads for seconds; no MCP message
/// nests deeper than a few levels or holds more than a few hundred values.
fn too_complex(text: &[u8]) -> Option<String> {
    let (mut depth, mut values) = (0usize, 1usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                values += 1;
                if depth > MAX_MESSAGE_DEPTH {
                    return Some(format!(
                        "Invalid Request: WIRE-009: the message nests deeper than {MAX_MESSAGE_DEPTH} arrays and \
                         objects; no MCP message needs more than a few levels: send its values flatter"
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => continue,
        }
        if values > MAX_MESSAGE_VALUES {
            return Some(format!(
                "Invalid Request: WIRE-009: the message holds more than {MAX_MESSAGE_VALUES} JSON values; no MCP \
                 message needs that many: send fewer, or one long string instead of many small ones"
            ));
        }
    }
    None
}

/// What a message refused unread is: a request (with its id, when that is
/// short), something else, or unknown (serde could not even skip through
/// it, so `null` answers it as an unreadable request's error does).
enum Role {
    Request(Option<Box<RawValue>>),
    NotRequest,
    Unknown,
}

impl Role {
    fn id(self) -> Option<Box<RawValue>> {
        match self {
            Role::Request(id) => id,
            Role::NotRequest | Role::Unknown => None,
        }
    }
}

/// The role and id of a message, read without building a tree: serde skips
/// every other member without allocating.
fn role_alone(text: &[u8]) -> Role {
    #[derive(Deserialize)]
    struct Head {
        id: Option<Box<RawValue>>,
        method: Option<serde::de::IgnoredAny>,
    }
    let Ok(head) = serde_json::from_slice::<Head>(text) else {
        return Role::Unknown;
    };
    match (head.method, head.id) {
        (Some(_), Some(id)) => {
            let t = id.get();
            let short = t.len() <= MAX_ID_BYTES
                && (t.starts_with('"')
                    || t.starts_with('-')
                    || t.starts_with(|c: char| c.is_ascii_digit()));
            Role::Request(short.then_some(id))
        }
        _ => Role::NotRequest,
    }
}

/// Why a request is refused for its size although under the transport's
/// bound (WIRE-010): one that can outlive its answer keeps what it carried
/// — an `initialize` for its session's life, a `subscriptions/listen` for
/// its stream's, a confirmed `skill_run` while a person is asked — so 48
/// sessions opened with 4 MB of `capabilities.experimental` held 193 MB.
fn too_long_to_keep(text: &[u8]) -> Option<String> {
    if text.len() <= MAX_LASTING_MESSAGE_BYTES {
        return None;
    }
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        params: Option<Params<'a>>,
    }
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        name: Option<std::borrow::Cow<'a, str>>,
    }
    let head = serde_json::from_slice::<Head>(text).ok()?;
    let method = head.method?;
    let (what, limit) = match method.as_ref() {
        "initialize" => (
            "an initialize is kept for as long as its session lasts",
            MAX_LASTING_MESSAGE_BYTES,
        ),
        "subscriptions/listen" => (
            "a subscriptions/listen is kept for as long as it listens",
            MAX_LASTING_MESSAGE_BYTES,
        ),
        "tools/call"
            if head
                .params
                .and_then(|p| p.name)
                .is_some_and(|n| n == "skill_run") =>
        {
            (
                "a skill_run is kept while a person is asked to approve it",
                MAX_RUN_MESSAGE_BYTES,
            )
        }
        _ => return None,
    };
    (text.len() > limit).then(|| {
        format!(
            "Invalid Request: WIRE-010: {what}, so it is at most {limit} bytes, and this one is {}; send it \
             without bulk (in _meta, capabilities or arguments)",
            text.len()
        )
    })
}

/// A request's envelope, borrowed from its text: just what [`read_value`]
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

/// The request [`read_value`] would pass on, decoded as rmcp's typed
/// message directly from the text rather than through a `Value` (the HTTP
/// door reads every POST body here; the tree and its conversion were most
/// of this function's cost). `None` whenever the message is anything but a
/// plain request that every check of [`read_value`] passes: an object with
/// `"jsonrpc": "2.0"`, a string or integer id within bounds (WIRE-006,
/// HARD-005), a method within bounds, object params, not `skills/get`
/// (whose URI bound is checked on the tree) and a request rmcp types that
/// decodes. Everything else, every refusal included, is [`read_value`]'s,
/// so no answer changes.
fn read_typed(text: &[u8]) -> Option<Incoming> {
    // serde reads a struct from a JSON array too: only an object is read.
    if text.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let head: Envelope = serde_json::from_slice(text).ok()?;
    if head.jsonrpc.get() != "\"2.0\""
        || head.method.len() > MAX_METHOD_BYTES
        || head.method == "skills/get"
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
    // rmcp's own id type holds an i64 or a string; the caller replaces
    // this one with its own before rmcp sees it, as read_value does.
    request.id = rmcp::model::RequestId::Number(0);
    Some(Incoming::Request {
        id,
        message: Box::new(ClientJsonRpcMessage::Request(request)),
    })
}

/// Reads one message through a `Value`: the rules for every message. The
/// text is parsed once; only a message that is not JSON, or whose id is a
/// number with a fraction or past 2^64, is looked at again, for the id
/// alone.
fn read_value(text: &[u8]) -> Incoming {
    let v: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => return not_json(text, &e),
    };
    let Value::Object(mut obj) = v else {
        let message = if v.is_array() {
            "Invalid Request: batches are not part of MCP; send one message per line"
        } else {
            "Invalid Request: a JSON-RPC message is a JSON object"
        };
        return refuse(None, -32600, message);
    };
    let id = match obj.get("id") {
        None => None,
        Some(v) => match client_id(v, text) {
            Ok(id) => Some(id),
            Err(why) => return refuse(None, -32600, why),
        },
    };
    let raw = |id: &Option<ClientId>| id.as_ref().map(|i| i.raw.clone());
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return refuse(
            raw(&id),
            -32600,
            "Invalid Request: expected {\"jsonrpc\": \"2.0\", \"method\": …} with a string or number id",
        );
    }
    let method = obj.get("method").and_then(Value::as_str).map(str::to_owned);
    if obj.get("params").is_some_and(|p| !p.is_object()) {
        // Only a request is answered: a notification or a response never
        // is (JSON-RPC), not even to refuse it, and a response's id is the
        // id of a request of the server's, not one the client waits on.
        return match (&method, id) {
            (Some(_), Some(id)) => refuse(
                Some(id.raw),
                -32602,
                "Invalid params: \"params\" must be an object",
            ),
            _ => Incoming::Drop("a notification or response whose params are no object".into()),
        };
    }
    let is_response = obj.contains_key("result") || obj.contains_key("error");
    match (method, id) {
        (Some(m), Some(id)) => {
            if m.len() > MAX_METHOD_BYTES {
                return refuse(
                    Some(id.raw),
                    -32601,
                    format!(
                        "Method not found: {} (no method this server answers is longer than {MAX_METHOD_BYTES} bytes)",
                        excerpt(&m)
                    ),
                );
            }
            if m == "skills/get"
                && let Some(u) = obj
                    .get("params")
                    .and_then(|p| p.get("uri"))
                    .and_then(Value::as_str)
                && u.len() > MAX_SKILL_URI_BYTES
            {
                return refuse(
                    Some(id.raw),
                    -32602,
                    format!(
                        "no skill at {}: the URI is {} bytes long, and no SKILL.md URI this server serves is longer than \
                         {MAX_SKILL_URI_BYTES}; skills/get takes the SKILL.md URI skills/list gives",
                        excerpt(u),
                        u.len()
                    ),
                );
            }
            // rmcp's own id type holds an i64 or a string; the caller
            // replaces this one with its own before rmcp sees it.
            obj.insert("id".into(), Value::from(0));
            // Decoded from the value by reference: the value is kept, to say
            // why a request rmcp types did not decode, without a copy of
            // every request.
            let v = Value::Object(obj);
            let message = match ClientJsonRpcMessage::deserialize(&v) {
                Ok(m) => m,
                // Even rmcp's catch-all custom request failed (a `_meta`
                // that is no object, say): for a method rmcp types, its
                // params are what is wrong (WIRE-002).
                Err(e) => {
                    return match why_not_typed(&m, &v) {
                        Some(why) => bad_params(id, &m, &why),
                        None => refuse(
                            Some(id.raw),
                            -32600,
                            format!("Invalid Request: {}", excerpt(&e.to_string())),
                        ),
                    };
                }
            };
            if let ClientJsonRpcMessage::Request(r) = &message
                && let ClientRequest::CustomRequest(custom) = &r.request
                && let Some(why) = why_not_typed(&custom.method, &v)
            {
                // A method rmcp types whose params did not decode as it:
                // rmcp would call it unknown (WIRE-002).
                return bad_params(id, &m, &why);
            }
            Incoming::Request {
                id,
                message: Box::new(message),
            }
        }
        (Some(m), None) => {
            let cancels = (m == "notifications/cancelled")
                .then(|| {
                    obj.get("params")
                        .and_then(|p| p.get("requestId"))
                        .and_then(IdKey::of)
                })
                .flatten();
            match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(obj)) {
                Ok(message) => Incoming::Notification {
                    message: Box::new(message),
                    cancels,
                },
                // A notification is never answered, not even to refuse it.
                Err(e) => Incoming::Drop(format!(
                    "a notification rmcp cannot take: {}",
                    excerpt(&e.to_string())
                )),
            }
        }
        (None, _) if is_response => {
            match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(obj)) {
                Ok(message) => Incoming::Response(Box::new(message)),
                // Nor is a response answered.
                Err(e) => Incoming::Drop(format!(
                    "a response rmcp cannot take: {}",
                    excerpt(&e.to_string())
                )),
            }
        }
        (None, id) => refuse(
            raw(&id),
            -32600,
            "Invalid Request: no \"method\" (and not a response)",
        ),
    }
}

/// The refusal of a request to a method rmcp types whose params do not
/// decode as that method's (WIRE-002): -32602, with the decoding error.
fn bad_params(id: ClientId, method: &str, why: &str) -> Incoming {
    refuse(
        Some(id.raw),
        -32602,
        format!(
            "Invalid params: the parameters of {method} do not match its schema ({})",
            excerpt(why)
        ),
    )
}

/// A request id the transport can carry, or why not.
fn client_id(v: &Value, text: &[u8]) -> Result<ClientId, String> {
    let key = IdKey::of(v).ok_or_else(|| {
        "Invalid Request: expected {\"jsonrpc\": \"2.0\", \"method\": …} with a string or number id".to_owned()
    })?;
    // A whole number or a string is written back as it decoded; a number
    // with a fraction or past 2^64 is written back as the client spelled it.
    let raw = match v {
        Value::Number(n) if n.is_f64() => {
            head_id(text).ok_or_else(|| "Invalid Request: the id could not be read".to_owned())?
        }
        _ => RawValue::from_string(v.to_string()).map_err(|e| e.to_string())?,
    };
    // A string by its characters' bytes, a number by its digits.
    let len = match v {
        Value::String(t) => t.len(),
        _ => raw.get().len(),
    };
    if len > MAX_ID_BYTES {
        return Err(format!(
            "Invalid Request: an id of {len} bytes is over the {MAX_ID_BYTES}-byte limit (an answer carries its \
             request's id whole); use a number or a shorter string"
        ));
    }
    Ok(ClientId { raw, key })
}

/// The id of a message as its text spells it, read without decoding the
/// rest of the message.
fn head_id(text: &[u8]) -> Option<Box<RawValue>> {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
    }
    let head: Head = serde_json::from_slice(text).ok()?;
    head.id.map(RawValue::to_owned)
}

/// The refusal of a message that is not JSON (WIRE-001): -32700, with the
/// request's id when the rest of the text still shows one that decodes on
/// its own — a lone surrogate escape elsewhere in a request spoils the
/// message, not its id.
fn not_json(text: &[u8], e: &serde_json::Error) -> Incoming {
    let id = head_id(text).filter(|raw| {
        raw.get().len() <= MAX_ID_BYTES
            && serde_json::from_str::<Value>(raw.get())
                .ok()
                .as_ref()
                .and_then(IdKey::of)
                .is_some()
    });
    let surrogate = e.to_string().contains("escape");
    let message = if let Err(bad) = std::str::from_utf8(text) {
        // serde says "invalid unicode code point", which names neither the
        // encoding nor what to send (a client that wrote Latin-1, say).
        let at = bad.valid_up_to();
        format!(
            "Parse error: the message is not UTF-8 (byte 0x{:02X} at byte {at} starts no UTF-8 character); \
             JSON-RPC messages are UTF-8 text: send it encoded as UTF-8",
            text.get(at).copied().unwrap_or(0)
        )
    } else if text.starts_with("\u{feff}".as_bytes()) {
        // JSON (RFC 8259 §8.1) is sent without a byte-order mark; say so
        // rather than "expected value at column 1", which points nowhere.
        "Parse error: the line starts with a byte-order mark (U+FEFF); send each JSON-RPC message without one".to_owned()
    } else if e.to_string().contains("number out of range") {
        // Valid JSON, but a number past what a 64-bit float holds
        // (`1e400`): no JSON-RPC peer can mean it as an id or a value.
        format!(
            "Parse error: the message holds a number too large to read ({e}); ids and values are numbers a 64-bit float holds, or strings"
        )
    } else if surrogate {
        format!(
            "Parse error: the message holds a \\u escape that is no character, such as a lone UTF-16 surrogate ({e}); \
             send text as UTF-8 or as a surrogate pair"
        )
    } else {
        format!("Parse error: the line is not JSON ({e})")
    };
    refuse(id, -32700, message)
}

/// Implemented by each request type rmcp decodes: its method.
trait Method {
    const METHOD: &'static str;
    /// rmcp's params are an `Option` here, which serde turns into `None`
    /// on any error inside them (a member given twice, say), where the
    /// decode through a tree keeps the last: such a request with params is
    /// left to [`read_value`].
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
        fn why_not_typed(method: &str, message: &Value) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_too_deep_or_too_many_values_is_refused_before_decoding() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{"x":{}1{}}}}}"#,
            "[".repeat(MAX_MESSAGE_DEPTH),
            "]".repeat(MAX_MESSAGE_DEPTH)
        );
        let many = format!(
            r#"{{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{{"x":[{}0]}}}}"#,
            "0,".repeat(MAX_MESSAGE_VALUES)
        );
        for (text, id) in [(deep, "7"), (many, "\"a\"")] {
            match read(text.as_bytes()) {
                Incoming::Refuse(r) => {
                    assert_eq!(r.code, -32600);
                    assert!(r.message.contains("WIRE-009"), "{}", r.message);
                    assert_eq!(r.id.as_deref().map(RawValue::get), Some(id));
                }
                other => panic!("not refused: {other:?}"),
            }
        }
        // Brackets and commas inside strings are text, not structure.
        let quoted = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"x":"{}\"{}"}}}}"#,
            "[,".repeat(MAX_MESSAGE_VALUES),
            "{".repeat(100)
        );
        assert!(matches!(read(quoted.as_bytes()), Incoming::Request { .. }));
        // Just within both bounds: read as usual.
        let within = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"x":{}1{}}}}}"#,
            "[".repeat(MAX_MESSAGE_DEPTH - 2),
            "]".repeat(MAX_MESSAGE_DEPTH - 2)
        );
        assert!(matches!(read(within.as_bytes()), Incoming::Request { .. }));
    }

    fn code(line: &str) -> Option<i32> {
        match read(line.as_bytes()) {
            Incoming::Refuse(r) => Some(r.code),
            _ => None,
        }
    }

    #[test]
    fn lines_are_classified() {
        assert_eq!(code("{not json"), Some(-32700));
        assert_eq!(code("[1,2]"), Some(-32600));
        assert_eq!(code("42"), Some(-32600));
        assert_eq!(code(r#"{"id":1,"method":"x"}"#), Some(-32600));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#),
            Some(-32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#),
            Some(-32602)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}"#),
            Some(-32602)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":4,"method":"no/such","params":{}}"#),
            None
        );
        assert!(matches!(
            read(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#),
            Incoming::Request { .. }
        ));
        assert!(matches!(
            read(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.0}}"#),
            Incoming::Notification { cancels: Some(IdKey::Whole(1)), .. }
        ));
    }

    /// The direct decode answers only what the tree would answer, and the
    /// same way: over requests of each kind, odd ids, odd params and
    /// refusals, wherever [`read_typed`] answers its answer is
    /// [`read_value`]'s, and it answers the common requests.
    #[test]
    fn the_direct_decode_equals_the_decode_through_a_tree() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let answered = [
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"skill://a/assets/logo.png",{meta}}}}}"#
            ),
            format!(
                r#"{{"id":"x-\u0041","method":"tools/call","jsonrpc":"2.0","params":{{"name":"skill_file","arguments":{{"name":"a","path":"SKILL.md"}},{meta}}}}}"#
            ),
            r#"{"jsonrpc":"2.0","id":-7,"method":"ping"}"#.to_owned(),
            r#" {"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/list"} "#.to_owned(),
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/list","extra":[1,2.5e3]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"a","arguments":{"k":"v"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":5,"method":"prompts/list"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":6,"method":"resources/templates/list"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"a"},"argument":{"name":"x","value":"y"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"info"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":9,"method":"resources/subscribe","params":{"uri":"skill://a/SKILL.md"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"skill_run","arguments":{},"_meta":{"progressToken":3}}}"#.to_owned(),
        ];
        let passed_on = [
            // Optional params: rmcp drops them whole on an error inside
            // (a member twice), where the tree keeps the last.
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"abc"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"cursor":"z","cursor":"z"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.1","id":1,"method":"ping"}"#.to_owned(),
            r#"{"id":1,"method":"ping"}"#.to_owned(),
            r#"["2.0",1,"ping"]"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://a/SKILL.md"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","error":null}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a","uri":"b"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":7}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#, "i".repeat(MAX_ID_BYTES + 1)),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{}"}}"#, "m".repeat(MAX_METHOD_BYTES + 1)),
        ];
        for text in &answered {
            let direct = read_typed(text.as_bytes())
                .unwrap_or_else(|| panic!("not decoded directly: {text}"));
            assert_eq!(
                format!("{direct:?}"),
                format!("{:?}", read_value(text.as_bytes())),
                "{text}"
            );
        }
        for text in &passed_on {
            if let Some(direct) = read_typed(text.as_bytes()) {
                assert_eq!(
                    format!("{direct:?}"),
                    format!("{:?}", read_value(text.as_bytes())),
                    "{text}"
                );
            }
            assert_eq!(
                format!("{:?}", read(text.as_bytes())),
                format!("{:?}", read_value(text.as_bytes())),
                "{text}"
            );
        }
    }

    #[test]
    fn every_id_json_rpc_allows_is_kept_as_written() {
        for (id, key) in [
            ("1", IdKey::Whole(1)),
            ("1.0", IdKey::Whole(1)),
            ("1e0", IdKey::Whole(1)),
            ("-7", IdKey::Whole(-7)),
            ("18446744073709551615", IdKey::Whole(1i128 << 64)),
            ("1.5", IdKey::Fraction(1.5f64.to_bits())),
            (r#""a\"b""#, IdKey::Text("a\"b".into())),
            (r#""\u0041""#, IdKey::Text("A".into())),
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            match read(line.as_bytes()) {
                Incoming::Request { id: got, .. } => {
                    assert_eq!(got.key, key, "{id}");
                    if id.contains('.') || id.contains('e') || id.len() > 19 {
                        assert_eq!(got.raw.get(), id, "a number is echoed as written");
                    }
                }
                other => panic!("{id}: {other:?}"),
            }
        }
    }

    #[test]
    fn what_a_reply_would_echo_whole_is_bounded_here() {
        let big = "x".repeat(10 * 1024 * 1024);
        let refused = |v: Value| match read(v.to_string().as_bytes()) {
            Incoming::Refuse(r) => r,
            other => panic!("passed on: {other:?}"),
        };
        let r = refused(serde_json::json!({"jsonrpc": "2.0", "id": big, "method": "ping"}));
        assert_eq!((r.id.is_none(), r.code), (true, -32600));
        assert!(
            r.message.contains("10485760 bytes") && r.message.len() < 300,
            "{}",
            r.message
        );
        let r = refused(serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": big}));
        assert_eq!(r.code, -32601);
        assert_eq!(r.id.map(|i| i.get().to_owned()).as_deref(), Some("3"));
        assert!(
            r.message.contains("(10485560 more bytes)") && r.message.len() < 400,
            "{}",
            r.message
        );
        let uri = format!("skill://{big}/SKILL.md");
        let r = refused(
            serde_json::json!({"jsonrpc": "2.0", "id": "a", "method": "skills/get", "params": {"uri": uri}}),
        );
        assert_eq!(r.code, -32602);
        let digits = "9".repeat(300);
        let r = match read(
            format!(r#"{{"jsonrpc":"2.0","id":{digits},"method":"ping"}}"#).as_bytes(),
        ) {
            Incoming::Refuse(r) => r,
            other => panic!("passed on: {other:?}"),
        };
        assert_eq!((r.id.is_none(), r.code), (true, -32600));
        // At the bounds, everything passes on to rmcp as before.
        let longest = format!("skill://{}/SKILL.md", "n".repeat(MAX_SKILL_NAME_BYTES));
        assert_eq!(longest.len(), MAX_SKILL_URI_BYTES);
        for v in [
            serde_json::json!({"jsonrpc": "2.0", "id": "i".repeat(MAX_ID_BYTES), "method": "ping"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "m".repeat(MAX_METHOD_BYTES)}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "skills/get", "params": {"uri": longest}}),
            serde_json::json!({"jsonrpc": "2.0", "method": big}),
        ] {
            assert!(!matches!(
                read(v.to_string().as_bytes()),
                Incoming::Refuse(_)
            ));
        }
    }

    #[test]
    fn a_lone_surrogate_keeps_the_id_it_spoils_the_message_of() {
        let r = match read(
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"\ud800"}}"#,
        ) {
            Incoming::Refuse(r) => r,
            other => panic!("{other:?}"),
        };
        assert_eq!(r.code, -32700);
        assert_eq!(r.id.map(|i| i.get().to_owned()).as_deref(), Some("5"));
        assert!(r.message.contains("surrogate"), "{}", r.message);
        let r = match read(br#"{"jsonrpc":"2.0","id":"\ud800","method":"ping"}"#) {
            Incoming::Refuse(r) => r,
            other => panic!("{other:?}"),
        };
        assert!(
            r.id.is_none(),
            "an id that is itself no string is not echoed"
        );
    }
}
