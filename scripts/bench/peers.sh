#!/usr/bin/env bash
# graftrl against its peers at three policy sizes, in one table: graftrl's go and xla:cpu
# backends, PyTorch 1.13 (Debian's python3-torch), PyTorch 2 eager and torch.compile
# (torch_ref.py), and JAX jit (jax_ref.py). CI does not run it.
#
#   scripts/bench/peers.sh [ROUNDS [REPS]]
#
# Creates virtual environments with the pinned packages of requirements-torch2.txt and
# requirements-jax.txt (kept under ~/.cache/graftrl, keyed by each file's hash; PyPI's torch is
# the CUDA build, so the first run downloads about 4 GB), builds graftrl, and first proves for
# every size that each peer computes graftrl's function: graftrl writes weights, tokens and
# logits (`graftrl bench --write-check`, also on xla:cpu) and each peer compares its forward pass
# and its KV-cached decoder (compiled, for the compiled peer) against them; a peer whose check
# fails is not timed and the script exits non-zero. Then ROUNDS rounds, each running every
# backend at every size in turn, so that load from other processes spreads over all of them; the
# table shows medians over the rounds of the train step (forward + backward + Adam, T×B16 and
# T×B64) and of KV-cached sampling tokens/s at batch 16, each train step's share of the machine's
# peak (its FLOPs, counted by graftrl bench for the model, per second against the peak graftrl
# bench measures, printed above the table with its derivation, the CPU's model and SIMD width),
# graftrl's fastest path against the best peer as a speed ratio (>1: graftrl faster), and below
# the table every round's train steps, for the spread behind each median.
#
# Sizes (d_model/layers/heads, T = train length = max_len, d_ff 4·d_model, vocab 64):
#   d64/2/4 T64, d128/4/4 T128, d256/6/8 T256.
#
# LM=1 adds the pretrained language model (SmolLM2-135M-Instruct) after the table: decoding
# against llama.cpp and transformers (scripts/bench/lm.sh) and the T256×B8 update against PyTorch
# 2 eager and compiled, in full and with rank-8 LoRA (scripts/bench/lm_train.sh), ROUNDS rounds
# each (about 15 minutes a round on 2 cores).
#
# Environment: ROUNDS (default 2), REPS (timed repetitions, default 5), WARMUP (untimed train
# steps, the first compiles; default 3), SIZES (a subset such as "64" or "64 128"), THREADS
# (PyTorch and JAX threads; default 0: the faster of 1 and one per core per measurement, as
# torch_ref.py does), PEERS (a subset of: go xla torch1 torch2 torch2c jax), GRAFTRL (a graftrl
# binary; default: built from this checkout), TORCH1_PYTHON (default /usr/bin/python3; skipped
# when it has no torch), PJRT_PLUGIN_LIBRARY_PATH (as for graftrl; xla:cpu is skipped when
# no plugin loads: scripts/install-xla-cpu.sh installs it).
#
# Time: d256 dominates (a train step at T256×B64 takes seconds, and every Python peer measures each
# thread count); on 2 cores, 3 rounds of 11 reps take one to two hours, THREADS=2 about half of the
# Python peers' share. Run it on an otherwise idle machine; the load averages are printed.
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds=${1:-${ROUNDS:-2}}
reps=${2:-${REPS:-5}}
warmup=${WARMUP:-3}
sizes=${SIZES:-64 128 256}
threads=${THREADS:-0}
peers=${PEERS:-go xla torch1 torch2 torch2c jax}
torch1_python=${TORCH1_PYTHON:-/usr/bin/python3}

source scripts/venv.sh

# size D: the flags of policy size D (d_model) for graftrl bench and both references.
size() {
  local layers heads
  case $1 in
    64) layers=2 heads=4 ;;
    128) layers=4 heads=4 ;;
    256) layers=6 heads=8 ;;
    *) echo "peers.sh: unknown size $1 (allowed: 64 128 256)" >&2; return 1 ;;
  esac
  echo "--d-model $1 --layers $layers --heads $heads --d-ff $((4 * $1)) --vocab 64 --max-len $1 --len $1 --batch 16"
}
for d in $sizes; do size "$d" >/dev/null; done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PYTHONDONTWRITEBYTECODE=1
status=0
notes=()

