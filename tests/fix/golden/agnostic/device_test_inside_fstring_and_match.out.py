import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def describe(x, kind):
    # A replacement inside an f-string takes the quote the f-string does not use.
    text = f"on {torch.get_device_module(_accel_type or 'cuda').get_device_name()} fast={x.device.type == (_accel_type or 'cuda')}"
    # A match pattern cannot name a run-time value: listed, not rewritten.
    match kind:
        case "cuda":
            text += "!"
    return text
