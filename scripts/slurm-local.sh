#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for testing graftrl's Slurm executor (CI runs it
# through scripts/test-slurm.sh). Debian's slurmctld, slurmd, slurm-client and munge, started
# by hand as root without systemd. Config, state, logs, sockets and pid files all live under
# $SLURM_BASE (default /tmp/graftrl-slurm); nothing is written to /etc/slurm or /etc/munge.
#
#   scripts/slurm-local.sh up       install the packages if needed, start munged, slurmctld and
#                                   slurmd, wait until the node is idle
#   scripts/slurm-local.sh down     stop them (by pid file)
#   scripts/slurm-local.sh status   sinfo and squeue
#   scripts/slurm-local.sh env      print the export line client commands need
#
# Client commands (sbatch, squeue, sinfo, scancel) need SLURM_CONF=$SLURM_BASE/etc/slurm.conf.
# Adapted from the tested recipe in /work/shared/reference/slurm-single-node.sh (Slurm 22.05,
# Debian 12).
set -euo pipefail

BASE=${SLURM_BASE:-/tmp/graftrl-slurm}
PKGS=${SLURM_PKGS:-"slurmctld slurmd slurm-client munge"}
CTLD_PORT=${SLURMCTLD_PORT:-6817}
SLURMD_PORT=${SLURMD_PORT:-6818}
CONF=$BASE/etc/slurm.conf
SOCK=$BASE/munge/munge.sock
export SLURM_CONF=$CONF

log() { printf '[%(%T)T] slurm-local: %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

wait_for() {  # wait_for TIMEOUT_S DESCRIPTION COMMAND...
  local t=$1 what=$2; shift 2
  local end=$((SECONDS + t))
  until "$@" >/dev/null 2>&1; do
    (( SECONDS < end )) || die "timeout (${t}s) waiting for $what"
    sleep 0.5
  done
}

pid_alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null && command -v munged >/dev/null; then
    return 0
  fi
  local t0=$SECONDS aptlog=$BASE/log/apt-install.log
  log "installing $PKGS"
  export DEBIAN_FRONTEND=noninteractive
  # Debian's maintainer scripts try to start the daemons; without systemd that fails or is
  # skipped, which is fine: this script starts them itself.
  if ! apt-get install -y -q --no-install-recommends $PKGS >"$aptlog" 2>&1; then
    log "apt-get install failed; apt-get update and retry"
    apt-get update -q >>"$aptlog" 2>&1 || { tail -20 "$aptlog" >&2; die "apt-get update failed"; }
    apt-get install -y -q --no-install-recommends $PKGS >>"$aptlog" 2>&1 || { tail -20 "$aptlog" >&2; die "apt-get install failed"; }
  fi
  log "installed in $((SECONDS - t0))s"
}

do_up() {
  [[ $(id -u) == 0 ]] || die "must run as root (it installs packages and runs the daemons as root)"
  mkdir -p "$BASE"/{etc,munge,state,spool,log,run}
  install_packages
  for p in munge/munged.pid run/slurmctld.pid run/slurmd.pid; do
    pid_alive "$BASE/$p" && die "$BASE/$p: a daemon is already running (run '$0 down' first)"
  done
  # munged refuses a socket directory that is not o+x.
  chmod 711 "$BASE/munge"

  # munge: a private key and daemon under $BASE/munge, running as root.
  if [[ ! -s $BASE/munge/munge.key ]]; then
    mungekey --create --keyfile="$BASE/munge/munge.key"
  fi
  chown root:root "$BASE/munge/munge.key"; chmod 600 "$BASE/munge/munge.key"
  munged --key-file="$BASE/munge/munge.key" --socket="$SOCK" \
         --pid-file="$BASE/munge/munged.pid" --log-file="$BASE/log/munged.log" \
         --seed-file="$BASE/munge/munged.seed" --origin=127.0.0.1 ||
    { cat "$BASE/log/munged.log" >&2; die "munged failed to start"; }
  munge -n -S "$SOCK" | unmunge -S "$SOCK" >/dev/null || die "munge self-test failed"
  log "munged up (pid $(cat "$BASE/munge/munged.pid"))"

  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(awk '/^MemAvailable:/{print $2}' /proc/meminfo) / 1024 * 8 / 10 ))  # MiB: 80 % of what is available
  cat >"$CONF" <<EOF
ClusterName=graftrl-ci
# explicit addresses: no DNS or /etc/hosts entry needed for \$(hostname -s)
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${CTLD_PORT}
SlurmdPort=${SLURMD_PORT}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${SOCK}
StateSaveLocation=${BASE}/state
SlurmdSpoolDir=${BASE}/spool
SlurmctldPidFile=${BASE}/run/slurmctld.pid
SlurmdPidFile=${BASE}/run/slurmd.pid
SlurmctldLogFile=${BASE}/log/slurmctld.log
SlurmdLogFile=${BASE}/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=${BASE}/log/jobcomp.txt
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# keep finished jobs visible to squeue for 5 minutes
MinJobAge=300
NodeName=${host} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  # slurmd 22.05 always loads a cgroup plugin; "autodetect" picks cgroup/v2, which needs
  # systemd/dbus without a writable /sys/fs/cgroup. cgroup/v1's init touches nothing, and
  # nothing uses it with proctrack/linuxproc, task/none and jobacct_gather/none.
  echo "CgroupPlugin=cgroup/v1" >"$BASE/etc/cgroup.conf"

  # -c: start from a clean state (no jobs left over from an earlier cluster under $BASE)
  slurmctld -c -f "$CONF" || { tail -20 "$BASE/log/slurmctld.log" >&2; die "slurmctld failed"; }
  wait_for 30 "slurmctld to answer" bash -c "scontrol ping | grep -q UP"
  log "slurmctld up (pid $(cat "$BASE/run/slurmctld.pid"))"
  slurmd -f "$CONF" || { tail -20 "$BASE/log/slurmd.log" >&2; die "slurmd failed"; }
  wait_for 60 "node $host to be idle" bash -c "[[ \$(sinfo -h -n $host -o %T) == idle ]]"
  log "slurmd up (pid $(cat "$BASE/run/slurmd.pid")); node $host idle with $cpus CPUs"
  log "client commands need: export SLURM_CONF=$CONF"
}

stop_pidfile() {  # stop_pidfile NAME PIDFILE
  local f=$2 p
  [[ -s $f ]] || return 0
  p=$(cat "$f")
  if kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p"
    for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$p" 2>/dev/null; then log "$1 ($p) ignored SIGTERM; SIGKILL"; kill -KILL "$p"; fi
    log "stopped $1 (pid $p)"
  fi
  rm -f "$f"
}

do_down() {
  stop_pidfile slurmd "$BASE/run/slurmd.pid"
  stop_pidfile slurmctld "$BASE/run/slurmctld.pid"
  stop_pidfile munged "$BASE/munge/munged.pid"
}

case ${1:-} in
  up) do_up ;;
  down) do_down ;;
  status) sinfo; squeue ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *) echo "usage: $0 up|down|status|env   (state under \$SLURM_BASE, default /tmp/graftrl-slurm)" >&2; exit 2 ;;
esac
