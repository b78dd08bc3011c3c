#!/usr/bin/env bash
# Test a checkpoint on GPUS processes of this node (or of each node, with
# NNODES > 1) through torchrun and mmengine's pytorch launcher:
#   bash tools/dist_test.sh CONFIG CHECKPOINT GPUS [tools/test.py options ...]
# PORT (default 29500) is the rendezvous port.
set -euo pipefail
if (( $# < 3 )); then
  echo "usage: bash $0 CONFIG CHECKPOINT GPUS [tools/test.py options ...]" >&2
  exit 2
fi
CONFIG=$1
CHECKPOINT=$2
GPUS=$3
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$HERE/..${PYTHONPATH:+:$PYTHONPATH}" exec python -m torch.distributed.run \
  --nnodes="${NNODES:-1}" --node_rank="${NODE_RANK:-0}" \
  --master_addr="${MASTER_ADDR:-127.0.0.1}" --master_port="${PORT:-29500}" \
  --nproc_per_node="$GPUS" \
  "$HERE/test.py" "$CONFIG" "$CHECKPOINT" --launcher pytorch "$@"
