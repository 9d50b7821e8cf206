"""CUDA-only environment variables set or read from Python."""
import os  # expect: none
from os import environ  # expect: none

os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # expect: DV007
os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # expect: DV007
os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"  # expect: DV006
os.environ["NCCL_SOCKET_IFNAME"] = "eth0"  # expect: DS002
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")  # expect: DV007
environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"  # expect: DV007
os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"  # expect: DV007
os.environ["NVIDIA_TF32_OVERRIDE"] = "0"  # expect: DV007
os.environ["TORCH_CUDNN_V8_API_ENABLED"] = "1"  # expect: DV007
os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"  # expect: DV007
cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")  # expect: DV007
arch_list = os.getenv("TORCH_CUDA_ARCH_LIST")  # expect: DV007
mps = os.environ.get("CUDA_MPS_PIPE_DIRECTORY")  # expect: DV007
loading = os.environ.get("CUDA_MODULE_LOADING", "LAZY")  # expect: DV007

# Ascend settings and unrelated names stay quiet.
os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"  # expect: none
os.environ["PYTORCH_NPU_ALLOC_CONF"] = "expandable_segments:True"  # expect: none
os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"  # expect: none
os.environ["HCCL_CONNECT_TIMEOUT"] = "1200"  # expect: none
os.environ["OMP_NUM_THREADS"] = "4"  # expect: none
MY_CUDA_LAUNCH_BLOCKING_FLAG = "CUDA_LAUNCH_BLOCKING_OVERRIDE"  # expect: none
print("set CUDA_LAUNCH_BLOCKING=1 to debug")  # expect: none


def explain():
    """Set CUDA_DEVICE_ORDER before launching."""
    return os.environ.get("LOCAL_RANK")  # expect: none
