"""Validation entries: the user-given function that `capture`, `compare` and the DDP smoke run
call.

An entry is named `FILE.py:FUNCTION` (a path, relative to the project root) or
`package.module:FUNCTION` (importable with the project root on sys.path). It is called with
whichever of these keyword arguments its signature accepts:

    device: str   "cpu", "cuda:0", "npu:0", ...
    steps:  int   number of training steps (train entries)
    seed:   int   the seed; the runner has already seeded every RNG with it

and returns one of:

    (model, inputs)        a model entry: the runner moves both to the device, calls
                           model.eval(), and runs model(*inputs) (or model(**inputs) for a dict,
                           model(inputs) for a single tensor) under torch.no_grad()
    [loss, loss, ...]      a train entry: one float per step
    {"losses": [...], "outputs": {name: tensor}, "model": module, "dtype": "bf16"}
                           a train entry with optional extra outputs to compare (a dict of
                           tensors, one tensor, or a list of tensors), the trained
                           model (its parameters are checked in the DDP smoke run) and the
                           precision it trains in (selects the thresholds)

Build weights and inputs on the CPU (or load them) so that one seed gives the same numbers on
every device; the runner moves them.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import itertools
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from ascend_migrate.validate import devices

_counter = itertools.count()


class EntryError(RuntimeError):
    """The entry cannot be loaded, called, or returned something the runner cannot use."""


def split_spec(spec: str) -> tuple[str, str]:
    target, sep, func = (spec or "").rpartition(":")
    if not sep or not target or not func or not func.isidentifier():
        raise EntryError(f"invalid entry {spec!r}: use FILE.py:FUNCTION or package.module:FUNCTION")
    return target, func


def _is_file_target(target: str) -> bool:
    return target.endswith(".py") or "/" in target or os.sep in target


@contextlib.contextmanager
def project_imports(root: Path) -> Iterator[None]:
    """Make the project importable for the block, then forget its modules and restore sys.path
    and the working directory, so two trees with the same module names do not mix."""
    root = root.resolve()
    saved_path = list(sys.path)
    saved_modules = set(sys.modules)
    saved_cwd = os.getcwd()
    sys.path.insert(0, str(root))
    try:
        os.chdir(root)
        yield
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved_modules:
            mod = sys.modules.get(name)
            where = getattr(mod, "__file__", None) or ""
            try:
                inside = bool(where) and Path(where).resolve().is_relative_to(root)
            except (OSError, ValueError):
                inside = False
            if inside or name.startswith("_ascend_migrate_entry_"):
                sys.modules.pop(name, None)


TORCH_NPU_MISSING = (
    "this tree imports torch_npu without a guard, as a transfer-style port does (its contract is to run "
    "on an Ascend NPU, and it is never shimmed): validate it on an NPU host where torch_npu imports "
    "(`--device npu:0`), or port with `ascend-migrate migrate --style agnostic` to validate on a CPU "
    "or CUDA host")


def import_failure(where: str, exc: BaseException) -> str:
    """The message for an entry module that failed to import; says what to do when the cause is
    a missing torch_npu (a transfer-style port on a host without the Ascend stack)."""
    message = f"importing {where} failed: {type(exc).__name__}: {exc}"
    missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    if missing and (missing == "torch_npu" or missing.startswith("torch_npu.")):
        message += f"; {TORCH_NPU_MISSING}"
    return message


def load_entry(spec: str, root: Path) -> Callable[..., Any]:
    """Import the entry function (call inside `project_imports(root)`)."""
    target, func = split_spec(spec)
    if _is_file_target(target):
        path = Path(target)
        if not path.is_absolute():
            path = root / path
        if not path.is_file():
            raise EntryError(f"entry file not found: {path}")
        sys.path.insert(0, str(path.parent.resolve()))
        name = f"_ascend_migrate_entry_{next(_counter)}_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise EntryError(f"cannot load {path} as a Python module")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            raise EntryError(import_failure(str(path), exc)) from exc
    else:
        try:
            module = importlib.import_module(target)
        except Exception as exc:
            raise EntryError(import_failure(target, exc)) from exc
    fn = getattr(module, func, None)
    if not callable(fn):
        raise EntryError(f"{target} has no function {func!r}")
    return fn


def call_entry(fn: Callable[..., Any], **available: Any) -> Any:
    """Call with the keyword arguments the function accepts; fail clearly on required others."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn(**available)
    kwargs: dict[str, Any] = {}
    accepts_var_kw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    for name, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if name in available:
            kwargs[name] = available[name]
        elif param.default is param.empty:
            raise EntryError(
                f"entry parameter {name!r} has no default; entries may take only "
                f"{', '.join(sorted(available))}"
            )
    if accepts_var_kw:
        for name, value in available.items():
            kwargs.setdefault(name, value)
    return fn(**kwargs)


