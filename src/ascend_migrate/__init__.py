"""ascend-migrate: port CUDA PyTorch projects to Huawei Ascend NPUs (torch_npu + CANN)."""

__version__ = "0.1.0"
