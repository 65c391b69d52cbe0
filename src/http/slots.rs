//! The slots a request holds while it is in flight (spec HTTP-007,
//! HTTP-008): one of the server's [`MAX_HTTP_IN_FLIGHT`], one of its
//! session's [`MAX_IN_FLIGHT`] with its id claimed there (no two requests
//! of a session in flight under one id), or, for a stream, one of the
//! server's [`MAX_HTTP_STREAMS`]. A slot is given back when it is dropped;
//! an answer's body holds them until its last byte is handed over
//! ([`Held`](super::held::Held)).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{StatusCode, header};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::connections::Connections;
use super::door::Answer;
use super::replies::{id_in_flight, server_full, session_full};
use crate::limits::{HTTP_BUDGET_WAIT_SECS, MAX_HTTP_IN_FLIGHT, MAX_HTTP_STREAMS};
use crate::transport::ids::MAX_IN_FLIGHT;
use crate::transport::message::{ClientId, IdKey};

/// A request's slots: one of the server's, and one of its session's when
/// it has one. A stream holds a stream's slot and no session's.
pub(super) type Slot = (OwnedSemaphorePermit, Option<SessionSlot>);

/// The server's slots, shared by every connection.
pub(super) struct Slots {
    in_flight: Arc<Semaphore>,
    streams: Arc<Semaphore>,
    per_session: InFlight,
}

impl Slots {
    pub(super) fn new() -> Slots {
        Slots {
            in_flight: Arc::new(Semaphore::new(MAX_HTTP_IN_FLIGHT)),
            streams: Arc::new(Semaphore::new(MAX_HTTP_STREAMS)),
            per_session: Arc::default(),
        }
    }

    /// A request's slots: one of the server's requests in flight and one
    /// of its session's, with its id claimed in the session (HTTP-007).
    pub(super) fn request(
        &self,
        id: &ClientId,
        session: Option<&str>,
    ) -> Result<Slot, Box<Answer>> {
        let Ok(overall) = Arc::clone(&self.in_flight).try_acquire_owned() else {
            return Err(Box::new(server_full(id)));
        };
        let Some(session) = session else {
            return Ok((overall, None));
        };
        let Some(mut mine) = SessionSlot::take(&self.per_session, session.to_owned()) else {
            return Err(Box::new(session_full(id)));
        };
        if !mine.claim(&id.key) {
            return Err(Box::new(id_in_flight(id)));
        }
        Ok((overall, Some(mine)))
    }

    /// A stream's slot, if one is free now.
    pub(super) fn stream(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.streams).try_acquire_owned().ok()
    }

    /// A stream's slot for an answer rmcp gave at the cap (HTTP-008): an
    /// answer that opens a stream (200, an event stream) closes the stream
    /// the server would miss least for it and waits up to
    /// [`HTTP_BUDGET_WAIT_SECS`] for the slot that frees (`Err` past it);
    /// any other answer — a refusal, an error — costs nobody their stream
    /// and takes none (`Ok(None)`).
    pub(super) async fn stream_for(
        &self,
        answer: &Answer,
        connections: &Connections,
    ) -> Result<Option<OwnedSemaphorePermit>, ()> {
        let stream = answer.status() == StatusCode::OK
            && answer
                .headers()
                .get(header::CONTENT_TYPE)
                .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if !stream {
            return Ok(None);
        }
        if let Some(slot) = self.stream() {
            return Ok(Some(slot));
        }
        if !connections.close_a_stream() {
            return Err(());
        }
        let wait = Duration::from_secs(HTTP_BUDGET_WAIT_SECS);
        match tokio::time::timeout(wait, Arc::clone(&self.streams).acquire_owned()).await {
            Ok(Ok(slot)) => Ok(Some(slot)),
            _ => Err(()),
        }
    }
}

/// What a session has in flight: how many requests, and their ids.
#[derive(Default)]
struct InSession {
    count: usize,
    ids: HashSet<IdKey>,
}

type InFlight = Arc<Mutex<HashMap<String, InSession>>>;

