"""Reference values of graftrl's statistics, computed by scipy, numpy, statsmodels and rliable on
small fixed inputs and written as a Go test table, so that `go test ./compare` checks them without
Python (compare/reference_values_test.go holds the assertions and their tolerances).

Usage (from the repository root, with the interop environment of scripts/interop/run.sh):

    source scripts/venv.sh; py=$(venv interop scripts/interop/requirements.txt)
    "$py" scripts/interop/reference_values.py            # rewrites compare/reference_tables_test.go
    "$py" scripts/interop/reference_values.py --check    # exits 1 when the committed table differs
                                                         # (numbers beyond REL_TOL, see same_table)

The table holds, for inputs written out below:
  - paired t-tests (scipy.stats.ttest_rel: t, df, p, the 95 % confidence interval) and Wilcoxon
    signed-rank tests (scipy.stats.wilcoxon with its defaults: statistic, p; exact, permutation
    and normal-approximation cases); Welch's t-test (scipy.stats.ttest_ind, equal_var=False);
  - Holm's correction (statsmodels multipletests, method "holm");
  - rliable's point estimates (aggregate_iqm, aggregate_mean, aggregate_median,
    aggregate_optimality_gap, probability_of_improvement, score_distributions) and
    scipy.stats.trim_mean;
  - percentile-bootstrap intervals: graftrl draws its own resamples, so its endpoints cannot equal
    rliable's. For each endpoint the table holds the range of values that passes the interop
    step's comparison in probability (rliable_check.py, interval_check): a graftrl endpoint g at
    level p passes when the share of rliable's resamples below g is at most p + K*sigma and the
    share at or below g at least p - K*sigma, sigma = sqrt(p(1-p)(1/2000 + 1/R)) for graftrl's
    2000 resamples and rliable's R. That range is [v(k), v(m+1)] of rliable's sorted resampled
    values v(1..R), k = ceil((p - K*sigma)R), m = floor((p + K*sigma)R);
  - the two-way analysis of variance without interaction (statsmodels ols "y ~ C(method) +
    C(seed)", anova_lm), the seed and residual SDs from its mean squares;
  - sample sizes: the smallest n whose power (scipy's noncentral t) reaches 0.8, for paired and
    two-sample t-tests; a case is left out when the power at n or n - 1 lies within 1e-4 of 0.8
    (graftrl integrates the noncentral t to 1e-5), and the closest calls beyond 2e-4 are added,
    which a power computed that wrong gets wrong;
  - a comparison of run directories (compare.Compare) whose paired rows and variance
    decomposition are computed by the same functions from its finals.
"""

import math
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
from rliable import library as rly
from rliable import metrics
from scipy import stats
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "compare", "reference_tables_test.go")

GRAFTRL_RESAMPLES = 2000  # compare.DefaultResamples
LEVEL = 0.95  # compare.DefaultConfidence
RESAMPLES = 50000  # rliable's resamples per interval
POI_RESAMPLES = 10000  # scipy's Mann-Whitney per task and resample is slow
K = 4  # as rliable_check.py: endpoints may lie K Monte Carlo standard errors from their level
ALPHA, POWER, POWER_TOL = 0.05, 0.8, 1e-4


def s32(*k):
    """Success rates of 32 episodes."""
    return [v / 32 for v in k]


