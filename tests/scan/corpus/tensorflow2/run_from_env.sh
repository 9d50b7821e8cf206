#!/bin/bash
# Model Garden trainer launched from a job template: the scheduler exports the hardware choices
# and this script passes them through as absl flags.
STRATEGY=${STRATEGY:-mirrored}  # expect: none
NUM_GPUS=${NUM_GPUS:-8}  # expect: none
DTYPE=${DTYPE:-fp16}  # expect: none

flags=(
  "--distribution_strategy=$STRATEGY"  # expect: TF020:info
  "--num_gpus=$NUM_GPUS"  # expect: TF020:warning
  "--dtype=${DTYPE}"  # expect: TF020:info
  "--all_reduce_alg=${REDUCTION:-nccl}"  # expect: TF020:info
  "--model_dir=${MODEL_DIR}"  # expect: none
  "--batch_size=$BATCH"  # expect: none
)
echo "strategy=$STRATEGY gpus=$NUM_GPUS dtype=$DTYPE (pass --num_gpus=\$NUM_GPUS to change it)"  # expect: none
# python3 classifier_trainer.py --distribution_strategy=$STRATEGY --num_gpus=$NUM_GPUS  # expect: none
python3 classifier_trainer.py "${flags[@]}"  # expect: none
python3 classifier_trainer.py --distribution_strategy=$STRATEGY --num_gpus=0 --dtype=fp32  # expect: TF020:info
python3 classifier_trainer.py --distribution_strategy=one_device --num_gpus 1  # expect: TF020

# the same trainer behind a small option parser: each option is passed on as the script got it
while [ $# -gt 0 ]; do
  case "$1" in
    --num_gpus ) shift; gpus_arg="--num_gpus=$1" ;;  # expect: TF020
    --distribution_strategy ) shift; strategy_arg="--distribution_strategy=${1}" ;;  # expect: TF020:info
    --dtype ) shift; dtype_arg="--dtype=$1" ;;  # expect: TF020:info
  esac
  shift
done
python3 classifier_trainer.py $gpus_arg $strategy_arg $dtype_arg  # expect: none
