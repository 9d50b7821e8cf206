"""The distributed smoke run: the project's train entry under torchrun with two processes.

Loopback only (MASTER_ADDR=127.0.0.1, a free port), gloo on CPU (hccl on NPU, nccl on CUDA:
the entry picks the backend), a bounded timeout; both ranks must finish and hold the same
parameters.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.validate.thresholds import DdpSettings

_SRC_DIR = str(Path(__file__).resolve().parents[2])  # .../src, for checkouts run without install


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _loopback_ifname() -> Optional[str]:
    try:
        names = [n for _, n in socket.if_nameindex()]
    except (OSError, AttributeError):
        return None
    for cand in ("lo", "lo0"):
        if cand in names:
            return cand
    return None


@dataclass
class DdpResult:
    status: str  # pass | fail
    summary: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    ranks: list[dict[str, Any]] = field(default_factory=list)
    duration_s: float = 0.0


def _tail(text: str, n: int = 1500) -> str:
    return text[-n:] if len(text) > n else text


def run_ddp_smoke(
    entry: str,
    root: Path | str,
    device: str,
    settings: DdpSettings,
    seed: int = 0,
    steps: Optional[int] = None,
    timeout_s: Optional[float] = None,
) -> DdpResult:
    root = Path(root).resolve()
    nproc = settings.nproc
    steps = steps or settings.steps
    timeout_s = timeout_s or settings.timeout_s
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ascend-migrate-ddp-") as out:
        port = free_port()
        cmd = [
            sys.executable, "-m", "torch.distributed.run",
            "--nnodes=1", f"--nproc-per-node={nproc}",
            "--master-addr=127.0.0.1", f"--master-port={port}",
            "--max-restarts=0", "--monitor-interval=0.5",
            "-m", "ascend_migrate.validate.ddp_worker",
            "--entry", entry, "--root", str(root), "--device", device,
            "--steps", str(steps), "--seed", str(seed), "--out", out,
        ]
        env = dict(os.environ)
        env.update({
            "MASTER_ADDR": "127.0.0.1",
            "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS", "1"),
            "PYTHONPATH": os.pathsep.join(p for p in (_SRC_DIR, env.get("PYTHONPATH", "")) if p),
            "PYTHONUNBUFFERED": "1",
        })
        ifname = _loopback_ifname()
        if ifname and "GLOO_SOCKET_IFNAME" not in env:
            env["GLOO_SOCKET_IFNAME"] = ifname
        command_ev = {"message": "command", "command": " ".join(cmd[:9]) + " ...", "port": port}
        proc = subprocess.Popen(cmd, cwd=str(root), env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            log, _ = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                proc.kill()
            log, _ = proc.communicate()
            return DdpResult("fail", f"torchrun did not finish within {timeout_s:g} s",
                             [command_ev, {"message": "log tail", "log": _tail(log or "")}],
                             duration_s=time.monotonic() - started)
        ranks = []
        for r in range(nproc):
            path = Path(out) / f"rank{r}.json"
            if path.is_file():
                try:
                    ranks.append(json.loads(path.read_text(encoding="utf-8")))
                except ValueError:
                    ranks.append({"rank": r, "ok": False, "error": "unreadable rank report"})
            else:
                ranks.append({"rank": r, "ok": False, "error": "no rank report (process died?)"})
    result = judge_ranks(ranks, settings, nproc)
    result.duration_s = time.monotonic() - started
    result.evidence.insert(0, command_ev)
    if proc.returncode != 0 and result.status == "pass":
        result.status = "fail"
        result.summary = f"torchrun exited with {proc.returncode}"
    if result.status != "pass":
        result.evidence.append({"message": "log tail", "log": _tail(log or "")})
    return result


def judge_ranks(ranks: list[dict[str, Any]], settings: DdpSettings, nproc: int) -> DdpResult:
    """Both ranks finished, ran distributed with the full world, and hold the same parameters."""
    evidence = []
    for rec in ranks:
        ev = {"message": f"rank {rec.get('rank')}: " + ("finished" if rec.get("ok") else f"failed: {rec.get('error')}"),
              "rank": rec.get("rank"), "device": rec.get("device"), "losses": rec.get("losses"),
              "backend": rec.get("backend"), "world_size": rec.get("world_size")}
        if rec.get("traceback") and not rec.get("ok"):
            ev["traceback"] = _tail(rec["traceback"])
        evidence.append(ev)
    failed = [r for r in ranks if not r.get("ok")]
    if failed:
        return DdpResult("fail", f"{len(failed)} of {nproc} rank(s) failed", evidence, ranks)
    not_dist = [r for r in ranks if not r.get("distributed")]
    if not_dist:
        return DdpResult("fail", "the entry did not initialise torch.distributed under torchrun "
                                 "(it should call init_process_group when WORLD_SIZE > 1)", evidence, ranks)
    if any(r.get("world_size") != nproc for r in ranks):
        return DdpResult("fail", f"world size is not {nproc}", evidence, ranks)
    bad_loss = [r for r in ranks if any(isinstance(x, str) for x in r.get("losses") or [])]
    if bad_loss:
        return DdpResult("fail", "a rank produced a non-finite loss", evidence, ranks)
    models = [r.get("model") for r in ranks]
    if any(m is None for m in models):
        return DdpResult("fail", "the entry returned no model, so rank agreement cannot be checked "
                                 "(return {'losses': [...], 'model': model})", evidence, ranks)
    ref = models[0]
    if all(m["bits"] == ref["bits"] for m in models[1:]):
        return DdpResult("pass", f"{nproc} ranks finished; parameters are bit-identical "
                                 f"({len(ref['params'])} tensors)", evidence, ranks)
    worst, worst_name = 0.0, ""
    for m in models[1:]:
        if set(m["params"]) != set(ref["params"]):
            return DdpResult("fail", "ranks hold different parameter names", evidence, ranks)
        for name, p in ref["params"].items():
            q = m["params"][name]
            scale = max(p["abs_sum"], q["abs_sum"], 1e-30)
            rel = abs(p["sum"] - q["sum"]) / scale
            if rel > worst:
                worst, worst_name = rel, name
    if worst <= settings.param_rtol:
        return DdpResult("pass", f"{nproc} ranks finished; parameter sums agree within rtol "
                                 f"{settings.param_rtol:g} (worst {worst:.3g})", evidence, ranks)
    return DdpResult("fail", f"ranks disagree: parameter '{worst_name}' differs by {worst:.3g} "
                             f"(relative) > {settings.param_rtol:g}", evidence, ranks)
