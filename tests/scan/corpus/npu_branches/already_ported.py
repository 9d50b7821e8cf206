"""Code that already branches for npu: one info finding per branch for what the branch makes
harmless; what is broken on NPU in any branch (no NPU twin, no automatic fix) keeps its severity,
unless the branch's own test keeps that arm off the NPU (`else` of `== "npu"`, body of `!= "npu"`)."""
import torch  # expect: none

try:
    import torch_npu  # expect: none
except ImportError:
    torch_npu = None  # expect: none

BACKENDS = {"cuda": "nccl", "npu": "hccl", "cpu": "gloo"}  # expect: none
DEVICES = ("cuda", "npu", "xpu")  # expect: none
KINDS = ["npu", "cuda"]  # expect: none
ORDER = {"cuda": 0, "npu:0": 1}  # expect: none
SUPPORTED = {"cuda", "npu"}  # expect: none
CUDA_ONLY = {"cuda": "nccl", "cpu": "gloo"}  # expect: DV001, DS001


def pick_device():
    if torch_npu is not None and torch.npu.is_available():  # expect: none
        torch.cuda.synchronize()  # expect: CU001:info
        model_device = "cuda"  # expect: none
        torch.cuda.empty_cache()  # expect: none
    elif torch.cuda.is_available():
        model_device = "cuda:0"  # expect: none
    else:
        model_device = "cpu"  # expect: none
    return model_device


def pick_backend(device):
    if device.type == "npu":  # expect: none
        backend = "hccl"  # expect: none
    else:
        backend = "nccl"  # expect: DS001:info
    x = "npu" if hasattr(torch, "npu") else "cuda"  # expect: DV001:info
    return backend, x


def is_accelerator(device):
    return device.type in ("cuda", "npu")  # expect: none


def second_branch(is_npu):
    if is_npu:  # expect: none
        a = torch.cuda.get_device_capability()  # expect: CU101:info
        b = torch.cuda.get_arch_list()  # expect: CU002:error
        return a, b
    return None  # expect: none


def dist_table(kind):
    return {"cuda": torch.cuda.current_device, "npu": torch.npu.current_device}[kind]  # expect: none


def nested_branches(device, x):
    if device.type == "npu":  # expect: none
        if x.is_cuda:  # expect: DV003:info
            torch.cuda.nvtx.range_push("a")  # expect: CU107:error
        torch.cuda.set_device(0)  # expect: none
    if device.type != "npu" and device.type == "cuda":  # expect: DV004:info
        torch.cuda.set_device(1)  # expect: none
    elif str(device).startswith("npu"):
        torch.cuda.set_device(2)  # expect: none
    if torch.cuda.is_available():  # expect: CU001:info
        torch.cuda.set_device(3)  # expect: CU001
        cap = torch.cuda.get_device_capability()  # expect: CU101:error
        return cap
    return None


def parallel_under_device_tests(model, device):
    if device.type in ("cuda", "npu"):  # expect: none
        model = torch.nn.DataParallel(model)  # expect: DS003:error
        model = model.to("cuda")  # expect: DV001:warning
    if device.type == "npu":  # expect: none
        model = model.to("npu")  # expect: none
        torch.cuda.empty_cache()  # expect: CU001:info
        model = torch.nn.DataParallel(model)  # expect: DS003:error
    elif device.type == "cuda":  # expect: none
        model = torch.nn.DataParallel(model)  # expect: none
    scaler = torch.amp.GradScaler("npu") if torch.cuda.device_count() > 1 else None  # expect: CU001:info
    return model, scaler


def arms_off_the_npu(model, device):
    """The arm an npu test keeps off the NPU never runs there: nothing in it is broken on NPU."""
    backend = "hccl" if device.type == "npu" else "nccl"  # expect: DS001:info
    if device.type != "npu":  # expect: none
        model = torch.nn.DataParallel(model)  # expect: DS003:info
    if not str(device).startswith("npu"):  # expect: none
        model = torch.nn.DataParallel(model)  # expect: DS003:info
    if device.type == "npu" and model is not None:  # expect: none
        model = torch.nn.DataParallel(model)  # expect: DS003:error
    else:
        model = torch.nn.DataParallel(model)  # expect: DS003:error
    return model, backend
