"""The real torch-npu 2.13.0 wheel beside torch 2.13.0 (CPU), with no CANN on this machine.

Its import fails exactly as on an Ascend host where set_env.sh was not sourced; the checker
must turn that into the diagnosis, not a traceback.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# The pinned torch has wheels only for the Python the main pass runs on; on the oldest
# supported Python (no torch there) the venv cannot be built, so the test is skipped, not failed.
pytestmark = pytest.mark.needs_torch


def check(python, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_") and k != "LD_LIBRARY_PATH" and k != "TORCH_DEVICE_BACKEND_AUTOLOAD"}
    res = subprocess.run([sys.executable, "-m", "ascend_migrate", "check", "--python", str(python), "--json", *args],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    return res.returncode, json.loads(res.stdout)


def test_npu_diagnosis_from_the_real_import_error(torch_npu_venv):
    rc, rep = check(torch_npu_venv, "--device", "npu:0")
    st = {s["id"]: s for s in rep["stages"]}
    assert rc == 1 and not rep["no_npu_stack"]
    assert st["torch_npu"]["status"] == "ok" and st["torch_npu"]["details"]["requires_torch"] == "2.13.0"
    imp = st["import_torch_npu"]
    assert imp["status"] == "fail" and imp["diagnosis"] == "cann-libhccl-missing"
    assert "libhccl.so: cannot open shared object file" in imp["found"]
    assert "set_env.sh" in imp["fix"] and "Traceback" not in imp["found"] + imp["cause"] + imp["fix"]
    # plain `import torch` is broken too, through the backend autoload
    auto = st["import_torch"]
    assert auto["status"] == "fail" and auto["diagnosis"] == "cann-libhccl-missing"
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in auto["fix"]


def test_cpu_checks_still_run_with_autoload_off(torch_npu_venv):
    rc, rep = check(torch_npu_venv, "--device", "cpu")
    st = {s["id"]: s for s in rep["stages"]}
    assert st["import_torch"]["status"] == "fail"  # the user's `import torch` really fails
    assert st["matmul"]["status"] == "ok" and st["tensor_op"]["status"] == "ok"
    assert rc == 1
