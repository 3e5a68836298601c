#!/usr/bin/env bash
# SmolLM2-135M-Instruct's train step on the CPU: graftrl (`graftrl bench --model`, on the go
# backend and on xla:cpu when its plugin loads) against PyTorch eager and torch.compile
# (lm_train_torch.py, transformers' LlamaForCausalLM on the same weights). Not part of CI: run it
# on an idle machine.
#
#   scripts/bench/lm_train.sh [ROWS [LEN]]     default 2 × 64
#
# The update is the same on every side: forward, the clipped surrogate with an entropy bonus at
# every third position (the output layer at those positions only), backward, gradient clipping
# and Adam over all 134.5M parameters (lm_train_torch.py says it in full). Each round runs every
# peer once, in turn, a fresh process each; the figures are medians over ROUNDS (3) rounds of
# each process's median over REPS (3) timed steps after its untimed ones (graftrl: one; PyTorch:
# WARMUP, 2, the first compiling), and the largest peak RSS. The weights reach PyTorch through a
# Hugging Face directory `graftrl convert` writes from the installed GGUF (kept under
# ${XDG_CACHE_HOME:-~/.cache}/graftrl/bench, 540 MB). Environment: ROUNDS, REPS, WARMUP, PEERS (a
# subset of "go xla torch torch-compile"), LORA (a rank: every side trains rank-LORA adapters on
# every projection, the model frozen; default 0, full fine-tuning).
set -euo pipefail
cd "$(dirname "$0")/../.."

rows=${1:-2} len=${2:-64} rounds=${ROUNDS:-3} reps=${REPS:-3} warmup=${WARMUP:-2} lora=${LORA:-0}
peers=${PEERS:-go xla torch torch-compile}

source scripts/venv.sh
gguf=$(scripts/install-smollm2.sh --path)
py_lm=$(venv lm scripts/interop/requirements-lm.txt)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/graftrl" ./cmd/graftrl
hf="${XDG_CACHE_HOME:-$HOME/.cache}/graftrl/bench/SmolLM2-135M-Instruct.hf-$(sha256sum "$gguf" | cut -c1-12)"
if [ ! -d "$hf" ]; then
  mkdir -p "$(dirname "$hf")"
  "$out/graftrl" convert --in "$gguf" --out "$hf" >&2
fi
if [[ " $peers " == *" xla "* ]] && ! "$out/graftrl" bench --model "$gguf" --backend xla:cpu --batch 1 --len 8 \
  --prompt-len 1 --decode-len 1 --sample-batches 1 --reps 1 >/dev/null 2>&1; then
  echo "lm_train.sh: xla:cpu does not load here (scripts/install-xla-cpu.sh): skipped" >&2
  peers=${peers/xla/}
fi

run() { # run PEER ROUND: one process; appends its JSON line (ms, tokens/s, peak RSS) to $out/PEER
  local peer=$1
  case $peer in
    go | xla)
      local backend=go
      [ "$peer" = xla ] && backend=xla:cpu
      "$out/graftrl" bench --model "$gguf" --backend "$backend" --batch "$rows" --len "$len" --prompt-len 1 \
        --decode-len 1 --sample-batches 1 --reps "$reps" --lora "$lora" --json |
        python3 -c 'import json,sys; r=json.load(sys.stdin); t=r["train"]; print(json.dumps({"ms": t["ms"], "tokens_per_s": t["tokens_per_s"], "peak_rss_mb": t["peak_rss_mb"], "flops": t["gflops"] * t["ms"] * 1e6, "peak_gflops": r["machine"]["peak_gflops"], "memory_gbs": r["machine"].get("memory_gbs", 0)}))' ;;
    torch) "$py_lm" scripts/bench/lm_train_torch.py "$hf" --rows "$rows" --len "$len" --reps "$reps" --warmup "$warmup" --lora "$lora" 2>/dev/null ;;
    torch-compile) "$py_lm" scripts/bench/lm_train_torch.py "$hf" --rows "$rows" --len "$len" --reps "$reps" --warmup "$warmup" --lora "$lora" --compile 2>/dev/null ;;
  esac >>"$out/$peer"
}
for r in $(seq "$rounds"); do
  for p in $peers; do
    echo "round $r: $p" >&2
    run "$p"
  done
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
simd=none
grep -qw avx2 /proc/cpuinfo && simd=avx2
grep -qw avx512f /proc/cpuinfo && simd=avx512f
what="full fine-tuning"
[ "$lora" != 0 ] && what="rank-$lora LoRA"
echo "SmolLM2-135M-Instruct train step T${len}×B${rows}, $what | $cpu, $(nproc) cores, $simd | $(date -u +%Y-%m-%d) | scripts/bench/lm_train.sh $rows $len (ROUNDS=$rounds REPS=$reps LORA=$lora)"
# The update's FLOPs (the same on every side) and the machine's measured peak come from graftrl's
# report (bench's llamaTrainFLOPs; the peak an FMA loop on every core): shown when a graftrl
# peer ran.
python3 - "$out" $peers <<'EOF'
import json, os, statistics, sys
out, peers = sys.argv[1], sys.argv[2:]
rows = {p: [json.loads(l) for l in open(os.path.join(out, p)) if l.strip()] for p in peers}
ref = next((rows[p][0] for p in ("go", "xla") if rows.get(p)), None)
if ref:
    print(f"  update: {ref['flops'] / 1e9:.0f} GFLOP; machine peak {ref['peak_gflops']:.0f} GFLOP/s (measured), memory {ref['memory_gbs']:.1f} GB/s")
names = {"go": "graftrl (go)", "xla": "graftrl (xla:cpu)", "torch": "PyTorch eager", "torch-compile": "PyTorch compiled"}
for p in peers:
    r = rows[p]
    ms = statistics.median(x["ms"] for x in r)
    tps = statistics.median(x["tokens_per_s"] for x in r)
    rss = max(x["peak_rss_mb"] for x in r)
    rate = ""
    if ref:
        g = ref["flops"] / (ms / 1e3) / 1e9
        rate = f"  {g:6.1f} GFLOP/s ({100 * g / ref['peak_gflops']:4.1f} % of peak)"
    print(f"  {names[p]:<20} {ms:10.0f} ms  {tps:8.1f} tokens/s{rate}  peak RSS {rss:6.0f} MB  ({len(r)} rounds)")
EOF
