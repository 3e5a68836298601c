"""graftrl's GRPO normalisation against numpy's (and so torch.std's) semantics.

Usage: grpo_check.py GRAFTRL_GROUPS_JSON

GRAFTRL_GROUPS_JSON is what `go test ./grpo -run TestInteropGRPOExport` writes with
GRAFTRL_INTEROP_OUT set: 40 groups of 2 to 16 scores (ties, all-equal groups, step penalties,
errored members) and graftrl's advantage of every member under `std: sample` (the default) and
`std: population`.

Checks, each printing PASS or FAIL with its numbers (exit status 1 on any FAIL): over the valid
members R of each group, A = (R - mean R) / (std R + eps) with numpy's std(ddof=1) for the
default, which is torch.std's default (unbiased, correction=1) and so what TRL and verl divide
by, and with std(ddof=0) for the population form, to 1e-12; an errored member gets 0; a group
whose valid scores are all equal (or with fewer than two) gets 0 exactly.
"""

import json
import sys

import numpy as np

from checks import finish, report

TOL = 1e-12


def expected(scores, valid, eps, ddof):
    r = np.array([s for s, v in zip(scores, valid) if v])
    out = np.zeros(len(scores))
    if len(r) < 2 or np.all(r == r[0]):
        return out
    a = (r - r.mean()) / (r.std(ddof=ddof) + eps)
    out[np.array(valid)] = a
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: grpo_check.py GRAFTRL_GROUPS_JSON")
    with open(sys.argv[1]) as f:
        ours = json.load(f)
    eps = ours["eps"]
    for form, ddof in (("sample", 1), ("population", 0)):
        worst, bad, members = 0.0, [], 0
        for k, g in enumerate(ours["groups"]):
            want = expected(g["scores"], g["valid"], eps, ddof)
            got = np.array(g[form])
            members += len(got)
            diff = np.max(np.abs(got - want))
            worst = max(worst, diff)
            if diff > TOL:
                bad.append(f"group {k}: graftrl {got.tolist()}, numpy {want.tolist()}")
        what = "numpy std(ddof=1) = torch.std (unbiased)" if ddof else "numpy std(ddof=0)"
        report(not bad, f"GRPO std: {form}", f"{len(ours['groups'])} groups, {members} members against {what}, "
               f"largest difference {worst:.3g} (tolerance {TOL:g})" + ("; " + "; ".join(bad[:5]) if bad else ""))
    finish("GRPO normalisation check")


if __name__ == "__main__":
    main()
