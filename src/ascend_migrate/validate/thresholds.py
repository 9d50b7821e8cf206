"""Numerical thresholds (knowledge/thresholds.yaml), per dtype."""
from __future__ import annotations

import math

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.knowledge.loader import (
    DATA_DIR,
    Field,
    KnowledgeError,
    check_record,
    load_yaml,
)

THRESHOLDS_FILE = DATA_DIR / "thresholds.yaml"
DTYPES = ("fp32", "fp16", "bf16")
_NUM = (int, float)

# torch dtype names and common spellings -> our dtype keys
_ALIASES = {
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32",
    "fp64": "fp32", "float64": "fp32", "double": "fp32", "torch.float64": "fp32",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
}
# lower precision wins when golden and target differ
_RANK = {"fp32": 0, "fp16": 1, "bf16": 2}

# Ranges of the DDP smoke test's settings, whichever way they arrive: `validate run --ddp-steps /
# --ddp-timeout` (the same ranges), a thresholds file, or a shared model skill replayed on
# someone else's host, where an unbounded value would start thousands of processes or hold the
# host for days. nproc: one process per device of one host (16 at most on current NPU servers).
DDP_NPROC = (2, 16)
DDP_STEPS = (1, 1000)
DDP_TIMEOUT_S = (1, 7200)


# Bounds on the numerical gates of a thresholds file that comes with a shared model skill (a
# replay validates someone else's port with them). Loose enough for any real precision mode,
# tight enough that no gate passes everything: `hard.max_abs: 1e308` or `cosine_min: 0` would
# let a wrong port through with a pass.
SHARED_COSINE_MIN = 0.5  # cosine similarity gates: at least this
SHARED_MAX_RELATIVE = 0.5  # relative tolerances (rel_err, max_rel, mean_rel, loss rtol, ddp param_rtol): at most
SHARED_MAX_ABSOLUTE = 10.0  # absolute output tolerances (max_abs, rmse, hard.max_abs): at most
SHARED_MAX_LOSS_ATOL = 1.0  # absolute loss tolerance: at most
SHARED_MAX_SMALL_VALUE = 1.0  # the floor of the relative error's denominator: at most
_SHARED_GATES = ("cosine_min", "max_abs", "rel_err", "max_rel", "mean_rel", "rmse")


def normalize_dtype(name: Optional[str]) -> Optional[str]:
    """Map 'torch.bfloat16', 'bfloat16', 'bf16', ... to a thresholds key; None if not a float type."""
    if name is None:
        return None
    return _ALIASES.get(str(name).strip().lower())


def looser(a: Optional[str], b: Optional[str]) -> str:
    """The lower-precision of two dtype keys (fp32 when neither is a float type)."""
    keys = [k for k in (a, b) if k]
    if not keys:
        return "fp32"
    return max(keys, key=lambda k: _RANK[k])


@dataclass(frozen=True)
class OutputGate:
    cosine_min: Optional[float]
    max_abs: Optional[float]
    rel_err: Optional[float]
    max_rel: Optional[float]
    mean_rel: Optional[float]
    rmse: Optional[float]
    small_value: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class HardLimits:
    cosine_min: float
    max_abs: float
    nan_inf: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class LossTolerance:
    rtol: float
    atol: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DdpSettings:
    nproc: int
    steps: int
    timeout_s: float
    param_rtol: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Thresholds:
    source: str
    outputs: dict[str, OutputGate]
    hard: HardLimits
    loss: dict[str, LossTolerance]
    ddp: DdpSettings
    dataloader_max_literal_workers: int
    precision: str = "fp32"  # the precision mode (validate.precision) these thresholds were set for

    def gate(self, dtype: str) -> OutputGate:
        return self.outputs[dtype]

    def loss_tol(self, dtype: str) -> LossTolerance:
        return self.loss[dtype]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "precision": self.precision,
            "outputs": {k: v.to_dict() for k, v in self.outputs.items()},
            "hard": self.hard.to_dict(),
            "loss": {k: v.to_dict() for k, v in self.loss.items()},
            "ddp": self.ddp.to_dict(),
            "dataloader": {"max_literal_workers": self.dataloader_max_literal_workers},
        }


_GATE_FIELDS = (
    Field("cosine_min", _NUM, required=False),
    Field("max_abs", _NUM, required=False),
    Field("rel_err", _NUM, required=False),
    Field("max_rel", _NUM, required=False),
    Field("mean_rel", _NUM, required=False),
    Field("rmse", _NUM, required=False),
    Field("small_value", _NUM),
)
_HARD_FIELDS = (
    Field("cosine_min", _NUM),
    Field("max_abs", _NUM),
    Field("nan_inf", (bool,)),
)
_LOSS_FIELDS = (Field("rtol", _NUM), Field("atol", _NUM))
_DDP_FIELDS = (
    Field("nproc", (int,)),
    Field("steps", (int,)),
    Field("timeout_s", _NUM),
    Field("param_rtol", _NUM),
)
_TOP_FIELDS = (
    Field("schema", (str,), choices=("ascend-migrate/thresholds/1",)),
    Field("outputs", (dict,)),
    Field("hard", (dict,)),
    Field("loss", (dict,)),
    Field("ddp", (dict,)),
    Field("dataloader", (dict,)),
    Field("precision", (str,), required=False, choices=("fp32", "reduced"), default="fp32"),
)


