#!/usr/bin/env bash
# The cluster path, tested on a real Slurm: starts a one-node cluster on
# this machine (munged, slurmctld and slurmd on localhost, a generated
# slurm.conf with this machine's CPUs), submits scripts/slurm-sweep.sh as a
# 4-task job array over a small spec, waits for it, merges the shards with
# `tagger merge`, and checks with DuckDB that the merged tables equal a
# local `tagger sweep` of the same spec in every column but the timing and
# process ones. Stops the daemons it started.
#
#   bash scripts/test-slurm.sh [SPEC.toml]      # default datasets/failures-small.toml
#
# Needs root (to install slurm-wlm and munge, and to run the daemons);
# skips with a message, exit 0, where that is not possible.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
spec=${1:-datasets/failures-small.toml}
say() { echo "test-slurm: $*"; }

if [ "$(id -u)" != 0 ]; then
    say "skipped: starting munged, slurmctld and slurmd needs root"
    exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    if ! command -v apt-get >/dev/null; then
        say "skipped: no slurm-wlm and no apt-get to install it"
        exit 0
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
[ -x target/release/tagger ] || cargo build --release -q

work=$(mktemp -d /tmp/tagger-slurm.XXXXXX)
# Slurm's tasks and munged's socket must be reachable from here.
chmod 755 "$work"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    # Logs stay for a failed run; a passing one leaves nothing behind.
    if [ "${passed:-}" = 1 ]; then rm -rf "$work"; else say "logs in $work"; fi
}
trap cleanup EXIT

# munge: a key and a socket of our own, so a system munged is left alone.
# It runs as root here (--force), as the daemons it serves do.
mkdir -p "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$work/munge"
chmod 400 "$work/munge/munge.key"
socket="$work/munge/munge.socket"
/usr/sbin/munged --foreground --force \
    --key-file="$work/munge/munge.key" --socket="$socket" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
    --seed-file="$work/munge/munged.seed" >"$work/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || { say "munged did not start"; cat "$work/munged.out"; exit 1; }

# Free ports for this cluster's daemons.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=tagger-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(port)
SlurmdPort=$(port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=2000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
/usr/sbin/slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
up=""
for _ in $(seq 100); do
    state=$(sinfo -h -N -o '%t' 2>/dev/null || true)
    if [ "$state" = "idle" ]; then up=1; break; fi
    sleep 0.2
done
if [ -z "$up" ]; then
    say "the cluster did not come up (node state: '${state:-none}')"
    tail -20 "$work/slurmctld.log" "$work/slurmd.log" "$work/slurmctld.out" "$work/slurmd.out" 2>/dev/null || true
    exit 1
fi
say "cluster up: $(sinfo -h -o '%P %D %c %t')"

# The job array, as a user submits it (the script's own #SBATCH sizes
# are for a real cluster; this one has one small node).
out="$work/shards"
sbatch --wait --array=1-4 --cpus-per-task=1 --mem=400M --time=10 \
    --chdir="$root" --output="$work/task-%a.out" \
    scripts/slurm-sweep.sh "$spec" "$out" >"$work/sbatch.out"
say "$(cat "$work/sbatch.out"): every task finished"
for i in 1 2 3 4; do
    [ -f "$out/runs-shard-$i-of-4.parquet" ] || { say "task $i wrote no shard"; cat "$work/task-$i.out"; exit 1; }
done

./target/release/tagger merge "$out"
./target/release/tagger sweep "$spec" --out "$work/local" --no-report >/dev/null || true
python3 - "$out" "$work/local" <<'EOF'
import sys
import duckdb
shards, local = sys.argv[1], sys.argv[2]
con = duckdb.connect()
volatile = lambda c: c.startswith("seconds_") or c in ("peak_rss_bytes", "threads")
problems = 0
for table in ("runs", "switches", "failures"):
    a, b = f"{shards}/{table}.parquet", f"{local}/{table}.parquet"
    try:
        cols = [r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [b]).fetchall()]
    except duckdb.IOException:
        continue
    sel = ", ".join(f'"{c}"' for c in cols if not volatile(c))
    n = con.execute(f"SELECT count(*) FROM read_parquet('{b}')").fetchone()[0]
    m = con.execute(f"SELECT count(*) FROM read_parquet('{a}')").fetchone()[0]
    diff = con.execute(
        f"SELECT count(*) FROM ((SELECT {sel} FROM read_parquet('{a}') EXCEPT ALL SELECT {sel} FROM read_parquet('{b}'))"
        f" UNION ALL (SELECT {sel} FROM read_parquet('{b}') EXCEPT ALL SELECT {sel} FROM read_parquet('{a}')))"
    ).fetchone()[0]
    print(f"test-slurm: {table}.parquet: {m} rows from the job array, {n} local, {diff} differing")
    problems += diff + (m != n)
sys.exit(1 if problems else 0)
EOF
passed=1
say "ok: the job array's merged tables equal a local sweep"
