"""The device layer of `check`: run the probe in the target interpreter, run npu-smi, read
the CANN tree. Small on purpose; every decision is made in stages.py."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Mapping, Optional, Sequence

from ascend_migrate.check.cann import DEFAULT_ASCEND_ROOT, find_cann
from ascend_migrate.check.compat import default_compat
from ascend_migrate.check.model import Report
from ascend_migrate.check.parsers import parse_device
from ascend_migrate.check.stages import Facts, NpuSmiRun, ProbeRun, build_report

PROBE = Path(__file__).resolve().parent / "_probe.py"
NPU_SMI_CANDIDATES = ("/usr/local/sbin/npu-smi", "/usr/local/bin/npu-smi", "/usr/bin/npu-smi")


def _run(cmd: Sequence[str], env: Mapping[str, str], timeout: float) -> tuple[Optional[int], str, str, bool, float]:
    """Run a command in its own process group; kill the whole group on timeout."""
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(env), start_new_session=True,
        )
    except OSError as exc:
        return None, "", f"cannot run {cmd[0]}: {exc.strerror or exc}", False, 0.0
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        out, err = proc.communicate()
        timed_out = True
    return (None if timed_out else proc.returncode), out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), timed_out, time.monotonic() - t0


def run_probe(python: str, args: Sequence[str], env: Mapping[str, str], timeout: float) -> ProbeRun:
    rc, out, err, timed_out, secs = _run([python, str(PROBE), *args], env, timeout)
    run = ProbeRun(returncode=rc, stderr=err, timed_out=timed_out, seconds=secs)
    if rc is None and not timed_out:
        run.error = err
        return run
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and "step" in rec:
            run.steps[rec.pop("step")] = rec
    return run


def find_npu_smi(explicit: Optional[str], env: Mapping[str, str]) -> Optional[str]:
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    found = shutil.which("npu-smi", path=env.get("PATH"))
    if found:
        return found
    return next((p for p in NPU_SMI_CANDIDATES if os.access(p, os.X_OK)), None)


def run_npu_smi(path: Optional[str], env: Mapping[str, str], timeout: float = 15.0) -> NpuSmiRun:
    if path is None:
        return NpuSmiRun()
    rc, out, err, timed_out, _ = _run([path, "info"], env, timeout)
    return NpuSmiRun(path=path, returncode=rc, stdout=out, stderr=err, timed_out=timed_out)


def collect(
    device: str,
    python: str = sys.executable,
    env: Optional[Mapping[str, str]] = None,
    timeout: float = 180.0,
    hccl: bool = False,
    cann_root: Optional[Path] = None,
    npu_smi: Optional[str] = None,
    default_roots: Sequence[Path] = (DEFAULT_ASCEND_ROOT,),
) -> Facts:
    kind, index = parse_device(device)
    env = dict(os.environ if env is None else env)
    compat = default_compat()
    facts = Facts(device_kind=kind, device_index=index, python=python, env=env, compat=compat, want_hccl=hccl)
    deps = json.dumps([{"name": d.name, "module": d.module} for d in compat.runtime_deps])
    with ThreadPoolExecutor(max_workers=3) as pool:
        info_f = pool.submit(run_probe, python, ["info", deps], env, 60.0)
        dev_f = pool.submit(run_probe, python, ["device", device], env, timeout)
        smi_f = pool.submit(run_npu_smi, find_npu_smi(npu_smi, env), env)
        facts.cann = find_cann(env, cann_root, default_roots)
        info = info_f.result()
        facts.probe = dev_f.result()
        facts.npu_smi = smi_f.result()
    if "info" in info.steps:
        facts.info = info.steps["info"]
    else:
        facts.info_error = info.ended_badly() or info.error or info.stderr.strip()[-500:] or "no output"
    step = facts.probe.steps.get("import_torch") or {}
    if not step.get("ok", True) and "Failed to load the backend extension" in step.get("error", ""):
        facts.probe_noauto = run_probe(python, ["device", device], {**env, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}, timeout)
    if hccl:
        dev_run = facts.probe_noauto or facts.probe
        if (dev_run.steps.get("devices") or {}).get("ok"):
            hccl_env = dict(env)
            if facts.probe_noauto is not None:
                hccl_env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
            facts.hccl = run_probe(python, ["hccl", device], hccl_env, timeout)
    return facts


def run_check(device: str, vllm: bool = False, **kwargs) -> Report:
    t0 = time.monotonic()
    facts = collect(device, **kwargs)
    report = build_report(facts, elapsed=time.monotonic() - t0)
    if vllm:
        from ascend_migrate.check.vllm_stage import vllm_stages

        info = facts.info or {}
        stages = vllm_stages(info.get("dists") or {}, info.get("vllm_platform_plugins") or [])
        report.stages.extend(stages)
        failed = [s.id for s in stages if s.status == "fail"]
        if failed:
            report.summary = (report.summary.replace("all checks passed", "the NPU checks passed")
                              + f" vLLM serving is not ready: {', '.join(failed)} failed.")
    return report