def _non_negative(path: Path, where: str, rec: dict) -> None:
    """Every number finite and not negative: `.inf` would let any difference pass, `.nan` compares
    false both ways, so either would turn a gate into no gate."""
    for key, value in rec.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                raise KnowledgeError(path, f"{where}.{key}", f"must be a finite number, not {value!r}")
            if value < 0:
                raise KnowledgeError(path, f"{where}.{key}", "must not be negative")


def _per_dtype(path: Path, table: dict, key: str, fields, build):
    out = {}
    for dtype in DTYPES:
        if dtype not in table:
            raise KnowledgeError(path, f"{key}.{dtype}", "missing required key")
    for dtype, raw in table.items():
        if dtype not in DTYPES:
            raise KnowledgeError(path, f"{key}.{dtype}", f"unknown dtype (use {', '.join(DTYPES)})")
        rec = check_record(raw, fields, path, f"{key}.{dtype}")
        _non_negative(path, f"{key}.{dtype}", rec)
        out[dtype] = build(**rec)
    return out


def _check_shared(path: Path, outputs: dict[str, OutputGate], hard: dict[str, Any],
                  loss: dict[str, LossTolerance], ddp: dict[str, Any]) -> None:
    """Refuse gates of a shared skill's thresholds that would pass anything (bounds above)."""
    def at_most(value: Optional[float], limit: float, where: str) -> None:
        if value is not None and value > limit:
            raise KnowledgeError(path, where, f"{value!r} is above {limit:g}, which lets any result pass; a shared "
                                              "skill's thresholds are bounded")

    def at_least(value: Optional[float], limit: float, where: str) -> None:
        if value is not None and value < limit:
            raise KnowledgeError(path, where, f"{value!r} is below {limit:g}, which lets any result pass; a shared "
                                              "skill's thresholds are bounded")

    for dtype, gate in outputs.items():
        if all(getattr(gate, key) is None for key in _SHARED_GATES):
            raise KnowledgeError(path, f"outputs.{dtype}", "sets no gate at all; a shared skill's thresholds "
                                                           "compare the outputs")
        at_least(gate.cosine_min, SHARED_COSINE_MIN, f"outputs.{dtype}.cosine_min")
        for key in ("rel_err", "max_rel", "mean_rel"):
            at_most(getattr(gate, key), SHARED_MAX_RELATIVE, f"outputs.{dtype}.{key}")
        for key in ("max_abs", "rmse"):
            at_most(getattr(gate, key), SHARED_MAX_ABSOLUTE, f"outputs.{dtype}.{key}")
        at_most(gate.small_value, SHARED_MAX_SMALL_VALUE, f"outputs.{dtype}.small_value")
    at_least(hard["cosine_min"], SHARED_COSINE_MIN, "hard.cosine_min")
    at_most(hard["max_abs"], SHARED_MAX_ABSOLUTE, "hard.max_abs")
    if hard["nan_inf"] is not True:
        raise KnowledgeError(path, "hard.nan_inf", "must be true in a shared skill's thresholds (NaN and Inf fail)")
    for dtype, tol in loss.items():
        at_most(tol.rtol, SHARED_MAX_RELATIVE, f"loss.{dtype}.rtol")
        at_most(tol.atol, SHARED_MAX_LOSS_ATOL, f"loss.{dtype}.atol")
    at_most(ddp["param_rtol"], SHARED_MAX_RELATIVE, "ddp.param_rtol")


def load_thresholds(path: Path | str = THRESHOLDS_FILE, *, shared: bool = False) -> Thresholds:
    """Load and check a thresholds file; a malformed file raises one KnowledgeError.

    `shared`: the file came with a shared model skill; its gates are also bounded (`_check_shared`)."""
    path = Path(path)
    data = load_yaml(path)
    top = check_record(data, _TOP_FIELDS, path, "<top>")
    outputs = _per_dtype(path, top["outputs"], "outputs", _GATE_FIELDS, OutputGate)
    for dtype, gate in outputs.items():
        if gate.cosine_min is not None and gate.cosine_min > 1:
            raise KnowledgeError(path, f"outputs.{dtype}.cosine_min", "must be at most 1")
    hard = check_record(top["hard"], _HARD_FIELDS, path, "hard")
    _non_negative(path, "hard", hard)
    loss = _per_dtype(path, top["loss"], "loss", _LOSS_FIELDS, LossTolerance)
    ddp = check_record(top["ddp"], _DDP_FIELDS, path, "ddp")
    _non_negative(path, "ddp", ddp)
    for key, (low, high) in (("nproc", DDP_NPROC), ("steps", DDP_STEPS), ("timeout_s", DDP_TIMEOUT_S)):
        if not low <= ddp[key] <= high:
            raise KnowledgeError(path, f"ddp.{key}", f"{ddp[key]!r} is outside {low}..{high}")
    dl = check_record(top["dataloader"], (Field("max_literal_workers", (int,)),), path, "dataloader")
    if shared:
        _check_shared(path, outputs, hard, loss, ddp)
    return Thresholds(
        source=str(path),
        outputs=outputs,
        hard=HardLimits(**hard),
        loss=loss,
        ddp=DdpSettings(**ddp),
        dataloader_max_literal_workers=dl["max_literal_workers"],
        precision=top["precision"],
    )
