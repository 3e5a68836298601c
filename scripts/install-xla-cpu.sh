#!/usr/bin/env bash
# Installs the pinned XLA CPU PJRT plugin for graftrl's xla:cpu backend: downloads the
# lammps-jax-pjrt-cpu wheel from PyPI with pip (no dependencies, nothing installed into Python),
# checks the wheel's and the plugin's SHA-256 against the pinned values, keeps the plugin in a
# cache folder and links it where go-xla looks for a plugin named "cpu":
#
#   <dir>/pjrt_c_api_cpu_plugin.so -> ~/.cache/graftrl/<package>-<version>/pjrt_c_api_cpu_plugin.so
#
#   scripts/install-xla-cpu.sh           <dir> = ~/.local/lib/go-xla (go-xla's default folder)
#   scripts/install-xla-cpu.sh DIR       any other folder; then run graftrl with
#                                        PJRT_PLUGIN_LIBRARY_PATH=DIR (it replaces the default list)
#
# Why this wheel: it is XLA's CPU client as built for jaxlib 0.11.2 (PJRT C API 0.115, which
# go-xla v0.1.4 drives); on the policy's train step it is as fast as or faster than the older
# xla-cpu-pjrt 0.0.1 (d128 T128xB64: 456 against 537 ms, d64: equal; docs/backends.md) and
# passes the same conformance tests.
#
# Idempotent: a plugin already in place with the pinned checksum is left as it is. Needs
# python3 with pip and network access to PyPI (or a wheel in $PIP_FIND_LINKS); not root.
set -euo pipefail

PACKAGE=lammps-jax-pjrt-cpu
VERSION=0.11.2
WHEEL=lammps_jax_pjrt_cpu-$VERSION-py3-none-manylinux_2_27_x86_64.whl
WHEEL_SHA256=1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1
MEMBER=lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so
PLUGIN_SHA256=ad1309ac822b1b24d51b7f9947c7c9fa9ef5d67f390584cbc3d1fa2428fed9c2

DIR=${1:-$HOME/.local/lib/go-xla}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/graftrl/$PACKAGE-$VERSION
PLUGIN=$CACHE/pjrt_c_api_cpu_plugin.so
LINK=$DIR/pjrt_c_api_cpu_plugin.so

log() { echo "install-xla-cpu: $*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
sha256() { sha256sum "$1" | cut -d' ' -f1; }

[[ $(uname -s)/$(uname -m) == Linux/x86_64 ]] ||
  fail "the pinned wheel is for Linux x86_64; this machine is $(uname -s)/$(uname -m)"

if [[ ! -f $PLUGIN || $(sha256 "$PLUGIN") != "$PLUGIN_SHA256" ]]; then
  command -v python3 >/dev/null || fail "python3 is needed (to run pip)"
  python3 -m pip --version >/dev/null 2>&1 || fail "pip is needed: python3 -m pip does not run (apt-get install python3-pip)"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/install-xla-cpu.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  log "downloading $PACKAGE==$VERSION with pip (63 MB)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_27_x86_64 \
    --python-version 3 --implementation py --dest "$tmp" "$PACKAGE==$VERSION" ||
    fail "pip could not download $PACKAGE==$VERSION (no access to PyPI?)"
  [[ -f $tmp/$WHEEL ]] || fail "pip did not produce $WHEEL (got: $(ls "$tmp"))"
  got=$(sha256 "$tmp/$WHEEL")
  [[ $got == "$WHEEL_SHA256" ]] || fail "$WHEEL has SHA-256 $got, pinned $WHEEL_SHA256: refusing it"
  log "wheel checksum ok; extracting $MEMBER (202 MB)"
  mkdir -p "$CACHE" || fail "cannot create $CACHE"
  python3 - "$tmp/$WHEEL" "$MEMBER" "$PLUGIN.tmp" <<'EOF' || fail "cannot extract $MEMBER from $WHEEL"
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
EOF
  got=$(sha256 "$PLUGIN.tmp")
  [[ $got == "$PLUGIN_SHA256" ]] || { rm -f "$PLUGIN.tmp"; fail "extracted plugin has SHA-256 $got, pinned $PLUGIN_SHA256"; }
  chmod 0755 "$PLUGIN.tmp"
  mv -f "$PLUGIN.tmp" "$PLUGIN"
else
  log "plugin $VERSION already in $CACHE (checksum ok)"
fi

mkdir -p "$DIR" || fail "cannot create $DIR"
if [[ -e $LINK && ! -L $LINK ]]; then
  fail "$LINK exists and is not a link made by this script: move it away first"
fi
ln -sfn "$PLUGIN" "$LINK" || fail "cannot link $LINK"
log "ok: $LINK -> $PLUGIN ($PACKAGE $VERSION)"
if [[ $DIR != "$HOME/.local/lib/go-xla" ]]; then
  log "run graftrl with PJRT_PLUGIN_LIBRARY_PATH=$DIR and --backend xla:cpu"
fi
