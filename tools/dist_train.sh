#!/usr/bin/env bash
# Train on GPUS processes of this node (or of each node, with NNODES > 1)
# through torchrun and mmengine's pytorch launcher:
#   bash tools/dist_train.sh CONFIG GPUS [tools/train.py options ...]
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash tools/dist_train.sh CONFIG 8
# PORT (default 29500) is the rendezvous port.
set -euo pipefail
if (( $# < 2 )); then
  echo "usage: bash $0 CONFIG GPUS [tools/train.py options ...]" >&2
  exit 2
fi
CONFIG=$1
GPUS=$2
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$HERE/..${PYTHONPATH:+:$PYTHONPATH}" exec python -m torch.distributed.run \
  --nnodes="${NNODES:-1}" --node_rank="${NODE_RANK:-0}" \
  --master_addr="${MASTER_ADDR:-127.0.0.1}" --master_port="${PORT:-29500}" \
  --nproc_per_node="$GPUS" \
  "$HERE/train.py" "$CONFIG" --launcher pytorch "$@"
