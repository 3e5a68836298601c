"""policy/host's SmolLM2-135M-Instruct against Hugging Face transformers running the same GGUF file.

Usage: llama_transformers_check.py GRAFTRL_LLAMA_JSON [--no-float64]

GRAFTRL_LLAMA_JSON is what `go test ./policy/host -run TestInteropSmolLM2Export` writes with
GRAFTRL_INTEROP_OUT set: 20 chats rendered by tokens/bpe's ChatML (10 to 292 tokens), their ids,
graftrl's logits at every position (the 32 largest and a rotating sixteenth of the vocabulary;
the whole vocabulary at each prompt's last position) and 64-token greedy continuations of five
of them. The model is the file of scripts/install-smollm2.sh, loaded by
AutoModelForCausalLM.from_pretrained(dir, gguf_file=...) in float32 on the CPU (transformers
dequantises Q4_1 and Q8_0 with the gguf package and un-permutes q/k itself).

Checks, each printing PASS or FAIL with its numbers (exit status 1 on any FAIL):
- chat template: apply_chat_template of each chat is graftrl's rendering, byte for byte;
- tokenizer: graftrl's ids are those of transformers' tokenizer of the file with SmolLM2's own
  pre-tokenizer (digits split one by one first, as tokenizer.json and llama.cpp's "smollm" do;
  see tokenizer_reference.py, which checks 1,200 strings). transformers 5.23's GGUF tokenizer
  does not know "smollm" and keeps GPT-2's split alone, so it tokenizes a few prompts otherwise
  (whitespace running into a digit); those are listed, and the logits are compared on graftrl's
  ids;
- logits: at every position of every prompt, |graftrl − transformers| ≤ 1e-3 over the exported
  entries, and the log-sum-exp over the vocabulary within 1e-3; the most likely token is the
  same wherever transformers' two largest logits are more than 1e-3 apart;
- greedy: transformers' 64 greedy tokens (KV cache, the lowest id on a tie, no stop token) are
  graftrl's, for each of the five prompts.
Unless --no-float64 (which saves about 15 s on two idle cores): llama_reference.py's numpy
forward pass run on float64 weights gives the last position of each prompt (its only float32
steps are RoPE's frequencies, as transformers' own, and the mean of squares of RMSNorm);
graftrl's and transformers' distances from it are printed, not checked.

The helpers above main() take no torch, so llama_cpp_check.py shares them.
"""

import base64
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np

from checks import finish, report

TOL = 1e-3


def model_path():
    """The installed GGUF file (scripts/install-smollm2.sh) and its SHA-256."""
    path = subprocess.run(["scripts/install-smollm2.sh", "--path"], check=True, capture_output=True, text=True).stdout.strip()
    with open(path, "rb") as f:
        return path, hashlib.sha256(f.read()).hexdigest()


