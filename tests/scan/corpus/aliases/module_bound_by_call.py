"""Modules bound by calls that import them: pytest.importorskip and importlib.import_module."""
import importlib

import pytest

torch = pytest.importorskip("torch")  # expect: none
accel = importlib.import_module("torch.cuda")  # expect: none
helper = pytest.importorskip("numpy")  # expect: none


def test_device_count():
    assert torch.cuda.device_count() >= 0  # expect: CU001
    accel.synchronize()  # expect: CU001
    data = torch.zeros(2, device="cuda")  # expect: DV001
    return helper.asarray(data.cpu())  # expect: none
