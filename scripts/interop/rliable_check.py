"""rliable side by side with graftrl's compare package, on the study in docs/study.

Usage: rliable_check.py STUDY_DIR GRAFTRL_STATS_JSON

STUDY_DIR is a report's CSV directory (docs/study): runs.csv gives every run's final score
(env, method, seed, final), per_env.csv, aggregate.csv and profiles.csv graftrl's numbers.
GRAFTRL_STATS_JSON is what `go test ./compare -run TestInteropStudyStats` writes with
GRAFTRL_INTEROP_OUT set: graftrl's point estimates recomputed from runs.csv at full precision.

Checks, each printing PASS or FAIL with its numbers (exit status 1 on any FAIL):
  1. the scores form rliable's rectangular (runs x tasks) matrix per method: every method has
     the same seeds in every environment;
  2. rliable's point estimates (aggregate_iqm, aggregate_mean, aggregate_median,
     aggregate_optimality_gap, probability_of_improvement, the run-score distribution of
     create_performance_profile) equal graftrl's full-precision ones to 1e-9, per environment
     and aggregated (per environment graftrl's median is numpy's median of the runs: rliable's
     aggregate_median of one task is that task's mean);
  3. the same rliable numbers equal the report's CSVs to 1e-6 (the CSVs print six significant
     digits, inputs and outputs alike: at most 5e-7 each on numbers in [0, 1]);
  4. rliable's percentile-bootstrap intervals agree with the report's within a Monte Carlo
     tolerance (see interval_check);
All scores are success rates in [0, 1]: normalisation is the identity on both sides.
"""

import csv
import json
import sys

import numpy as np
from rliable import library as rly
from rliable import metrics

from checks import finish, report

EXACT = 1e-9
CSV_TOL = 1e-6
GRAFTRL_RESAMPLES = 2000  # the report's bootstrap (docs/study/report.md: 2000 resamples)
RESAMPLES = 10000  # rliable's resamples for IQM and mean intervals
PROFILE_RESAMPLES = 2000  # rliable's default for create_performance_profile
POI_RESAMPLES = 2000  # scipy's Mann-Whitney per task and resample is slow
K = 4  # interval endpoints may lie K Monte Carlo standard errors apart, in probability

def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(s):
    return float("nan") if s == "" else float(s)


def close(a, b, tol):
    """Equal within tol, NaN (undefined) equal to NaN."""
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return abs(a - b) <= tol


def score_matrices(runs):
    """Per method a (runs x envs) matrix, envs sorted and runs in seed order; fails clearly when
    the runs are not rectangular, which rliable's matrices need."""
    cells = {}
    for r in runs:
        cells.setdefault((r["env"], r["method"]), []).append((int(r["seed"]), float(r["final"])))
    envs = sorted({e for e, _ in cells})
    methods = sorted({m for _, m in cells})
    seeds = {k: sorted(s for s, _ in v) for k, v in cells.items()}
    first = seeds[(envs[0], methods[0])]
    odd = [f"{e}/{m} (seeds {seeds.get((e, m), [])})" for e in envs for m in methods if seeds.get((e, m)) != first]
    report(not odd, "rectangular runs",
           f"{len(methods)} methods x {len(envs)} envs x {len(first)} runs, seeds {first}" if not odd else
           f"rliable needs the same runs in every env and method; these differ from {first}: {', '.join(odd)}")
    if odd:
        sys.exit(1)
    return envs, methods, {m: np.array([[dict(cells[(e, m)])[s] for e in envs] for s in first]) for m in methods}


