import torch


def buffers(n, dtype):
    device = torch.device("cuda", torch.cuda.current_device())
    grads = torch.zeros(
        n,
        dtype=dtype,
        device=torch.cuda.current_device(),
        requires_grad=False,
    )
    flags = torch.empty(n, device=torch.cuda.current_device()).cuda(torch.cuda.current_device())
    return device, grads, flags
