"""The emulated npu runs CPU kernels over the npu memory itself (no copies): results equal the
copying route's, written operands that a kernel resizes come back resized, views write through
to their base, results of CPU kernels are counted (and freed) as npu memory, and an ordinary step
takes no copying call at all."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs_torch

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def probed(npu_standin) -> dict:
    proc = npu_standin.run([str(HERE / "probe_zero_copy.py")], cwd=HERE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("PROBE "))
    return json.loads(line[len("PROBE "):])


def test_both_routes_give_the_same_results(probed):
    assert probed["zero"] == probed["copying"]


def test_what_each_call_must_do(probed):
    zero = probed["zero"]
    assert zero["out_resized"] == [[4, 6], "npu", True]
    assert zero["inplace_view"] == [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    assert zero["mixed_scalar"] == "npu"
    assert zero["clone_is_new_memory"] is True


def test_the_calls_take_the_zero_copy_route(probed):
    # The factories with a device argument (randn/zeros/ones/empty on npu) are the calls left to
    # the copying route; the arithmetic, the out= call and the backward pass are not among them.
    copied = probed["copied_on_zero"]
    assert not [name for name in copied if name.split(".")[0] in ("aten::mm", "aten::mul", "aten::add_", "aten::sum",
                                                                 "aten::threshold_backward", "aten::relu")], copied


def test_results_are_npu_memory(probed):
    assert probed["result_counted"] is True and probed["freed"] is True
