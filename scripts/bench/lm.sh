#!/usr/bin/env bash
# SmolLM2-135M-Instruct's speed on the CPU: graftrl's policy/host decoder against llama.cpp
# (llama-cpp-python, on the installed Q4_1 file and on an F32 copy of it) and transformers
# (generate, float32). Not part of CI: run it on an idle machine.
#
#   scripts/bench/lm.sh            ROUNDS rounds (5) of every peer at batch 1 and 16
#   scripts/bench/lm.sh --smoke    one short round (16-token prompts, 8 new tokens): checks that
#                                  every peer runs; its figures mean nothing
#
# The work, the same for every peer: B rows (1 or 16) of a PROMPT-token prompt (128; row r's
# token i is (1000 + 37·i + 101·r) mod 49,152), prefilled, then NEW (64) greedy tokens per row,
# one decode step at a time, no stop token. prefill tok/s is B·PROMPT over the prefill's time,
# decode tok/s B·NEW over the decoding's. Every peer uses all the machine's cores and loads the
# model before its clock starts (transformers and llama.cpp also run the work once untimed).
#   graftrl          policy/host's LlamaDecoder, the file's weights dequantised to float32
#                    (BenchmarkSmolLM2Peers, policy/host/llama_bench_test.go; batch 16 prefills
#                    its rows on goroutines of their own, then decodes them together, one
#                    batched step a position: LlamaBatchDecoder)
#   llama.cpp Q4_1   the quantised file as llama.cpp runs it (Q8 activations, F16 KV cache);
#                    batch 16 is one context with 16 sequences (lm_llamacpp.py)
#   llama.cpp F32    the same weights as graftrl's, in F32 (lm_f32_gguf.py), F32 KV cache
#   transformers     generate on the file dequantised to float32 (lm_transformers.py)
# Each round runs every peer once, in turn (a fresh process each), so that a change in the
# machine's load touches them all; the figures are medians over the rounds, and the peak RSS
# the largest of a peer's processes (GNU time's %M). Each line names the machine (CPU model,
# cores, widest SIMD), the date and the command.
#
# Environment: ROUNDS, PROMPT, NEW; PEERS (a subset of "graftrl llamacpp-q4 llamacpp-f32
# transformers"). The Python peers' environments come from scripts/venv.sh
# (scripts/interop/requirements-lm.txt, scripts/interop/requirements-llamacpp.txt: the latter
# builds llama.cpp, minutes); the F32 copy of the model is kept under
# ${XDG_CACHE_HOME:-~/.cache}/graftrl/bench (540 MB). Needs GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds=${ROUNDS:-5} prompt=${PROMPT:-128} new=${NEW:-64}
peers=${PEERS:-graftrl llamacpp-q4 llamacpp-f32 transformers}
case ${1:-} in
  "") ;;
  --smoke) rounds=1 prompt=16 new=8 ;;
  *) echo "lm.sh: unknown argument ${1@Q} (allowed: none, or --smoke)" >&2; exit 2 ;;
esac
[ -x /usr/bin/time ] || { echo "lm.sh: GNU time is needed for the peak RSS (Debian: apt-get install time)" >&2; exit 1; }

source scripts/venv.sh
gguf=$(scripts/install-smollm2.sh --path)
py_lm=$(venv lm scripts/interop/requirements-lm.txt)
py_cpp=$(CMAKE_ARGS="-DGGML_CUDA=OFF -DGGML_BLAS=OFF -DLLAVA_BUILD=OFF" venv llamacpp scripts/interop/requirements-llamacpp.txt)
sum=$(sha256sum "$gguf" | cut -c1-12)
f32="${XDG_CACHE_HOME:-$HOME/.cache}/graftrl/bench/SmolLM2-135M-Instruct.F32-$sum.gguf"
if [ ! -f "$f32" ]; then
  mkdir -p "$(dirname "$f32")"
  "$py_lm" scripts/bench/lm_f32_gguf.py "$gguf" "$f32"
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go test -c -o "$out/host.test" ./policy/host

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
flags=$(grep -m1 '^flags' /proc/cpuinfo)
case " $flags " in
  *" avx512f "*) simd="AVX-512 (512-bit)" ;;
  *" avx2 "*) simd="AVX2 (256-bit)" ;;
  *) simd="SSE (128-bit)" ;;
