"""JAX reference for `graftrl bench`: the policy, loss, optimizer and KV-cached sampler of
torch_ref.py written with jax.jit, timed the same way and printed in the same JSON, so that
scripts/bench/peers.sh (and compare.sh with REF=scripts/bench/jax_ref.py) can print
graftrl/JAX ratios.

Needs jax and jaxlib for the CPU; peers.sh installs them pinned (scripts/bench/requirements-jax.txt).

What is timed (medians over --reps repetitions after --warmup untimed train steps; the first
compiles, and its time is reported as compile_s):
  * train step: one jitted function, forward + backward + Adam on a Rows x Len minibatch, as
    graftrl's policy.Update and torch_ref.py: pre-LN decoder, action-token logit mask, the clipped
    surrogate (eps 0.2/0.2) with token-mean weights and entropy bonus 0.05, global gradient-norm
    clipping at 1 (g · min(1, 1/(‖g‖+1e-6))), Adam (1e-3, 0.9, 0.999, 1e-8) skipped when the loss or
    the norm is not finite; parameters and moments are donated, the per-token log-probs and the
    statistics are copied back to the host;
  * sampling: one jitted KV-cached decode step for every row plus drawing the next token
    (jax.random.categorical), rows all at position t, t sweeping the whole context. The position
    is an argument, so one compilation serves all: the new key and value are written with
    dynamic_update_slice into the donated caches and attention runs over all MaxLen positions
    with those after t masked, as graftrl's decoder does. With --scan the whole sweep is also
    timed as one jitted lax.scan (no Python between steps), reported as sample_scan.

XLA fixes its CPU thread pool when jax loads, so --threads 0 (the default) runs this script once
per thread count (1 and one per core) in child processes and keeps, per measurement, the faster,
as torch_ref.py does within one process.

  python scripts/bench/jax_ref.py --json
  python scripts/bench/jax_ref.py --check FILE     (a `graftrl bench --write-check FILE` file)

CI does not run it.
"""

import os
import sys

