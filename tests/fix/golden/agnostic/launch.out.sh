#!/bin/bash
export ASCEND_RT_VISIBLE_DEVICES=0,1  # two cards
export NCCL_DEBUG=INFO
torchrun --nproc_per_node=2 train.py --device npu:0 --backend HCCL
