"""transfer_to_npu for the emulated npu, driven by ascend-migrate's coverage data.

Importing it patches torch the way the chosen torch_npu release's transfer_to_npu does, as far
as our knowledge base records it (`ascend_migrate.knowledge.coverage`): the torch.cuda overlays,
the functions whose device arguments are rewritten ("cuda" -> "npu"), and the explicit
assignments (Tensor.cuda -> Tensor.npu, init_process_group's "nccl" -> "hccl", ...). Nothing is
listed here by hand; what the coverage names but the emulated npu cannot reproduce (profiler,
Inductor internals, NPU-only modules) is recorded in SKIPPED with the reason, and what was done
in APPLIED, so a test can hold the two against the coverage file.
"""
from __future__ import annotations

import functools
import importlib
import re
import sys
from typing import Any, Callable, Optional

import torch

import torch_npu
from ascend_migrate.knowledge.coverage import Coverage, load_coverage

COVERAGE: Coverage = load_coverage(torch_npu.__version__)
APPLIED: dict[str, str] = {}
SKIPPED: dict[str, str] = {}

_DEVICE_KWARGS = frozenset(COVERAGE.device_kwargs or ())
# Attributes whose positional int means a device index (facts: only to / to_empty).
_INT_IS_DEVICE = frozenset({"to", "to_empty"})
# Modules patched only when the program has already imported them: importing Inductor or Dynamo
# takes seconds and changes nothing a port can observe until it uses them.
_LAZY_PREFIXES = ("torch._dynamo", "torch._inductor")


# ---------------------------------------------------------------------------------- rewriting
def _npu_value(value: Any, replace_int: bool) -> Any:
    if isinstance(value, str) and "cuda" in value:
        return value.replace("cuda", "npu")
    if isinstance(value, torch.device) and value.type == "cuda":
        return torch.device("npu", value.index) if value.index is not None else torch.device("npu")
    if isinstance(value, dict):
        return {_npu_value(k, replace_int): _npu_value(v, replace_int) for k, v in value.items()}
    if replace_int and isinstance(value, int) and not isinstance(value, bool):
        return f"npu:{value}"
    return value


def _wrapper_cuda(fn: Callable, replace_int: bool = False) -> Callable:
    """Device arguments that say cuda say npu instead."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        args = tuple(_npu_value(a, replace_int) for a in args)
        for key in list(kwargs):
            if key in _DEVICE_KWARGS:
                value = kwargs[key]
                kwargs[key] = f"npu:{value}" if isinstance(value, int) and not isinstance(value, bool) else _npu_value(value, False)
            elif key == "device_ids" and isinstance(kwargs[key], (list, tuple)):
                kwargs[key] = type(kwargs[key])(_npu_value(v, False) for v in kwargs[key])
        return fn(*args, **kwargs)

    wrapper.__emulated_npu_wrapped__ = fn
    return wrapper


def _hccl_value(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("nccl", "hccl").replace("cuda", "npu")
    return value


def _wrapper_hccl(fn: Callable) -> Callable:
    """Backend names that say nccl say hccl instead."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        args = tuple(_hccl_value(a) for a in args)
        if "backend" in kwargs:
            kwargs["backend"] = _hccl_value(kwargs["backend"])
        return fn(*args, **kwargs)

    wrapper.__emulated_npu_wrapped__ = fn
    return wrapper


