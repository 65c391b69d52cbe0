//! URIs as RFC 3986 reads them (spec/sep-2640.md, reading R3): the
//! syntax-based normalization of §6.2.2 that says when two spellings name
//! the same resource, and the percent-decoding that turns a skill's URI
//! into the fixture path it names.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// RFC 3986 §2.3: the characters a URI never needs to escape.
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Every `%XX` escape decoded (a malformed one stays as written); bytes
/// that are not UTF-8 become U+FFFD.
pub fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// Every byte but RFC 3986 §2.3's unreserved characters.
const RESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// One path segment as a URI writes it: unreserved characters as they
/// are, every other byte escaped (upper-case hex).
pub fn encode_segment(s: &str) -> String {
    utf8_percent_encode(s, RESERVED).to_string()
}

/// A `/`-separated path as URI path segments, each escaped.
pub fn encode_path(path: &str) -> String {
    path.split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

/// Escapes normalized (§6.2.2.1, §6.2.2.2): an escaped unreserved
/// character is decoded, every other escape written in upper case.
fn normalize_escapes(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex_value),
                b.get(i + 2).copied().and_then(hex_value),
            )
        {
            let v = h * 16 + l;
            if unreserved(v) {
                out.push(v as char);
            } else {
                out.push_str(&format!("%{v:02X}"));
            }
            i += 3;
            continue;
        }
        // Not an escape: the character as it is (whole, if not ASCII).
        let ch_len = s[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&s[i..i + ch_len]);
        i += ch_len;
    }
    out
}

/// RFC 3986 §5.2.4, `remove_dot_segments`.
fn remove_dot_segments(path: &str) -> String {
    let mut input = path.to_string();
    let mut output = String::new();
    while !input.is_empty() {
        if let Some(rest) = input.strip_prefix("../") {
            input = rest.to_string();
        } else if let Some(rest) = input.strip_prefix("./") {
            input = rest.to_string();
        } else if input.starts_with("/./") {
            input.replace_range(..3, "/");
        } else if input == "/." {
            input = "/".to_string();
        } else if input.starts_with("/../") || input == "/.." {
            if input == "/.." {
                input = "/".to_string();
            } else {
                input.replace_range(..4, "/");
            }
            match output.rfind('/') {
                Some(at) => output.truncate(at),
                None => output.clear(),
            }
        } else if input == "." || input == ".." {
            input.clear();
        } else {
            let start = usize::from(input.starts_with('/'));
            let end = input[start..]
                .find('/')
                .map_or(input.len(), |at| at + start);
            output.push_str(&input[..end]);
            input.replace_range(..end, "");
        }
    }
    output
}

/// The syntax-normal form of `uri` (RFC 3986 §6.2.2): scheme and
/// authority in lower case, escapes normalized, dot-segments removed.
/// Two URIs with the same normal form name the same resource; a text that
/// is not `scheme://…` only has its escapes normalized.
pub fn normalize(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return normalize_escapes(uri);
    };
    let valid_scheme = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !valid_scheme {
        return normalize_escapes(uri);
    }
    let end_auth = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, after) = rest.split_at(end_auth);
    let end_path = after.find(['?', '#']).unwrap_or(after.len());
    let (path, tail) = after.split_at(end_path);
    format!(
        "{}://{}{}{}",
        scheme.to_ascii_lowercase(),
        normalize_escapes(authority).to_ascii_lowercase(),
        remove_dot_segments(&normalize_escapes(path)),
        normalize_escapes(tail)
    )
}

/// The decoded segments after `scheme://`: the authority, then each path
/// segment; None when `uri` has no `://`.
pub fn segments(uri: &str) -> Option<Vec<String>> {
    let (_, rest) = uri.split_once("://")?;
    Some(rest.split('/').map(decode).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_3986_s_own_examples_normalize_alike() {
        // §6.2.2: "example://a/b/c/%7Bfoo%7D" and "eXAMPLE://a/./b/../b/%63/%7bfoo%7d".
        assert_eq!(
            normalize("eXAMPLE://a/./b/../b/%63/%7bfoo%7d"),
            normalize("example://a/b/c/%7Bfoo%7D")
        );
        assert_eq!(
            normalize("example://a/b/c/%7Bfoo%7D"),
            "example://a/b/c/%7Bfoo%7D"
        );
        // §5.2.4's examples.
        assert_eq!(remove_dot_segments("/a/b/c/./../../g"), "/a/g");
        assert_eq!(remove_dot_segments("mid/content=5/../6"), "mid/6");
    }

    #[test]
    fn what_a_skill_uri_may_be_spelt_as_and_what_it_may_not() {
        let file = normalize("skill://alpha/refs/guide.md");
        // The same resource: authority case, escaped unreserved
        // characters, dot-segments that stay inside.
        for same in [
            "SKILL://Alpha/refs/guide.md",
            "skill://alpha/%72efs/guide.md",
            "skill://alpha/refs/./guide.md",
            "skill://alpha/x/../refs/guide.md",
        ] {
            assert_eq!(normalize(same), file, "{same}");
        }
        // Another resource: path case, an escaped slash, a NUL, a
        // trailing slash.
        for other in [
            "skill://alpha/REFS/guide.md",
            "skill://alpha/refs%2Fguide.md",
            "skill://alpha/refs/guide.md%00",
            "skill://alpha/refs/guide.md/",
        ] {
            assert_ne!(normalize(other), file, "{other}");
        }
        // Dot-segments never climb above the authority.
        assert_eq!(
            normalize("skill://alpha/../../secret.txt"),
            "skill://alpha/secret.txt"
        );
        assert_eq!(
            normalize("skill://alpha/%2e%2e/%2E%2E/secret.txt"),
            "skill://alpha/secret.txt"
        );
    }

    #[test]
    fn decoding_and_encoding_segments() {
        assert_eq!(decode("a%20b%2Fc%zz%"), "a b/c%zz%");
        assert_eq!(decode("%C3%BC"), "ü");
        assert_eq!(encode_segment("a b/ü"), "a%20b%2F%C3%BC");
        assert_eq!(encode_path("x y/z"), "x%20y/z");
        assert_eq!(
            segments("skill://acme/billing/refunds").unwrap(),
            ["acme", "billing", "refunds"]
        );
        assert_eq!(segments("skill://my%20skill").unwrap(), ["my skill"]);
        assert!(segments("nope").is_none());
    }
}
