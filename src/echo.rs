//! What a reply may quote of what the client sent (spec HARD-005): names,
//! paths, URIs, cursors, script names, method names. The server bounds
//! what it reads; this bounds what it says. A client string short enough
//! is quoted whole, exactly as `{:?}` writes it; a longer one is cut on a
//! character boundary and the reply says how many bytes were left out, so
//! a 10 MiB argument costs a refusal of a few hundred bytes, not 10 MiB.

use std::borrow::Cow;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Most bytes of a client string a reply quotes, counted as written
/// (Debug-escaped). A couple of hundred bytes shows any name or path a
/// client means to send — served skill names are at most 64 bytes — and
/// keeps even a reply quoting two of them, JSON-escaped twice (a tool
/// result's `structuredContent` and its text block), far under 4 KiB.
pub(crate) const EXCERPT_BYTES: usize = 200;

/// The longest prefix of `s` whose Debug-escaped form fits in
/// [`EXCERPT_BYTES`], cut on a character boundary. Only the prefix is
/// looked at, so the cost does not grow with `s`.
fn head(s: &str) -> &str {
    let mut width = 0;
    for (i, c) in s.char_indices() {
        width += c.escape_debug().map(char::len_utf8).sum::<usize>();
        if width > EXCERPT_BYTES {
            return &s[..i];
        }
    }
    s
}

/// `s` as a message quotes it: `"s"` (as `{:?}` writes it) when it fits,
/// else its first characters, quoted, then `… (N more bytes)` for what was
/// left out.
pub fn excerpt(s: &str) -> String {
    let h = head(s);
    if h.len() == s.len() {
        format!("{s:?}")
    } else {
        format!("{h:?}… ({} more bytes)", s.len() - h.len())
    }
}

/// `s` as a reply's field carries it, unquoted: `s` itself when it fits,
/// else its first characters then `… (N more bytes)`. For a field that
/// echoes what was asked (a refused slot's `path`) and for a string handed
/// to a library whose message quotes it (a tool argument of the wrong type).
pub(crate) fn shorten(s: &str) -> Cow<'_, str> {
    let h = head(s);
    if h.len() == s.len() {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(format!("{h}… ({} more bytes)", s.len() - h.len()))
    }
}