/// One request's slot in its session (HTTP-007), and its id once read;
/// both freed on drop.
pub(super) struct SessionSlot {
    sessions: InFlight,
    session: String,
    id: Option<IdKey>,
}

impl SessionSlot {
    /// `None` when the session has [`MAX_IN_FLIGHT`] requests in flight.
    /// An entry lives only while a request of its session is in flight,
    /// so the table is bounded by [`MAX_HTTP_IN_FLIGHT`].
    fn take(sessions: &InFlight, session: String) -> Option<SessionSlot> {
        let mut map = lock(sessions);
        let s = map.entry(session.clone()).or_default();
        if s.count >= MAX_IN_FLIGHT {
            return None;
        }
        s.count += 1;
        Some(SessionSlot {
            sessions: Arc::clone(sessions),
            session,
            id: None,
        })
    }

    /// Claims the request's id in its session: false when a request of the
    /// session still in flight has it (WIRE-006's rule; rmcp would route
    /// both answers by that id).
    fn claim(&mut self, id: &IdKey) -> bool {
        let mut map = lock(&self.sessions);
        let Some(s) = map.get_mut(&self.session) else {
            return false;
        };
        if !s.ids.insert(id.clone()) {
            return false;
        }
        self.id = Some(id.clone());
        true
    }
}

fn lock(sessions: &InFlight) -> std::sync::MutexGuard<'_, HashMap<String, InSession>> {
    // No method here panics half-way, so a poisoned table is whole.
    sessions
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        let mut map = lock(&self.sessions);
        if let Some(s) = map.get_mut(&self.session) {
            if let Some(id) = &self.id {
                s.ids.remove(id);
            }
            s.count -= 1;
            if s.count == 0 {
                map.remove(&self.session);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    fn id(n: i128) -> ClientId {
        let raw = RawValue::from_string(n.to_string()).unwrap_or_else(|e| panic!("{e}"));
        ClientId {
            raw,
            key: IdKey::Whole(n),
        }
    }

    #[test]
    fn a_session_claims_each_id_once_and_its_entry_goes_with_its_last_slot() {
        let slots = Slots::new();
        let first = slots
            .request(&id(1), Some("s"))
            .unwrap_or_else(|_| panic!("room"));
        let again = slots.request(&id(1), Some("s")).err().map(|a| a.status());
        assert_eq!(again, Some(StatusCode::BAD_REQUEST));
        // Another session may use the id; a request without one claims none.
        let other = slots
            .request(&id(1), Some("t"))
            .unwrap_or_else(|_| panic!("room"));
        let bare = slots
            .request(&id(1), None)
            .unwrap_or_else(|_| panic!("room"));
        assert!(bare.1.is_none());
        drop(first);
        assert!(
            slots.request(&id(1), Some("s")).is_ok(),
            "the id is free again"
        );
        drop((other, bare));
        assert!(lock(&slots.per_session).is_empty());
    }

    #[test]
    fn a_session_holds_its_cap_and_the_server_its_own() {
        let slots = Slots::new();
        let held: Vec<_> = (0..MAX_IN_FLIGHT as i128)
            .map(|n| {
                slots
                    .request(&id(n), Some("s"))
                    .unwrap_or_else(|_| panic!("room"))
            })
            .collect();
        let over = slots.request(&id(-1), Some("s")).err().map(|a| a.status());
        assert_eq!(over, Some(StatusCode::TOO_MANY_REQUESTS));
        let rest: Vec<_> = (MAX_IN_FLIGHT..MAX_HTTP_IN_FLIGHT)
            .map(|n| {
                slots
                    .request(&id(n as i128), None)
                    .unwrap_or_else(|_| panic!("room"))
            })
            .collect();
        let full = slots.request(&id(-1), None).err().map(|a| a.status());
        assert_eq!(full, Some(StatusCode::SERVICE_UNAVAILABLE));
        drop((held, rest));
        assert!(slots.request(&id(-1), Some("s")).is_ok());
    }
}