def point_checks(envs, methods, scores, ours, per_env_csv, agg_csv, prof_csv):
    base = ours["baseline"]
    same = all(np.array_equal(np.array(ours["scores"][m]).T, scores[m]) for m in methods)
    report(same, "inputs", "graftrl's score strata equal the runs.csv matrices" if same else
           "graftrl's score strata differ from the runs.csv matrices")
    csv_rows = {(r["env"], r["method"]): r for r in per_env_csv}
    worst = {"go": 0.0, "csv": 0.0}
    bad = {"go": [], "csv": []}

    def compare(what, rl, go, csv_value):
        for side, ref, tol in (("go", go, EXACT), ("csv", csv_value, CSV_TOL)):
            if not close(rl, ref, tol):
                bad[side].append(f"{what}: rliable {rl!r}, {side} {ref!r}")
            elif not np.isnan(rl):
                worst[side] = max(worst[side], abs(rl - ref))

    go_cells = {(r["env"], r["method"]): r for r in ours["per_env"]}
    for i, env in enumerate(envs):
        for m in methods:
            x = scores[m][:, [i]]
            g, c = go_cells[(env, m)], csv_rows[(env, m)]
            compare(f"{env}/{m} iqm", metrics.aggregate_iqm(x), g["iqm"], num(c["iqm"]))
            compare(f"{env}/{m} mean", metrics.aggregate_mean(x), g["mean"], num(c["mean"]))
            compare(f"{env}/{m} median", float(np.median(x)), g["median"], num(c["median"]))
            compare(f"{env}/{m} optimality gap", metrics.aggregate_optimality_gap(x), g["optimality_gap"],
                    num(c["optimality_gap"]))
            if m != base:
                compare(f"{env}/{m} P(>{base})", metrics.probability_of_improvement(x, scores[base][:, [i]]),
                        g["p_improve"], num(c["p_improve"]))
    agg_rows = {r["method"]: r for r in agg_csv}
    go_agg = {r["method"]: r for r in ours["aggregate"]}
    for m in methods:
        g, c = go_agg[m], agg_rows[m]
        compare(f"all/{m} iqm", metrics.aggregate_iqm(scores[m]), g["iqm"], num(c["iqm"]))
        compare(f"all/{m} mean", metrics.aggregate_mean(scores[m]), g["mean"], num(c["mean"]))
        compare(f"all/{m} median", metrics.aggregate_median(scores[m]), g["median"], num(c["median"]))
        compare(f"all/{m} optimality gap", metrics.aggregate_optimality_gap(scores[m]), g["optimality_gap"],
                num(c["optimality_gap"]))
        if m != base:
            compare(f"all/{m} P(>{base})", metrics.probability_of_improvement(scores[m], scores[base]),
                    g["p_improve"], num(c["p_improve"]))
    taus = np.array(ours["taus"])
    csv_taus = np.array([num(r["tau"]) for r in prof_csv if r["method"] == base])
    report(np.array_equal(taus, csv_taus), "profile thresholds",
           f"{len(taus)} thresholds {taus[0]}..{taus[-1]}, equal to profiles.csv's")
    prof_rows = {(r["method"], num(r["tau"])): r for r in prof_csv}
    for m in methods:
        rl = rly.score_distributions(scores[m], taus)
        for k, tau in enumerate(taus):
            compare(f"profile {m} tau={tau}", rl[k], ours["profiles"][m][k], num(prof_rows[(m, tau)]["frac"]))
    n = len(envs) * len(methods) * 4 + len(envs) * (len(methods) - 1) + len(methods) * 4 + len(methods) - 1 \
        + len(methods) * len(taus)
    report(not bad["go"], "point estimates vs graftrl (1e-9)",
           f"{n} values (per-env and aggregate IQM, mean, median, optimality gap, P(>{base}); "
           f"{len(methods)}x{len(taus)} profile fractions), "
           f"largest difference {worst['go']:.3g}" + ("; " + "; ".join(bad["go"][:10]) if bad["go"] else ""))
    report(not bad["csv"], "point estimates vs the report's CSVs (1e-6)",
           f"{n} values, largest difference {worst['csv']:.3g}" + ("; " + "; ".join(bad["csv"][:10]) if bad["csv"] else ""))


def interval_check(rl_lo, rl_hi, values, go_lo, go_hi, reps):
    """Compares graftrl's interval with rliable's. Both are percentile intervals of the same
    stratified bootstrap distribution, estimated from different random streams: graftrl's from
    2000 resamples, rliable's from `reps`. The comparison is made where the Monte Carlo error
    is known whatever the statistic's distribution (IQM and P(X > Y) of five runs, or a fraction
    of 30 runs, have a few atoms each): in probability. For an endpoint at level p (0.025 or
    0.975), graftrl's value g sits where rliable's resamples put the mass [F(g-), F(g)]; it
    passes when that range comes within K * sigma of p, sigma = sqrt(p(1 - p)(1/2000 + 1/reps))
    (the binomial error of the share of resamples below the endpoint, on both sides). Values
    within 1e-6 count as equal, as the report prints six significant digits. Returns, per
    endpoint, whether it passed, |rliable - graftrl| and the distance from p in sigmas."""
    values = values.reshape(len(values), -1)
    ok, diff, z = [], [], []
    for level, rl, go in ((0.025, rl_lo, go_lo), (0.975, rl_hi, go_hi)):
        sigma = np.sqrt(level * (1 - level) * (1 / GRAFTRL_RESAMPLES + 1 / reps))
        for j in range(values.shape[1]):
            v, g = values[:, j], go[j]
            lo, hi = np.mean(v < g - CSV_TOL), np.mean(v <= g + CSV_TOL)
            dist = max(lo - level, level - hi, 0.0)
            ok.append(dist <= K * sigma)
            diff.append(abs(rl[j] - g))
            z.append(dist / sigma)
    return np.array(ok), np.array(diff), np.array(z)


