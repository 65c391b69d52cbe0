//! What a request's head must be before anything in it decides anything
//! (spec HTTP-006, HTTP-014, HTTP-016): one value for each header the door
//! decides on, a head no larger than [`MAX_HTTP_HEAD_BYTES`] however its
//! bytes arrived, a request target that names no other host, and a body in
//! no encoding but identity. No I/O: the door asks, and answers what this
//! says.

use http::{HeaderMap, Method, StatusCode, header, request::Parts};

use crate::echo::excerpt;
use crate::limits::MAX_HTTP_HEAD_BYTES;

/// Headers of which a request may carry one: each decides who may connect
/// or what is asked, so two would let the first and the last say different
/// things to different readers (HTTP-014). `Accept` and `Content-Encoding`
/// are lists, combined as RFC 9110 §5.3 says, and are not here.
pub(crate) const SINGLETONS: [&str; 10] = [
    "host",
    "origin",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "content-type",
    "last-event-id",
    "sec-fetch-site",
];

/// A request refused for its head: its status and what to do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

/// Checks a request's head, in the order a reader meets it.
pub(crate) fn screen(parts: &Parts) -> Result<(), Refused> {
    head_size(parts)?;
    one_value_each(&parts.headers)?;
    no_userinfo(&parts.headers)?;
    host_form(&parts.headers)?;
    chunked_only(&parts.headers)?;
    if parts.method == Method::POST {
        identity_only(&parts.headers)?;
    }
    Ok(())
}

/// `Host` is `host[:port]`: a name, an IPv4 address or a bracketed IPv6
/// one, and a port of at most five digits up to 65535 (RFC 9112 §3.2 says
/// 400 for an invalid one). `localhost:abc` or `[::1]x` read as a host by
/// one reader and as garbage by another (HTTP-014).
fn host_form(headers: &HeaderMap) -> Result<(), Refused> {
    let Some(v) = headers.get(header::HOST) else {
        return Ok(());
    };
    if well_formed_host(v.as_bytes()) {
        return Ok(());
    }
    Err(Refused {
        status: StatusCode::BAD_REQUEST,
        message: format!(
            "HTTP-014: the Host header {} is not a host and port; send the host you connected to, as \
             name:port (Host: 127.0.0.1:8080)",
            excerpt(&String::from_utf8_lossy(v.as_bytes()))
        ),
    })
}

fn well_formed_host(v: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(v) else {
        return false;
    };
    let (host_ok, port) = match s.strip_prefix('[') {
        Some(rest) => {
            let Some((ip, after)) = rest.split_once(']') else {
                return false;
            };
            let port = match after {
                "" => None,
                p => match p.strip_prefix(':') {
                    Some(p) => Some(p),
                    None => return false,
                },
            };
            (ip.parse::<std::net::Ipv6Addr>().is_ok(), port)
        }
        None => {
            let (host, port) = match s.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (s, None),
            };
            let ok = !host.is_empty()
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=".contains(&b));
            (ok, port)
        }
    };
    let port_ok = port.is_none_or(|p| {
        p.is_empty()
            || (p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok())
    });
    host_ok && port_ok
}

/// A transfer coding but `chunked` (`gzip, chunked`) is one this server
/// does not decode: 501, as RFC 9112 §6.1 says, never read as plain bytes
/// (HTTP-016, for the reason a content coding is refused).
fn chunked_only(headers: &HeaderMap) -> Result<(), Refused> {
    let other = headers
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .map(|c| c.trim_ascii())
        .find(|c| !c.is_empty() && !c.eq_ignore_ascii_case(b"chunked"));
    if let Some(coding) = other {
        return Err(Refused {
            status: StatusCode::NOT_IMPLEMENTED,
            message: format!(
                "HTTP-016: the request body is in the {} transfer coding; this server decodes chunked only: \
                 send the JSON as it is, with Content-Length or chunked",
                excerpt(&String::from_utf8_lossy(coding))
            ),
        });
    }
    Ok(())
}

/// The head's size as it came, from what was parsed of it: hyper bounds
/// the buffer it reads into, but a head sent in one write can pass that
/// bound (HTTP-006), so the bound is applied again here to what was read.
fn head_size(parts: &Parts) -> Result<(), Refused> {
    // "METHOD TARGET HTTP/1.1\r\n", each "name: value\r\n", the last "\r\n".
    let line = parts.method.as_str().len() + parts.uri.to_string().len() + 12;
    let fields: usize = parts
        .headers
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    let size = line + fields + 2;
    if size > MAX_HTTP_HEAD_BYTES {
        return Err(Refused {
            status: StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            message: format!(
                "HTTP-006: the request's head is {size} bytes, over the {MAX_HTTP_HEAD_BYTES}-byte limit; no \
                 MCP request needs more: send fewer or shorter headers"
            ),
        });
    }
    Ok(())
}

fn one_value_each(headers: &HeaderMap) -> Result<(), Refused> {
    for name in SINGLETONS {
        let n = headers.get_all(name).iter().count();
        if n > 1 {
            return Err(Refused {
                status: StatusCode::BAD_REQUEST,
                message: format!(
                    "HTTP-014: the request carries {n} {} headers; this server decides on that header and \
                     reads exactly one: send it once",
                    canonical(name)
                ),
            });
        }
    }
    Ok(())
}

/// `Host: evil.test:80@localhost` is a host with userinfo, which RFC 9110
/// §4.2.4 forbids: one reader takes `localhost`, another `evil.test`.
fn no_userinfo(headers: &HeaderMap) -> Result<(), Refused> {
    if let Some(host) = headers.get(header::HOST)
        && host.as_bytes().contains(&b'@')
    {
        return Err(Refused {
            status: StatusCode::BAD_REQUEST,
            message: format!(
                "HTTP-014: the Host header {} carries userinfo (an '@'), which a Host never does; send the \
                 host and port you connected to",
                excerpt(&String::from_utf8_lossy(host.as_bytes()))
            ),
        });
    }
    Ok(())
}

