#!/usr/bin/python3
"""PyTorch reference for `graftrl bench`: the same policy, loss, optimizer and KV-cached sampler,
timed the same way, so that scripts/bench/compare.sh and scripts/bench/peers.sh can print
graftrl/PyTorch ratios.

Runs under PyTorch 1.13 and 2.x. With Debian's python3-torch 1.13 (apt-get install python3-torch;
it runs under /usr/bin/python3, not a pyenv/venv interpreter) it needs, to be a fair reference, an
optimised BLAS (libopenblas0-pthread): the script prints the BLAS library and kernel it runs with.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this process's environment before torch
loads, because on the build machines they force a slow OpenBLAS kernel and would flatter graftrl.
PyPI's torch 2 wheels bring their own BLAS (MKL), reported from torch's build configuration;
peers.sh installs one pinned (scripts/bench/requirements-torch2.txt).

--compile (PyTorch 2 only; needs a C++ compiler for Inductor's CPU code) runs the loss forward and
backward, the gradient clipping and the Adam step through torch.compile, and samples with a
compiled decode step of static shapes: the position is a tensor and attention runs over the whole
cache with the positions after it masked, as graftrl's decoder does, so one compilation serves
every position. Inductor fixes the thread count of its kernels when it compiles, so each thread
count tried is compiled afresh; the first (compiling) warmup step's time is reported as
compile_s.

What is timed (medians over --reps repetitions after --warmup untimed train steps):
  * train step: forward + backward + Adam on a Rows x Len minibatch, exactly graftrl's
    policy.Update: pre-LN decoder (token + position embeddings, causal attention scaled by
    1/sqrt(head_dim), tanh-GELU MLP, final LayerNorm, head), action-token logit mask, per-token
    log-probs and entropy, the clipped surrogate (eps 0.2/0.2) with token-mean weights and entropy
    bonus, global gradient-norm clipping at 1, Adam (1e-3, 0.9, 0.999, 1e-8) with the non-finite
    check, and the per-token log-probs copied back to the host;
  * sampling: one KV-cached decode step for every row plus drawing the next token from the
    softmax, rows all at position t, t sweeping the whole context (mean attention length
    max_len/2), reported as ms per step and tokens/s.

Run it directly (`/usr/bin/python3 scripts/bench/torch_ref.py --json`) or through compare.sh or
peers.sh. CI does not run it.
"""

import os
import sys

