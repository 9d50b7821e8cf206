#!/bin/bash
# --dtype is an option of many launchers; without the TensorFlow official-models flags it is
# a PyTorch run's precision, which the AMP rules cover in the code it starts.
deepspeed train.py --dtype fp16 --deepspeed ds_config.json  # expect: none
torchrun --nproc_per_node 8 finetune.py --dtype=float16  # expect: none
