#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1 ASCEND_RT_VISIBLE_DEVICES=0,1  # two cards
export NCCL_DEBUG=INFO
torchrun --nproc_per_node=2 train.py --device cuda:0 --backend NCCL
