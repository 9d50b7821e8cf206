"""A device-agnostic port (our agnostic rewrite's prelude, no transfer_to_npu) where the author
kept DataParallel for CUDA hosts under a plain device test: the device is the run-time type,
"npu" on an NPU host, so that branch never runs there and is not broken on NPU."""
import torch  # expect: none
import torch.nn as nn  # expect: none

# The host's accelerator (cuda, npu, xpu, ...), or None without one; tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None  # expect: none
_device_type = _accel_type or "cpu"  # expect: none
device = _device_type  # expect: none


def build(net):
    net = net.to(device)  # expect: none
    if device == "cuda":  # expect: none
        net = nn.DataParallel(net)  # expect: DS003:info
        torch.backends.cudnn.benchmark = True  # expect: none
    if device != "cuda":  # expect: none
        pass
    else:
        net = torch.nn.DataParallel(net)  # expect: DS003:info
    if device == "npu":  # expect: none
        net = nn.DataParallel(net)  # expect: DS003:error
    if device in ("cuda", "npu"):  # expect: none
        net = nn.DataParallel(net)  # expect: DS003:error
    wrapped = nn.DataParallel(net)  # expect: DS003:error
    return wrapped
