"""The metric core: compare one output tensor, or one loss curve, with its golden value.

Pure functions of tensors and thresholds (torch is imported when they run); no device logic.
Every metric is computed in float64 on the CPU.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Optional, Sequence

from ascend_migrate.validate.thresholds import (
    HardLimits,
    LossTolerance,
    OutputGate,
    Thresholds,
    looser,
    normalize_dtype,
)


@dataclass
class TensorMetrics:
    numel: int
    cosine: float
    max_abs: float
    rel_err: float
    max_rel: float
    mean_rel: float
    rmse: float
    target_nan_inf: int  # count of NaN/Inf elements in the target
    golden_nan_inf: int

    def to_dict(self) -> dict[str, Any]:
        return {k: _json_float(v) for k, v in asdict(self).items()}


def _json_float(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no nan/inf
    return value


def tensor_metrics(target: Any, golden: Any, small_value: float) -> TensorMetrics:
    """Metrics of `target` against `golden` (same shape), in float64; NaN/Inf elements are
    counted and left out of the other metrics."""
    import torch

    t = _as_float64(target)
    g = _as_float64(golden)
    t_bad = ~torch.isfinite(t)
    g_bad = ~torch.isfinite(g)
    ok = ~(t_bad | g_bad)
    tv, gv = t[ok], g[ok]
    n = int(tv.numel())
    if n == 0:
        cosine, max_abs, rel_err, max_rel, mean_rel, rmse = 1.0, 0.0, 0.0, 0.0, 0.0, 0.0
    else:
        diff = (tv - gv).abs()
        max_abs = float(diff.max())
        g_scale = float(gv.abs().max())
        rel_err = (max_abs / g_scale) if g_scale > 0 else (0.0 if max_abs == 0 else math.inf)
        rel = diff / gv.abs().clamp_min(small_value)
        max_rel = float(rel.max())
        mean_rel = float(rel.mean())
        rmse = float(torch.sqrt((diff * diff).mean()))
        tn, gn = float(tv.norm()), float(gv.norm())
        if max_abs == 0.0:
            cosine = 1.0  # identical: no rounding in the dot product
        elif tn == 0 and gn == 0:
            cosine = 1.0
        elif tn == 0 or gn == 0:
            cosine = 0.0
        else:
            cosine = float((tv * gv).sum() / (tn * gn))
            cosine = max(-1.0, min(1.0, cosine))
    return TensorMetrics(
        numel=int(t.numel()),
        cosine=cosine,
        max_abs=max_abs,
        rel_err=rel_err,
        max_rel=max_rel,
        mean_rel=mean_rel,
        rmse=rmse,
        target_nan_inf=int(t_bad.sum()),
        golden_nan_inf=int(g_bad.sum()),
    )


def _as_float64(x: Any):
    import torch

    x = torch.as_tensor(x).detach().to("cpu")
    if x.is_complex():
        x = torch.view_as_real(x)
    return x.to(torch.float64).reshape(-1)


def dtype_key(tensor: Any) -> Optional[str]:
    """fp32 / fp16 / bf16 for floating tensors (fp64 counts as fp32), None otherwise."""
    return normalize_dtype(str(tensor.dtype))


@dataclass
class OutputResult:
    name: str
    status: str  # pass | fail | hard-fail | unmatched
    dtype: str  # thresholds used (fp32 / fp16 / bf16 / exact)
    shape: list[int]
    metrics: Optional[TensorMetrics]
    failures: list[str] = field(default_factory=list)  # "output 'x': metric value op limit"

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": self.name,
            "status": self.status,
            "dtype": self.dtype,
            "shape": self.shape,
            "metrics": self.metrics.to_dict() if self.metrics else None,
            "failures": list(self.failures),
        }


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def judge_metrics(
    name: str, m: TensorMetrics, gate: OutputGate, hard: HardLimits, dtype: str
) -> tuple[str, list[str]]:
    """Apply hard limits, then the per-dtype gates. Returns (status, failure messages)."""
    label = f"output '{name}'"
    hard_fail: list[str] = []
    if hard.nan_inf and m.target_nan_inf:
        hard_fail.append(f"{label}: nan_inf {m.target_nan_inf} NaN/Inf value(s) in the target (hard limit: none)")
    if hard.nan_inf and m.golden_nan_inf:
        hard_fail.append(f"{label}: nan_inf {m.golden_nan_inf} NaN/Inf value(s) in the golden output (hard limit: none)")
    if not hard.nan_inf and (m.target_nan_inf or m.golden_nan_inf):
        # the hard limit is off, but a non-finite value is never a match (inf <= inf must not pass)
        return "fail", [f"{label}: {m.target_nan_inf} NaN/Inf value(s) in the target, {m.golden_nan_inf} in the "
                        "golden output; non-finite values never compare equal"]
    if not math.isfinite(m.cosine) or m.cosine < hard.cosine_min:
        hard_fail.append(f"{label}: cosine {_fmt(m.cosine)} < {_fmt(hard.cosine_min)} (hard limit)")
    if m.max_abs > hard.max_abs:
        hard_fail.append(f"{label}: max_abs {_fmt(m.max_abs)} > {_fmt(hard.max_abs)} (hard limit)")
    if hard_fail:
        return "hard-fail", hard_fail
    fails: list[str] = []
    if gate.cosine_min is not None and m.cosine < gate.cosine_min:
        fails.append(f"{label}: cosine {_fmt(m.cosine)} < {_fmt(gate.cosine_min)} ({dtype})")
    for metric in ("max_abs", "rel_err", "max_rel", "mean_rel", "rmse"):
        limit = getattr(gate, metric)
        value = getattr(m, metric)
        if limit is not None and not (value <= limit):
            fails.append(f"{label}: {metric} {_fmt(value)} > {_fmt(limit)} ({dtype})")
    return ("fail" if fails else "pass"), fails


def compare_output(
    name: str,
    target: Any,
    golden: Any,
    thresholds: Thresholds,
    dtype: Optional[str] = None,
) -> OutputResult:
    """Compare one output. `dtype` forces the thresholds (fp32/fp16/bf16); by default the
    lower precision of the target and golden dtypes is used."""
    import torch

    target = torch.as_tensor(target).detach().to("cpu")
    golden = torch.as_tensor(golden).detach().to("cpu")
    shape = list(golden.shape)
    if tuple(target.shape) != tuple(golden.shape):
        return OutputResult(
            name, "unmatched", dtype or "?", shape, None,
            [f"output '{name}': shape {list(target.shape)} differs from golden {shape}"],
        )
    t_key, g_key = dtype_key(target), dtype_key(golden)
    if t_key is None and g_key is None and not target.is_complex():
        # integer / bool outputs (indices, masks, counts) must match exactly
        mism = int((target.to(torch.int64) != golden.to(torch.int64)).sum()) if target.numel() else 0
        m = tensor_metrics(target, golden, 1.0)
        fails = [f"output '{name}': mismatches {mism} of {target.numel()} element(s) (exact)"] if mism else []
        return OutputResult(name, "fail" if mism else "pass", "exact", shape, m, fails)
    key = normalize_dtype(dtype) if dtype else looser(t_key, g_key)
    if key is None:
        raise ValueError(f"unknown thresholds dtype {dtype!r}")
    gate = thresholds.gate(key)
    m = tensor_metrics(target, golden, gate.small_value)
    status, fails = judge_metrics(name, m, gate, thresholds.hard, key)
    return OutputResult(name, status, key, shape, m, fails)


def compare_outputs(
    target: Mapping[str, Any],
    golden: Mapping[str, Any],
    thresholds: Thresholds,
    dtype: Optional[str] = None,
) -> list[OutputResult]:
    """Compare every golden output; outputs missing on either side are 'unmatched'."""
    results = []
    for name in golden:
        if name not in target:
            results.append(OutputResult(name, "unmatched", dtype or "?", list(golden[name].shape), None,
                                        [f"output '{name}': missing from the target run"]))
            continue
        results.append(compare_output(name, target[name], golden[name], thresholds, dtype))
    for name in target:
        if name not in golden:
            results.append(OutputResult(name, "unmatched", dtype or "?", list(target[name].shape), None,
                                        [f"output '{name}': not in the golden file"]))
    return results


@dataclass
class LossResult:
    status: str  # pass | fail | hard-fail
    rtol: float
    atol: float
    dtype: str
    steps: int
    first_bad_step: Optional[int]
    message: str
    per_step: list[dict[str, Any]]

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "dtype": self.dtype,
            "rtol": self.rtol,
            "atol": self.atol,
            "steps": self.steps,
            "first_bad_step": self.first_bad_step,
            "message": self.message,
            "per_step": self.per_step,
        }


def compare_losses(
    target: Sequence[float], golden: Sequence[float], tol: LossTolerance, dtype: str = "fp32"
) -> LossResult:
    """Step-by-step comparison; fails at the first step with |t - g| > rtol * |g| + atol or a
    non-finite loss. Steps are numbered from 0."""
    per_step: list[dict[str, Any]] = []
    first_bad: Optional[int] = None
    status, message = "pass", ""
    for i, g in enumerate(golden):
        if i >= len(target):
            break
        t = float(target[i])
        g = float(g)
        allowed = tol.rtol * abs(g) + tol.atol
        diff = abs(t - g) if math.isfinite(t) and math.isfinite(g) else math.inf
        ok = math.isfinite(t) and math.isfinite(g) and diff <= allowed  # inf vs inf is no match
        per_step.append({
            "step": i, "target": _json_float(t), "golden": _json_float(g),
            "abs_diff": _json_float(diff), "allowed": allowed, "ok": ok,
        })
        if not ok and first_bad is None:
            first_bad = i
            if not math.isfinite(t) or not math.isfinite(g):
                status = "hard-fail"
                message = f"loss at step {i} is not finite (target {t!r}, golden {g!r})"
            else:
                status = "fail"
                message = (
                    f"loss diverges at step {i}: target {_fmt(t)} vs golden {_fmt(g)}, "
                    f"|diff| {_fmt(diff)} > rtol {_fmt(tol.rtol)} * |golden| + atol {_fmt(tol.atol)} "
                    f"= {_fmt(allowed)}"
                )
    if first_bad is None and len(target) != len(golden):
        status = "fail"
        first_bad = min(len(target), len(golden))
        message = f"loss curve has {len(target)} step(s), golden has {len(golden)}"
    if status == "pass":
        worst = max((s["abs_diff"] for s in per_step if isinstance(s["abs_diff"], float)), default=0.0)
        message = f"{len(per_step)} step(s) within rtol {_fmt(tol.rtol)}, atol {_fmt(tol.atol)}; worst |diff| {_fmt(worst)}"
    return LossResult(status, tol.rtol, tol.atol, dtype, len(golden), first_bad, message, per_step)


def constant_losses(golden: Sequence[float]) -> Optional[str]:
    """A description when every golden loss has the same value (two steps or more), else None.

    A loss that never moves (all -0.0 from a cross-entropy over one output column, a model whose
    parameters get no gradient) matches any port that returns the same constant: the step-by-step
    comparison then checks nothing about the migrated code."""
    values = [float(x) for x in golden]
    if len(values) < 2 or not all(math.isfinite(v) for v in values):
        return None
    first = values[0]
    if any(v != first for v in values[1:]):  # exact: a real loss changes in some digit
        return None
    return f"every golden loss is {_fmt(first)} ({len(values)} steps)"
