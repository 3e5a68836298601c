#!/usr/bin/env bash
# Checks graftrl on xla:cuda, on a machine with an NVIDIA GPU and a CUDA PJRT plugin, with
# prebuilt binaries (the GPU machine needs no Go toolchain):
#
#   scripts/gpu-check.sh --build             here, with Go: build bin/gpu-check/{graftrl,policy.test}
#   scripts/gpu-check.sh [PLUGIN.so]         there: link the plugin, run the checks (a few minutes)
#   scripts/gpu-check.sh --dry-run [PLUGIN]  anywhere: find the plugin, print what would be linked
#                                            and set, check the binaries; run nothing on a GPU
#
# The plugin: the argument, else $GRAFTRL_CUDA_PLUGIN, else the first of
# jax_plugins/xla_cuda13/xla_cuda_plugin.so, jax_plugins/xla_cuda12/xla_cuda_plugin.so (the pip
# wheels jax-cuda13-pjrt / jax-cuda12-pjrt) and xla_plugins/xla_cuda*/*.so in python3's
# site-packages folders ($VIRTUAL_ENV's first), else ~/.local/lib/go-xla/pjrt_c_api_cuda_plugin.so.
# It is linked as $LINK_DIR/pjrt_c_api_cuda_plugin.so (the name go-xla looks for; default
# $OUT/pjrt or a temporary folder) and PJRT_PLUGIN_LIBRARY_PATH is set to that folder. go-xla
# v0.1.4 would set XLA_FLAGS=--xla_gpu_cuda_data_dir to a path hard-coded for its author's machine
# when it sees an nvidia/ folder next to the plugin's folder: the script sets XLA_FLAGS itself (the
# folder holding nvvm/libdevice: the nvidia pip packages next to the plugin, else /usr/local/cuda)
# and GOPJRT_CUDA_CHECKS=0, and puts the nvidia pip packages' lib folders on LD_LIBRARY_PATH (the
# plugin's RPATH, $ORIGIN/../nvidia/..., does not resolve through the link).
#
# The checks, each under $GPU_CHECK_LIMIT seconds (150), with its output in $OUT (default: a
# temporary folder; stderr beside each in FILE.stderr):
#   conformance.txt   policy's XLA conformance tests against go, on xla:cuda (GRAFTRL_XLA_BACKEND),
#                     the Llama's apart (lm-logits.txt)
#   quickstart.txt    configs/quickstart.yaml on --backend xla:cuda, $GPU_CHECK_ITERATIONS (3) iterations
#   bench-dN.txt      graftrl bench --backend xla:cuda at d64 (T64), d128 (T128) and d256 (T256):
#                     the train step at B16 and B64 and sampling at batch 16, with the host
#                     decoder and with the backend's graph KV decoder (weights kept on the device)
#   env-NAME.txt      a 2-iteration run of every shipped env config (configs/envs/*.yaml)
#   lm-logits.txt     the Llama policy on the backend against policy/host's (TestXLACPULlama: a
#                     tiny Llama within 1e-5, and SmolLM2-135M-Instruct's logits within 1e-3 when
#                     the model file is here: $GPU_CHECK_MODEL, else where
#                     scripts/install-smollm2.sh puts it; copy it there first, the GPU machine
#                     may have no package index)
#   lm-bench.txt      graftrl bench --model on the backend, when the model file is here (else
#                     skipped, not failed): host prefill and decode, the graph decoder at batch 1
#                     and 16, and the train step at T64×B8
#   lm-train.txt      a 2-iteration RL run of configs/lm/maze.yaml (SmolLM2 with LoRA, chat
#                     episodes) on the backend, when the model file is here
#   summary.txt       one line per step: status, seconds, the step's figure; printed as a table
#                     at the end; also setup.txt, nvidia-smi.txt
# $GPU_CHECK_BIN replaces bin/gpu-check; $GPU_CHECK_STEPS runs some of the steps only
# (conformance quickstart bench envs lm). $GPU_CHECK_BACKEND (default xla:cuda) runs the same checks
# on another backend, e.g. xla:cpu, to try the script on a machine without a GPU (the plugin
# search and the GPU check are then skipped).
# Exit status: 0 when every step passed, 1 when one failed or no GPU is here (without --dry-run),
# 2 for a bad argument.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BIN=${GPU_CHECK_BIN:-$ROOT/bin/gpu-check}
ITERATIONS=${GPU_CHECK_ITERATIONS:-3}
LIMIT=${GPU_CHECK_LIMIT:-150} # seconds per step
STEPS=${GPU_CHECK_STEPS:-conformance quickstart bench envs lm}
MODEL=${GPU_CHECK_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/graftrl/models/SmolLM2-135M-Instruct.Q4_1.gguf}
BACKEND=${GPU_CHECK_BACKEND:-xla:cuda}
for s in $STEPS; do
  case $s in
    conformance | quickstart | bench | envs | lm) ;;
    *) echo "gpu-check: GPU_CHECK_STEPS: unknown step $s (allowed: conformance, quickstart, bench, envs, lm)" >&2; exit 2 ;;
  esac
