"""Fixtures for the chain tests."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for chainhelpers


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A temporary HOME: the skill goes to ~/.kernelcat/skills/<model> inside it."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    return h
