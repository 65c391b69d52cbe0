//! A model2vec directory written by a test (spec LIST-017): the search
//! tests and the attack tests of issue 27/30 each had a writer of their own.

use std::path::Path;

use serde_json::{Value, json};

/// One tensor of a safetensors file: name, dtype, shape, little-endian bytes.
pub type Tensor<'a> = (&'a str, &'a str, Vec<usize>, Vec<u8>);

/// A safetensors file of `tensors`, laid out in order.
pub fn safetensors(tensors: &[Tensor]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        header.insert(
            (*name).into(),
            json!({"dtype": dtype, "shape": shape, "data_offsets": [data.len(), data.len() + bytes.len()]}),
        );
        data.extend_from_slice(bytes);
    }
    let mut header = Value::Object(header).to_string();
    while !header.len().is_multiple_of(8) {
        header.push(' ');
    }
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.extend_from_slice(&data);
    file
}

/// A model2vec directory as model2vec lays it out: a word-level tokenizer
/// giving `words[i]` the id `ids[i]` (`[UNK]` is 0), a 2-dimension table of
/// `rows` rows (row 0 `[UNK]`, never averaged in, so any row that is not
/// all zero — SEARCH-005 refuses a table of many zero rows — then one a
/// word in order; fewer rows than
/// words for a model whose tokenizer and table disagree), and `extra`
/// tensors beside it.
pub fn model(dir: &Path, words: &[(&str, [f32; 2])], ids: &[u64], rows: usize, extra: &[Tensor]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut vocab = serde_json::Map::new();
    vocab.insert("[UNK]".into(), json!(0));
    for ((w, _), id) in words.iter().zip(ids) {
        vocab.insert((*w).into(), json!(id));
    }
    let tokenizer = json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    let table: Vec<[f32; 2]> = std::iter::once([0.0, 0.01])
        .chain(words.iter().map(|(_, v)| *v))
        .take(rows)
        .collect();
    let bytes: Vec<u8> = table
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mut tensors = vec![("embeddings", "F32", vec![table.len(), 2], bytes)];
    tensors.extend(extra.iter().cloned());
    std::fs::write(dir.join("model.safetensors"), safetensors(&tensors)).unwrap();
    std::fs::write(dir.join("config.json"), r#"{"normalize": true}"#).unwrap();
}

/// The ids a well-formed tokenizer gives `words`: 1, 2, ….
pub fn dense_ids(words: &[(&str, [f32; 2])]) -> Vec<u64> {
    (1..=words.len() as u64).collect()
}

/// A well-formed model over `words` with `rows` rows.
pub fn tiny_model(dir: &Path, words: &[(&str, [f32; 2])], rows: usize) {
    model(dir, words, &dense_ids(words), rows, &[]);
}
