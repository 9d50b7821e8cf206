"""Stage logic on hand-written facts: no subprocess, no device."""
import pytest

from ascend_migrate.check.cann import CannInstall
from ascend_migrate.check.stages import Facts, NpuSmiRun, ProbeRun, build_report
from pathlib import Path

SMI = Path(__file__).resolve().parents[1] / "fixtures" / "check" / "npu_smi"
DEPS = ["decorator", "attr", "psutil", "absl", "cloudpickle", "ml_dtypes", "scipy", "tornado", "yaml", "sympy"]
LIBHCCL = "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n    import torch_npu._C\nImportError: libhccl.so: cannot open shared object file: No such file or directory\n"


def info(**dists):
    base = {"torch": "2.6.0+cpu", "torch_npu": "2.6.0.post3", "numpy": "1.26.4"}
    base.update(dists)
    return {"python": "3.10.14", "implementation": "CPython", "machine": "aarch64", "executable": "/usr/bin/python3",
            "dists": base, "modules": {m: True for m in DEPS}, "torch_npu_requires": ["torch==2.6.0.*", "numpy", "pyyaml"]}


def healthy_probe():
    return ProbeRun(steps={
        "import_torch": {"ok": True, "version": "2.6.0+cpu", "cuda": None, "seconds": 1.2},
        "import_torch_npu": {"ok": True, "version": "2.6.0.post3", "cann": "8.3.RC1", "seconds": 2.0},
        "devices": {"ok": True, "available": True, "count": 2, "index": 0, "visible": None},
        "tensor_op": {"ok": True, "got": 16777216.0, "expected": 16777216.0, "device_props": {"name": "Ascend910B3"}},
        "matmul": {"ok": True, "rel_err": 3e-7, "max_abs_err": 2e-5, "tolerance": 1e-3},
        "bf16": {"ok": True, "supported": True, "rel_err": 3e-3, "tolerance": 2e-2},
    })


def cann(version="8.3.RC1"):
    return CannInstall(home=Path("/usr/local/Ascend/ascend-toolkit/latest"), found_via="ASCEND_HOME_PATH", version=version,
                       version_source="x/ascend_toolkit_install.info", set_env=Path("/opt/Ascend/ascend-toolkit/set_env.sh"),
                       driver_version="24.1.rc2")


SOURCED_ENV = {"ASCEND_HOME_PATH": "/h", "ASCEND_OPP_PATH": "/h/opp", "LD_LIBRARY_PATH": "/h/lib64:/d/lib64"}
EXISTING = {"/h", "/h/opp", "/h/runtime", "/h/compiler", "/h/lib64/libascendcl.so", "/h/lib64/libhccl.so"}


def facts(**kw):
    base = dict(device_kind="npu", device_index=0, python="/usr/bin/python3", env=dict(SOURCED_ENV), info=info(),
                cann=cann(), npu_smi=NpuSmiRun(path="/usr/local/sbin/npu-smi", returncode=0, stdout=(SMI / "910b3_idle.txt").read_text()),
                probe=healthy_probe(), path_exists=lambda p: p in EXISTING)
    base.update(kw)
    return Facts(**base)


def statuses(report):
    return {s.id: s.status for s in report.stages}


def test_healthy_npu_host_all_ok():
    r = build_report(facts())
    st = statuses(r)
    assert all(v == "ok" for k, v in st.items() if k != "hccl"), st
    assert st["hccl"] == "skip" and r.exit_code == 0 and r.verdict == "ok"
    assert "npu:0 is ready" in r.summary


def test_torch_torch_npu_mismatch_fails():
    r = build_report(facts(info=info(torch="2.5.1")))
    s = r.stage("torch_npu")
    assert s.status == "fail" and "requires torch==2.6.0" in s.found and "pip install torch==2.6.0" in s.fix


def test_cuda_torch_build_fails_on_npu():
    p = healthy_probe()
    p.steps["import_torch"]["cuda"] = "12.1"
    r = build_report(facts(probe=p, info=info(torch="2.6.0")))
    assert r.stage("torch").status == "fail" and "CUDA" in r.stage("torch").cause


def test_unlisted_cann_pair_warns_with_the_listed_pairs():
    r = build_report(facts(cann=cann("8.0.RC3")))
    s = r.stage("cann")
    assert s.status == "warn" and "2.4.0" in s.cause and "8.3.RC1" in s.fix


def test_missing_runtime_deps():
    i = info()
    i["modules"]["decorator"] = False
    i["modules"]["ml_dtypes"] = False
    s = build_report(facts(info=i)).stage("runtime_deps")
    assert s.status == "fail" and s.details["missing"] == ["decorator", "ml-dtypes"]
    assert "pip install decorator ml-dtypes" in s.fix


@pytest.mark.parametrize("torch_v, cann_v, status", [("2.1.0+cpu", "8.3.RC1", "fail"), ("2.6.0+cpu", "8.0.RC3", "fail"), ("2.6.0+cpu", "8.3.RC1", "ok")])
def test_numpy2_caveat(torch_v, cann_v, status):
    s = build_report(facts(info=info(numpy="2.1.0", torch=torch_v), cann=cann(cann_v))).stage("numpy")
    assert s.status == status
    if status == "fail":
        assert "numpy==1.26.4" in s.fix


def test_set_env_not_sourced_points_at_detected_script():
    s = build_report(facts(env={})).stage("set_env")
    assert s.status == "fail"
    assert "ASCEND_HOME_PATH is not set" in s.found and "libhccl.so not in any LD_LIBRARY_PATH" in s.found
    assert s.fix.startswith("source /opt/Ascend/ascend-toolkit/set_env.sh")


