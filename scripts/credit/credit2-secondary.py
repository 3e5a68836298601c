#!/usr/bin/env python3
"""The second round's secondary readings (docs/credit2/README.md, "How the three questions
are read"), from the report's runs.csv (one row per run: env, method, seed, final, warm_start).

Every reading is a paired difference over the seeds, with its 95 % paired-t interval:
  1. over the four waste levels of a learning rate, each method − GRPO, the pair differences
     averaged over the levels seed by seed (one number per seed);
  2. round one's confound: GraphGPO at 4e-4 − GRPO at 1e-4, per level and over the levels, and
     what the fourfold rate gives GRPO and GraphGPO themselves (4e-4 − 1e-4, over the levels);
  3. the gap GraphGPO − GRAFT with the episode term (graft-ep), per cell and over the levels;
  4. bigger steps or better credit: GraphGPO (and its step term alone) at 1e-4 − GRPO at 4e-4,
     the step-term methods at a quarter of GRPO's rate;
  5. the mechanism, where the runs' directories are at hand (runs.csv's dir column): each run's
     wasted share in successes at the end of training (est/wasted_success of its last 10 train
     lines, weighted by est/success_steps), method − GRPO per cell and over the levels.
Pairs share the seed and the warm start (runs.csv's warm_start hash; a pair whose hashes differ
is refused). Envs are named w<level>-lr<rate> (configs/credit2.yaml).

Usage: python3 scripts/credit/credit2-secondary.py [docs/credit2/report/runs.csv]
Python 3 standard library only (the t quantile from the regularised incomplete beta function).
"""
import csv
import json
import math
import os
import sys


def betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for aa in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betai(a, b, x):
    """Regularised incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1.0 - x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * betacf(b, a, 1.0 - x) / b


def t_sf2(t, df):
    """Two-sided p of Student's t."""
    return betai(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p, df):
    """The t value with two-sided tail 2(1 - p), by bisection."""
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_sf2(mid, df) > 2 * (1 - p):
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def paired(d):
    """Mean, 95 % t interval, pairs ahead/behind and the two-sided p of differences d."""
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) if n > 1 else float("nan")
    if n < 2 or sd == 0:
        return mean, float("nan"), float("nan"), sum(x > 0 for x in d), sum(x < 0 for x in d), float("nan")
    half = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
    p = t_sf2(mean / (sd / math.sqrt(n)), n - 1)
    return mean, mean - half, mean + half, sum(x > 0 for x in d), sum(x < 0 for x in d), p


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join("docs", "credit2", "report", "runs.csv")
    runs, dirs = {}, {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            runs[(r["env"], r["method"], int(r["seed"]))] = (float(r["final"]), r["warm_start"])
            dirs[(r["env"], r["method"], int(r["seed"]))] = r.get("dir", "")
    levels = sorted({e.split("-")[0] for e, _, _ in runs}, key=lambda w: int(w[1:]))
    rates = sorted({e.split("-", 1)[1] for e, _, _ in runs})
    seeds = sorted({s for _, _, s in runs})
    methods = sorted({m for _, m, _ in runs})

    def diff(env_a, m_a, env_b, m_b, s, table=runs):
        a, b = table.get((env_a, m_a, s)), table.get((env_b, m_b, s))
        if a is None or b is None:
            return None
        if a[1] != b[1]:
            sys.exit(f"{env_a}/{m_a} and {env_b}/{m_b} seed {s}: different warm starts ({a[1][:12]} vs {b[1][:12]})")
        return a[0] - b[0]

    def line(label, d):
        if not d:
            print(f"| {label} | no pairs | | |")
            return
        mean, lo, hi, won, lost, p = paired(d)
        print(f"| {label} | {mean:+.3f} [{lo:+.3f}, {hi:+.3f}] | {won}/{len(d) - won - lost}/{lost} | {p:.3g} |")

    def over_levels(fn):
        """Per seed, the mean over the levels of fn(level, seed); seeds missing a level are left out."""
        out = []
        for s in seeds:
            ds = [fn(w, s) for w in levels]
            if all(x is not None for x in ds):
                out.append(sum(ds) / len(ds))
        return out

    print("| reading | mean [95 % t CI] | ahead/tied/behind | p |\n|---|---|---|---|")
    for rate in rates:
        for m in methods:
            if m != "grpo":
                line(f"{m} − grpo at {rate}, mean over the levels",
                     over_levels(lambda w, s: diff(f"{w}-{rate}", m, f"{w}-{rate}", "grpo", s)))
    hi_rate, lo_rate = "lr4e-4", "lr1e-4"
    for w in levels:
        d = [x for s in seeds if (x := diff(f"{w}-{hi_rate}", "graphgpo", f"{w}-{lo_rate}", "grpo", s)) is not None]
        line(f"graphgpo at 4e-4 − grpo at 1e-4, {w}", d)
    for m in ("grpo", "graphgpo"):
        line(f"{m} at 4e-4 − {m} at 1e-4, mean over the levels",
             over_levels(lambda w, s: diff(f"{w}-{hi_rate}", m, f"{w}-{lo_rate}", m, s)))
    line("graphgpo at 4e-4 − grpo at 1e-4, mean over the levels",
         over_levels(lambda w, s: diff(f"{w}-{hi_rate}", "graphgpo", f"{w}-{lo_rate}", "grpo", s)))
    for rate in rates:
        for w in levels:
            d = [x for s in seeds if (x := diff(f"{w}-{rate}", "graphgpo", f"{w}-{rate}", "graft-ep", s)) is not None]
            line(f"graphgpo − graft-ep, {w} at {rate}", d)
        line(f"graphgpo − graft-ep at {rate}, mean over the levels",
             over_levels(lambda w, s: diff(f"{w}-{rate}", "graphgpo", f"{w}-{rate}", "graft-ep", s)))
    for m in ("graphgpo", "graphgpo-step"):
        for w in levels:
            d = [x for s in seeds if (x := diff(f"{w}-{lo_rate}", m, f"{w}-{hi_rate}", "grpo", s)) is not None]
            line(f"{m} at 1e-4 − grpo at 4e-4, {w}", d)
        line(f"{m} at 1e-4 − grpo at 4e-4, mean over the levels",
             over_levels(lambda w, s: diff(f"{w}-{lo_rate}", m, f"{w}-{hi_rate}", "grpo", s)))

    wasted = {}
    for key, d in dirs.items():
        share = final_wasted(d)
        if share is not None:
            wasted[key] = (share, runs[key][1])
    if not wasted:
        print("\nNo run directory with metrics.jsonl at hand: the wasted-share reading is left out.")
        return
    print("\nWasted share in successes at the end of training (last 10 train lines), method − grpo:\n")
    print("| reading | mean [95 % t CI] | more/tied/less | p |\n|---|---|---|---|")
    for rate in rates:
        for w in levels:
            g = [wasted[(f"{w}-{rate}", "grpo", s)][0] for s in seeds if (f"{w}-{rate}", "grpo", s) in wasted]
            if g:
                print(f"| grpo's own share, {w} at {rate} | {sum(g) / len(g):.3f} (n={len(g)}) | | |")
        for m in methods:
            if m == "grpo":
                continue
            for w in levels:
                d = [x for s in seeds if (x := diff(f"{w}-{rate}", m, f"{w}-{rate}", "grpo", s, wasted)) is not None]
                line(f"{m} − grpo, {w} at {rate}", d)
            line(f"{m} − grpo at {rate}, mean over the levels",
                 over_levels(lambda w, s: diff(f"{w}-{rate}", m, f"{w}-{rate}", "grpo", s, wasted)))


def final_wasted(run_dir, last=10):
    """The wasted share in successes over a run's last train lines, weighted by their success steps."""
    path = os.path.join(run_dir, "metrics.jsonl")
    if not run_dir or not os.path.exists(path):
        return None
    lines = []
    with open(path) as f:
        for raw in f:
            rec = json.loads(raw)
            if rec.get("type") == "train" and "est/wasted_success" in rec:
                lines.append(rec)
    lines = lines[-last:]
    steps = sum(r.get("est/success_steps", 0) for r in lines)
    if steps == 0:
        return None
    return sum(r["est/wasted_success"] * r.get("est/success_steps", 0) for r in lines) / steps


if __name__ == "__main__":
    main()
