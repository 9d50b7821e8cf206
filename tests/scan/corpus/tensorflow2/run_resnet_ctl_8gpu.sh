#!/bin/bash
# ResNet-50 with the official-models custom training loop on one 8-GPU machine.
# The trainer reads every hardware choice from these absl flags.
DATA_DIR=${DATA_DIR:-/data/imagenet/tfrecords}  # expect: none
MODEL_DIR=${MODEL_DIR:-/tmp/resnet50}  # expect: none

args=(
  "--data_dir=${DATA_DIR}"  # expect: none
  "--model_dir=${MODEL_DIR}"  # expect: none
  "--num_gpus=8"  # expect: TF020
  "--distribution_strategy=mirrored"  # expect: TF020
  "--all_reduce_alg=nccl"  # expect: TF020
  "--dtype=fp16"  # expect: TF020
  "--enable_xla"  # expect: TF020
  "--batch_size=2048"  # expect: none
)
echo "running with --distribution_strategy=mirrored --all_reduce_alg=nccl"  # expect: none
python3 resnet_ctl_imagenet_main.py "${args[@]}" --train_epochs=90  # expect: none

# the evaluation run: one device, full precision, no XLA
python3 resnet_ctl_imagenet_main.py --distribution_strategy=one_device --dtype=fp32 --noenable_xla --skip_eval=false  # expect: none
python3 resnet_ctl_imagenet_main.py --distribution_strategy off --enable_xla=false --all_reduce_alg=ring  # expect: none
python3 resnet_ctl_imagenet_main.py --distribution_strategy=multi_worker_mirrored --enable_xla=true  # expect: TF020, TF020