/// Every `Content-Encoding`, as one list: a body in any encoding but
/// identity is 415 and never parsed (HTTP-016). A gateway that decodes
/// bodies to inspect them would otherwise judge other bytes than the
/// server runs.
fn identity_only(headers: &HeaderMap) -> Result<(), Refused> {
    let coded = headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .map(|c| c.trim_ascii())
        .find(|c| !c.is_empty() && !c.eq_ignore_ascii_case(b"identity"));
    if let Some(coding) = coded {
        return Err(Refused {
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            message: format!(
                "HTTP-016: the request body is in the {} encoding; this server reads identity only: send \
                 the JSON as it is, without Content-Encoding",
                excerpt(&String::from_utf8_lossy(coding))
            ),
        });
    }
    Ok(())
}

/// A header's name as people write it, for a message.
fn canonical(name: &str) -> &'static str {
    match name {
        "host" => "Host",
        "origin" => "Origin",
        "authorization" => "Authorization",
        "mcp-session-id" => "Mcp-Session-Id",
        "mcp-protocol-version" => "MCP-Protocol-Version",
        "mcp-method" => "Mcp-Method",
        "mcp-name" => "Mcp-Name",
        "content-type" => "Content-Type",
        "last-event-id" => "Last-Event-ID",
        "sec-fetch-site" => "Sec-Fetch-Site",
        _ => "such",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(target: &str, pairs: &[(&str, &[u8])]) -> Parts {
        let mut b = http::Request::builder().method(Method::POST).uri(target);
        for (k, v) in pairs {
            b = b.header(
                *k,
                http::HeaderValue::from_bytes(v).unwrap_or_else(|e| panic!("{e}")),
            );
        }
        b.body(())
            .unwrap_or_else(|e| panic!("a request: {e}"))
            .into_parts()
            .0
    }

    #[test]
    fn each_singleton_given_twice_is_refused_whatever_the_case() {
        for name in SINGLETONS {
            let upper = name.to_ascii_uppercase();
            let p = parts("/mcp", &[(name, b"a"), (upper.as_str(), b"b")]);
            let r = screen(&p);
            assert!(
                matches!(&r, Err(r) if r.status == StatusCode::BAD_REQUEST && r.message.contains("HTTP-014")),
                "{name}: {r:?}"
            );
        }
    }

    #[test]
    fn lists_are_combined_and_judged() {
        let two_accepts = parts(
            "/mcp",
            &[
                ("accept", b"application/json"),
                ("accept", b"text/event-stream"),
            ],
        );
        assert_eq!(screen(&two_accepts), Ok(()));
        for codings in [
            &[&b"gzip"[..]][..],
            &[b"identity", b"br"],
            &[b"identity, GZIP"],
        ] {
            let pairs: Vec<(&str, &[u8])> =
                codings.iter().map(|c| ("content-encoding", *c)).collect();
            let r = screen(&parts("/mcp", &pairs));
            assert!(
                matches!(&r, Err(r) if r.status == StatusCode::UNSUPPORTED_MEDIA_TYPE),
                "{codings:?}: {r:?}"
            );
        }
        let identity = parts(
            "/mcp",
            &[("content-encoding", b"identity"), ("content-encoding", b"")],
        );
        assert_eq!(screen(&identity), Ok(()));
    }

    #[test]
    fn a_host_must_be_a_host_and_a_port() {
        for ok in [
            "localhost",
            "127.0.0.1:8080",
            "[::1]:8080",
            "[::1]",
            "devbox.example:1",
            "a:",
        ] {
            assert_eq!(
                screen(&parts("/mcp", &[("host", ok.as_bytes())])),
                Ok(()),
                "{ok}"
            );
        }
        for bad in [
            "localhost:abc",
            "localhost:-1",
            "[::1]x",
            "127.0.0.1:99999999999",
            "[nope]:1",
            ":80",
            "a b",
        ] {
            let r = screen(&parts("/mcp", &[("host", bad.as_bytes())]));
            assert!(
                matches!(&r, Err(r) if r.status == StatusCode::BAD_REQUEST),
                "{bad}: {r:?}"
            );
        }
    }

    #[test]
    fn a_transfer_coding_but_chunked_is_501() {
        let r = screen(&parts("/mcp", &[("transfer-encoding", b"gzip, chunked")]));
        assert!(
            matches!(&r, Err(r) if r.status == StatusCode::NOT_IMPLEMENTED),
            "{r:?}"
        );
        assert_eq!(
            screen(&parts("/mcp", &[("transfer-encoding", b"chunked")])),
            Ok(())
        );
    }

    #[test]
    fn a_host_with_userinfo_is_refused() {
        let r = screen(&parts("/mcp", &[("host", b"evil.test:80@localhost")]));
        assert!(
            matches!(&r, Err(r) if r.status == StatusCode::BAD_REQUEST),
            "{r:?}"
        );
    }

    #[test]
    fn a_head_over_the_limit_is_431_however_it_came() {
        let big = vec![b'a'; MAX_HTTP_HEAD_BYTES];
        let r = screen(&parts("/mcp", &[("x-filler", &big)]));
        assert!(
            matches!(&r, Err(r) if r.status == StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE),
            "{r:?}"
        );
        let fits = vec![b'a'; MAX_HTTP_HEAD_BYTES - 200];
        assert_eq!(screen(&parts("/mcp", &[("x-filler", &fits)])), Ok(()));
    }
}
