//! Who may connect over HTTP (spec HTTP-003..HTTP-005, HTTP-017): the
//! `Host` and `Origin` a request names, checked against an allowlist
//! against DNS rebinding, the browser pages the owner named, and the
//! bearer token a non-loopback server requires. No I/O but reading the
//! token at start: the door asks, and answers what this says.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::path::Path;

use http::{HeaderMap, StatusCode, Uri, header, request::Parts};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::echo::excerpt;
use crate::limits::{MAX_HTTP_TOKEN_BYTES, MAX_HTTP_TOKEN_FILE_BYTES, MIN_HTTP_TOKEN_BYTES};

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
    /// Browser origins the owner named (`--http-allow-origin`), as
    /// [`origin`] writes them: their pages may call the server, and get
    /// CORS answers (HTTP-017).
    origins: Vec<String>,
    /// The token's SHA-256: comparing digests in constant time leaks
    /// neither the token's bytes nor its length.
    token: Option<[u8; 32]>,
}

impl Access {
    /// Loopback names and the bound address (unless it is a wildcard),
    /// plus the names the owner added (`--http-allow-host`).
    pub(crate) fn new(
        bound: SocketAddr,
        extra: &[String],
        origins: &[String],
        token: Option<&str>,
    ) -> Access {
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
        let mut origins: Vec<String> = origins.iter().filter_map(|o| origin(o)).collect();
        origins.dedup();
        Access {
            hosts,
            origins,
            token: token.map(digest),
        }
    }

    /// The origins the owner named, for the CORS layer (HTTP-017).
    pub(crate) fn origins(&self) -> &[String] {
        &self.origins
    }

