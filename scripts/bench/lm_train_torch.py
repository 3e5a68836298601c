"""PyTorch peer of `graftrl bench --model`'s train step: the same model (transformers'
LlamaForCausalLM in float32, from a Hugging Face directory `graftrl convert` writes from the
GGUF), the same synthetic batch shape and the same update as graftrl's policy.Update with bench's
loss: every third position an action whose log-prob enters the clipped surrogate (eps 0.2/0.2,
old log-prob -4.1, advantages N(0, 1), token-mean weights) with an entropy bonus of 0.05; the
output layer (tied to the embedding) applied at those positions only, as graftrl does; global
gradient-norm clipping at 1; Adam (lr 1e-6, 0.9, 0.999, 1e-8) over every parameter, or with
--lora R over rank-R adapters only (the model frozen), as graftrl's `bench --lora R`: every
projection of every block (q, k, v, o, gate, up, down) computes W·x + (2R/R)·B·(A·x), A [R, in]
drawn from U(−1/√in, 1/√in), B [out, R] zero.

    python lm_train_torch.py HF_DIR [--rows 2] [--len 64] [--reps 5] [--warmup 2] [--compile] [--threads N] [--lora R]

--compile runs the loss's forward and backward through torch.compile (Inductor; the optimiser
step stays eager, Adam's foreach kernels). One JSON line: the median step in ms over --reps after
--warmup untimed steps (the first compiles; its time is compile_s), tokens/s (rows x len a step)
and the process's peak RSS. Run by scripts/bench/lm.sh; CI does not run it.
"""

import argparse
import json
import resource
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from transformers import LlamaForCausalLM


class LoRALinear(torch.nn.Module):
    """A frozen nn.Linear W plus the adapter (alpha/r)·B·(A·x), alpha = 2r."""

    def __init__(self, base, r):
        super().__init__()
        self.base = base
        base.weight.requires_grad_(False)
        fan_in = base.in_features
        self.a = torch.nn.Parameter(torch.empty(r, fan_in).uniform_(-fan_in**-0.5, fan_in**-0.5))
        self.b = torch.nn.Parameter(torch.zeros(base.out_features, r))
        self.scale = 2.0

    def forward(self, x):
        return self.base(x) + self.scale * F.linear(F.linear(x, self.a), self.b)


def add_lora(model, r):
    """Freezes the model and gives every projection of every block a rank-r adapter."""
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.model.layers:
        for mod, names in ((layer.self_attn, ("q_proj", "k_proj", "v_proj", "o_proj")),
                           (layer.mlp, ("gate_proj", "up_proj", "down_proj"))):
            for n in names:
                setattr(mod, n, LoRALinear(getattr(mod, n), r))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("--rows", type=int, default=2)
    ap.add_argument("--len", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: one per core)")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--lora", type=int, default=0, help="adapter rank (0: full fine-tuning)")
    a = ap.parse_args()
    if a.rows < 1 or a.len < 3 or a.reps < 1 or a.warmup < 1 or a.lora < 0:
        ap.error("--rows, --reps and --warmup must be at least 1, --len at least 3 and --lora at least 0")
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = LlamaForCausalLM.from_pretrained(a.model_dir, dtype=torch.float32)
    model.train()
    vocab = model.config.vocab_size
    tokens = torch.randint(vocab, (a.rows, a.len))
    sel = torch.arange(2, a.len, 3)  # graftrl's SyntheticBatch: position t is an action when t % 3 == 2
    targets = torch.randint(vocab, (a.rows, len(sel)))
    adv = torch.randn(a.rows, len(sel))
    old = torch.full((a.rows, len(sel)), -4.1)
    weight = 1.0 / (a.rows * len(sel))  # token mean over the batch's action tokens
    if a.lora > 0:
        add_lora(model, a.lora)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-6, betas=(0.9, 0.999), eps=1e-8)

    def loss_fn(tokens, targets, adv, old):
        h = model.model(input_ids=tokens).last_hidden_state[:, sel]
        logits = h @ model.model.embed_tokens.weight.T
        logp_all = F.log_softmax(logits, dim=-1)
        logp = logp_all.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        ratio = torch.exp(logp - old)
        pg = -torch.minimum(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv)
        return ((pg - 0.05 * entropy) * weight).sum(), logp

    run = torch.compile(loss_fn) if a.compile else loss_fn

    def step():
        loss, logp = run(tokens, targets, adv, old)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return logp.detach().numpy()  # graftrl copies the log-probs back to the host too

    t0 = time.perf_counter()
    step()
    compile_s = time.perf_counter() - t0
    for _ in range(a.warmup - 1):
        step()
    times = []
    for _ in range(a.reps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    ms = statistics.median(times)
    out = {
        "peer": f"PyTorch {torch.__version__} {'compiled' if a.compile else 'eager'}",
        "rows": a.rows, "len": a.len, "ms": ms, "min_ms": min(times), "reps": a.reps,
        "tokens_per_s": a.rows * a.len / (ms / 1e3), "compile_s": compile_s, "lora_rank": a.lora,
        "threads": torch.get_num_threads(),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
