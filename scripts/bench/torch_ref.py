#!/usr/bin/python3
"""PyTorch reference for `graftrl bench`: the same policy, loss, optimizer and KV-cached sampler,
timed the same way, so that scripts/bench/compare.sh can print graftrl/PyTorch ratios.

Needs Debian's python3-torch (apt-get install python3-torch; it runs under /usr/bin/python3, not
a pyenv/venv interpreter) and, to be a fair reference, an optimised BLAS (libopenblas0-pthread):
the script prints the BLAS library and kernel it runs with. OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE are removed from this process's environment before torch loads, because on the
build machines they force a slow OpenBLAS kernel and would flatter graftrl.

What is timed (medians over --reps repetitions after warm-up):
  * train step: forward + backward + Adam on a Rows x Len minibatch, exactly graftrl's
    policy.Update: pre-LN decoder (token + position embeddings, causal attention scaled by
    1/sqrt(head_dim), tanh-GELU MLP, final LayerNorm, head), action-token logit mask, per-token
    log-probs and entropy, the clipped surrogate (eps 0.2/0.2) with token-mean weights and entropy
    bonus, global gradient-norm clipping at 1, Adam (1e-3, 0.9, 0.999, 1e-8) with the non-finite
    check, and the per-token log-probs copied back to the host;
  * sampling: one KV-cached decode step for every row plus drawing the next token from the
    softmax, rows all at position t, t sweeping the whole context (mean attention length
    max_len/2), reported as ms per step and tokens/s.

Run it directly (`/usr/bin/python3 scripts/bench/torch_ref.py --json`) or through compare.sh.
CI does not run it.
"""

import os
import sys