# Paired scores (method x, baseline y), pair by pair.
PAIRED = [
    ("two pairs", s32(20, 30), s32(16, 19)),
    ("five, mixed signs", s32(16, 23, 13, 28, 21), s32(14, 24, 10, 23, 16)),
    ("six, all behind", s32(10, 12, 9, 20, 15, 3), s32(12, 15, 13, 21, 22, 8)),
    # d = 3 1 0 -1 3 2 -2 5 (/32): a zero and tied |d| → scipy's exact permutation test.
    ("eight, a zero and ties", s32(19, 14, 20, 11, 25, 18, 9, 30), s32(16, 13, 20, 12, 22, 16, 11, 25)),
    # n = 13 with tied |d|: the largest permutation case.
    ("thirteen, ties", [0.5 + k / 32 for k in (2, 1, 2, -1, 3, 1, 4, -2, 5, 2, 3, 1, 6)], [0.5] * 13),
    # d distinct and non-zero → the exact distribution of W+.
    ("twelve, distinct", [0.5 + k / 64 for k in (3, -1, 7, 12, 5, -4, 9, 2, -6, 11, 8, 13)], [0.5] * 12),
    # d = k/32 with ties and a zero, n = 15 > 13 → the normal approximation with the tie correction.
    ("fifteen, ties", s32(20, 18, 22, 17, 25, 19, 16, 21, 24, 20, 18, 23, 26, 19, 22),
     s32(18, 18, 20, 18, 21, 17, 17, 19, 20, 21, 16, 20, 22, 18, 20)),
    # One zero among distinct |d|, n = 14 > 13 → the normal approximation of the 13 others.
    ("fourteen, a zero", [0.5 + k / 64 for k in (0, 1, -2, 3, 4, -5, 6, 7, 8, -9, 10, 11, 12, 13)], [0.5] * 14),
    # 50 distinct |d|: the largest exact case; 60: the normal approximation without ties.
    ("fifty, distinct", [0.5 + (-k if k % 4 == 0 else k) / 128 for k in range(1, 51)], [0.5] * 50),
    ("sixty, distinct", [0.5 + (-1 if k % 3 == 0 else 1) * ((7 * k) % 61) / 128 for k in range(1, 61)], [0.5] * 60),
]

WELCH = [
    ("unequal sizes", s32(20, 18, 22, 17, 25, 19, 16), s32(18, 18, 20, 18, 21, 17, 17, 19, 20, 21)),
    ("unequal spread", s32(5, 30, 12, 28, 2), s32(15, 16, 17, 15, 16)),
]

HOLM = [
    [0.01, 0.04, 0.03, 0.005],
    [0.02, 0.02, 0.5],
    [0.4, 0.6, 0.9],
    [0.03],
    [0.001, 0.2, 0.04, 0.04, 0.7, 0.013],
]

# Score matrices, runs x environments (rliable's layout); graftrl's strata are their columns.
X = np.array([[0.5, 0.25, 0.875], [0.625, 0.25, 1.0], [0.5, 0.0625, 0.75], [0.9375, 0.375, 1.0], [0.4375, 0.25, 0.8125]])
Y = np.array([[0.5, 0.125, 0.75], [0.375, 0.25, 0.875], [0.5625, 0.1875, 1.0], [0.5, 0.0, 0.8125], [0.25, 0.25, 0.875]])
TEN = np.array([[v] for v in (0.5, 0.0, 1.0, 0.125, 0.0, 0.0625, 1.0, 0.25, 0.5, 0.0)])
THREE = np.array([[0.2, 0.9], [0.4, 1.0], [0.1, 0.7]])
SCORES = [("X", X), ("Y", Y), ("ten runs, one env", TEN), ("three runs", THREE)]
POI = [("X over Y", X, Y), ("Y over X", Y, X), ("X over itself", X, X), ("ten over three runs", TEN, THREE[:, :1])]
TAUS = [0.0, 0.25, 0.5, 0.75, 1.0]
TRIMS = [0.1, 0.2, 0.25, 0.3]

ANOVA = [
    ("3 methods x 5 seeds", [[0.5, 0.625, 0.25, 0.75, 0.5], [0.625, 0.75, 0.375, 0.75, 0.6875], [0.4375, 0.5, 0.3125, 0.625, 0.5]]),
    # Seeds that vary less than the residual: the seed SD's estimate is clamped at 0.
    ("seed effect below noise", [[0.5, 0.3, 0.7, 0.4], [0.3, 0.6, 0.4, 0.6]]),
    ("4 methods x 6 seeds", [[0.1, 0.4, 0.35, 0.8, 0.6, 0.2], [0.2, 0.5, 0.3, 0.9, 0.7, 0.25],
                             [0.15, 0.35, 0.5, 0.85, 0.55, 0.3], [0.3, 0.45, 0.4, 0.95, 0.75, 0.2]]),
]

# Differences of SD 0.03 to 0.3 (success rates) and the study's effects: n from 3 to about 250.
SAMPLE_SIZES = [(0.05, 0.05), (0.05, 0.12), (0.05, 0.2), (0.1, 0.03), (0.1, 0.08), (0.1, 0.3)]

# A comparison of runs: one env, grpo (the baseline) and three methods, six seeds; every run starts
# at 0.3 and ends at its final score.
COMPARE_METHODS = ["grpo", "drgrpo", "graft", "graphgpo"]
COMPARE_FINALS = [s32(14, 18, 11, 22, 16, 9), s32(15, 18, 13, 21, 19, 10), s32(17, 21, 11, 25, 20, 14),
                  s32(16, 23, 15, 24, 21, 13)]