# Before torch (and OpenBLAS) load: these variables select a slow kernel on the build machines.
REMOVED_ENV = {k: os.environ.pop(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}

import ctypes  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from refcommon import flops_train_step, parse, parser, query_bucket  # noqa: E402

NEG_INF = -1e30
MASKED_LOGIT = -1e9
LN_EPS = 1e-5


def blas_info():
    """Which BLAS library this process loaded and, for OpenBLAS, its kernel (core) name."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "blas" in os.path.basename(path) and "cublas" not in os.path.basename(path):  # not the GPU one
                libs.add(path)
    info = {"libraries": sorted(libs)}
    # PyPI's wheels link their BLAS (MKL) statically: only the build configuration names it.
    build = [w.split("=", 1)[1].rstrip(",") for w in torch.__config__.show().split() if w.startswith("BLAS_INFO=")]
    if build:
        info["build_blas"] = build[0]
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

    def forward(self, tokens, sel=None):
        """Logits [B,T,V], or [B,Q,V] at the selected positions sel = (pos [B,Q], bias [B,1,Q,T]):
        as in graftrl, the last block's queries, MLP and the head then run only there (its keys
        and values still come from every position)."""
        bsz, t = tokens.shape
        x = self.tok[tokens] + self.pos[:t]
        causal = torch.full((t, t), NEG_INF).triu(1)
        scale = 1 / math.sqrt(self.hd)
        for i, b in enumerate(self.blocks):
            a = self.ln(x, b.ln1_g, b.ln1_b)
            k = (a @ b.wk + b.bk).view(bsz, t, self.h, self.hd).transpose(1, 2)
            v = (a @ b.wv + b.bv).view(bsz, t, self.h, self.hd).transpose(1, 2)
            bias = causal
            if sel is not None and i == len(self.blocks) - 1:
                pos, bias = sel
                idx = pos.unsqueeze(-1).expand(-1, -1, x.shape[-1])
                x, a = x.gather(1, idx), a.gather(1, idx)
            tq = x.shape[1]
            q = ((a @ b.wq + b.bq) * scale).view(bsz, tq, self.h, self.hd).transpose(1, 2)
            probs = torch.softmax(q @ k.transpose(-1, -2) + bias, dim=-1)
            ctx = (probs @ v).transpose(1, 2).reshape(bsz, tq, -1)
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


    def decode_step_static(self, tokens, t, kc, vc):
        """decode_step with shapes independent of the position (for torch.compile): t is a 0-dim
        long tensor, the caches are written in place with index_copy_, and attention runs over
        all MaxLen cached positions with those after t masked (graftrl's decoder, model.go)."""
        bsz, tmax = tokens.shape[0], kc[0].shape[2]
        x = self.tok[tokens] + self.pos[t]
        bias = torch.where(torch.arange(tmax) <= t, 0.0, NEG_INF)
        scale = 1 / math.sqrt(self.hd)
        at = t.view(1)
        for i, b in enumerate(self.blocks):
            a = self.ln(x, b.ln1_g, b.ln1_b)
            q = ((a @ b.wq + b.bq) * scale).view(bsz, self.h, 1, self.hd)
            kc[i].index_copy_(2, at, (a @ b.wk + b.bk).view(bsz, self.h, 1, self.hd))
            vc[i].index_copy_(2, at, (a @ b.wv + b.bv).view(bsz, self.h, 1, self.hd))
            probs = torch.softmax(q @ kc[i].transpose(-1, -2) + bias, dim=-1)
            ctx = (probs @ vc[i]).reshape(bsz, -1)
            x = x + ctx @ b.wo + b.bo
            m = self.ln(x, b.ln2_g, b.ln2_b)
            x = x + F.gelu(m @ b.w1 + b.b1, approximate="tanh") @ b.w2 + b.b2
        return self.ln(x, self.ln_g, self.ln_b) @ self.head_w + self.head_b




def make_batch(rows, length, vocab, gen, select=True):
    """The benchmark minibatch of graftrl's bench (bench.TrainBatch): random tokens and targets,
    every third position an action token (token-mean weights), old log-prob -4.1, advantages
    ~ N(0,1). With select, the per-position arrays are gathered at the action positions, as
    graftrl's update does (policy/selection.go)."""
    tokens = torch.randint(0, vocab, (rows, length), generator=gen)
    targets = torch.randint(0, vocab, (rows, length), generator=gen)
    mask = (torch.arange(length) % 3 == 2).expand(rows, length)
    weight = mask.float() / max(1, int(mask.sum()))
    old = torch.full((rows, length), -4.1)
    adv = torch.randn(rows, length, generator=gen)
    if not select:
        return tokens, None, targets, old, adv, weight
    q = query_bucket(int(mask.sum(1).max()), length)
    pos = torch.zeros(rows, q, dtype=torch.long)
    valid = torch.zeros(rows, q, dtype=torch.bool)
    for r in range(rows):
        p = mask[r].nonzero().squeeze(-1)
        pos[r, : len(p)], valid[r, : len(p)] = p, True
    bias = torch.where(torch.arange(length).view(1, 1, length) > pos.unsqueeze(-1), NEG_INF, 0.0).unsqueeze(1)

    def g(a):
        return torch.where(valid, a.gather(1, pos), torch.zeros((), dtype=a.dtype))

    return tokens, (pos, bias), g(targets), g(old), g(adv), g(weight)


def policy_loss(model, batch, action_bias, clip_low=0.2, clip_high=0.2, ent_coef=0.05):
    """The clipped surrogate with entropy bonus: (total, [pg, entropy, approx_kl, clip_frac], logp)."""
    tokens, sel, targets, old, adv, weight = batch
    active = weight > 0
    logits = model(tokens, sel)
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
    return pg - ent_coef * ent, torch.stack([pg, ent, approx_kl, clip_frac]), logp.detach()


class Trainer:
    """One train step, eager or (compile=True) with the loss forward+backward, the gradient
    clipping and the Adam step compiled; reset() drops compiled code (a new thread count)."""

    def __init__(self, model, opt, params, action_bias, compile=False, grad_clip=1.0):
        self.model, self.opt, self.params, self.action_bias = model, opt, params, action_bias
        self.loss, self.clip, self.step = policy_loss, self._clip, opt.step
        self.grad_clip = grad_clip
        if compile:
            self.loss = torch.compile(policy_loss, dynamic=False)
            self.clip = torch.compile(self._clip, dynamic=False)
            self.step = torch.compile(opt.step, dynamic=False)

    def _clip(self):
        return torch.nn.utils.clip_grad_norm_(self.params, self.grad_clip)

    def __call__(self, batch):
        total, stats, logp = self.loss(self.model, batch, self.action_bias)
        self.opt.zero_grad(set_to_none=True)
        total.backward()
        norm = self.clip()
        ok = bool(torch.isfinite(total)) and bool(torch.isfinite(norm))
        if ok:
            self.step()
        return [float(total.detach())] + stats.tolist() + [float(norm)], logp.numpy().copy()


def check(path, compile=False):
    """Load graftrl's weights from a `graftrl bench --write-check` file, compute the logits of its
    tokens here and compare: the reference must compute the same function. Its forward pass is
    compared, and so is its KV-cached decoder fed the same tokens one position at a time. With
    compile, both run as they do under --compile."""
    with open(path) as f:
        ck = json.load(f)
    c = ck["config"]
    model = Policy(c["vocab"], c["d_model"], c["layers"], c["heads"], c["d_ff"] or 4 * c["d_model"], c["max_len"])
    params = dict(model.named_parameters())
    rename = {"embed/tok": "tok", "embed/pos": "pos", "final/ln_g": "ln_g", "final/ln_b": "ln_b",
              "head/w": "head_w", "head/b": "head_b"}
    forward, decode = model, model.decode_step
    if compile:
        forward = torch.compile(model, dynamic=False)
        static = torch.compile(model.decode_step_static, dynamic=False)

        def decode(tok, t, kc, vc):
            return static(tok, torch.tensor(t), kc, vc)

    tokens = torch.tensor(ck["tokens"]).view(ck["rows"], ck["len"])
    with torch.no_grad():
        for name, vals in zip(ck["names"], ck["weights"]):
            if name in rename:
                key = rename[name]
            else:
                block, leaf = name.split("/")
                key = f"blocks.{int(block[len('block'):])}.{leaf}"
            params[key].copy_(torch.tensor(vals).view(params[key].shape))
        logits = forward(tokens)
    ref = torch.tensor(ck["logits"]).view_as(logits)
    hd = c["d_model"] // c["heads"]
    kc = [torch.zeros(ck["rows"], c["heads"], c["max_len"], hd) for _ in range(c["layers"])]
    vc = [torch.zeros(ck["rows"], c["heads"], c["max_len"], hd) for _ in range(c["layers"])]
    with torch.inference_mode():
        steps = torch.stack([decode(tokens[:, t], t, kc, vc) for t in range(ck["len"])], 1)
    return float((logits - ref).abs().max()), float(ref.abs().max()), float((steps - ref).abs().max())




def main():
    ap = parser(__doc__.split("\n\n")[0],
                "intra-op threads; 0 (default) times each measurement with 1 thread and with one per "
                "core and reports the faster, so that PyTorch is compared at its best",
                "only compare logits (forward and KV-cached decoder; with --compile, compiled) with a "
                "`graftrl bench --write-check FILE` file (exit 1 above 1e-4)")
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile the train step and the decode step (PyTorch 2; a C++ compiler)")
    a = parse(ap)
    if a.compile and not hasattr(torch, "compile"):
        ap.error(f"--compile needs PyTorch 2 (this is {torch.__version__})")
    if a.check:
        diff, scale, dec = check(a.check, a.compile)
        mode = " compiled" if a.compile else ""
        print(f"max |logit(PyTorch{mode}) - logit(graftrl)| = {diff:.3g} (logits up to {scale:.3g}); "
              f"KV-cached decoder: {dec:.3g}")
        return 0 if max(diff, dec) <= 1e-4 else 1
    d_ff = a.d_ff or 4 * a.d_model

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
        "mode": "compile" if a.compile else "eager",
        "peer": f"PyTorch {torch.__version__} {'compile' if a.compile else 'eager'}",
        "cpu_capability": getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", lambda: None)(),
        "removed_env": sorted(REMOVED_ENV),
        "blas": blas_info(),
        "config": {"d_model": a.d_model, "layers": a.layers, "heads": a.heads, "d_ff": d_ff,
                   "vocab": a.vocab, "max_len": a.max_len},
        "train": [],
        "sample": [],
    }
    thread_counts = [a.threads] if a.threads > 0 else sorted({1, os.cpu_count() or 1})
    out["threads"] = thread_counts

    train = Trainer(model, opt, params, action_bias, compile=a.compile)
    decode = model.decode_step
    if a.compile:
        compiled = torch.compile(model.decode_step_static, dynamic=False)
        positions = [torch.tensor(t) for t in range(a.max_len)]

        def decode(tok, t, kc, vc):
            return compiled(tok, positions[t], kc, vc)

    def set_threads(threads):
        if a.compile and threads != torch.get_num_threads():
            torch._dynamo.reset()  # Inductor's kernels keep the thread count they were compiled with
        torch.set_num_threads(threads)

    out["compile_s"] = []
    for rows in (a.batch, 4 * a.batch):
        batch = make_batch(rows, a.len, a.vocab, gen, select=not a.full_last_layer)
        best = None
        for threads in thread_counts:
            set_threads(threads)
            for w in range(a.warmup):
                t0 = time.perf_counter()
                train(batch)
                if w == 0 and a.compile:
                    out["compile_s"].append(time.perf_counter() - t0)
            times = []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                train(batch)
                times.append(time.perf_counter() - t0)
            ms = statistics.median(times) * 1e3
            if best is None or ms < best["ms"]:
                fl = flops_train_step(rows, a.len, a.d_model, a.layers, d_ff, a.vocab)
                best = {"rows": rows, "len": a.len, "ms": ms, "min_ms": min(times) * 1e3,
                        "gflops": fl / (ms / 1e3) / 1e9, "threads": threads}
        out["train"].append(best)

    hd = a.d_model // a.heads
    for bsz in (int(x) for x in a.sample_batches.split(",")):
        kc = [torch.zeros(bsz, a.heads, a.max_len, hd) for _ in range(a.layers)]
        vc = [torch.zeros(bsz, a.heads, a.max_len, hd) for _ in range(a.layers)]
        tok = torch.randint(0, a.vocab, (bsz,), generator=gen)

        def sweep():
            nonlocal tok
            with torch.inference_mode():
                for t in range(a.max_len):
                    logits = decode(tok, t, kc, vc)
                    tok = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen).squeeze(-1)

        best = None
        for threads in thread_counts:
            set_threads(threads)
            sweep()
            per_step = []
            for _ in range(max(3, a.reps // 2)):
                t0 = time.perf_counter()
                sweep()
                per_step.append((time.perf_counter() - t0) / a.max_len)
            ms = statistics.median(per_step) * 1e3
            if best is None or ms < best["step_ms"]:
                best = {"batch": bsz, "step_ms": ms, "tokens_per_s": bsz / (ms / 1e3), "threads": threads}
        out["sample"].append(best)

    if a.json:
        print(json.dumps(out))
        return
    b = out["blas"]
    print(f"PyTorch {out['torch']} {out['mode']}, threads tried {out['threads']}, BLAS {b.get('libraries')} "
          f"{b.get('build_blas', '')} kernel {b.get('openblas_core', '?')}; removed from env: {out['removed_env'] or 'nothing'}")
    if out["compile_s"]:
        print("first (compiling) train steps: " + ", ".join(f"{x:.1f} s" for x in out["compile_s"]))
    for r in out["train"]:
        print(f"train step T{r['len']}xB{r['rows']}: {r['ms']:.1f} ms (min {r['min_ms']:.1f}), {r['gflops']:.2f} GFLOP/s, "
              f"{r['threads']} thread(s)")
    for s in out["sample"]:
        print(f"sampling batch {s['batch']}: {s['step_ms']:.3f} ms/step, {s['tokens_per_s']:.0f} tokens/s, "
              f"{s['threads']} thread(s)")


if __name__ == "__main__":
    sys.exit(main())
