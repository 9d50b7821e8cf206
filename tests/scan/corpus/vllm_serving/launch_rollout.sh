#!/bin/bash
# Start the rollout cluster; messages printed for the user are not settings.
set -euo pipefail
log() { echo "[launch] $*"; }
echo "This recipe needs NCCL and CUDA_VISIBLE_DEVICES set per node"  # expect: none
echo "hint: add --quantization awq for the 4-bit checkpoint"  # expect: none
log "using the nccl backend on $(hostname)"  # expect: none
printf 'export NCCL_DEBUG=INFO to debug hangs\n'  # expect: none
echo "export CUDA_VISIBLE_DEVICES=0,1" >> node_env.sh  # expect: DV006
export NCCL_DEBUG=WARN  # expect: DS002
ray start --head --num-gpus=8  # expect: none
vllm serve org/policy-7b --quantization awq  # expect: VL006, VL007