# As in torch_ref.py: these variables select a slow OpenBLAS kernel on the build machines (XLA
# does not use OpenBLAS, numpy might).
REMOVED_ENV = {k: os.environ.pop(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}

import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from refcommon import flops_train_step, parse, parser, query_bucket  # noqa: E402

NEG_INF = -1e30
MASKED_LOGIT = -1e9
LN_EPS = 1e-5


def set_threads(threads):
    """Before jax loads: XLA's CPU client sizes its thread pools from these flags."""
    if threads <= 0:
        return
    flags = os.environ.get("XLA_FLAGS", "")
    flags += f" --xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
    flags += f" intra_op_parallelism_threads={threads}"
    os.environ["XLA_FLAGS"] = flags.strip()


def param_shapes(vocab, d, layers, d_ff, max_len):
    """graftrl's parameters (policy.ParamNames order) with their shapes and initial std:
    N(0, std²) for matrices, std/√(2·layers) for the residual projections, LayerNorm gains 1,
    biases 0 (policy/weights.go)."""
    std, proj = 0.02, 0.02 / math.sqrt(2 * layers)
    specs = [("embed/tok", (vocab, d), std), ("embed/pos", (max_len, d), std)]
    for i in range(layers):
        b = f"block{i}/"
        specs += [(b + "ln1_g", (d,), "ones"), (b + "ln1_b", (d,), 0.0),
                  (b + "wq", (d, d), std), (b + "bq", (d,), 0.0), (b + "wk", (d, d), std), (b + "bk", (d,), 0.0),
                  (b + "wv", (d, d), std), (b + "bv", (d,), 0.0), (b + "wo", (d, d), proj), (b + "bo", (d,), 0.0),
                  (b + "ln2_g", (d,), "ones"), (b + "ln2_b", (d,), 0.0),
                  (b + "w1", (d, d_ff), std), (b + "b1", (d_ff,), 0.0), (b + "w2", (d_ff, d), proj), (b + "b2", (d,), 0.0)]
    specs += [("final/ln_g", (d,), "ones"), ("final/ln_b", (d,), 0.0), ("head/w", (d, vocab), std), ("head/b", (vocab,), 0.0)]
    return specs


def init_params(rng, specs):
    out = {}
    for name, shape, std in specs:
        if std == "ones":
            out[name] = np.ones(shape, np.float32)
        elif std == 0.0:
            out[name] = np.zeros(shape, np.float32)
        else:
            out[name] = (rng.standard_normal(shape) * std).astype(np.float32)
    return out


def build(jax, jnp, layers, heads):
    """The jitted functions of a policy with `layers` blocks and `heads` heads."""
    lax = jax.lax

    def ln(x, g, b):
        mean = x.mean(-1, keepdims=True)
        c = x - mean
        var = (c * c).mean(-1, keepdims=True)
        return c / jnp.sqrt(var + LN_EPS) * g + b

    def mlp(p, blk, x):
        m = ln(x, p[blk + "ln2_g"], p[blk + "ln2_b"])
        return jax.nn.gelu(m @ p[blk + "w1"] + p[blk + "b1"], approximate=True) @ p[blk + "w2"] + p[blk + "b2"]

    def forward(p, tokens, sel=None):
        """Logits [B,T,V], or [B,Q,V] at the selected positions sel = (pos [B,Q], bias [B,1,Q,T]):
        the last block's queries, MLP and the head then run only there (torch_ref.py)."""
        bsz, t = tokens.shape
        d = p["embed/tok"].shape[1]
        hd = d // heads
        x = p["embed/tok"][tokens] + p["embed/pos"][:t]
        causal = jnp.where(jnp.arange(t)[None, :] > jnp.arange(t)[:, None], NEG_INF, 0.0).astype(jnp.float32)
        scale = 1 / math.sqrt(hd)
        for i in range(layers):
            blk = f"block{i}/"
            a = ln(x, p[blk + "ln1_g"], p[blk + "ln1_b"])
            k = (a @ p[blk + "wk"] + p[blk + "bk"]).reshape(bsz, t, heads, hd).transpose(0, 2, 1, 3)
            v = (a @ p[blk + "wv"] + p[blk + "bv"]).reshape(bsz, t, heads, hd).transpose(0, 2, 1, 3)
            bias = causal
            if sel is not None and i == layers - 1:
                pos, bias = sel
                x = jnp.take_along_axis(x, pos[..., None], axis=1)
                a = jnp.take_along_axis(a, pos[..., None], axis=1)
            tq = x.shape[1]
            q = ((a @ p[blk + "wq"] + p[blk + "bq"]) * scale).reshape(bsz, tq, heads, hd).transpose(0, 2, 1, 3)
            probs = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) + bias, axis=-1)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(bsz, tq, d)
            x = x + ctx @ p[blk + "wo"] + p[blk + "bo"]
            x = x + mlp(p, blk, x)
        return ln(x, p["final/ln_g"], p["final/ln_b"]) @ p["head/w"] + p["head/b"]

    def loss(p, batch, action_bias, clip_low=0.2, clip_high=0.2, ent_coef=0.05):
        tokens, sel, targets, old, adv, weight = batch
        active = weight > 0
        logits = forward(p, tokens, sel)
        logits = logits + jnp.where(active[..., None], action_bias, 0.0)
        log_all = jax.nn.log_softmax(logits, axis=-1)
        logp = jnp.take_along_axis(log_all, targets[..., None], axis=-1)[..., 0]
        entropy = -(jnp.exp(log_all) * log_all).sum(-1)
        log_ratio = jnp.where(active, logp - old, 0.0)
        ratio = jnp.exp(log_ratio)
        clipped = jnp.clip(ratio, 1 - clip_low, 1 + clip_high)
        pg = (weight * -jnp.minimum(ratio * adv, clipped * adv)).sum()
        ent = (weight * entropy).sum()
        approx_kl = (weight * (ratio - 1 - log_ratio)).sum()
        clip_frac = (weight * (ratio != clipped).astype(jnp.float32)).sum()
        total = pg - ent_coef * ent
        return total, (jnp.stack([pg, ent, approx_kl, clip_frac]), logp)

    def train_step(p, m, v, step, batch, action_bias, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, grad_clip=1.0):
        (total, (stats, logp)), g = jax.value_and_grad(loss, has_aux=True)(p, batch, action_bias)
        norm = jnp.sqrt(sum((x * x).sum() for x in jax.tree_util.tree_leaves(g)))
        scale = jnp.minimum(1.0, grad_clip / (norm + 1e-6))  # g · min(1, clip/‖g‖)
        ok = jnp.isfinite(total) & jnp.isfinite(norm)
        t = step + 1
        bias1, bias2 = 1 - b1 ** t, 1 - b2 ** t
        new_p, new_m, new_v = {}, {}, {}
        for k in p:
            gk = g[k] * scale
            mk = b1 * m[k] + (1 - b1) * gk
            vk = b2 * v[k] + (1 - b2) * gk * gk
            pk = p[k] - lr * (mk / bias1) / (jnp.sqrt(vk / bias2) + eps)
            new_p[k], new_m[k], new_v[k] = (jnp.where(ok, pk, p[k]), jnp.where(ok, mk, m[k]), jnp.where(ok, vk, v[k]))
        out_stats = jnp.concatenate([total[None], stats, norm[None]])
        return new_p, new_m, new_v, jnp.where(ok, t, step), out_stats, logp

    def decode_logits(p, tok, t, kc, vc):
        """One KV-cached step: every row feeds tok[b] at position t (a traced scalar); caches are
        tuples of [B,H,MaxLen,hd], one per layer. Returns the logits [B,V] and the new caches."""
        bsz = tok.shape[0]
        d = p["embed/tok"].shape[1]
        hd, tmax = d // heads, kc[0].shape[2]
        x = p["embed/tok"][tok] + p["embed/pos"][t]
        bias = jnp.where(jnp.arange(tmax) <= t, 0.0, NEG_INF).astype(jnp.float32)
        scale = 1 / math.sqrt(hd)
        new_k, new_v = [], []
        for i in range(layers):
            blk = f"block{i}/"
            a = ln(x, p[blk + "ln1_g"], p[blk + "ln1_b"])
            q = ((a @ p[blk + "wq"] + p[blk + "bq"]) * scale).reshape(bsz, heads, 1, hd)
            k1 = (a @ p[blk + "wk"] + p[blk + "bk"]).reshape(bsz, heads, 1, hd)
            v1 = (a @ p[blk + "wv"] + p[blk + "bv"]).reshape(bsz, heads, 1, hd)
            ki = lax.dynamic_update_slice(kc[i], k1, (0, 0, t, 0))
            vi = lax.dynamic_update_slice(vc[i], v1, (0, 0, t, 0))
            new_k.append(ki)
            new_v.append(vi)
            probs = jax.nn.softmax(q @ ki.transpose(0, 1, 3, 2) + bias, axis=-1)
            ctx = (probs @ vi).reshape(bsz, d)
            x = x + ctx @ p[blk + "wo"] + p[blk + "bo"]
            x = x + mlp(p, blk, x)
        return ln(x, p["final/ln_g"], p["final/ln_b"]) @ p["head/w"] + p["head/b"], tuple(new_k), tuple(new_v)

    def decode_step(p, tok, t, kc, vc, key):
        """decode_logits, then the next token of every row drawn from the softmax."""
        logits, kc, vc = decode_logits(p, tok, t, kc, vc)
        key, sub = jax.random.split(key)
        return jax.random.categorical(sub, logits, axis=-1).astype(tok.dtype), kc, vc, key

    def sweep_scan(p, tok, kc, vc, key):
        """The whole sweep t = 0..MaxLen−1 as one lax.scan."""
        tmax = kc[0].shape[2]

        def body(carry, t):
            tok, kc, vc, key = carry
            return decode_step(p, tok, t, kc, vc, key), None

        (tok, kc, vc, key), _ = lax.scan(body, (tok, kc, vc, key), jnp.arange(tmax))
        return tok, kc, vc, key

    return {
        "logits": jax.jit(forward),
        "decode_logits": jax.jit(decode_logits, donate_argnums=(3, 4)),
        "train": jax.jit(train_step, donate_argnums=(0, 1, 2, 3)),
        "decode": jax.jit(decode_step, donate_argnums=(3, 4)),
        "sweep": jax.jit(sweep_scan, donate_argnums=(2, 3)),
    }




