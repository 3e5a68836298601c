#!/usr/bin/env python3
"""Holm's step-down correction over the credit study's whole hypothesis family.

The study's hypothesis (docs/credit/README.md, Design) covers 6 cells x 3 methods = 18
paired tests of final held-out greedy success against GRPO. The report corrects each cell's
3 tests separately (paired.csv's p_t_holm); this script corrects all 18 together, from the
raw paired-t p-values in docs/credit/report/paired.csv (measure final, env not "all").

Holm: sort the m p-values ascending, multiply the i-th (1-based) by m - i + 1, take the
cumulative maximum and cap at 1.

Usage: python3 scripts/credit/holm-family.py [docs/credit/report/paired.csv]
Python 3 standard library only.
"""
import csv
import os
import sys

METHODS = ("graft", "graft-published", "graphgpo")
BASELINE = "grpo"


def holm(ps):
    """Holm-adjusted p-values, in the order of ps."""
    m = len(ps)
    order = sorted(range(m), key=lambda k: ps[k])
    adj = [0.0] * m
    running = 0.0
    for i, k in enumerate(order, start=1):
        running = max(running, ps[k] * (m - i + 1))
        adj[k] = min(1.0, running)
    return adj


def cell_key(env):
    # "maze7-cap1.5" -> (slack 1.5, horizon 7): the README's row order.
    horizon, cap = env.split("-cap")
    return float(cap), int(horizon[len("maze"):])


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "docs", "credit", "report", "paired.csv")
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["measure"] != "final" or r["env"] == "all" or r["baseline"] != BASELINE:
                continue
            if r["method"] not in METHODS:
                continue
            rows.append(r)
    if len(rows) != 18:
        sys.exit(f"expected 18 paired tests (6 cells x 3 methods), found {len(rows)} in {path}")
    adj = holm([float(r["p_t"]) for r in rows])
    for r, a in zip(rows, adj):
        r["p_family"] = a
    rows.sort(key=lambda r: (cell_key(r["env"]), METHODS.index(r["method"])))

    print(f"Holm over {len(rows)} paired t-tests (final, method - {BASELINE}), from {os.path.relpath(path, root)}")
    print(f"{'horizon':>7} {'slack':>5} {'method':<16} {'mean':>7} {'ahead/tied/behind':>17} "
          f"{'p_t':>9} {'Holm cell':>9} {'Holm 18':>9}  label: cell / 18")
    for r in rows:
        slack, horizon = cell_key(r["env"])
        cell_sig = float(r["p_t_holm"]) < 0.05
        fam_sig = r["p_family"] < 0.05
        print(f"{horizon:>7} {slack:>5g} {r['method']:<16} {float(r['mean']):>+7.3f} "
              f"{r['won'] + '/' + r['tied'] + '/' + r['lost']:>17} "
              f"{float(r['p_t']):>9.3g} {float(r['p_t_holm']):>9.3g} {r['p_family']:>9.3g}  "
              f"{'yes' if cell_sig else 'no'} / {'yes' if fam_sig else 'no'}"
              f"{'  <- loses its label' if cell_sig and not fam_sig else ''}")


if __name__ == "__main__":
    main()
