//! The measurements, one module per phase `--only` names (boot, trips,
//! run, mixed, rescan, skills-ext, search, http, http-peer, door). Each spawns its own servers over a tree and adds its
//! rows, with their targets, to the table.

pub mod boot;
pub mod door;
pub mod http;
pub mod http_peer;
pub mod mixed;
pub mod rescan;
pub mod run;
pub mod search;
pub mod skx;
pub mod trips;
