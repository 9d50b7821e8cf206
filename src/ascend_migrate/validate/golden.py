"""The golden file: reference outputs and loss trajectory, portable between hosts.

Format "ascend-migrate/golden/1": one file written with torch.save (zip container) holding a
dict of plain types, loadable with torch.load(path, map_location="cpu", weights_only=True):

    {"format": "ascend-migrate/golden/1",
     "meta": "<JSON text>",           # entry, kind, device, device_name, dtype, autocast, seed,
                                      # steps, versions, created (UTC), output names/shapes/dtypes
     "outputs": {name: CPU tensor},   # in the dtype the run produced
     "losses": [float, ...]}          # one per step (empty for model entries)

Tensors are always on the CPU, so a file captured on a GPU host opens on an NPU host.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "ascend-migrate/golden/1"


class GoldenError(ValueError):
    pass


@dataclass
class Golden:
    meta: dict[str, Any]
    outputs: dict[str, Any] = field(default_factory=dict)
    losses: list[float] = field(default_factory=list)


def non_finite(golden: Golden) -> list[str]:
    """What in the golden run is NaN or infinite (a reference like that proves nothing: an
    all-inf port would match it)."""
    import math

    import torch

    problems = [f"loss at step {i} is {x!r}" for i, x in enumerate(golden.losses) if not math.isfinite(float(x))]
    for name, tensor in golden.outputs.items():
        t = torch.as_tensor(tensor)
        if (t.is_floating_point() or t.is_complex()) and t.numel():
            bad = int((~torch.isfinite(t)).sum())
            if bad:
                problems.append(f"output {name!r} has {bad} NaN/Inf value(s)")
    return problems


def save_golden(path: Path | str, golden: Golden) -> Path:
    """Write the golden file; a run with a NaN or infinite loss or output raises GoldenError
    and nothing is written."""
    import torch

    problems = non_finite(golden)
    if problems:
        raise GoldenError("the reference run is not finite (" + "; ".join(problems[:3]) +
                          (f"; {len(problems) - 3} more" if len(problems) > 3 else "") +
                          "); no golden file written: fix the reference run (seed, learning rate, dtype) first")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": FORMAT,
        "meta": json.dumps(golden.meta, sort_keys=True),
        "outputs": {k: v.detach().to("cpu").contiguous() for k, v in golden.outputs.items()},
        "losses": [float(x) for x in golden.losses],
    }
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)
    return path


def load_golden(path: Path | str) -> Golden:
    import torch

    path = Path(path)
    if not path.is_file():
        raise GoldenError(f"golden file not found: {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise GoldenError(f"{path}: not a golden file ({type(exc).__name__}: {exc})") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise GoldenError(f"{path}: not a golden file (format is not {FORMAT})")
    try:
        meta = json.loads(payload["meta"])
        outputs = dict(payload["outputs"])
        losses = [float(x) for x in payload["losses"]]
    except Exception as exc:
        raise GoldenError(f"{path}: malformed golden file ({type(exc).__name__}: {exc})") from exc
    return Golden(meta=meta, outputs=outputs, losses=losses)
