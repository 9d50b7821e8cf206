"""The environment section of the report: `ascend-migrate check --device DEV --json`, run in a
subprocess so that a broken device stack cannot take the validation run down."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

_SRC_DIR = str(Path(__file__).resolve().parents[2])  # the folder holding this ascend_migrate package


# Started with `-c`: sys.path[0] (the working folder) is dropped and this package's folder is
# put first unless the interpreter already finds it (installed), so no folder of the validated
# tree, nor a stdlib-shadowing one, comes first.
_BOOT = ("import sys; src = sys.argv.pop(1); sys.path.pop(0); "
         "sys.path.insert(0, src) if src not in sys.path else None; "
         "from ascend_migrate.cli import main; main()")


def collect_environment(device: str, timeout_s: float = 120.0) -> dict[str, Any]:
    """Run the host check in a subprocess. It runs in an empty folder and imports this package
    from where this process found it: a module of the validated tree (say its own
    `ascend_migrate/` or `torch/`) can never stand in for ours."""
    cmd = [sys.executable, "-c", _BOOT, _SRC_DIR, "check", "--device", device, "--json"]
    try:
        with tempfile.TemporaryDirectory(prefix="ascend-migrate-check-") as empty:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd=empty)
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
