import torch


def pick_dtype():
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def pick_amp():
    if torch.cuda.is_bf16_supported():
        amp_dtype = torch.bfloat16
    else:
        amp_dtype = torch.float16
    return amp_dtype


use_bf16 = torch.cuda.is_bf16_supported()
use_fp16 = not torch.cuda.is_bf16_supported()
config = dict(bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported())

# Gates that choose no precision keep the neutral fallback.
flash_ok = (torch.cuda.get_device_capability() or (0, 0))[0] >= 8
major, minor = (torch.cuda.get_device_capability() or (0, 0))