has() { [[ " $peers " == *" $1 "* ]]; }

bin=${GRAFTRL:-}
if [[ -z $bin ]]; then
  bin=$work/graftrl
  echo "== peers: building graftrl" >&2
  go build -o "$bin" ./cmd/graftrl
fi

# Which peers can run here. cmd_<peer> is its command, less the size flags.
declare -A cmd label
active=()
if has go; then active+=(go); label[go]="graftrl go"; fi
if has xla; then
  if "$bin" bench --backend xla:cpu --write-check "$work/probe.json" --d-model 16 --layers 1 --heads 2 --d-ff 32 --max-len 8 --len 8 \
    2>"$work/xla-probe.txt"; then
    active+=(xla)
    label[xla]="graftrl xla:cpu"
  else
    notes+=("graftrl xla:cpu skipped: no XLA CPU plugin loads ($(tail -1 "$work/xla-probe.txt"); scripts/install-xla-cpu.sh installs it)")
  fi
fi
if has torch1; then
  if v=$("$torch1_python" -c 'import torch; print(torch.__version__)' 2>/dev/null); then
    active+=(torch1)
    cmd[torch1]="$torch1_python scripts/bench/torch_ref.py"
    label[torch1]="PyTorch $v eager"
  else
    notes+=("PyTorch 1.13 skipped: $torch1_python cannot import torch (apt-get install python3-torch libopenblas0-pthread)")
  fi
fi
if has torch2 || has torch2c; then
  py_torch=$(venv bench scripts/bench/requirements-torch2.txt)
  v=$("$py_torch" -c 'import torch; print(torch.__version__)' 2>/dev/null)
  if has torch2; then active+=(torch2); cmd[torch2]="$py_torch scripts/bench/torch_ref.py"; label[torch2]="PyTorch $v eager"; fi
  if has torch2c; then
    active+=(torch2c)
    cmd[torch2c]="$py_torch scripts/bench/torch_ref.py --compile"
    label[torch2c]="PyTorch $v compile"
  fi
fi
if has jax; then
  py_jax=$(venv bench scripts/bench/requirements-jax.txt)
  v=$("$py_jax" -c 'import jax; print(jax.__version__)' 2>/dev/null)
  active+=(jax)
  cmd[jax]="$py_jax scripts/bench/jax_ref.py --scan"
  label[jax]="JAX $v jit"
fi

# The same function: graftrl's check files (go, and xla:cpu when it runs), checked by each peer.
declare -A failed xla_checked
echo "== peers: logits checks" >&2
: >"$work/checks.txt"
for d in $sizes; do
  read -ra flags <<<"$(size "$d")"
  "$bin" bench --write-check "$work/check-$d.json" "${flags[@]}"
  for p in "${active[@]}"; do
    case $p in
      go) continue ;;
      xla)
        # xla:cpu's own weights and logits, checked by the first Python peer.
        "$bin" bench --backend xla:cpu --write-check "$work/check-xla-$d.json" "${flags[@]}" 2>>"$work/xla.log" ||
          { echo "d$d graftrl xla:cpu: FAILED to write its check file" >>"$work/checks.txt"; failed[xla]=1; status=1; }
        ;;
      *)
        if line=$(${cmd[$p]} --check "$work/check-$d.json" 2>>"$work/$p.log"); then
          echo "d$d ${label[$p]}: $line" >>"$work/checks.txt"
        else
          echo "d$d ${label[$p]}: FAILED ${line:-(see below)}" >>"$work/checks.txt"
          tail -5 "$work/$p.log" >&2
          failed[$p]=1
          status=1
        fi
        if [[ -f $work/check-xla-$d.json && -z ${xla_checked[$d]:-} ]]; then
          xla_checked[$d]=1
          if line=$(${cmd[$p]} --check "$work/check-xla-$d.json" 2>>"$work/$p.log"); then
            echo "d$d graftrl xla:cpu, against ${label[$p]}: $line" >>"$work/checks.txt"
          else
            echo "d$d graftrl xla:cpu, against ${label[$p]}: FAILED $line" >>"$work/checks.txt"
            failed[xla]=1
            status=1
          fi
        fi
        ;;
    esac
  done
