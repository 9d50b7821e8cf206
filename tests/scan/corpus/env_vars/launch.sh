#!/bin/bash
# CUDA_LAUNCH_BLOCKING=1 is only for debugging  # expect: none
export CUDA_LAUNCH_BLOCKING=1  # expect: DV007
export CUDA_DEVICE_MAX_CONNECTIONS=1  # expect: DV007
export CUDA_VISIBLE_DEVICES=0,1,2,3  # expect: DV006
export NCCL_IB_DISABLE=1  # expect: DS002
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True  # expect: DV007
export CUBLAS_WORKSPACE_CONFIG=:4096:8  # expect: DV007
export CUDA_HOME=/usr/local/cuda-12.1  # expect: DV007
export OMP_NUM_THREADS=8  # expect: none
export ASCEND_LAUNCH_BLOCKING=0  # expect: none
export HCCL_EXEC_TIMEOUT=1800  # expect: none
echo "starting"  # expect: none
torchrun --nproc_per_node=4 train.py --lr 3e-4  # expect: none