def make_batch(rows, length, vocab, rng, select=True):
    """torch_ref.py's make_batch (graftrl's bench.TrainBatch) in numpy."""
    tokens = rng.integers(0, vocab, (rows, length), dtype=np.int32)
    targets = rng.integers(0, vocab, (rows, length), dtype=np.int32)
    mask = np.broadcast_to(np.arange(length) % 3 == 2, (rows, length))
    weight = (mask / max(1, int(mask.sum()))).astype(np.float32)
    old = np.full((rows, length), -4.1, np.float32)
    adv = rng.standard_normal((rows, length)).astype(np.float32)
    if not select:
        return tokens, None, targets, old, adv, weight
    q = query_bucket(int(mask.sum(1).max()), length)
    pos = np.zeros((rows, q), np.int32)
    valid = np.zeros((rows, q), bool)
    for r in range(rows):
        p = np.nonzero(mask[r])[0]
        pos[r, : len(p)], valid[r, : len(p)] = p, True
    bias = np.where(np.arange(length).reshape(1, 1, length) > pos[..., None], NEG_INF, 0.0).astype(np.float32)[:, None]

    def g(a):
        return np.where(valid, np.take_along_axis(a, pos, 1), np.zeros((), a.dtype))

    return tokens, (pos, bias), g(targets), g(old), g(adv), g(weight)


