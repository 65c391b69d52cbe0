//! Reading a skill's bundled files: `skill_file`, single and batch, and the
//! bytes behind every `skill://` resource — one code path, so every door
//! gets the same fence, the same caps and the same encoding decision.
//!
//! README "The tools": "At most 1 MiB, `truncated: true` rather than a
//! silent cut"; the batch is "8 paths per call, 1 MiB per entry, 4 MiB per
//! call, one bad path failing only its own slot". The caps bound this
//! process's allocation: a batch is sized from the opened descriptors
//! before a byte is read, so the answer never depends on path order and a
//! 300 MiB file costs at most 1 MiB (spec READ-001..READ-009). Each file is
//! then read for no more than it was sized at, and a file that changes
//! while it is read fails its own slot, so the 4 MiB holds for the bytes
//! actually read and every `size` served is true of the bytes beside it
//! (READ-015).

use std::path::Path;

use base64::Engine;

use crate::fence::{self, FenceError, Opened};
use crate::limits::{MAX_BATCH_BYTES, MAX_BATCH_PATHS, MAX_FILE_BYTES};
use crate::read;

/// Extension → media type for what skill bundles carry; anything else is
/// `application/octet-stream`. The type never decides the encoding.
pub(crate) fn media_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = match name.rfind('.') {
        Some(i) if i > 0 => name[i + 1..].to_ascii_lowercase(),
        _ => String::new(),
    };
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "csv" => "text/csv",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" => "text/typescript",
        "py" => "text/x-python",
        "sh" => "application/x-sh",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "xml" | "xsd" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// How an entry's content travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// The bytes are valid UTF-8 with no NUL: served as text, unchanged.
    Utf8,
    /// Anything else: standard padded base64, never mangled into text.
    Base64,
}

impl Encoding {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Base64 => "base64",
        }
    }
}

/// One file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Served {
    pub(crate) path: String,
    /// The file's full size, even when only the first 1 MiB is served: its
    /// length when opened, which it still had after the read (READ-015).
    pub(crate) size: u64,
    pub(crate) media_type: &'static str,
    pub(crate) encoding: Encoding,
    pub(crate) truncated: bool,
    pub(crate) content: String,
}

impl Served {
    /// The note a truncated entry carries.
    pub(crate) fn truncation_note(&self) -> Option<String> {
        self.truncated.then(|| {
            format!(
                "The file is {} bytes; the first {MAX_FILE_BYTES} are returned.",
                self.size
            )
        })
    }
}

/// Decides the encoding and renders the content.
pub(crate) fn encode(bytes: Vec<u8>) -> (Encoding, String) {
    if !bytes.contains(&0) {
        match String::from_utf8(bytes) {
            Ok(text) => return (Encoding::Utf8, text),
            Err(e) => {
                return (
                    Encoding::Base64,
                    base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
                );
            }
        }
    }
    (
        Encoding::Base64,
        base64::engine::general_purpose::STANDARD.encode(bytes),
    )
}

fn read_opened(path: &str, opened: Opened) -> Result<Served, FenceError> {
    let capped =
        read::read_capped(&opened.file, &opened.meta, MAX_FILE_BYTES).map_err(|error| {
            FenceError::Io {
                path: path.to_owned(),
                error: error.into(),
            }
        })?;
    let (encoding, content) = encode(capped.bytes);
    Ok(Served {
        path: path.to_owned(),
        size: capped.size,
        media_type: media_type(path),
        encoding,
        truncated: capped.truncated,
        content,
    })
}

/// Reads one file through the fence (READ-001, READ-003, READ-004).
pub(crate) fn read_one(skill_dir: &Path, path: &str) -> Result<Served, FenceError> {
    read_one_with(skill_dir, path, |_| ()).map(|(served, ())| served)
}

/// As [`read_one`], and also asks `look` about the opened file's own
/// metadata (the descriptor read, not a second stat of the name).
pub(crate) fn read_one_with<T>(
    skill_dir: &Path,
    path: &str,
    look: impl FnOnce(&std::fs::Metadata) -> T,
) -> Result<(Served, T), FenceError> {
    let opened = fence::open(skill_dir, path)?;
    let seen = look(&opened.meta);
    Ok((read_opened(path, opened)?, seen))
}

