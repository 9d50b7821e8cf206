"""torch.version.cuda as a condition or a value: None on NPU builds."""
import torch  # expect: none
from packaging import version as pv  # expect: none
from torch.version import cuda as built_with  # expect: none

HAS_CUDA_BUILD = torch.version.cuda is not None  # expect: CU114
CUDA_VERSION = torch.version.cuda  # expect: CU114
MAJOR = int(CUDA_VERSION.split(".")[0]) if CUDA_VERSION else 0  # expect: none


def bf16_ready():
    return (  # expect: none
        torch.version.cuda  # expect: CU114
        and torch.cuda.is_available()  # expect: CU001
        and pv.parse(torch.version.cuda).release >= (11, 0)  # expect: CU114
    )


def pick_kernel():
    if torch.version.cuda:  # expect: CU114
        return "fused"  # expect: none
    if float(built_with or "0") >= 11.8:  # expect: CU114
        return "fused2"  # expect: none
    while torch.version.cuda and False:  # expect: CU114
        break
    return "reference"  # expect: none


def cuda_only_guards():
    # Guards that keep CUDA-only calls off are correct on every host.
    cap = torch.cuda.get_device_capability() if torch.version.cuda else (0, 0)  # expect: none
    sm = torch.cuda.get_device_properties(0).major if torch.version.cuda else 0  # expect: none
    if torch.version.cuda:  # expect: none
        arches = torch.cuda.get_arch_list()  # expect: CU002
    else:
        arches = []  # expect: none
    if torch.version.cuda is not None:  # expect: none
        torch.backends.cuda.matmul.allow_tf32 = True  # expect: PR001
    return cap, sm, arches


def messages():
    print("built with CUDA", torch.version.cuda)  # expect: none
    print(f"cuda {torch.version.cuda}")  # expect: none
    hip = torch.version.hip  # expect: none
    git = torch.version.git_version  # expect: none
    return hip, git


def shadowed(torch):
    return torch.version.cuda  # expect: none
