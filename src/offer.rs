//! What this process offers a client, decided once at boot from the
//! command line and the settings (issue 42 §2): whether scripts may run at
//! all, whether a confirmed run asks a person first, and how long it
//! waits for them. The router, the interpreters' listing and the HTTP door
//! all read this one value; nothing decides it again.

use std::time::Duration;

/// Why a script cannot run over HTTP unless the owner offers runs: each
/// listed script says so instead of looking runnable (HTTP-009).
pub const RUNS_OFF: &str = "skill_run is not offered over HTTP on this server (HTTP-009): its owner can offer runs with --http-allow-run";

/// When a confirmed run asks a human first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elicit {
    /// Never: the owner turned it off (`--no-elicit`); `confirm: true` runs.
    Off,
    /// When the client declared the capability (stdio's default).
    WhenDeclared,
    /// Always: a client that cannot be asked is refused (HTTP-009).
    Required,
}

/// What this process offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Why no script may run here at all, when none is offered (HTTP-009);
    /// `None` lets the grant and the interpreter set decide.
    pub(crate) runs_off: Option<&'static str>,
    /// When a confirmed run asks a human first (RUN-028).
    pub(crate) elicit: Elicit,
    /// How long that approval is waited for (RUN-028).
    pub(crate) elicit_timeout: Duration,
}

impl Offer {
    /// Over stdio: runs as the grant allows, a confirmed one approved
    /// through elicitation when the client can be asked, unless the owner
    /// said `--no-elicit` (their host's own prompt shows the call).
    pub fn stdio(no_elicit: bool, elicit_timeout: Duration) -> Offer {
        Offer {
            runs_off: None,
            elicit: if no_elicit {
                Elicit::Off
            } else {
                Elicit::WhenDeclared
            },
            elicit_timeout,
        }
    }

    /// Over HTTP (HTTP-009): no run unless the owner offers runs with
    /// `--http-allow-run`, and then every one a person's to approve
    /// (RUN-028), since anyone who can reach the URL could ask for one.
    pub fn http(allow_run: bool, elicit_timeout: Duration) -> Offer {
        Offer {
            runs_off: (!allow_run).then_some(RUNS_OFF),
            elicit: Elicit::Required,
            elicit_timeout,
        }
    }

    /// Whether `skill_run` is offered at all.
    pub fn runs(&self) -> bool {
        self.runs_off.is_none()
    }
}