def paired(x, y):
    x, y = np.array(x), np.array(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tt = stats.ttest_rel(x, y)
        ci = tt.confidence_interval(LEVEL)
        w = stats.wilcoxon(x - y)
    return dict(t=tt.statistic, df=tt.df, p=tt.pvalue, ci_lo=ci.low, ci_hi=ci.high, w=w.statistic, p_w=w.pvalue)


def band(values, level, reps):
    """The range of endpoints at level that pass interval_check against these resampled values."""
    v = np.sort(np.asarray(values, float))
    sigma = math.sqrt(level * (1 - level) * (1 / GRAFTRL_RESAMPLES + 1 / reps))
    k = max(1, math.ceil((level - K * sigma) * reps))
    m = min(reps - 1, math.floor((level + K * sigma) * reps))
    return v[k - 1], v[m]


def interval(data, func, reps):
    """rliable's percentile-bootstrap values of func (one group: StratifiedBootstrap; two:
    StratifiedIndependentBootstrap) and the bands of the lower and upper endpoints."""
    bs = rly.StratifiedIndependentBootstrap(*data) if isinstance(data, list) else rly.StratifiedBootstrap(data)
    bs.conf_int(func, reps=reps, size=LEVEL, method="percentile")
    values = np.asarray(bs._results).reshape(reps, -1)  # the resampled statistics
    lo = (1 - LEVEL) / 2
    return [(band(values[:, j], lo, reps), band(values[:, j], 1 - lo, reps)) for j in range(values.shape[1])]


def power_paired(n, delta, sd):
    df, ncp = n - 1, delta * math.sqrt(n) / sd
    crit = stats.t.ppf(1 - ALPHA / 2, df)
    return stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp)


def power_unpaired(n, delta, sd):
    df, ncp = 2 * n - 2, delta / (sd * math.sqrt(2 / n))
    crit = stats.t.ppf(1 - ALPHA / 2, df)
    return stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp)


def smallest_n(power, delta, sd):
    """The smallest n >= 2 with power >= 0.8 (power increases with n) and how far the power at n
    and at n - 1 lies from 0.8."""
    lo, hi = 2, 2
    while power(hi, delta, sd) < POWER:
        lo, hi = hi + 1, 2 * hi
    while lo < hi:
        mid = (lo + hi) // 2
        if power(mid, delta, sd) >= POWER:
            hi = mid
        else:
            lo = mid + 1
    margin = power(lo, delta, sd) - POWER
    if lo > 2:
        margin = min(margin, POWER - power(lo - 1, delta, sd))
    return lo, margin


def needed(power, delta, sd):
    """The smallest n >= 2 with power >= 0.8, or None when n or n - 1 is too close to call."""
    n, margin = smallest_n(power, delta, sd)
    return None if margin < POWER_TOL else n


def close_calls(power, delta, count=2):
    """The cases (sd, n) of SD 0.020 to 0.319 whose power at n or n - 1 lies closest to 0.8 yet
    more than twice POWER_TOL from it: a power computed 2e-4 wrong gets their n wrong."""
    found = []
    for i in range(300):
        sd = round(0.02 + i / 1000, 3)
        n, margin = smallest_n(power, delta, sd)
        if margin > 2 * POWER_TOL:
            found.append((margin, sd, n))
    return [(sd, n, margin) for margin, sd, n in sorted(found)[:count]]


def anova(y):
    y = np.asarray(y)
    df = pd.DataFrame([(i, j, y[i, j]) for i in range(y.shape[0]) for j in range(y.shape[1])], columns=["method", "seed", "y"])
    table = anova_lm(ols("y ~ C(method) + C(seed)", data=df).fit())
    ms_s, ms_r = table.loc["C(seed)", "mean_sq"], table.loc["Residual", "mean_sq"]
    return dict(ss_method=table.loc["C(method)", "sum_sq"], ss_seed=table.loc["C(seed)", "sum_sq"],
                ss_resid=table.loc["Residual", "sum_sq"], ss_total=float(np.sum((y - y.mean()) ** 2)),
                resid_sd=math.sqrt(ms_r), seed_sd=math.sqrt(max(0.0, (ms_s - ms_r) / y.shape[0])))


# Go source.

