import torch


def select_kernel(spec, options):
    # Every string below sits in a case pattern: patterns match literal values, so none of
    # them can become a run-time device type. Each is listed as manual, never rewritten.
    match spec:
        case "cuda" | "cuda:1":
            kernel = "fused"
        case {"where": "cuda"}:
            kernel = "mapped"
        case {"cuda": preferred}:
            kernel = preferred
        case torch.device(type="cuda"):
            kernel = "typed"
        case ["cuda", *_]:
            kernel = "listed"
        case other if other == "cuda:0":  # the guard is ordinary code
            kernel = "guarded"
        case _:
            kernel = "plain"
    # The body of a case is ordinary code too.
    match options.mode:
        case "fast":
            return kernel, torch.device("cuda")
    return kernel, None
