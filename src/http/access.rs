//! Who may connect over HTTP (spec HTTP-003..HTTP-005): the `Host` and
//! `Origin` a request names, checked against an allowlist against DNS
//! rebinding, and the bearer token a non-loopback server requires. No I/O:
//! the door asks, and answers what this says.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::path::Path;

use http::{HeaderMap, StatusCode, header};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::echo::excerpt;
use crate::limits::MIN_HTTP_TOKEN_BYTES;

/// The variable a bearer token may come from (HTTP-005).
pub const TOKEN_VAR: &str = "SKILL_MCP_HTTP_TOKEN";

/// A request refused before it reaches MCP: its HTTP status and a body
/// that says which header and what to do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

/// The allowlist and the token of one server.
pub(crate) struct Access {
    /// Host names (lowercase, IPv6 without brackets) a request may name.
    hosts: Vec<String>,
    /// The token's SHA-256: comparing digests in constant time leaks
    /// neither the token's bytes nor its length.
    token: Option<[u8; 32]>,
}

impl Access {
    /// Loopback names and the bound address (unless it is a wildcard),
    /// plus the names the owner added (`--http-allow-host`).
    pub(crate) fn new(bound: SocketAddr, extra: &[String], token: Option<&str>) -> Access {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        if !bound.ip().is_unspecified() {
            hosts.push(bound.ip().to_string());
        }
        hosts.extend(extra.iter().map(|h| normalize(h)));
        let mut seen = std::collections::HashSet::new();
        hosts.retain(|h| seen.insert(h.clone()));
        Access {
            hosts,
            token: token.map(digest),
        }
    }

    /// The names a request may give as its `Host`, for the log.
    pub(crate) fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Checks one request's headers: Host and Origin first (a browser
    /// tricked by DNS rebinding sends no token anyway), then the token.
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<(), Refused> {
        self.check_host(headers)?;
        self.check_origin(headers)?;
        self.check_token(headers)
    }

    fn allowed(&self, host: &str) -> bool {
        self.hosts.iter().any(|h| h == host)
    }

