//! A human's approval of each confirmed run through MCP elicitation
//! (spec RUN-028, HTTP-009): the exact plan is sent as an
//! `elicitation/create` and the run starts only on `accept`.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    ProtocolVersion, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext, ServiceError};
use tokio::sync::watch;

use crate::limits::MAX_PENDING_APPROVALS;
use crate::offer::Elicit;
use crate::shapes::WillRun;

/// Whether this request's client can be sent an elicitation: it declared
/// the capability, and its protocol allows a server-to-client request
/// (2026-07-28 forbids them, so a stateless request never can).
fn can_ask(ctx: &RequestContext<RoleServer>) -> bool {
    // The prompt is a form: a client that declared URL mode alone may
    // not be sent one (MCP 2025-11-25); `{}` means form.
    let declared = ctx
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    let stateless = ctx
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    declared && !stateless
}

/// Asks the human to approve `plan` when `mode` says to: `Ok(None)` runs,
/// `Ok(Some(note))` reports a decline or cancel with nothing run, `Err`
/// is the call's error with nothing run.
pub(crate) async fn approve(
    mode: Elicit,
    ctx: &RequestContext<RoleServer>,
    wait: Duration,
    hangup: Option<watch::Receiver<bool>>,
    approvals: &tokio::sync::Semaphore,
    plan: WillRun,
) -> Result<Option<String>, String> {
    let ask = can_ask(ctx);
    match (mode, ask) {
        (Elicit::Off, _) | (Elicit::WhenDeclared, false) => return Ok(None),
        (Elicit::Required, false) => {
            return Err(
                "HTTP-009: over HTTP every run needs a human's approval through MCP \
                 elicitation, and this client cannot be asked: it did not declare the \
                 `elicitation` capability at initialize, or its request is a 2026-07-28 \
                 stateless one, which cannot carry a server-to-client request. Nothing was \
                 started. Open a 2025-11-25 session (initialize with \
                 capabilities.elicitation) and call skill_run in it, or run the script over \
                 stdio."
                    .to_owned(),
            );
        }
        (Elicit::WhenDeclared | Elicit::Required, true) => {}
    }
    // Each waiting call is a request in flight: held to a few, so calls a
    // person has not answered cannot take every slot of the server.
    let Ok(_waiting) = approvals.try_acquire() else {
        return Err(format!(
            "RUN-028: {MAX_PENDING_APPROVALS} runs are already waiting for a person's approval on this \
             server, its limit; nothing was started. Answer or dismiss those prompts, then call again."
        ));
    };
    let request = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(&plan),
        requested_schema: ElicitationSchema::builder().build_unchecked(),
    });
    let mut options = PeerRequestOptions::no_options();
    options.timeout = Some(wait);
    let asked = async {
        match ctx
            .peer
            .send_request_with_option(ServerRequest::ElicitRequest(request), options)
            .await
        {
            Ok(handle) => handle.await_response().await,
            Err(e) => Err(e),
        }
    };
    // An approval can only come from a client still there for the call:
    // one that cancelled it, or whose connection went (HTTP), or whose
    // input ended (stdio), gets nothing run, and an answer that comes
    // later starts nothing (RUN-028).
    let ended = async {
        match hangup {
            Some(mut h) => {
                let _ = h.wait_for(|gone| *gone).await;
            }
            None => std::future::pending().await,
        }
    };
    let answer = tokio::select! {
        a = asked => a,
        () = ctx.ct.cancelled() => {
            return Err(failed("the call was cancelled, or its client went away, before the user answered", wait));
        }
        () = ended => {
            return Err(failed("the client's input ended before the user answered", wait));
        }
    };
    let action = match answer {
        Ok(ClientResult::ElicitResult(r)) => r.action,
        Ok(_) => {
            return Err(failed(
                "the client answered with something other than an elicitation result",
                wait,
            ));
        }
        Err(ServiceError::Timeout { .. }) => {
            return Err(failed(
                &format!("no answer within {} s", wait.as_secs()),
                wait,
            ));
        }
        Err(e) => return Err(failed(&e.to_string(), wait)),
    };
    Ok(match action {
        ElicitationAction::Accept => None,
        ElicitationAction::Decline => Some(
            "RUN-028: the user declined this run when asked to approve it; nothing was \
             started. This is the plan they saw. Ask them before calling again."
                .to_owned(),
        ),
        ElicitationAction::Cancel => Some(
            "RUN-028: the user dismissed the approval without choosing; nothing was started. \
             This is the plan they were shown. Call again with confirm: true to ask once more."
                .to_owned(),
        ),
        // An action this server does not know is no approval.
        _ => {
            return Err(failed(
                "the client answered with an action other than accept",
                wait,
            ));
        }
    })
}

/// The error of an elicitation that got no answer (`why`): nothing ran.
fn failed(why: &str, wait: Duration) -> String {
    format!(
        "RUN-028: this run needs the user's approval, and asking for it failed ({why}; the \
         server waits {} s); nothing was started. Call skill_run again with \
         confirm: true when the user can answer.",
        wait.as_secs()
    )
}

/// The prompt: the exact plan the preview shows, variable names only,
/// with every control or invisible character but its own line breaks
/// escaped (as the log escapes them, SRV-010): a person decides on this
/// text, so an argument holding a line separator or a bidirectional
/// override cannot make it show what will not run.
fn message(plan: &WillRun) -> String {
    let text = plain_message(plan);
    if !text.chars().any(|c| c != '\n' && crate::echo::invisible(c)) {
        return text;
    }
    text.chars()
        .map(|c| {
            if c != '\n' && crate::echo::invisible(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn plain_message(plan: &WillRun) -> String {
    let names = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    format!(
        "Allow skill \"{}\" to run its script \"{}\"?\n\ninterpreter: {}\nargv: {}\ncwd: {}\n\
         timeout: {} s\nvariables handed to it (names only): {}\ngranted but not set: {}\n\n\
         Accept runs exactly this; decline or cancel runs nothing.",
        plan.skill,
        plan.script,
        plan.interpreter,
        serde_json::to_string(&plan.argv).unwrap_or_else(|_| format!("{:?}", plan.argv)),
        plan.cwd,
        plan.timeout_ms as f64 / 1000.0,
        names(&plan.env_names),
        names(&plan.env_not_set),
    )
}
