//! `skill://<name>/<path>` URIs (spec READ-010). Each path segment is
//! percent-encoded where it needs to be; a URI is decoded exactly once on
//! read, and the decoded path then passes the whole fence — which refuses
//! `%`, so an escape can never survive into a second decoding.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use crate::echo::excerpt;

/// The scheme prefix.
pub(crate) const PREFIX: &str = "skill://";

/// Everything but RFC 3986 unreserved characters is escaped in a segment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The URI of one bundled file.
pub(crate) fn for_file(skill: &str, path: &str) -> String {
    let mut uri = format!("{PREFIX}{skill}");
    for seg in path.split('/') {
        uri.push('/');
        uri.extend(utf8_percent_encode(seg, SEGMENT));
    }
    uri
}

/// Splits a URI into skill name and skill-relative path, decoding once,
/// segment by segment: an escaped `/` (`%2F`) is data inside a segment,
/// not a separator (RFC 3986 §2.2), and no file's segment holds a `/`, so
/// such a URI names no file and is refused here rather than read as the
/// path it would spell unescaped (READ-010; SEP-2640's manifest is every
/// file a skill serves). A refusal quotes no more of the URI than an
/// excerpt (HARD-005).
pub(crate) fn parse(uri: &str) -> Result<(String, String), String> {
    let rest = strip_scheme(uri)?;
    let (name, path) = rest
        .split_once('/')
        .filter(|(n, p)| !n.is_empty() && !p.is_empty())
        .ok_or_else(|| {
            format!(
                "{} does not name a skill and a path (expected skill://<name>/<path>)",
                excerpt(uri)
            )
        })?;
    Ok((decode_name(uri, name)?, decode_path(uri, path)?))
}

/// [`parse`] for `resources/directory/read` (SKX-004), by the same rules:
/// `skill://<name>` is the skill's own directory and `skill://<name>/<dir>`
/// one inside it; one trailing `/` names the same directory (a careful
/// user writes `skill://demo/` as readily as `skill://demo`). The path is
/// empty for the skill's own directory.
pub(crate) fn parse_dir(uri: &str) -> Result<(String, String), String> {
    let rest = strip_scheme(uri)?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
    if name.is_empty() {
        return Err(format!(
            "{} does not name a skill (expected skill://<name> or skill://<name>/<dir>)",
            excerpt(uri)
        ));
    }
    let path = if path.is_empty() {
        String::new()
    } else {
        decode_path(uri, path)?
    };
    Ok((decode_name(uri, name)?, path))
}

fn strip_scheme(uri: &str) -> Result<&str, String> {
    uri.strip_prefix(PREFIX).ok_or_else(|| {
        format!(
            "{} is not a skill:// URI (expected skill://<name>/<path>)",
            excerpt(uri)
        )
    })
}

fn decode(uri: &str, s: &str) -> Result<String, String> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| format!("{} decodes to bytes that are not UTF-8", excerpt(uri)))
}

fn decode_name(uri: &str, name: &str) -> Result<String, String> {
    let name = decode(uri, name)?;
    if name.contains('/') {
        return Err(format!(
            "{} escapes a `/` inside the skill's name (%2F), which names no skill (READ-010)",
            excerpt(uri)
        ));
    }
    Ok(name)
}

fn decode_path(uri: &str, path: &str) -> Result<String, String> {
    let mut decoded = String::with_capacity(path.len());
    for (i, seg) in path.split('/').enumerate() {
        let seg = decode(uri, seg)?;
        if seg.contains('/') {
            return Err(format!(
                "{} escapes a `/` inside a path segment (%2F), which names no file: a skill's files are \
                 addressed with a plain `/` between segments, as skills/list and resources/list give them (READ-010)",
                excerpt(uri)
            ));
        }
        if i > 0 {
            decoded.push('/');
        }
        decoded.push_str(&seg);
    }
    Ok(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        for p in [
            "SKILL.md",
            "a b/c#d?.md",
            "ünï/名前.txt",
            "x+y=z&w",
            "~tilde",
        ] {
            let uri = for_file("s", p);
            assert!(!uri[PREFIX.len()..].contains(' '), "{uri}");
            assert_eq!(parse(&uri).unwrap(), ("s".into(), p.into()));
        }
        assert_eq!(for_file("s", "a b/c.md"), "skill://s/a%20b/c.md");
    }

    #[test]
    fn decoding_happens_once() {
        assert_eq!(parse("skill://s/%252e%252e/x").unwrap().1, "%2e%2e/x");
        assert_eq!(parse("skill://s/%2e%2e/x").unwrap().1, "../x");
        assert!(parse("skill://s/%ff").is_err());
        assert!(parse("file:///etc/passwd").is_err());
        assert!(parse("skill://s").is_err());
        assert!(parse("skill:///x").is_err());
    }

    #[test]
    fn an_escaped_slash_is_no_separator() {
        for uri in [
            "skill://s/references%2Fguide.md",
            "skill://s/references%2fguide.md",
            "skill://s/a/b%2Fc/d.md",
            "skill://s%2Ft/x.md",
        ] {
            let why = parse(uri).unwrap_err();
            assert!(
                why.contains("%2F") && why.contains("READ-010"),
                "{uri}: {why}"
            );
        }
        // Decoded once: `%252F` is the three characters `%2F`, which the
        // fence refuses as a percent escape, never a slash.
        assert_eq!(parse("skill://s/a%252Fb").unwrap().1, "a%2Fb");
    }

    #[test]
    fn a_directory_uri_is_read_by_the_same_rules() {
        for (uri, name, dir) in [
            ("skill://demo", "demo", ""),
            ("skill://demo/", "demo", ""),
            ("skill://de%6Do", "demo", ""),
            ("skill://de%6Do/s%75b", "demo", "sub"),
            ("skill://demo/sub/", "demo", "sub"),
            ("skill://demo/a/b", "demo", "a/b"),
        ] {
            assert_eq!(parse_dir(uri).unwrap(), (name.into(), dir.into()), "{uri}");
        }
        for uri in [
            "skill://demo/sub%2Fx",
            "skill://demo%2Fsub",
            "skill://",
            "skill:///x",
            "file:///x",
        ] {
            assert!(parse_dir(uri).is_err(), "{uri}");
        }
        assert!(
            parse_dir("skill://demo/sub%2Fx")
                .unwrap_err()
                .contains("READ-010")
        );
    }
}
