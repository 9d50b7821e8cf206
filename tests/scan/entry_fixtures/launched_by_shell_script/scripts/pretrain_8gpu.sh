#!/bin/bash
# Eight processes on one host.
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=4
torchrun --nproc_per_node 8 --master_port 29500 \
    trainer/loop.py \
    --config configs/base.yaml \
    --epochs 3
