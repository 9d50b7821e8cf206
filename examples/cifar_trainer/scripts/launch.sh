#!/usr/bin/env bash
# Launch a single-node multi-GPU run.
set -euo pipefail
export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=eth0
cd "$(dirname "$0")/.."
torchrun --nproc_per_node=4 train.py --device cuda --steps 200
