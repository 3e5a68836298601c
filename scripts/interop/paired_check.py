"""The paired statistics of a graftrl report against scipy, numpy and statsmodels.

Usage: paired_check.py STUDY_DIR GRAFTRL_PAIRED_JSON

STUDY_DIR is a report's CSV directory (docs/study): runs.csv gives every run's final score, gain
over its start and warm start (full precision), paired.csv and variance.csv graftrl's numbers.
GRAFTRL_PAIRED_JSON is what `go test ./compare -run TestInteropStudyPaired` writes with
GRAFTRL_INTEROP_OUT set: graftrl's paired statistics recomputed from runs.csv at full precision.

Checks, each printing PASS or FAIL with its numbers (exit status 1 on any FAIL):
  1. pairing: this script pairs the runs itself (same env, seed and warm start) and gets the same
     pairs, in the same order, as graftrl;
  2. per row (final and gain; per env and over all envs): scipy.stats.ttest_rel (t, p and the 95 %
     confidence interval), scipy.stats.wilcoxon with its defaults (statistic, p), numpy's mean,
     median and std(ddof=1), the counts of pairs won, tied and lost, and statsmodels' Holm
     correction (multipletests, method "holm") equal graftrl's to 1e-9, and the report's CSV to
     its six significant digits;
  3. the paired bootstrap interval of the report agrees with numpy's percentile bootstrap of the
     mean difference (pairs resampled within each env) within Monte Carlo error, in probability
     as in rliable_check.py;
  4. variance decomposition: statsmodels' two-way ANOVA without interaction (ols
     "y ~ C(method) + C(seed)", anova_lm) gives graftrl's sums of squares to 1e-9, and the seed
     and residual SDs follow from its mean squares;
  5. sample sizes: with scipy's noncentral t, the power at graftrl's n reaches 80 % and at n - 1
     it does not (within 1e-4 of 0.8, the integration error graftrl allows itself).
"""

import csv
import json
import sys
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests

from checks import finish, report

EXACT = 1e-9
CSV_REL = 5e-6  # six significant digits: a relative rounding error of at most 5e-6
GRAFTRL_RESAMPLES = 2000
RESAMPLES = 20000
K = 4
POWER_TOL = 1e-4


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(s):
    return float("nan") if s == "" else float(s)


def same(a, b, tol=EXACT):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all((np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= tol)))


def csv_same(a, b):
    a, b = float(a), float(b)
    if np.isnan(a) or np.isnan(b):
        return np.isnan(a) and np.isnan(b)
    return abs(a - b) <= CSV_REL * abs(b) + 1e-12


def pairs_from_runs(runs, base):
    """(measure, env, method) -> (seeds, x, y), pairing by env, seed and warm start."""
    envs = sorted({r["env"] for r in runs})
    methods = sorted({r["method"] for r in runs} - {base})
    idx = {(r["env"], r["method"], int(r["seed"])): r for r in runs}
    out = {}
    scopes = envs + (["all"] if len(envs) > 1 else [])
    for measure in ("final", "gain"):
        for env in scopes:
            for m in methods:
                seeds, x, y = [], [], []
                for e in envs:
                    if env != "all" and e != env:
                        continue
                    for s in sorted(int(r["seed"]) for r in runs if r["env"] == e and r["method"] == m):
                        r, b = idx[(e, m, s)], idx.get((e, base, s))
                        if b is None or r["warm_start"] == "" or r["warm_start"] != b["warm_start"]:
                            continue
                        seeds.append(s)
                        x.append(num(r[measure]))
                        y.append(num(b[measure]))
                out[(measure, env, m)] = (seeds, np.array(x), np.array(y))
    return envs, methods, out


def bootstrap_check(diffs_by_env, go_lo, go_hi, rng):
    """numpy's stratified percentile bootstrap of the mean difference against graftrl's interval,
    compared in probability (see rliable_check.interval_check)."""
    strata = [np.asarray(d) for d in diffs_by_env if len(d)]
    n = sum(len(d) for d in strata)
    means = np.zeros(RESAMPLES)
    for d in strata:
        picks = rng.integers(0, len(d), size=(RESAMPLES, len(d)))
        means += d[picks].sum(axis=1)
    means /= n
    worst = 0.0
    for level, g in ((0.025, go_lo), (0.975, go_hi)):
        sigma = np.sqrt(level * (1 - level) * (1 / GRAFTRL_RESAMPLES + 1 / RESAMPLES))
        lo, hi = np.mean(means < g - 1e-6), np.mean(means <= g + 1e-6)
        worst = max(worst, max(lo - level, level - hi, 0.0) / sigma)
    ref = np.percentile(means, [2.5, 97.5])
    return worst <= K, worst, ref