    /// Whether the request comes from a page of an origin the owner named:
    /// only those get CORS answers (HTTP-017).
    pub(crate) fn sent_from_a_named_origin(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::ORIGIN)
            .and_then(|o| o.to_str().ok())
            .and_then(origin)
            .is_some_and(|o| self.origins.contains(&o))
    }

    /// The names a request may give as its `Host`, for the log.
    pub(crate) fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Checks one request's headers: Host and Origin first (a browser
    /// tricked by DNS rebinding sends no token anyway), then the token.
    #[cfg(test)]
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<(), Refused> {
        self.check_host(headers)?;
        self.check_origin(headers)?;
        self.check_token(headers)
    }

    /// Where a request comes from and which host it names: the target's
    /// authority when it is in absolute form (RFC 9112 §3.2.2), the `Host`
    /// header, the `Origin`, and a browser's `Sec-Fetch-Site`. Checked
    /// before CORS and the token: a browser's preflight carries no token.
    pub(crate) fn check_place(&self, parts: &Parts) -> Result<(), Refused> {
        self.check_host(&parts.headers)?;
        self.check_target(&parts.uri, &parts.headers)?;
        self.check_origin(&parts.headers)?;
        check_fetch_site(&parts.headers)
    }

    /// An absolute-form target (`POST http://host/mcp`) names the host a
    /// server must use; one naming another host than `Host`, or a host
    /// this server does not answer to, is refused (HTTP-014).
    fn check_target(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refused> {
        let Some(target) = uri.authority() else {
            return Ok(());
        };
        let named = normalize(target.host());
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<http::uri::Authority>().ok());
        let same =
            host.is_some_and(|h| normalize(h.host()) == named && h.port_u16() == target.port_u16());
        if !same || !self.allowed(&named) || target.as_str().contains('@') {
            return Err(Refused {
                status: StatusCode::BAD_REQUEST,
                message: format!(
                    "HTTP-014: the request target names the host {}, which is not the Host header's (or not \
                     one this server answers to); send the path alone (POST /mcp) with Host naming this server",
                    excerpt(target.as_str())
                ),
            });
        }
        Ok(())
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
        // No browser sends userinfo in an Origin (`http://evil@localhost`):
        // one that does is no page's.
        let host = origin
            .to_str()
            .ok()
            .filter(|o| !o.contains('@'))
            .and_then(|o| o.parse::<http::Uri>().ok())
            .filter(|u| matches!(u.scheme_str(), Some("http" | "https")))
            .and_then(|u| u.host().map(normalize));
        if self.sent_from_a_named_origin(headers) {
            return Ok(());
        }
        match host {
            Some(h) if self.allowed(&h) => Ok(()),
            _ => Err(forbidden(format!(
                "HTTP-003: the Origin header {} is not a page of this server's own hosts ({}); a browser page \
                 from another site may not call it. If that page is yours, start the server with \
                 --http-allow-origin and that origin (scheme://host:port)",
                excerpt(&String::from_utf8_lossy(origin.as_bytes())),
                self.hosts.join(", ")
            ))),
        }
    }

    /// The bearer token (HTTP-005), checked after the place and after a
    /// CORS preflight is answered.
    pub(crate) fn check_token(&self, headers: &HeaderMap) -> Result<(), Refused> {
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

/// A browser says a request is `cross-site` in `Sec-Fetch-Site`; such a
/// request without an `Origin` (a navigation, a form, an image) is no MCP
/// client's and is refused. With an `Origin`, HTTP-003 and HTTP-017 decide;
/// a client that is no browser sends neither (HTTP-014).
fn check_fetch_site(headers: &HeaderMap) -> Result<(), Refused> {
    let cross = headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"));
    if cross && !headers.contains_key(header::ORIGIN) {
        return Err(forbidden(
            "HTTP-014: a browser marked this request cross-site (Sec-Fetch-Site) and it names no Origin: a \
             page of another site may not call this server. A page of yours calls it with fetch, which \
             sends its Origin; start the server with --http-allow-origin and that origin"
                .to_owned(),
        ));
    }
    Ok(())
}

/// An origin as a browser sends it, written one way: `scheme://host` with
/// the port when it is not the scheme's default, lowercase; `None` for
/// anything but an http or https origin with no path (HTTP-017).
pub(crate) fn origin(text: &str) -> Option<String> {
    let uri = text.trim().parse::<Uri>().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let authority = uri.authority()?;
    // A port past 65535 reads as no port at all (`port_u16` is `None`),
    // which would make it the scheme's default: no such origin exists.
    let written_port = authority
        .as_str()
        .rsplit_once(':')
        .filter(|(_, p)| !p.contains(']'))
        .map(|(_, p)| p);
    if written_port.is_some_and(|p| p.parse::<u16>().is_err()) {
        return None;
    }
    if authority.as_str().contains('@')
        || uri
            .path_and_query()
            .is_some_and(|p| !matches!(p.as_str(), "" | "/"))
    {
        return None;
    }
    let host = authority.host().to_ascii_lowercase();
    Some(match authority.port_u16() {
        Some(p) if p != default => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    })
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// A host name as compared: without IPv6 brackets, in lower case, and
/// without the trailing dot of its absolute form (`localhost.` is
/// `localhost`, RFC 1034 §3.1, as a resolver answers it).
fn normalize(host: &str) -> String {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.strip_suffix('.').unwrap_or(bare).to_ascii_lowercase()
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
/// `None` when neither is given; an error, said whole and naming where the
/// token came from, when both are, the file cannot be read or is no
/// regular file, or the token is not one a client can send. A trailing
/// newline in the file is not part of the token.
pub fn token(file: Option<&Path>, var: Option<&OsStr>) -> Result<Option<String>, String> {
    let (text, from) = match (file, var) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => {
            return Err(format!(
                "HTTP-005: a token is given both by --http-token-file and by {TOKEN_VAR}; give one"
            ));
        }
        (Some(path), None) => (
            read_token_file(path)?,
            format!("the first line of the token file {}", path.display()),
        ),
        (None, Some(v)) => {
            let v = v.to_str().ok_or_else(|| {
                format!("HTTP-005: {TOKEN_VAR} is not UTF-8; set it to the token")
            })?;
            // A file's first line is the token by decision; a variable
            // holding lines is a mistake (a file's text pasted in whole).
            if v.trim_end_matches(['\n', '\r']).contains(['\n', '\r']) {
                return Err(format!(
                    "HTTP-005: {TOKEN_VAR} holds more than one line; set it to the token alone (or give the file \
                     with --http-token-file, whose first line is the token)"
                ));
            }
            (v.to_owned(), format!("the bearer token in {TOKEN_VAR}"))
        }
    };
    // The first line: what follows (a comment, a line an editor added) is
    // not the token; a trailing newline or CR is not part of it.
    let token = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if token.len() > MAX_HTTP_TOKEN_BYTES {
        return Err(format!(
            "HTTP-005: {from} is {} bytes long, past the {MAX_HTTP_TOKEN_BYTES} a client can send as a \
             bearer token; make one with `openssl rand -hex 32`",
            token.len()
        ));
    }
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
            "HTTP-005: {from} must be at least {MIN_HTTP_TOKEN_BYTES} printable ASCII characters with no \
             spaces (it is {} bytes{odd}); make one with `openssl rand -hex 32`",
            token.len()
        ));
    }
    Ok(Some(token.to_owned()))
}

