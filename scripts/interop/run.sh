#!/usr/bin/env bash
# Interop checks: graftrl's statistics against rliable and its frozenlake against gymnasium's
# FrozenLake-v1 (README: Interop). Creates a virtual environment with the pinned packages of
# requirements.txt (kept under ~/.cache/graftrl, keyed by the file's hash), asks the Go tests for
# graftrl's side, and runs each Python check; every check prints PASS or FAIL with its numbers.
# Exits non-zero when any check fails.
set -euo pipefail
cd "$(dirname "$0")/../.."

req=scripts/interop/requirements.txt
venv="${XDG_CACHE_HOME:-$HOME/.cache}/graftrl/interop-$(sha256sum "$req" | cut -c1-12)"
if [ ! -x "$venv/bin/python" ]; then
  echo "== interop: creating $venv"
  rm -rf "$venv.tmp"
  python3 -m venv "$venv.tmp"
  "$venv.tmp/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  mv "$venv.tmp" "$venv"
fi
py="$venv/bin/python"
export PYTHONDONTWRITEBYTECODE=1

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0

echo "== interop: rliable (docs/study)"
GRAFTRL_INTEROP_OUT="$out" go test ./compare -run '^TestInteropStudyStats$' -count=1
"$py" scripts/interop/rliable_check.py docs/study "$out/study_stats.json" || status=1

echo "== interop: gymnasium FrozenLake-v1 (frozenlake map: 4x4, slip_mode: gymnasium)"
GRAFTRL_INTEROP_OUT="$out" go test ./envs/frozenlake -run '^TestGymnasium' -count=1
"$py" scripts/interop/frozenlake_check.py "$out/frozenlake_4x4.json" || status=1

exit $status
