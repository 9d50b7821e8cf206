import torch


def copy_async(tensor, out):
    if tensor.is_cuda:
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            out.copy_(tensor, non_blocking=True)
        return stream
    if tensor.is_npu:
        out.copy_(tensor, non_blocking=True)
    else:
        out.copy_(tensor)
    return None
