# Sourced by the scripts that need Python test peers (scripts/interop/run.sh,
# scripts/bench/peers.sh); the product itself needs no Python.
#
# venv NAME REQUIREMENTS: prints the python of a virtual environment with the pinned packages of
# REQUIREMENTS, created once under ${XDG_CACHE_HOME:-~/.cache}/graftrl/NAME-<hash of the file>
# (a changed file gets a new environment; a half-made one is never used).
venv() {
  local dir
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/graftrl/$1-$(sha256sum "$2" | cut -c1-12)"
  if [ ! -x "$dir/bin/python" ]; then
    echo "== $1: creating $dir" >&2
    rm -rf "$dir.tmp"
    python3 -m venv "$dir.tmp"
    "$dir.tmp/bin/pip" install --quiet --disable-pip-version-check -r "$2" >&2
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir/bin/python"
}