/// Why a whole batch is refused (no slot to report it in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BatchError {
    Empty,
    TooMany { asked: usize },
    TooLarge { paths: usize, bytes: u64 },
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchError::Empty => write!(
                f,
                "\"paths\" is empty: name between 1 and {MAX_BATCH_PATHS} paths"
            ),
            BatchError::TooMany { asked } => write!(
                f,
                "{asked} paths asked for; one skill_file call reads at most {MAX_BATCH_PATHS} (batch limit). Split the call."
            ),
            BatchError::TooLarge { paths, bytes } => write!(
                f,
                "those {paths} paths would return {bytes} bytes, over this call's {MAX_BATCH_BYTES}-byte limit \
                 (each file counts as at most {MAX_FILE_BYTES} bytes). Ask for fewer files in one call, or read the \
                 largest on its own; skill_load lists every file with its size."
            ),
        }
    }
}

impl std::error::Error for BatchError {}

/// Reads a batch (READ-005..READ-007): every path is opened and sized
/// first, the total of what would be served is checked against the call's
/// limit, and only then is anything read — each file for no more than it
/// was sized at, so the limit bounds the bytes read even when the files
/// grow meanwhile (READ-015). Entries come back in request order; a bad
/// path, or a file that changed while it was read, fails only its own slot.
pub(crate) fn read_batch(
    skill_dir: &Path,
    paths: &[String],
) -> Result<Vec<Result<Served, FenceError>>, BatchError> {
    if paths.is_empty() {
        return Err(BatchError::Empty);
    }
    if paths.len() > MAX_BATCH_PATHS {
        return Err(BatchError::TooMany { asked: paths.len() });
    }
    let planned: Vec<Result<Opened, FenceError>> =
        paths.iter().map(|p| fence::open(skill_dir, p)).collect();
    let total: u64 = planned
        .iter()
        .flatten()
        .map(|o| o.meta.len().min(MAX_FILE_BYTES as u64))
        .sum();
    if total > MAX_BATCH_BYTES as u64 {
        return Err(BatchError::TooLarge {
            paths: paths.len(),
            bytes: total,
        });
    }
    Ok(paths
        .iter()
        .zip(planned)
        .map(|(path, opened)| opened.and_then(|o| read_opened(path, o)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_follow_the_extension_only() {
        assert_eq!(media_type("a/b.MD"), "text/markdown");
        assert_eq!(media_type("scripts/run.js"), "text/javascript");
        assert_eq!(media_type(".env"), "application/octet-stream");
        assert_eq!(media_type("a.b/c"), "application/octet-stream");
        assert_eq!(media_type("x.constructor"), "application/octet-stream");
    }

    #[test]
    fn encoding_is_decided_by_the_bytes() {
        assert_eq!(encode(b"plain".to_vec()), (Encoding::Utf8, "plain".into()));
        assert_eq!(encode("\u{feff}bom".as_bytes().to_vec()).0, Encoding::Utf8);
        assert_eq!(
            encode(b"nul\0byte".to_vec()),
            (Encoding::Base64, "bnVsAGJ5dGU=".into())
        );
        assert_eq!(
            encode(b"\xff\xfe".to_vec()),
            (Encoding::Base64, "//4=".into())
        );
        assert_eq!(encode(Vec::new()), (Encoding::Utf8, String::new()));
    }

    #[test]
    fn a_batch_is_sized_before_reading_and_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        let skill = std::fs::canonicalize(dir.path()).unwrap();
        let f = std::fs::File::create(skill.join("big")).unwrap();
        f.set_len(300 * 1024 * 1024).unwrap();
        std::fs::write(skill.join("small"), "x").unwrap();
        let four: Vec<String> = vec!["big".into(); 4];
        assert!(
            read_batch(&skill, &four).is_ok(),
            "4 × 1 MiB is exactly the limit"
        );
        let mut five = four.clone();
        five.push("small".into());
        assert_eq!(
            read_batch(&skill, &five).unwrap_err(),
            BatchError::TooLarge {
                paths: 5,
                bytes: 4 * 1024 * 1024 + 1
            }
        );
        five.reverse();
        assert!(
            read_batch(&skill, &five).is_err(),
            "order does not change the verdict"
        );
        let nine: Vec<String> = vec!["small".into(); 9];
        assert_eq!(
            read_batch(&skill, &nine).unwrap_err(),
            BatchError::TooMany { asked: 9 }
        );
    }

    #[test]
    fn one_bad_path_fails_only_its_slot() {
        let dir = tempfile::tempdir().unwrap();
        let skill = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(skill.join("a"), "A").unwrap();
        std::fs::write(skill.join("c"), "C").unwrap();
        let got = read_batch(&skill, &["a".into(), "missing".into(), "c".into()]).unwrap();
        assert_eq!(got[0].as_ref().unwrap().content, "A");
        assert!(matches!(got[1], Err(FenceError::NotFound { .. })));
        assert_eq!(got[2].as_ref().unwrap().content, "C");
    }
}
