import torch
import torch.distributed as dist

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def setup(rank, world_size):
    has_gpu = torch.accelerator.is_available()
    # Upper-case names: torch reads them in lower case, transfer_to_npu only maps "nccl".
    dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(_device_type) if has_gpu else "GLOO", rank=rank, world_size=world_size)
    group = dist.new_group(backend=torch.distributed.get_default_backend_for_device(_device_type))
    return group


def setup_positional():
    dist.init_process_group(torch.distributed.get_default_backend_for_device(_device_type))


def setup_lower():
    dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(_device_type))


BACKEND = "NCCL"  # not at a process-group call: reported, not rewritten
