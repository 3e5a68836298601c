#!/usr/bin/env bash
# Test of scripts/venv.sh (the Python peers' environments), offline: pip installs a tiny wheel
# this script writes (graftrl-venv-probe 1.0) from a local directory, never from an index, with
# the environments under a temporary XDG_CACHE_HOME. Checks that
#   (a) a call whose pip fails exits non-zero, prints nothing and leaves no environment and no
#       temporary directory behind; a directory without the completion marker (as an earlier
#       venv.sh left after a failed pip) is then not used: the next call, with pip working,
#       makes the environment from scratch and its python imports the package;
#   (b) three calls at once for the same environment all succeed, print the same python, create
#       it once (the others wait on the lock), and the result is complete, with no temporary
#       directory left or nested inside it.
# Takes about 20 s on 2 cores (two environments are made, each by python3 -m venv).
#
#   scripts/test-venv.sh            (VENV_SH=FILE tests another copy of venv.sh; KEEP=1 keeps
#                                    the work directory)
set -euo pipefail
cd "$(dirname "$0")/.."

venv_sh=$(realpath "${VENV_SH:-scripts/venv.sh}")
work=$(mktemp -d "${TMPDIR:-/tmp}/graftrl-venv-test.XXXXXX")
t0=$SECONDS
cleanup() { if [[ -z ${KEEP:-} ]]; then rm -rf "$work"; else echo "test-venv: kept $work" >&2; fi; }
trap cleanup EXIT

failures=0
fail() { echo "test-venv: FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "test-venv: ok: $*" >&2; }

# pip reads no configuration file and no index: only the wheels directory, when PIP_FIND_LINKS
# names it.
export XDG_CACHE_HOME=$work/cache PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_REQUIRE_HASHES
root=$XDG_CACHE_HOME/graftrl
wheels=$work/wheels

python3 - "$wheels" <<'EOF'
import base64, hashlib, os, sys, zipfile
files = {
    "graftrl_venv_probe/__init__.py": "VALUE = 42\n",
    "graftrl_venv_probe-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: graftrl-venv-probe\nVersion: 1.0\n",
    "graftrl_venv_probe-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test-venv\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for name, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{name},sha256={digest},{len(text.encode())}")
record.append("graftrl_venv_probe-1.0.dist-info/RECORD,,")
files["graftrl_venv_probe-1.0.dist-info/RECORD"] = "\n".join(record) + "\n"
os.makedirs(sys.argv[1])
with zipfile.ZipFile(os.path.join(sys.argv[1], "graftrl_venv_probe-1.0-py3-none-any.whl"), "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
EOF

source "$venv_sh"

# complete PYTHON: whether PYTHON is an environment's python with the package installed.
complete() { [[ -x $1 ]] && "$1" -c 'import graftrl_venv_probe as p; assert p.VALUE == 42' 2>/dev/null; }
# leftovers: the directories under the root named like venv.sh's temporary ones, at any depth.
leftovers() { find "$root" -type d \( -name '*.tmp' -o -name '*.tmp.*' \) 2>/dev/null | sed "s|^$work/||"; }

# (a) pip fails, then works.
req_a=$work/req-a/requirements.txt
mkdir -p "${req_a%/*}"
echo "graftrl-venv-probe==1.0" >"$req_a"
dir_a=$root/t-$(sha256sum <"$req_a" | cut -c1-12)
echo "== (a) pip fails (no index, no wheels directory)" >&2
status=0
out=$(venv t "$req_a" 2>"$work/a1.err") || status=$?
if [[ $status -ne 0 ]]; then ok "the call failed (status $status)"; else fail "the call succeeded although pip failed (printed '$out')"; fi
[[ -z $out ]] || fail "the failed call printed '$out' on stdout"
grep -q 'graftrl-venv-probe' "$work/a1.err" || fail "pip's error is not on stderr: $(tail -3 "$work/a1.err")"
if [[ -e $dir_a ]]; then fail "an environment was left in place: $dir_a"; else ok "no environment left in place"; fi
left=$(leftovers)
if [[ -n $left ]]; then fail "temporary directories left: $left"; else ok "no temporary directory left"; fi

echo "== (a) an environment made by an earlier venv.sh whose pip failed (no marker) is not used" >&2
rm -rf "$dir_a"
mkdir -p "$dir_a/bin"
ln -s "$(command -v python3)" "$dir_a/bin/python"
echo "== (a) pip works (wheels directory)" >&2
status=0
out=$(PIP_FIND_LINKS=$wheels venv t "$req_a" 2>"$work/a2.err") || status=$?
if [[ $status -eq 0 && $out == "$dir_a/bin/python" ]]; then
  ok "the next call succeeded: $out"
else
  fail "the next call: status $status, printed '$out' (want $dir_a/bin/python): $(tail -3 "$work/a2.err")"
fi
if complete "$dir_a/bin/python"; then ok "the environment is complete"; else fail "the environment's python cannot import the package"; fi
left=$(leftovers)
[[ -z $left ]] || fail "temporary directories left: $left"

# (b) three callers at once.
req_b=$work/req-b/requirements.txt
mkdir -p "${req_b%/*}"
printf '# concurrent\ngraftrl-venv-probe==1.0\n' >"$req_b"
dir_b=$root/c-$(sha256sum <"$req_b" | cut -c1-12)
echo "== (b) three calls at once for the same environment" >&2
pids=()
for i in 1 2 3; do
  (PIP_FIND_LINKS=$wheels venv c "$req_b" >"$work/b$i.out" 2>"$work/b$i.err") &
  pids+=($!)
done
for i in 1 2 3; do
  status=0
  wait "${pids[i - 1]}" || status=$?
  out=$(cat "$work/b$i.out")
  if [[ $status -eq 0 && $out == "$dir_b/bin/python" ]]; then
    ok "caller $i succeeded"
  else
    fail "caller $i: status $status, printed '$out' (want $dir_b/bin/python): $(tail -3 "$work/b$i.err")"
  fi
done
created=$(cat "$work"/b?.err | grep -c '^== c: creating' || true)
if [[ $created -eq 1 ]]; then ok "created once"; else fail "created $created times (want once)"; fi
if complete "$dir_b/bin/python"; then ok "the environment is complete"; else fail "the environment's python cannot import the package"; fi
left=$(leftovers)
if [[ -n $left ]]; then fail "temporary directories left or nested: $left"; else ok "no temporary directory left or nested"; fi

if [[ $failures -ne 0 ]]; then
  echo "test-venv: $failures failures ($((SECONDS - t0)) s)" >&2
  exit 1
fi
echo "test-venv: PASS ($((SECONDS - t0)) s)" >&2