def check(path):
    """Load graftrl's weights from a `graftrl bench --write-check` file, compute the logits of its
    tokens here and compare: the reference must compute the same function. Its forward pass is
    compared, and so is its KV-cached decoder fed the same tokens one position at a time."""
    import jax
    import jax.numpy as jnp

    with open(path) as f:
        ck = json.load(f)
    c = ck["config"]
    d_ff = c["d_ff"] or 4 * c["d_model"]
    shapes = {n: s for n, s, _ in param_shapes(c["vocab"], c["d_model"], c["layers"], d_ff, c["max_len"])}
    p = {n: np.asarray(w, np.float32).reshape(shapes[n]) for n, w in zip(ck["names"], ck["weights"])}
    if set(p) != set(shapes):
        raise SystemExit(f"jax_ref: {path} has parameters {sorted(set(p) ^ set(shapes))} this model does not match")
    fns = build(jax, jax.numpy, c["layers"], c["heads"])
    tokens = np.asarray(ck["tokens"], np.int32).reshape(ck["rows"], ck["len"])
    logits = np.asarray(fns["logits"](p, tokens))
    ref = np.asarray(ck["logits"], np.float32).reshape(logits.shape)
    hd = c["d_model"] // c["heads"]
    kc = tuple(jnp.zeros((ck["rows"], c["heads"], c["max_len"], hd), jnp.float32) for _ in range(c["layers"]))
    vc = tuple(jnp.zeros((ck["rows"], c["heads"], c["max_len"], hd), jnp.float32) for _ in range(c["layers"]))
    steps = []
    for t in range(ck["len"]):
        out, kc, vc = fns["decode_logits"](p, tokens[:, t], jnp.asarray(t, jnp.int32), kc, vc)
        steps.append(np.asarray(out))
    dec = float(np.abs(np.stack(steps, 1) - ref).max())
    return float(np.abs(logits - ref).max()), float(np.abs(ref).max()), dec




