"""Fixes chosen for an older torch floor (`--min-torch` below 2.6) must compose in one pass: the
helper and device-module fallbacks they write are never matched again by a second pass."""
from pathlib import Path

import pytest

from ascend_migrate.fix.api import migrate
from ascend_migrate.fix.rewrite import Options, rewrite_python, verify
from ascend_migrate.knowledge.base import load_knowledge

REPO = Path(__file__).resolve().parents[2]
CHARLM = REPO / "tests" / "fixtures" / "chain" / "charlm"
FLOORS = ["2.0", "2.3", "2.4", "2.5", "2.6"]

# CUDA queries nested inside other fixable device idioms.
_NESTED = [
    'dev = torch.device("cuda", torch.cuda.current_device())',
    'dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")',
    'name = f"cuda:{torch.cuda.current_device()}"',
    "used = torch.cuda.memory_allocated(torch.cuda.current_device())",
    "with torch.cuda.device(torch.cuda.current_device()):\n    pass",
    "x = t.cuda(torch.cuda.current_device())",
    "if torch.cuda.is_available() and torch.cuda.device_count() > 1:\n    pass",
    "torch.cuda.synchronize(torch.cuda.current_device())",
]


@pytest.mark.parametrize("floor", FLOORS)
@pytest.mark.parametrize("snippet", _NESTED)
def test_nested_fix_at_older_floor_is_stable(floor, snippet):
    kb = load_knowledge()
    opts = Options(style="agnostic", min_torch=floor)
    source = "import torch\n" + snippet + "\n"
    once = rewrite_python(kb, "m.py", source, opts)
    if floor >= "2.4":  # torch.get_device_module exists from 2.4 on
        assert once.changes
    assert verify(kb, "m.py", once.text, opts, old_text=source) == ""


@pytest.mark.parametrize("floor", FLOORS)
def test_trainer_with_auto_device_migrates_at_every_floor(tmp_path, floor):
    out = tmp_path / "port"
    result = migrate(CHARLM, style="agnostic", output=out, min_torch=floor)
    assert not result.errors, result.errors
    trainer = (out / "charlm" / "trainer.py").read_text()
    assert ("torch.cuda.is_available()" not in trainer) == (floor >= "2.4")
    assert [f.path for f in migrate(out, style="agnostic", min_torch=floor).files if f.new is not None] == []