def _patch_is_autocast_enabled(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def wrapper(device_type: Optional[str] = None) -> bool:
        return fn("npu" if device_type in (None, "cuda") else device_type)

    return wrapper


def _patch_set_autocast_enabled(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def wrapper(*args: Any) -> None:
        if len(args) == 1 and isinstance(args[0], bool):
            args = ("npu", args[0])
        return fn(*_npu_args(args))

    return wrapper


def _npu_args(args: tuple) -> tuple:
    return tuple(_npu_value(a, False) for a in args)


_WRAPPERS: dict[str, Callable[[Callable], Callable]] = {
    "_wrapper_cuda": _wrapper_cuda,
    "_wrapper_hccl": _wrapper_hccl,
    "_patch_is_autocast_enabled": _patch_is_autocast_enabled,
    "_patch_set_autocast_enabled": _patch_set_autocast_enabled,
}


def _jit_script(obj: Any = None, *args: Any, **kwargs: Any) -> Any:
    return obj


def _jit_script_method(fn: Callable) -> Callable:
    return fn


def _no_triton(*args: Any, **kwargs: Any) -> bool:
    return False


def _npu_type(*args: Any, **kwargs: Any) -> str:
    return "npu"


def _available_device_type() -> Optional[str]:
    return "npu" if torch.npu.is_available() else None


# Replacement values the coverage names, as the emulated npu implements them.
_REPLACEMENTS: dict[str, Any] = {
    "_jit_script": _jit_script,
    "_jit_script_method": _jit_script_method,
    "_patch_has_triton": _no_triton,
    "_get_npu_type": _npu_type,
    "_patch_get_available_device_type": _available_device_type,
}
# torch_npu module paths the coverage names that live elsewhere in the emulated npu.
_SOURCE_ALIASES = {
    "torch_npu.npu.random": "torch_npu.npu",
    "torch_npu.npu.amp.autocast_mode": "torch_npu.npu.amp",
    "torch_npu.npu.amp.grad_scaler": "torch_npu.npu.amp",
    "torch_npu.npu.amp.common": None,
}


# ---------------------------------------------------------------------------------- resolving
def _resolve(dotted: str, *, import_lazy: bool = True) -> Any:
    """The object at `dotted` (modules imported as needed); AttributeError if absent."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        if module_name in sys.modules:
            obj = sys.modules[module_name]
            break
        if not import_lazy and module_name.startswith(_LAZY_PREFIXES):
            continue
        try:
            obj = importlib.import_module(module_name)
            break
        except ImportError:
            continue
    else:
        raise AttributeError(dotted)
    for part in parts[cut:]:
        obj = getattr(obj, part)
    return obj


def _owner(target: str) -> tuple[Any, str]:
    owner_name, _, attr = target.rpartition(".")
    if owner_name.startswith(_LAZY_PREFIXES) and owner_name not in sys.modules:
        raise LookupError("the program has not imported it (patched here only once imported)")
    try:
        return _resolve(owner_name, import_lazy=False), attr
    except AttributeError as exc:
        raise LookupError(f"{owner_name} does not exist in the emulated npu") from exc


def _condition_holds(condition: Optional[str]) -> bool:
    if not condition:
        return True
    match = re.fullmatch(r"hasattr\(([\w.]+),\s*'(\w+)'\)", condition.strip())
    if not match:
        return False
    try:
        return hasattr(_resolve(match[1]), match[2])
    except AttributeError:
        return False


# ---------------------------------------------------------------------------------- applying
def _apply_overlays() -> None:
    for overlay in COVERAGE.overlays:
        if not _condition_holds(overlay.condition):
            SKIPPED[overlay.target] = f"condition false: {overlay.condition}"
            continue
        source_name = _SOURCE_ALIASES.get(overlay.source, overlay.source)
        try:
            target = _resolve(overlay.target)
            source = _resolve(source_name) if source_name else None
        except AttributeError:
            SKIPPED[overlay.target] = f"{overlay.source} has no emulated module"
            continue
        if source is None:
            SKIPPED[overlay.target] = f"{overlay.source} has no emulated module"
            continue
        # "module" overlays replace a torch module; replacing modules breaks torch's own imports,
        # so the emulated npu copies the public names both modules have instead.
        names = overlay.names if overlay.names is not None else [
            n for n in getattr(source, "__all__", ()) if hasattr(target, n)]
        for name in names:
            qual = f"{overlay.target}.{name}"
            if hasattr(source, name):
                setattr(target, name, getattr(source, name))
                APPLIED[qual] = f"overlay from {overlay.source}"
            else:
                SKIPPED[qual] = f"{overlay.source}.{name} is NPU-only; the emulated npu does not provide it"


def _apply_wrapped() -> None:
    for owner_name, names in sorted(COVERAGE.wrapped.items()):
        try:
            owner = _resolve(owner_name, import_lazy=not owner_name.startswith(_LAZY_PREFIXES))
        except AttributeError:
            for name in names:
                SKIPPED[f"{owner_name}.{name}"] = f"{owner_name} does not exist in the emulated npu"
            continue
        for name in sorted(names):
            qual = f"{owner_name}.{name}"
            original = getattr(owner, name, None)
            if original is None:
                SKIPPED[qual] = "not in this torch"
                continue
            setattr(owner, name, _wrapper_cuda(original, replace_int=name in _INT_IS_DEVICE))
            APPLIED[qual] = "device arguments cuda -> npu"


def _apply_patches() -> None:
    for target, patch in sorted(COVERAGE.patches.items()):
        if not _condition_holds(patch.condition):
            SKIPPED[target] = f"condition false: {patch.condition}"
            continue
        try:
            owner, attr = _owner(target)
        except LookupError as exc:
            SKIPPED[target] = str(exc)
            continue
        if patch.kind == "wrap":
            unknown = [w for w in patch.wrappers if w not in _WRAPPERS]
            if unknown or not patch.wrappers:
                SKIPPED[target] = f"wrapper {', '.join(unknown) or patch.value} not reproduced"
                continue
            fn = getattr(owner, attr, None)
            if fn is None:
                SKIPPED[target] = "not in this torch"
                continue
            for name in reversed(patch.wrappers):
                fn = _WRAPPERS[name](fn)
            setattr(owner, attr, fn)
            APPLIED[target] = "wrapped: " + ", ".join(patch.wrappers)
        elif patch.kind == "alias":
            if patch.value == target:
                APPLIED[target] = "alias of itself"
                continue
            try:
                value = _resolve(patch.value)
            except AttributeError:
                SKIPPED[target] = f"{patch.value} has no emulated counterpart"
                continue
            try:
                setattr(owner, attr, value)
            except (AttributeError, TypeError) as exc:
                SKIPPED[target] = f"cannot assign: {exc}"
                continue
            APPLIED[target] = f"alias of {patch.value}"
        elif patch.kind == "replace" and patch.value in _REPLACEMENTS:
            setattr(owner, attr, _REPLACEMENTS[patch.value])
            APPLIED[target] = f"replaced by {patch.value}"
        else:
            SKIPPED[target] = f"replacement {patch.value} not reproduced"


def _apply() -> None:
    _apply_overlays()
    _apply_wrapped()
    _apply_patches()


_apply()