def f(v):
    """A float64 literal that parses back to exactly v."""
    v = float(v)
    if math.isnan(v):
        return "math.NaN()"
    r = repr(v)
    return r if any(c in r for c in ".en") else r + ".0"


def fl(vs):
    return "[]float64{" + ", ".join(f(v) for v in vs) + "}"


def rows(vs):
    """A [][]float64 literal of the rows vs."""
    return "[][]float64{" + ", ".join(fl(r)[len("[]float64"):] for r in vs) + "}"


def strata(m):
    """A runs x envs matrix as graftrl's strata: one slice of runs per env."""
    m = np.asarray(m)
    return rows(m[:, j] for j in range(m.shape[1]))


def q(s):
    return '"' + s.replace('"', '\\"') + '"'


def generate():
    np.random.seed(0)  # rliable draws its resamples from numpy's global generator
    out = []

    out.append("// refPairedCases: scipy.stats.ttest_rel(x, y), its confidence_interval(0.95), and")
    out.append("// scipy.stats.wilcoxon(x - y) with its defaults.")
    out.append("var refPairedCases = []refPaired{")
    for name, x, y in PAIRED:
        r = paired(x, y)
        out.append(f"\t{{name: {q(name)}, x: {fl(x)}, y: {fl(y)},")
        out.append(f"\t\tt: {f(r['t'])}, df: {f(r['df'])}, p: {f(r['p'])}, ciLo: {f(r['ci_lo'])}, ciHi: {f(r['ci_hi'])},")
        out.append(f"\t\tw: {f(r['w'])}, pW: {f(r['p_w'])}}},")
    out.append("}\n")

    out.append("// refWelchCases: scipy.stats.ttest_ind(x, y, equal_var=False).")
    out.append("var refWelchCases = []refWelch{")
    for name, x, y in WELCH:
        r = stats.ttest_ind(x, y, equal_var=False)
        out.append(f"\t{{name: {q(name)}, x: {fl(x)}, y: {fl(y)}, t: {f(r.statistic)}, df: {f(r.df)}, p: {f(r.pvalue)}}},")
    out.append("}\n")

    out.append('// refHolmCases: statsmodels.stats.multitest.multipletests(p, method="holm")[1].')
    out.append("var refHolmCases = []refHolm{")
    for p in HOLM:
        out.append(f"\t{{p: {fl(p)}, adjusted: {fl(multipletests(p, method='holm')[1])}}},")
    out.append("}\n")

    out.append("// refScoreCases: rliable's metrics on the runs x envs matrix whose columns are the strata,")
    out.append("// scipy.stats.trim_mean of the pooled scores at refTrims, rly.score_distributions at refTaus.")
    out.append(f"var refTaus = {fl(TAUS)}\n")
    out.append(f"var refTrims = {fl(TRIMS)}\n")
    out.append("var refScoreCases = []refScores{")
    for name, m in SCORES:
        pooled = m.ravel()
        out.append(f"\t{{name: {q(name)}, strata: {strata(m)},")
        out.append(f"\t\tiqm: {f(metrics.aggregate_iqm(m))}, mean: {f(metrics.aggregate_mean(m))}, "
                   f"median: {f(metrics.aggregate_median(m))}, gap: {f(metrics.aggregate_optimality_gap(m))},")
        out.append(f"\t\ttrimmed: {fl([stats.trim_mean(pooled, p) for p in TRIMS])},")
        out.append(f"\t\tprofile: {fl(rly.score_distributions(m, np.array(TAUS)))}}},")
    out.append("}\n")

    out.append("// refPOICases: rliable's probability_of_improvement(x, y).")
    out.append("var refPOICases = []refPOI{")
    for name, x, y in POI:
        out.append(f"\t{{name: {q(name)}, x: {strata(x)}, y: {strata(y)}, p: {f(metrics.probability_of_improvement(x, y))}}},")
    out.append("}\n")

    out.append(f"// refIntervalCases: where graftrl's 95 % interval endpoints must lie among rliable's {RESAMPLES}")
    out.append(f"// resamples ({POI_RESAMPLES} for poi), np.random.seed(0), K = {K} (see the script's comment).")
    out.append("var refIntervalCases = []refInterval{")
    lines = []

    def add(name, stat, x, y, value, bands, tau=None):
        for j, (lo, hi) in enumerate(bands):
            t = "" if tau is None else f", tau: {f(tau[j])}"
            label = name if tau is None else f"{name} tau={tau[j]}"
            ystr = f", y: {strata(y)}" if y is not None else ""
            v = value[j] if tau is not None else value
            lines.append(f"\t{{name: {q(label)}, stat: {q(stat)}, x: {strata(x)}{ystr}{t}, value: {f(v)},")
            lines.append(f"\t\tlo: [2]float64{{{f(lo[0])}, {f(lo[1])}}}, hi: [2]float64{{{f(hi[0])}, {f(hi[1])}}}}},")

    for name, m in (("X", X), ("ten runs, one env", TEN)):
        add("iqm " + name, "iqm", m, None, metrics.aggregate_iqm(m), interval(m, metrics.aggregate_iqm, RESAMPLES))
    add("mean X", "mean", X, None, metrics.aggregate_mean(X), interval(X, metrics.aggregate_mean, RESAMPLES))
    add("median X", "median", X, None, metrics.aggregate_median(X), interval(X, metrics.aggregate_median, RESAMPLES))
    add("optimality gap X", "gap", X, None, metrics.aggregate_optimality_gap(X),
        interval(X, metrics.aggregate_optimality_gap, RESAMPLES))
    add("poi X over Y", "poi", X, Y, metrics.probability_of_improvement(X, Y),
        interval([X, Y], metrics.probability_of_improvement, POI_RESAMPLES))
    taus = np.array([0.25, 0.5, 0.75])
    add("profile X", "profile", X, None, rly.score_distributions(X, taus),
        interval(X, lambda s: rly.score_distributions(s, taus), RESAMPLES), tau=list(taus))
    d = np.array(PAIRED[4][1]) - np.array(PAIRED[4][2])
    add("mean of paired differences", "mean", d[:, None], None, metrics.aggregate_mean(d[:, None]),
        interval(d[:, None], metrics.aggregate_mean, RESAMPLES))
    out.extend(lines)
    out.append("}\n")

    out.append('// refAnovaCases: statsmodels anova_lm(ols("y ~ C(method) + C(seed)")), y[method][seed];')
    out.append("// residSD = sqrt(MS resid), seedSD = sqrt(max(0, (MS seed - MS resid)/methods)).")
    out.append("var refAnovaCases = []refAnova{")
    for name, y in ANOVA:
        a = anova(y)
        out.append(f"\t{{name: {q(name)}, y: {rows(y)},")
        out.append(f"\t\tssMethod: {f(a['ss_method'])}, ssSeed: {f(a['ss_seed'])}, ssResid: {f(a['ss_resid'])}, "
                   f"ssTotal: {f(a['ss_total'])}, residSD: {f(a['resid_sd'])}, seedSD: {f(a['seed_sd'])}}},")
    out.append("}\n")

    out.append("// refSampleSizes: the smallest n whose power at alpha 0.05 reaches 0.8, by scipy.stats.nct:")
    out.append("// paired (df n - 1, ncp delta*sqrt(n)/sd) and two-sample (df 2n - 2, ncp delta/(sd*sqrt(2/n))).")
    out.append("var refSampleSizes = []refSampleSize{")
    left = []
    for delta, sd in SAMPLE_SIZES:
        for kind, power in (("paired", power_paired), ("two-sample", power_unpaired)):
            n = needed(power, delta, sd)
            if n is None:
                left.append(f"{kind} delta={delta} sd={sd}")
                continue
            out.append(f"\t{{paired: {'true' if kind == 'paired' else 'false'}, delta: {f(delta)}, sd: {f(sd)}, n: {n}}},")
    out.append("")
    out.append("\t// The closest calls: the power at n or n - 1 within a few 1e-4 of 0.8.")
    for delta in (0.05, 0.1):
        for kind, power in (("paired", power_paired), ("two-sample", power_unpaired)):
            for sd, n, margin in close_calls(power, delta):
                out.append(f"\t{{paired: {'true' if kind == 'paired' else 'false'}, delta: {f(delta)}, sd: {f(sd)}, n: {n}}}, "
                           f"// {margin:.1e} from 0.8")
    out.append("}\n")
    if left:
        out.append(f"// Left out, too close to 0.8 to call within graftrl's integration error: {'; '.join(left)}.\n")

    out.append("// refCompareCase: paired rows against grpo (scipy as in refPairedCases; Holm over the three")
    out.append("// methods by statsmodels) and the variance decomposition (statsmodels, as refAnovaCases).")
    methods = [(m, paired(x, COMPARE_FINALS[0])) for m, x in zip(COMPARE_METHODS[1:], COMPARE_FINALS[1:])]
    holm_t = multipletests([r["p"] for _, r in methods], method="holm")[1]
    holm_w = multipletests([r["p_w"] for _, r in methods], method="holm")[1]
    a = anova(COMPARE_FINALS)
    out.append("var refCompareCase = refCompare{")
    out.append(f"\tmethods: []string{{{', '.join(q(m) for m in COMPARE_METHODS)}}},")
    out.append(f"\tfinals: {rows(COMPARE_FINALS)},")
    out.append("\trows: []refCompareRow{")
    for (m, r), ht, hw in zip(methods, holm_t, holm_w):
        out.append(f"\t\t{{method: {q(m)}, t: {f(r['t'])}, p: {f(r['p'])}, pHolm: {f(ht)}, ciLo: {f(r['ci_lo'])}, "
                   f"ciHi: {f(r['ci_hi'])}, w: {f(r['w'])}, pW: {f(r['p_w'])}, pWHolm: {f(hw)}}},")
    out.append("\t},")
    out.append(f"\tanova: refAnova{{name: \"compare\", y: {rows(COMPARE_FINALS)},")
    out.append(f"\t\tssMethod: {f(a['ss_method'])}, ssSeed: {f(a['ss_seed'])}, ssResid: {f(a['ss_resid'])}, "
               f"ssTotal: {f(a['ss_total'])}, residSD: {f(a['resid_sd'])}, seedSD: {f(a['seed_sd'])}}},")
    out.append("}")
    head = ["// Code generated by scripts/interop/reference_values.py; DO NOT EDIT.", "", "package compare", ""]
    if any("math.NaN()" in line for line in out):
        head += ['import "math"', ""]
    return gofmt("\n".join(head + out) + "\n")


