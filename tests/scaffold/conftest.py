from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for shelpers

_names = itertools.count()


def pytest_configure(config):
    config.addinivalue_line("markers", "torchrun: launches torchrun with two processes (about 30 s on 2 cores)")


@pytest.fixture(scope="session")
def scaffold_dir(tmp_path_factory) -> Path:
    from ascend_migrate.scaffold import write_scaffold

    directory = tmp_path_factory.mktemp("scaffold") / "project"
    write_scaffold("training", directory)
    return directory


@pytest.fixture(scope="session")
def train_mod(scaffold_dir):
    """The generated train.py, imported as a module."""
    path = scaffold_dir / "train.py"
    spec = importlib.util.spec_from_file_location(f"scaffold_train_{next(_names)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tiny_cfg(train_mod, scaffold_dir):
    """The shipped config.yaml, shrunk so a run takes well under a second."""
    def make(*overrides: str):
        base = ["data.num_samples=256", "data.micro_batch_size=16", "train.max_steps=8",
                "schedule.warmup_steps=2", "checkpoint.output_dir=null"]
        return train_mod.load_config(scaffold_dir / "config.yaml", base + list(overrides))
    return make
