//! Optional ranking by meaning for `query` (spec LIST-017): when the owner
//! points `SKILL_MCP_EMBEDDINGS` at a local model2vec model, each skill's
//! name, description and when-to-use become one vector, and a query finds
//! the skills nearest to it in meaning besides those sharing its words.
//!
//! Why: measured on the repository's evaluation set (BENCHMARKS.md), the
//! paraphrases that miss ("rented graphics cards" for `modal`) share no
//! word with their skill, so no lexical rule finds them. A static
//! embedding (a token table, averaged) costs a lookup per token, needs no
//! runtime, and is loaded from files the owner placed: nothing is fetched,
//! ever — model2vec-rs is built without its Hub client.
//!
//! The model is untrusted input like any file: each file is read bounded
//! ([`MAX_MODEL_FILE_BYTES`]), and a model whose tokenizer and table
//! disagree (model2vec-rs panics on a token id past the table) is refused
//! at load, or, failing later, drops back to words alone for that query.
//! So is a table that loads but cannot rank (SEARCH-005): a NaN or an
//! infinity in any row, or more than 5% of its rows all zero.

use std::fs::File;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use model2vec_rs::model::StaticModel;

use crate::limits::MAX_MODEL_FILE_BYTES;

/// The files of a model directory (model2vec's layout). `config.json` may
/// be absent: its one setting read here, `normalize`, defaults to true.
const TOKENIZER: &str = "tokenizer.json";
const TABLE: &str = "model.safetensors";
const CONFIG: &str = "config.json";

/// Why a model directory cannot be used; the rest of the server does not
/// care, so the message names the rule, the file and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelError(pub String);

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A loaded static embedding model.
pub(crate) struct Model {
    inner: StaticModel,
    dir: PathBuf,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("dir", &self.dir)
            .field("dim", &self.inner.dim())
            .finish()
    }
}

/// `file` of `dir`, read whole if it is a regular file of at most
/// [`MAX_MODEL_FILE_BYTES`]; `Ok(None)` when it does not exist.
///
/// Opened `O_NONBLOCK` and checked with `fstat` before a byte is read, as
/// the fence opens skills' files: a FIFO in the directory cannot hang the
/// boot, and a device (`/dev/zero`) is refused, not read to the bound.
/// Symlinks are followed: a model in a Hugging Face cache is links to blobs.
fn read_bounded(dir: &Path, file: &str) -> Result<Option<Vec<u8>>, ModelError> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(file);
    let cannot = |what: &str, e: &dyn std::fmt::Display| {
        ModelError(format!(
            "{} could not be {what}: {e} (LIST-017); query ranks by words alone",
            path.display()
        ))
    };
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot("opened", &e)),
    };
    let meta = f.metadata().map_err(|e| cannot("read", &e))?;
    if !meta.is_file() {
        return Err(ModelError(format!(
            "{} is not a regular file (LIST-017): a model's files are plain files; query ranks by words alone",
            path.display()
        )));
    }
    if meta.len() > MAX_MODEL_FILE_BYTES {
        return Err(too_big(&path));
    }
    let mut bytes = Vec::new();
    File::take(f, MAX_MODEL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot("read", &e))?;
    if bytes.len() as u64 > MAX_MODEL_FILE_BYTES {
        return Err(too_big(&path));
    }
    Ok(Some(bytes))
}

fn too_big(path: &Path) -> ModelError {
    ModelError(format!(
        "{} is over {} MiB, the most a model file may be (LIST-017): give a static embedding (model2vec), not a full model; query ranks by words alone",
        path.display(),
        MAX_MODEL_FILE_BYTES >> 20
    ))
}

/// The directory itself: a path that is not there (often a `~` no shell
/// expanded, CONF-009) says so, rather than that a file in it is missing.
fn directory_exists(dir: &Path) -> Result<(), ModelError> {
    let tilde = if dir.starts_with("~") {
        " (`~` is not expanded: write the full path)"
    } else {
        ""
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(ModelError(format!(
            "SKILL_MCP_EMBEDDINGS {} is not a directory (LIST-017): it names a model2vec directory; query ranks by words alone",
            dir.display()
        ))),
        Err(e) => Err(ModelError(format!(
            "SKILL_MCP_EMBEDDINGS {} does not exist or cannot be read: {e}{tilde} (LIST-017); query ranks by words alone",
            dir.display()
        ))),
    }
}

