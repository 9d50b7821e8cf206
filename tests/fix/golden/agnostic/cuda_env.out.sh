#!/bin/bash
export CUDA_LAUNCH_BLOCKING=1 ASCEND_LAUNCH_BLOCKING=1
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:128  # fragmentation
export CUDA_DEVICE_MAX_CONNECTIONS=1
nvidia-smi --query-gpu=name --format=csv
python train.py