def measure(a):
    """All measurements in this process, at the thread count XLA was started with."""
    import jax
    import jax.numpy as jnp

    d_ff = a.d_ff or 4 * a.d_model
    rng = np.random.default_rng(1)
    specs = param_shapes(a.vocab, a.d_model, a.layers, d_ff, a.max_len)
    fns = build(jax, jnp, a.layers, a.heads)
    action_bias = np.zeros(a.vocab, np.float32)
    if a.action_tokens > 0:
        action_bias[:] = MASKED_LOGIT
        action_bias[4 : 4 + a.action_tokens] = 0
    action_bias = jnp.asarray(action_bias)
    out = {
        "impl": "jax",
        "jax": jax.__version__,
        "peer": f"JAX {jax.__version__} jit",
        "mode": "jit",
        "backend": jax.default_backend(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "removed_env": sorted(REMOVED_ENV),
        "blas": {"libraries": []},
        "config": {"d_model": a.d_model, "layers": a.layers, "heads": a.heads, "d_ff": d_ff,
                   "vocab": a.vocab, "max_len": a.max_len},
        "threads": [a.threads if a.threads > 0 else os.cpu_count()],
        "compile_s": [],
        "train": [],
        "sample": [],
    }
    threads = out["threads"][0]

    p = {k: jnp.asarray(v) for k, v in init_params(rng, specs).items()}
    m = {k: jnp.zeros_like(v) for k, v in p.items()}
    v = {k: jnp.zeros_like(x) for k, x in p.items()}
    step = jnp.asarray(0, jnp.int32)
    for rows in (a.batch, 4 * a.batch):
        batch = jax.tree_util.tree_map(jnp.asarray, make_batch(rows, a.len, a.vocab, rng, select=not a.full_last_layer))

        def train():
            nonlocal p, m, v, step
            p, m, v, step, stats, logp = fns["train"](p, m, v, step, batch, action_bias)
            return np.asarray(stats).tolist(), np.array(logp)

        for w in range(a.warmup):
            t0 = time.perf_counter()
            train()
            if w == 0:
                out["compile_s"].append(time.perf_counter() - t0)
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            train()
            times.append(time.perf_counter() - t0)
        ms = statistics.median(times) * 1e3
        fl = flops_train_step(rows, a.len, a.d_model, a.layers, d_ff, a.vocab)
        out["train"].append({"rows": rows, "len": a.len, "ms": ms, "min_ms": min(times) * 1e3,
                             "gflops": fl / (ms / 1e3) / 1e9, "threads": threads})

    hd = a.d_model // a.heads
    key = jax.random.PRNGKey(1)
    positions = [jnp.asarray(t, jnp.int32) for t in range(a.max_len)]
    for scan in (False, True) if a.scan else (False,):
        for bsz in (int(x) for x in a.sample_batches.split(",")):
            kc = tuple(jnp.zeros((bsz, a.heads, a.max_len, hd), jnp.float32) for _ in range(a.layers))
            vc = tuple(jnp.zeros((bsz, a.heads, a.max_len, hd), jnp.float32) for _ in range(a.layers))
            tok = jnp.asarray(rng.integers(0, a.vocab, bsz, dtype=np.int32))

            def sweep():
                nonlocal tok, kc, vc, key
                if scan:
                    tok, kc, vc, key = fns["sweep"](p, tok, kc, vc, key)
                else:
                    for t in positions:
                        tok, kc, vc, key = fns["decode"](p, tok, t, kc, vc, key)
                tok.block_until_ready()

            sweep()
            per_step = []
            for _ in range(max(3, a.reps // 2)):
                t0 = time.perf_counter()
                sweep()
                per_step.append((time.perf_counter() - t0) / a.max_len)
            ms = statistics.median(per_step) * 1e3
            out["sample_scan" if scan else "sample"] = out.get("sample_scan" if scan else "sample", []) + [
                {"batch": bsz, "step_ms": ms, "tokens_per_s": bsz / (ms / 1e3), "threads": threads}]
    return out


def best_of(runs):
    """Per measurement, the fastest of the runs at different thread counts."""
    out = dict(runs[0])
    out["threads"] = [r["threads"][0] for r in runs]
    out["xla_flags"] = [r["xla_flags"] for r in runs]
    out["compile_s"] = [x for r in runs for x in r["compile_s"]]
    out["train"] = [min(rs, key=lambda x: x["ms"]) for rs in zip(*(r["train"] for r in runs))]
    for k in ("sample", "sample_scan"):
        if k in out:
            out[k] = [min(rs, key=lambda x: x["step_ms"]) for rs in zip(*(r[k] for r in runs))]
    return out


def main():
    ap = parser(__doc__.split("\n\n")[0],
                "XLA CPU threads; 0 (default) runs once with 1 thread and once with one per core "
                "(child processes) and reports the faster per measurement",
                "only compare logits (forward and KV-cached decoder) with a `graftrl bench --write-check "
                "FILE` file (exit 1 above 1e-4)")
    ap.add_argument("--scan", action="store_true", help="also time the sampling sweep as one jitted lax.scan")
    a = parse(ap)
    if a.check:
        diff, scale, dec = check(a.check)
        print(f"max |logit(JAX) - logit(graftrl)| = {diff:.3g} (logits up to {scale:.3g}); KV-cached decoder: {dec:.3g}")
        return 0 if max(diff, dec) <= 1e-4 else 1

    counts = sorted({1, os.cpu_count() or 1})
    if a.threads == 0 and len(counts) > 1:
        runs = []
        for n in counts:
            res = subprocess.run([sys.executable, __file__, *sys.argv[1:], "--threads", str(n), "--json"],
                                 stdout=subprocess.PIPE, check=True)
            runs.append(json.loads(res.stdout))
        out = best_of(runs)
        out["removed_env"] = sorted(REMOVED_ENV)  # the children never saw them
    else:
        set_threads(a.threads)
        out = measure(a)

    if a.json:
        print(json.dumps(out))
        return 0
    print(f"JAX {out['jax']} on {out['backend']}, threads tried {out['threads']} (XLA_FLAGS {out['xla_flags']}); "
          f"removed from env: {out['removed_env'] or 'nothing'}")
    print("first (compiling) train steps: " + ", ".join(f"{x:.1f} s" for x in out["compile_s"]))
    for r in out["train"]:
        print(f"train step T{r['len']}xB{r['rows']}: {r['ms']:.1f} ms (min {r['min_ms']:.1f}), {r['gflops']:.2f} GFLOP/s, "
              f"{r['threads']} thread(s)")
    for k, what in (("sample", "per-step jit"), ("sample_scan", "lax.scan")):
        for s in out.get(k, []):
            print(f"sampling batch {s['batch']} ({what}): {s['step_ms']:.3f} ms/step, {s['tokens_per_s']:.0f} tokens/s, "
                  f"{s['threads']} thread(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
