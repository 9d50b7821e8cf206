"""Two processes that need the emulated npu at once (two ranks of one run): one compiles while
the other waits on the folder's lock, then both load the same build.

This is the one test that compiles the device from scratch (30 to 50 s on 2 cores); every
other test uses the session's build (tests/standin/conftest.py)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ascend_migrate.emulated_npu import build as emu
from emulated_npu.support import child_env, require_buildable

pytestmark = pytest.mark.needs_torch

RANK = """
import json, os, time
started = time.monotonic()
import torch
import torch_npu
x = torch.ones(2, device="npu") * 3
print(json.dumps({"pid": os.getpid(), "device": str(x.device), "sum": x.sum().item(),
                  "emulated": torch_npu.__emulated__, "seconds": time.monotonic() - started}))
"""


def test_two_processes_starting_together_build_once_and_both_load(tmp_path):
    require_buildable()
    folder = tmp_path / "build"
    env = emu.emulated_env(child_env(tmp_path, **{emu.BUILD_DIR_ENV: str(folder)}))
    ranks = [subprocess.Popen([sys.executable, "-W", "ignore", "-c", RANK], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [rank.communicate(timeout=900) for rank in ranks]
    for rank, (out, err) in zip(ranks, outs):
        assert rank.returncode == 0, err[-3000:]
    got = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert all(g["device"] == "npu:0" and g["sum"] == 6.0 and g["emulated"] is True for g in got)

    compiles = (folder / emu.BUILD_LOG).read_text(encoding="utf-8").splitlines()
    assert len(compiles) == 1, compiles  # one compile for both
    marker = emu.read_marker(folder)
    builder = [g for g in got if g["pid"] == marker["pid"]]
    waiter = [g for g in got if g["pid"] != marker["pid"]]
    assert len(builder) == 1 and len(waiter) == 1 and f"pid {marker['pid']} compiled" in compiles[0]
    # the other rank was held at the lock while the compile ran, then loaded what it produced
    assert waiter[0]["seconds"] > marker["seconds"] / 2
    assert not (folder / "lock").exists()  # torch's own build baton is gone
