//! Steps (FORMAT.md, *Steps*): what is sent to the server, in order, read
//! by one serde type per kind of step.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::entry::{one_kind, present, read_entry};
use super::setup::SetupAction;
use crate::redact::{Redaction, parse_redactions};

/// Default wait for a reply.
pub const DEFAULT_TIMEOUT_MS: u64 = 20_000;
/// Largest `sleep_ms` or `timeout_ms` accepted (the per-case deadline bounds them anyway).
pub const MAX_WAIT_MS: u64 = 600_000;

#[derive(Clone, Debug, PartialEq)]
pub enum StepKind {
    Request {
        method: String,
        params: Option<Value>,
    },
    Notify {
        method: String,
        params: Option<Value>,
    },
    Raw {
        text: String,
        reply: bool,
        /// Keep the reply's `id` in the record: the raw line chose it, not
        /// the runner (for cases about ids themselves).
        keep_id: bool,
    },
    Sleep {
        ms: u64,
    },
    /// Setup actions run while the server runs.
    Act {
        actions: Vec<SetupAction>,
    },
    /// Requests sent together before any reply is awaited; the recorded
    /// reply is `{"replies": [...]}` in the order sent.
    Concurrent {
        requests: Vec<(String, Option<Value>)>,
    },
    /// A request cancelled with `notifications/cancelled` `after_ms` after
    /// it was sent; the recorded reply is `{"replied": false}` when nothing
    /// answers it within `quiet_ms`, else `{"replied": REPLY}`.
    Cancel {
        method: String,
        params: Option<Value>,
        after_ms: u64,
        quiet_ms: u64,
    },
}

/// What the core profile does with a step (FORMAT.md, *Core expectations*).
#[derive(Clone, Debug, PartialEq)]
pub enum CoreStep {
    /// A step without a reply (notify, sleep, act, a raw line): sent, and
    /// nothing to check.
    Sent,
    /// Sent, and its reply's core view must match this pattern.
    Expect(Value),
    /// Not sent in the core profile (only this implementation answers it).
    Skip,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub kind: StepKind,
    pub timeout_ms: u64,
    pub redact: Vec<Redaction>,
    pub core: CoreStep,
    /// `"progress": "ask"`: the request carries a progress token, and its
    /// recorded reply gains a `progress` summary of what that token got;
    /// `"listen"`: no token, and the summary counts every progress
    /// notification in the same window (there should be none).
    pub progress: Option<Progress>,
}

#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Progress {
    Ask,
    Listen,
}

impl Step {
    /// Whether this step records a reply.
    pub fn expects_reply(&self) -> bool {
        matches!(
            self.kind,
            StepKind::Request { .. }
                | StepKind::Raw { reply: true, .. }
                | StepKind::Concurrent { .. }
                | StepKind::Cancel { .. }
        )
    }

    pub fn describe(&self) -> String {
        match &self.kind {
            StepKind::Request { method, .. } => format!("request {method}"),
            StepKind::Notify { method, .. } => format!("notify {method}"),
            StepKind::Raw { reply: true, .. } => "raw (reply)".to_string(),
            StepKind::Raw { .. } => "raw".to_string(),
            StepKind::Sleep { ms } => format!("sleep {ms} ms"),
            StepKind::Act { actions } => format!("act ({} actions)", actions.len()),
            StepKind::Concurrent { requests } => {
                format!("concurrent ({} requests)", requests.len())
            }
            StepKind::Cancel {
                method, after_ms, ..
            } => {
                format!("request {method}, cancelled after {after_ms} ms")
            }
        }
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let obj = Map::<String, Value>::deserialize(d)?;
        from_entry(obj).map_err(serde::de::Error::custom)
    }
}

