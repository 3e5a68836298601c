# Sourced by the scripts that need Python test peers (scripts/interop/run.sh,
# scripts/bench/peers.sh); the product itself needs no Python.
#
# venv NAME REQUIREMENTS: prints the python of a virtual environment with the pinned packages of
# REQUIREMENTS, created once under ${XDG_CACHE_HOME:-~/.cache}/graftrl/NAME-<hash of the file>
# (a changed file gets a new environment). Returns non-zero, printing nothing on stdout, when any
# step fails (python3 -m venv, pip, the rename), so that `py=$(venv …)` fails too.
#
# An environment is complete when it holds the marker file .graftrl-complete, written after pip
# succeeded; it is built in a directory of its own (mktemp -d NAME-<hash>.tmp.XXXXXX beside it)
# and renamed into place only then, so a half-made one is never used: a failed call removes its
# temporary directory and the next call starts again from scratch, as it does for a directory
# without the marker (one made by an earlier version of this file) or whose python no longer
# runs. Callers are serialised per environment by flock(1) (util-linux) on NAME-<hash>.lock
# beside it: two callers at once make one environment, the second waiting for the first and
# then using it. Use the environment's python (`python -m pip`): the scripts in its bin/ name the
# temporary directory it was built in.
venv() {
  if [ $# -ne 2 ]; then
    echo "venv: usage: venv NAME REQUIREMENTS" >&2
    return 2
  fi
  local name=$1 req=$2 root sum dir
  root="${XDG_CACHE_HOME:-$HOME/.cache}/graftrl"
  if ! sum=$(sha256sum <"$req"); then
    echo "venv: cannot read $req" >&2
    return 1
  fi
  dir="$root/$name-${sum:0:12}"
  if [ ! -f "$dir/.graftrl-complete" ] || [ ! -x "$dir/bin/python" ]; then
    if ! command -v flock >/dev/null; then
      echo "venv: flock(1) is needed (Debian: apt-get install util-linux)" >&2
      return 1
    fi
    if ! mkdir -p "$root"; then
      echo "venv: cannot create $root" >&2
      return 1
    fi
    # In a subshell, which holds the lock on fd 9 until it exits and whose traps remove the
    # temporary directory on any failure; every step's status is checked explicitly (set -e does
    # not hold inside the callers' $(…)).
    if ! (
      tmp=
      trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
      trap 'exit 129' HUP
      trap 'exit 130' INT
      trap 'exit 143' TERM
      if ! flock -n 9; then
        echo "== $name: waiting for another caller creating $dir" >&2
        flock 9 || exit 1
      fi
      # Made by the caller that held the lock before.
      if [ -f "$dir/.graftrl-complete" ] && [ -x "$dir/bin/python" ]; then exit 0; fi
      echo "== $name: creating $dir" >&2
      # Under the lock nobody else builds this environment: whatever is there is left over from
      # a failed, killed or earlier-version call.
      rm -rf "$dir" "$dir.tmp" || exit 1
      find "$root" -maxdepth 1 -name "$name-${sum:0:12}.tmp.*" -exec rm -rf {} + || exit 1
      tmp=$(mktemp -d "$dir.tmp.XXXXXX") || exit 1
      chmod "$(printf '%o' $((0777 & ~$(umask))))" "$tmp" || exit 1
      if ! python3 -m venv "$tmp" >&2; then
        echo "venv: python3 -m venv $tmp failed (Debian: apt-get install python3-venv)" >&2
        exit 1
      fi
      if ! "$tmp/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2; then
        echo "venv: pip install -r $req failed; no environment was kept" >&2
        exit 1
      fi
      touch "$tmp/.graftrl-complete" || exit 1
      mv -T "$tmp" "$dir" || exit 1
      tmp=
    ) 9>"$dir.lock"; then
      echo "venv: could not create $dir" >&2
      return 1
    fi
  fi
  echo "$dir/bin/python"
}