def main():
    study_dir, json_path = sys.argv[1], sys.argv[2]
    with open(json_path) as f:
        go = json.load(f)
    base = go["baseline"]
    runs = read_csv(f"{study_dir}/runs.csv")
    envs, methods, pairs = pairs_from_runs(runs, base)
    csv_rows = {(r["measure"], r["env"], r["method"]): r for r in read_csv(f"{study_dir}/paired.csv")}
    go_rows = {(r["measure"], r["env"], r["method"]): r for r in go["rows"]}

    # 1. pairing
    mism = [k for k, (seeds, x, y) in pairs.items()
            if k not in go_rows or go_rows[k]["seeds"] != seeds or not same(go_rows[k]["x"], x, 0) or not same(go_rows[k]["y"], y, 0)]
    n_pairs = sum(len(pairs[("final", e, m)][0]) for e in envs for m in methods)
    report(not mism and len(go_rows) == len(pairs), "pairing (env, seed, warm start)",
           f"{n_pairs} pairs over {len(envs)} envs and {len(methods)} methods; rows differing: {mism[:3]}")

    # 2. tests and summaries, exact and against the CSV
    ours = {}
    for key, (seeds, x, y) in pairs.items():
        d = x - y
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tt = stats.ttest_rel(x, y)
            ci = tt.confidence_interval(0.95)
            w = stats.wilcoxon(d)
        ours[key] = dict(mean=np.mean(d), median=np.median(d), sd=np.std(d, ddof=1), t=tt.statistic, df=tt.df,
                         p_t=tt.pvalue, t_lo=ci.low, t_hi=ci.high, w=w.statistic, p_w=w.pvalue,
                         won=int(np.sum(d > 0)), tied=int(np.sum(d == 0)), lost=int(np.sum(d < 0)))
    for measure in ("final", "gain"):
        for env in envs + (["all"] if len(envs) > 1 else []):
            keys = [(measure, env, m) for m in methods]
            for p, h in (("p_t", "p_t_holm"), ("p_w", "p_w_holm")):
                adj = multipletests([ours[k][p] for k in keys], method="holm")[1]
                for k, a in zip(keys, adj):
                    ours[k][h] = a
    worst_go, worst_csv, bad_go, bad_csv = 0.0, 0.0, [], []
    fields = ["mean", "median", "sd", "t", "df", "p_t", "t_lo", "t_hi", "w", "p_w", "p_t_holm", "p_w_holm"]
    for key, o in ours.items():
        g, c = go_rows[key], csv_rows[key]
        for f in fields:
            err = abs(o[f] - g[f])
            worst_go = max(worst_go, err)
            if not same(o[f], g[f]):
                bad_go.append(f"{'/'.join(key)} {f}: scipy {o[f]!r}, graftrl {g[f]!r}")
            if not csv_same(c[f], o[f]):
                bad_csv.append(f"{'/'.join(key)} {f}: scipy {o[f]!r}, paired.csv {c[f]}")
        for f in ("won", "tied", "lost"):
            if o[f] != g[f] or str(o[f]) != c[f]:
                bad_go.append(f"{'/'.join(key)} {f}: numpy {o[f]}, graftrl {g[f]}, paired.csv {c[f]}")
    report(not bad_go, "ttest_rel, wilcoxon, numpy, Holm (statsmodels) = graftrl to 1e-9",
           f"{len(ours)} rows x {len(fields)} numbers, largest difference {worst_go:.2e}" + (f"; {bad_go[:4]}" if bad_go else ""))
    report(not bad_csv, "the same = paired.csv (six significant digits)", f"{len(ours)} rows" + (f"; {bad_csv[:4]}" if bad_csv else ""))
    exact = [k for k in ours if go_rows[k]["w_method"] == "exact"]
    report(True, "Wilcoxon methods", f"{len(exact)} rows exact, {len(ours) - len(exact)} normal approximation (scipy's method='auto' rules)")

    # 3. bootstrap intervals of the mean difference
    rng = np.random.default_rng(0)
    worst, bad = 0.0, []
    for key, (seeds, x, y) in pairs.items():
        measure, env, m = key
        if env == "all":
            by_env = []
            for e in envs:
                s, xe, ye = pairs[(measure, e, m)]
                by_env.append(xe - ye)
        else:
            by_env = [x - y]
        c = csv_rows[key]
        ok, z, ref = bootstrap_check(by_env, num(c["mean_lo"]), num(c["mean_hi"]), rng)
        worst = max(worst, z)
        if not ok:
            bad.append(f"{'/'.join(key)}: graftrl [{c['mean_lo']}, {c['mean_hi']}], numpy [{ref[0]:.6g}, {ref[1]:.6g}], {z:.1f} sigma")
    report(not bad, "paired bootstrap intervals within Monte Carlo error",
           f"{len(pairs)} intervals, largest distance {worst:.2f} sigma (limit {K})" + (f"; {bad[:3]}" if bad else ""))

    # 4. variance decomposition
    var_csv = {r["env"]: r for r in read_csv(f"{study_dir}/variance.csv")}
    bad, worst = [], 0.0
    for v in go["variance"]:
        y = np.array(v["y"])
        df = pd.DataFrame([(v["methods"][i], s, y[i, j]) for i in range(y.shape[0]) for j, s in enumerate(v["seeds"])],
                          columns=["method", "seed", "y"])
        table = anova_lm(ols("y ~ C(method) + C(seed)", data=df).fit())
        ss_m, ss_s, ss_r = table.loc["C(method)", "sum_sq"], table.loc["C(seed)", "sum_sq"], table.loc["Residual", "sum_sq"]
        ms_s, ms_r = table.loc["C(seed)", "mean_sq"], table.loc["Residual", "mean_sq"]
        a = y.shape[0]
        ref = dict(ss_method=ss_m, ss_seed=ss_s, ss_resid=ss_r, ss_total=np.sum((y - y.mean()) ** 2),
                   resid_sd=np.sqrt(ms_r), seed_sd=np.sqrt(max(0.0, (ms_s - ms_r) / a)))
        for f, val in ref.items():
            worst = max(worst, abs(val - v[f]))
            if not same(val, v[f]) or not csv_same(var_csv[v["env"]][f], val):
                bad.append(f"{v['env']} {f}: statsmodels {val!r}, graftrl {v[f]!r}, variance.csv {var_csv[v['env']][f]}")
    report(not bad, "variance decomposition = statsmodels anova_lm to 1e-9",
           f"{len(go['variance'])} envs, largest difference {worst:.2e}" + (f"; {bad[:3]}" if bad else ""))

    # 5. sample sizes
    alpha, target = go["alpha"], go["power"]

    def power_paired(n, delta, sd):
        df, ncp = n - 1, delta * np.sqrt(n) / sd
        crit = stats.t.ppf(1 - alpha / 2, df)
        return stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp)

    def power_unpaired(n, delta, sd):
        df, ncp = 2 * n - 2, delta / (sd * np.sqrt(2 / n))
        crit = stats.t.ppf(1 - alpha / 2, df)
        return stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp)

    bad, checked = [], 0
    for v in go["variance"]:
        for k, delta in enumerate(go["deltas"]):
            for name, n, power, sd in (("paired seeds", v["paired_seeds"][k], power_paired, np.sqrt(2) * v["resid_sd"]),
                                       ("unpaired runs", v["unpaired_runs"][k], power_unpaired, np.hypot(v["seed_sd"], v["resid_sd"]))):
                n = int(n)
                at = power(n, delta, sd)
                below = power(n - 1, delta, sd) if n > 2 else 0.0
                checked += 1
                if at < target - POWER_TOL or below >= target + POWER_TOL:
                    bad.append(f"{v['env']} {name} for {delta}: n={n}, power {at:.5f} (n-1: {below:.5f})")
    report(not bad, "sample sizes: scipy nct power >= 0.8 at n, < 0.8 at n - 1", f"{checked} sizes" + (f"; {bad[:3]}" if bad else ""))
    finish("paired statistics against scipy/numpy/statsmodels")


if __name__ == "__main__":
    main()
