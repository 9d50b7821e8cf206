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


def save_golden(path: Path | str, golden: Golden) -> Path:
    import torch

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
