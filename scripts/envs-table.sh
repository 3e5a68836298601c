#!/usr/bin/env bash
# Measures the README's environment table: for each env, its shipped config
# (configs/envs/NAME.yaml) trained with GRPO and with GRAFT for seeds 1-3 as one sweep (two runs
# at once, one core each: GOMAXPROCS=1), every run of a seed starting from the same warm start.
# Prints, per env and seed, the expert's and the SFT init's held-out greedy success, GRPO's and
# GRAFT's at the end, each run's wall time and the share of it spent in the periodic evaluations
# (timing.jsonl's time/eval; the iteration-0 evaluation is not in it), then the
# medians and the bars (init within 10-70 % of the expert, a gain of at least
# min(0.15, gap/2), a run within 10 minutes). CI does not run it (about an hour on 2 cores).
#
#   scripts/envs-table.sh [ENV ...]          (default: maze frozenlake keydoor sokoban toolcalc shop)
#
# Environment: GRAFTRL (a graftrl binary; default: built from this checkout), OUT (folder of the
# sweep directories; default runs/sweeps), SEEDS (default "1 2 3"), WORKERS (default 2).
# Running it again skips finished runs (the sweep's own resume).
set -euo pipefail
cd "$(dirname "$0")/.."

envs=("$@")
[[ ${#envs[@]} -eq 0 ]] && envs=(maze frozenlake keydoor sokoban toolcalc shop)
out=${OUT:-runs/sweeps}
seeds=${SEEDS:-1 2 3}
workers=${WORKERS:-2}

bin=${GRAFTRL:-}
if [[ -z $bin ]]; then
  bin=$(mktemp -d)/graftrl
  go build -o "$bin" ./cmd/graftrl
fi

seedlist=$(echo "$seeds" | tr ' ' ',')
for env in "${envs[@]}"; do
  cfg=configs/envs/$env.yaml
  [[ -f $cfg ]] || { echo "envs-table.sh: no $cfg (allowed: the files in configs/envs/)" >&2; exit 2; }
  sweep=$(mktemp --suffix=.yaml)
  cat >"$sweep" <<EOF
name: envs-$env
base: $PWD/$cfg
out_dir: $out
grid:
  estimator: [grpo, graft]
  seed: [$seedlist]
executor: local
workers: $workers
EOF
  echo "== $env: $bin sweep --config $sweep" >&2
  "$bin" sweep --config "$sweep" >&2
  rm -f "$sweep"
done

python3 - "$out" "$seeds" "${envs[@]}" <<'EOF'
import json, os, re, statistics, sys
from datetime import datetime

out, seeds, envs = sys.argv[1], [int(s) for s in sys.argv[2].split()], sys.argv[3:]
med = statistics.median

def evals(run):
    with open(os.path.join(run, "metrics.jsonl")) as f:
        rows = [json.loads(l) for l in f if '"type":"eval"' in l]
    return rows[0]["eval/heldout/greedy/success"], rows[-1]["eval/heldout/greedy/success"]

def timing(sweep, name):
    st = json.load(open(os.path.join(sweep, "state", name + ".json")))
    wall = (when(st["ended"]) - when(st["started"])).total_seconds()
    ev = 0.0
    with open(os.path.join(sweep, "runs", name, "timing.jsonl")) as f:
        for l in f:
            ev += json.loads(l).get("time/eval", 0.0)
    return wall, ev

def when(s):
    # RFC 3339 with up to nanoseconds; fromisoformat takes at most microseconds.
    m = re.fullmatch(r"([^.]*)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", s)
    frac = (m.group(2) or "")[:6].ljust(6, "0")
    return datetime.fromisoformat(f"{m.group(1)}.{frac}{m.group(3).replace('Z', '+00:00')}")

def mmss(s):
    m, s = divmod(round(s), 60)
    return f"{m} min {s:02d} s"

print("| env | seed | expert | SFT init | GRPO | GRAFT | wall (GRPO, GRAFT) | eval share |")
print("|---|---|---|---|---|---|---|---|")
verdicts = []
for env in envs:
    sweep = os.path.join(out, "envs-" + env)
    inits, finals, gains, walls = [], {"grpo": [], "graft": []}, {"grpo": [], "graft": []}, []
    experts = []
    for s in seeds:
        row, wall_s, share = {}, [], []
        for m in ("grpo", "graft"):
            name = f"{env}-{m}-s{s}"
            init, final = evals(os.path.join(sweep, "runs", name))
            wall, ev = timing(sweep, name)
            row[m] = final
            finals[m].append(final)
            gains[m].append(final - init)
            wall_s.append(wall)
            share.append(ev / wall)
        # The warm start this seed's runs started from, as the run recorded it.
        warm = json.load(open(os.path.join(sweep, "runs", name, "summary.json")))["init"]
        expert = json.load(open(os.path.join(warm, "sft.json")))["expert_heldout_success"]
        experts.append(expert)
        inits.append(init)
        walls += wall_s
        print(f"| `{env}` | {s} | {expert:.2f} | {init:.2f} | {row['grpo']:.2f} | {row['graft']:.2f} | "
              f"{mmss(wall_s[0])}, {mmss(wall_s[1])} | {100 * max(share):.0f} % |")
    expert, init, best = med(experts), med(inits), max(med(gains["grpo"]), med(gains["graft"]))
    need = min(0.15, (expert - init) / 2)
    verdicts.append(f"{env}: init {init:.2f} = {100 * init / expert:.0f} % of expert {expert:.2f} "
                    f"({'ok' if 0.10 <= init / expert <= 0.70 else 'OUT of 10-70 %'}); "
                    f"median GRPO {med(finals['grpo']):.2f}, GRAFT {med(finals['graft']):.2f}: median gain {best:+.2f} "
                    f"vs needed {need:.2f} ({'ok' if best >= need else 'SHORT'}); "
                    f"longest run {mmss(max(walls))} ({'ok' if max(walls) <= 600 else 'OVER 10 min'})")
print()
for v in verdicts:
    print(v)
EOF