impl Model {
    /// Loads the model2vec model in `dir`: `tokenizer.json` and
    /// `model.safetensors` (its table as the tensor `embeddings`), and
    /// `config.json` when present.
    pub(crate) fn load(dir: &Path) -> Result<Model, ModelError> {
        directory_exists(dir)?;
        let need = |file: &str| -> Result<Vec<u8>, ModelError> {
            read_bounded(dir, file)?.ok_or_else(|| {
                ModelError(format!(
                    "{} has no {file}: SKILL_MCP_EMBEDDINGS names a model2vec directory (tokenizer.json, model.safetensors, optional config.json) (LIST-017); query ranks by words alone",
                    dir.display()
                ))
            })
        };
        let tokenizer = need(TOKENIZER)?;
        let table = need(TABLE)?;
        let config = read_bounded(dir, CONFIG)?.unwrap_or_else(|| b"{}".to_vec());
        let refused = |why: String| {
            ModelError(format!(
                "the model in {} could not be loaded: {why} (LIST-017); query ranks by words alone",
                dir.display()
            ))
        };
        // A tokenizer whose ids run past the table makes the library panic
        // on the first text holding such a token: refuse it here instead.
        table_covers_vocabulary(&tokenizer, &table).map_err(refused)?;
        // A table of NaN, infinities or zeros loads and ranks nothing by
        // meaning (one NaN row made "automobile" rank `fruit` first): it
        // is refused here, naming its bad rows (SEARCH-005).
        table_is_usable(&table).map_err(|why| {
            ModelError(format!(
                "{} cannot rank by meaning: {why} (SEARCH-005, LIST-017); query ranks by words alone",
                dir.join(TABLE).display()
            ))
        })?;
        let inner = catch_unwind(AssertUnwindSafe(|| {
            StaticModel::from_bytes(tokenizer, table, config, None)
        }))
        .map_err(|_| refused("the loader failed on its files".into()))?
        .map_err(|e| refused(format!("{e:#}")))?;
        if inner.dim() == 0 {
            return Err(refused("its vectors have no dimensions".into()));
        }
        Ok(Model {
            inner,
            dir: dir.to_path_buf(),
        })
    }

    /// The unit vector of `text`, or `None` when it has none (no token the
    /// model knows) or the library failed on it.
    pub(crate) fn vector(&self, text: &str) -> Option<Vec<f32>> {
        let mut v = catch_unwind(AssertUnwindSafe(|| self.inner.encode_single(text))).ok()?;
        unit(&mut v).then_some(v)
    }

    /// The vectors of `texts`, one row each, `dim` floats a row; a text
    /// without one gets a row of zeros, which is near nothing.
    pub(crate) fn vectors(&self, texts: &[String]) -> Vec<f32> {
        let dim = self.inner.dim();
        let mut out = Vec::with_capacity(texts.len() * dim);
        for text in texts {
            match self.vector(text) {
                Some(v) if v.len() == dim => out.extend_from_slice(&v),
                _ => out.resize(out.len() + dim, 0.0),
            }
        }
        out
    }

    /// The length of each vector.
    pub(crate) fn dim(&self) -> usize {
        self.inner.dim()
    }
}

/// Every id the tokenizer can give reaches a row of the table, through
/// the `mapping` tensor when there is one (the library reads an id past the
/// mapping's end as a row itself). model2vec-rs bounds neither: it panics
/// on the first text holding such a token, so the model is refused here.
fn table_covers_vocabulary(tokenizer: &[u8], table: &[u8]) -> Result<(), String> {
    let ids: Vec<u32> = tokenizers::Tokenizer::from_bytes(tokenizer)
        .map_err(|e| format!("tokenizer.json is not a tokenizer: {e}"))?
        .get_vocab(true)
        .into_values()
        .collect();
    let tensors = safetensors::SafeTensors::deserialize(table)
        .map_err(|e| format!("model.safetensors is not a safetensors file: {e}"))?;
    let rows = tensors
        .tensor("embeddings")
        .map_err(|_| "model.safetensors holds no tensor named \"embeddings\"".to_string())?
        .shape()
        .first()
        .copied()
        .unwrap_or(0);
    let mapping: Option<Vec<i64>> = match tensors.tensor("mapping") {
        Err(_) => None,
        Ok(t) => Some(match t.dtype() {
            safetensors::Dtype::I64 => t
                .data()
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .collect(),
            safetensors::Dtype::I32 => t
                .data()
                .chunks_exact(4)
                .map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                .collect(),
            other => return Err(format!("its mapping tensor is {other:?}, not I64 or I32")),
        }),
    };
    let row_of = |id: u32| -> i64 {
        match &mapping {
            Some(m) => m.get(id as usize).copied().unwrap_or(i64::from(id)),
            None => i64::from(id),
        }
    };
    let rows_i = i64::try_from(rows).unwrap_or(i64::MAX);
    if let Some(&bad) = mapping.iter().flatten().find(|&&r| r < 0 || r >= rows_i) {
        return Err(format!(
            "its mapping sends a token to row {bad}, but its table has {rows} rows"
        ));
    }
    if let Some(id) = ids.iter().copied().find(|&id| {
        let r = row_of(id);
        r < 0 || r >= rows_i
    }) {
        return Err(format!(
            "its tokenizer gives the id {id}, which reaches row {} of a table of {rows} rows",
            row_of(id)
        ));
    }
    Ok(())
}

