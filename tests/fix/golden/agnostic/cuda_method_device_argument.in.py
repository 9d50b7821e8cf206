import torch


def place(model, batch, device: torch.device, args):
    model = model.cuda(device)
    model = model.cuda(torch.cuda.current_device())
    head = model.head.cuda(0)
    batch = batch.cuda(non_blocking=True)
    labels = batch.cuda(args.gpu, non_blocking=True)
    mask = batch.cuda(device=device)
    return model, head, batch, labels, mask
