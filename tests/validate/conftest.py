from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for vhelpers


@pytest.fixture
def thresholds():
    from ascend_migrate.validate.thresholds import load_thresholds

    return load_thresholds()
