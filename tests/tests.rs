//! The integration tests, one test binary with a module per file (issue 28
//! §6, ripgrep's layout): 42 binaries each linked the server's library and
//! dependencies on their own, which made linking most of the gate's build.
//! A test is named `file::test`; `.ci/test` selects by that prefix.

mod common;

mod attack_door;
mod attack_door2;
mod attack_door3;
mod attack_door4;
mod attack_door5;
mod attack_fence_open;
mod attack_http;
mod attack_issue26;
mod attack_issue27_30;
mod attack_issue30_newcomer;
mod attack_ping_2026;
mod attack_sessions;
mod attack_transport;
mod attack_wire_twice;
mod boot_once;
mod bounded_echo;
mod browser;
mod caps_under_change;
mod check_cli;
mod claude_code;
mod conformance;
mod doors;
mod elicit;
mod env_denylist;
mod faults;
mod hostile_clients;
mod hostile_trees;
mod http;
mod http_clients;
mod http_door;
mod http_listen;
mod inspector;
mod install_layout;
mod large_catalog;
mod nothing_reachable;
mod nothing_written;
mod one_way;
mod packaging;
mod parallel_scan;
mod progress_token;
mod read_memory;
mod readme;
mod real_client;
mod reload;
mod reload_roots;
mod replicas;
mod run_bounds;
mod search;
mod shapes;
mod skx_digests;
mod speak_up;
mod spec_sync;
mod suite_strength;
mod transport;
mod ts_sdk;
