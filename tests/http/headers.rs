//! What a request's head must be (src/http/headers.rs; HTTP-006,
//! HTTP-014, HTTP-016): head bounds, one value per header, the name
//! headers against the body, transfer codings.
//!
//! A test marked FOUND says what an outside attack found when it was
//! written (figures from a debug build on a 2-core machine) and may fail
//! on the code it was written against: that is what it records; HELD
//! records what held. The helpers are tests/common/http.rs's.

use crate::common::http::*;
use serde_json::json;

/// A string of `n` bytes, for requests that carry a lot in one value (one
/// JSON value: WIRE-009 counts values, not bytes).
fn junk(n: usize) -> String {
    "j".repeat(n)
}

/// HTTP-016 refuses a body in any content coding but identity, since "a
/// gateway that decodes bodies to inspect them would otherwise judge other
/// bytes than the server runs"; RFC 9112 §6.1 says a server that receives a
/// transfer coding it does not understand should answer 501. A careful user
/// expects the same of a transfer coding the server does not decode.
///
/// FOUND: `Transfer-Encoding: gzip, chunked` with a plain (not gzipped)
/// JSON body in chunks is served 200: the gzip coding is ignored and the
/// bytes are run as identity.
///
/// Issue 40: the door's second outside attack.
#[test]
fn a_body_in_a_transfer_coding_the_server_does_not_decode_is_refused() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/list\r\nConnection: close\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
         {:x}\r\n{body}\r\n0\r\n\r\n",
        s.port,
        body.len()
    );
    let a = raw(s.port, request.as_bytes());
    assert!(
        a.status >= 400 && !a.body.contains("\"result\""),
        "a body sent as gzip was run as it came: {} {}",
        a.status,
        &a.body[..a.body.len().min(200)]
    );
}

/// HTTP-006: a request's head is at most 64 KiB and at most 100 fields,
/// hyper's own count (past it hyper answers 431 before there is a request
/// to answer with words; a heap of slots per request, which raising it
/// would cost, is not worth fields no client sends).
///
/// FOUND: a request with 101 header fields (1,052 bytes of head) was 431
/// with an empty body while the limit was written nowhere; now HTTP-006
/// says it, and this holds it: 100 fields are served, 101 are 431.
///
/// Issue 40: the door's second outside attack.
#[test]
fn a_head_of_a_hundred_small_headers_is_served_or_told_the_limit() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    let head_with = |fields: usize| {
        let base = headers("tools/list");
        // post_request's own fields: Host, Content-Type, Accept,
        // Connection, Content-Length.
        let names: Vec<String> = (0..fields - base.len() - 5)
            .map(|i| format!("X-{i}"))
            .collect();
        let mut extra = base;
        extra.extend(names.iter().map(|n| (n.as_str(), "a")));
        let req = post_request(s.port, &body, &extra);
        let head = req.split("\r\n\r\n").next().expect("a head").to_owned();
        assert_eq!(head.lines().count() - 1, fields, "{head}");
        raw(s.port, req.as_bytes())
    };
    let hundred = head_with(100);
    assert_eq!(hundred.status, 200, "{hundred:?}");
    let more = head_with(101);
    assert_eq!(more.status, 431, "{more:?}");
}

/// HARD-005: "No reply quotes more than an excerpt of what the client
/// sent … Sent a 10 MiB string, each door answers in under 4 KiB".
///
/// FOUND: a stateless `tools/call` whose `name` is 3.9 MB and whose
/// `Mcp-Name` header says `skill_list` is answered 400 -32020 "Mcp-Name
/// header `skill_list` does not match body value `jjjj…`" quoting the whole
/// 3.9 MB name: a body of 3,900,118 bytes. A `resources/read` with a 3.9 MB
/// `uri` and a `prompts/get` with a 3.9 MB `name` are quoted whole the same
/// way (rmcp's check of the 2026-07-28 headers, after the door's).
///
/// Issue 40: the door's third outside attack.
#[test]
fn a_name_header_that_does_not_match_the_body_is_answered_with_an_excerpt() {
    let s = start("127.0.0.1:0", &[], &[]);
    let long = junk(3_900_000);
    for (method, params, name) in [
        (
            "tools/call",
            json!({"name": long, "arguments": {}}),
            "skill_list",
        ),
        (
            "resources/read",
            json!({"uri": long}),
            "skill://demo/notes.md",
        ),
        ("prompts/get", json!({"name": long}), "demo"),
    ] {
        let a = post(
            s.port,
            &stateless(1, method, params),
            &headers_named(method, name),
        );
        eprintln!(
            "{method} with a 3.9 MB value and Mcp-Name {name}: {} with a {}-byte body",
            a.status,
            a.body.len()
        );
        assert!(
            a.body.len() < 4096,
            "{method}: a 3.9 MB value was answered with {} bytes: {}…",
            a.body.len(),
            &a.body[..a.body.len().min(200)]
        );
    }
}

/// HTTP-016: a body in a transfer coding the server does not decode is
/// never read as plain bytes: `gzip, chunked` (chunked last) reaches the
/// door and is 501 naming the rule; a coding list whose last is not
/// `chunked` (`gzip`, `chunked, gzip`, `identity`) leaves the body's length
/// unknown (RFC 9112 §6.3), and hyper refuses it with 400 before there is a
/// request to answer in words — as HTTP-016 now writes down.
///
/// FOUND: those three were 400 with an empty body while the rule promised
/// 501 naming it for every coding but chunked; the rule now says which
/// answer each gets, and this holds both: never served, and in words
/// wherever a request exists.
///
/// Issue 40: the door's third outside attack.
#[test]
fn a_transfer_coding_the_server_does_not_decode_is_refused_in_words() {
    let s = start("127.0.0.1:0", &[], &[]);
    let body = stateless(1, "tools/list", json!({}));
    for coding in ["gzip, chunked", "gzip", "chunked, gzip", "identity"] {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: tools/list\r\nConnection: close\r\nTransfer-Encoding: {coding}\r\n\r\n\
             {:x}\r\n{body}\r\n0\r\n\r\n",
            s.port,
            body.len()
        );
        let a = raw(s.port, request.as_bytes());
        eprintln!("Transfer-Encoding: {coding}: {} {:?}", a.status, a.body);
        assert!(
            !a.body.contains("\"result\""),
            "{coding}: served: {}",
            a.body
        );
        if coding.ends_with("chunked") {
            assert_eq!(a.status, 501, "{coding}: {a:?}");
            assert!(a.body.contains("HTTP-016"), "{coding}: {}", a.body);
        } else {
            assert_eq!(a.status, 400, "{coding}: {a:?}");
        }
    }
}