done
CUDA=0
[[ $BACKEND == xla:cuda ]] && CUDA=1
DRY=0 BUILD=0 PLUGIN_ARG=
for a in "$@"; do
  case $a in
    --dry-run) DRY=1 ;;
    --build) BUILD=1 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gpu-check: unknown option $a (allowed: --dry-run, --build, --help, a plugin path)" >&2; exit 2 ;;
    *) [[ -z $PLUGIN_ARG ]] || { echo "gpu-check: one plugin path at most (got $PLUGIN_ARG and $a)" >&2; exit 2; }
       PLUGIN_ARG=$a ;;
  esac
done

log() { echo "gpu-check: $*"; }
fail() { echo "gpu-check: FAILED: $*" >&2; exit 1; }

if ((BUILD)); then
  command -v go >/dev/null || fail "--build needs the Go toolchain"
  mkdir -p "$BIN" || fail "cannot create $BIN"
  log "building $BIN/graftrl and $BIN/policy.test"
  go build -ldflags='-s -w' -o "$BIN/graftrl" ./cmd/graftrl || fail "go build ./cmd/graftrl"
  go test -c -ldflags='-s -w' -o "$BIN/policy.test" ./policy || fail "go test -c ./policy"
fi

# --- the plugin ---------------------------------------------------------------------------
site_dirs() {
  [[ -n ${VIRTUAL_ENV:-} ]] && ls -d "$VIRTUAL_ENV"/lib/python3*/site-packages 2>/dev/null
  if command -v python3 >/dev/null; then
    python3 -c 'import site; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null
  fi
}
PLUGIN= SEARCHED=()
if ((!CUDA)); then
  : # another backend: it finds its own plugin
elif [[ -n $PLUGIN_ARG ]]; then
  PLUGIN=$PLUGIN_ARG
elif [[ -n ${GRAFTRL_CUDA_PLUGIN:-} ]]; then
  PLUGIN=$GRAFTRL_CUDA_PLUGIN
