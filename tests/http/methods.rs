//! The endpoint's methods (HTTP-001): what is not GET, POST or DELETE is
//! 405 in words, in every form a client may send it.
//!
//! A test marked FOUND says what an outside attack found when it was
//! written (figures from a debug build on a 2-core machine) and may fail
//! on the code it was written against: that is what it records; HELD
//! records what held. The helpers are tests/common/http.rs's.

use crate::common::http::*;
use std::io::Write;
use std::net::TcpStream;

/// Every refusal of the door names its rule and what to do (HTTP-001's
/// 404 names the endpoint; HTTP-014, HTTP-016 and the rest name theirs).
/// A careful user — or the operator reading a proxy's health check —
/// expects a request with a method the endpoint does not serve to be told
/// which methods it does serve, in words, as a wrong path is.
///
/// FOUND: `PUT`, `PATCH`, `TRACE`, `OPTIONS` (no `Origin`) and `HEAD` to
/// `/mcp` are 405 with the body "Method Not Allowed" (rmcp's; `HEAD` none),
/// naming no rule; only the `Allow: GET, POST, DELETE` header says what
/// to send. `CONNECT 127.0.0.1:PORT` is 404 "HTTP-001: nothing is served
/// at \"\"; the MCP endpoint is /mcp" — a path it never sent.
///
/// Issue 40: the door's fourth outside attack.
#[test]
fn a_method_the_endpoint_does_not_serve_is_told_in_words() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    for method in ["PUT", "PATCH", "TRACE", "OPTIONS", "DELETE-ME"] {
        let a = raw(
            port,
            format!(
                "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
                 Content-Length: 0\r\n\r\n"
            )
            .as_bytes(),
        );
        eprintln!("{method}: {} {:?}", a.status, a.body);
        assert_eq!(a.status, 405, "{method}: {a:?}");
        assert!(
            a.body.contains("HTTP-") && a.body.contains("POST"),
            "{method} /mcp is refused without naming the rule or the methods served: {:?}",
            a.body
        );
    }
    let a = raw(
        port,
        format!(
            "CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    eprintln!("CONNECT: {} {:?}", a.status, a.body);
    assert!(
        a.status == 405 || a.status == 400 || a.status == 501,
        "CONNECT is answered as a path: {a:?}"
    );
    assert!(
        !a.body.contains("at \"\""),
        "CONNECT's refusal names a path the client never sent: {:?}",
        a.body
    );
}

/// HELD: HTTP-001's 405 in every form a hostile or odd client sends, and
/// its place among the checks. Without a token: `HEAD` (the head only,
/// with `Allow`), `OPTIONS` without `Origin` and in asterisk form
/// (`OPTIONS *`), a lowercase `get` (methods are case-sensitive), a
/// method of every token character, a 4,000-byte method (an excerpt in a
/// short body), a `PUT` in absolute form at another path, `CONNECT /mcp`
/// and `CONNECT host:port` (a request pipelined after it answered) — each
/// 405 with `Allow: GET, POST, DELETE` and words naming HTTP-001. With a
/// token: 401 first for `PUT`, `OPTIONS`, `HEAD` and `CONNECT`; 405 once
/// the token is sent. From an origin named by `--http-allow-origin`: the
/// preflight (and an `OPTIONS` without `Access-Control-Request-Method`)
/// answered 200 before the token, for the methods served; a `PUT` with
/// the token 405 with `Allow` and `Access-Control-Allow-Origin`. A foreign
/// origin's preflight is 403 (HTTP-003), a loopback origin's 401.
///
/// Issue 40: the door's fifth outside attack (after 9687292).
#[test]
fn other_methods_are_405_in_words_in_every_form() {
    let s = start("127.0.0.1:0", &[], &[]);
    let port = s.port;
    let host = format!("Host: 127.0.0.1:{port}\r\nConnection: close\r\n");
    let long = "M".repeat(4000);
    for (line, shown) in [
        ("OPTIONS /mcp".to_owned(), "OPTIONS"),
        ("OPTIONS *".to_owned(), "OPTIONS"),
        ("get /mcp".to_owned(), "get"),
        ("X!#$%&'*+-.^_`|~ /mcp".to_owned(), "X!#$%&'*+-.^_`|~"),
        (format!("{long} /mcp"), "MMMM"),
        (format!("PUT http://127.0.0.1:{port}/other"), "PUT"),
        ("CONNECT /mcp".to_owned(), "CONNECT"),
        (format!("CONNECT 127.0.0.1:{port}"), "CONNECT"),
    ] {
        let a = raw(port, format!("{line} HTTP/1.1\r\n{host}\r\n").as_bytes());
        let what = line.chars().take(40).collect::<String>();
        assert_eq!(a.status, 405, "{what}: {a:?}");
        assert_eq!(
            a.header("allow"),
            Some("GET, POST, DELETE"),
            "{what}: {a:?}"
        );
        assert!(
            a.body.contains("HTTP-001") && a.body.contains(shown) && a.body.len() < 1024,
            "{what}: {:?}",
            a.body
        );
    }
    let a = raw(port, format!("HEAD /mcp HTTP/1.1\r\n{host}\r\n").as_bytes());
    assert_eq!(a.status, 405, "{a:?}");
    assert_eq!(a.header("allow"), Some("GET, POST, DELETE"), "{a:?}");
    assert!(a.body.is_empty(), "a HEAD answer carried a body: {a:?}");
    // CONNECT leaves the connection as it was: a request after it is served.
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.write_all(
        format!(
            "CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n\
             GET /other HTTP/1.1\r\n{host}\r\n"
        )
        .as_bytes(),
    )
    .expect("send");
    let both = String::from_utf8_lossy(&read_for(&mut c, 10)).into_owned();
    assert!(
        both.starts_with("HTTP/1.1 405") && both.contains("HTTP/1.1 404"),
        "{both}"
    );
    drop(s);

    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).expect("token");
    let mut perms = std::fs::metadata(&file).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o600);
    std::fs::set_permissions(&file, perms).expect("chmod");
    let s = start(
        "127.0.0.1:0",
        &[
            "--http-token-file",
            file.to_str().expect("utf-8"),
            "--http-allow-origin",
            "https://app.example",
        ],
        &[],
    );
    let port = s.port;
    let host = format!("Host: 127.0.0.1:{port}\r\nConnection: close\r\n");
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    for line in [
        "PUT /mcp".to_owned(),
        "OPTIONS /mcp".to_owned(),
        "HEAD /mcp".to_owned(),
        format!("CONNECT 127.0.0.1:{port}"),
    ] {
        let a = raw(port, format!("{line} HTTP/1.1\r\n{host}\r\n").as_bytes());
        assert_eq!(a.status, 401, "{line} without the token: {a:?}");
        let a = raw(
            port,
            format!("{line} HTTP/1.1\r\n{host}{auth}\r\n").as_bytes(),
        );
        assert_eq!(a.status, 405, "{line} with the token: {a:?}");
        assert_eq!(a.header("allow"), Some("GET, POST, DELETE"), "{a:?}");
    }
    let named = "Origin: https://app.example\r\n";
    let preflight = format!(
        "{named}Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type, mcp-session-id, authorization\r\n"
    );
    for extra in [preflight.as_str(), named] {
        let a = raw(
            port,
            format!("OPTIONS /mcp HTTP/1.1\r\n{host}{extra}\r\n").as_bytes(),
        );
        assert_eq!(a.status, 200, "a named origin's OPTIONS: {a:?}");
        assert_eq!(
            a.header("access-control-allow-origin"),
            Some("https://app.example"),
            "{a:?}"
        );
        assert!(
            a.header("access-control-allow-methods")
                .is_some_and(|m| m.contains("POST") && !m.contains("PUT")),
            "{a:?}"
        );
    }
    let a = raw(
        port,
        format!("PUT /mcp HTTP/1.1\r\n{host}{named}{auth}Content-Length: 0\r\n\r\n").as_bytes(),
    );
    assert_eq!(a.status, 405, "{a:?}");
    assert_eq!(a.header("allow"), Some("GET, POST, DELETE"), "{a:?}");
    assert_eq!(
        a.header("access-control-allow-origin"),
        Some("https://app.example"),
        "{a:?}"
    );
    let a = raw(
        port,
        format!(
            "OPTIONS /mcp HTTP/1.1\r\n{host}Origin: https://evil.example\r\n\
             Access-Control-Request-Method: POST\r\n\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(a.status, 403, "{a:?}");
    assert!(a.body.contains("HTTP-003"), "{a:?}");
    let a = raw(
        port,
        format!(
            "OPTIONS /mcp HTTP/1.1\r\n{host}Origin: http://127.0.0.1:{port}\r\n\
             Access-Control-Request-Method: POST\r\n\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(a.status, 401, "{a:?}");
    assert!(a.header("access-control-allow-origin").is_none(), "{a:?}");
}
