#!/usr/bin/env bash
# End-to-end test of graftrl's Slurm executor on a real (single-node) Slurm cluster: builds
# graftrl, starts the cluster (scripts/slurm-local.sh, as root), runs the tiny sweep
# configs/sweeps/slurm-test.yaml (2 estimators × 2 seeds) as one job array through sbatch,
# waits for it, checks every task and run, then compares the sweep and checks that the report
# read all four runs; then runs a reduced study (configs/sweeps/study-slurm-test.yaml: 2 envs ×
# 2 estimators × 2 seeds) with graftrl study --executor slurm and checks its report. The cluster
# is always torn down. Takes about two minutes (plus the package installation on a fresh machine).
#
#   scripts/test-slurm.sh            (as root; KEEP=1 keeps the work directory)
set -euo pipefail
cd "$(dirname "$0")/.."

export SLURM_BASE=${SLURM_BASE:-/tmp/graftrl-slurm}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/graftrl-slurm-test.XXXXXX")
SWEEP=$WORK/sweeps/slurm-test
T0=$SECONDS

log() { printf '[%(%T)T] test-slurm: %s\n' -1 "$*" >&2; }
fail() {
  log "FAIL: $*"
  for f in "$SWEEP"/slurm/*.out "$SWEEP"/logs/*.log; do
    [[ -f $f ]] && { echo "---- $f (tail)" >&2; tail -15 "$f" >&2; }
  done
  [[ -f $SLURM_BASE/log/slurmctld.log ]] && { echo "---- slurmctld.log (tail)" >&2; tail -20 "$SLURM_BASE/log/slurmctld.log" >&2; }
  exit 1
}
cleanup() {
  local rc=$?
  scripts/slurm-local.sh down || true
  if [[ ${KEEP:-0} == 1 || $rc != 0 ]]; then log "work directory kept: $WORK"; else rm -rf "$WORK"; fi
  exit $rc
}
trap cleanup EXIT

log "building graftrl"
go build -o "$WORK/graftrl" ./cmd/graftrl
G=$WORK/graftrl

scripts/slurm-local.sh up
eval "$(scripts/slurm-local.sh env)"
log "cluster up after $((SECONDS - T0))s"

"$G" sweep --config configs/sweeps/slurm-test.yaml --out-dir "$WORK/sweeps" --dry-run >"$WORK/dry-run.txt" ||
  fail "dry run: $(cat "$WORK/dry-run.txt")"
grep -q -- '--array=0-3' "$WORK/dry-run.txt" || fail "the dry run does not plan --array=0-3"
[[ ! -e $SWEEP ]] || fail "the dry run wrote $SWEEP"

log "submitting the sweep"
timeout 600 "$G" sweep --config configs/sweeps/slurm-test.yaml --out-dir "$WORK/sweeps" --executor slurm --wait ||
  fail "the sweep did not finish"
JOB=$(sed -n 's/.*"job_id":"\([0-9]*\)".*/\1/p' "$SWEEP/slurm/jobs.jsonl" | tail -1)
[[ -n $JOB ]] || fail "no job id in $SWEEP/slurm/jobs.jsonl"

log "job $JOB: per-task states and exit codes"
scontrol -o show job "$JOB" | tr ' ' '\n' | grep -E '^(ArrayTaskId|JobState|ExitCode)=' | paste - - - >&2
tasks=$(scontrol -o show job "$JOB" | grep -c 'JobState=COMPLETED' || true)
[[ $tasks == 4 ]] || fail "job $JOB: $tasks of 4 array tasks COMPLETED"
scontrol -o show job "$JOB" | grep -qE ' ExitCode=([1-9][0-9]*:|0:[1-9])' && fail "a task exited non-zero"
for i in 0 1 2 3; do
  [[ -s $SWEEP/slurm/${JOB}_$i.out ]] || fail "no output of task $i ($SWEEP/slurm/${JOB}_$i.out)"
done

"$G" sweep status --dir "$SWEEP" | tee "$WORK/status.txt" >&2
grep -q '4 runs: 4 finished' "$WORK/status.txt" || fail "status does not show 4 finished runs"

# Submitting again finds nothing to do.
"$G" sweep --config configs/sweeps/slurm-test.yaml --out-dir "$WORK/sweeps" --executor slurm >"$WORK/again.txt"
grep -q 'all 4 runs are finished; nothing to submit' "$WORK/again.txt" || fail "a re-submission did not skip the finished runs: $(cat "$WORK/again.txt")"

log "comparing"
"$G" compare "$SWEEP" | tee "$WORK/compare.txt" >&2
grep -q '^4 runs: 1 environment(s) × 2 method(s)' "$SWEEP/report/report.md" || fail "the report did not read 4 runs"
rows=$(($(wc -l <"$SWEEP/report/runs.csv") - 1))
[[ $rows == 4 ]] || fail "runs.csv has $rows runs, want 4"
for f in report.html plots/curves-maze.png plots/final.svg per_env.csv; do
  [[ -s $SWEEP/report/$f ]] || fail "the report lacks $f"
done
log "OK: 4 runs through Slurm job $JOB, compared; $((SECONDS - T0))s so far"

# The study command on Slurm: a reduced grid (2 envs × 2 estimators × 2 seeds) trained as one
# job array, then audited and reported by the same command.
STUDY=$WORK/sweeps/study-slurm-test
log "study through Slurm"
timeout 600 "$G" study --config configs/sweeps/study-slurm-test.yaml --out "$STUDY" --executor slurm \
  --audit-steps 6 --audit-mc 2 >"$WORK/study.txt" 2>"$WORK/study.err" || { SWEEP=$STUDY; fail "the study did not finish: $(tail -5 "$WORK/study.err")"; }
grep -q '^8 runs: 2 environment(s) × 2 method(s)' "$STUDY/report/report.md" || fail "the study report did not read 8 runs"
for want in '## Ranking' '### Advantage audit, in brief' 'Time: the study took' 'Build: graftrl '; do
  grep -qF -- "$want" "$STUDY/report/report.md" || fail "the study report lacks '$want'"
done
SJOB=$(sed -n 's/.*"job_id":"\([0-9]*\)".*/\1/p' "$STUDY/slurm/jobs.jsonl" | tail -1)
[[ -n $SJOB ]] || fail "no Slurm job id in $STUDY/slurm/jobs.jsonl"
tasks=$(scontrol -o show job "$SJOB" | grep -c 'JobState=COMPLETED' || true)
[[ $tasks == 8 ]] || fail "study job $SJOB: $tasks of 8 array tasks COMPLETED"
log "OK: the study's 8 runs through Slurm job $SJOB, audited and reported; $((SECONDS - T0))s in all"
