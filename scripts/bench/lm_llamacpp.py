"""llama.cpp's side of scripts/bench/lm.sh, through llama-cpp-python's C API (one context, one
sequence per row: llama.cpp's own batched decoding).

Usage: lm_llamacpp.py GGUF BATCH PROMPT NEW KV_CACHE

The work is BenchmarkSmolLM2Peers' (policy/host/llama_bench_test.go): BATCH rows of PROMPT
tokens, row r's token i being (1000 + 37·i + 101·r) mod vocabulary, prefilled by one
llama_decode of all rows (llama.cpp splits it into micro-batches of 512), then NEW greedy tokens
per row (the largest logit, no stop), one llama_decode of BATCH tokens a step. KV_CACHE is f16
(llama.cpp's default) or f32. Threads: all the machine's cores. A warm-up run of the same work
comes first. Prints one JSON line: prefill_tok_s and decode_tok_s.
"""

import ctypes
import json
import os
import sys
import time

import llama_cpp as L
import numpy as np


@L.llama_log_callback
def _quiet(level, text, user_data):
    pass


def main():
    if len(sys.argv) != 6 or sys.argv[5] not in ("f16", "f32"):
        sys.exit("usage: lm_llamacpp.py GGUF BATCH PROMPT NEW f16|f32")
    path, (batch, n, new), kv = sys.argv[1], map(int, sys.argv[2:5]), sys.argv[5]
    L.llama_log_set(_quiet, ctypes.c_void_p())
    L.llama_backend_init()
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = 0
    model = L.llama_model_load_from_file(path.encode(), mp)
    if not model:
        sys.exit(f"lm_llamacpp.py: llama.cpp cannot load {path}")
    cp = L.llama_context_default_params()
    cp.n_ctx = 256 * ((batch * (n + new + 1) + 255) // 256)
    cp.n_batch = batch * n
    cp.n_ubatch = min(512, batch * n)
    cp.n_seq_max = batch
    cp.n_threads = cp.n_threads_batch = os.cpu_count()
    if kv == "f32":
        cp.type_k = cp.type_v = L.GGML_TYPE_F32
    ctx = L.llama_init_from_model(model, cp)
    vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    b = L.llama_batch_init(batch * n, 0, 1)

    def fill(tokens, positions, rows, logits):
        for k, (t, p, r, o) in enumerate(zip(tokens, positions, rows, logits)):
            b.token[k], b.pos[k], b.n_seq_id[k], b.logits[k] = t, p, 1, o
            b.seq_id[k][0] = r
        b.n_tokens = len(tokens)
        if L.llama_decode(ctx, b) != 0:
            sys.exit("lm_llamacpp.py: llama_decode failed")

    def argmax(k):
        return int(np.argmax(np.ctypeslib.as_array(L.llama_get_logits_ith(ctx, k), shape=(vocab,))))

    def run():
        L.llama_memory_clear(L.llama_get_memory(ctx), True)
        t0 = time.perf_counter()
        rows = [r for r in range(batch) for _ in range(n)]
        pos = [i for _ in range(batch) for i in range(n)]
        fill([(1000 + 37 * i + 101 * r) % vocab for r, i in zip(rows, pos)], pos, rows, [i == n - 1 for i in pos])
        nxt = [argmax(r * n + n - 1) for r in range(batch)]
        last = [nxt[-1]]
        t1 = time.perf_counter()
        for step in range(new):
            fill(nxt, [n + step] * batch, range(batch), [True] * batch)
            nxt = [argmax(r) for r in range(batch)]
            last.append(nxt[-1])
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1, last

    run()  # warm-up
    prefill, decode, last = run()
    # The last row's tokens, for a look across peers (they are not timed).
    print(json.dumps({"prefill_tok_s": batch * n / prefill, "decode_tok_s": batch * new / decode, "threads": os.cpu_count(),
                      "kv_cache": kv, "last_row": last[:8]}))
    L.llama_batch_free(b)
    L.llama_free(ctx)
    L.llama_model_free(model)


if __name__ == "__main__":
    main()
