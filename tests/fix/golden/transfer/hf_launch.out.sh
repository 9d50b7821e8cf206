#!/bin/bash
torchrun --nproc_per_node=8 train.py --bf16 True --tf32 False --optim adamw_bnb_8bit --output_dir out
