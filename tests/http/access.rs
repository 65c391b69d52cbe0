//! Who may connect (src/http/access.rs, cors.rs; HTTP-003, HTTP-004,
//! HTTP-005, HTTP-017): Host and Origin, the bearer token and its file,
//! the origins the owner names.
//!
//! A test marked FOUND says what an outside attack found when it was
//! written (figures from a debug build on a 2-core machine) and may fail
//! on the code it was written against: that is what it records; HELD
//! records what held. The helpers are tests/common/http.rs's.

use crate::common::http::*;
use serde_json::json;
use std::process::Child;
use std::time::{Duration, Instant};

/// Spawns the server with `args` and waits until it says it listens or
/// exits; returns whether it listens and what it said on stderr.
fn starts(args: &[&str]) -> (bool, String, Option<Child>) {
    let dir = skills();
    let (mut child, rx) = spawn(dir.path(), args, &[]);
    let mut said = String::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                said.push_str(&line);
                said.push('\n');
                if line.contains("listening on http://") {
                    std::mem::forget(dir);
                    return (true, said, Some(child));
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(_) => {}
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    (false, said, None)
}

/// HTTP-003 compares a Host's name "any port"; RFC 9112 §3.2 says a server
/// must answer 400 to a Host whose value is invalid. A careful user expects
/// a Host whose port is not a number to be refused, as a Host with userinfo
/// is (HTTP-014).
///
/// FOUND: `Host: localhost:abc`, `Host: localhost:-1`, `Host: [::1]x` and
/// `Host: 127.0.0.1:99999999999` are all served 200.
///
/// Issue 40: the door's second outside attack.
#[test]
fn a_host_whose_port_is_no_port_is_refused() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    for host in ["localhost:abc", "[::1]x", "127.0.0.1:99999999999"] {
        let req = post_request(s.port, &body, &headers("tools/list")).replace(
            &format!("Host: 127.0.0.1:{}", s.port),
            &format!("Host: {host}"),
        );
        let a = raw(s.port, req.as_bytes());
        assert_eq!(
            a.status,
            400,
            "Host: {host} was answered {}: {}",
            a.status,
            &a.body[..a.body.len().min(120)]
        );
    }
}

/// Every refusal names the rule and what to do, in a sentence a person
/// reads (issue 40's refusals, HARD-005's excerpts).
///
/// FOUND: the HTTP-014 refusal of a request target naming another host
/// reads "which is not the Host header's (or not                      one
/// this server answers to)": a run of 22 spaces from a line break in its
/// source string.
///
/// Issue 40: the door's second outside attack.
#[test]
fn the_refusal_of_a_target_naming_another_host_reads_as_one_sentence() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    let req = post_request(s.port, &body, &headers("tools/list")).replacen(
        "POST /mcp ",
        "POST http://evil.test/mcp ",
        1,
    );
    let a = raw(s.port, req.as_bytes());
    assert_eq!(a.status, 400, "{a:?}");
    assert!(a.body.contains("HTTP-014"), "{}", a.body);
    assert!(
        !a.body.contains("  "),
        "the refusal carries a run of spaces: {:?}",
        a.body
    );
}

/// HTTP-017: `--http-allow-origin` takes `scheme://host[:port]`, "anything
/// else is a usage error, exit 2". A careful owner expects an origin no
/// browser can have to be refused at start, as one with a path is.
///
/// FOUND: `--http-allow-origin https://app.example.com:99999` starts the
/// server (it listens); no page can ever match it.
///
/// Issue 40: the door's second outside attack.
#[test]
fn an_origin_with_a_port_past_65535_is_a_usage_error() {
    let dir = skills();
    let (mut child, lines) = spawn(
        dir.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--http-allow-origin",
            "https://app.example.com:99999",
        ],
        &[],
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break Some(st);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let said: Vec<String> = lines.try_iter().collect();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(2),
        "the server started with an origin of port 99999: {said:?}"
    );
}

