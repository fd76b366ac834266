#!/usr/bin/env bash
# Start (or stop) a single-node Slurm cluster on 127.0.0.1 for hpcrail's tests and CI.
#
#   tests/slurm/start_slurm.sh [--install] start   # install slurm-wlm + munge if missing (root, apt),
#                                                  # write the config, start munged, slurmctld, slurmd
#   tests/slurm/start_slurm.sh stop                # stop the three daemons by their PIDs
#   source "$HPCRAIL_SLURM_DIR/env.sh"             # SLURM_CONF for sbatch/srun/squeue/scancel clients
#
# Everything (config, munge key and socket, spool, state, logs, PID files) lives in
# $HPCRAIL_SLURM_DIR (default /tmp/hpcrail-slurm): nothing in /etc is changed, so the cluster
# disappears with the directory.  MpiDefault=pmi2 so that `srun` starts MPI ranks (MPICH) correctly.
# The node has all the machine's cores (CPUs=$(nproc)) and some memory; jobs run as the calling user.
set -euo pipefail
DIR="${HPCRAIL_SLURM_DIR:-/tmp/hpcrail-slurm}"
PORT_CTLD="${HPCRAIL_SLURMCTLD_PORT:-6817}"
PORT_D="${HPCRAIL_SLURMD_PORT:-6818}"
INSTALL=0
if [[ "${1:-}" == "--install" ]]; then INSTALL=1; shift; fi
ACTION="${1:-start}"

stop() {
  for name in slurmd slurmctld munged; do
    f="$DIR/$name.pid"
    if [[ -f "$f" ]]; then
      pid="$(cat "$f")"
      if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
      fi
      rm -f "$f"
    fi
  done
  echo "slurm: stopped (dir $DIR)"
}

if [[ "$ACTION" == "stop" ]]; then stop; exit 0; fi
[[ "$ACTION" == "start" ]] || { echo "usage: $0 [--install] start|stop" >&2; exit 2; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  if [[ $INSTALL == 1 ]]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq slurm-wlm munge >/dev/null
  else
    echo "slurm-wlm/munge are not installed (run with --install as root)" >&2; exit 3
  fi
fi

stop >/dev/null 2>&1 || true
mkdir -p "$DIR"/{spool,state,log,munge}
chmod 700 "$DIR/munge"
USER_NAME="$(id -un)"
CPUS="$(nproc --all)"   # --all: not OMP_NUM_THREADS (a dask cluster started in the calling process sets it to 1)
MEM_MB="$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.8}' /proc/meminfo)"
# munge: private key and socket in $DIR
if [[ ! -f "$DIR/munge/munge.key" ]]; then
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$DIR/munge/munge.key"
munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
  --pid-file="$DIR/munged.pid" --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"

cat > "$DIR/slurm.conf" <<CONF
# single-node test cluster written by tests/slurm/start_slurm.sh
ClusterName=hpcrail-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$PORT_CTLD
SlurmdPort=$PORT_D
SlurmUser=$USER_NAME
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/slurmd-%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=pmi2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=30
SchedulerParameters=defer_batch=0
NodeName=hpcnode NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=hpcnode Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
echo "export SLURM_CONF=$DIR/slurm.conf" > "$DIR/env.sh"
export SLURM_CONF="$DIR/slurm.conf"

# -D: foreground processes we started ourselves, so that `stop` can end them by PID
setsid slurmctld -D -i -f "$SLURM_CONF" >"$DIR/log/slurmctld.out" 2>&1 < /dev/null &
echo $! > "$DIR/slurmctld.pid"
setsid slurmd -D -N hpcnode -f "$SLURM_CONF" >"$DIR/log/slurmd.out" 2>&1 < /dev/null &
echo $! > "$DIR/slurmd.pid"

for _ in $(seq 120); do
  if sinfo -h -N -o "%t" 2>/dev/null | grep -q -E "^(idle|mix|alloc)"; then
    echo "slurm: up (node hpcnode, $CPUS CPUs, $MEM_MB MB; SLURM_CONF=$SLURM_CONF)"
    exit 0
  fi
  sleep 0.5
done
echo "slurm: did not come up within 60 s; logs in $DIR/log" >&2
tail -n 20 "$DIR/log/"*.log >&2 || true
exit 1
