#!/usr/bin/env bash
# A Slurm job array that runs one sweep across machines: task I runs shard
# I of N and writes runs-shard-I-of-N.parquet into one shared directory.
# --resume lets a requeued or preempted task skip what it already finished.
#
#   cargo build --release                  # once, on a shared filesystem
#   sbatch scripts/slurm-sweep.sh datasets/jellyfish-trials.toml results/jellyfish-trials
#
# Then merge the shards into runs.parquet and switches.parquet (it names
# any shard still missing), or read the directory as one dataset:
#   ./target/release/tagger merge results/jellyfish-trials
#   duckdb -c "SELECT algo, median(priorities) FROM 'results/jellyfish-trials/runs-shard-*.parquet' GROUP BY ALL"
#   python3 scripts/summarize.py results/jellyfish-trials/runs.parquet
#
#SBATCH --job-name=tagger-sweep
#SBATCH --array=1-16
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=04:00:00
#SBATCH --requeue
set -euo pipefail
spec=${1:?usage: sbatch scripts/slurm-sweep.sh SPEC.toml OUTDIR}
out=${2:?usage: sbatch scripts/slurm-sweep.sh SPEC.toml OUTDIR}
count=${SLURM_ARRAY_TASK_COUNT:-16}
task=${SLURM_ARRAY_TASK_ID:-1}
exec ./target/release/tagger sweep "$spec" --out "$out" \
    --shard "$task/$count" --jobs "${SLURM_CPUS_PER_TASK:-2}" --resume
