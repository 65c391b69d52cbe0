//! The MCP Skills extension's view of the catalog (SEP-2640,
//! `io.modelcontextprotocol/skills`), built with each snapshot: which
//! skills that door serves (SKX-006: SEP-2640's own rules, the rest
//! reported as problems), and the digests it hands out. What exists and
//! what may be read is decided by `catalog` and `fence` exactly as for the
//! tools. The door itself — `skills/list`, `skills/get` and
//! `resources/directory/read` in rmcp's model types — is `server::skills`;
//! this module names no rmcp type (issue 28 §6, SRV-011).
//!
//! Digests are `sha256:` of each file's exact bytes, computed on first
//! use on the digest pool ([`spawn`], never the blocking threads reads
//! share), at most [`SKX_MAX_SKILL_BYTES`] for one skill per request, and
//! kept for the life of the snapshot: 32 bytes and an 8-byte validity key
//! a file, in a table per skill made when that skill is first asked for,
//! beside SKILL.md's frontmatter as compact JSON under SKILL.md's key.
//! A kept digest (or frontmatter) is handed out after one `stat` of its
//! file shows the same validity key (device, inode, size, mtime and
//! ctime), so a rewrite — even at the same size with its mtime put back —
//! is read again rather than served from what was kept (SKX-014, SKX-017).
//! Nothing is written to disk: the README's "caches nothing" is about disk.
//!
//! One file a concern: which skills are served and why the others are not
//! (`eligibility.rs`), their URIs (`uris.rs`), the view and what it keeps
//! (`view.rs`), SKILL.md's frontmatter as carried (`front.rs`), when a
//! skill is `dynamic` (`dynamic.rs`), digests and hashing (`digests.rs`),
//! and the pool they are computed on (`pool.rs`).

use std::sync::atomic::AtomicBool;

mod digests;
mod dynamic;
mod eligibility;
mod front;
mod pool;
mod uris;
mod view;

pub(crate) use pool::{Take, in_order, spawn};
pub(crate) use uris::skill_uri;
pub(crate) use view::SkillsView;
// What the door's tests (`server::skills`) hold against rmcp's own rules.
#[cfg(test)]
pub(crate) use {digests::shown, dynamic::resource_json_len, eligibility::eligibility};

/// One served skill as this door hands it out: SKILL.md's frontmatter as
/// compact JSON (`{"name":…,"description":…,…}`, SKX-001) and its files.
#[derive(Debug)]
pub(crate) struct Carried {
    pub(crate) front: String,
    pub(crate) manifest: Manifest,
}

/// Why a carried skill cannot be handed out now (SKX-011).
#[derive(Debug)]
pub(crate) enum Unservable {
    /// SKILL.md was edited since the scan so that SEP-2640 cannot carry it
    /// under its scanned name; why, in words.
    Changed(String),
    /// One of its files can no longer be stat'ed, opened or read.
    Files(String),
    /// Asked for with [`Reach::Kept`], it has a file to read or hash.
    NotKept,
}

/// How far a request goes for an entry (SKX-012, SKX-017).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reach<'a> {
    /// Its stats and what is kept, nothing else: a file to read or hash
    /// ends the attempt with [`Unservable::NotKept`]. Work this small is
    /// answered where the request arrived, without the pool's hop.
    Kept,
    /// Read and hash what is not kept (on the digest pool); the flag
    /// turning true (SRV-009) ends the work at the next chunk.
    Read(&'a AtomicBool),
}

/// A served skill's files as this door hands them out (SKX-013).
#[derive(Debug)]
pub(crate) enum Manifest {
    /// `(size, "sha256:…")` of each manifest file, in manifest order.
    Files(Vec<(u64, String)>),
    /// The skill is served with `resources: "dynamic"`; why, in words.
    Dynamic(String),
}