/// The step an entry names by its one kind key, read as that kind.
fn from_entry(obj: Map<String, Value>) -> Result<Step, String> {
    const KINDS: [&str; 7] = [
        "request",
        "notify",
        "raw",
        "sleep_ms",
        "act",
        "concurrent",
        "cancel",
    ];
    match one_kind(&obj, &KINDS, "step")? {
        "request" => read_entry::<Request>(obj)?.step(),
        "notify" => {
            let e: Notify = read_entry(obj)?;
            Ok(plain(StepKind::Notify {
                method: e.notify.0,
                params: e.params.map(|p| p.0),
            }))
        }
        "raw" => read_entry::<Raw>(obj)?.step(),
        "sleep_ms" => {
            let e: Sleep = read_entry(obj)?;
            Ok(plain(StepKind::Sleep { ms: e.sleep_ms.0 }))
        }
        "act" => {
            let e: Act = read_entry(obj)?;
            Ok(plain(StepKind::Act { actions: e.act }))
        }
        "concurrent" => read_entry::<Concurrent>(obj)?.step(),
        _ => read_entry::<Cancel>(obj)?.step(),
    }
}

/// A step with nothing but its kind: the default wait, nothing redacted.
fn plain(kind: StepKind) -> Step {
    Step {
        kind,
        timeout_ms: DEFAULT_TIMEOUT_MS,
        redact: Vec::new(),
        core: CoreStep::Sent,
        progress: None,
    }
}

/// What a step with a reply may add: its wait, its redactions and its
/// core expectation.
struct Reading {
    timeout_ms: Option<Timeout>,
    redact: Option<Value>,
    expect: Option<Value>,
    core: Option<Skip>,
}

