"""Fixtures for the chain tests."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for chainhelpers

from chainhelpers import REPO, am, copy_project  # noqa: E402


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A temporary HOME: the skill goes to ~/.kernelcat/skills/<model> inside it."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    return h


def _manual_edits():
    """The edits examples/cifar_trainer/README.md tells a person to make after the agnostic port."""
    spec = importlib.util.spec_from_file_location("example_e2e", REPO / "tests" / "validate" / "test_example_e2e.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._apply_manual_edits


@pytest.fixture(scope="session")
def validated_example(tmp_path_factory) -> Path:
    """The bundled example ported as its README says, built once for the chain tests that start
    from it: `unported-checkout/` (the example as checked out), `ported/` (`migrate --style
    agnostic --output`, then the manual edits) validated on CPU against `golden.pt`, captured
    from the original. Each test module works on its own copy (`chainhelpers.copy_validated`);
    nothing changes this one."""
    base = tmp_path_factory.mktemp("validated-example")
    original = copy_project(REPO / "examples" / "cifar_trainer", base / "unported-checkout")
    ported = base / "ported"
    res = am("migrate", original, "--style", "agnostic", "--output", ported)
    assert res.exit_code == 0, res.output
    _manual_edits()(ported)
    golden = base / "golden.pt"
    res = am("validate", "capture", "train.py:validation_entry", "--root", original, "-o", golden)
    assert res.exit_code == 0, res.output
    res = am("validate", ported, "--device", "cpu", "--golden", golden, "--no-ddp")
    assert res.exit_code == 0, res.output
    return base