done
cat "$work/checks.txt" >&2

timed=()
for p in "${active[@]}"; do
  if [[ -n ${failed[$p]:-} ]]; then
    notes+=("${label[$p]} not timed: its logits check failed")
  else
    timed+=("$p")
  fi
done

for ((r = 1; r <= rounds; r++)); do
  for d in $sizes; do
    read -ra flags <<<"$(size "$d")"
    common=("${flags[@]}" --sample-batches 16 --reps "$reps" --warmup "$warmup")
    for p in "${timed[@]}"; do
      echo "round $r/$rounds: d$d ${label[$p]}" >&2
      out="$work/run-$d-$p-$r.json"
      case $p in
        go | xla)
          backend=go
          [[ $p == xla ]] && backend=xla:cpu
          "$bin" bench --json --config "" --backend "$backend" "${common[@]}" 2>>"$work/$p.log" >"$out" || {
            echo "peers.sh: ${label[$p]} failed at d$d:" >&2; tail -5 "$work/$p.log" >&2; rm -f "$out"; status=1; }
          ;;
        *)
          ${cmd[$p]} --json --threads "$threads" "${common[@]}" 2>>"$work/$p.log" >"$out" || {
            echo "peers.sh: ${label[$p]} failed at d$d:" >&2; tail -5 "$work/$p.log" >&2; rm -f "$out"; status=1; }
          ;;
      esac
    done
  done
done

simd=$(grep -m1 '^flags' /proc/cpuinfo || true)
if [[ " $simd " == *" avx512f "* ]]; then
  simd="AVX-512 (512-bit; avx512f in /proc/cpuinfo)"
elif [[ " $simd " == *" avx2 "* ]]; then
  simd="AVX2 (256-bit; avx2, no avx512f in /proc/cpuinfo)"
else
  simd="no AVX2 (/proc/cpuinfo)"
fi

labels=()
for p in "${timed[@]}"; do labels+=("$p=${label[$p]}"); done
python3 - "$work" "$rounds" "$reps" "$simd" "$sizes" "${labels[@]}" <<'EOF' || status=1
import glob, json, os, statistics, sys

work, rounds, reps, simd, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5].split()
labels = dict(a.split("=", 1) for a in sys.argv[6:])
graftrl = [p for p in labels if p in ("go", "xla")]
med = statistics.median

def runs(d, p):
    files = glob.glob(os.path.join(work, f"run-{d}-{p}-*.json"))
    return [json.load(open(f)) for f in sorted(files, key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))]

machine, load, capability = None, [], set()
for f in glob.glob(os.path.join(work, "run-*.json")):
    r = json.load(open(f))
    if r.get("impl") == "graftrl":
        machine = machine or r["machine"]
        load += [r["load_start"], r["load_end"]]
    if r.get("cpu_capability"):
        capability.add(f"{r['torch']}: {r['cpu_capability']}")

head = f"{rounds} alternating rounds, {reps} reps each, medians"
if machine:
    head += f"; {machine['cpu']}, {machine['cores']} cores"
print(head)
if machine:
    print(f"peak: {machine['peak_gflops']:.0f} GFLOP/s = {machine['peak_derivation']}")
print(f"SIMD: {simd}" + (f"; PyTorch dispatches {', '.join(sorted(capability))}" if capability else ""))
print("checks (max |logit difference| against graftrl's):")
print("  " + open(os.path.join(work, "checks.txt")).read().strip().replace("\n", "\n  "))
print()
cols = f"{'train B16 ms':>13s} {'train B64 ms':>13s} {'sample B16 tok/s':>17s} {'% of peak B16/B64':>18s}"
print(f"{'size':<16s} {'backend':<34s} {cols}")

def fmt(x, width, digits):
    return f"{x:{width}.{digits}f}" if x is not None else f"{'—':>{width}s}"