/// HTTP-003: a request's `Host` must name `localhost` (among others),
/// "compared without case, any port", and a refusal names "`--http-allow-host`
/// as the owner's remedy". `localhost.` is the same name written absolute
/// (RFC 1034 §3.1), which a resolver answers as `localhost` and a client
/// such as curl sends as written. A careful user expects it served — or,
/// if refused, a remedy that works.
///
/// FOUND: `Host: localhost.:PORT` is 403 "HTTP-003: the Host header names
/// \"localhost.\", which this server does not answer to (it answers to
/// localhost, 127.0.0.1, ::1) … if this name is yours, start the server
/// with --http-allow-host \"localhost.\"" — and the server started so
/// exits with status 2: "\"localhost.\" is not a host name". No owner can
/// allow a name written with its trailing dot (`devbox.` the same).
///
/// Issue 40: the door's third outside attack.
#[test]
fn a_host_written_with_its_trailing_dot_is_served_or_its_remedy_works() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    let request = post_request(s.port, &body, &headers("tools/list")).replace(
        &format!("Host: 127.0.0.1:{}", s.port),
        &format!("Host: localhost.:{}", s.port),
    );
    let a = raw(s.port, request.as_bytes());
    eprintln!("Host: localhost.: {} {}", a.status, a.body);
    if a.status == 200 {
        return;
    }
    let remedy = a
        .body
        .split("--http-allow-host ")
        .nth(1)
        .map(|r| r.trim().trim_matches('"').to_owned())
        .unwrap_or_else(|| panic!("the refusal names no remedy: {}", a.body));
    let dir = skills();
    let (mut child, lines) = spawn(
        dir.path(),
        &["--http", "127.0.0.1:0", "--http-allow-host", &remedy],
        &[],
    );
    let mut said = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let listening = loop {
        match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.contains("listening on http://") => break true,
            Ok(line) => said.push(line),
            Err(_) => break false,
        }
    };
    let _ = child.kill();
    let status = child.wait().expect("the server's status");
    assert!(
        listening,
        "the 403 for Host: localhost. says to start with --http-allow-host {remedy:?}; so \
         started, the server {status}: {said:?}"
    );
}

/// HELD: the bearer check (HTTP-005) takes the scheme in any case and
/// spaces around the token (RFC 9110 §11.1, §5.5), and nothing else: a
/// tab after the scheme, a comma, a byte more or less, `Basic`, and a
/// token carried only in a chunked body's trailer are 401 naming the rule.
/// A token file whose first line ends in a space is refused at start.
///
/// Issue 40: the door's fourth outside attack.
#[test]
fn a_bearer_token_is_matched_as_written_and_never_from_a_trailer() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\r\n")).expect("token");
    let mut perms = std::fs::metadata(&file).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o600);
    std::fs::set_permissions(&file, perms).expect("chmod");
    let s = start(
        "127.0.0.1:0",
        &["--http-token-file", file.to_str().expect("utf-8")],
        &[],
    );
    let port = s.port;
    let body = stateless(1, "tools/list", json!({}));
    for (auth, status) in [
        (format!("Bearer {TOKEN}"), 200),
        (format!("bearer {TOKEN}"), 200),
        (format!("BEARER {TOKEN}"), 200),
        (format!("Bearer  {TOKEN}"), 200),
        (format!("Bearer {TOKEN} "), 200),
        (format!("Bearer\t{TOKEN}"), 401),
        (format!("Bearer {TOKEN},"), 401),
        (format!("Bearer {TOKEN}x"), 401),
        (format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]), 401),
        (format!("Basic {TOKEN}"), 401),
    ] {
        let mut h = headers("tools/list");
        h.push(("Authorization", &auth));
        let a = post(port, &body, &h);
        assert_eq!(a.status, status, "{auth:?}: {a:?}");
        if status == 401 {
            assert!(a.body.contains("HTTP-005"), "{auth:?}: {a:?}");
        }
    }
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nTransfer-Encoding: chunked\r\n\r\n\
         {:x};ext=1\r\n{body}\r\n0\r\nAuthorization: Bearer {TOKEN}\r\n\r\n",
        body.len()
    );
    let a = raw(port, chunked.as_bytes());
    assert_eq!(a.status, 401, "a token in a trailer authenticated: {a:?}");

    let spaced = dir.path().join("spaced");
    std::fs::write(&spaced, format!("{TOKEN} \n")).expect("token");
    let out = std::process::Command::new(crate::common::BIN)
        .args(["--http", "127.0.0.1:0", "--http-token-file"])
        .arg(&spaced)
        .env("SKILLS_DIR", dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("HTTP-005"),
        "{out:?}"
    );
}

