//! skill-mcp: an MCP server that serves a directory of Agent Skills and
//! runs only the scripts a skill declares, behind a strict fence.
//!
//! Data flows one way: [`config`] (the environment, read once) →
//! [`catalog`] (scanned once at boot, immutable) → [`server`] handlers.
//! [`frontmatter`] and [`declaration`] read SKILL.md strictly; [`fence`]
//! decides which paths may be read or run; [`grant`] decides which
//! declared scripts may run; rule IDs in comments refer to `spec/`.

pub mod bundle;
pub mod catalog;
pub mod check;
pub mod config;
pub mod declaration;
pub mod fence;
pub mod frontmatter;
pub mod grant;
pub mod interpreters;
pub mod limits;
pub mod problem;
pub mod read;
pub mod reload;
pub mod run;
pub mod server;
pub mod skills_ext;
pub mod stdio;
