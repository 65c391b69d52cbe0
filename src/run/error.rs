//! Why a run is refused (RUN-001..RUN-008, RUN-011): each refusal names
//! the rule and the next step, and quotes no more of the script asked for
//! than an excerpt (HARD-005).

use std::fmt;

use crate::echo::excerpt;
use crate::fence::FenceError;
use crate::limits::{MAX_RUN_ARG_BYTES, MAX_RUN_ARGS};

/// Why a run was refused. Each message names the rule and the next step,
/// and quotes no more of the script asked for than an excerpt (HARD-005).
#[derive(Debug)]
pub(crate) enum RunError {
    /// Not in the skill's `mcp-host.run` block at all.
    NotDeclared {
        skill: String,
        script: String,
        declared: Vec<String>,
    },
    /// Declared, but the owner did not grant it.
    Ungranted {
        skill: String,
        script: String,
        grant_from: &'static str,
    },
    /// Declared and perhaps granted, but this deployment cannot run it.
    Unavailable {
        script: String,
        reason: String,
    },
    /// The path fence refused the script.
    Fence(FenceError),
    TooManyArgs {
        count: usize,
    },
    ArgsTooLarge {
        bytes: usize,
    },
    ArgNul {
        index: usize,
    },
    /// Another run holds the one-at-a-time lock.
    Busy,
    /// The interpreter could not be started.
    Spawn {
        script: String,
        error: std::io::Error,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::NotDeclared {
                skill,
                script,
                declared,
            } => {
                write!(
                    f,
                    "{} is not declared as a runnable script by the skill {skill:?}: only a script listed in \
                     the skill's mcp-host.run block may run. ",
                    excerpt(script)
                )?;
                if declared.is_empty() {
                    write!(f, "This skill declares none.")
                } else {
                    write!(f, "It declares: {}.", declared.join(", "))
                }
            }
            RunError::Ungranted {
                skill,
                script,
                grant_from,
            } => write!(
                f,
                "{} is declared by the skill {skill:?} but is not granted for this registration, so it may \
                 not run (grantFrom: {grant_from}). This is the owner's decision, not a typo: a script becomes \
                 runnable when MCP_SKILL_RUN grants it.",
                excerpt(script)
            ),
            RunError::Unavailable { script, reason } => write!(f, "{} {reason}", excerpt(script)),
            RunError::Fence(e) => write!(f, "{e}"),
            RunError::TooManyArgs { count } => {
                write!(
                    f,
                    "too many arguments: {count}, the cap is {MAX_RUN_ARGS}; pass a file path instead"
                )
            }
            RunError::ArgsTooLarge { bytes } => write!(
                f,
                "arguments total {bytes} bytes, over the {MAX_RUN_ARG_BYTES}-byte cap; pass a path rather than a payload"
            ),
            RunError::ArgNul { index } => write!(
                f,
                "argument {index} contains a NUL byte, which no argv can carry"
            ),
            RunError::Busy => write!(
                f,
                "another skill_run is already running on this server; it runs one script at a time. Wait for it \
                 to finish and call again."
            ),
            RunError::Spawn { script, error } => {
                write!(f, "could not start {}: {error}", excerpt(script))
            }
        }
    }
}

impl std::error::Error for RunError {}
