//! A run's output (RUN-010): each stream read as it comes, at most 1 MiB
//! kept and the rest drained and dropped (so a flooding script is never
//! blocked into a fake timeout), then handed over as UTF-8 or base64.

use std::sync::{Arc, Mutex};

use base64::Engine;
use tokio::io::AsyncReadExt;

use crate::limits::MAX_STREAM_BYTES;

/// One captured stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Captured {
    pub(crate) text: String,
    /// `utf-8`, or `base64` when the bytes are not UTF-8.
    pub(crate) encoding: &'static str,
    pub(crate) truncated: bool,
}

/// A stream's bytes so far, shared with its reader so a settled run can
/// take them even while a detached grandchild keeps the pipe open.
#[derive(Default)]
pub(super) struct Buffer {
    bytes: Vec<u8>,
    truncated: bool,
    done: bool,
}

pub(super) fn spawn_reader<R: tokio::io::AsyncRead + Unpin + Send + 'static>(
    mut pipe: R,
    buf: Arc<Mutex<Buffer>>,
) {
    tokio::spawn(async move {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let Ok(mut b) = buf.lock() else { break };
                    let room = MAX_STREAM_BYTES - b.bytes.len();
                    if n > room {
                        b.truncated = true;
                    }
                    // Past the cap the reader keeps draining and dropping, so
                    // a flooding script is never blocked into a fake timeout.
                    let keep = n.min(room);
                    b.bytes.extend_from_slice(&chunk[..keep]);
                }
            }
        }
        if let Ok(mut b) = buf.lock() {
            b.done = true;
        }
    });
}

pub(super) fn take(buf: &Arc<Mutex<Buffer>>) -> Captured {
    let (bytes, truncated) = match buf.lock() {
        Ok(mut b) => (std::mem::take(&mut b.bytes), b.truncated),
        Err(_) => (Vec::new(), false),
    };
    match crate::read::utf8_prefix(&bytes, truncated) {
        Ok(text) => Captured {
            text: text.to_owned(),
            encoding: "utf-8",
            truncated,
        },
        Err(_) => Captured {
            text: base64::engine::general_purpose::STANDARD.encode(&bytes),
            encoding: "base64",
            truncated,
        },
    }
}

pub(super) fn both_done(a: &Arc<Mutex<Buffer>>, b: &Arc<Mutex<Buffer>>) -> bool {
    let done = |x: &Arc<Mutex<Buffer>>| x.lock().map(|g| g.done).unwrap_or(true);
    done(a) && done(b)
}
