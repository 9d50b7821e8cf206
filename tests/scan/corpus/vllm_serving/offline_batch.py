"""Offline batch generation with an embedded vLLM engine, written for CUDA hosts."""
import os

import torch
from vllm import LLM, SamplingParams  # expect: none
from vllm.engine.arg_utils import AsyncEngineArgs  # expect: none

os.environ["VLLM_ATTENTION_BACKEND"] = "FLASHINFER"  # expect: VL005
os.environ.setdefault("VLLM_USE_V1", "1")  # expect: VL005


def build_engine(model_path, quantized):
    return LLM(  # expect: VL001
        model=model_path,
        device="cuda",  # expect: VL002, DV001
        quantization="awq" if quantized else None,  # expect: VL003
        enforce_eager=False,  # expect: VL004
        gpu_memory_utilization=0.85,  # expect: none
    )


def build_ascend_engine(model_path):
    return LLM(model=model_path, quantization="ascend")  # expect: VL001


def engine_args(model_path):
    return AsyncEngineArgs(model=model_path, tensor_parallel_size=2)  # expect: VL001


def generate(prompts):
    llm = build_engine("org/model", quantized=True)
    params = SamplingParams(temperature=0.0, max_tokens=64)  # expect: none
    outputs = llm.generate(prompts, params)
    torch.cuda.empty_cache()  # expect: CU001
    return [o.outputs[0].text for o in outputs]
