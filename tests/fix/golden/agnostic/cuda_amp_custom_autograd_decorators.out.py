import torch
from torch.cuda.amp import custom_bwd, custom_fwd

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


class ScaledMatmul(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type=_accel_type or "cuda", cast_inputs=torch.float32)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    @torch.amp.custom_bwd(device_type=_accel_type or "cuda")
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad @ b.t(), a.t() @ grad


class Gelu(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type=_accel_type or "cuda")
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.gelu(x)

    @staticmethod
    @torch.amp.custom_bwd(device_type=_accel_type or "cuda")
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            y = torch.nn.functional.gelu(x)
        return torch.autograd.grad(y, x, grad)[0]
