import torch


def describe(x, kind):
    # A replacement inside an f-string takes the quote the f-string does not use.
    text = f"on {torch.cuda.get_device_name()} fast={x.device.type == 'cuda'}"
    # A match pattern cannot name a run-time value: listed, not rewritten.
    match kind:
        case "cuda":
            text += "!"
    return text
