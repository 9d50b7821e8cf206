"""The DDP smoke run launches two real processes (torchrun, gloo on CPU, loopback)."""
from __future__ import annotations

import pytest

from ascend_migrate.validate.ddp import judge_ranks, run_ddp_smoke

from vhelpers import TINY

pytestmark = pytest.mark.needs_torch  # runs torch


def test_two_real_processes_finish_and_agree(thresholds):
    result = run_ddp_smoke("tiny_model.py:ddp_train", TINY, "cpu", thresholds.ddp, steps=2, timeout_s=240)
    assert result.status == "pass", (result.summary, result.evidence[-1])
    ranks = [e for e in result.evidence if "rank" in e and e.get("rank") is not None]
    assert [r["rank"] for r in ranks] == [0, 1]
    assert all(r["backend"] == "gloo" and r["world_size"] == 2 for r in ranks)
    assert ranks[0]["losses"] != ranks[1]["losses"]  # each rank saw its own data, yet weights agree
    assert "bit-identical" in result.summary


def _rank(rank, bits=1, s=1.0, **kw):
    rec = {"rank": rank, "ok": True, "distributed": True, "world_size": 2, "losses": [1.0],
           "model": {"bits": bits, "params": {"w": {"sum": s, "abs_sum": 10.0, "bits": bits}}}}
    rec.update(kw)
    return rec


def test_judge_ranks(thresholds):
    ddp = thresholds.ddp
    assert judge_ranks([_rank(0), _rank(1)], ddp, 2).status == "pass"
    close = judge_ranks([_rank(0, 1, 1.0), _rank(1, 2, 1.0 + 1e-9)], ddp, 2)
    assert close.status == "pass" and "within rtol" in close.summary
    far = judge_ranks([_rank(0, 1, 1.0), _rank(1, 2, 2.0)], ddp, 2)
    assert far.status == "fail" and "parameter 'w'" in far.summary
    crashed = judge_ranks([_rank(0), {"rank": 1, "ok": False, "error": "RuntimeError: boom"}], ddp, 2)
    assert crashed.status == "fail" and "boom" in crashed.evidence[1]["message"]
    single = judge_ranks([_rank(0, distributed=False), _rank(1, distributed=False)], ddp, 2)
    assert single.status == "fail" and "init_process_group" in single.summary
    no_model = judge_ranks([_rank(0, model=None), _rank(1, model=None)], ddp, 2)
    assert no_model.status == "fail" and "no model" in no_model.summary
    nan = judge_ranks([_rank(0, losses=["nan"]), _rank(1)], ddp, 2)
    assert nan.status == "fail"


@pytest.mark.parametrize("entry", ["tiny_model.py:no_such_function"])
def test_broken_entry_fails_with_the_error(thresholds, entry):
    result = run_ddp_smoke(entry, TINY, "cpu", thresholds.ddp, steps=1, timeout_s=240)
    assert result.status == "fail"
    assert any("no function" in (e.get("message") or "") for e in result.evidence)
