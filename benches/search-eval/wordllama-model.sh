#!/usr/bin/env bash
# Makes a model2vec directory for SKILL_MCP_EMBEDDINGS (spec LIST-017) from
# PyPI's wordllama wheel (MIT): its 256-dimension static token table and its
# Llama-2 tokenizer. Nothing else is fetched, and the server never fetches:
# this is the owner's step, run once.
#   benches/search-eval/wordllama-model.sh DIR
#   SKILL_MCP_BENCH_EMBEDDINGS=DIR cargo bench --bench skill-mcp -- --only search
set -euo pipefail
out=${1:?usage: $0 OUTPUT_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
  --platform manylinux2014_x86_64 'wordllama==0.4.0.post1' -d "$work"
python3 - "$work"/wordllama-*.whl "$out" <<'PY'
import json, os, struct, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
z = zipfile.ZipFile(wheel)
with open(os.path.join(out, "tokenizer.json"), "wb") as f:
    f.write(z.read("wordllama/tokenizers/l2_supercat_tokenizer_config.json"))
raw = z.read("wordllama/weights/l2_supercat_256.safetensors")
# model2vec names the table "embeddings"; wordllama "embedding.weight".
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
header["embeddings"] = header.pop("embedding.weight")
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(os.path.join(out, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump({"normalize": True}, f)
PY
echo "model2vec directory: $out"
