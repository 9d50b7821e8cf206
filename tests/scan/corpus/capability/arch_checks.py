"""Architecture checks spelled in the ways real code spells them."""
import torch  # expect: none
from torch.cuda import get_device_capability, get_device_properties  # expect: none


def flags():
    ampere = get_device_capability()[0] >= 8  # expect: CU101
    hopper = get_device_capability(0) >= (9, 0)  # expect: CU101
    sms = get_device_properties(0).multi_processor_count  # expect: CU102
    warp = torch.cuda.get_device_properties(0).warp_size  # expect: CU102
    name = get_device_properties(0).name  # expect: CU001
    mem = torch.cuda.get_device_properties(0).total_memory  # expect: CU001
    bf16 = torch.cuda.is_bf16_supported()  # expect: CU001
    return ampere, hopper, sms, warp, name, mem, bf16


def swallowed():
    try:
        use_flash = get_device_capability()[0] >= 8  # expect: CU113
    except Exception:
        use_flash = False  # expect: none
    return use_flash
