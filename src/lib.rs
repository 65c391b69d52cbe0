//! skill-mcp: an MCP server that serves a directory of Agent Skills and
//! runs only the scripts a skill declares, behind a strict fence.
//!
//! Data flows one way: [`config`] (the environment, read once) →
//! [`settings`] (resolved from it and the command line, once) and
//! [`offer`] (what this process offers: runs, approvals) → [`catalog`]
//! (scanned, then immutable) → [`snapshot`] (the catalog with its grant
//! and the Skills extension's view: what every door reads) → the MCP
//! handlers in [`server`], the reloader in [`reload`] (which swaps whole
//! snapshots) and the author linter in [`check`] → the two doors of one
//! shape, [`stdio`] and [`http`].
//! [`frontmatter`] and [`declaration`] read SKILL.md strictly; [`fence`]
//! decides which paths may be read or run; [`grant`] decides which
//! declared scripts may run; [`run`] runs them, and [`harden`] keeps the
//! serving process itself out of their reach. Each module imports only
//! modules below it (README, "Architecture"; `tests/one_way.rs` keeps it
//! so); rule IDs in comments refer to `spec/`.
//!
//! The `pub` surface is named deliberately (issue 28 §6): a module or item
//! is `pub(crate)` unless the binary (`src/main.rs`), the integration
//! tests, the benches or the fuzz targets use it, so dead code shows up as
//! a warning instead of hiding behind an export.

mod bundle;
pub mod catalog;
pub mod check;
pub mod config;
mod cursor;
pub mod declaration;
pub mod echo;
pub mod fence;
pub mod frontmatter;
pub mod grant;
pub mod harden;
pub mod http;
mod interpreters;
pub mod limits;
pub mod offer;
pub mod problem;
mod read;
mod refusal;
pub mod reload;
pub mod run;
pub mod search;
pub mod server;
pub mod settings;
mod shapes;
mod skills_ext;
pub mod snapshot;
pub mod stdio;
pub mod transport;
mod uri;
