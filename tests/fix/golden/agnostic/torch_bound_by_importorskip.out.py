"""A test module that gets torch from pytest.importorskip (it is skipped where torch is missing).

The name `torch` is bound by an assignment, not an import statement: its CUDA calls must be
seen and rewritten in one pass, and the device helper must follow that assignment instead of
bringing its own `import torch` (which would turn the skip into an import error).
"""
import pytest

torch = pytest.importorskip("torch")

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"

needs_gpu = pytest.mark.skipif(not torch.accelerator.is_available(), reason="runs on an accelerator")


@pytest.mark.parametrize("device,pinned", [(_device_type, True), ("cpu", False)])
def test_roundtrip(device, pinned):
    values = torch.arange(6, dtype=torch.float32)
    if pinned:
        values = values.pin_memory()
    moved = values.to(device)
    assert moved.cpu().tolist() == values.tolist()


@needs_gpu
def test_half_sum():
    where, kind = _device_type, torch.float16
    total = torch.ones(8, device=where, dtype=kind).sum()
    torch.accelerator.synchronize() if _accel_type else None
    assert total.item() == 8