    fn check_host(&self, headers: &HeaderMap) -> Result<(), Refused> {
        // RFC 9112 §3.2: a request with more than one Host is refused (400);
        // reading only the first would let a second name slip past.
        if headers.get_all(header::HOST).iter().count() > 1 {
            return Err(Refused {
                status: StatusCode::BAD_REQUEST,
                message: "HTTP-003: the request has more than one Host header; send exactly one"
                    .to_owned(),
            });
        }
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<http::uri::Authority>().ok());
        match host {
            Some(a) if self.allowed(&normalize(a.host())) => Ok(()),
            Some(a) => Err(forbidden(format!(
                "HTTP-003: the Host header names {}, which this server does not answer to (it answers to {}). \
                 A page on another site can reach a local server through DNS rebinding, so only these names \
                 are served; if this name is yours, start the server with --http-allow-host {}",
                excerpt(a.host()),
                self.hosts.join(", "),
                excerpt(&normalize(a.host()))
            ))),
            None => Err(forbidden(
                "HTTP-003: the request has no readable Host header; send the host you connected to (for \
                 example Host: 127.0.0.1:8080)"
                    .to_owned(),
            )),
        }
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), Refused> {
        // A client that is no browser sends no Origin, and is not the
        // one DNS rebinding turns against the server.
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let host = origin
            .to_str()
            .ok()
            .and_then(|o| o.parse::<http::Uri>().ok())
            .filter(|u| matches!(u.scheme_str(), Some("http" | "https")))
            .and_then(|u| u.host().map(normalize));
        match host {
            Some(h) if self.allowed(&h) => Ok(()),
            _ => Err(forbidden(format!(
                "HTTP-003: the Origin header {} is not a page of this server's own hosts ({}); a browser page \
                 from another site may not call it. If that page is yours, start the server with \
                 --http-allow-host and its host name",
                excerpt(&String::from_utf8_lossy(origin.as_bytes())),
                self.hosts.join(", ")
            ))),
        }
    }

    fn check_token(&self, headers: &HeaderMap) -> Result<(), Refused> {
        let Some(want) = &self.token else {
            return Ok(());
        };
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, rest) = v.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
            });
        let Some(given) = given else {
            return Err(unauthorized(
                "HTTP-005: this server requires a bearer token: send Authorization: Bearer <token>, the \
                 token its owner set (--http-token-file or SKILL_MCP_HTTP_TOKEN)",
            ));
        };
        if bool::from(digest(given).ct_eq(want)) {
            Ok(())
        } else {
            Err(unauthorized(
                "HTTP-005: the bearer token is not this server's; send the token its owner set \
                 (--http-token-file or SKILL_MCP_HTTP_TOKEN)",
            ))
        }
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn normalize(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

fn forbidden(message: String) -> Refused {
    Refused {
        status: StatusCode::FORBIDDEN,
        message,
    }
}

fn unauthorized(message: &str) -> Refused {
    Refused {
        status: StatusCode::UNAUTHORIZED,
        message: message.to_owned(),
    }
}

/// The bearer token, from `--http-token-file` or [`TOKEN_VAR`] (HTTP-005):
/// `None` when neither is given; an error, said whole, when both are, the
/// file cannot be read, or the token is shorter than
/// [`MIN_HTTP_TOKEN_BYTES`]. A trailing newline in the file is not part of
/// the token.
pub fn token(file: Option<&Path>, var: Option<&OsStr>) -> Result<Option<String>, String> {
    let text = match (file, var) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => {
            return Err(format!(
                "HTTP-005: a token is given both by --http-token-file and by {TOKEN_VAR}; give one"
            ));
        }
        (Some(path), None) => std::fs::read_to_string(path).map_err(|e| {
            format!(
                "HTTP-005: cannot read the token file {}: {e}; give a readable file holding the token",
                path.display()
            )
        })?,
        (None, Some(v)) => v
            .to_str()
            .ok_or_else(|| format!("HTTP-005: {TOKEN_VAR} is not UTF-8; set it to the token"))?
            .to_owned(),
    };
    // The first line: what follows (a comment, a line an editor added) is
    // not the token; a trailing newline or CR is not part of it.
    let token = text.lines().next().unwrap_or("").trim_end_matches('\r');
    // Printable ASCII only: a header carries nothing else as a token, so a
    // byte-order mark or an accented letter would start a server no client
    // could ever authenticate to.
    if token.len() < MIN_HTTP_TOKEN_BYTES || !token.bytes().all(|b| b.is_ascii_graphic()) {
        let odd = token
            .chars()
            .find(|c| !c.is_ascii_graphic())
            .map(|c| format!("; it holds U+{:04X}", u32::from(c)))
            .unwrap_or_default();
        return Err(format!(
            "HTTP-005: the bearer token (the first line of the file) must be at least {MIN_HTTP_TOKEN_BYTES} \
             printable ASCII characters with no spaces (this one is {} bytes{odd}); make one with \
             `openssl rand -hex 32`",
            token.len()
        ));
    }
    Ok(Some(token.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().expect("a header value"));
        }
        h
    }

    fn loopback() -> Access {
        Access::new("127.0.0.1:8080".parse().expect("addr"), &[], None)
    }

    #[test]
    fn loopback_names_pass_and_others_are_forbidden() {
        let a = loopback();
        for host in ["127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]:8080"] {
            assert_eq!(a.check(&headers(&[("host", host)])), Ok(()), "{host}");
        }
        let refused = a.check(&headers(&[("host", "evil.example:8080")]));
        assert!(
            matches!(&refused, Err(r) if r.status == StatusCode::FORBIDDEN && r.message.contains("Host")),
            "{refused:?}"
        );
        assert!(a.check(&HeaderMap::new()).is_err());
    }

    #[test]
    fn an_origin_must_be_one_of_the_hosts() {
        let a = Access::new(
            "0.0.0.0:80".parse().expect("addr"),
            &["Skills.Example".into()],
            None,
        );
        let ok = [
            ("host", "skills.example"),
            ("origin", "https://skills.example"),
        ];
        assert_eq!(a.check(&headers(&ok)), Ok(()));
        for origin in [
            "https://evil.example",
            "null",
            "file:///x",
            "skills.example",
        ] {
            let r = a.check(&headers(&[("host", "skills.example"), ("origin", origin)]));
            assert!(
                matches!(&r, Err(r) if r.message.contains("Origin")),
                "{origin}: {r:?}"
            );
        }
    }

    #[test]
    fn the_token_is_required_and_compared() {
        let a = Access::new(
            "127.0.0.1:1".parse().expect("addr"),
            &[],
            Some("0123456789abcdef"),
        );
        let host = ("host", "127.0.0.1");
        for bad in [
            vec![host],
            vec![host, ("authorization", "Bearer 0123456789abcdeX")],
        ] {
            let r = a.check(&headers(&bad));
            assert!(
                matches!(&r, Err(r) if r.status == StatusCode::UNAUTHORIZED),
                "{r:?}"
            );
        }
        let good = [host, ("authorization", "bearer 0123456789abcdef")];
        assert_eq!(a.check(&headers(&good)), Ok(()));
    }

    #[test]
    fn a_token_is_read_from_one_place_and_must_be_long() {
        assert_eq!(token(None, None), Ok(None));
        let v = OsStr::new("0123456789abcdef");
        assert_eq!(
            token(None, Some(v)),
            Ok(Some(v.to_str().unwrap_or("").into()))
        );
        assert!(token(None, Some(OsStr::new("short"))).is_err());
        assert!(token(Some(Path::new("/nonexistent")), Some(v)).is_err());
        assert!(token(Some(Path::new("/nonexistent/token")), None).is_err());
    }
}