def read_export(path):
    """graftrl's export, with its float32 arrays decoded: strided [n, vocab/stride], last [vocab]."""
    with open(path) as f:
        ex = json.load(f)
    v, s = ex["vocab"], ex["stride"]
    for p in ex["prompts"]:
        n = len(p["ids"])
        p["strided"] = np.frombuffer(base64.b64decode(p["strided"]), dtype="<f4").reshape(n, v // s)
        p["last"] = np.frombuffer(base64.b64decode(p["last"]), dtype="<f4")
        p["top_ids"] = np.asarray(p["top_ids"], dtype=np.int64)
        p["top_logits"] = np.asarray(p["top_logits"], dtype=np.float32)
    return ex


def messages(p):
    return [{"role": m["Role"], "content": m["Content"]} for m in p["messages"]]


def compare_logits(ex, p, logits, tie):
    """graftrl's exported logits of prompt p against logits ([n, vocab] float32, all positions).
    Returns, over all positions: "max", the largest |Δ logit| over the exported entries; "last",
    the largest over the last position's whole vocabulary; "lse", the largest |Δ log-sum-exp|;
    "lp", the largest |Δ log-probability| of graftrl's 32 most likely tokens; "kl", KL(graftrl ‖
    peer) in nats at the last position; and the positions whose most likely token differs though
    the peer's logits of the two tokens are more than tie apart (closer is a tie that rounding
    may break either way)."""
    logits = np.asarray(logits, dtype=np.float32)
    n, s = len(p["ids"]), ex["stride"]
    rows = np.arange(n)[:, None]
    top = logits[rows, p["top_ids"]]
    per_pos = np.max(np.abs(top - p["top_logits"]), axis=1)
    cols = (np.arange(n) % s)[:, None] + s * np.arange(ex["vocab"] // s)[None, :]
    per_pos = np.maximum(per_pos, np.max(np.abs(logits[rows, cols] - p["strided"]), axis=1))
    last = float(np.max(np.abs(logits[-1] - p["last"])))
    lse = log_sum_exp(logits)
    ours_lse = np.asarray(p["logsumexp"])
    lp = np.abs((top - lse[:, None]) - (p["top_logits"] - ours_lse[:, None]))
    q, r = log_softmax(p["last"]), log_softmax(logits[-1])
    ours, theirs = p["top_ids"][:, 0], np.argmax(logits, axis=1)
    flips, ties = [], 0
    for pos in np.nonzero(ours != theirs)[0]:
        gap = float(logits[pos, theirs[pos]] - logits[pos, ours[pos]])
        if gap > tie:
            flips.append((int(pos), int(ours[pos]), int(theirs[pos]), gap))
        else:
            ties += 1
    return {"max": float(max(per_pos.max(), last)), "last": last, "lse": float(np.max(np.abs(lse - ours_lse))),
            "lp": float(lp.max()), "kl": float(np.sum(np.exp(q) * (q - r))), "flips": flips, "ties": ties,
            "top1_agree": int(np.sum(ours == theirs)), "positions": n}


def log_sum_exp(rows):
    """log Σ exp over the last axis, in float64."""
    x = np.asarray(rows, dtype=np.float64)
    m = x.max(axis=-1, keepdims=True)
    return m[..., 0] + np.log(np.exp(x - m).sum(axis=-1))


def log_softmax(row):
    x = np.asarray(row, dtype=np.float64)
    return x - log_sum_exp(x)


def report_logits(name, results, limits, tie):
    """Prints one line per prompt and the PASS/FAIL lines of the logit comparison: each of
    limits' measures (keys of compare_logits' results) at most its limit, and the most likely
    token the same but for ties within tie."""
    for i, r in enumerate(results):
        print(f"  prompt {i:2d} ({r['positions']:3d} tokens): max |Δ| {r['max']:.3g} (last position, whole vocabulary "
              f"{r['last']:.3g}), |Δ log-sum-exp| {r['lse']:.3g}, |Δ log-prob| of the top 32 {r['lp']:.3g}, "
              f"KL at the last position {r['kl']:.2g}, top-1 {r['top1_agree']}/{r['positions']}"
              + (f", {r['ties']} ties within {tie:g}" if r["ties"] else ""))
    what = {"max": "max |Δ logit|", "lse": "max |Δ log-sum-exp|", "lp": "max |Δ log-prob| of graftrl's top 32",
            "kl": "max KL(graftrl ‖ peer) at the last positions"}
    worst = {k: max(r[k] for r in results) for k in what}
    positions = sum(r["positions"] for r in results)
    report(all(worst[k] <= v for k, v in limits.items()), f"{name} logits",
           f"{len(results)} prompts, {positions} positions: "
           + ", ".join(f"{what[k]} {worst[k]:.3g}" + (f" (limit {limits[k]:g})" if k in limits else "") for k in what))
    agree = sum(r["top1_agree"] for r in results)
    flips = [(i, f) for i, r in enumerate(results) for f in r["flips"]]
    report(not flips, f"{name} top-1",
           f"most likely token the same at {agree}/{positions} positions ({100 * agree / positions:.1f}%), the others ties within {tie:g}"
           + ("; differs: " + "; ".join(f"prompt {i} position {f[0]}: graftrl {f[1]}, {name} {f[2]} (gap {f[3]:.3g})" for i, f in flips[:5]) if flips else ""))


def report_greedy(ex, name, runs, tie):
    """runs[k] is the peer's continuation of ex["greedy"][k]: (tokens, the smallest gap between
    its two largest logits over the steps, gaps), gaps[j] being the peer's logit of its token
    minus its logit of graftrl's at step j. A continuation passes when it is graftrl's, or the
    same up to a step where the peer puts graftrl's token within tie of its own (a tie)."""
    bad, same_all = [], 0
    for g, (tokens, margin, gaps) in zip(ex["greedy"], runs):
        want = g["tokens"]
        same = next((i for i, (a, b) in enumerate(zip(want, tokens)) if a != b), min(len(want), len(tokens)))
        line = f"  greedy prompt {g['prompt']:2d}: {same}/{len(want)} tokens identical, smallest top-2 margin {margin:.3g}"
        if same == len(want) == len(tokens):
            same_all += 1
        elif same < len(tokens) and gaps[same] <= tie:
            line += f"; then graftrl {want[same]}, {name} {tokens[same]}, a tie ({name}'s gap {gaps[same]:.3g})"
        else:
            bad.append(f"prompt {g['prompt']}: token {same}: graftrl {want[same:same + 4]}, {name} {list(tokens[same:same + 4])}"
                       + (f" ({name}'s gap {gaps[same]:.3g})" if same < len(gaps) else ""))
        print(line)
    report(not bad, f"{name} greedy", f"{same_all}/{len(runs)} continuations of {len(ex['greedy'][0]['tokens'])} tokens identical"
           + (f", the others part at a tie within {tie:g}" if same_all < len(runs) and not bad else "")
           + ("; " + "; ".join(bad) if bad else ""))


def check_tokenizer(ex, gguf_dir, gguf_name):
    """The chat template and the ids (above); returns transformers' ids as it stands."""
    from tokenizers import pre_tokenizers
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf_dir, gguf_file=gguf_name)
    bad_text = [i for i, p in enumerate(ex["prompts"]) if tok.apply_chat_template(
        messages(p), tokenize=False, add_generation_prompt=p["add_generation_prompt"]) != p["text"]]
    report(not bad_text, "chat template", f"apply_chat_template gives graftrl's text for {len(ex['prompts']) - len(bad_text)}/{len(ex['prompts'])} chats"
           + (f"; differs: {bad_text}" if bad_text else ""))
    as_is = [tok.encode(p["text"], add_special_tokens=False) for p in ex["prompts"]]
    # SmolLM2's tokenizer.json pre-tokenizer (tokenizer_reference.py's docstring has why).
    tok.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    bad = [i for i, p in enumerate(ex["prompts"]) if tok.encode(p["text"], add_special_tokens=False) != p["ids"]]
    report(not bad, "tokenizer", f"graftrl's ids are transformers' (SmolLM2's digit split) for {len(ex['prompts']) - len(bad)}/{len(ex['prompts'])} prompts"
           + (f"; differ: {bad}" if bad else ""))
    other = [i for i, (p, ids) in enumerate(zip(ex["prompts"], as_is)) if ids != p["ids"]]
    print(f"  transformers' GGUF tokenizer as it stands (GPT-2's split, no digit split) gives other ids for prompts {other}; "
          "the logits below are on graftrl's ids")


def greedy(model, ids, want):
    """len(want) greedy tokens after ids with the KV cache (the lowest id on a tie), the smallest
    gap between the two largest logits, and at each step the gap from graftrl's token want[j]."""
    import torch

    out = model(input_ids=torch.tensor([ids]), use_cache=True)
    tokens, margin, gaps = [], np.inf, []
    for w in want:
        last = out.logits[0, -1]
        top = torch.topk(last, 2)
        margin = min(margin, float(top.values[0] - top.values[1]))
        t = int(torch.argmax(last))  # the first of equal maxima
        gaps.append(float(last[t] - last[w]))
        tokens.append(t)
        out = model(input_ids=torch.tensor([[t]]), past_key_values=out.past_key_values, use_cache=True)
    return tokens, margin, gaps


def float64_reference(ex, path, hf_last):
    """Prints graftrl's and transformers' distances from llama_reference.py's pass on float64 weights."""
    import llama_reference

    t0 = time.time()
    cfg, w = llama_reference.load(path)
    w = {k: v.astype(np.float64) for k, v in w.items()}
    ours = theirs = 0.0
    for p, hf in zip(ex["prompts"], hf_last):
        ref = llama_reference.forward(cfg, w, p["ids"]).astype(np.float64)
        ours = max(ours, float(np.max(np.abs(p["last"] - ref))))
        theirs = max(theirs, float(np.max(np.abs(hf - ref))))
    print(f"  float64 numpy reference (llama_reference.py on float64 weights; last positions, whole vocabulary): "
          f"graftrl max |Δ| {ours:.3g}, transformers {theirs:.3g} ({time.time() - t0:.0f} s)")


def main():
    args = [a for a in sys.argv[1:] if a != "--no-float64"]
    if len(args) != 1:
        sys.exit("usage: llama_transformers_check.py GRAFTRL_LLAMA_JSON [--no-float64]")
    os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' GGUF loading has a progress bar of its own
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging

    logging.disable_progress_bar()

    t0 = time.time()
    ex = read_export(args[0])
    path, sha = model_path()
    print(f"  model {path} (sha256 {sha[:12]}…), torch {torch.__version__} on {torch.get_num_threads()} threads")
    check_tokenizer(ex, os.path.dirname(path), os.path.basename(path))
    model = AutoModelForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path), dtype=torch.float32).eval()
    tied = model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    report(tied, "tied output layer", "transformers' lm_head is the token embedding, as the file has no output.weight")
    t1 = time.time()
    results, hf_last = [], []
    with torch.no_grad():
        for p in ex["prompts"]:
            logits = model(input_ids=torch.tensor([p["ids"]])).logits[0].numpy()
            results.append(compare_logits(ex, p, logits, TOL))
            hf_last.append(logits[-1].astype(np.float64))
        report_logits("transformers", results, {"max": TOL, "lse": TOL}, TOL)
        t2 = time.time()
        runs = [greedy(model, ex["prompts"][g["prompt"]]["ids"], g["tokens"]) for g in ex["greedy"]]
    report_greedy(ex, "transformers", runs, TOL)
    t3 = time.time()
    if "--no-float64" not in sys.argv[1:]:
        float64_reference(ex, path, hf_last)
    print(f"  time: load and tokenizer {t1 - t0:.0f} s, logits {t2 - t1:.0f} s, greedy {t3 - t2:.0f} s")
    finish("SmolLM2 transformers check")


if __name__ == "__main__":
    main()
