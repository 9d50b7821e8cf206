"""capture and compare: the numerical half of validation."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.validate import devices, precision
from ascend_migrate.validate.entry import EntryRun
from ascend_migrate.validate.entry_worker import run_entry_in_child
from ascend_migrate.validate.golden import Golden, load_golden, save_golden
from ascend_migrate.validate.metrics import (
    LossResult,
    OutputResult,
    compare_losses,
    compare_outputs,
    dtype_key,
)
from ascend_migrate.validate.thresholds import Thresholds, looser, normalize_dtype


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def run_meta(spec: str, device: str, run: EntryRun, seed: int, steps: int,
             autocast: Optional[str]) -> dict[str, Any]:
    return {
        "entry": spec,
        "kind": run.kind,
        "device": device,
        "device_name": run.host.get("device_name") or devices.device_name(device),
        "dtype": run_dtype(run),
        "autocast": autocast,
        "seed": seed,
        "steps": steps if run.kind == "train" else None,
        "deterministic": True,
        "precision": run.precision,
        "versions": run.host.get("versions") or devices.versions(),
        "created": _now(),
        "outputs": {
            k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")}
            for k, v in run.outputs.items()
        },
        "loss_steps": len(run.losses),
        # the project files whose code the entry ran (this process): what the numbers cover
        "executed_files": list(run.executed),
    }


def run_dtype(run: EntryRun) -> str:
    """The precision of a run: declared by the entry/autocast, else from its float outputs."""
    declared = normalize_dtype(run.dtype)
    if declared:
        return declared
    key: Optional[str] = None
    for tensor in run.outputs.values():
        key = looser(key, dtype_key(tensor)) if dtype_key(tensor) else key
    return key or "fp32"


def capture(
    spec: str,
    root: Path | str,
    device: str,
    output: Path | str,
    seed: int = 0,
    steps: int = 5,
    autocast: Optional[str] = None,
    precision: Optional[str] = None,
    idle_s: Optional[float] = None,
    cap_s: Optional[float] = None,
) -> Golden:
    """Run the entry on the reference device and write the golden file (with the precision
    switches in effect, so a comparison can tell whether it ran the same way)."""
    root = Path(root)
    run = run_entry_in_child(spec, root, device, seed=seed, steps=steps, autocast=autocast, precision=precision,
                             idle_s=idle_s, cap_s=cap_s)
    golden = Golden(
        meta=run_meta(spec, device, run, seed, steps, autocast),
        outputs=run.outputs,
        losses=run.losses,
    )
    save_golden(output, golden)
    return golden


@dataclass
class Comparison:
    status: str  # pass | fail
    dtype: str  # thresholds used for outputs and losses
    golden_meta: dict[str, Any]
    target_meta: dict[str, Any]
    outputs: list[OutputResult] = field(default_factory=list)
    loss: Optional[LossResult] = None
    error: Optional[str] = None  # the target run could not be done
    precision_mismatch: list[str] = field(default_factory=list)  # provenance, not numbers

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def failures(self) -> list[str]:
        msgs = [m for r in self.outputs for m in r.failures]
        if self.loss is not None and not self.loss.passed:
            msgs.append(self.loss.message)
        if self.error:
            msgs.append(self.error)
        msgs += [f"provenance mismatch: {m}" for m in self.precision_mismatch]
        return msgs

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "dtype": self.dtype,
            "golden": self.golden_meta,
            "target": self.target_meta,
            "outputs": [r.to_dict() for r in self.outputs],
            "loss": self.loss.to_dict() if self.loss else None,
            "error": self.error,
            "precision_mismatch": self.precision_mismatch,
            "failures": self.failures(),
        }


def compare_runs(
    golden: Golden,
    run: EntryRun,
    thresholds: Thresholds,
    dtype: Optional[str] = None,
    target_meta: Optional[dict[str, Any]] = None,
) -> Comparison:
    """Compare a finished target run with the golden file."""
    if dtype:
        key = normalize_dtype(dtype)
        if key is None:
            raise ValueError(f"unknown thresholds dtype {dtype!r}: use fp32, fp16 or bf16")
    else:
        key = looser(normalize_dtype(golden.meta.get("dtype")), run_dtype(run))
    outputs = compare_outputs(run.outputs, golden.outputs, thresholds, key if golden.outputs else None)
    loss = None
    if golden.losses or run.losses:
        loss = compare_losses(run.losses, golden.losses, thresholds.loss_tol(key), key)
    ok = all(r.passed for r in outputs) and (loss is None or loss.passed)
    mismatch = precision.mismatches(golden.meta.get("precision"), run.precision)
    return Comparison("pass" if ok and not mismatch else "fail", key, golden.meta, target_meta or {}, outputs, loss,
                      precision_mismatch=mismatch)


def compare(
    golden_path: Path | str,
    root: Path | str,
    device: str,
    thresholds: Thresholds,
    spec: Optional[str] = None,
    autocast: Optional[str] = None,
    dtype: Optional[str] = None,
    precision_mode: Optional[str] = None,
    idle_s: Optional[float] = None,
    cap_s: Optional[float] = None,
    record_ops: bool = False,
    ops_release: Optional[str] = None,
) -> Comparison:
    """Run the golden file's entry (or `spec`) on `device` with the precision switches of
    `precision_mode` (fp32 by default) and compare. `record_ops` (emulated npu): the operators
    that reached the device are in the target meta's `operators` (validate.operators.collect's
    shape) for the caller to take out."""
    golden = load_golden(golden_path)
    spec = spec or golden.meta.get("entry")
    if not spec:
        raise ValueError("the golden file names no entry; pass one")
    seed = int(golden.meta.get("seed") or 0)
    steps = int(golden.meta.get("steps") or max(len(golden.losses), 1))
    run = run_entry_in_child(spec, Path(root), device, seed=seed, steps=steps, autocast=autocast,
                             precision=precision_mode, idle_s=idle_s, cap_s=cap_s, record_ops=record_ops,
                             ops_release=ops_release)
    meta = run_meta(spec, device, run, seed, steps, autocast)
    if run.operators is not None:
        meta["operators"] = run.operators
    return compare_runs(golden, run, thresholds, dtype, meta)
