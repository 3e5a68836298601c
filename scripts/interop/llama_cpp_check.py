"""policy/host's SmolLM2-135M-Instruct against llama.cpp (llama-cpp-python) running the same GGUF file.

Usage: llama_cpp_check.py GRAFTRL_LLAMA_JSON [F32_GGUF]

GRAFTRL_LLAMA_JSON is what `go test ./policy/host -run TestInteropSmolLM2Export` writes with
GRAFTRL_INTEROP_OUT set (llama_transformers_check.py describes it). llama.cpp runs the installed
Q4_1 file (scripts/install-smollm2.sh) on the CPU with graftrl's ids, every position's logits
kept, on all the machine's cores.

graftrl dequantises the file's weights to float32 and computes in float32. llama.cpp keeps them
quantised and quantises the activations too for its dot products (Q8_1 blocks against the Q4_1
matrices, Q8_0 against the Q8_0 token embedding that is also the output layer), and keeps its KV
cache in F16, so its logits differ from graftrl's by far more than rounding; the limits
(Q4_LIMITS, Q4_TIE) are the measured differences with a margin. Checks, each printing PASS or
FAIL with its numbers (exit status 1 on any FAIL):
- logits: over every position of every prompt, the largest |Δ logit| of the exported entries,
  the largest |Δ log-probability| of graftrl's 32 most likely tokens and KL(graftrl ‖ llama.cpp)
  at the last positions within their limits; the most likely token the same wherever
  llama.cpp's logits of the two tokens are more than Q4_TIE apart (closer is a tie that its
  quantisation may break);
- greedy: llama.cpp's 64 greedy tokens (the lowest id on a tie, no stop token) are graftrl's
  for each of the five prompts, or the same up to a step where llama.cpp puts graftrl's token
  within Q4_TIE of its own (a tie), after which the continuations part.
With F32_GGUF (scripts/bench/lm_f32_gguf.py's copy of the file with every tensor in F32) and an
F32 KV cache, llama.cpp computes in float32 as graftrl does, and the logits are checked at 1e-3
(|Δ logit| and |Δ log-sum-exp|), the most likely tokens and the greedy continuations as
llama_transformers_check.py checks transformers'.
"""

import os
import sys
import time

import numpy as np

from checks import finish
from llama_transformers_check import compare_logits, model_path, read_export, report_greedy, report_logits

# The Q4_1 file's limits, about 1.5 times the largest values measured over the 20 prompts
# (llama-cpp-python 0.3.36 built for an AVX-512 CPU, F16 KV cache): |Δ logit| 4.44 over the
# exported entries (the largest at unlikely tokens), |Δ log-probability| of graftrl's 32 most
# likely tokens 1.73, KL(graftrl ‖ llama.cpp) at the last positions 0.0101 nats; the most likely
# token differed at 39 of 1,790 positions, by at most 0.36 in llama.cpp's logits, and the greedy
# continuations parted where llama.cpp's gap was 0.06 to 0.27.
Q4_LIMITS = {"max": 6.0, "lp": 2.5, "kl": 0.015}
Q4_TIE = 0.5
F32_TOL = 1e-3


def load(path, n_ctx, f32_cache):
    """llama.cpp's model and context on all the machine's cores, every position's logits kept;
    f32_cache keeps the KV cache in F32 rather than llama.cpp's default F16."""
    import llama_cpp

    cache = {"type_k": llama_cpp.GGML_TYPE_F32, "type_v": llama_cpp.GGML_TYPE_F32} if f32_cache else {}
    return llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx, logits_all=True,
                           n_threads=os.cpu_count(), n_threads_batch=os.cpu_count(), verbose=False, **cache)


def logits_of(llm, ids):
    llm.reset()
    llm.eval(ids)
    return np.array(llm.scores[: len(ids)], dtype=np.float32)


def greedy(llm, ids, want):
    """len(want) greedy tokens after ids (the lowest id on a tie), the smallest gap between the
    two largest logits, and at each step the gap from graftrl's token want[j]."""
    llm.reset()
    llm.eval(ids)
    tokens, margin, gaps = [], np.inf, []
    for w in want:
        last = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        t = int(np.argmax(last))  # the first of equal maxima
        margin = min(margin, float(last[t] - np.max(np.delete(last, t))))
        gaps.append(float(last[t] - last[w]))
        tokens.append(t)
        llm.eval([t])
    return tokens, margin, gaps


def check_file(ex, name, path, f32_cache, limits, tie):
    import llama_cpp

    t0 = time.time()
    n_ctx = 64 * ((max(len(p["ids"]) for p in ex["prompts"]) + len(ex["greedy"][0]["tokens"]) + 63) // 64)
    llm = load(path, n_ctx, f32_cache)
    print(f"  {name}: {path}, llama-cpp-python {llama_cpp.__version__}, {os.cpu_count()} threads, "
          f"KV cache {'F32' if f32_cache else 'F16'}")
    results = [compare_logits(ex, p, logits_of(llm, p["ids"]), tie) for p in ex["prompts"]]
    report_logits(name, results, limits, tie)
    t1 = time.time()
    runs = [greedy(llm, ex["prompts"][g["prompt"]]["ids"], g["tokens"]) for g in ex["greedy"]]
    report_greedy(ex, name, runs, tie)
    print(f"  time: load and logits {t1 - t0:.0f} s, greedy {time.time() - t1:.0f} s")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: llama_cpp_check.py GRAFTRL_LLAMA_JSON [F32_GGUF]")
    ex = read_export(sys.argv[1])
    path, sha = model_path()
    print(f"  model sha256 {sha[:12]}…")
    check_file(ex, "llama.cpp Q4_1", path, False, Q4_LIMITS, Q4_TIE)
    if len(sys.argv) == 3:
        check_file(ex, "llama.cpp F32", sys.argv[2], True, {"max": F32_TOL, "lse": F32_TOL}, F32_TOL)
    finish("SmolLM2 llama.cpp check")


if __name__ == "__main__":
    main()
