"""Which operators of a run will fall back to the CPU on the NPU host: shared by `ops` and `validate`.

The emulated npu records every operator that reaches it, with its input dtypes and the Python
frames it was first dispatched from; the harness writes that per process (`ops-<pid>.json`).
`collect` sums the records, `analyse` looks each operator up in the NPU operator data of a
torch_npu release (`knowledge.npu_ops`), and `section` is what the validation report, the
terminal summary and the per-model skill show:

    {"checked": true, "release", "release_choice", "release_known", "op_data", "steps",
     "processes", "fallback": [{op, count, per_step, dtypes, dispatched_as, cpu_kernel, fails?,
     site?}] | None, "cpu_cannot_run": [op], "supported": n, "wide_dtypes": [{op, dtypes, count}],
     "not_checked", "notes"}
    {"checked": false, "why": ...}   when the run did not use the emulated npu, or it was off
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

WIDE_DTYPES = ("Double", "ComplexFloat", "ComplexDouble", "ComplexHalf")
OFF_REASON = "turned off (--no-operators)"


def choose_release(requested: Optional[str]) -> tuple[Optional[str], str]:
    """(data release to use or None, how it was chosen)."""
    from ascend_migrate.knowledge import npu_ops
    from ascend_migrate.knowledge.coverage import parse_version

    versions = npu_ops.ops_versions()
    if requested is None:
        return (versions[-1], "newest release with data") if versions else (None, "no operator data")
    if requested in versions:
        return requested, "exact"
    try:
        want = parse_version(requested)
    except ValueError:
        return None, f"not a torch_npu version: {requested}"
    if npu_ops.older_than_data(requested):
        return None, f"older than our data (oldest: {versions[0]})"
    builds = [v for v in versions if parse_version(v)[0] == want[0]]
    line = [v for v in versions if parse_version(v)[0][:2] == want[0][:2]]
    specific = want[2] >= 0 or want[1][0] == 0  # a post or pre build names one build exactly
    if builds and not specific:
        return builds[-1], f"newest {requested} build with data"
    if line and len(requested.split(".")) == 2:  # '2.6': the newest of the line
        return line[-1], f"newest {requested} release with data"
    near = ", ".join(builds or line) or ", ".join(versions)
    return None, f"not in our data (releases with data near it: {near})"


def has_cpu_kernel(op: str) -> Optional[bool]:
    try:
        import torch

        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(op, "CPU")) or bool(
            torch._C._dispatch_has_kernel_for_dispatch_key(op, "CompositeExplicitAutograd"))
    except Exception:
        return None


def analyse(counts: dict[str, dict[str, int]], release: Optional[str], steps: Optional[int],
            sites: Optional[dict[str, str]] = None) -> dict[str, Any]:
    """The operator sections from the recorded {op: {input dtypes: count}} (and, per op, where
    it was first dispatched)."""
    from ascend_migrate.knowledge import npu_ops

    ops = npu_ops.load_ops(release) if release else None
    per_step = steps if steps else None
    fallback: dict[str, dict[str, Any]] = {}
    supported: list[dict[str, Any]] = []
    wide: list[dict[str, Any]] = []
    for op in sorted(counts):
        by_dtype = counts[op]
        total = sum(by_dtype.values())
        dtypes = sorted({d for key in by_dtype for d in key.split(",") if d})
        if any(d in WIDE_DTYPES for d in dtypes):
            wide.append({"op": op, "dtypes": [d for d in dtypes if d in WIDE_DTYPES], "count": total})
        if ops is None:
            continue
        shown, ok = ops.judge(op)
        if ok:
            supported.append({"op": op, "count": total, "paths": ops.paths(op) or ops.paths(npu_ops.structured_delegates().get(op[6:], op)) or []})
            continue
        entry = fallback.setdefault(shown, {"op": shown, "count": 0, "dispatched_as": [], "dtypes": []})
        entry["count"] += total
        entry["dispatched_as"].append(op)
        entry["dtypes"] = sorted(set(entry["dtypes"]) | set(dtypes))
        if sites and op in sites and "site" not in entry:
            entry["site"] = sites[op]
    rows = []
    for entry in sorted(fallback.values(), key=lambda e: (-e["count"], e["op"])):
        if per_step:
            entry["per_step"] = round(entry["count"] / per_step, 2)
        cpu = has_cpu_kernel(entry["dispatched_as"][0])
        entry["cpu_kernel"] = cpu
        if cpu is False:
            entry["fails"] = "the CPU has no kernel for it either: the run fails on the NPU host"
        rows.append(entry)
    return {"fallback": rows if ops is not None else None, "supported": supported, "wide_dtypes": wide,
            "op_data": dict(ops.source) if ops is not None else None}


def site_of(frames: list[list[str]], tree: Optional[Path]) -> str:
    """'FILE:LINE (function)' of the innermost frame inside the project copy `tree` (the path
    relative to it; no function at a module's top level); 'backward (autograd)' when no Python
    code dispatched it; '' when no frame of the project is among the frames kept."""
    if not frames:
        return "backward (autograd)"
    bases = {str(tree) + "/", str(Path(tree).resolve()) + "/"} if tree is not None else set()
    for frame in frames:
        if len(frame) < 3:
            continue
        file, line, func = frame[0], frame[1], frame[2]
        within = ""
        for base in bases:
            if file.startswith(base):
                within = file[len(base):]
        if not within and bases and not file.startswith(("/", "<")):  # relative to the folder it ran in
            within = file
        if within:
            return f"{within}:{line}" + ("" if func.startswith("<") else f" ({func})")
    return ""


def collect(out_dir: Path, tree: Optional[Path] = None) -> dict[str, Any]:
    """Sum the `ops-<pid>.json` records of a run: counts, first dispatch sites, steps, processes."""
    from ascend_migrate.validate.harness.inject._ascend_migrate_harness import OPS_PREFIX

    counts: dict[str, dict[str, int]] = {}
    sites: dict[str, str] = {}
    steps, processes, statuses, errors = 0, 0, [], []
    for path in sorted(Path(out_dir).glob(OPS_PREFIX + "*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict):
            continue
        statuses.append(record.get("status"))
        if record.get("error"):
            errors.append(str(record["error"]))
        ops = record.get("ops") or {}
        if ops:
            processes += 1
        steps = max(steps, int(record.get("steps") or 0))
        for op, by_dtype in ops.items():
            slot = counts.setdefault(op, {})
            for key, n in by_dtype.items():
                slot[key] = slot.get(key, 0) + int(n)
        for op, frames in (record.get("sites") or {}).items():
            if op not in sites and isinstance(frames, list):
                sites[op] = site_of(frames, tree)
    return {"counts": counts, "sites": sites, "steps": steps, "processes": processes, "statuses": statuses,
            "errors": errors, "records": len(statuses)}


def not_checked(why: str) -> dict[str, Any]:
    return {"checked": False, "why": why}


def why_not_checked(device: str, emulated: bool, on: bool) -> Optional[str]:
    """Why a validation run says nothing about operators (None: it checks them)."""
    kind = (device or "cpu").split(":", 1)[0]
    if not emulated:
        if kind == "npu":
            return ("ran on a real NPU host: torch_npu prints its own fallback warning in the run's output "
                    "for each operator it runs on the CPU")
        return f"the run used {device}, not the emulated npu: nothing reached an npu device to record"
    if not on:
        return OFF_REASON
    return None


def section(collected: Optional[dict[str, Any]], requested: Optional[str]) -> dict[str, Any]:
    """The report's `operators` section from what `collect` read after a run on the emulated npu."""
    from ascend_migrate.knowledge.npu_ops import DTYPES_NOT_CHECKED

    release, how = choose_release(requested)
    collected = collected or {"counts": {}, "sites": {}, "steps": 0, "processes": 0, "errors": [], "records": 0}
    counts = collected["counts"]
    steps = collected["steps"]
    processes = max(1, collected["processes"])
    out: dict[str, Any] = {"checked": True, "release": release or requested, "release_choice": how,
                           "release_known": release is not None, "steps": steps,
                           "processes": collected["processes"]}
    result = analyse(counts, release, steps * processes if steps else None, collected.get("sites"))
    out["op_data"] = result["op_data"]
    out["fallback"] = result["fallback"]
    out["cpu_cannot_run"] = [r["op"] for r in result["fallback"] or [] if r.get("fails")]
    out["supported"] = len(result["supported"])
    out["wide_dtypes"] = result["wide_dtypes"]
    out["not_checked"] = DTYPES_NOT_CHECKED
    notes = list(collected.get("errors") or [])
    if not counts:
        notes.append("no operator reached the npu in this run (the command failed before it put a tensor "
                     "there, or recording did not start)")
    if processes > 1:
        notes.append(f"counts are summed over {processes} processes; per step is per process")
    out["notes"] = notes
    return out


def summary_lines(sec: Optional[dict[str, Any]], limit: int = 8) -> list[str]:
    """The few lines of the terminal summary."""
    if not sec:
        return []
    if not sec.get("checked"):
        return [f"operators on the NPU host: not checked ({sec.get('why')})"]
    head = f"operators on the NPU host (torch_npu {sec.get('release') or '?'}, {sec.get('release_choice')})"
    if not sec.get("release_known"):
        return [f"{head}: no prediction made"]
    lines = []
    fallback = sec.get("fallback") or []
    if not fallback:
        lines.append(f"{head}: none of the {sec.get('supported', 0)} operator(s) that reached the device falls "
                     "back to the CPU" if sec.get("supported") else f"{head}: no operator reached the device")
    else:
        lines.append(f"{head}: {len(fallback)} run on the CPU (torch_npu's fallback)")
        for row in fallback[:limit]:
            per = f", {row['per_step']}/step" if "per_step" in row else ""
            where = f", first at {row['site']}" if row.get("site") else ""
            fails = "  FAILS: no CPU kernel either" if row.get("fails") else ""
            lines.append(f"    {row['op']}  {row['count']} call(s){per}{where}{fails}")
        if len(fallback) > limit:
            lines.append(f"    ... {len(fallback) - limit} more in the report")
    if sec.get("cpu_cannot_run"):
        lines.append(f"    {len(sec['cpu_cannot_run'])} of them the CPU cannot run either: the run fails on the NPU host")
    wide = sec.get("wide_dtypes") or []
    if wide:
        shown = ", ".join(f"{r['op']} ({'/'.join(r['dtypes'])})" for r in wide[:limit])
        lines.append(f"    float64/complex tensors on the device: {shown}"
                     + (f" and {len(wide) - limit} more" if len(wide) > limit else ""))
    lines.append("    not checked: dtype support per operator (the registry does not list it)")
    return lines


def markdown_lines(sec: Optional[dict[str, Any]]) -> list[str]:
    """The report's markdown section."""
    def esc(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["## Operators on the NPU host", ""]
    if not sec or not sec.get("checked"):
        lines += [f"Not checked: {(sec or {}).get('why') or 'not recorded'}.", ""]
        return lines
    src = sec.get("op_data") or {}
    lines.append(f"Release: torch_npu {sec.get('release') or '?'} ({sec.get('release_choice')}"
                 + (f"; op-plugin `{str(src.get('op_plugin_commit'))[:10]}`" if src.get("op_plugin_commit") else "")
                 + f"); {sec.get('steps')} step(s) recorded on the emulated npu.")
    lines.append("")
    if not sec.get("release_known"):
        lines += ["No prediction made for this release.", ""]
    else:
        fallback = sec.get("fallback") or []
        if not fallback:
            lines += [f"No operator of this run falls back to the CPU ({sec.get('supported', 0)} operator(s) "
                      "reached the device, each with an NPU kernel).", ""]
        else:
            lines += ["Operators torch_npu will run on the CPU (its fallback warning names them so):", "",
                      "| Operator | Calls | Per step | Input dtypes | First dispatched at | CPU kernel |",
                      "|---|---|---|---|---|---|"]
            for row in fallback:
                cpu = "no: the run fails on the NPU host" if row.get("fails") else (
                    "yes" if row.get("cpu_kernel") else "unknown")
                lines.append(f"| `{esc(row['op'])}` | {row['count']} | {row.get('per_step', '-')} | "
                             f"{esc(', '.join(row['dtypes'])) or '-'} | {esc(row.get('site') or '-')} | {cpu} |")
            lines.append("")
            lines.append(f"{sec.get('supported', 0)} other operator(s) have an NPU kernel in this release.")
            lines.append("")
    wide = sec.get("wide_dtypes") or []
    if wide:
        lines += ["float64 / complex tensors on the device:", ""]
        lines += [f"- `{esc(r['op'])}`: {esc(', '.join(r['dtypes']))} ({r['count']} call(s))" for r in wide]
        lines.append("")
    lines += [f"Not checked: {sec.get('not_checked')}.", ""]
    lines += [f"- {esc(n)}" for n in sec.get("notes") or []]
    if sec.get("notes"):
        lines.append("")
    return lines
