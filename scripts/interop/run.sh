#!/usr/bin/env bash
# Interop checks: SmolLM2's file, tokenizer and logits against gguf, transformers and numpy (and
# llama.cpp with GRAFTRL_INTEROP_LLAMACPP=1; docs/lm.md), graftrl's statistics against rliable,
# its paired statistics against scipy and statsmodels, its GRPO normalisation against numpy's
# std (torch.std's semantics), its frozenlake against gymnasium's FrozenLake-v1, and OpenEnv both
# ways (README: Interop). Creates virtual environments with the
# pinned packages of requirements.txt and requirements-openenv.txt (kept under ~/.cache/graftrl,
# keyed by each file's hash), asks the Go tests for graftrl's side, starts the servers on loopback
# ports the kernel picks (stopped on exit), and runs each Python check; every check prints PASS or
# FAIL with its numbers. Exits non-zero when any check fails.
set -euo pipefail
cd "$(dirname "$0")/../.."

source scripts/venv.sh
py=$(venv interop scripts/interop/requirements.txt)
py_openenv=$(venv interop scripts/interop/requirements-openenv.txt)
export PYTHONDONTWRITEBYTECODE=1

out=$(mktemp -d)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$out"
}
trap cleanup EXIT
status=0

# await FILE PATTERN: waits up to 60 s for a line of FILE matching the sed pattern and prints its
# first group; fails when the server that writes FILE (the last one started) exits first.
await() {
  local i line
  for i in $(seq 600); do
    line=$(sed -n "s/$2/\1/p" "$1" | head -1)
    if [ -n "$line" ]; then echo "$line"; return 0; fi
    if ! kill -0 "${pids[-1]}" 2>/dev/null; then cat "$1" >&2; return 1; fi
    sleep 0.1
  done
  echo "timed out waiting for $1" >&2
  return 1
}

echo "== interop: rliable (docs/study)"
GRAFTRL_INTEROP_OUT="$out" go test ./compare -run '^TestInteropStudyStats$' -count=1
"$py" scripts/interop/rliable_check.py docs/study "$out/study_stats.json" || status=1

echo "== interop: paired statistics against scipy, numpy and statsmodels (docs/study)"
GRAFTRL_INTEROP_OUT="$out" go test ./compare -run '^TestInteropStudyPaired$' -count=1
"$py" scripts/interop/paired_check.py docs/study "$out/study_paired.json" || status=1

echo "== interop: the Go reference tables of the statistics are what scipy, statsmodels and rliable give"
"$py" scripts/interop/reference_values.py --check || status=1

echo "== interop: modelfile's GGUF values are the Python gguf package's (SmolLM2, scripts/install-smollm2.sh)"
py_gguf=$(venv gguf scripts/interop/requirements-gguf.txt)
"$py_gguf" scripts/interop/gguf_reference.py --check || status=1
echo "== interop: policy/host's Llama logits are a numpy forward pass's (SmolLM2)"
"$py_gguf" scripts/interop/llama_reference.py --check || status=1

echo "== interop: tokens/bpe's ids and chat renderings are transformers' (SmolLM2, scripts/install-smollm2.sh)"
py_tok=$(venv tokenizer scripts/interop/requirements-tokenizer.txt)
"$py_tok" scripts/interop/tokenizer_reference.py --check || status=1