# Before torch (and OpenBLAS) load: these variables select a slow kernel on the build machines.
REMOVED_ENV = {k: os.environ.pop(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}

import argparse  # noqa: E402
import ctypes  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

NEG_INF = -1e30
MASKED_LOGIT = -1e9
LN_EPS = 1e-5


def blas_info():
    """Which BLAS library this process loaded and, for OpenBLAS, its kernel (core) name."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "blas" in os.path.basename(path):
                libs.add(path)
    info = {"libraries": sorted(libs)}
    for path in sorted(libs):
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            lib.openblas_get_config.restype = ctypes.c_char_p
            info["openblas_core"] = lib.openblas_get_corename().decode()
            info["openblas_config"] = lib.openblas_get_config().decode()
            break
        except (OSError, AttributeError):
            continue
    return info


class Policy(torch.nn.Module):
    """graftrl's transformer (policy/model.go) with its initialisation (policy/weights.go)."""

    def __init__(self, vocab, d, layers, heads, d_ff, max_len, init_std=0.02):
        super().__init__()
        self.h, self.hd = heads, d // heads
        proj_std = init_std / math.sqrt(2 * layers)

        def normal(*shape, std=init_std):
            return torch.nn.Parameter(torch.randn(*shape) * std)

        def zeros(*shape):
            return torch.nn.Parameter(torch.zeros(*shape))

        def ones(*shape):
            return torch.nn.Parameter(torch.ones(*shape))

        self.tok, self.pos = normal(vocab, d), normal(max_len, d)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            b = torch.nn.Module()
            b.ln1_g, b.ln1_b = ones(d), zeros(d)
            b.wq, b.bq, b.wk, b.bk, b.wv, b.bv = normal(d, d), zeros(d), normal(d, d), zeros(d), normal(d, d), zeros(d)
            b.wo, b.bo = normal(d, d, std=proj_std), zeros(d)
            b.ln2_g, b.ln2_b = ones(d), zeros(d)
            b.w1, b.b1, b.w2, b.b2 = normal(d, d_ff), zeros(d_ff), normal(d_ff, d, std=proj_std), zeros(d)
            self.blocks.append(b)
        self.ln_g, self.ln_b = ones(d), zeros(d)
        self.head_w, self.head_b = normal(d, vocab), zeros(vocab)

    @staticmethod
    def ln(x, g, b):
        return F.layer_norm(x, x.shape[-1:], g, b, LN_EPS)

    def forward(self, tokens):
        bsz, t = tokens.shape
        x = self.tok[tokens] + self.pos[:t]
        causal = torch.full((t, t), NEG_INF).triu(1)
        scale = 1 / math.sqrt(self.hd)
        for b in self.blocks:
            a = self.ln(x, b.ln1_g, b.ln1_b)
            q = ((a @ b.wq + b.bq) * scale).view(bsz, t, self.h, self.hd).transpose(1, 2)
            k = (a @ b.wk + b.bk).view(bsz, t, self.h, self.hd).transpose(1, 2)
            v = (a @ b.wv + b.bv).view(bsz, t, self.h, self.hd).transpose(1, 2)
            probs = torch.softmax(q @ k.transpose(-1, -2) + causal, dim=-1)
            ctx = (probs @ v).transpose(1, 2).reshape(bsz, t, -1)
            x = x + ctx @ b.wo + b.bo
            m = self.ln(x, b.ln2_g, b.ln2_b)
            x = x + F.gelu(m @ b.w1 + b.b1, approximate="tanh") @ b.w2 + b.b2
        return self.ln(x, self.ln_g, self.ln_b) @ self.head_w + self.head_b

    @torch.inference_mode()
    def decode_step(self, tokens, t, kc, vc):
        """One KV-cached step: every row feeds tokens[b] at position t; caches [B,H,MaxLen,hd]."""
        bsz = tokens.shape[0]
        x = self.tok[tokens] + self.pos[t]
        scale = 1 / math.sqrt(self.hd)
        for i, b in enumerate(self.blocks):
            a = self.ln(x, b.ln1_g, b.ln1_b)
            q = ((a @ b.wq + b.bq) * scale).view(bsz, self.h, 1, self.hd)
            kc[i][:, :, t] = (a @ b.wk + b.bk).view(bsz, self.h, self.hd)
            vc[i][:, :, t] = (a @ b.wv + b.bv).view(bsz, self.h, self.hd)
            probs = torch.softmax(q @ kc[i][:, :, : t + 1].transpose(-1, -2), dim=-1)
            ctx = (probs @ vc[i][:, :, : t + 1]).reshape(bsz, -1)
            x = x + ctx @ b.wo + b.bo
            m = self.ln(x, b.ln2_g, b.ln2_b)
            x = x + F.gelu(m @ b.w1 + b.b1, approximate="tanh") @ b.w2 + b.b2
        return self.ln(x, self.ln_g, self.ln_b) @ self.head_w + self.head_b


def make_batch(rows, length, vocab, gen):
    """The benchmark minibatch of graftrl's bench: random tokens and targets, a third of the
    positions are action tokens (token-mean weights), old log-prob -4.1, advantages ~ N(0,1)."""
    tokens = torch.randint(0, vocab, (rows, length), generator=gen)
    targets = torch.randint(0, vocab, (rows, length), generator=gen)
    mask = torch.randint(0, 3, (rows, length), generator=gen) == 0
    weight = mask.float() / max(1, int(mask.sum()))
    old = torch.full((rows, length), -4.1)
    adv = torch.randn(rows, length, generator=gen)
    return tokens, targets, old, adv, weight


def train_step(model, opt, params, batch, action_bias, clip_low=0.2, clip_high=0.2, ent_coef=0.05, grad_clip=1.0):
    tokens, targets, old, adv, weight = batch
    active = weight > 0
    logits = model(tokens)
    logits = logits + torch.where(active.unsqueeze(-1), action_bias, torch.zeros(()))
    log_all = torch.log_softmax(logits, dim=-1)
    logp = log_all.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    entropy = -(log_all.exp() * log_all).sum(-1)
    log_ratio = torch.where(active, logp - old, torch.zeros(()))
    ratio = log_ratio.exp()
    clipped_ratio = ratio.clamp(1 - clip_low, 1 + clip_high)
    pg_tok = -torch.minimum(ratio * adv, clipped_ratio * adv)
    pg = (weight * pg_tok).sum()
    ent = (weight * entropy).sum()
    approx_kl = (weight * (ratio - 1 - log_ratio)).sum()
    clip_frac = (weight * (ratio != clipped_ratio).float()).sum()
    total = pg - ent_coef * ent
    opt.zero_grad(set_to_none=True)
    total.backward()
    norm = torch.nn.utils.clip_grad_norm_(params, grad_clip)
    ok = bool(torch.isfinite(total)) and bool(torch.isfinite(norm))
    if ok:
        opt.step()
    stats = [float(x) for x in (total, pg, ent, approx_kl, clip_frac, norm)]
    return stats, logp.detach().numpy().copy()


def flops_train_step(rows, length, d, layers, d_ff, vocab):
    """Matmul FLOPs of one train step, the formula of graftrl's bench (bench.TrainStepFLOPs):
    forward 2·N·(layers·(4d² + 2·d·d_ff) + d·vocab) + layers·4·rows·length²·d, backward twice
    that (embedding lookups and elementwise work not counted)."""
    n = rows * length
    fwd = 2 * n * (layers * (4 * d * d + 2 * d * d_ff) + d * vocab) + layers * 4 * rows * length * length * d
    return 3 * fwd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-ff", type=int, default=0, help="0 means 4*d_model")
    ap.add_argument("--vocab", type=int, default=64)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16, help="train rows at the quickstart shape (also run at 4x)")
    ap.add_argument("--seq", type=int, default=64, help="train sequence length")
    ap.add_argument("--sample-batches", default="1,16,64")
    ap.add_argument("--action-tokens", type=int, default=4, help="ids 4..4+k-1 are the action tokens (0: no mask)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    d_ff = a.d_ff or 4 * a.d_model

    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(1)
    model = Policy(a.vocab, a.d_model, a.layers, a.heads, d_ff, a.max_len)
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, foreach=True)
    action_bias = torch.zeros(a.vocab)
    if a.action_tokens > 0:
        action_bias.fill_(MASKED_LOGIT)
        action_bias[4 : 4 + a.action_tokens] = 0

    out = {
        "impl": "pytorch",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "removed_env": sorted(REMOVED_ENV),
        "blas": blas_info(),
        "config": {"d_model": a.d_model, "layers": a.layers, "heads": a.heads, "d_ff": d_ff,
                   "vocab": a.vocab, "max_len": a.max_len},
        "train": [],
        "sample": [],
    }

    for rows in (a.batch, 4 * a.batch):
        batch = make_batch(rows, a.seq, a.vocab, gen)
        for _ in range(3):
            train_step(model, opt, params, batch, action_bias)
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            train_step(model, opt, params, batch, action_bias)
            times.append(time.perf_counter() - t0)
        ms = statistics.median(times) * 1e3
        fl = flops_train_step(rows, a.seq, a.d_model, a.layers, d_ff, a.vocab)
        out["train"].append({"rows": rows, "len": a.seq, "ms": ms, "min_ms": min(times) * 1e3,
                             "gflops": fl / (ms / 1e3) / 1e9})

    hd = a.d_model // a.heads
    for bsz in (int(x) for x in a.sample_batches.split(",")):
        kc = [torch.zeros(bsz, a.heads, a.max_len, hd) for _ in range(a.layers)]
        vc = [torch.zeros(bsz, a.heads, a.max_len, hd) for _ in range(a.layers)]
        tok = torch.randint(0, a.vocab, (bsz,), generator=gen)

        def sweep():
            nonlocal tok
            with torch.inference_mode():
                for t in range(a.max_len):
                    logits = model.decode_step(tok, t, kc, vc)
                    tok = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen).squeeze(-1)

        sweep()
        per_step = []
        for _ in range(max(3, a.reps // 2)):
            t0 = time.perf_counter()
            sweep()
            per_step.append((time.perf_counter() - t0) / a.max_len)
        ms = statistics.median(per_step) * 1e3
        out["sample"].append({"batch": bsz, "step_ms": ms, "tokens_per_s": bsz / (ms / 1e3)})

    if a.json:
        print(json.dumps(out))
        return
    b = out["blas"]
    print(f"PyTorch {out['torch']}, {out['threads']} threads, BLAS {b.get('libraries')} "
          f"kernel {b.get('openblas_core', '?')}; removed from env: {out['removed_env'] or 'nothing'}")
    for r in out["train"]:
        print(f"train step T{r['len']}xB{r['rows']}: {r['ms']:.1f} ms (min {r['min_ms']:.1f}), {r['gflops']:.2f} GFLOP/s")
    for s in out["sample"]:
        print(f"sampling batch {s['batch']}: {s['step_ms']:.3f} ms/step, {s['tokens_per_s']:.0f} tokens/s")


if __name__ == "__main__":
    sys.exit(main())
