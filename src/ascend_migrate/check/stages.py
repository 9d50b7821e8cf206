"""The checks themselves: pure functions from collected facts to stage results.

The device layer (runner.py) gathers `Facts` (probe output, files, env, npu-smi text);
everything here is deterministic and tested on CPU with hand-written facts.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from ascend_migrate.check.cann import CannInstall
from ascend_migrate.check.compat import Compat, default_compat, torch_matches_pin, torch_pin_from_requires
from ascend_migrate.check.model import Report, Stage, fail, ok, skip, warn
from ascend_migrate.check.parsers import (
    base_version,
    parse_npu_smi,
    parse_visible_devices,
    version_tuple,
)

DEFAULT_SET_ENV = "/usr/local/Ascend/ascend-toolkit/set_env.sh"
HBM_BUSY_FRACTION = 0.5


@dataclass
class ProbeRun:
    """One run of the probe subprocess: steps seen, and how it ended."""

    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    returncode: Optional[int] = 0
    stderr: str = ""
    timed_out: bool = False
    seconds: float = 0.0
    error: str = ""  # could not start at all

    @property
    def last_step(self) -> Optional[str]:
        return next(reversed(self.steps), None) if self.steps else None

    def ended_badly(self) -> Optional[str]:
        if self.error:
            return self.error
        if self.timed_out:
            return f"timed out after {self.seconds:.0f}s"
        if self.returncode not in (0, None):
            if self.returncode < 0:
                import signal

                try:
                    name = signal.Signals(-self.returncode).name
                except ValueError:
                    name = f"signal {-self.returncode}"
                return f"crashed ({name})"
            return f"exited with status {self.returncode}"
        return None


@dataclass
class NpuSmiRun:
    path: Optional[str] = None
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False


@dataclass
class Facts:
    device_kind: str
    device_index: int
    python: str
    env: Mapping[str, str]
    info: Optional[dict[str, Any]] = None
    info_error: str = ""
    cann: CannInstall = field(default_factory=CannInstall)
    npu_smi: NpuSmiRun = field(default_factory=NpuSmiRun)
    probe: Optional[ProbeRun] = None  # with the caller's environment
    probe_noauto: Optional[ProbeRun] = None  # rerun with TORCH_DEVICE_BACKEND_AUTOLOAD=0
    hccl: Optional[ProbeRun] = None
    want_hccl: bool = False
    path_exists: Callable[[str], bool] = os.path.exists
    compat: Compat = field(default_factory=default_compat)

    @property
    def device(self) -> str:
        return self.device_kind if self.device_kind == "cpu" else f"{self.device_kind}:{self.device_index}"

    @property
    def npu(self) -> bool:
        return self.device_kind == "npu"

    def dist(self, name: str) -> Optional[str]:
        return ((self.info or {}).get("dists") or {}).get(name)

    def set_env_hint(self) -> str:
        if self.cann.set_env:
            return str(self.cann.set_env)
        return DEFAULT_SET_ENV


# --------------------------------------------------------------------------- classification


def classify_error(text: str) -> tuple[Optional[str], str, str]:
    """(signature id, cause, fix) for an error text, using the failure knowledge base."""
    from ascend_migrate.diagnose.engine import diagnose_text, primary

    if re.search(r"No module named '?torch_npu'?\s*$", text, re.M):
        return (
            None,
            "torch_npu is not installed in this interpreter.",
            "pip install torch-npu==<the release paired with your torch and CANN> (see the torch_npu stage).",
        )
    top = primary(diagnose_text(text))
    if top is None:
        last = [ln for ln in text.strip().splitlines() if ln.strip()][-1:] or ["(no output)"]
        return None, f"unrecognised error: {last[0].strip()}", "Run `ascend-migrate diagnose` on the full output; check the CANN log (~/ascend/log)."
    return top.id, top.cause, top.fix


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _with_set_env(fix: str, facts: Facts) -> str:
    """Point a generic 'source set_env.sh' fix at the set_env.sh found on this host."""
    if facts.cann.set_env and DEFAULT_SET_ENV in fix and str(facts.cann.set_env) != DEFAULT_SET_ENV:
        return fix.replace(DEFAULT_SET_ENV, str(facts.cann.set_env))
    return fix


# --------------------------------------------------------------------------- stages

T_PY, T_TORCH, T_NPU, T_DEPS, T_NUMPY = "Python", "torch", "torch_npu", "runtime deps", "numpy"
T_CANN, T_ENV, T_DRV = "CANN install", "set_env.sh sourced", "driver / npu-smi"
T_IMP, T_IMPN, T_DEV = "import torch", "import torch_npu", "devices"
T_OP, T_MM, T_BF16, T_HCCL = "tensor op", "matmul vs CPU", "bf16", "2-process all_reduce"


def stage_python(f: Facts) -> Stage:
    if f.info is None:
        return fail("python", T_PY, f"cannot run {f.python}", f.info_error or "the interpreter did not start",
                    "Pass an existing interpreter with --python, e.g. --python $(which python3).")
    py = f.info["python"]
    found = f"{py} ({f.info.get('implementation', '')}, {f.info.get('machine', '')}) at {f.info.get('executable', f.python)}"
    if tuple(int(x) for x in py.split(".")[:2]) < (3, 8):
        return fail("python", T_PY, found, "torch_npu needs Python 3.8 or newer.", "Use Python 3.9-3.11 (3.10 is the common choice on Ascend hosts).")
    torch_v = f.dist("torch")
    if torch_v:
        okv = f.compat.python_ok(torch_v, py)
        if okv is False:
            return warn("python", T_PY, found, f"torch {base_version(torch_v)} is not released for Python {py}.",
                        "Use a Python version listed for your torch (compat table: `ascend-migrate check --json` details).",
                        python=py)
    return ok("python", T_PY, found, python=py, machine=f.info.get("machine"))


def stage_torch(f: Facts) -> Stage:
    v = f.dist("torch")
    if f.info is None:
        return skip("torch", T_TORCH, "interpreter did not run")
    if not v:
        return fail("torch", T_TORCH, "torch is not installed", "this interpreter has no torch.",
                    "pip install torch==<version paired with torch_npu>; on x86_64 use the CPU wheel index.")
    cuda = None
    for run in (f.probe, f.probe_noauto):
        if run and run.steps.get("import_torch", {}).get("ok"):
            cuda = run.steps["import_torch"].get("cuda")
            break
    found = f"torch {v}" + (f" (CUDA {cuda} build)" if cuda else "")
    if f.npu and (cuda or re.search(r"\+cu\d+", v)):
        return fail("torch", T_TORCH, found, "this torch is a CUDA build; torch_npu refuses to load next to it ('Two accelerators cannot be used at the same time').",
                    f"pip install torch=={base_version(v)} --index-url https://download.pytorch.org/whl/cpu (x86_64) and reinstall torch_npu.",
                    version=v, cuda=cuda)
    return ok("torch", T_TORCH, found, version=v, cuda=cuda)


def stage_torch_npu(f: Facts) -> Stage:
    if f.info is None:
        return skip("torch_npu", T_NPU, "interpreter did not run")
    v = f.dist("torch_npu")
    torch_v = f.dist("torch")
    if not v:
        if not f.npu:
            return skip("torch_npu", T_NPU, f"not installed (not needed for --device {f.device})")
        listed = [r["torch_npu"] for r in f.compat.matrix if torch_v and r["torch"] == base_version(torch_v)]
        pick = listed[0] if listed else (base_version(torch_v) if torch_v else "X.Y.Z")
        return fail("torch_npu", T_NPU, "torch_npu is not installed", "the NPU backend for PyTorch is missing.",
                    f"pip install torch-npu=={pick}   (it must match torch's version and the installed CANN; "
                    "see the compatibility table in the cann stage details).", listed_for_torch=listed)
    pin = torch_pin_from_requires(f.info.get("torch_npu_requires") or [])
    details = {"version": v, "requires_torch": pin}
    if torch_v and pin and not torch_matches_pin(torch_v, pin):
        return fail("torch_npu", T_NPU, f"torch_npu {v} requires torch=={pin}.*, found torch {torch_v}",
                    "torch and torch_npu versions do not match; the native module will not load.",
                    f"pip install torch=={pin} (CPU build), or the torch_npu release built for torch {base_version(torch_v)}.", **details)
    if torch_v and not pin and version_tuple(torch_v)[:2] != version_tuple(v)[:2]:
        return fail("torch_npu", T_NPU, f"torch_npu {v} with torch {torch_v}",
                    "torch_npu must share torch's major.minor version.",
                    f"pip install torch-npu=={'.'.join(map(str, version_tuple(torch_v)))}* or matching torch.", **details)
    return ok("torch_npu", T_NPU, f"torch_npu {v} (requires torch=={pin or '?'}.*; torch {torch_v})", **details)


def stage_runtime_deps(f: Facts) -> Stage:
    if f.info is None:
        return skip("runtime_deps", T_DEPS, "interpreter did not run")
    if not f.dist("torch_npu") and not f.npu:
        return skip("runtime_deps", T_DEPS, f"torch_npu not installed (not needed for --device {f.device})")
    mods = f.info.get("modules") or {}
    missing = [d for d in f.compat.runtime_deps if not mods.get(d.module)]
    present = [d.name for d in f.compat.runtime_deps if mods.get(d.module)]
    if missing:
        names = " ".join(d.name for d in missing)
        mk = fail if f.npu else warn
        return mk("runtime_deps", T_DEPS, f"missing: {', '.join(d.name for d in missing)}",
                  "CANN's op compiler and torch_npu import these at run time; the wheel does not install them (symptoms: No module named ..., EH9999 init env failed, 500001).",
                  f"pip install {names}   (or: ascend-migrate env --install)",
                  missing=[d.name for d in missing], present=present)
    return ok("runtime_deps", T_DEPS, f"all {len(present)} present", present=present)


def stage_numpy(f: Facts) -> Stage:
    if f.info is None:
        return skip("numpy", T_NUMPY, "interpreter did not run")
    v = f.dist("numpy")
    need_npu = f.npu or bool(f.dist("torch_npu"))
    if not v:
        if need_npu:
            return warn("numpy", T_NUMPY, "numpy is not installed", "torch_npu requires numpy (Requires-Dist).", "pip install numpy")
        return ok("numpy", T_NUMPY, "not installed (torch runs without it)")
    reason = f.compat.numpy_pin_needed(f.dist("torch") or "", f.cann.version if need_npu else "")
    if version_tuple(v) and version_tuple(v)[0] >= 2 and reason:
        mk = fail if need_npu else warn
        return mk("numpy", T_NUMPY, f"numpy {v}", f"numpy 2.x breaks this stack: {reason}.",
                  f"pip install '{f.compat.numpy_spec}'", version=v)
    return ok("numpy", T_NUMPY, f"numpy {v}", version=v)


def stage_cann(f: Facts) -> Stage:
    c = f.cann
    if not f.npu and not c.found:
        return skip("cann", T_CANN, f"not found (not needed for --device {f.device})", searched=c.searched)
    if not c.found:
        return fail("cann", T_CANN, "no CANN toolkit found (searched: " + ", ".join(c.searched) + ")",
                    "the CANN toolkit is not installed, or installed somewhere not searched.",
                    "Install the CANN toolkit + ops package matching torch_npu (default path /usr/local/Ascend); "
                    "for a custom path pass --cann-root DIR or source its set_env.sh.",
                    **c.to_dict())
    found = f"CANN {c.version or '(version unknown)'} at {c.home} (via {c.found_via})"
    details = c.to_dict()
    if not c.version:
        return warn("cann", T_CANN, found, "no readable version file (ascend_toolkit_install.info / version.cfg): " + "; ".join(c.warnings or ["none found"]),
                    "Reinstall the toolkit or check the files under " + str(c.home), **details)
    npu_v = f.dist("torch_npu")
    if npu_v:
        rows = f.compat.rows_for_cann(c.version)
        pair_rows = f.compat.rows_for_torch_npu(npu_v)
        details.update(listed_for_cann=[f"torch {r['torch']} + torch_npu {r['torch_npu']}" for r in rows],
                       listed_for_torch_npu=[r["cann"] for r in pair_rows])
        if rows and not any(r["torch_npu"] == npu_v for r in rows):
            pairs = ", ".join(f"torch_npu {r['torch_npu']}" for r in rows)
            return warn("cann", T_CANN, found + f"; torch_npu {npu_v} is not listed for it",
                        f"CANN {c.version} is published with: {pairs}.",
                        f"Install one of those torch_npu releases, or the CANN listed for torch_npu {npu_v}"
                        + (f" ({', '.join(r['cann'] for r in pair_rows)})" if pair_rows else "") + ".", **details)
        if not rows and not pair_rows:
            return warn("cann", T_CANN, found + f"; no published pairing for torch_npu {npu_v}",
                        f"the compatibility table has no row for CANN {c.version} or torch_npu {npu_v} (newer than the table?).",
                        "Check the torch_npu release notes for the CANN it was built against.", **details)
    if c.warnings:
        return warn("cann", T_CANN, found, "; ".join(c.warnings), "Check the CANN install files named above.", **details)
    return ok("cann", T_CANN, found, **details)


def _lib_dirs(env: Mapping[str, str]) -> list[str]:
    return [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]


def stage_set_env(f: Facts) -> Stage:
    env = f.env
    if not f.npu and not f.cann.found:
        return skip("set_env", T_ENV, f"no CANN (not needed for --device {f.device})")
    problems = []
    home = env.get("ASCEND_HOME_PATH") or env.get("ASCEND_TOOLKIT_HOME")
    if not home:
        problems.append("ASCEND_HOME_PATH is not set")
    elif not f.path_exists(home):
        problems.append(f"ASCEND_HOME_PATH={home} does not exist")
    else:
        for sub in ("runtime", "compiler"):
            if not f.path_exists(os.path.join(home, sub)):
                problems.append(f"{home}/{sub} missing (torch_npu checks it at import)")
    opp = env.get("ASCEND_OPP_PATH")
    if not opp:
        problems.append("ASCEND_OPP_PATH is not set")
    elif not f.path_exists(opp):
        problems.append(f"ASCEND_OPP_PATH={opp} does not exist")
    libdirs = _lib_dirs(env)
    libs = {}
    for lib in ("libascendcl.so", "libhccl.so"):
        libs[lib] = next((d for d in libdirs if f.path_exists(os.path.join(d, lib))), None)
        if libs[lib] is None:
            problems.append(f"{lib} not in any LD_LIBRARY_PATH directory")
    details = {"ASCEND_HOME_PATH": env.get("ASCEND_HOME_PATH"), "ASCEND_OPP_PATH": opp,
               "ASCEND_TOOLKIT_HOME": env.get("ASCEND_TOOLKIT_HOME"), "libraries": libs}
    if problems:
        mk = fail if f.npu else warn
        return mk("set_env", T_ENV, "; ".join(problems),
                  "CANN's set_env.sh has not been sourced in this shell (or points to a removed install), so torch_npu cannot find libhccl.so / libascendcl.so.",
                  f"source {f.set_env_hint()}   (add it to the job script, or generate one: ascend-migrate env)", **details)
    return ok("set_env", T_ENV, f"ASCEND_HOME_PATH={home}; libhccl.so in {libs['libhccl.so']}", **details)


def stage_driver(f: Facts) -> Stage:
    run = f.npu_smi
    drv = f" (driver {f.cann.driver_version})" if f.cann.driver_version else ""
    if run.path is None:
        if not f.npu:
            return skip("driver", T_DRV, f"npu-smi not found (not needed for --device {f.device})")
        return fail("driver", T_DRV, "npu-smi not found" + drv,
                    "the NPU driver is not installed on this host (or this container has no driver mounted).",
                    "Install the Ascend driver + firmware for the card (npu-smi comes with it); in a container mount /usr/local/Ascend/driver, /usr/local/sbin/npu-smi and /dev/davinci*.",
                    driver_version=f.cann.driver_version)
    mk = fail if f.npu else warn
    if run.timed_out:
        return mk("driver", T_DRV, f"{run.path} info did not answer", "npu-smi hung: the driver is wedged or a device is resetting.",
                  "Check `dmesg` for davinci errors; reboot the host or reset the card (npu-smi set -t reset) as the admin.")
    parsed = parse_npu_smi(run.stdout)
    details = {"npu_smi": parsed.to_dict(), "driver_version": f.cann.driver_version, "returncode": run.returncode}
    if run.returncode not in (0, None) or not parsed.chips:
        from ascend_migrate.diagnose.engine import diagnose_text, primary

        top = primary(diagnose_text(run.stdout + "\n" + run.stderr))
        why = _last_line(run.stderr) or _last_line(run.stdout) or "no output"
        return mk("driver", T_DRV, f"npu-smi info failed (status {run.returncode}): {why}" if run.returncode else f"npu-smi output not understood: {'; '.join(parsed.errors[:3])}",
                  top.cause if top else "the driver cannot talk to the devices, or npu-smi printed an unknown format.",
                  top.fix if top else "Run `npu-smi info` by hand; check dmesg and the driver install (/usr/local/Ascend/driver/version.info).",
                  **details)
    sick = [c for c in parsed.chips if c.health.upper() != "OK"]
    chips = ", ".join(sorted({c.name for c in parsed.chips}))
    found = f"{len(parsed.npu_ids)} NPU(s) [{chips}], npu-smi {parsed.version or '?'}{drv}"
    if sick:
        return mk("driver", T_DRV, found + "; unhealthy: " + ", ".join(f"NPU {c.npu} chip {c.chip} = {c.health}" for c in sick),
                  "npu-smi reports a device health other than OK (Warning / Alarm / Critical).",
                  "Inspect with `npu-smi info -t health -i <npu>`; move work to a healthy card via ASCEND_RT_VISIBLE_DEVICES; ask the admin to reset or replace the card.",
                  **details)
    notes = []
    if f.npu:
        vis, _ = parse_visible_devices(f.env.get("ASCEND_RT_VISIBLE_DEVICES"))
        phys = vis[f.device_index] if vis and f.device_index < len(vis) else f.device_index
        mine = [c for c in parsed.chips if c.npu == phys] or [c for c in parsed.chips if c.phy_id == phys]
        procs = [p for p in parsed.processes if p.npu == phys]
        if procs:
            notes.append(f"{len(procs)} process(es) already on NPU {phys}: " + ", ".join(f"{p.name or '?'}[{p.pid}] {p.memory_mb} MB" for p in procs))
        for c in mine:
            used, total = (c.hbm_used_mb, c.hbm_total_mb) if c.hbm_total_mb else (c.memory_used_mb, c.memory_total_mb)
            if used is not None and total and used / total > HBM_BUSY_FRACTION:
                notes.append(f"NPU {phys} memory {used}/{total} MB in use")
    if parsed.errors:
        notes.append("unparsed npu-smi lines: " + "; ".join(parsed.errors[:3]))
    if notes:
        return warn("driver", T_DRV, found + "; " + "; ".join(notes),
                    "the card is shared or the output had lines this checker did not understand.",
                    "Check `npu-smi info`; pick a free card with ASCEND_RT_VISIBLE_DEVICES or stop the other processes.", **details)
    return ok("driver", T_DRV, found, **details)


def _autoload_failed(run: Optional[ProbeRun]) -> bool:
    step = (run.steps.get("import_torch") if run else None) or {}
    return not step.get("ok", True) and "Failed to load the backend extension" in step.get("error", "")


def stage_import_torch(f: Facts) -> Stage:
    run = f.probe
    if f.info is None or not f.dist("torch"):
        return skip("import_torch", T_IMP, "torch not installed")
    if run is None:
        return skip("import_torch", T_IMP, "not run")
    step = run.steps.get("import_torch")
    if step is None:
        why = run.ended_badly() or "no output"
        return fail("import_torch", T_IMP, f"`import torch` {why}", "a native library crashed or hung while importing torch.",
                    "Run `python -c 'import torch'` by hand; try TORCH_DEVICE_BACKEND_AUTOLOAD=0 to rule out torch_npu.", stderr=run.stderr[-4000:])
    if step.get("ok"):
        return ok("import_torch", T_IMP, f"imports in {step.get('seconds', 0):.1f}s", version=step.get("version"), cuda=step.get("cuda"))
    err = step.get("error", "")
    sig, cause, fix = classify_error(err)
    if _autoload_failed(run):
        cause = "torch auto-loads the installed torch_npu, and importing torch_npu failed, so plain `import torch` fails. Underlying: " + cause
        fix = _with_set_env(fix, f) + " Meanwhile `export TORCH_DEVICE_BACKEND_AUTOLOAD=0` lets torch import without the NPU."
    st = fail("import_torch", T_IMP, _last_line(err), cause, fix, error=err[-4000:])
    st.diagnosis = sig
    return st


def _device_run(f: Facts) -> Optional[ProbeRun]:
    """The probe run whose device steps count: the rerun without autoload if that was needed."""
    if _autoload_failed(f.probe) and f.probe_noauto is not None:
        return f.probe_noauto
    return f.probe


def stage_import_torch_npu(f: Facts) -> Stage:
    if not f.npu:
        if f.dist("torch_npu"):
            return skip("import_torch_npu", T_IMPN, f"not tried for --device {f.device} (see import torch for autoload)")
        return skip("import_torch_npu", T_IMPN, f"torch_npu not installed (not needed for --device {f.device})")
    run = _device_run(f)
    if run is None or not (run.steps.get("import_torch") or {}).get("ok"):
        return skip("import_torch_npu", T_IMPN, "not run: torch does not import")
    step = run.steps.get("import_torch_npu")
    if step is None:
        why = run.ended_badly() or "no output"
        sig, cause, fix = classify_error(run.stderr) if run.stderr.strip() else (None, "", "")
        st = fail("import_torch_npu", T_IMPN, f"`import torch_npu` {why}",
                  cause or "the native torch_npu module crashed or hung while loading (driver or CANN libraries).",
                  _with_set_env(fix, f) or "Run `python -c 'import torch_npu'` by hand; check `npu-smi info` and the CANN install.",
                  stderr=run.stderr[-4000:])
        st.diagnosis = sig
        return st
    if step.get("ok"):
        return ok("import_torch_npu", T_IMPN, f"torch_npu {step.get('version')} imports in {step.get('seconds', 0):.1f}s; torch.version.cann={step.get('cann')}",
                  version=step.get("version"), cann=step.get("cann"))
    err = step.get("error", "")
    sig, cause, fix = classify_error(err)
    st = fail("import_torch_npu", T_IMPN, _last_line(err), cause, _with_set_env(fix, f), error=err[-4000:])
    st.diagnosis = sig
    return st


def stage_devices(f: Facts) -> Stage:
    run = _device_run(f)
    need = "import_torch_npu" if f.npu else "import_torch"
    if run is None or not (run.steps.get(need) or {}).get("ok"):
        return skip("devices", T_DEV, f"not run: `{need.replace('_', ' ', 1)}` did not succeed")
    vis_raw = f.env.get("ASCEND_RT_VISIBLE_DEVICES") if f.npu else f.env.get("CUDA_VISIBLE_DEVICES")
    vis_note = ""
    if f.npu:
        ids, err = parse_visible_devices(vis_raw)
        if err:
            return fail("devices", T_DEV, err, "ASCEND_RT_VISIBLE_DEVICES hides or garbles the devices.",
                        "export ASCEND_RT_VISIBLE_DEVICES=0,1,... (ascending, comma-separated), or unset it.", visible=vis_raw)
        if ids is not None:
            vis_note = f"; ASCEND_RT_VISIBLE_DEVICES={vis_raw}"
    step = run.steps.get("devices")
    if step is None:
        why = run.ended_badly() or "no output"
        return fail("devices", T_DEV, f"device query {why}", "the runtime hung or crashed while counting devices.",
                    "Check `npu-smi info` and dmesg; make sure no other container holds the cards.", stderr=run.stderr[-4000:])
    if "error" in step:
        sig, cause, fix = classify_error(step["error"])
        st = fail("devices", T_DEV, _last_line(step["error"]), cause, fix)
        st.diagnosis = sig
        return st
    count, idx = step.get("count", 0), f.device_index
    found = f"{count} {f.device_kind} device(s), available={step.get('available')}{vis_note}"
    if not step.get("available") or count == 0:
        return fail("devices", T_DEV, found, "no device is usable from this process (driver not loaded, /dev/davinci* not mapped, or hidden by the visible-devices variable).",
                    "Run `npu-smi info`; in containers pass the /dev/davinci* devices; check ASCEND_RT_VISIBLE_DEVICES." if f.npu else "Check the driver and CUDA_VISIBLE_DEVICES.",
                    **step)
    if idx >= count:
        return fail("devices", T_DEV, found + f"; {f.device} requested", f"device index {idx} is outside 0..{count - 1}.",
                    f"Use --device {f.device_kind}:0 .. {f.device_kind}:{count - 1} (indices are renumbered by the visible-devices variable).", **step)
    return ok("devices", T_DEV, found, **step)


def _device_step(f: Facts, name: str, sid: str, title: str, describe: Callable[[dict], str], bad_cause: str, bad_fix: str) -> Stage:
    run = _device_run(f)
    prev = (run.steps.get("devices") if run else None) or {}
    if run is None or not prev.get("ok"):
        return skip(sid, title, "not run: no usable device")
    step = run.steps.get(name)
    if step is None:
        why = run.ended_badly()
        if why is None:
            return skip(sid, title, "not run: an earlier device step failed")
        return fail(sid, title, f"{why} during {name.replace('_', ' ')} (after {run.last_step})",
                    "the device process died or hung; on NPU the first kernel launch also compiles ops, so a hang here points at the CANN install or the card.",
                    "Rerun with a longer --timeout; check `npu-smi info`, dmesg and ~/ascend/log; run `ascend-migrate diagnose` on the output.",
                    stderr=(run.stderr or "")[-4000:])
    if "error" in step:
        sig, cause, fix = classify_error(step["error"])
        st = fail(sid, title, _last_line(step["error"]), cause, _with_set_env(fix, f), error=step["error"][-4000:])
        st.diagnosis = sig
        return st
    if not step.get("ok"):
        return fail(sid, title, describe(step), bad_cause, bad_fix, **step)
    return ok(sid, title, describe(step), **step)


def stage_tensor_op(f: Facts) -> Stage:
    return _device_step(
        f, "tensor_op", "tensor_op", T_OP,
        lambda s: f"sum(2x+1) over 4096 values = {s.get('got')} (CPU {s.get('expected')}) on {s.get('device_props', {}).get('name', f.device)}",
        "the device computed a wrong result for a trivial op.",
        "Reinstall the CANN ops/kernels package matching the toolkit; check the card's health in npu-smi.",
    )


def stage_matmul(f: Facts) -> Stage:
    return _device_step(
        f, "matmul", "matmul", T_MM,
        lambda s: f"256x256 fp32 matmul rel. error {s.get('rel_err', float('nan')):.2e} (tolerance {s.get('tolerance')}), max abs {s.get('max_abs_err', float('nan')):.2e}",
        "the fp32 matmul differs from the float64 CPU reference beyond tolerance.",
        "Check whether HF32 is on (torch.npu.matmul.allow_hf32); reinstall the ops package; compare another card.",
    )


def stage_bf16(f: Facts) -> Stage:
    run = _device_run(f)
    step = (run.steps.get("bf16") if run else None) or {}
    if step and step.get("supported") is False:
        return warn("bf16", T_BF16, "bf16 not supported on this device",
                    "this device/SoC has no bf16 (e.g. Ascend 310P, 910A).", "Use fp16 autocast (torch.autocast('npu', dtype=torch.float16)) with a GradScaler.")
    return _device_step(
        f, "bf16", "bf16", T_BF16,
        lambda s: f"supported; 128x128 bf16 matmul rel. error {s.get('rel_err', float('nan')):.2e} (tolerance {s.get('tolerance')})",
        "the bf16 matmul is far from the reference.",
        "Check the CANN ops package; compare with fp16 and fp32 results.",
    )


def stage_hccl(f: Facts) -> Stage:
    if not f.want_hccl:
        return skip("hccl", T_HCCL, "not requested (use --hccl)")
    backend = {"npu": "hccl", "cuda": "nccl", "cpu": "gloo"}[f.device_kind]
    run = f.hccl
    if run is None:
        return skip("hccl", T_HCCL, "not run: no usable device")
    step = run.steps.get("hccl")
    if step is None:
        why = run.ended_badly() or "no output"
        sig, cause, fix = classify_error(run.stderr) if run.stderr.strip() else (None, "", "")
        st = fail("hccl", T_HCCL, f"{backend} all_reduce {why}", cause or "the collective hung or a worker died.",
                  fix or "Check HCCL_CONNECT_TIMEOUT, the card network (hccn_tool) and that 2 devices are visible.", stderr=run.stderr[-4000:])
        st.diagnosis = sig
        return st
    if step.get("ok"):
        return ok("hccl", T_HCCL, f"{backend} all_reduce over 2 processes = {step.get('values')} (expected {step.get('expected')})", **step)
    err = step.get("error", "")
    sig, cause, fix = classify_error(err) if "Traceback" in err else (None, err, "Make 2 devices visible (ASCEND_RT_VISIBLE_DEVICES=0,1).")
    st = fail("hccl", T_HCCL, _last_line(err) or f"values {step.get('values')}", cause, fix, **{k: v for k, v in step.items() if k != "error"})
    st.diagnosis = sig
    return st


STAGES: tuple[Callable[[Facts], Stage], ...] = (
    stage_python,
    stage_torch,
    stage_torch_npu,
    stage_runtime_deps,
    stage_numpy,
    stage_cann,
    stage_set_env,
    stage_driver,
    stage_import_torch,
    stage_import_torch_npu,
    stage_devices,
    stage_tensor_op,
    stage_matmul,
    stage_bf16,
    stage_hccl,
)


# Which failure to name first: the root causes before their consequences.
SUMMARY_PRIORITY = ("python", "torch", "torch_npu", "cann", "set_env", "import_torch_npu", "import_torch",
                    "driver", "devices", "runtime_deps", "numpy", "tensor_op", "matmul", "bf16", "hccl")


def no_npu_stack(f: Facts) -> bool:
    return f.info is not None and not f.dist("torch_npu") and not f.cann.found and f.npu_smi.path is None


def summarize(f: Facts, stages: list[Stage]) -> str:
    failed = [s for s in stages if s.status == "fail"]
    warned = [s for s in stages if s.status == "warn"]
    if f.npu and no_npu_stack(f):
        return ("No NPU stack is present on this machine: torch_npu, the CANN toolkit and the NPU driver "
                "(npu-smi) are all missing. Run this on the Ascend host, or use --device cpu / cuda:N here.")
    if failed:
        order = {sid: i for i, sid in enumerate(SUMMARY_PRIORITY)}
        first = min(failed, key=lambda s: order.get(s.id, len(order)))
        return f"{len(failed)} check(s) failed; start with '{first.title}': {first.cause}"
    if warned:
        return f"{f.device} works, with {len(warned)} warning(s)."
    return f"{f.device} is ready: all checks passed."


def build_report(f: Facts, elapsed: float = 0.0) -> Report:
    stages = [fn(f) for fn in STAGES]
    return Report(device=f.device, python=f.python, stages=stages, summary=summarize(f, stages),
                  no_npu_stack=f.npu and no_npu_stack(f), elapsed_s=elapsed)
