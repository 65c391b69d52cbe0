//! A client that speaks HTTP/2 on the plain port (spec HTTP-019). The
//! server speaks HTTP/1.1; hyper's HTTP/1 server met the HTTP/2 preface
//! with nothing at all, or an empty 400 when the preface arrived in
//! pieces. The first bytes of each connection are read here, before
//! hyper, until they cannot be the preface; an HTTP/2 client is then told
//! in its own framing, as RFC 9113 has it: its request's stream is reset
//! with `HTTP_1_1_REQUIRED` (on which curl retries over HTTP/1.1), and a
//! GOAWAY with the same code carries the rule in words.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::limits::{HTTP2_HEADERS_WAIT_SECS, MAX_HTTP2_FRAMES_BYTES};

/// The start of the preface an HTTP/2 client with prior knowledge opens
/// with (RFC 9113 §3.4); the rest of it (`\r\nSM\r\n\r\n`) is not waited
/// for: no HTTP/1.1 request starts so.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n";

/// The whole client preface, after which frames come.
const WHOLE_PREFACE: usize = 24;

/// `HTTP_1_1_REQUIRED` (RFC 9113 §7).
const HTTP_1_1_REQUIRED: u32 = 0xd;

/// What the connection's first bytes are.
pub(crate) enum First {
    /// Bytes of an HTTP/1 request (or none: the client closed), to be
    /// handed to hyper before the rest.
    Http1(Vec<u8>),
    /// The HTTP/2 preface and what came with it.
    Http2(Vec<u8>),
}

/// Reads until the first bytes either are the preface's start or cannot
/// be. An HTTP/1 request differs from it at its first or second byte, so
/// this is one read for every request hyper would have read anyway.
pub(crate) async fn first(stream: &mut TcpStream) -> std::io::Result<First> {
    let mut got = Vec::with_capacity(1024);
    loop {
        let seen = got.len().min(PREFACE.len());
        if got[..seen] != PREFACE[..seen] {
            return Ok(First::Http1(got));
        }
        if seen == PREFACE.len() {
            return Ok(First::Http2(got));
        }
        if stream.read_buf(&mut got).await? == 0 {
            return Ok(First::Http1(got));
        }
    }
}

/// Tells an HTTP/2 client the server speaks HTTP/1.1 only, then closes:
/// the server's preface (an empty SETTINGS), a RST_STREAM of its first
/// request's stream and a GOAWAY, both `HTTP_1_1_REQUIRED` (HTTP-019).
pub(crate) async fn refuse(mut stream: TcpStream, mut got: Vec<u8>) {
    tracing::info!("an HTTP/2 client was told this server speaks HTTP/1.1 only (HTTP-019)");
    let _ = stream.write_all(&frame(0x4, 0, &[])).await;
    let first_stream = tokio::time::timeout(Duration::from_secs(HTTP2_HEADERS_WAIT_SECS), async {
        loop {
            if let Some(id) = headers_stream(&got) {
                return Some(id);
            }
            if got.len() > MAX_HTTP2_FRAMES_BYTES {
                return None;
            }
            match stream.read_buf(&mut got).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    })
    .await
    .ok()
    .flatten();
    // The request's stream reset first: curl retries it over HTTP/1.1 on
    // a new connection and leaves this one, which then ends with the
    // GOAWAY (a GOAWAY with the reset made curl give up instead).
    if let Some(id) = first_stream {
        let _ = stream
            .write_all(&frame(0x3, id, &HTTP_1_1_REQUIRED.to_be_bytes()))
            .await;
        drain(&mut stream).await;
    }
    let _ = stream.write_all(&goaway(first_stream.unwrap_or(0))).await;
    let _ = stream.shutdown().await;
    // What the client still sends is read, briefly, so closing does not
    // reset the connection under the answer before it is read.
    drain(&mut stream).await;
}

/// Reads and drops what the client sends, for up to a second or until it
/// closes: a close with unread bytes would reset the connection under
/// what was just written.
async fn drain(stream: &mut TcpStream) {
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// The stream of the first HEADERS frame in `got` (after the preface).
fn headers_stream(got: &[u8]) -> Option<u32> {
    let mut at = WHOLE_PREFACE;
    while got.len() >= at + 9 {
        let len = payload_len(&got[at..]);
        let id =
            u32::from_be_bytes([got[at + 5], got[at + 6], got[at + 7], got[at + 8]]) & 0x7fff_ffff;
        if got[at + 3] == 0x1 && id != 0 {
            return Some(id);
        }
        at += 9 + len;
    }
    None
}

/// A GOAWAY naming `last` as the last stream, `HTTP_1_1_REQUIRED`, and
/// the rule in words as its debug data.
pub(crate) fn goaway(last: u32) -> Vec<u8> {
    let words: &[u8] = b"HTTP-019: skill-mcp speaks HTTP/1.1 only; connect with HTTP/1.1 \
        (a proxy: an HTTP/1.1 upstream)";
    let mut payload = Vec::with_capacity(8 + words.len());
    payload.extend_from_slice(&last.to_be_bytes());
    payload.extend_from_slice(&HTTP_1_1_REQUIRED.to_be_bytes());
    payload.extend_from_slice(words);
    frame(0x7, 0, &payload)
}

/// The payload length a frame's head (at least its first 3 bytes) gives.
fn payload_len(head: &[u8]) -> usize {
    (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2])
}

/// One frame: its 9-byte head (length, type, no flags, stream) and payload.
fn frame(kind: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut out = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, 0];
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_goaway_says_http_1_1_required_in_words() {
        let out = goaway(1);
        let len = payload_len(&out);
        assert_eq!(out.len(), 9 + len);
        assert_eq!(out[3], 7);
        assert_eq!(&out[9..17], &[0, 0, 0, 1, 0, 0, 0, 0xd]);
        assert!(String::from_utf8_lossy(&out[17..]).contains("HTTP-019"));
    }

    #[test]
    fn the_first_request_s_stream_is_found_after_other_frames() {
        let mut got = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        got.extend(frame(0x4, 0, &[0; 6]));
        got.extend(frame(0x8, 0, &[0, 0, 0, 1]));
        assert_eq!(headers_stream(&got), None);
        got.extend(frame(0x1, 3, &[1, 2, 3]));
        assert_eq!(headers_stream(&got), Some(3));
    }
}
