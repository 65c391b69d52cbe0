"""Distil a MiniLM sentence model (minilm.py beside this file, written by
minilm-model.sh or minilm-l6-model.sh) into a model2vec static table, following model2vec 0.10.0's `distill` defaults:

  * vocabulary = the model's own tokenizer vocabulary, minus tokens matching
    token_remove_pattern r"\\[unused\\d+\\]" and minus added tokens that play no
    role (skeletoken prune_added_tokens keeps bos/eos/unk/pad: [MASK] goes);
    ids are compacted, order kept;
  * each token forward-passed as [CLS] token [SEP] (original ids), token
    type 0, mask all ones; output mean-pooled over all three positions
    (PoolingMode.MEAN);
  * PCA to 256 dims (eigendecomposition of the covariance, sign fixed so the
    largest |score| per component is positive) -- model2vec's
    _pca_fit_transform, copied;
  * SIF weighting, sif_coefficient 1e-4, with Zipf probabilities from the
    token's rank (= its compacted id): w = a / (a + p(rank));
  * stored as float16 (quantize_to default), config normalize true;
  * tokenizer: the pruned WordPiece vocabulary, post-processor removed,
    padding replaced by a benign one (clean_and_create_vocabulary).

usage: distill.py ASSETS_DIR OUT_DIR MODEL_NAME (its Hugging Face name, for
config.json's tokenizer_name)
"""
import json
import os
import re
import sys
import time

import numpy as np
from safetensors.numpy import save_file

from minilm import MiniLM

PCA_DIMS = 256
SIF = 1e-4
REMOVE = re.compile(r"\[unused\d+\]")


def compute_weights(n, sif_coefficient):  # model2vec.distill.inference.compute_weights
    inv_rank = 1 / (np.arange(2, n + 2))
    proba = inv_rank / np.sum(inv_rank)
    return sif_coefficient / (sif_coefficient + proba)


def pca_fit_transform(X, n_components):  # model2vec.distill.inference._pca_fit_transform
    n_samples = X.shape[0]
    mean = X.mean(axis=0)
    Xc = X - mean
    cov = (Xc.T @ Xc) / (n_samples - 1)
    eigvals, eigvecs = np.linalg.eigh(cov)
    eigvals = eigvals[::-1]
    eigvecs = eigvecs[:, ::-1]
    eigvals = np.clip(eigvals, a_min=0, a_max=None)
    k = n_components
    components = eigvecs[:, :k].T
    scores = Xc @ components.T
    max_abs_idx = np.argmax(np.abs(scores), axis=0)
    signs = np.sign(scores[max_abs_idx, range(scores.shape[1])])
    return scores * signs, eigvals[:k] / eigvals.sum()


def main(assets, out, model_name):
    t0 = time.time()
    tok = json.load(open(os.path.join(assets, "tokenizer.json")))
    vocab = tok["model"]["vocab"]
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    assert [i for _, i in by_id] == list(range(len(by_id)))
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    keep_added = {"[CLS]", "[SEP]", "[UNK]", tok["padding"]["pad_token"]}
    drop = {a["content"] for a in tok["added_tokens"] if a["content"] not in keep_added}
    kept = [(t, i) for t, i in by_id if not REMOVE.match(t) and t not in drop]
    print(f"vocabulary {len(by_id)} -> {len(kept)} (removed {len(by_id) - len(kept)}: "
          f"[unusedN] and {sorted(drop)})", file=sys.stderr)

    model = MiniLM(assets)
    orig_ids = np.array([i for _, i in kept], dtype=np.int64)
    seqs = np.stack([np.full_like(orig_ids, cls), orig_ids, np.full_like(orig_ids, sep)], axis=1)
    mask = np.ones_like(seqs)
    rows = []
    for s in range(0, len(seqs), 256):
        rows.append(model.mean_pooled(seqs[s:s + 256], mask[s:s + 256]))
    emb = np.nan_to_num(np.concatenate(rows).astype(np.float32))
    t1 = time.time()
    print(f"forward passes: {len(emb)} tokens in {t1 - t0:.1f}s", file=sys.stderr)

    emb, ratio = pca_fit_transform(emb, PCA_DIMS)
    print(f"PCA {PCA_DIMS}: explained variance ratio {ratio.sum():.3f}", file=sys.stderr)
    emb = emb * compute_weights(len(emb), SIF)[:, None]
    emb = emb.astype(np.float16)

    os.makedirs(out, exist_ok=True)
    save_file({"embeddings": emb}, os.path.join(out, "model.safetensors"))
    # The tokenizer: compacted vocabulary, as skeletoken writes it.
    new_id = {t: n for n, (t, _) in enumerate(kept)}
    tok["model"]["vocab"] = new_id
    tok["added_tokens"] = [dict(a, id=new_id[a["content"]]) for a in tok["added_tokens"] if a["content"] in new_id]
    tok["post_processor"] = None
    pad = tok["padding"]
    tok["padding"] = {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
                      "pad_id": new_id[pad["pad_token"]], "pad_type_id": 0, "pad_token": pad["pad_token"]}
    with open(os.path.join(out, "tokenizer.json"), "w") as f:
        json.dump(tok, f, ensure_ascii=False)
    config = {"model_type": "model2vec", "architectures": ["StaticModel"],
              "tokenizer_name": model_name,
              "apply_pca": PCA_DIMS, "sif_coefficient": SIF, "hidden_dim": PCA_DIMS,
              "seq_length": 1000000, "normalize": True, "pooling": "mean"}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    print(f"wrote {out} ({emb.shape[0]} x {emb.shape[1]} f16) in {time.time() - t0:.1f}s total",
          file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
