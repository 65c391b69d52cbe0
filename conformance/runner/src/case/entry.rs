//! What steps and setup actions share: an entry is an object that names
//! its kind by one key, and is read as that kind's serde type, whose
//! errors name the field they are about.

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use serde_path_to_error::Segment;

/// The one key of `kinds` that `obj` has: an entry is one thing.
pub fn one_kind<'a>(
    obj: &Map<String, Value>,
    kinds: &[&'a str],
    what: &str,
) -> Result<&'a str, String> {
    let present: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| obj.contains_key(*k))
        .collect();
    match present.as_slice() {
        [one] => Ok(one),
        [] => {
            let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
            Err(format!(
                "not a known {what}: expected one of the keys {} (got {})",
                kinds.join(", "),
                if keys.is_empty() {
                    "an empty object".to_string()
                } else {
                    keys.join(", ")
                }
            ))
        }
        many => Err(format!(
            "has both `{}` and `{}`; one {what} per entry",
            many[0], many[1]
        )),
    }
}

/// `obj` read as `T`; an error says which field (`act[0].mkdir: …`).
pub fn read_entry<T: for<'de> Deserialize<'de>>(obj: Map<String, Value>) -> Result<T, String> {
    serde_path_to_error::deserialize(Value::Object(obj)).map_err(|e| at_field(&e))
}

/// A serde error led by the field it is about, when it is about one.
pub fn at_field<E: std::fmt::Display>(e: &serde_path_to_error::Error<E>) -> String {
    let known = e.path().iter().any(|s| !matches!(s, Segment::Unknown));
    if known {
        format!("{}: {}", e.path(), e.inner())
    } else {
        e.inner().to_string()
    }
}

/// An optional field that, when written, must hold a value of its type:
/// `null` is refused rather than read as absent.
pub fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}