def flatten_outputs(obj: Any, prefix: str = "output") -> dict[str, Any]:
    """Name every tensor in a (nested) model output: output, output[0], output.logits, ..."""
    import torch

    out: dict[str, Any] = {}

    def walk(value: Any, name: str) -> None:
        if isinstance(value, torch.Tensor):
            out[name] = value
        elif isinstance(value, dict) or (hasattr(value, "items") and hasattr(value, "keys")):
            for key, item in value.items():
                walk(item, f"{name}.{key}")
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{name}[{i}]")

    walk(obj, prefix)
    return out


def _to_device(value: Any, device: str) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(v, device) for v in value)
    return value


@dataclass
class EntryRun:
    kind: str  # "model" | "train"
    outputs: dict[str, Any] = field(default_factory=dict)  # name -> CPU tensor
    losses: list[float] = field(default_factory=list)
    dtype: Optional[str] = None  # precision the entry says it runs in
    model: Any = None  # trained model, when a train entry returns one
    precision: Optional[dict[str, Any]] = None  # switches in effect (validate.precision.snapshot)
    executed: list[str] = field(default_factory=list)  # project files whose code ran (validate.executed)
    host: dict[str, Any] = field(default_factory=dict)  # device_name and versions, from the process that ran it
    operators: Optional[dict[str, Any]] = None  # recorded on the emulated npu (validate.operators.collect)


def interpret_result(result: Any, device: str, autocast: Optional[str]) -> EntryRun:
    """Turn what the entry returned into outputs and losses (runs the model for model entries)."""
    import torch

    if (
        isinstance(result, (tuple, list))
        and len(result) == 2
        and isinstance(result[0], torch.nn.Module)
    ):
        model, inputs = result
        model = model.to(device)
        model.eval()
        inputs = _to_device(inputs, device)
        with torch.no_grad(), devices.autocast(device, autocast):
            if isinstance(inputs, dict):
                raw = model(**inputs)
            elif isinstance(inputs, (tuple, list)):
                raw = model(*inputs)
            else:
                raw = model(inputs)
        devices.synchronize(device)
        outputs = {k: v.detach().to("cpu") for k, v in flatten_outputs(raw).items()}
        if not outputs:
            raise EntryError("the model returned no tensor")
        return EntryRun("model", outputs=outputs, dtype=autocast, model=model)
    if isinstance(result, (list, tuple)) and all(_is_number(x) for x in result):
        return EntryRun("train", losses=[_loss(x) for x in result], dtype=autocast)
    if isinstance(result, dict):
        unknown = set(result) - {"losses", "outputs", "model", "dtype"}
        if unknown:
            raise EntryError(f"entry returned unknown key(s): {', '.join(sorted(unknown))}")
        losses = [_loss(x) for x in (result.get("losses") or [])]
        raw_outputs = result.get("outputs")
        if raw_outputs is None:
            raw_outputs = {}
        # a tensor, a list/tuple of tensors or a (nested) dict: every tensor gets a name
        prefix = "" if isinstance(raw_outputs, dict) else "output"
        outputs = {
            (k.lstrip(".") or "output"): v.detach().to("cpu")
            for k, v in flatten_outputs(raw_outputs, prefix=prefix).items()
        }
        if not losses and not outputs:
            raise EntryError("entry returned neither losses nor outputs")
        return EntryRun("train", outputs=outputs, losses=losses,
                        dtype=result.get("dtype") or autocast, model=result.get("model"))
    raise EntryError(
        "entry must return (model, inputs), a list of per-step losses, or a dict with "
        f"'losses'/'outputs'; got {type(result).__name__}"
    )


def _is_number(x: Any) -> bool:
    try:
        import torch

        if isinstance(x, torch.Tensor):
            return x.numel() == 1
    except ImportError:  # pragma: no cover
        pass
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _loss(x: Any) -> float:
    if not _is_number(x):
        raise EntryError(f"a loss must be a number or a one-element tensor, got {type(x).__name__}")
    return float(x.item() if hasattr(x, "item") else x)


def run_entry(
    spec: str,
    root: Path,
    device: str,
    seed: int = 0,
    steps: int = 5,
    autocast: Optional[str] = None,
    precision: Optional[str] = None,
) -> EntryRun:
    """Load and run the entry on `device` under `seed`, deterministic settings and the precision
    switches of `precision` (validate.precision: fp32 by default), recorded in the run."""
    from ascend_migrate.validate.precision import changed_since, pinned

    root = Path(root).resolve()
    devices.prepare_device(device)
    from ascend_migrate.validate.executed import record_executed

    with project_imports(root), record_executed(root) as executed:
        fn = load_entry(spec, root)
        devices.seed_everything(seed)
        with devices.deterministic(device), pinned(precision) as record:
            result = call_entry(fn, device=device, steps=steps, seed=seed)
            run = interpret_result(result, device, autocast)
            # an entry that sets a switch itself ran under its own value: say so in the record
            run.precision = {**record, "changed_by_entry": changed_since(record)}
    run.executed = executed.files()
    return run


def finite(values: list[float]) -> bool:
    return all(math.isfinite(v) for v in values)