/// FOUND: spec HTTP-005 says "the token is the first line of
/// `--http-token-file PATH` (a trailing newline is not part of it)", but a
/// token file with anything after its first line (a comment, a second
/// line an editor or `echo >>` left) is refused as a token with
/// whitespace: the server does not start (exit 2, "must be at least 16
/// bytes with no spaces or control characters (this one is N bytes)", N
/// counting the whole file). An owner following the spec cannot start the
/// server, and the message misleads them about why.
#[test]
fn a_token_file_s_first_line_is_the_token() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(
        &file,
        "a-test-token-0123456789\n# made with openssl rand -hex 32\n",
    )
    .expect("token file");
    let file = file.to_string_lossy().into_owned();
    let (listening, said, child) = starts(&["--http", "127.0.0.1:0", "--http-token-file", &file]);
    if let Some(mut c) = child {
        let _ = c.kill();
        let _ = c.wait();
    }
    assert!(
        listening,
        "a token file whose first line is a good token did not start the server: {said}"
    );
}

/// FOUND: a request with two `Host` headers is served when the first names
/// an allowed host, whatever the second names: the HTTP-003 check reads
/// only the first (`headers.get(HOST)`). RFC 9112 §3.2: "A server MUST
/// respond with a 400 (Bad Request) status code to any HTTP/1.1 request
/// message that … contains more than one Host header field line". Two
/// readers of one request (a proxy that keeps the last, this door the
/// first) then disagree about which host it is for — the ambiguity a Host
/// allowlist exists to remove. Low severity (a browser sends one Host).
#[test]
fn a_request_with_two_host_headers_is_refused() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = init_body(1);
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nHost: evil.example\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        s.port,
        body.len()
    );
    let a = raw(s.port, req.as_bytes());
    assert!(
        a.status == 400 || a.status == 403,
        "two Host headers, the second foreign, were served: {} {:?}",
        a.status,
        a.header("mcp-session-id")
    );
}

/// FOUND: a token file saved with a UTF-8 byte-order mark (as Windows
/// editors write it) starts the server — U+FEFF is neither whitespace nor a
/// control character, so HTTP-005's check passes — but the mark becomes
/// part of the token, and no client can ever authenticate: the token in
/// the file sent as `Authorization: Bearer <token>` is 401, and a header
/// holding the mark's bytes is not ASCII, which the door reads as no
/// token at all. The same holds for any non-ASCII token. The server looks
/// healthy and refuses everyone. Expected: either the token is what the
/// owner sees (the mark is not part of it), or the server refuses to start
/// naming the problem, as it does for a short token. Low severity.
#[test]
fn a_token_file_with_a_byte_order_mark_either_works_or_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    std::fs::write(&file, "\u{feff}a-test-token-0123456789\r\n").expect("token file");
    let file = file.to_string_lossy().into_owned();
    let (listening, said, child) = starts(&["--http", "127.0.0.1:0", "--http-token-file", &file]);
    let Some(mut child) = child else {
        // Refused at start: acceptable if it says why.
        assert!(said.contains("HTTP-005"), "{said}");
        return;
    };
    assert!(listening);
    let port: u16 = said
        .split("listening on http://")
        .nth(1)
        .and_then(|a| a.split('/').next())
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .expect("a port");
    let a = post(
        port,
        &init_body(1),
        &[("Authorization", "Bearer a-test-token-0123456789")],
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        a.status, 200,
        "the server started with a BOM-prefixed token file, and the token the file shows is refused: {a:?}"
    );
}
