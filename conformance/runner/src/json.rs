//! Small JSON helpers shared by the runner's modules: JSON-number-aware
//! equality, canonical (key-sorted) form, and path formatting.

use serde_json::{Map, Value};

/// One step of a concrete path inside a JSON value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathElem {
    Key(String),
    Index(usize),
}

/// Formats a path the way selectors are written: `result.content[0].text`.
/// A key that is not a plain identifier is written `["k.e.y"]`.
pub fn format_path(path: &[PathElem]) -> String {
    let mut s = String::new();
    for e in path {
        match e {
            PathElem::Index(i) => s.push_str(&format!("[{i}]")),
            PathElem::Key(k) => {
                let plain = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$' | '/'));
                if plain {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(k);
                } else {
                    s.push('[');
                    s.push_str(&Value::String(k.clone()).to_string());
                    s.push(']');
                }
            }
        }
    }
    if s.is_empty() {
        "(the whole reply)".to_string()
    } else {
        s
    }
}

/// JSON has one number type: `1` and `1.0` are the same number.
pub fn num_eq(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    let int = |n: &serde_json::Number| -> Option<i128> {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => x == y,
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// Deep equality with JSON number semantics.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_eq(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// The value with every object's keys in sorted order (a no-op with
/// serde_json's default map, correct with `preserve_order` too).
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                if let Some(x) = m.get(k) {
                    out.insert(k.clone(), canonical(x));
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Compact JSON with sorted keys: the canonical text used for sorting.
pub fn canonical_string(v: &Value) -> String {
    canonical(v).to_string()
}

/// The JSON type name used by the `type` matcher.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Shortens a text for a one-line message.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head}… ({} bytes in all)", s.len())
}

/// The first difference found, in document order of the golden.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// Where, written like a selector.
    pub path: String,
    /// What differs, in words.
    pub what: String,
    /// The golden's value there (None: the golden has nothing there).
    pub expected: Option<Value>,
    /// The reply's value there (None: the reply has nothing there).
    pub actual: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_eq(&json!(1), &json!(1.0)));
        assert!(json_eq(&json!({"a": [1, 2.5]}), &json!({"a": [1.0, 2.5]})));
        assert!(!json_eq(&json!(1), &json!(2)));
        assert!(!json_eq(&json!(u64::MAX), &json!(-1)));
        assert!(!json_eq(&json!(1), &json!("1")));
        assert!(!json_eq(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
    }

    #[test]
    fn canonical_sorts_keys() {
        let v: Value = serde_json::from_str(r#"{"b":1,"a":{"d":1,"c":2}}"#).unwrap();
        assert_eq!(canonical_string(&v), r#"{"a":{"c":2,"d":1},"b":1}"#);
    }

    #[test]
    fn paths_format_like_selectors() {
        use PathElem::*;
        assert_eq!(
            format_path(&[
                Key("result".into()),
                Key("content".into()),
                Index(0),
                Key("text".into())
            ]),
            "result.content[0].text"
        );
        assert_eq!(format_path(&[Key("a.b".into()), Index(2)]), "[\"a.b\"][2]");
        assert_eq!(format_path(&[]), "(the whole reply)");
    }
}