esac
machine="$cpu, $(nproc) cores, $simd"
day=$(date -u +%F)

# peer_command PEER BATCH: the peer's command line.
peer_command() {
  case $1 in
    graftrl) echo "env GRAFTRL_SMOLLM2=1 GRAFTRL_LM_PROMPT=$prompt GRAFTRL_LM_NEW=$new $out/host.test -test.run ^\$ -test.bench ^BenchmarkSmolLM2Peers\$/^B$2\$ -test.benchtime 1x" ;;
    llamacpp-q4) echo "$py_cpp scripts/bench/lm_llamacpp.py $gguf $2 $prompt $new f16" ;;
    llamacpp-f32) echo "$py_cpp scripts/bench/lm_llamacpp.py $f32 $2 $prompt $new f32" ;;
    transformers) echo "$py_lm scripts/bench/lm_transformers.py $gguf $2 $prompt $new" ;;
    *) echo "lm.sh: unknown peer $1 (allowed: graftrl llamacpp-q4 llamacpp-f32 transformers)" >&2; return 1 ;;
  esac
}

# run PEER BATCH: one process; appends "PEER BATCH PREFILL DECODE RSS_KB" to $out/results.
run() {
  local cmd line p d
  cmd=$(peer_command "$1" "$2")
  # shellcheck disable=SC2086 # the command line is split into words on purpose
  /usr/bin/time -f '%M' -o "$out/rss" $cmd >"$out/stdout" 2>"$out/stderr" || {
    echo "lm.sh: $1 at batch $2 failed: $cmd" >&2; cat "$out/stderr" "$out/stdout" >&2; return 1
  }
  if [ "$1" = graftrl ]; then
    line=$(grep "^BenchmarkSmolLM2Peers/B$2" "$out/stdout")
    p=$(awk '{for (i = 2; i <= NF; i++) if ($i == "prefill-tok/s") print $(i-1)}' <<<"$line")
    d=$(awk '{for (i = 2; i <= NF; i++) if ($i == "decode-tok/s") print $(i-1)}' <<<"$line")
  else
    line=$(tail -1 "$out/stdout")
    p=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["prefill_tok_s"])' "$line")
    d=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["decode_tok_s"])' "$line")
  fi
  echo "$1 $2 $p $d $(tail -1 "$out/rss")" >>"$out/results"
  printf '  round %d: %s batch %d: prefill %.1f tok/s, decode %.1f tok/s, peak RSS %d MB\n' \
    "$round" "$1" "$2" "$p" "$d" "$(($(tail -1 "$out/rss") / 1024))" >&2
}

echo "== lm: $rounds round(s), prompt $prompt tokens, $new new tokens; $machine; $day" >&2
for round in $(seq "$rounds"); do
  for peer in $peers; do
    for batch in 1 16; do run "$peer" "$batch"; done
  done
done

for peer in $peers; do
  for batch in 1 16; do
    shown=$(peer_command "$peer" "$batch")
    shown=${shown//"$out/host.test"/"host.test (go test -c ./policy/host)"}
    python3 - "$out/results" "$peer" "$batch" "$machine" "$day" "$shown" "$rounds" <<'EOF'
import statistics, sys
path, peer, batch, machine, day, cmd, rounds = sys.argv[1:]
rows = [l.split() for l in open(path) if l.split()[:2] == [peer, batch]]
pre = statistics.median(float(r[2]) for r in rows)
dec = statistics.median(float(r[3]) for r in rows)
rss = max(int(r[4]) for r in rows) / 1024
print(f"{peer:13s} batch {batch:>2s}: prefill {pre:8.1f} tok/s, decode {dec:7.1f} tok/s (medians of {len(rows)}), "
      f"peak RSS {rss:5.0f} MB | {machine} | {day} | {cmd}")
EOF
  done
done