def gofmt(src):
    """The source as gofmt lays it out (gofmt from PATH, else from the Go installation)."""
    exe = "gofmt"
    try:
        subprocess.run([exe, "-h"], capture_output=True)
    except FileNotFoundError:
        goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip()
        exe = os.path.join(goroot, "bin", "gofmt")
    res = subprocess.run([exe], input=src, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("gofmt failed on the generated table:\n" + res.stderr)
    return res.stdout


# Numbers of the committed table and of a fresh one may differ in their last digits: statsmodels'
# least squares run on the machine's BLAS and LAPACK, whose kernels (and so rounding) depend on the
# CPU's vector width. Such numbers count as equal within REL_TOL of the larger, or ABS_TOL (sums
# of squares that cancel to ~1e-32); everything else must match exactly.
REL_TOL, ABS_TOL = 1e-12, 1e-15
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def same_table(committed, fresh):
    """Whether two generated tables agree: the same text between numbers, numbers within the
    tolerances; and a note on the numbers that differ."""
    if committed == fresh:
        return True, ""
    a, b = NUMBER.split(committed), NUMBER.split(fresh)
    na, nb = NUMBER.findall(committed), NUMBER.findall(fresh)
    if a != b or len(na) != len(nb):
        return False, " (text other than numbers differs)"
    worst, differ = 0.0, 0
    for x, y in zip(na, nb):
        if x == y:
            continue
        differ += 1
        fx, fy = float(x), float(y)
        d = abs(fx - fy)
        if d > REL_TOL * max(abs(fx), abs(fy)) + ABS_TOL:
            return False, f" ({x} against {y} now)"
        worst = max(worst, d / max(abs(fx), abs(fy), ABS_TOL))
    return True, (f" within {REL_TOL:g} relative ({differ} numbers differ in their last digits, "
                  f"largest relative difference {worst:.1e}: this CPU's BLAS)")


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit("usage: reference_values.py [--check]")
    src = generate()
    if check:
        with open(OUT) as fh:
            same, detail = same_table(fh.read(), src)
        print(("PASS" if same else "FAIL") + f" reference table: {os.path.relpath(OUT, ROOT)} "
              + ("equals the values scipy, numpy, statsmodels and rliable give now" + detail if same else
                 "differs from what scipy, numpy, statsmodels and rliable give now" + detail
                 + ": run reference_values.py and review the diff"))
        sys.exit(0 if same else 1)
    with open(OUT, "w") as fh:
        fh.write(src)
    print(f"wrote {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
