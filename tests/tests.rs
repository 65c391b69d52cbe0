//! The integration tests, one test binary with a module per file (issue 28
//! §6, ripgrep's layout): 42 binaries each linked the server's library and
//! dependencies on their own, which made linking most of the gate's build.
//! A test is named `file::test`; `.ci/test` selects by that prefix.
//!
//! A module is named for what it tests, never for how its tests were
//! found: an outside attack's tests join the modules of their subjects
//! (a new round on the HTTP door, its tests/http/ modules), and the
//! history that matters (issue, round, FOUND or HELD) stays in each
//! test's doc comment.

mod common;

/// The catalog is scanned once at boot, and nothing is written (DISC-016).
mod boot_once;
/// No reply quotes more than an excerpt of what a client sent (HARD-005).
mod bounded_echo;
/// CORS in headless Chromium (HTTP-017; a browser: left out with SKILL_MCP_CLIENTS=none).
mod browser;
/// The read caps hold while files change under a batch (READ-015).
mod caps_under_change;
/// `skill-mcp check`, the author linter, from outside (CHECK-*).
mod check_cli;
/// Claude Code as a client (CLIENT-001; a third-party client).
mod claude_code;
/// The whole conformance suite against the built server.
mod conformance;
/// Every door agrees on what exists and what may be read (READ-013, SKX-003, SKX-006).
mod doors;
/// Approving a run through elicitation over stdio (RUN-028).
mod elicit;
/// Variables that load code or weaken TLS never reach a script (DECL-006).
mod env_denylist;
/// Faults in scripts and in the machine each get a clear answer (HARD-003).
mod faults;
/// A skill author's frontmatter keys: named, placed, and costing only their bytes (FM-007).
mod frontmatter;
/// Bad lines from a client get errors and the server keeps serving (WIRE-001..WIRE-005).
mod hostile_clients;
/// Query answers and ranking against hostile authors, clients and models (LIST-019, SEARCH-*).
mod hostile_queries;
/// Hostile trees boot in bounded time, FIFOs and devices unopened (HARD-001, READ-012).
mod hostile_trees;
/// `--http` from outside; tests/http/ holds one module a room of src/http/.
mod http;
/// The Python and TypeScript SDKs over Streamable HTTP (third-party clients).
mod http_clients;
/// The team door: kept connections, repeated headers, bounds, token sources, encodings (issue 40).
mod http_door;
/// `subscriptions/listen` over HTTP (HTTP-012).
mod http_listen;
/// The MCP Inspector reads every skill and digest (SKX-010; a third-party client).
mod inspector;
/// An installed binary finds its bundled skills (CONF-005).
mod install_layout;
/// Large catalogs page within the answer budget (LIST-005..LIST-009).
mod large_catalog;
/// Query answers carry the matches and nothing else of the catalog (LIST-019).
mod lean_answers;
/// Nothing of the server, or of another skill, is reachable from a script (RUN-023..RUN-025).
mod nothing_reachable;
/// The server writes nothing, traced with strace (HARD-004; strace).
mod nothing_written;
/// Src/'s modules stack in floors and CONTRIBUTING's table says so.
mod one_way;
/// The package is what its files say (PKG-*).
mod packaging;
/// The parallel scan's catalog is the sequential scan's (DISC-017).
mod parallel_scan;
/// Progress tokens are bounded echoes (RUN-026).
mod progress_token;
/// The read caps bound allocation (READ-008).
mod read_memory;
/// Every README command is run and its figures are the code's (DOC-*).
mod readme;
/// The official Python SDK drives every surface (SRV-007; a third-party client).
mod real_client;
/// Reload under --watch and SIGHUP, watched by the Python SDK (RELOAD-*; a third-party client).
mod reload;
/// --watch follows roots deleted, recreated and re-pointed (RELOAD-008..RELOAD-012).
mod reload_roots;
/// Cursors across replicas behind nginx (LIST-018).
mod replicas;
/// A run's bounds measured from outside (RUN-009, RUN-010).
mod run_bounds;
/// Skill_list's query, with words and with a model (LIST-006, LIST-010..LIST-017).
mod search;
/// The JSON shapes of skill_list and skill_load, pinned.
mod shapes;
/// The Skills extension's digests (SKX-012..SKX-016).
mod skx_digests;
/// A skill with a file past 1 MiB is `dynamic`, its note within the budget (SKX-007, SKX-015).
mod skx_large_files;
/// Mistakes are said on stderr, escaped and bounded, and in the handshake (SRV-010, LIST-016, CONF-009).
mod speak_up;
/// Every requirement has its case or test.
mod spec_sync;
/// The conformance suite fails a server that breaks a rule.
mod suite_strength;
/// The typed stdio transport: ids, lifecycle, end of input (WIRE-006..WIRE-008).
mod transport;
/// Cancel and progress through the TypeScript SDK (RUN-021, RUN-022; a third-party client).
mod ts_sdk;
/// `skill://` URIs read by one set of rules on every door (READ-010, SKX-002, SKX-004).
mod uris;
/// The same bytes get the same answer over both doors, and kept requests are small (WIRE-*).
mod wire;
