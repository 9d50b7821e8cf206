@functools.lru_cache(
    maxsize=None,
)
def pick_device():
    return "cuda"


def place(tensor):
    return tensor.to(device="cuda")