/// The most all-zero rows a table may have, as a share of its rows
/// (SEARCH-005): a few (padding, unused tokens) are normal; past this the
/// table is mostly empty and averages to noise.
pub(crate) const MAX_ZERO_ROW_SHARE: f64 = 0.05;

/// A table's rows that cannot work (SEARCH-005): those holding a value
/// that is not a finite number, and those all zero.
#[derive(Debug, Default, PartialEq, Eq)]
struct BadRows {
    rows: usize,
    non_finite: usize,
    zero: usize,
}

/// Counts [`BadRows`] in `data`, `cols` values a row of `width` bytes
/// each, read by `value` as (is finite, is zero).
fn count_bad_rows(
    data: &[u8],
    cols: usize,
    width: usize,
    value: impl Fn(&[u8]) -> (bool, bool),
) -> BadRows {
    let mut bad = BadRows::default();
    let row_bytes = cols.saturating_mul(width);
    if row_bytes == 0 {
        return bad;
    }
    for row in data.chunks_exact(row_bytes) {
        bad.rows += 1;
        let (mut finite, mut zero) = (true, true);
        for v in row.chunks_exact(width) {
            let (f, z) = value(v);
            finite &= f;
            zero &= z;
        }
        bad.non_finite += usize::from(!finite);
        bad.zero += usize::from(finite && zero);
    }
    bad
}

/// The `embeddings` table of `table` has no value that is not a finite
/// number and at most [`MAX_ZERO_ROW_SHARE`] of its rows all zero
/// (SEARCH-005); else why not, with the count of bad rows.
fn table_is_usable(table: &[u8]) -> Result<(), String> {
    let tensors = safetensors::SafeTensors::deserialize(table)
        .map_err(|e| format!("it is not a safetensors file: {e}"))?;
    let t = tensors
        .tensor("embeddings")
        .map_err(|_| "it holds no tensor named \"embeddings\"".to_string())?;
    let cols = t.shape().get(1).copied().unwrap_or(0);
    let Some(bad) = bad_rows(t.dtype(), t.data(), cols) else {
        // Another type the loader refuses with its own message.
        return Ok(());
    };
    judge("rows", &bad)?;
    // model2vec scales each token's row by `weights`, when the file has
    // them: a NaN, an out-of-range or a zero weight spoils its row as
    // surely as the row's own values (SEARCH-005).
    if let Ok(w) = tensors.tensor("weights")
        && let Some(bad) = bad_rows(w.dtype(), w.data(), 1)
    {
        judge("weights", &bad)?;
    }
    Ok(())
}

/// The largest magnitude a value may have (the largest half-precision
/// number, 65,504): a table of trained embeddings holds small numbers,
/// and values near `f32::MAX` make the mean of two rows an infinity, so
/// every text of two tokens has no vector (SEARCH-005).
const MAX_VALUE: f64 = 65_504.0;

/// The [`BadRows`] of a tensor of `dtype` with `cols` values a row; None
/// for a type this check does not read.
fn bad_rows(dtype: safetensors::Dtype, data: &[u8], cols: usize) -> Option<BadRows> {
    let usable = |x: f64| x.is_finite() && x.abs() <= MAX_VALUE;
    Some(match dtype {
        safetensors::Dtype::F32 => count_bad_rows(data, cols, 4, |b| {
            let x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (usable(f64::from(x)), x == 0.0)
        }),
        // IEEE half by its bits: the exponent all ones is an infinity or a
        // NaN (every finite half is within MAX_VALUE); all bits but the
        // sign clear is zero.
        safetensors::Dtype::F16 => count_bad_rows(data, cols, 2, |b| {
            let x = u16::from_le_bytes([b[0], b[1]]);
            (x & 0x7c00 != 0x7c00, x & 0x7fff == 0)
        }),
        // bfloat16 is the top half of an f32.
        safetensors::Dtype::BF16 => count_bad_rows(data, cols, 2, |b| {
            let x = f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16);
            (usable(f64::from(x)), x == 0.0)
        }),
        safetensors::Dtype::F64 => count_bad_rows(data, cols, 8, |b| {
            let x = f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            (usable(x), x == 0.0)
        }),
        safetensors::Dtype::I8 => count_bad_rows(data, cols, 1, |b| (true, b[0] == 0)),
        _ => return None,
    })
}

