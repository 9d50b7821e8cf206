"""A hand-written validation entry, run in a child process.

The parent (`run_entry_in_child`) starts `python -m ascend_migrate.validate.entry_worker` in its
own session through `validate.child`, so an entry that calls `sys.exit`, hangs, or crashes the
interpreter ends as a reported failure of validate, never as a quiet exit of validate itself.
The worker writes its result with torch.save (tensors on the CPU) and exits 0; an error is
written as JSON beside it with a distinct exit code.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Optional

EXIT_ENTRY_ERROR = 3  # EntryError / DeviceError: the entry cannot be used as written
EXIT_RAISED = 4  # the entry raised
EXIT_EARLY = 5  # the entry called sys.exit before returning


class EntryFailed(RuntimeError):
    """The entry's child process did not return a result; the message says how it ended."""

    def __init__(self, message: str, outcome: Optional[dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.outcome = outcome or {}


def _write_error(path: Path, kind: str, message: str, where: str = "") -> None:
    path.write_text(json.dumps({"kind": kind, "message": message, "where": where}), encoding="utf-8")


def project_frame(exc: BaseException, root: Path) -> str:
    """'FILE:LINE' of the innermost traceback frame inside `root` (resolved), or ''."""
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            rel = Path(frame.filename).resolve().relative_to(root)
        except (ValueError, OSError):
            continue
        found = f"{rel.as_posix()}:{frame.lineno}"
    return found


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="ascend_migrate.validate.entry_worker")
    parser.add_argument("--spec", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--device", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--autocast")
    parser.add_argument("--precision")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    out = Path(args.out)
    error_file = out.with_name(out.name + ".error.json")
    root = Path(args.root).resolve()
    from ascend_migrate.validate.devices import DeviceError
    from ascend_migrate.validate.entry import EntryError, run_entry

    try:
        run = run_entry(args.spec, root, args.device, seed=args.seed, steps=args.steps,
                        autocast=args.autocast or None, precision=args.precision or None)
    except (EntryError, DeviceError) as exc:
        _write_error(error_file, type(exc).__name__, str(exc))
        return EXIT_ENTRY_ERROR
    except SystemExit as exc:
        _write_error(error_file, "SystemExit",
                     f"the entry ended the program with sys.exit({exc.code!r}) before returning a result",
                     project_frame(exc, root))
        return EXIT_EARLY
    except BaseException as exc:  # the entry raised: say what and where
        _write_error(error_file, type(exc).__name__, f"{type(exc).__name__}: {exc}", project_frame(exc, root))
        return EXIT_RAISED
    import torch

    from ascend_migrate.validate import devices

    payload = {"kind": run.kind, "outputs": {k: v.detach().to("cpu") for k, v in run.outputs.items()},
               "losses": [float(x) for x in run.losses], "dtype": run.dtype,
               "precision": json.dumps(run.precision, default=str), "executed": list(run.executed),
               "host": json.dumps({"device_name": devices.device_name(args.device), "versions": devices.versions()})}
    recorded = _recorded_ops(root, run.kind, args.steps)
    if recorded is not None:
        payload["operators"] = json.dumps(recorded)
    tmp = out.with_name(out.name + ".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, out)
    return 0


def _recorded_ops(root: Path, kind: str, steps: int) -> Optional[dict[str, Any]]:
    """What the emulated npu recorded in this process (NPU_STANDIN_RECORD_OPS=1), in the shape of
    validate.operators.collect; None when nothing was recording."""
    module = sys.modules.get("torch_npu")
    if module is None or not getattr(module, "__emulated__", False) or os.environ.get("NPU_STANDIN_RECORD_OPS") != "1":
        return None
    from ascend_migrate.validate.operators import site_of

    counts = module._C.record_ops(False)
    sites = module._C.record_sites(False)
    return {"counts": {op: dict(by) for op, by in counts.items()},
            "sites": {op: site_of([line.split("\t") for line in text.splitlines()], root) for op, text in sites.items()},
            "steps": steps if kind == "train" else 0, "processes": 1 if counts else 0, "statuses": ["finished"],
            "errors": [], "records": 1}


def run_entry_in_child(spec: str, root: Path, device: str, *, seed: int = 0, steps: int = 5,
                       autocast: Optional[str] = None, precision: Optional[str] = None,
                       env: Optional[dict[str, str]] = None, idle_s: Optional[float] = None,
                       cap_s: Optional[float] = None, record_ops: bool = False, ops_release: Optional[str] = None):
    """Run the entry in a child process and return its EntryRun; raise EntryError when the entry
    cannot be used, EntryFailed when it raised, exited early, hung or crashed. `record_ops` (on
    the emulated npu): the operators that reached the device are in `EntryRun.operators`."""
    import torch

    from ascend_migrate.validate import child
    from ascend_migrate.validate.entry import EntryError, EntryRun

    root = Path(root).resolve()
    with tempfile.TemporaryDirectory(prefix="ascend-migrate-entry-") as tmp:
        out = Path(tmp) / "result.pt"
        argv = [sys.executable, "-m", "ascend_migrate.validate.entry_worker", "--spec", spec, "--root", str(root),
                "--device", device, "--seed", str(seed), "--steps", str(steps), "--out", str(out)]
        if autocast:
            argv += ["--autocast", autocast]
        if precision:
            argv += ["--precision", precision]
        child_environment, _ = child.child_env(env)
        from ascend_migrate.validate.devices import EMULATED, on_device

        if device.startswith(EMULATED):  # the entry sees an npu; the child imports the emulated one
            from ascend_migrate.emulated_npu import emulated_env, ensure_built

            ensure_built()
            child_environment = emulated_env(child_environment, device_count=max(2, int(on_device(device)[4:]) + 1))
            argv[argv.index("--device") + 1] = on_device(device)
            if record_ops:
                from ascend_migrate.validate.operators import choose_release

                chosen, _how = choose_release(ops_release)
                child_environment["NPU_STANDIN_RECORD_OPS"] = "1"
                if chosen:
                    child_environment["NPU_STANDIN_OPS_RELEASE"] = chosen
        src = str(Path(__file__).resolve().parents[2])  # the toolkit itself, wherever it is installed
        child_environment["PYTHONPATH"] = os.pathsep.join(
            p for p in (src, child_environment.get("PYTHONPATH", "")) if p)
        outcome = child.run_child(argv, cwd=root, env=child_environment,
                                  idle_s=idle_s or child.DEFAULT_IDLE_S, cap_s=cap_s or child.DEFAULT_CAP_S)
        error_file = out.with_name(out.name + ".error.json")
        if error_file.is_file():
            data = json.loads(error_file.read_text(encoding="utf-8"))
            where = f" (at {data['where']})" if data.get("where") else ""
            if outcome.returncode == EXIT_ENTRY_ERROR:
                raise EntryError(data["message"])
            what = data["message"] if data.get("kind") == "SystemExit" else f"raised {data['message']}"
            raise EntryFailed(f"running {spec} on {device}: {what}{where}", outcome.to_dict())
        if not outcome.ok or not out.is_file():
            what = outcome.describe()
            if outcome.ok:
                what += " without returning a result (the entry ended the process itself, e.g. os._exit)"
            raise EntryFailed(f"running the entry {spec} on {device}: {what}", outcome.to_dict())
        payload = torch.load(out, map_location="cpu", weights_only=True)
    return EntryRun(kind=payload["kind"], outputs=dict(payload["outputs"]), losses=list(payload["losses"]),
                    dtype=payload["dtype"], precision=json.loads(payload["precision"]),
                    executed=list(payload["executed"]), host=json.loads(payload["host"]),
                    operators=json.loads(payload["operators"]) if "operators" in payload else None)


if __name__ == "__main__":
    sys.exit(main())
