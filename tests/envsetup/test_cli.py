import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "tests" / "fixtures" / "check" / "cann" / "cann_8.0.RC3" / "Ascend"


def run(args, env=None, cwd=REPO):
    env = env or {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    return subprocess.run([sys.executable, "-m", "ascend_migrate", "env", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def test_prints_script_with_detected_set_env():
    res = run(["--cann-root", str(ROOT), "--devices", "2,3"])
    assert res.returncode == 0
    assert f"am_set_env={ROOT}/ascend-toolkit/set_env.sh" in res.stdout
    assert "# CANN 8.0.RC3 detected" in res.stdout and "export ASCEND_RT_VISIBLE_DEVICES=2,3" in res.stdout
    assert "numpy==1.26.4" in res.stdout  # CANN 8.0.RC3 needs the pin


def test_writes_file_and_rc_only_when_asked(tmp_path):
    out, rc = tmp_path / "npu_env.sh", tmp_path / "bashrc"
    rc.write_text("alias ll='ls -l'\n")
    res = run(["--cann-root", str(ROOT), "-o", str(out)])
    assert res.returncode == 0 and out.exists() and os.access(out, os.X_OK)
    assert rc.read_text() == "alias ll='ls -l'\n"
    for _ in range(2):
        assert run(["--cann-root", str(ROOT), "-o", str(out), "--rc-file", str(rc)]).returncode == 0
    assert rc.read_text().count(str(out)) == 2  # one block: the test and the source line


def test_torch_npu_pins_and_usage_errors(tmp_path):
    res = run(["--torch-npu", "2.6.0.post3"])
    assert " torch==2.6.0 torch-npu==2.6.0.post3 " in res.stdout
    assert run(["--devices", "a,b"]).returncode == 2
    assert run(["--rc-file", str(tmp_path / "rc")]).returncode == 2
    assert run(["--pip-index", "not-a-url"]).returncode == 2


def test_install_uses_given_python(tmp_path):
    log = tmp_path / "args"
    fake = tmp_path / "py"
    fake.write_text(f'#!/bin/sh\necho "$@" > "{log}"\n')
    fake.chmod(0o755)
    res = run(["--install", "--python", str(fake), "--pip-index", "tsinghua"])
    assert res.returncode == 0, res.stderr
    assert log.read_text().startswith("-m pip install --index-url https://pypi.tuna.tsinghua.edu.cn/simple/ ")
    fake.write_text("#!/bin/sh\nexit 3\n")
    assert run(["--install", "--python", str(fake)]).returncode == 1


def test_script_wrapper(tmp_path):
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "setup_npu_env.py"), "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0 and "--install" in res.stdout and "--rc-file" in res.stdout
