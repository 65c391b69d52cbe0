//! A request's body, read bounded (spec HTTP-006, HTTP-007, HTTP-008):
//! at most [`MAX_HTTP_BODY_BYTES`], within [`HTTP_READ_TIMEOUT_SECS`],
//! each chunk's bytes taken from the bodies' budget as it arrives, so a
//! client whose body does not come holds only the bytes it sent. A body
//! whose connection is closed to make room meanwhile is told why.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body::Body;
use http_body_util::BodyExt;
use tokio::sync::OwnedSemaphorePermit;

use super::budget::Bodies;
use super::connections::Conn;
use super::door::Answer;
use super::replies::{bodies_full, body_too_slow, body_unreadable, closed_for_room, too_large};
use crate::limits::{HTTP_READ_TIMEOUT_SECS, MAX_HTTP_BODY_BYTES};

/// Reads a body of at most [`MAX_HTTP_BODY_BYTES`] within
/// [`HTTP_READ_TIMEOUT_SECS`] (HTTP-006, HTTP-008), each chunk's bytes
/// taken from the bodies' budget as it arrives (HTTP-007); they are held
/// until rmcp has read the message.
pub(super) async fn read_body<B>(
    body: B,
    bodies: &Bodies,
    conn: &Arc<Conn>,
) -> Result<(Bytes, Option<OwnedSemaphorePermit>), Box<Answer>>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    let me = bodies.reading(conn);
    let read = async {
        let mut body = std::pin::pin!(body);
        let mut bytes = BytesMut::new();
        let mut held: Option<OwnedSemaphorePermit> = None;
        loop {
            // Closed to make room (HTTP-007, HTTP-008): said, before the
            // connection goes.
            let frame = tokio::select! {
                f = body.frame() => f,
                () = conn.closed() => return Err(Box::new(closed_for_room())),
            };
            let Some(frame) = frame else {
                break;
            };
            let frame = frame.map_err(|e| {
                let e: Box<dyn std::error::Error + Send + Sync> = e.into();
                Box::new(body_unreadable(&e.to_string()))
            })?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if bytes.len() + data.len() > MAX_HTTP_BODY_BYTES {
                return Err(Box::new(too_large()));
            }
            if data.is_empty() {
                continue;
            }
            let room = tokio::select! {
                r = bodies.take(&me, data.len()) => r,
                () = conn.closed() => return Err(Box::new(closed_for_room())),
            };
            let Some(room) = room else {
                return Err(Box::new(bodies_full()));
            };
            match &mut held {
                Some(h) => h.merge(room),
                None => held = Some(room),
            }
            bytes.extend_from_slice(&data);
        }
        Ok((bytes.freeze(), held))
    };
    match tokio::time::timeout(Duration::from_secs(HTTP_READ_TIMEOUT_SECS), read).await {
        Ok(read) => read,
        Err(_) => Err(Box::new(body_too_slow())),
    }
}

#[cfg(test)]
mod tests {
    use http::StatusCode;
    use http_body_util::Full;

    use super::super::connections::Connections;
    use super::*;

    #[tokio::test]
    async fn a_body_is_read_whole_holding_its_bytes_and_one_over_the_limit_is_413() {
        let bodies = Bodies::new(2 * MAX_HTTP_BODY_BYTES);
        let conn = Arc::new(Connections::default())
            .open(None)
            .unwrap_or_else(|| panic!("room"));
        let small = Full::new(Bytes::from_static(b"{}"));
        let (bytes, held) = read_body(small, &bodies, &conn.conn)
            .await
            .unwrap_or_else(|a| panic!("refused: {}", a.status()));
        assert_eq!(bytes, "{}");
        assert_eq!(held.map(|p| p.num_permits()), Some(2));
        let big = Full::new(Bytes::from(vec![b' '; MAX_HTTP_BODY_BYTES + 1]));
        let refused = read_body(big, &bodies, &conn.conn).await.err();
        assert_eq!(
            refused.map(|a| a.status()),
            Some(StatusCode::PAYLOAD_TOO_LARGE)
        );
    }
}