/// At most [`MAX_HTTP_TOKEN_FILE_BYTES`] of a regular file. Opened
/// `O_NONBLOCK` and checked with `fstat` before a byte is read, as the
/// model loader opens its files: a FIFO cannot hang the start, a device
/// (`/dev/zero`) is refused rather than read until memory runs out, and a
/// directory says so.
fn read_token_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |e: &dyn std::fmt::Display| {
        format!(
            "HTTP-005: cannot read the token file {}: {e}; give a readable file holding the token",
            path.display()
        )
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(|e| cannot(&e))?;
    let meta = f.metadata().map_err(|e| cannot(&e))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(format!(
            "HTTP-005: the token file {} is {kind}; give a regular file whose first line is the token",
            path.display()
        ));
    }
    // A secret others can read is no secret: said, not refused (a file a
    // deployment mounts may carry modes it cannot set).
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        if mode & 0o044 != 0 {
            tracing::warn!(
                "HTTP-005: the token file {} is readable by other users (mode {:04o}); make it yours \
                 alone: chmod 600 {}",
                path.display(),
                mode & 0o7777,
                path.display()
            );
        }
    }
    let mut bytes = Vec::new();
    f.take(MAX_HTTP_TOKEN_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot(&e))?;
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or(&[]);
    // The first line is the token by decision; a second one that looks
    // like a token too is most often a mistake, said once at start.
    let more = bytes
        .split(|&b| b == b'\n')
        .skip(1)
        .map(|l| l.trim_ascii())
        .filter(|l| l.len() >= MIN_HTTP_TOKEN_BYTES && l.iter().all(u8::is_ascii_graphic))
        .count();
    if more > 0 {
        tracing::warn!(
            "HTTP-005: the token file {} has {more} more line{} after the first that could be a token; only \
             the first line is the token, so clients send that one",
            path.display(),
            if more == 1 { "" } else { "s" }
        );
    }
    if bytes.len() as u64 == MAX_HTTP_TOKEN_FILE_BYTES && first.len() == bytes.len() {
        return Err(format!(
            "HTTP-005: the first line of the token file {} is longer than {MAX_HTTP_TOKEN_FILE_BYTES} bytes, \
             past any token a client can send; put the token alone on the first line (`openssl rand -hex 32`)",
            path.display()
        ));
    }
    String::from_utf8(first.to_vec()).map_err(|_| {
        format!(
            "HTTP-005: the first line of the token file {} is not UTF-8 text; put the token there as \
             printable ASCII (`openssl rand -hex 32`)",
            path.display()
        )
    })
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
        Access::new("127.0.0.1:8080".parse().expect("addr"), &[], &[], None)
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
            &[],
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
