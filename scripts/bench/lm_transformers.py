"""transformers' side of scripts/bench/lm.sh: SmolLM2-135M-Instruct loaded from its GGUF file
(dequantised to float32, as graftrl computes) and run by generate on the CPU.

Usage: lm_transformers.py GGUF BATCH PROMPT NEW

The work is BenchmarkSmolLM2Peers' (policy/host/llama_bench_test.go): BATCH rows of PROMPT
tokens, row r's token i being (1000 + 37·i + 101·r) mod vocabulary, then NEW greedy tokens per
row with no stop. generate(max_new_tokens=1) is the prefill (its one new token comes from the
prefill's logits, as graftrl's first decoded token does); generate(max_new_tokens=NEW+1) is the
prefill and NEW decode steps, so decoding takes the difference. One warm-up call of each comes
first. Prints one JSON line: prefill_tok_s and decode_tok_s.
"""

import json
import os
import sys
import time

os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' GGUF loading has a progress bar of its own

import torch  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402
from transformers.utils import logging  # noqa: E402


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: lm_transformers.py GGUF BATCH PROMPT NEW")
    path, (batch, n, new) = sys.argv[1], map(int, sys.argv[2:])
    logging.disable_progress_bar()
    logging.set_verbosity_error()
    torch.set_num_threads(os.cpu_count())
    model = AutoModelForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path), dtype=torch.float32).eval()
    vocab = model.config.vocab_size
    ids = torch.tensor([[(1000 + 37 * i + 101 * r) % vocab for i in range(n)] for r in range(batch)])
    mask = torch.ones_like(ids)

    def run(k):
        t = time.perf_counter()
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=k, min_new_tokens=k, do_sample=False,
                                 pad_token_id=model.config.pad_token_id, eos_token_id=None)
        assert out.shape == (batch, n + k), out.shape
        return time.perf_counter() - t, out[-1, n:].tolist()

    run(1), run(2)  # warm-up
    prefill, _ = run(1)
    total, last = run(new + 1)
    # The last row's tokens, for a look across peers (they are not timed).
    print(json.dumps({"prefill_tok_s": batch * n / prefill, "decode_tok_s": batch * new / max(total - prefill, 1e-9),
                      "threads": torch.get_num_threads(), "last_row": last[:8]}))


if __name__ == "__main__":
    main()
