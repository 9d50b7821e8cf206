from __future__ import annotations

import pytest

from ascend_migrate.knowledge.loader import KnowledgeError
from ascend_migrate.validate.thresholds import THRESHOLDS_FILE, load_thresholds, looser, normalize_dtype


def test_defaults_are_the_msprobe_and_acceptance_limits(thresholds):
    fp32 = thresholds.gate("fp32")
    assert (fp32.cosine_min, fp32.max_abs, fp32.rel_err) == (0.99, 1e-3, 1e-5)
    for half in ("fp16", "bf16"):
        assert thresholds.gate(half).rel_err == 1e-2
        assert thresholds.gate(half).cosine_min == 0.99
    hard = thresholds.hard
    assert (hard.cosine_min, hard.max_abs, hard.nan_inf) == (0.9, 1.0, True)
    assert thresholds.ddp.nproc == 2


def test_dtype_names():
    assert normalize_dtype("torch.bfloat16") == "bf16"
    assert normalize_dtype("float16") == "fp16"
    assert normalize_dtype("torch.int64") is None
    assert looser("fp32", "bf16") == "bf16"
    assert looser(None, None) == "fp32"


def test_malformed_thresholds(tmp_path):
    text = THRESHOLDS_FILE.read_text(encoding="utf-8").replace("cosine_min: 0.9\n", "cosine_min: high\n")
    bad = tmp_path / "t.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"hard\.cosine_min: expected int or float, got str"):
        load_thresholds(bad)
    bad.write_text(THRESHOLDS_FILE.read_text(encoding="utf-8").replace("  fp16:\n    cosine_min", "  fp8:\n    cosine_min"),
                   encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"outputs\.fp16: missing required key"):
        load_thresholds(bad)
