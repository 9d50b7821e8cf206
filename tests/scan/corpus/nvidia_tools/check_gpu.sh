#!/bin/bash
nvidia-smi  # expect: NV001
nvidia-smi --query-gpu=name,memory.total --format=csv  # expect: NV001
nvcc --version  # expect: NV001
NUM_GPUS=$(nvidia-smi -L | wc -l)  # expect: NV001
npu-smi info  # expect: none
# nvidia-smi shows the GPUs  # expect: none
echo "done"  # expect: none
echo "error: nvidia-smi not found, cannot detect the GPU" >&2  # expect: none
echo 'hint: install nvcc first'  # expect: none
echo "$(nvidia-smi -L)"  # expect: NV001