def test_set_env_partial_install():
    s = build_report(facts(path_exists=lambda p: p in EXISTING - {"/h/compiler"})).stage("set_env")
    assert s.status == "fail" and "/h/compiler missing" in s.found


def test_import_failure_classified_with_host_set_env():
    p = ProbeRun(steps={"import_torch": {"ok": True, "version": "2.6.0+cpu"}, "import_torch_npu": {"ok": False, "error": LIBHCCL}}, returncode=0)
    r = build_report(facts(probe=p))
    s = r.stage("import_torch_npu")
    assert s.status == "fail" and s.diagnosis == "cann-libhccl-missing"
    assert "source /opt/Ascend/ascend-toolkit/set_env.sh" in s.fix
    assert statuses(r)["devices"] == "skip" and statuses(r)["matmul"] == "skip"


def test_import_hang_and_crash():
    hung = ProbeRun(steps={"import_torch": {"ok": True}}, returncode=None, timed_out=True, seconds=180)
    s = build_report(facts(probe=hung)).stage("import_torch_npu")
    assert s.status == "fail" and "timed out after 180s" in s.found
    crashed = ProbeRun(steps={"import_torch": {"ok": True}}, returncode=-11, stderr="Segmentation fault")
    assert "SIGSEGV" in build_report(facts(probe=crashed)).stage("import_torch_npu").found


def test_device_step_hang_names_the_step():
    p = healthy_probe()
    for k in ("tensor_op", "matmul", "bf16"):
        del p.steps[k]
    p.timed_out, p.returncode, p.seconds = True, None, 60
    r = build_report(facts(probe=p))
    s = r.stage("tensor_op")
    assert s.status == "fail" and "during tensor op (after devices)" in s.found
    assert r.stage("matmul").status == "fail"


def test_matmul_out_of_tolerance():
    p = healthy_probe()
    p.steps["matmul"] = {"ok": False, "rel_err": 0.2, "max_abs_err": 9.0, "tolerance": 1e-3}
    s = build_report(facts(probe=p)).stage("matmul")
    assert s.status == "fail" and "2.00e-01" in s.found


def test_bf16_unsupported_is_a_warning():
    p = healthy_probe()
    p.steps["bf16"] = {"ok": False, "supported": False}
    r = build_report(facts(probe=p))
    assert r.stage("bf16").status == "warn" and r.exit_code == 0


def test_visible_devices_garbled():
    s = build_report(facts(env={**SOURCED_ENV, "ASCEND_RT_VISIBLE_DEVICES": "0;1"})).stage("devices")
    assert s.status == "fail" and "not a device number" in s.found


def test_device_index_out_of_range():
    s = build_report(facts(device_index=5)).stage("devices")
    assert s.status == "fail" and "outside 0..1" in s.cause


def test_driver_busy_and_unhealthy():
    busy = NpuSmiRun(path="/x/npu-smi", returncode=0, stdout=(SMI / "910b4_busy.txt").read_text())
    s = build_report(facts(npu_smi=busy)).stage("driver")
    assert s.status == "fail" and "NPU 1 chip 0 = Warning" in s.found
    healthy_busy = busy.stdout.replace("Warning ", "OK      ")
    s = build_report(facts(npu_smi=NpuSmiRun(path="/x", returncode=0, stdout=healthy_busy))).stage("driver")
    assert s.status == "warn" and "python3[4321] 27400 MB" in s.found and "30212/32768" in s.found


def test_driver_errors():
    used = NpuSmiRun(path="/x", returncode=255, stdout="", stderr=(SMI / "device_used.txt").read_text())
    s = build_report(facts(npu_smi=used)).stage("driver")
    assert s.status == "fail" and "Another process or container holds the device" in s.cause
    hung = NpuSmiRun(path="/x", timed_out=True)
    assert "did not answer" in build_report(facts(npu_smi=hung)).stage("driver").found
    missing = build_report(facts(npu_smi=NpuSmiRun())).stage("driver")
    assert missing.status == "fail" and "npu-smi not found" in missing.found


def test_no_npu_stack_verdict():
    r = build_report(facts(info=info(torch_npu=None), cann=CannInstall(searched=["/usr/local/Ascend"]), npu_smi=NpuSmiRun(), env={},
                           probe=ProbeRun(steps={"import_torch": {"ok": True}, "import_torch_npu": {"ok": False, "error": "ModuleNotFoundError: No module named 'torch_npu'\n"}})))
    assert r.no_npu_stack and r.exit_code == 1
    assert r.summary.startswith("No NPU stack is present on this machine")


def test_cpu_device_skips_npu_stages():
    p = healthy_probe()
    del p.steps["import_torch_npu"]
    r = build_report(facts(device_kind="cpu", info=info(torch_npu=None), cann=CannInstall(), npu_smi=NpuSmiRun(), env={}, probe=p))
    st = statuses(r)
    assert [st[k] for k in ("torch_npu", "cann", "set_env", "driver", "import_torch_npu")] == ["skip"] * 5
    assert st["matmul"] == "ok" and r.exit_code == 0 and not r.no_npu_stack


def test_interpreter_did_not_run():
    r = build_report(facts(info=None, info_error="cannot run /nope", probe=ProbeRun(error="cannot run /nope")))
    assert r.stage("python").status == "fail" and r.exit_code == 1


def test_report_json_shape():
    d = build_report(facts()).to_dict()
    assert d["schema_version"] == 1 and d["verdict"] == "ok"
    assert [s["id"] for s in d["stages"]][:3] == ["python", "torch", "torch_npu"]
    assert set(d["stages"][0]) == {"id", "title", "status", "found", "cause", "fix", "diagnosis", "details"}
