"""Reference values of modelfile's GGUF reader: rows of SmolLM2-135M-Instruct's tensors as the
Python gguf package reads and dequantises them (gguf.GGUFReader, gguf.quants.dequantize), written
as JSON so that `go test ./modelfile -run TestSmolLM2` compares them without Python, bit for bit
(modelfile/smollm2_test.go).

Usage (from the repository root; the model from scripts/install-smollm2.sh):

    source scripts/venv.sh; py=$(venv gguf scripts/interop/requirements-gguf.txt)
    "$py" scripts/interop/gguf_reference.py            # rewrites modelfile/testdata/smollm2_reference.json
    "$py" scripts/interop/gguf_reference.py --check    # exits 1 when the committed file differs

The rows cover each tensor type of the file: the Q8_0 token embedding (its first, second and last
rows), two Q4_1 matrices (the first block's key projection, the last block's FFN down
projection) and two F32 norms; of each row, the first COLS values (whole 32-element blocks).
"""

import hashlib
import json
import subprocess
import sys
from importlib.metadata import version

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

OUT = "modelfile/testdata/smollm2_reference.json"
COLS = 128
ROWS = {
    "token_embd.weight": [0, 1, 49151],
    "blk.0.attn_k.weight": [0, 191],
    "blk.29.ffn_down.weight": [575],
    "blk.0.attn_norm.weight": [0],
    "output_norm.weight": [0],
}


def main():
    path = subprocess.run(["scripts/install-smollm2.sh", "--path"], check=True, capture_output=True, text=True).stdout.strip()
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    reader = GGUFReader(path)
    tensors = {t.name: t for t in reader.tensors}
    rows = []
    for name, indices in ROWS.items():
        t = tensors[name]
        # t.data holds the rows outermost (numpy's order, the reverse of ggml's dims).
        data = t.data.reshape(-1, t.data.shape[-1]) if t.data.ndim > 1 else t.data.reshape(1, -1)
        for r in indices:
            values = np.asarray(dequantize(data[r : r + 1], t.tensor_type), dtype=np.float32).reshape(-1)[:COLS]
            rows.append({
                "tensor": name,
                "type": t.tensor_type.name,
                "dims": [int(d) for d in t.shape],
                "row": r,
                # repr of the float64 equal to each float32: parsed back exactly.
                "values": [float(v) for v in values],
            })
    head = {
        "generator": f"scripts/interop/gguf_reference.py: gguf {version('gguf')}, numpy {version('numpy')}",
        "file_sha256": sha,
        "cols": COLS,
    }
    # One row a line, so that a change shows as the rows it touches.
    text = json.dumps(head)[:-1] + ', "rows": [\n' + ",\n".join(json.dumps(r) for r in rows) + "\n]}\n"
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            if f.read() != text:
                print(f"FAIL: {OUT} differs from the values gguf computes now")
                sys.exit(1)
        print(f"PASS: {OUT} is up to date")
        return
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT}: {len(rows)} rows of {COLS} values")


if __name__ == "__main__":
    main()
