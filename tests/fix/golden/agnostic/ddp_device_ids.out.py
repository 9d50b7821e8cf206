import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def wrap(model: torch.nn.Module) -> torch.nn.Module:
    dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(_device_type))
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.accelerator.set_device_index(local_rank) if _accel_type else None
    model = model.to(_device_type if local_rank is None or not _accel_type else local_rank)
    # the index is kept for an accelerator; a CPU module takes none
    model = DDP(model, device_ids=([local_rank] if _accel_type else None), output_device=(local_rank if _accel_type else None), find_unused_parameters=True)
    return model


def wrap_again(model: torch.nn.Module, gpus: list) -> torch.nn.Module:
    return torch.nn.parallel.DistributedDataParallel(model, (gpus if _accel_type else None), None)
