"""The harness tests' helpers live in harness_runs.py, next to this file."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for harness_runs


@pytest.fixture(scope="module")
def module_tmp(tmp_path_factory, request):
    """One folder per test module: its commands run once and several tests read them."""
    return tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])
