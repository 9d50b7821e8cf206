#!/bin/bash
# DeepSpeed fine-tuning: `--num_gpus` and `--dtype` are this launcher's and this script's own
# options here, not TensorFlow flags.
NUM_GPUS=${NUM_GPUS:-8}  # expect: none
deepspeed --num_gpus=$NUM_GPUS finetune.py --dtype=$DTYPE --deepspeed ds_config.json  # expect: none
deepspeed --num_gpus 4 finetune.py --dtype ${DTYPE}  # expect: none