def interval_checks(envs, methods, scores, per_env_csv, agg_csv, prof_csv):
    # rliable draws its resample indices from numpy's global generator (np.random.choice), not
    # from its random_state argument: seeding it makes this check deterministic.
    np.random.seed(0)
    base = methods[0] if "grpo" not in methods else "grpo"
    rows = {(r["env"], r["method"]): r for r in per_env_csv}
    agg = {r["method"]: r for r in agg_csv}
    results = {}  # group name -> list of (label, ok, diff, z)

    def run(group, label, data, func, reps, go_lo, go_hi):
        if isinstance(data, list):
            bs = rly.StratifiedIndependentBootstrap(*data)
        else:
            bs = rly.StratifiedBootstrap(data)
        lo, hi = bs.conf_int(func, reps=reps, size=0.95, method="percentile")
        values = bs._results  # the resampled statistics conf_int's percentiles were taken from
        ok, diff, z = interval_check(np.atleast_1d(lo), np.atleast_1d(hi), values, np.atleast_1d(go_lo),
                                     np.atleast_1d(go_hi), reps)
        results.setdefault(group, []).append((label, ok, diff, z))

    for i, env in enumerate(envs):
        for m in methods:
            c = rows[(env, m)]
            run("per-env IQM", f"{env}/{m}", scores[m][:, [i]], metrics.aggregate_iqm, RESAMPLES,
                num(c["iqm_lo"]), num(c["iqm_hi"]))
            if m != base:
                run(f"per-env P(>{base})", f"{env}/{m}", [scores[m][:, [i]], scores[base][:, [i]]],
                    metrics.probability_of_improvement, POI_RESAMPLES, num(c["p_improve_lo"]), num(c["p_improve_hi"]))
    for m in methods:
        a = agg[m]
        run("aggregate IQM", m, scores[m], metrics.aggregate_iqm, RESAMPLES, num(a["iqm_lo"]), num(a["iqm_hi"]))
        run("aggregate mean", m, scores[m], metrics.aggregate_mean, RESAMPLES, num(a["mean_lo"]), num(a["mean_hi"]))
        run("aggregate median", m, scores[m], metrics.aggregate_median, RESAMPLES, num(a["median_lo"]),
            num(a["median_hi"]))
        run("aggregate optimality gap", m, scores[m], metrics.aggregate_optimality_gap, RESAMPLES,
            num(a["optimality_gap_lo"]), num(a["optimality_gap_hi"]))
        if m != base:
            run(f"aggregate P(>{base})", m, [scores[m], scores[base]], metrics.probability_of_improvement,
                POI_RESAMPLES, num(a["p_improve_lo"]), num(a["p_improve_hi"]))
    taus = np.array(sorted({num(r["tau"]) for r in prof_csv}))
    for m in methods:
        pr = {num(r["tau"]): r for r in prof_csv if r["method"] == m}
        go_lo = np.array([num(pr[t]["lo"]) for t in taus])
        go_hi = np.array([num(pr[t]["hi"]) for t in taus])
        run("profile", m, scores[m], lambda s: rly.score_distributions(s, taus), PROFILE_RESAMPLES, go_lo, go_hi)

    for group, items in results.items():
        n = sum(d.size for _, _, d, _ in items)
        bad = [f"{label}: {z.max():.2f} sigma" for label, ok, _, z in items if not ok.all()]
        diffs = np.concatenate([d for _, _, d, _ in items])
        zs = np.concatenate([z for _, _, _, z in items])
        report(not bad, f"intervals: {group}",
               f"{n} endpoints, largest |rliable - graftrl| {diffs.max():.4g}, "
               f"{int((diffs <= CSV_TOL).sum())} equal; graftrl's endpoints lie within {zs.max():.2f} sigma "
               f"(allowed {K}) of their levels in rliable's bootstrap distribution" + ("; " + "; ".join(bad[:5]) if bad else ""))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: rliable_check.py STUDY_DIR GRAFTRL_STATS_JSON")
    study, stats = sys.argv[1:]
    runs = read_csv(f"{study}/runs.csv")
    per_env, agg, prof = (read_csv(f"{study}/{n}.csv") for n in ("per_env", "aggregate", "profiles"))
    with open(stats) as f:
        ours = json.load(f)
    envs, methods, scores = score_matrices(runs)
    if ours["envs"] != envs or sorted(ours["methods"]) != methods:
        report(False, "inputs", f"graftrl's envs {ours['envs']} and methods {ours['methods']} differ from runs.csv's")
        sys.exit(1)
    methods = ours["methods"]  # the baseline first, as graftrl orders them
    point_checks(envs, methods, scores, ours, per_env, agg, prof)
    interval_checks(envs, methods, scores, per_env, agg, prof)
    finish("rliable check")


if __name__ == "__main__":
    main()
