//! Requests in flight (spec WIRE-004, WIRE-006): each request the client
//! sends takes a slot under its id, compared as JSON-RPC compares ids, and
//! rmcp sees an id of the transport's own instead — a number rmcp's id type
//! holds whatever the client chose. The slot is freed when the answer to it
//! is written, or when the client cancels the request.

use std::collections::HashMap;

use rmcp::model::{NumberOrString, RequestId};

use super::message::{ClientId, IdKey};

pub(crate) use crate::limits::MAX_IN_FLIGHT;

/// The slots of the requests in flight.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    by_key: HashMap<IdKey, i64>,
    by_ours: HashMap<i64, ClientId>,
    /// The id rmcp gets next; never reused.
    next: i64,
}

/// Why a request took no slot.
#[derive(Debug, PartialEq)]
pub(crate) enum Taken {
    /// Its id is the id of a request still in flight.
    InUse,
}

impl InFlight {
    /// How many requests are in flight (read by this module's tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_ours.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.by_ours.is_empty()
    }

    /// Takes a slot for a request with `id`: the id rmcp gets instead, or
    /// why not. The caller keeps the count under [`MAX_IN_FLIGHT`].
    pub(crate) fn enter(&mut self, id: ClientId) -> Result<RequestId, Taken> {
        if self.by_key.contains_key(&id.key) {
            return Err(Taken::InUse);
        }
        self.next += 1;
        let ours = self.next;
        self.by_key.insert(id.key.clone(), ours);
        self.by_ours.insert(ours, id);
        Ok(NumberOrString::Number(ours))
    }

    /// The client's id of the request rmcp answers under `ours`, freeing
    /// its slot; `None` when no request in flight has that id (it was
    /// cancelled, or the id is not one the transport gave).
    pub(crate) fn answer(&mut self, ours: &RequestId) -> Option<ClientId> {
        let NumberOrString::Number(n) = ours else {
            return None;
        };
        let id = self.by_ours.remove(n)?;
        self.by_key.remove(&id.key);
        Some(id)
    }

    /// The client's id of the request in flight under `ours`, which stays
    /// in flight: a `subscriptions/listen` is named by it in each of its
    /// notifications (HTTP-012).
    pub(crate) fn client_id(&self, ours: &RequestId) -> Option<&ClientId> {
        let NumberOrString::Number(n) = ours else {
            return None;
        };
        self.by_ours.get(n)
    }

    /// The request a `notifications/cancelled` names, by the client's id:
    /// the id rmcp knows it by, freeing its slot (rmcp answers nothing for a
    /// cancelled request).
    pub(crate) fn cancel(&mut self, key: &IdKey) -> Option<RequestId> {
        let ours = self.by_key.remove(key)?;
        self.by_ours.remove(&ours);
        Some(NumberOrString::Number(ours))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::value::RawValue;

    fn id(key: IdKey) -> ClientId {
        ClientId {
            raw: RawValue::from_string("0".into()).unwrap_or_else(|_| unreachable!()),
            key,
        }
    }

    #[test]
    fn a_repeated_id_takes_no_slot_until_the_first_is_answered() {
        let mut f = InFlight::default();
        let ours = f
            .enter(id(IdKey::Whole(7)))
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(f.enter(id(IdKey::Whole(7))), Err(Taken::InUse));
        assert_eq!(f.len(), 1);
        assert_eq!(f.answer(&ours).map(|i| i.key), Some(IdKey::Whole(7)));
        assert!(f.is_empty());
        assert!(f.enter(id(IdKey::Whole(7))).is_ok());
        assert!(
            f.answer(&ours).is_none(),
            "an id rmcp was given is never given again"
        );
    }

    proptest! {
        /// Whatever ids arrive in whatever order, each is answered at most
        /// once, the slots hold exactly the ids in flight, and a cancel
        /// frees what it names.
        #[test]
        fn slots_hold_exactly_the_requests_in_flight(ops in prop::collection::vec((0u8..3, 0i64..6), 0..200)) {
            let mut f = InFlight::default();
            let mut model: HashMap<i64, RequestId> = HashMap::new();
            for (op, k) in ops {
                let key = IdKey::Whole(k.into());
                match op {
                    0 => {
                        let got = f.enter(id(key));
                        prop_assert_eq!(got.is_ok(), !model.contains_key(&k));
                        if let Ok(ours) = got { model.insert(k, ours); }
                    }
                    1 => {
                        if let Some(ours) = model.remove(&k) {
                            prop_assert_eq!(f.answer(&ours).map(|i| i.key), Some(IdKey::Whole(k.into())));
                            prop_assert!(f.answer(&ours).is_none());
                        }
                    }
                    _ => {
                        prop_assert_eq!(f.cancel(&key), model.remove(&k));
                    }
                }
                prop_assert_eq!(f.len(), model.len());
            }
        }
    }
}
