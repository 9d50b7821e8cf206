import json
import subprocess
import sys
from pathlib import Path

from ascend_migrate.diagnose.render import render_reference

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "tests" / "fixtures" / "check" / "logs"


def run(args, stdin=None):
    return subprocess.run([sys.executable, "-m", "ascend_migrate", "diagnose", *args], input=stdin,
                          capture_output=True, text=True, cwd=REPO, timeout=60)


def test_file_human_output():
    res = run([str(LOGS / "import_without_cann.log")])
    assert res.returncode == 0
    assert "* [cann-libhccl-missing]" in res.stdout and "fix:" in res.stdout and "line 17:" in res.stdout


def test_stdin_json():
    res = run(["-", "--json"], stdin=(LOGS / "ddp_hccl_timeout.log").read_text())
    rep = json.loads(res.stdout)
    assert res.returncode == 0 and rep["source"] == "<stdin>" and rep["primary"] == "npu-out-of-memory"
    assert len(rep["matches"]) >= 5


def test_min_confidence_and_no_match_exit_1():
    res = run(["-", "--min-confidence", "high"], stdin="ModuleNotFoundError: No module named 'mypkg.layers'\n")
    assert res.returncode == 1 and "no known Ascend failure" in res.stdout
    res = run(["-"], stdin="ModuleNotFoundError: No module named 'mypkg.layers'\n")
    assert res.returncode == 0 and "module-not-found-project" in res.stdout


def test_usage_errors(tmp_path):
    assert run([str(tmp_path / "missing.log")]).returncode == 2
    assert run([str(tmp_path)]).returncode == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("signatures: 3\n")
    res = run(["--kb", str(bad), "-"], stdin="x")
    assert res.returncode == 2 and "signatures: missing or not a list" in res.stderr


def test_list_and_script_wrapper(tmp_path):
    res = run(["--list"])
    assert res.returncode == 0 and len(res.stdout.splitlines()) >= 30
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "diagnose_npu_error.py"), str(LOGS / "training_mixed.log"), "--json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert res.returncode == 0 and json.loads(res.stdout)["primary"] == "dtype-mismatch"


def test_binary_garbage_is_not_a_crash(tmp_path):
    p = tmp_path / "core.log"
    p.write_bytes(b"\xff\xfe\x00garbage\nNPU out of memory. Tried to allocate\n")
    res = run([str(p), "--json"])
    assert res.returncode == 0 and json.loads(res.stdout)["primary"] == "npu-out-of-memory"


def test_generated_reference_is_current():
    text = render_reference()
    assert (REPO / "references" / "troubleshooting.md").read_text() == text
    assert "`cann-libhccl-missing`" in text and "| 200 | HCCL |" in text
