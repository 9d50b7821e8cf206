import os
import subprocess

os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # debug: synchronous launches
os.environ.setdefault('PYTORCH_CUDA_ALLOC_CONF', "expandable_segments:True")
os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
gpus = subprocess.check_output(["nvidia-smi", "-L"]).decode().splitlines()
