#!/bin/bash
source /usr/local/Ascend/ascend-toolkit/set_env.sh  # expect: none
export VLLM_WORKER_MULTIPROC_METHOD=spawn  # expect: none
export VLLM_ATTENTION_BACKEND=FLASH_ATTN  # expect: VL005
export VLLM_ASCEND_ENABLE_DENSE_OPTIMIZE=1  # expect: VL005
vllm serve org/model-awq --quantization awq --max-model-len 8192  # expect: VL006, VL007
python -m vllm.entrypoints.openai.api_server --model org/model --quantization=fp8  # expect: VL006, VL007
vllm serve org/model --distributed-executor-backend ray  # expect: VL006, VL007