for d in sizes:
    c = json.load(open(os.path.join(work, f"check-{d}.json")))["config"]
    name = f"d{d} L{c['layers']} H{c['heads']} T{d}"
    rows = {}
    # FLOPs of one train step at B16 and B64, from a graftrl run (the model's multiply-adds × 2,
    # the same for every implementation of it), for each row's share of the machine's peak.
    step_flops = None
    for p in graftrl:
        for r in runs(d, p):
            step_flops = [t["gflops"] * t["ms"] * 1e6 for t in r["train"]]
    for p, lab in labels.items():
        rs = runs(d, p)
        if not rs:
            continue
        tr = [med(r["train"][i]["ms"] for r in rs) for i in range(len(rs[0]["train"]))]
        tps = med(r["sample"][0]["tokens_per_s"] for r in rs)
        rows[p] = (lab, tr, tps)
        if p == "jax" and "sample_scan" in rs[0]:
            rows["jax-scan"] = (lab + ", lax.scan sampler", [None, None],
                                med(r["sample_scan"][0]["tokens_per_s"] for r in rs))
    for p, (lab, tr, tps) in rows.items():
        star = " *" if p == "xla" else ""
        share = "—"
        if machine and step_flops and tr[0] is not None:
            share = "/".join(f"{100 * f / (t / 1e3) / (machine['peak_gflops'] * 1e9):.1f}%" for f, t in zip(step_flops, tr))
        print(f"{name:<16s} {lab + star:<34s} {fmt(tr[0], 13, 1)} {fmt(tr[1], 13, 1)} {fmt(tps, 17, 0)} {share:>18s}")
        name = ""
    ours = {p: v for p, v in rows.items() if p in graftrl}
    theirs = {p: v for p, v in rows.items() if p not in graftrl}
    if ours and theirs:
        out = []
        for i, what in ((0, "train B16"), (1, "train B64")):
            g = min((v[1][i], v[0]) for v in ours.values() if v[1][i] is not None)
            t = min((v[1][i], v[0]) for v in theirs.values() if v[1][i] is not None)
            out.append(f"{what} {t[0] / g[0]:.2f}x ({g[1]} vs {t[1]})")
        g = max((v[2], v[0]) for v in ours.values())
        t = max((v[2], v[0]) for v in theirs.values())
        out.append(f"sampling {g[0] / t[0]:.2f}x ({g[1]} vs {t[1]})")
        print(f"{'':<16s} graftrl's fastest / best peer, as speed (>1: graftrl faster):")
        for line in out:
            print(f"{'':<16s}   {line}")
    print()
# Every round's train steps, in round order: how far the medians above can be trusted on a shared
# machine, where a process's step can differ from the next one's by a third.
print("train step per round, ms (B16 | B64):")
for d in sizes:
    for p, lab in labels.items():
        rs = runs(d, p)
        if rs:
            per = [" ".join(f"{r['train'][i]['ms']:.1f}" for r in rs) for i in range(len(rs[0]["train"]))]
            print(f"  d{d} {lab}: {' | '.join(per)}")
print()
if "xla" in labels:
    print("* graftrl bench samples with its host decoder on every backend: the xla:cpu row's sampling is that decoder too")
if load:
    print(f"1-min load average during the graftrl runs: min {min(load):.2f}, median {med(load):.2f}, max {max(load):.2f}")
EOF

for n in "${notes[@]}"; do echo "note: $n"; done

# The language model (LM=1): decoding against llama.cpp (Q4_1 and F32) and transformers
# (lm.sh), then the update against PyTorch 2 eager and compiled on the same weights, trained in
# full and with rank-8 adapters (lm_train.sh, which prints each side's GFLOP/s and share of the
# measured peak).
if [[ ${LM:-0} == 1 ]]; then
  echo
  ROUNDS=$rounds scripts/bench/lm.sh || status=1
  echo
  ROUNDS=$rounds scripts/bench/lm_train.sh 8 256 || status=1
  ROUNDS=$rounds LORA=8 scripts/bench/lm_train.sh 8 256 || status=1
fi
exit $status