/// `v` with every string and key longer than an excerpt [`shorten`]ed.
fn shortened(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(shorten(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(shortened).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (shorten(k).into_owned(), shortened(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Why a request's `_meta.progressToken` cannot be used, if it cannot
/// (spec RUN-026). Every progress notification repeats the token whole, a
/// run sends two a second, so a token is held to the bound a request id is
/// (HARD-005, [`EXCERPT_BYTES`]): a string of at most that many bytes, or
/// a whole number a notification can carry exactly. Anything else is
/// refused before any work, never echoed and never silently dropped.
pub(crate) fn progress_token_refusal(token: &Value) -> Option<String> {
    let what = match token {
        Value::String(s) if s.len() <= EXCERPT_BYTES => return None,
        Value::Number(n) if n.as_i64().is_some() => return None,
        Value::String(s) => format!("a string of {} bytes", s.len()),
        Value::Number(_) => "a number not written as an integer from -2^63 to 2^63-1 (a fraction, an exponent or a trailing .0 cannot be repeated exactly)".to_owned(),
        Value::Null => "null".to_owned(),
        Value::Bool(_) => "a boolean".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    };
    Some(format!(
        "_meta.progressToken is {what}; this server takes a string of at most {EXCERPT_BYTES} bytes or a whole \
         number, because every progress notification repeats the token (RUN-026). Nothing was started: send \
         the call again with a shorter token, or none."
    ))
}

/// Tool arguments of the shape `T`, decoded so that a refusal quotes no
/// argument whole. serde words a wrong type with the value in it (`invalid
/// type: string "…", expected a boolean`), so an `args` or a `confirm` of
/// 10 MiB would come back whole; here a failed decoding is decoded again
/// from a copy whose long strings are [`shorten`]ed — the same shape, so
/// the same verdict in the same words, quoting only excerpts. The schema
/// is `T`'s own.
#[derive(Debug)]
pub(crate) struct Args<T>(pub T);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Args<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        T::deserialize(&v).map(Args).map_err(|e| {
            D::Error::custom(match T::deserialize(&shortened(&v)) {
                Err(bounded) => bounded.to_string(),
                // Only a string's length changed, and no argument shape
                // here looks at one; should one ever, the words are cut.
                Ok(_) => shorten(&e.to_string()).into_owned(),
            })
        })
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Args<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// A character a terminal or log viewer would act on rather than show: a
/// control (a line break, ESC, CSI), or an invisible format character —
/// bidirectional overrides and isolates, zero-width characters, the BOM,
/// line and paragraph separators, tag characters — that reorders, breaks
/// or hides the rest of the line ("Trojan Source"). The server's log
/// (SRV-010) escapes them and `check` (CHECK-006) neutralizes them.
pub(crate) fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00ad}' | '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            // Line and paragraph separators: a line break to any
            // Unicode-aware viewer.
            | '\u{2028}' | '\u{2029}'
            // Tag characters: invisible, and read as ASCII by a model
            // ("ASCII smuggling").
            | '\u{e0000}'..='\u{e007f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_are_quoted_whole_as_debug_writes_them() {
        for s in [
            "",
            "pdf",
            "../etc/passwd",
            "a \"q\" b\n",
            "名前",
            &"x".repeat(EXCERPT_BYTES),
        ] {
            assert_eq!(excerpt(s), format!("{s:?}"));
            assert_eq!(shorten(s), s);
        }
    }

    #[test]
    fn long_strings_are_cut_and_say_how_much_was_left_out() {
        let big = "x".repeat(10 * 1024 * 1024);
        let e = excerpt(&big);
        let kept = "x".repeat(EXCERPT_BYTES);
        let rest = big.len() - EXCERPT_BYTES;
        assert_eq!(e, format!("\"{kept}\"… ({rest} more bytes)"));
        assert_eq!(shorten(&big), format!("{kept}… ({rest} more bytes)"));
    }

    #[test]
    fn the_cut_is_on_a_character_boundary_and_counts_escapes() {
        // Four-byte characters, and control characters Debug writes as
        // six or more: the quote stays within the bound either way.
        for unit in ["😀", "\u{1}", "\"", "é"] {
            let s = unit.repeat(100_000);
            let e = excerpt(&s);
            let quoted = &e[..e.rfind('…').unwrap()];
            assert!(
                quoted.len() <= EXCERPT_BYTES + 2,
                "{unit:?}: {}",
                quoted.len()
            );
            let h = head(&s);
            assert!(s.is_char_boundary(h.len()) && !h.is_empty());
            assert!(e.ends_with(&format!("({} more bytes)", s.len() - h.len())));
        }
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Shape {
        name: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        confirm: Option<bool>,
    }

    #[test]
    fn a_wrong_type_is_refused_in_the_same_words_quoting_an_excerpt() {
        let big = "x".repeat(10 * 1024 * 1024);
        let decode = |v: Value| serde_json::from_value::<Args<Shape>>(v).map(|a| a.0);
        for (field, expected) in [("args", "a sequence"), ("confirm", "a boolean")] {
            let v = serde_json::json!({"name": "s", field: big});
            let e = decode(v).unwrap_err().to_string();
            assert!(e.len() < 400, "{field}: {} bytes", e.len());
            assert!(e.starts_with("invalid type: string"), "{e}");
            assert!(
                e.contains(&format!("({} more bytes)", big.len() - EXCERPT_BYTES)),
                "{e}"
            );
            assert!(e.contains(expected), "{e}");
        }
        // Short values: exactly serde's own words.
        let v = serde_json::json!({"name": "s", "confirm": "yes"});
        let plain = serde_json::from_value::<Shape>(v.clone())
            .unwrap_err()
            .to_string();
        assert_eq!(decode(v).unwrap_err().to_string(), plain);
        let ok = decode(serde_json::json!({"name": big, "args": ["a"]})).unwrap();
        assert_eq!(
            (ok.name.len(), ok.args, ok.confirm),
            (big.len(), vec!["a".to_owned()], None)
        );
    }

    #[test]
    fn a_progress_token_is_held_to_the_id_bound() {
        use serde_json::json;
        for ok in [
            json!("t"),
            json!("x".repeat(EXCERPT_BYTES)),
            json!(7),
            json!(i64::MIN),
        ] {
            assert_eq!(progress_token_refusal(&ok), None, "{ok}");
        }
        let long = progress_token_refusal(&json!("x".repeat(1 << 20))).unwrap();
        assert!(
            long.contains("1048576 bytes") && long.contains("RUN-026"),
            "{long}"
        );
        assert!(long.len() < 400, "the refusal quotes nothing of the token");
        for bad in [
            json!(1.5),
            json!(u64::MAX),
            json!(null),
            json!(true),
            json!([1]),
            json!({}),
        ] {
            assert!(progress_token_refusal(&bad).is_some(), "{bad}");
        }
    }
}
