import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def summarise(opts, device, scripted, batch, ckpt_path):
    # The running device, in the usual spellings: rewritten to the accelerator type.
    on_gpu = opts.device.startswith(_accel_type or "cuda")
    indexed = str(device).startswith((_accel_type or "cuda") + ":")
    tensor_side = batch.device.type.startswith(_accel_type or "cuda")
    # Strings that may be stored data (device names kept in a saved graph, checkpoint keys):
    # still rewritten, but the change says the receiver is not evidently a device.
    baked = [n for n in scripted.graph.nodes() if str(n).startswith(_accel_type or "cuda")]
    keys = [k for k in torch.load(ckpt_path) if k.startswith(_accel_type or "cuda")]
    # map_location's second argument is where the checkpoint saved a tensor: left for a person.
    state = torch.load(ckpt_path, map_location=lambda storage, loc: storage if loc.startswith("cuda") else storage)
    return on_gpu, indexed, tensor_side, baked, keys, state
