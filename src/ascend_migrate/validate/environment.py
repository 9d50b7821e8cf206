"""The environment section of the report: `ascend-migrate check --device DEV --json`, run in a
subprocess so that a broken device stack cannot take the validation run down."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def collect_environment(device: str, timeout_s: float = 120.0) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "ascend_migrate", "check", "--device", device, "--json"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"`ascend-migrate check` did not finish within {timeout_s:g} s"}
    except OSError as exc:
        return {"error": f"cannot run `ascend-migrate check`: {exc}"}
    out = (proc.stdout or "").strip()
    try:
        data = json.loads(out)
    except ValueError:
        err = (proc.stderr or out or "").strip().splitlines()
        tail = err[-1] if err else ""
        return {"error": f"`ascend-migrate check --json` gave no JSON (exit {proc.returncode}): {tail}"[:500]}
    if not isinstance(data, dict):
        return {"error": "`ascend-migrate check --json` gave JSON that is not an object", "value": data}
    return data
