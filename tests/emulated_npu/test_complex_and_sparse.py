"""What complex and sparse tensors do on the emulated npu (probe_complex_sparse.py beside this
file): complex tensors compute what CPU computes, bit for bit; sparse tensors are not supported
and say so with an exception (never a crash)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from standin.conftest import npu_standin  # noqa: F401  (the session's build)

pytestmark = pytest.mark.needs_torch

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def probed(npu_standin) -> dict:  # noqa: F811
    ran = npu_standin.run(["-W", "ignore", str(HERE / "probe_complex_sparse.py")], cwd=HERE, autocast=False)
    assert ran.returncode == 0, ran.stderr[-3000:]  # a segfault here was a conj copy recursing
    return json.loads(ran.stdout)


@pytest.mark.parametrize("case", [
    "randn complex64", "arithmetic with conj", "view_as_complex / view_as_real", "write through view_as_real",
    "write through view_as_complex", "fft, ifft, rfft, stft", "rotary embedding", "complex backward + Adam",
    "complex Linear + SGD",
])
def test_complex_equals_cpu(probed, case):
    assert probed[case] == "equal"


@pytest.mark.parametrize("case", [
    "sparse_coo_tensor on npu", "sparse cpu tensor .to(npu)", "dense npu .to_sparse()",
    "Embedding(sparse=True) backward", "dense npu .to_sparse_csr().to_dense()",
])
def test_sparse_raises(probed, case):
    assert probed[case].startswith("NotImplementedError: Could not run 'aten::")
    assert "'Sparse" in probed[case] and "npu' backend" in probed[case]
