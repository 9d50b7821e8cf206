"""NVIDIA command-line tools and libraries used from Python."""
import os  # expect: none
import shutil  # expect: none
import subprocess  # expect: none
from subprocess import check_output  # expect: none


def gpu_inventory():
    names = subprocess.check_output(["nvidia-smi", "-L"]).decode()  # expect: NV001
    used = check_output("nvidia-smi --query-gpu=memory.used --format=csv,noheader", shell=True)  # expect: NV001
    os.system("nvidia-smi topo -m > topo.txt")  # expect: NV001
    stream = os.popen("nvcc --version")  # expect: NV001
    has_nvcc = shutil.which("nvcc") is not None  # expect: NV001
    nvcc_path = os.path.join(os.environ.get("CUDA_HOME", ""), "bin/nvcc")  # expect: DV007, NV001
    return names, used, stream, has_nvcc, nvcc_path


def monitor(index):
    import pynvml  # expect: PK002
    pynvml.nvmlInit()  # expect: none
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)  # expect: none
    return pynvml.nvmlDeviceGetTemperature(handle, 0)  # expect: none


def optional_monitor():
    try:
        from pynvml import nvmlInit  # expect: PK002
    except ImportError:
        nvmlInit = None  # expect: none
    return nvmlInit


def quiet(parser):
    parser.add_argument("--smi", help="path to nvidia-smi (ignored on Ascend)")  # expect: none
    flags = {"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]}  # expect: none
    print("run nvidia-smi to see the devices")  # expect: none
    npu = subprocess.run(["npu-smi", "info"], capture_output=True)  # expect: none
    nvcc_flags = ["-O3"]  # expect: none
    return flags, npu, nvcc_flags
