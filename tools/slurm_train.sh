#!/usr/bin/env bash
# Train under slurm, one task per GPU, through mmengine's slurm launcher:
#   bash tools/slurm_train.sh PARTITION JOB_NAME CONFIG WORK_DIR [tools/train.py options ...]
# GPUS (default 8) tasks in all, GPUS_PER_NODE (default 8) a node,
# CPUS_PER_TASK (default 5); SRUN_ARGS are passed to srun as they are.
set -euo pipefail
if (( $# < 4 )); then
  echo "usage: bash $0 PARTITION JOB_NAME CONFIG WORK_DIR [tools/train.py options ...]" >&2
  exit 2
fi
PARTITION=$1
JOB_NAME=$2
CONFIG=$3
WORK_DIR=$4
shift 4
GPUS=${GPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2086  # SRUN_ARGS holds several options
PYTHONPATH="$HERE/..${PYTHONPATH:+:$PYTHONPATH}" exec srun -p "$PARTITION" \
  --job-name="$JOB_NAME" --gres=gpu:"$GPUS_PER_NODE" --ntasks="$GPUS" \
  --ntasks-per-node="$GPUS_PER_NODE" --cpus-per-task="${CPUS_PER_TASK:-5}" \
  --kill-on-bad-exit=1 ${SRUN_ARGS:-} \
  python -u "$HERE/train.py" "$CONFIG" --work-dir "$WORK_DIR" --launcher slurm "$@"
