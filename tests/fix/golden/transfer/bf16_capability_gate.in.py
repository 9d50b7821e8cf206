import torch


def pick_dtype():
    return torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16


def pick_amp():
    if torch.cuda.get_device_capability()[0] >= 8:
        amp_dtype = torch.bfloat16
    else:
        amp_dtype = torch.float16
    return amp_dtype


use_bf16 = torch.cuda.get_device_capability() >= (8, 0)
use_fp16 = torch.cuda.get_device_capability()[0] < 8
config = dict(bf16=torch.cuda.is_available() and 8 <= torch.cuda.get_device_capability()[0])

# Gates that choose no precision keep the neutral fallback.
flash_ok = torch.cuda.get_device_capability()[0] >= 8
major, minor = torch.cuda.get_device_capability()
