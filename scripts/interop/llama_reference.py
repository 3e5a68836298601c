"""Reference logits of policy/host's Llama decoder: SmolLM2-135M-Instruct's forward pass in numpy
float32, written step by step after Hugging Face transformers' modeling_llama.py (RMSNorm,
rotate-half RoPE on the un-permuted q/k projections, grouped-query attention with a causal mask,
SwiGLU MLP, tied output layer) from the Python gguf package's dequantised tensors. The host engine
pairs RoPE's rotations differently (adjacent values on GGUF's permuted rows), so agreement checks
the permutation as well as the arithmetic. `go test ./policy/host -run TestSmolLM2Llama` compares
its logits and greedy tokens with testdata/smollm2_logits.json without Python.

Usage (from the repository root; the model from scripts/install-smollm2.sh):

    source scripts/venv.sh; py=$(venv gguf scripts/interop/requirements-gguf.txt)
    "$py" scripts/interop/llama_reference.py            # rewrites policy/host/testdata/smollm2_logits.json
    "$py" scripts/interop/llama_reference.py --check    # exits 1 when the committed file disagrees

The prompts' token ids are tokens/bpe's encoding of the ChatML rendering of their messages (the
Go test checks that they still are); this environment has no tokenizer of its own.
"""

import hashlib
import json
import subprocess
import sys
from importlib.metadata import version

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

OUT = "policy/host/testdata/smollm2_logits.json"
TOP = 20  # logits kept per prompt, the largest
STRIDE = 64  # and every STRIDE-th logit, for a check across the whole vocabulary
GREEDY_PROMPT, GREEDY_TOKENS = 3, 32
TOL = 1e-4  # --check: largest logit change accepted (BLAS may sum in another order)

PROMPTS = [
    {
        "messages": [('user', 'What is the capital of France?')],
        "ids": [1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411, 407, 19712, 8182, 2, 198, 1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198, 1, 520, 9531, 198],
    },
    {
        "messages": [('system', 'You are a helpful assistant.'), ('user', 'Write a haiku about the sea.')],
        "ids": [1, 9690, 198, 2683, 359, 253, 5356, 11173, 30, 2, 198, 1, 4093, 198, 19161, 253, 421, 30614, 563, 260, 3426, 30, 2, 198, 1, 520, 9531, 198],
    },
    {
        "messages": [('user', 'Count from one to ten in words, separated by commas.')],
        "ids": [1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411, 407, 19712, 8182, 2, 198, 1, 4093, 198, 9825, 429, 582, 288, 3772, 281, 1924, 28, 9075, 411, 45910, 30, 2, 198, 1, 520, 9531, 198],
    },
    {
        "messages": [('system', 'You answer in one short sentence.'), ('user', 'Why is the sky blue? Explain it to a child who likes trains, dinosaurs and the colour orange, and who asks many follow-up questions about light, air, sunsets and rainbows over the hills near the sea.')],
        "ids": [1, 9690, 198, 2683, 2988, 281, 582, 1890, 6330, 30, 2, 198, 1, 4093, 198, 4898, 314, 260, 6376, 4461, 47, 16374, 357, 288, 253, 811, 617, 15044, 13420, 28, 17392, 284, 260, 7302, 10245, 28, 284, 617, 11421, 800, 1066, 29, 1110, 2029, 563, 1420, 28, 1512, 28, 2388, 20702, 284, 5249, 27100, 690, 260, 12610, 2141, 260, 3426, 30, 2, 198, 1, 520, 9531, 198],
    },
    {
        "messages": [('system', 'You are a careful editor.'), ('user', 'Summarise this paragraph in one sentence: The old lighthouse stood at the edge of the cliff for two hundred years. Every night its keeper climbed the ninety-nine steps, trimmed the wick and polished the great lens, so that ships passing in the dark would know where the rocks were.'), ('assistant', 'A lighthouse keeper guarded ships for years.'), ('user', 'Now in French.')],
        "ids": [1, 9690, 198, 2683, 359, 253, 5649, 7056, 30, 2, 198, 1, 4093, 198, 13764, 3298, 769, 451, 8510, 281, 582, 6330, 42, 378, 1573, 33059, 9318, 418, 260, 5595, 282, 260, 25959, 327, 827, 3822, 929, 30, 5081, 3163, 624, 40061, 30324, 260, 34069, 29, 31292, 3301, 28, 37528, 260, 47800, 284, 26048, 260, 1109, 7247, 28, 588, 338, 7761, 7685, 281, 260, 3605, 736, 699, 837, 260, 7739, 592, 30, 2, 198, 1, 520, 9531, 198, 49, 33059, 40061, 33159, 7761, 327, 929, 30, 2, 198, 1, 4093, 198, 2696, 281, 3432, 30, 2, 198, 1, 520, 9531, 198],
    },
]


def field(reader, key):
    f = reader.fields[key]
    v = f.parts[f.data[0]]
    return bytes(v).decode() if f.types[0].name == "STRING" else v[0].item()


def load(path):
    reader = GGUFReader(path)
    cfg = {k: field(reader, "llama." + k) for k in (
        "block_count", "embedding_length", "feed_forward_length", "attention.head_count",
        "attention.head_count_kv", "rope.freq_base", "attention.layer_norm_rms_epsilon")}
    w = {}
    for t in reader.tensors:
        # numpy's shape of a GGUF tensor is its dims reversed: nn.Linear's [out, in].
        w[t.name] = np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32).reshape([int(d) for d in reversed(t.shape)])
    return cfg, w


