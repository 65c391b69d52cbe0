//! `subscriptions/listen` (protocol 2026-07-28, SEP-2575; spec HTTP-012):
//! how a client without a session hears that the lists changed.
//!
//! rmcp sends the acknowledgement (with the subscription id and the
//! accepted filter) and narrows the filter to what `get_info` advertises;
//! this module says what the server honours and then waits on the live
//! snapshot's swaps, sending each listen the `list_changed` notifications
//! a session gets (RELOAD-005) through rmcp's filter-enforcing sink, which
//! tags each with the subscription id. A listen ends when its request is
//! cancelled — the client's connection closed, or on stdio its
//! `notifications/cancelled` — and holds nothing after: its receiver of
//! the swaps is dropped with it. On stdio it also ends, with the final
//! result the revision defines, when the client's input ends, so the
//! transport's drain of unanswered requests does not wait on it.

use rmcp::ErrorData as McpError;
use rmcp::model::SubscriptionFilter;
use rmcp::service::{SubscriptionContext, SubscriptionSendError, SubscriptionSink};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use crate::reload::{Changed, Live};
use crate::run::hung_up;

/// What this server honours of `requested` (HTTP-012): the prompts and
/// resources lists, which a reload can change. Never the tools list (the
/// tool set is fixed, RELOAD-005), and never `resourceSubscriptions`: the
/// server does not offer `resources/updated` (no `resources.subscribe`),
/// so those URIs are left out of the acknowledged filter.
pub(super) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.prompts_list_changed = requested.prompts_list_changed.filter(|&on| on);
    accepted.resources_list_changed = requested.resources_list_changed.filter(|&on| on);
    accepted
}

/// One established listen, until its client goes away or (stdio) its
/// input ends, `hangup` turning true (HTTP-012).
pub(super) async fn listen(
    live: &Live,
    hangup: Option<watch::Receiver<bool>>,
    context: SubscriptionContext,
) -> Result<(), McpError> {
    let ended = async {
        tokio::select! {
            () = context.cancelled() => {}
            () = hung_up(hangup) => {}
        }
    };
    tokio::pin!(ended);
    let sink = context.sink().clone();
    let wants = Changed {
        prompts: sink.accepted().prompts_list_changed == Some(true),
        resources: sink.accepted().resources_list_changed == Some(true),
    };
    tracing::debug!(id = %sink.id(), ?wants, "a subscriptions/listen opened");
    if wants.prompts || wants.resources {
        let mut swaps = live.swaps();
        loop {
            let changed = tokio::select! {
                () = &mut ended => break,
                changed = swaps.recv() => changed,
            };
            let changed = match changed {
                Ok(changed) => changed,
                // Swaps were missed while this listen was slow to send:
                // which lists they changed is not known, so both are said.
                Err(RecvError::Lagged(_)) => Changed {
                    prompts: true,
                    resources: true,
                },
                // The live snapshot is gone: the server is ending.
                Err(RecvError::Closed) => break,
            };
            let sent = tokio::select! {
                () = &mut ended => break,
                sent = tell(&sink, wants, changed) => sent,
            };
            if let Err(e) = sent {
                tracing::debug!(id = %sink.id(), error = %e, "a subscriptions/listen could not be sent to");
                break;
            }
        }
    } else {
        // Nothing accepted can ever be sent, but the stream stays as the
        // client asked: ended, a client would only open it again.
        ended.await;
    }
    tracing::debug!(id = %sink.id(), "a subscriptions/listen ended");
    Ok(())
}

/// Sends what a swap changed that this listen accepted, in the order a
/// session hears it (prompts, then resources).
async fn tell(
    sink: &SubscriptionSink,
    wants: Changed,
    changed: Changed,
) -> Result<(), SubscriptionSendError> {
    if wants.prompts && changed.prompts {
        sink.notify_prompt_list_changed().await?;
    }
    if wants.resources && changed.resources {
        sink.notify_resource_list_changed().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HTTP-012: prompts and resources as asked; tools and resource URIs
    /// never; a `false` is not an opt-in.
    #[test]
    fn only_the_lists_a_reload_changes_are_accepted() {
        let mut asked = SubscriptionFilter::new();
        asked.tools_list_changed = Some(true);
        asked.prompts_list_changed = Some(true);
        asked.resources_list_changed = Some(false);
        asked.resource_subscriptions = Some(vec!["skill://demo/SKILL.md".into()]);
        let got = accepted(&asked);
        assert_eq!(got.prompts_list_changed, Some(true));
        assert_eq!(got.resources_list_changed, None);
        assert_eq!(got.tools_list_changed, None);
        assert_eq!(got.resource_subscriptions, None);
        assert_eq!(
            accepted(&SubscriptionFilter::new()),
            SubscriptionFilter::new()
        );
    }
}
