"""Precision modes: pin, record and compare the switches that change fp32 results.

CUDA computes cuDNN convolutions in TF32 by default and torch_npu computes convolutions in HF32
by default; both differ from true fp32 by more than an fp32 relative tolerance. A golden and a
run are comparable at fp32 thresholds only when both ran with the same, known switches. The
switches, their defaults and sources are data (knowledge/precision_switches.yaml); this module
pins them for a run (`pinned`), records what was in effect (`snapshot`), and compares two
records (`mismatches`, pure: no torch needed).
"""
from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from ascend_migrate.knowledge.loader import DATA_DIR, Field, KnowledgeError, check_record, load_yaml

SWITCHES_FILE = DATA_DIR / "precision_switches.yaml"
MODES = ("fp32", "reduced")
DEFAULT_MODE = "fp32"
_CALL_SWITCH = "use_deterministic_algorithms"  # a setter function, read back with are_..._enabled()


@dataclass(frozen=True)
class Switch:
    id: str
    path: str
    device: str
    default: bool
    fp32: bool
    reduced: bool
    affects: str
    source: str

    def value_for(self, mode: str) -> bool:
        return self.fp32 if mode == "fp32" else self.reduced


_FIELDS = (
    Field("id"), Field("path"), Field("device", choices=("cuda", "npu", "all")),
    Field("default", (bool,)), Field("fp32", (bool,)), Field("reduced", (bool,)),
    Field("affects"), Field("source"),
)


@functools.lru_cache(maxsize=4)
def load_switches(path: Path | str = SWITCHES_FILE) -> tuple[Switch, ...]:
    """The switches of the knowledge base, checked; a malformed file raises KnowledgeError."""
    path = Path(path)
    data = load_yaml(path)
    top = check_record(data, (Field("schema", choices=("ascend-migrate/precision-switches/1",)),
                              Field("modes", (dict,)), Field("switches", (list,))), path, "<top>")
    if set(top["modes"]) != set(MODES):
        raise KnowledgeError(path, "modes", f"must name exactly {', '.join(MODES)}")
    out = []
    for index, raw in enumerate(top["switches"]):
        rec = check_record(raw, _FIELDS, path, f"switches[{index}]")
        out.append(Switch(**rec))
    if len({s.id for s in out}) != len(out):
        raise KnowledgeError(path, "switches", "duplicate id")
    return tuple(out)


def check_mode(mode: Optional[str]) -> str:
    mode = mode or DEFAULT_MODE
    if mode not in MODES:
        raise ValueError(f"unknown precision mode {mode!r}: use {' or '.join(MODES)}")
    return mode


def _owner(torch: Any, dotted: str) -> tuple[Any, str]:
    """The object holding the last attribute of `dotted` under torch, or (None, name) if absent."""
    *parents, name = dotted.split(".")
    obj = torch
    for part in parents:
        obj = getattr(obj, part, None)
        if obj is None:
            return None, name
    return obj, name


def _read(torch: Any, switch: Switch) -> Optional[bool]:
    if switch.path == _CALL_SWITCH:
        return bool(torch.are_deterministic_algorithms_enabled())
    owner, name = _owner(torch, switch.path)
    if owner is None or not hasattr(owner, name):
        return None  # not in this build (torch.npu without torch_npu)
    return bool(getattr(owner, name))


def _write(torch: Any, switch: Switch, value: bool) -> None:
    if switch.path == _CALL_SWITCH:
        torch.use_deterministic_algorithms(value, warn_only=True)
        return
    owner, name = _owner(torch, switch.path)
    if owner is not None and hasattr(owner, name):
        setattr(owner, name, value)


def snapshot(mode: Optional[str] = None) -> dict[str, Any]:
    """What is in effect now: {"mode": mode, "switches": {id: bool or None when absent}}."""
    import torch

    return {"mode": mode, "switches": {s.id: _read(torch, s) for s in load_switches()}}


@contextlib.contextmanager
def pinned(mode: Optional[str] = None) -> Iterator[dict[str, Any]]:
    """Set every switch present in this torch build to `mode`'s value; restore on exit.

    Yields the record of what was in effect inside the block (taken after pinning)."""
    import torch

    mode = check_mode(mode)
    switches = load_switches()
    saved = {s.id: _read(torch, s) for s in switches}
    saved_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    try:
        for s in switches:
            if saved[s.id] is not None:
                _write(torch, s, s.value_for(mode))
        yield snapshot(mode)
    finally:
        for s in switches:
            if saved[s.id] is None:
                continue
            if s.path == _CALL_SWITCH:
                torch.use_deterministic_algorithms(saved[s.id], warn_only=saved_warn)
            else:
                _write(torch, s, saved[s.id])


def changed_since(record: dict[str, Any]) -> dict[str, Any]:
    """Switches whose value now differs from `record` (set by the code that ran in between)."""
    now = snapshot(record.get("mode"))["switches"]
    return {k: now[k] for k in sorted(now) if now[k] != (record.get("switches") or {}).get(k)}


def mismatches(golden: Optional[dict[str, Any]], run: Optional[dict[str, Any]]) -> list[str]:
    """Differences between the golden's record and the run's, one sentence each.

    A switch counts only where both sides recorded a value (a CUDA golden has no HF32 switch);
    a golden without a record cannot be shown to match, which is also a difference."""
    if not isinstance(golden, dict) or not isinstance(golden.get("switches"), dict):
        return ["the golden file records no precision switches (captured before they were recorded); "
                "capture it again with `ascend-migrate validate capture`"]
    run = run or {}
    out = []
    if golden.get("mode") != run.get("mode"):
        out.append(f"precision mode: golden {golden.get('mode')!r}, run {run.get('mode')!r}")
    theirs = run.get("switches") or {}
    for key in sorted(golden["switches"]):
        g, r = golden["switches"][key], theirs.get(key)
        if g is not None and r is not None and bool(g) != bool(r):
            out.append(f"{key}: golden {g}, run {r}")
    return out


def thresholds_mismatch(assumed: Optional[str], mode: Optional[str]) -> Optional[str]:
    """A sentence when the thresholds were set for another precision mode than the run's."""
    if assumed and mode and assumed != mode:
        return (f"the thresholds assume precision mode {assumed!r}, the run used {mode!r}; "
                f"pass --thresholds with a file made for {mode!r}")
    return None