def unpermute(m, heads):
    """GGUF stores q/k rows of each head with RoPE's pairs adjacent (llama.cpp's converter
    interleaves the two halves); transformers' loader puts the halves back: row 2i+j of a head
    returns to row j·hd/2 + i."""
    out_dim, in_dim = m.shape
    hd = out_dim // heads
    return m.reshape(heads, hd // 2, 2, in_dim).transpose(0, 2, 1, 3).reshape(out_dim, in_dim)


def rms_norm(x, weight, eps):
    variance = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    return weight * (x / np.sqrt(variance + np.float32(eps)))


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def forward(cfg, w, ids):
    """Logits after the last of ids, the whole sequence computed again (no cache)."""
    n_layers, nh, nkv = cfg["block_count"], cfg["attention.head_count"], cfg["attention.head_count_kv"]
    eps = cfg["attention.layer_norm_rms_epsilon"]
    embed = w["token_embd.weight"]
    d = embed.shape[1]
    hd = d // nh
    n = len(ids)
    inv_freq = (1.0 / (np.float32(cfg["rope.freq_base"]) ** (np.arange(0, hd, 2, dtype=np.float32) / np.float32(hd)))).astype(np.float32)
    freqs = np.outer(np.arange(n, dtype=np.float32), inv_freq).astype(np.float32)
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb), np.sin(emb)
    mask = np.triu(np.full((n, n), -np.inf, dtype=np.float32), k=1)
    scaling = np.float32(hd ** -0.5)
    h = embed[np.asarray(ids)]
    for l in range(n_layers):
        b = lambda s: w[f"blk.{l}.{s}.weight"]
        x = rms_norm(h, b("attn_norm"), eps)
        q = (x @ unpermute(b("attn_q"), nh).T).reshape(n, nh, hd).transpose(1, 0, 2)
        k = (x @ unpermute(b("attn_k"), nkv).T).reshape(n, nkv, hd).transpose(1, 0, 2)
        v = (x @ b("attn_v").T).reshape(n, nkv, hd).transpose(1, 0, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = np.repeat(k, nh // nkv, axis=0)  # repeat_kv: query head i reads KV head i // groups
        v = np.repeat(v, nh // nkv, axis=0)
        scores = q @ k.transpose(0, 2, 1) * scaling + mask
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        attn = (probs @ v).transpose(1, 0, 2).reshape(n, nh * hd)
        h = h + attn @ b("attn_output").T
        x = rms_norm(h, b("ffn_norm"), eps)
        gate = x @ b("ffn_gate").T
        h = h + ((gate / (1 + np.exp(-gate))) * (x @ b("ffn_up").T)) @ b("ffn_down").T
    h = rms_norm(h[-1:], w["output_norm.weight"], eps)
    return (h @ embed.T)[0].astype(np.float32)


def compute():
    path = subprocess.run(["scripts/install-smollm2.sh", "--path"], check=True, capture_output=True, text=True).stdout.strip()
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    cfg, w = load(path)
    prompts = []
    for p in PROMPTS:
        logits = forward(cfg, w, p["ids"])
        top = np.argsort(-logits, kind="stable")[:TOP]
        prompts.append({
            "messages": [{"role": r, "content": c} for r, c in p["messages"]],
            "ids": p["ids"],
            "top_ids": [int(i) for i in top],
            "top_logits": [float(logits[i]) for i in top],
            "strided_logits": [float(v) for v in logits[::STRIDE]],
        })
    ids = list(PROMPTS[GREEDY_PROMPT]["ids"])
    greedy, margin = [], np.inf
    for _ in range(GREEDY_TOKENS):
        logits = forward(cfg, w, ids)
        top2 = np.argsort(-logits, kind="stable")[:2]
        margin = min(margin, float(logits[top2[0]] - logits[top2[1]]))
        greedy.append(int(top2[0]))
        ids.append(int(top2[0]))
    head = {
        "generator": f"scripts/interop/llama_reference.py: gguf {version('gguf')}, numpy {version('numpy')}",
        "file_sha256": sha,
        "stride": STRIDE,
        "greedy_prompt": GREEDY_PROMPT,
        "greedy": greedy,
        # The smallest gap between the two largest logits over the greedy steps: how far the
        # greedy tokens are from a tie that rounding could break.
        "greedy_min_margin": margin,
    }
    return head, prompts


def main():
    head, prompts = compute()
    if "--check" in sys.argv[1:]:
        with open(OUT) as f:
            old = json.load(f)
        bad = old["greedy"] != head["greedy"] or len(old["prompts"]) != len(prompts)
        worst = 0.0
        for a, b in zip(old["prompts"], prompts):
            bad = bad or a["ids"] != b["ids"] or a["top_ids"] != b["top_ids"]
            for key in ("top_logits", "strided_logits"):
                worst = max(worst, float(np.max(np.abs(np.subtract(a[key], b[key])))))
        if bad or worst > TOL:
            print(f"FAIL: {OUT} differs from the logits computed now (max |Δ| {worst:.3g}, tolerance {TOL})")
            sys.exit(1)
        print(f"PASS: {OUT} is up to date (max |Δ| {worst:.3g})")
        return
    text = json.dumps(head)[:-1] + ', "prompts": [\n' + ",\n".join(json.dumps(p) for p in prompts) + "\n]}\n"
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT}: {len(prompts)} prompts, greedy {head['greedy']}, min margin {head['greedy_min_margin']:.3g}")


if __name__ == "__main__":
    main()
