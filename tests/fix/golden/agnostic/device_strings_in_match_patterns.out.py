import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def select_kernel(spec, options):
    # Every string below sits in a case pattern: patterns match literal values, so none of
    # them can become a run-time device type. Each is listed as manual, never rewritten.
    match spec:
        case "cuda" | "cuda:1":
            kernel = "fused"
        case {"where": "cuda"}:
            kernel = "mapped"
        case {"cuda": preferred}:
            kernel = preferred
        case torch.device(type="cuda"):
            kernel = "typed"
        case ["cuda", *_]:
            kernel = "listed"
        case other if other == f"{_device_type}:0":  # the guard is ordinary code
            kernel = "guarded"
        case _:
            kernel = "plain"
    # The body of a case is ordinary code too.
    match options.mode:
        case "fast":
            return kernel, torch.device(_device_type)
    return kernel, None
