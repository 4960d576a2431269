#!/usr/bin/env bash
# A sweep run as a Slurm job array on a one-node cluster brought up on this machine, merged, and
# compared byte for byte with the same sweep run in one process; then a share that fails, the
# merge that refuses the incomplete records, the share resubmitted, and the merge that succeeds.
#
# Usage: tests/slurm/job-array.sh [path/to/fedbounds]   (default: target/debug/fedbounds)
#
# Installs Debian's slurmctld, slurmd, slurm-client and munge when they are absent (root only).
# Everything else lives in a temporary folder: the munge key, socket and logs, slurm.conf, the
# daemons' state and the sweep outputs. Every daemon it starts is stopped by its pid on every exit
# path. This is the README's cluster recipe ("Sweeps on a cluster"), step by step.
set -euo pipefail
START=$SECONDS
step() { echo "[$((SECONDS - START)) s] $*"; }
cd "$(dirname "$0")/../.."
BIN=$(realpath "${1:-target/debug/fedbounds}")
SWEEP=$(realpath examples/sweep.toml)
SHARES=4

if ! command -v sbatch >/dev/null || ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  [ "$(id -u)" -eq 0 ] || { echo "Slurm and munge are not installed and installing them needs root"; exit 1; }
  echo "installing slurmctld, slurmd, slurm-client and munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
fi

W=$(mktemp -d /tmp/fedbounds-slurm.XXXXXX)
PIDS=()
cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ]; then
    echo "--- slurmctld log"; tail -n 20 "$W/slurmctld.log" 2>/dev/null || true
    echo "--- slurmd log"; tail -n 20 "$W/slurmd.log" 2>/dev/null || true
    echo "--- job logs"; tail -n 5 "$W"/job-*.out 2>/dev/null || true
  fi
  rm -rf "$W"
  exit "$rc"
}
trap cleanup EXIT INT TERM

# munge: its own key, socket and pid file; munged runs as root here (--force), which a one-node
# test cluster allows.
mkdir -p "$W/munge"
dd if=/dev/urandom of="$W/munge/munge.key" bs=1 count=1024 status=none
chmod 700 "$W/munge"; chmod 400 "$W/munge/munge.key"
munged --force --key-file="$W/munge/munge.key" --socket="$W/munge/socket" \
  --pid-file="$W/munge/munged.pid" --log-file="$W/munge/munged.log" --seed-file="$W/munge/seed"
PIDS+=("$(cat "$W/munge/munged.pid")")

# Slurm: one node named as this machine, on the loopback, state and logs in the folder.
HOST=$(hostname)
CPUS=$(nproc)
mkdir -p "$W/state" "$W/spool"
cat >"$W/slurm.conf" <<CONF
ClusterName=fedbounds-ci
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$W/munge/socket
CredType=cred/munge
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$W/slurm.conf"
slurmctld -i -f "$SLURM_CONF"
for _ in $(seq 100); do [ -s "$W/slurmctld.pid" ] && break; sleep 0.1; done
PIDS+=("$(cat "$W/slurmctld.pid")")
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do [ -s "$W/slurmd.pid" ] && break; sleep 0.1; done
PIDS+=("$(cat "$W/slurmd.pid")")
for _ in $(seq 100); do
  sinfo -h -o %t 2>/dev/null | grep -qx idle && break
  sleep 0.2
done
sinfo -h -o %t | grep -qx idle || { echo "the node did not come up"; sinfo; exit 1; }

# The reference: the whole sweep in one process.
step "cluster up; the sweep in one process"
"$BIN" sweep "$SWEEP" --out "$W/single" >/dev/null

# Submits a job and waits for it to leave the queue (sbatch --wait polls with a growing period,
# up to half a minute).
submit() {
  local id
  id=$(sbatch --parsable "$@")
  for _ in $(seq 1200); do
    [ -z "$(squeue -h -j "${id%%;*}" -o %i 2>/dev/null)" ] && return 0
    sleep 0.1
  done
  echo "job $id still queued after 120 s"; squeue; return 1
}

# The README's job script: share i of N writes its records into one shared folder. A share whose
# FAIL_SHARE matches exits before running, as a node lost mid-array would leave it.
cat >"$W/share.sh" <<JOB
#!/usr/bin/env bash
#SBATCH --output=$W/job-%A_%a.out
#SBATCH --cpus-per-task=1
if [ "\${FAIL_SHARE:-}" = "\$SLURM_ARRAY_TASK_ID" ]; then echo "share \$SLURM_ARRAY_TASK_ID lost"; exit 1; fi
exec "$BIN" sweep "$SWEEP" --shard "\$SLURM_ARRAY_TASK_ID/$SHARES" --threads 1 --out "$W/shared"
JOB

step "the job array, share 3 lost"
# The array with share 3 failing: the merge must refuse the incomplete records.
submit --export=ALL,FAIL_SHARE=3 --array=1-$SHARES "$W/share.sh"
ls "$W/shared/scenarios" | wc -l | xargs echo "records after the array with share 3 lost:"
rc=0
"$BIN" merge "$SWEEP" "$W/shared" --out "$W/merged" >"$W/merge.out" 2>&1 || rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "12 of 48 scenarios have no current result" "$W/merge.out"; then
  echo "merge of an incomplete array: exit $rc (expected 2 naming the 12 missing records)"; cat "$W/merge.out"; exit 1
fi

step "share 3 resubmitted"
# Share 3 resubmitted; the merge now equals the single run byte for byte.
submit --array=3 "$W/share.sh"
"$BIN" merge "$SWEEP" "$W/shared" --out "$W/merged" >/dev/null
for f in sweep.json sweep.csv; do
  cmp "$W/single/$f" "$W/merged/$f" || { echo "$f differs from the unsharded run"; exit 1; }
done
step "slurm job array: $SHARES shares, one lost and resubmitted, merge identical to the single run"