impl Reading {
    fn step(self, kind: StepKind, progress: Option<Progress>) -> Result<Step, String> {
        let core = match (self.expect, self.core) {
            (Some(_), Some(_)) => {
                return Err("a step has `expect` or \"core\": \"skip\", not both".to_string());
            }
            (Some(p), None) => {
                crate::expect::validate(&p).map_err(|e| format!("expect: {e}"))?;
                CoreStep::Expect(p)
            }
            (None, Some(Skip::Skip)) => CoreStep::Skip,
            (None, None) => CoreStep::Sent,
        };
        Ok(Step {
            kind,
            timeout_ms: self.timeout_ms.map_or(DEFAULT_TIMEOUT_MS, |t| t.0),
            redact: match &self.redact {
                None => Vec::new(),
                Some(r) => parse_redactions(r)?,
            },
            core,
            progress,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    request: Method,
    #[serde(default, deserialize_with = "present")]
    params: Option<Params>,
    #[serde(default, deserialize_with = "present")]
    timeout_ms: Option<Timeout>,
    #[serde(default, deserialize_with = "present")]
    redact: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    expect: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    core: Option<Skip>,
    #[serde(default, deserialize_with = "present")]
    progress: Option<Progress>,
}

impl Request {
    fn step(self) -> Result<Step, String> {
        let reading = Reading {
            timeout_ms: self.timeout_ms,
            redact: self.redact,
            expect: self.expect,
            core: self.core,
        };
        let kind = StepKind::Request {
            method: self.request.0,
            params: self.params.map(|p| p.0),
        };
        reading.step(kind, self.progress)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Notify {
    notify: Method,
    #[serde(default, deserialize_with = "present")]
    params: Option<Params>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    raw: String,
    #[serde(default, deserialize_with = "present")]
    reply: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    keep_id: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    timeout_ms: Option<Timeout>,
    #[serde(default, deserialize_with = "present")]
    redact: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    expect: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    core: Option<Skip>,
}

impl Raw {
    fn step(self) -> Result<Step, String> {
        let reply = self.reply.unwrap_or(false);
        if !reply && (self.timeout_ms.is_some() || self.redact.is_some() || self.keep_id.is_some())
        {
            return Err(
                "`timeout_ms`, `redact` and `keep_id` only apply to a raw step with \"reply\": true"
                    .to_string(),
            );
        }
        let reading = Reading {
            timeout_ms: self.timeout_ms,
            redact: self.redact,
            expect: self.expect,
            core: self.core,
        };
        let kind = StepKind::Raw {
            text: self.raw,
            reply,
            keep_id: self.keep_id.unwrap_or(false),
        };
        reading.step(kind, None)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Sleep {
    sleep_ms: Wait,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Act {
    act: Vec<SetupAction>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Concurrent {
    concurrent: Together,
    #[serde(default, deserialize_with = "present")]
    timeout_ms: Option<Timeout>,
    #[serde(default, deserialize_with = "present")]
    redact: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    expect: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    core: Option<Skip>,
}

impl Concurrent {
    fn step(self) -> Result<Step, String> {
        let reading = Reading {
            timeout_ms: self.timeout_ms,
            redact: self.redact,
            expect: self.expect,
            core: self.core,
        };
        let requests = self
            .concurrent
            .0
            .into_iter()
            .map(|r| (r.request.0, r.params.map(|p| p.0)))
            .collect();
        reading.step(StepKind::Concurrent { requests }, None)
    }
}

/// The requests of a `concurrent` step: at least two, or nothing is
/// concurrent.
#[derive(Deserialize)]
#[serde(try_from = "Vec<OneRequest>")]
struct Together(Vec<OneRequest>);

impl TryFrom<Vec<OneRequest>> for Together {
    type Error = &'static str;
    fn try_from(list: Vec<OneRequest>) -> Result<Self, Self::Error> {
        if list.len() < 2 {
            return Err("must be a list of at least two requests");
        }
        Ok(Together(list))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OneRequest {
    request: Method,
    #[serde(default, deserialize_with = "present")]
    params: Option<Params>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cancel {
    cancel: Method,
    #[serde(default, deserialize_with = "present")]
    params: Option<Params>,
    after_ms: Wait,
    quiet_ms: Wait,
    #[serde(default, deserialize_with = "present")]
    redact: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    core: Option<Skip>,
}

impl Cancel {
    fn step(self) -> Result<Step, String> {
        let reading = Reading {
            timeout_ms: None,
            redact: self.redact,
            expect: None,
            core: self.core,
        };
        let kind = StepKind::Cancel {
            method: self.cancel.0,
            params: self.params.map(|p| p.0),
            after_ms: self.after_ms.0,
            quiet_ms: self.quiet_ms.0,
        };
        reading.step(kind, None)
    }
}

/// `"core": "skip"`, the one value `core` takes.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Skip {
    Skip,
}

/// A method name: never empty.
#[derive(Deserialize)]
#[serde(try_from = "String")]
struct Method(String);

impl TryFrom<String> for Method {
    type Error = &'static str;
    fn try_from(m: String) -> Result<Self, Self::Error> {
        if m.is_empty() {
            return Err("the method is empty");
        }
        Ok(Method(m))
    }
}

/// A request's params: an object, whose `_meta` (if any) is an object.
#[derive(Deserialize)]
#[serde(try_from = "Value")]
struct Params(Value);

impl TryFrom<Value> for Params {
    type Error = String;
    fn try_from(v: Value) -> Result<Self, String> {
        let Value::Object(m) = &v else {
            return Err(format!("must be an object, got {v}"));
        };
        if let Some(meta) = m.get("_meta")
            && !meta.is_object()
        {
            return Err(format!("`_meta` must be an object, got {meta}"));
        }
        Ok(Params(v))
    }
}

/// How long a step waits for its reply: 1 ms to [`MAX_WAIT_MS`].
#[derive(Deserialize)]
#[serde(try_from = "u64")]
struct Timeout(u64);

impl TryFrom<u64> for Timeout {
    type Error = String;
    fn try_from(n: u64) -> Result<Self, String> {
        if n == 0 || n > MAX_WAIT_MS {
            return Err(format!(
                "must be a whole number from 1 to {MAX_WAIT_MS}, got {n}"
            ));
        }
        Ok(Timeout(n))
    }
}

/// A pause (`sleep_ms`, a cancel's `after_ms` and `quiet_ms`): 0 to
/// [`MAX_WAIT_MS`].
#[derive(Deserialize)]
#[serde(try_from = "u64")]
struct Wait(u64);

impl TryFrom<u64> for Wait {
    type Error = String;
    fn try_from(n: u64) -> Result<Self, String> {
        if n > MAX_WAIT_MS {
            return Err(format!(
                "must be a whole number from 0 to {MAX_WAIT_MS}, got {n}"
            ));
        }
        Ok(Wait(n))
    }
}
