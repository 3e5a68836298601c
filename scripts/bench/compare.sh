#!/usr/bin/env bash
# Runs `graftrl bench` and the PyTorch reference (torch_ref.py) in alternation for several rounds
# on this machine and prints the medians and the graftrl/PyTorch ratios. CI does not run it.
# (scripts/bench/peers.sh compares against PyTorch 1.13 and 2, compiled too, and JAX at three sizes.)
#
#   scripts/bench/compare.sh [ROUNDS] [-- flags for both sides: --d-model --layers --heads --d-ff
#                                       --vocab --max-len --batch --len --sample-batches --reps --warmup --action-tokens]
#
# Environment: GRAFTRL (a graftrl binary; default: built from this checkout), PYTHON (default
# /usr/bin/python3, which has Debian's python3-torch), REF (the reference script, default
# scripts/bench/torch_ref.py; scripts/bench/jax_ref.py with a PYTHON that has jax), ITER_EVERY (run the RL iteration benchmark
# in every k-th graftrl round, default 1; 0 skips it). Needs python3-torch and, for a fair
# reference, an optimised BLAS (apt-get install python3-torch libopenblas0-pthread). Load from
# other processes skews both sides: the ratios of medians over alternating rounds are what to
# read, together with the load averages printed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds=5
if [[ $# -gt 0 && $1 != "--" ]]; then rounds=$1; shift; fi
[[ $# -gt 0 && $1 == "--" ]] && shift
extra=("$@")

python=${PYTHON:-/usr/bin/python3}
ref=${REF:-scripts/bench/torch_ref.py}
iter_every=${ITER_EVERY:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bin=${GRAFTRL:-}
if [[ -z $bin ]]; then
  bin=$work/graftrl
  go build -o "$bin" ./cmd/graftrl
fi
"$bin" bench --help >/dev/null 2>&1 || { echo "compare.sh: $bin has no bench command" >&2; exit 1; }
if [[ $ref == scripts/bench/torch_ref.py ]]; then
  "$python" -c 'import torch' 2>/dev/null || { echo "compare.sh: $python cannot import torch (apt-get install python3-torch)" >&2; exit 1; }
fi

# The reference must compute graftrl's function: same weights, same tokens, same logits.
"$bin" bench --write-check "$work/check.json" "${extra[@]}"
"$python" "$ref" --check "$work/check.json" | tee "$work/check.txt"

for ((r = 1; r <= rounds; r++)); do
  cfg=()
  if [[ $iter_every -eq 0 ]] || (( (r - 1) % iter_every != 0 )); then cfg=(--config ""); fi
  echo "round $r/$rounds: graftrl" >&2
  "$bin" bench --json "${cfg[@]}" "${extra[@]}" 2>/dev/null >"$work/graftrl-$r.json"
  echo "round $r/$rounds: $(basename "$ref" .py)" >&2
  "$python" "$ref" --json "${extra[@]}" >"$work/torch-$r.json"
done

"$python" - "$work" "$rounds" <<'EOF'
import glob, json, os, statistics, sys

work, rounds = sys.argv[1], int(sys.argv[2])
g = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(work, "graftrl-*.json")))]
t = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(work, "torch-*.json")))]
med = statistics.median

def train_ms(runs, i):
    return med(r["train"][i]["ms"] for r in runs)

def sample(runs, i, key):
    return med(r["sample"][i][key] for r in runs)

m, c = g[0]["machine"], g[0]["config"]
print(f"{rounds} alternating rounds on {m['cpu']}, {m['cores']} cores; policy d_model {c['d_model']}, "
      f"{c['layers']} layers, {c['heads']} heads, vocab {c['vocab']}, max_len {c['max_len']}")
peer = t[0].get("peer") or f"PyTorch {t[0]['torch']}"
print(f"{peer} (best of {t[0]['threads']} threads per measurement), BLAS {t[0]['blas'].get('libraries')}, "
      f"kernel {t[0]['blas'].get('openblas_core', '?')}; removed from its env: {t[0]['removed_env'] or 'nothing'}")
print(f"peak {m['peak_gflops']:.0f} GFLOP/s ({m['peak_derivation']})")
print("same function: " + open(os.path.join(work, "check.txt")).read().strip())
print()
print(f"{'':28s} {'graftrl':>12s} {peer.split()[0]:>12s} {'ratio':>8s}")
for i, tr in enumerate(g[0]["train"]):
    a, b = train_ms(g, i), train_ms(t, i)
    fl = tr["gflops"] * tr["ms"] / 1e3  # GFLOP of the step
    print(f"train step T{tr['len']}xB{tr['rows']:<4d} (ms) {a:12.1f} {b:12.1f} {a / b:7.2f}x   "
          f"(time ratio; GFLOP/s {fl / a * 1e3:.2f} vs {fl / b * 1e3:.2f})")
for i, s in enumerate(g[0]["sample"]):
    a, b = sample(g, i, "tokens_per_s"), sample(t, i, "tokens_per_s")
    print(f"sampling batch {s['batch']:<4d} (tok/s) {a:12.0f} {b:12.0f} {a / b:7.2f}x   "
          f"(throughput ratio; ms/step {sample(g, i, 'step_ms'):.3f} vs {sample(t, i, 'step_ms'):.3f})")
its = [r["iteration"] for r in g if r.get("iteration")]
if its:
    k = lambda key: med(it[key] for it in its)
    print(f"RL iteration ({its[0]['config']}, median over {len(its)} runs): total {k('total_s'):.2f} s = sample "
          f"{k('sample_s'):.2f} s (env {k('env_s'):.3f} s) + estimate {k('estimate_s'):.4f} s + update {k('update_s'):.2f} s; "
          f"peak RSS {k('peak_rss_mb'):.0f} MB")
loads = [r["load_start"] for r in g] + [r["load_end"] for r in g]
print(f"1-min load average during the graftrl runs: min {min(loads):.2f}, median {med(loads):.2f}, max {max(loads):.2f}")
EOF