# policy/host's SmolLM2 against transformers (float32, 1e-3) and, when GRAFTRL_INTEROP_LLAMACPP=1,
# llama.cpp (off by default: pip builds llama.cpp from source, about 4 minutes of both cores of a
# fresh CI machine for a check of 30 s; see scripts/interop/requirements-llamacpp.txt).
echo "== interop: policy/host's SmolLM2 against transformers: logits of 20 chats, greedy continuations, ids"
lm_start=$SECONDS
py_lm=$(venv lm scripts/interop/requirements-lm.txt)
GRAFTRL_INTEROP_OUT="$out" GRAFTRL_SMOLLM2=1 go test ./policy/host -run '^TestInteropSmolLM2Export$' -count=1
"$py_lm" scripts/interop/llama_transformers_check.py "$out/smollm2_llama.json" || status=1
echo "== interop: transformers loads the Hugging Face directory graftrl convert writes from the GGUF"
go run ./cmd/graftrl convert --in "$(scripts/install-smollm2.sh --path)" --out "$out/smollm2-hf"
"$py_lm" scripts/interop/hf_export_check.py "$out/smollm2-hf" || status=1
rm -rf "$out/smollm2-hf"
if [ "${GRAFTRL_INTEROP_LLAMACPP:-}" = 1 ]; then
  echo "== interop: policy/host's SmolLM2 against llama.cpp (the Q4_1 file, and an F32 copy of it)"
  py_cpp=$(CMAKE_ARGS="-DGGML_CUDA=OFF -DGGML_BLAS=OFF -DLLAVA_BUILD=OFF" venv llamacpp scripts/interop/requirements-llamacpp.txt)
  "$py_lm" scripts/bench/lm_f32_gguf.py "$(scripts/install-smollm2.sh --path)" "$out/smollm2-f32.gguf"
  "$py_cpp" scripts/interop/llama_cpp_check.py "$out/smollm2_llama.json" "$out/smollm2-f32.gguf" || status=1
fi
echo "interop: SmolLM2 checks $((SECONDS - lm_start)) s"

echo "== interop: GRPO normalisation (std: sample = numpy std(ddof=1) = torch.std)"
GRAFTRL_INTEROP_OUT="$out" go test ./grpo -run '^TestInteropGRPOExport$' -count=1
"$py" scripts/interop/grpo_check.py "$out/grpo_groups.json" || status=1

echo "== interop: gymnasium FrozenLake-v1 (frozenlake map: 4x4 and 8x8, slip_mode: gymnasium)"
GRAFTRL_INTEROP_OUT="$out" go test ./envs/frozenlake -run '^TestGymnasium' -count=1
"$py" scripts/interop/frozenlake_check.py "$out/frozenlake_4x4.json" || status=1
"$py" scripts/interop/frozenlake_check.py "$out/frozenlake_8x8.json" || status=1

echo "== interop: OpenEnv's server framework, graftrl's openenv env training and evaluating"
openenv_start=$SECONDS
go build -o "$out/graftrl" ./cmd/graftrl
"$py_openenv" scripts/interop/openenv_corridor.py "$out/corridor.log" >"$out/corridor.out" 2>&1 &
pids+=($!)
port=$(await "$out/corridor.out" '^listening on \([0-9]*\)$')
touch "$out/corridor.log"
"$out/graftrl" train --quiet --config scripts/interop/openenv_corridor.yaml --out-dir "$out/runs" \
  --set "env.url=ws://127.0.0.1:$port"
train_lines=$(wc -l <"$out/corridor.log")
"$out/graftrl" eval --run "$out/runs/openenv-corridor" --json >"$out/corridor_eval.json"
"$py_openenv" scripts/interop/openenv_corridor_check.py "$out/runs/openenv-corridor" "$out/corridor.log" \
  "$train_lines" "$out/corridor_eval.json" || status=1

echo "== interop: OpenEnv's client against graftrl serve-env"
GRAFTRL_INTEROP_OUT="$out" go test ./envs/openenv -run '^TestInteropEpisodesExport$' -count=1
served=()
for env in $("$py_openenv" -c 'import json,sys; print(" ".join(sorted({e["env"] for e in json.load(open(sys.argv[1]))["episodes"]})))' "$out/openenv_episodes.json"); do
  "$out/graftrl" serve-env --env "$env" --addr 127.0.0.1:0 >"$out/serve-$env.out" 2>&1 &
  pids+=($!)
  served+=("$env=$(await "$out/serve-$env.out" '.*(HTTP \(http:[^;]*\);.*')")
done
"$py_openenv" scripts/interop/openenv_client_check.py "$out/openenv_episodes.json" "${served[@]}" || status=1
echo "interop: OpenEnv checks $((SECONDS - openenv_start)) s"

exit $status
