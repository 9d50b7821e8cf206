"""The emulated npu records the operators that reach it (off by default), named as torch_npu's
fallback warning names them, and prints that warning once per operator the imitated release has
no NPU kernel for."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_migrate.knowledge.npu_ops import FALLBACK_WARNING

pytestmark = pytest.mark.needs_torch

HERE = Path(__file__).resolve().parent


def probe(npu_standin, release: str, **extra):
    proc = npu_standin.run([str(HERE / "probe_operators.py")], cwd=HERE, release=release, extra=extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("PROBE "))
    return json.loads(line[len("PROBE "):]), proc.stderr


def test_recording_counts_ops_with_input_dtypes(npu_standin):
    seen, _ = probe(npu_standin, "2.2.0")
    recorded = seen["recorded"]
    assert recorded["aten::isin.Tensor_Tensor"] == {"Long,Long": 1}
    assert recorded["aten::mm"]["Float,Float"] >= 2  # forward and backward
    assert "aten::_transformer_encoder_layer_fwd" in recorded
    assert seen["after"] == {}  # handed over and cleared
    assert seen["hits"][1] is True and seen["hits"][0] is False


def test_fallback_warning_once_per_operator_of_the_release(npu_standin):
    seen, stderr = probe(npu_standin, "2.2.0")
    assert seen["release"] == "2.2.0"
    lines = [l for l in stderr.splitlines() if "CAUTION" in l]
    isin = FALLBACK_WARNING.format(op="aten::isin.Tensor_Tensor_out")
    encoder = FALLBACK_WARNING.format(op="aten::_transformer_encoder_layer_fwd")
    assert sum(isin in l for l in lines) == 1  # two isin calls, one warning, torch_npu's name
    assert sum(encoder in l for l in lines) == 1
    assert not [l for l in lines if "aten::mm'" in l or "aten::sum" in l]


def test_no_warning_where_the_release_has_the_kernel_or_no_data(npu_standin):
    seen, stderr = probe(npu_standin, "2.6.0")
    assert "isin" not in stderr and "_transformer_encoder_layer_fwd" in stderr
    seen, stderr = probe(npu_standin, "1.8.1")  # no data for this release: nothing said
    assert seen["release"] is None and "CAUTION" not in stderr
    seen, stderr = probe(npu_standin, "2.2.0", NPU_STANDIN_FALLBACK_WARNINGS="0")
    assert seen["release"] is None and "CAUTION" not in stderr
