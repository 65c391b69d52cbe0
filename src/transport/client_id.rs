//! A request's id (spec WIRE-006, HARD-005): kept as the client wrote it,
//! so every answer echoes it exactly, and compared as JSON-RPC compares
//! ids, so `1`, `1.0` and `1e0` are one request. An id longer than an
//! excerpt is never taken: every answer carries its request's id whole.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::echo::EXCERPT_BYTES;

pub(crate) use crate::limits::MAX_ID_BYTES;

// The id and the method bounds are an excerpt's (HARD-005): what a reply
// quotes of a client is never longer, so a quoted id or method never is.
const _: () = assert!(MAX_ID_BYTES == EXCERPT_BYTES);
const _: () = assert!(crate::limits::MAX_METHOD_BYTES == EXCERPT_BYTES);

/// A request id as the client wrote it, and as JSON-RPC compares it.
#[derive(Debug, Clone)]
pub struct ClientId {
    /// The id's JSON text, echoed exactly in the answer.
    pub(crate) raw: Box<RawValue>,
    /// What two ids are compared by (WIRE-006).
    pub(crate) key: IdKey,
}

impl ClientId {
    /// The id written as `text`, for unit tests of what answers carry it.
    #[cfg(test)]
    pub(crate) fn written(text: &str) -> ClientId {
        let key = serde_json::from_str::<Value>(text)
            .ok()
            .as_ref()
            .and_then(IdKey::of)
            .unwrap_or_else(|| panic!("{text} is no id"));
        let raw = RawValue::from_string(text.to_owned()).unwrap_or_else(|e| panic!("{e}"));
        ClientId { raw, key }
    }
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

/// A request id the transport can carry, or why not.
pub(crate) fn client_id(v: &Value, text: &[u8]) -> Result<ClientId, String> {
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
pub(crate) fn head_id(text: &[u8]) -> Option<Box<RawValue>> {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
    }
    let head: Head = serde_json::from_slice(text).ok()?;
    head.id.map(RawValue::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> Result<ClientId, String> {
        let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        client_id(&v, format!(r#"{{"id":{text}}}"#).as_bytes())
    }

    #[test]
    fn one_number_however_spelt_is_one_id_and_echoed_as_spelt() {
        for spelt in ["1", "1.0", "1e0"] {
            let got = id(spelt).unwrap_or_else(|e| panic!("{spelt}: {e}"));
            assert_eq!(got.key, IdKey::Whole(1), "{spelt}");
            assert_eq!(got.raw.get(), spelt);
        }
        assert_eq!(
            id(r#""\u0041""#).map(|i| i.key).ok(),
            Some(IdKey::Text("A".into()))
        );
        assert_eq!(IdKey::of(&Value::Null), None);
        assert_eq!(IdKey::of(&serde_json::json!([1])), None);
    }

    #[test]
    fn an_id_over_an_excerpt_is_refused_saying_its_size() {
        let longest = format!("\"{}\"", "i".repeat(MAX_ID_BYTES));
        assert!(id(&longest).is_ok());
        let over = format!("\"{}\"", "i".repeat(MAX_ID_BYTES + 1));
        let why = id(&over).err().unwrap_or_default();
        assert!(
            why.contains(&format!("an id of {} bytes", MAX_ID_BYTES + 1)),
            "{why}"
        );
        assert!(id("{}").is_err(), "an object is no id");
    }
}
