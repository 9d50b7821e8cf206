"""`ascend-migrate check` end to end on this machine (no NPU), plus the script wrapper."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIX = REPO / "tests" / "fixtures" / "check"
CLI = [sys.executable, "-m", "ascend_migrate"]


def run(args, env=None, timeout=120):
    return subprocess.run(CLI + args, capture_output=True, text=True, env=env, timeout=timeout, cwd=REPO)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_") and k != "LD_LIBRARY_PATH"}
    env.update(extra)
    return env


@pytest.mark.needs_torch
def test_cpu_passes_end_to_end_with_matmul():
    t0 = time.monotonic()
    res = run(["check", "--device", "cpu", "--json"], env=clean_env())
    elapsed = time.monotonic() - t0
    assert res.returncode == 0, res.stdout + res.stderr
    rep = json.loads(res.stdout)
    st = {s["id"]: s for s in rep["stages"]}
    assert rep["schema_version"] == 1 and rep["verdict"] in ("ok", "warn")
    assert st["matmul"]["status"] == "ok" and st["matmul"]["details"]["rel_err"] < 1e-3
    assert st["tensor_op"]["status"] == "ok" and st["bf16"]["status"] == "ok"
    assert st["import_torch"]["status"] == "ok"
    assert elapsed < 30


def test_npu_on_machine_without_npu_says_so_plainly():
    res = run(["check", "--device", "npu:0"], env=clean_env())
    assert res.returncode == 1
    assert "No NPU stack is present on this machine" in res.stdout
    assert "Traceback" not in res.stdout + res.stderr
    assert "torch_npu is not installed" in res.stdout


@pytest.mark.needs_torch
def test_hccl_gloo_on_cpu():
    res = run(["check", "--device", "cpu", "--hccl", "--json", "--timeout", "90"], env=clean_env())
    st = {s["id"]: s for s in json.loads(res.stdout)["stages"]}
    assert st["hccl"]["status"] == "ok", st["hccl"]
    assert st["hccl"]["details"]["values"] == [3.0, 3.0]


@pytest.mark.parametrize("args", [["check", "--device", "gpu:0"], ["check", "--python", "/no/such/python"], ["check", "--timeout", "0"]])
def test_usage_errors_exit_2(args):
    res = run(args)
    assert res.returncode == 2 and "Error" in res.stderr


@pytest.mark.needs_torch
def test_script_runs_from_checkout_without_install(tmp_path):
    env = clean_env(PYTHONPATH="")
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "check_npu_basics.py"), "--device", "cpu"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "matmul vs CPU" in res.stdout and "cpu is ready" in res.stdout


def _sourced_env(set_env: Path) -> dict:
    out = subprocess.run(["bash", "-c", f'source "{set_env}" && env -0'], capture_output=True, env=clean_env(), check=True).stdout
    return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


def test_fixture_cann_tree_sourced_and_fake_npu_smi(tmp_path):
    root = FIX / "cann" / "cann_8.0.RC3" / "Ascend"
    env = _sourced_env(root / "ascend-toolkit" / "set_env.sh")
    smi = tmp_path / "npu-smi"
    smi.write_text(f"#!/bin/sh\ncat '{FIX / 'npu_smi' / '910b3_idle.txt'}'\n")
    smi.chmod(0o755)
    res = run(["check", "--device", "cpu", "--json", "--npu-smi", str(smi)], env=env)
    st = {s["id"]: s for s in json.loads(res.stdout)["stages"]}
    assert st["cann"]["status"] == "ok" and "CANN 8.0.RC3" in st["cann"]["found"], st["cann"]
    assert st["cann"]["details"]["found_via"] == "ASCEND_HOME_PATH"
    assert st["set_env"]["status"] == "ok", st["set_env"]
    assert st["driver"]["status"] == "ok" and "2 NPU(s) [910B3]" in st["driver"]["found"]


def test_unsourced_fixture_cann_found_but_env_missing(tmp_path):
    res = run(["check", "--device", "npu:0", "--json", "--cann-root", str(FIX / "cann" / "cann_8.1.RC1_x86" / "Ascend")], env=clean_env())
    rep = json.loads(res.stdout)
    st = {s["id"]: s for s in rep["stages"]}
    assert st["cann"]["details"]["version"] == "8.1.RC1"
    assert st["set_env"]["status"] == "fail"
    assert "cann_8.1.RC1_x86/Ascend/ascend-toolkit/set_env.sh" in st["set_env"]["fix"]
    assert not rep["no_npu_stack"]


def test_help_explains():
    res = run(["check", "--help"])
    assert res.returncode == 0
    for word in ("--device", "--json", "--hccl", "--python", "Exit status", "schema_version"):
        assert word in res.stdout