/// Refuses a tensor with any bad value, or with more than
/// [`MAX_ZERO_ROW_SHARE`] of its rows zero; `what` names its rows.
fn judge(what: &str, bad: &BadRows) -> Result<(), String> {
    if bad.non_finite > 0 {
        return Err(format!(
            "{} of its {} {what} hold a value that is not a finite number (NaN or an infinity) or is larger than {MAX_VALUE}",
            bad.non_finite, bad.rows
        ));
    }
    if bad.zero as f64 > MAX_ZERO_ROW_SHARE * bad.rows as f64 {
        return Err(format!(
            "{} of its {} {what} are all zero, more than {}% of them",
            bad.zero,
            bad.rows,
            MAX_ZERO_ROW_SHARE * 100.0
        ));
    }
    Ok(())
}

/// Scales `v` to length 1; false when it is zero or not finite.
fn unit(v: &mut [f32]) -> bool {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return false;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    true
}

/// The model last loaded, kept for the process: every snapshot (a reload
/// builds a new one) ranks with the same model, loaded once. A directory
/// that failed is tried again by the next snapshot, so a fixed model is
/// picked up on reload.
static LOADED: Mutex<Option<(PathBuf, Arc<Model>)>> = Mutex::new(None);

/// The model in `dir`, loaded on first use and then shared.
pub(crate) fn shared(dir: &Path) -> Result<Arc<Model>, ModelError> {
    let mut slot = LOADED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((have, model)) = slot.as_ref()
        && have == dir
    {
        return Ok(Arc::clone(model));
    }
    let model = Arc::new(Model::load(dir)?);
    *slot = Some((dir.to_path_buf(), Arc::clone(&model)));
    Ok(model)
}

/// How many of the nearest skills in meaning join a query's candidates
/// (LIST-017): a page of answers and as many again, so a skill the words
/// rank low can still be lifted by its meaning.
pub(crate) const NEAREST: usize = 20;

/// Reciprocal rank fusion's constant (LIST-017): the 60 of Cormack et al.,
/// which damps the difference between the first few ranks of each list.
pub(crate) const RRF_K: f32 = 60.0;

/// Each skill's vector, for one snapshot's index.
#[derive(Debug)]
pub(crate) struct Vectors {
    model: Arc<Model>,
    rows: Vec<f32>,
}

impl Vectors {
    /// The vectors of `texts` (one per skill, in catalog order).
    pub(crate) fn build(model: Arc<Model>, texts: &[String]) -> Vectors {
        let rows = model.vectors(texts);
        Vectors { model, rows }
    }

    /// The [`NEAREST`] skills to `query` in meaning, nearest first (ties in
    /// catalog order), each with a cosine above 0; none when the query has
    /// no vector.
    pub(crate) fn nearest(&self, query: &str) -> Vec<usize> {
        let dim = self.model.dim();
        let Some(q) = self.model.vector(query) else {
            return Vec::new();
        };
        if dim == 0 || q.len() != dim {
            return Vec::new();
        }
        let mut near: Vec<(usize, f32)> = self
            .rows
            .chunks_exact(dim)
            .enumerate()
            .map(|(i, row)| (i, row.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>()))
            .filter(|&(_, cos)| cos > 0.0)
            .collect();
        near.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        near.truncate(NEAREST);
        near.into_iter().map(|(i, _)| i).collect()
    }
}

/// Reciprocal rank fusion of two rankings (LIST-017): each skill scores
/// Σ 1/([`RRF_K`] + rank) over the lists that hold it (rank from 1);
/// best first, equal scores in catalog order.
pub(crate) fn fuse(words: &[usize], meaning: &[usize]) -> Vec<usize> {
    let mut score: std::collections::HashMap<usize, f32> = std::collections::HashMap::new();
    for list in [words, meaning] {
        for (rank, &skill) in list.iter().enumerate() {
            *score.entry(skill).or_default() += 1.0 / (RRF_K + rank as f32 + 1.0);
        }
    }
    let mut fused: Vec<(usize, f32)> = score.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused.into_iter().map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_adds_ranks_and_breaks_ties_in_catalog_order() {
        // 3 is second in both lists, 1 first in one only: 2/(62) > 1/61.
        assert_eq!(fuse(&[1, 3], &[4, 3]), vec![3, 1, 4]);
        // Alone in one list each, at the same rank: catalog order.
        assert_eq!(fuse(&[7], &[2]), vec![2, 7]);
        assert_eq!(fuse(&[], &[]), Vec::<usize>::new());
    }

    #[test]
    fn a_missing_directory_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = Model::load(dir.path()).expect_err("no files");
        assert!(
            e.0.contains("tokenizer.json") && e.0.contains("LIST-017"),
            "{e}"
        );
    }
}