else
  while read -r sp; do
    [[ -n $sp ]] || continue
    for c in "$sp"/jax_plugins/xla_cuda13/xla_cuda_plugin.so "$sp"/jax_plugins/xla_cuda12/xla_cuda_plugin.so "$sp"/xla_plugins/xla_cuda*/*.so; do
      SEARCHED+=("$c")
      if [[ -z $PLUGIN && -f $c ]]; then PLUGIN=$c; fi
    done
  done < <(site_dirs)
  c=$HOME/.local/lib/go-xla/pjrt_c_api_cuda_plugin.so
  SEARCHED+=("$c")
  if [[ -z $PLUGIN && -f $c ]]; then PLUGIN=$c; fi
fi

GPU=0
if compgen -G '/dev/nvidia*' >/dev/null || { command -v nvidia-smi >/dev/null && nvidia-smi 2>/dev/null | grep -q NVIDIA-SMI; }; then
  GPU=1
fi

WOULD=
if ((DRY)); then
  WOULD="would "
  LINK_DIR=${LINK_DIR:-${OUT:-<a temporary folder>}/pjrt} # a dry run writes nothing
else
  ((GPU || !CUDA)) || fail "no NVIDIA GPU here (no /dev/nvidia*, no nvidia-smi that finds one): nothing to check; --dry-run checks the set-up"
  OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")}
  mkdir -p "$OUT" || fail "cannot create $OUT"
  OUT=$(cd "$OUT" && pwd)
  LINK_DIR=${LINK_DIR:-$OUT/pjrt}
fi

if ((!CUDA)); then
  log "backend: $BACKEND (GPU_CHECK_BACKEND): its own plugin, no CUDA set-up"
elif [[ -z $PLUGIN ]]; then
  log "plugin: none found; looked for: ${SEARCHED[*]:-nothing (no python3 site-packages)}"
  log "  (pip install jax-cuda13-pjrt or jax-cuda12-pjrt, or pass the plugin's path)"
else
  [[ -f $PLUGIN ]] || fail "plugin $PLUGIN: no such file"
  PLUGIN=$(readlink -f "$PLUGIN")
  log "plugin: $PLUGIN"
fi

# The CUDA data folder and library folders: the nvidia pip packages beside the plugin's package.
DATA_DIR= LIB_DIRS=
if [[ -n $PLUGIN ]]; then
  for nv in "$(dirname "$(dirname "$PLUGIN")")/nvidia" "$(dirname "$(dirname "$(dirname "$PLUGIN")")")/nvidia"; do
    [[ -d $nv ]] || continue
    libdevice=$(find "$nv" -path '*nvvm/libdevice/libdevice*.bc' -print -quit 2>/dev/null)
    [[ -n $libdevice ]] && DATA_DIR=$(dirname "$(dirname "$(dirname "$libdevice")")")
    LIB_DIRS=$(find "$nv" -maxdepth 3 -type d -name lib 2>/dev/null | sort | paste -sd:)
    break
  done
fi
if [[ -z $DATA_DIR && -d /usr/local/cuda/nvvm/libdevice ]]; then DATA_DIR=/usr/local/cuda; fi
XLA_FLAGS_NEW=${XLA_FLAGS:-}
if [[ -n $DATA_DIR && $XLA_FLAGS_NEW != *--xla_gpu_cuda_data_dir* ]]; then
  XLA_FLAGS_NEW="${XLA_FLAGS_NEW:+$XLA_FLAGS_NEW }--xla_gpu_cuda_data_dir=$DATA_DIR"
fi
LD_NEW=${LIB_DIRS}${LD_LIBRARY_PATH:+${LIB_DIRS:+:}$LD_LIBRARY_PATH}

if ((CUDA)); then
  log "${WOULD}link: $LINK_DIR/pjrt_c_api_cuda_plugin.so -> ${PLUGIN:-(no plugin)}"
  log "${WOULD}set: PJRT_PLUGIN_LIBRARY_PATH=$LINK_DIR"
  log "${WOULD}set: GOPJRT_CUDA_CHECKS=0"
  log "${WOULD}set: XLA_FLAGS=${XLA_FLAGS_NEW:-(unset: no folder with nvvm/libdevice found)}"
  log "${WOULD}set: LD_LIBRARY_PATH=${LD_NEW:-(unchanged: no nvidia pip packages found)}"
fi

# --- the binaries ---------------------------------------------------------------------------
for b in graftrl policy.test; do
  [[ -x $BIN/$b ]] || fail "$BIN/$b is missing: build it first with scripts/gpu-check.sh --build (or set GPU_CHECK_BIN)"
done
version=$("$BIN/graftrl" --version) || fail "$BIN/graftrl --version failed"
log "binary: $version"
tests=$("$BIN/policy.test" -test.list '^TestXLACPU' | paste -sd' ') || fail "$BIN/policy.test -test.list failed"
[[ -n $tests ]] || fail "$BIN/policy.test holds no XLA conformance tests"
log "conformance tests: $tests"
[[ -f configs/quickstart.yaml ]] || fail "configs/quickstart.yaml is missing (run from a graftrl checkout)"
ENVS=$(ls configs/envs/*.yaml 2>/dev/null | xargs -n1 basename 2>/dev/null | sed 's/\.yaml$//' | paste -sd' ')
[[ -n $ENVS ]] || fail "configs/envs/*.yaml: no env config"
log "${WOULD}run on $BACKEND: $STEPS (bench at d64, d128, d256; envs: $ENVS, 2 iterations each), each under $LIMIT s"
if [[ " $STEPS " == *" lm "* ]]; then
  if [[ -f $MODEL ]]; then log "lm: the model is $MODEL"; else log "lm: no model at $MODEL: the lm step will be skipped"; fi
fi

if ((DRY)); then
  if ((GPU)); then
    log "dry run: a GPU is here, nothing was run (leave out --dry-run to run the checks)"
  else
    log "no GPU: dry run only"
  fi
  exit 0
fi
((!CUDA)) || [[ -n $PLUGIN ]] || fail "no CUDA PJRT plugin found (see above)"

# --- the checks -----------------------------------------------------------------------------
if ((CUDA)); then
  mkdir -p "$LINK_DIR" || fail "cannot create $LINK_DIR"
  ln -sfn "$PLUGIN" "$LINK_DIR/pjrt_c_api_cuda_plugin.so" || fail "cannot link into $LINK_DIR"
  export PJRT_PLUGIN_LIBRARY_PATH=$LINK_DIR GOPJRT_CUDA_CHECKS=0
  [[ -n $XLA_FLAGS_NEW ]] && export XLA_FLAGS=$XLA_FLAGS_NEW
  [[ -n $LD_NEW ]] && export LD_LIBRARY_PATH=$LD_NEW
  nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
fi
export GOMLX_NO_AUTO_INSTALL=1
{ echo "$version"; echo "backend: $BACKEND"; echo "plugin: ${PLUGIN:-none linked, the backend finds its own}"
  env | grep -E '^(PJRT_PLUGIN_LIBRARY_PATH|GOPJRT_CUDA_CHECKS|XLA_FLAGS|LD_LIBRARY_PATH)='; } >"$OUT/setup.txt"

failed=0
: >"$OUT/summary.txt"
# step NAME OUTFILE FIGURE COMMAND...: stdout to OUTFILE, stderr to OUTFILE.stderr; FIGURE is a
# shell function that prints the step's figure from OUTFILE.
step() {
  local name=$1 file=$2 figure=$3 start=$SECONDS rc status fig=
  shift 3
  log "$name: $* (limit $LIMIT s, output $file)"
  timeout -k 10 "$LIMIT" "$@" >"$file" 2>"$file.stderr"
  rc=$?
  status=ok
  ((rc == 0)) || status="FAILED (exit $rc$([[ $rc == 124 ]] && echo ': time limit'))"
  ((rc == 0)) && fig=$("$figure" "$file" 2>/dev/null)
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$((SECONDS - start)) s" "$fig" >>"$OUT/summary.txt"
  ((rc == 0)) || { failed=1; tail -n 15 "$file" "$file.stderr" | sed 's/^/    /'; }
}
# The figures: tests passed; the last train line; the train steps and sampling of a bench.
fig_tests() { echo "$(grep -c '^--- PASS' "$1") passed, $(grep -c '^--- FAIL' "$1") failed"; }
fig_train() { grep -E '^iter [0-9]+ ' "$1" | tail -1 | cut -c1-90; }
fig_bench() {
  awk '/^  T[0-9]+×B[0-9]+ /{printf "%s %s %s; ", $1, $2, $3}
    /host inference path/{m="host"} /graph decoder/{m="graph"}
    /^  batch 16 /{printf "sample B16 %s %s tok/s; ", m, $5}' "$1"
}
fig_lm() { awk '/graph KV decoder/{g=1} /^  decode batch 16 /{printf "%s B16 %s tok/s; ", g ? "graph" : "host", $8}
  /^  T[0-9]+×B[0-9]+ /{printf "train %s %s ms", $1, $2}' "$1"; }
for s in $STEPS; do
  case $s in
    conformance) step conformance "$OUT/conformance.txt" fig_tests \
      env GRAFTRL_XLA_BACKEND="$BACKEND" bash -c 'cd policy && exec "$0" -test.run "^TestXLACPU" -test.skip "^TestXLACPULlama" -test.v -test.count=1' "$BIN/policy.test" ;;
    quickstart) step quickstart "$OUT/quickstart.txt" fig_train \
      "$BIN/graftrl" train --config configs/quickstart.yaml --backend "$BACKEND" --iterations "$ITERATIONS" --out-dir "$OUT/runs" --name gpu-quickstart ;;
    bench)
      for d in 64 128 256; do
        step "bench d$d" "$OUT/bench-d$d.txt" fig_bench "$BIN/graftrl" bench --backend "$BACKEND" --d-model "$d" --d-ff $((4 * d)) \
          --len "$d" --max-len $((2 * d)) --reps 5 --warmup 3 --sample-batches 16 --graph-sampling --config ""
      done ;;
    envs)
      for e in $ENVS; do
        step "env $e" "$OUT/env-$e.txt" fig_train "$BIN/graftrl" train --config "configs/envs/$e.yaml" --backend "$BACKEND" \
          --iterations 2 --out-dir "$OUT/runs" --name "gpu-env-$e"
      done ;;
    lm)
      # The tiny Llama's conformance needs no model file; SmolLM2's logits and the bench do.
      lm_env=(GRAFTRL_XLA_BACKEND="$BACKEND")
      if [[ -f $MODEL ]]; then
        # The test finds the model where the installer puts it, under $XDG_CACHE_HOME.
        mkdir -p "$OUT/cache/graftrl/models" && ln -sfn "$(realpath "$MODEL")" "$OUT/cache/graftrl/models/SmolLM2-135M-Instruct.Q4_1.gguf"
        lm_env+=(GRAFTRL_SMOLLM2=1 XDG_CACHE_HOME="$OUT/cache")
      fi
      step "lm logits" "$OUT/lm-logits.txt" fig_tests env "${lm_env[@]}" \
        bash -c 'cd policy && exec "$0" -test.run "^TestXLACPULlama" -test.v -test.count=1' "$BIN/policy.test"
      if [[ ! -f $MODEL ]]; then
        log "lm bench: no model at $MODEL (set GPU_CHECK_MODEL or run scripts/install-smollm2.sh): skipped"
        printf '%s\t%s\t%s\t%s\n' "lm bench" skipped "0 s" "no model file" >>"$OUT/summary.txt"
        continue
      fi
      step "lm bench" "$OUT/lm-bench.txt" fig_lm "$BIN/graftrl" bench --model "$MODEL" --backend "$BACKEND" \
        --graph-sampling --sample-batches 1,16 --decode-len 32 --batch 8 --len 64 --reps 3
      step "lm train" "$OUT/lm-train.txt" fig_train "$BIN/graftrl" train --config configs/lm/maze.yaml --backend "$BACKEND" \
        --iterations 2 --out-dir "$OUT/runs" --name gpu-lm --set policy.pretrained="$MODEL" \
        --set tasks.eval=4 --set eval.sampled=false --set eval.at_start=false ;;
  esac
done
log "summary ($BACKEND; outputs in $OUT):"
{ printf 'step\tresult\ttime\tfigure\n'; cat "$OUT/summary.txt"; } | column -t -s $'\t' | sed 's/^/  /'
exit $failed
