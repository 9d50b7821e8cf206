"""`ascend-migrate ops`: which operators of a model run on the CPU on the NPU host, before the host.

    ascend-migrate ops [--torch-npu VERSION] [--steps N | --seconds T] [--format text|json] -- COMMAND...

The command (the CUDA original or the port) runs on a copy of the project on the emulated npu,
with `torch_npu` and `transfer_to_npu` imported in memory once the program imports torch (no
file of the project is written), for N optimizer steps or T seconds. The device records every
operator that reaches it; each is looked up in the NPU operator data of the release (op-plugin's
registry at the commit the release pins): those without an NPU kernel are the ones torch_npu will
run on the CPU, named as its warning names them. Data preparation on the CPU never reaches the
device and is not counted. The registry does not say which dtypes a kernel accepts: that is not
checked, and float64/complex inputs on the device are listed for the reader to judge.
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence

import click

DEFAULT_STEPS = 3
WIDE_DTYPES = ("Double", "ComplexFloat", "ComplexDouble", "ComplexHalf")


def _release(requested: Optional[str]) -> tuple[Optional[str], str]:
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


def _has_cpu_kernel(op: str) -> Optional[bool]:
    try:
        import torch

        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(op, "CPU")) or bool(
            torch._C._dispatch_has_kernel_for_dispatch_key(op, "CompositeExplicitAutograd"))
    except Exception:
        return None


def analyse(counts: dict[str, dict[str, int]], release: Optional[str], steps: Optional[int]) -> dict[str, Any]:
    """The report's operator sections from the recorded {op: {input dtypes: count}}."""
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
    rows = []
    for entry in sorted(fallback.values(), key=lambda e: (-e["count"], e["op"])):
        if per_step:
            entry["per_step"] = round(entry["count"] / per_step, 2)
        cpu = _has_cpu_kernel(entry["dispatched_as"][0])
        entry["cpu_kernel"] = cpu
        if cpu is False:
            entry["fails"] = "the CPU has no kernel for it either: the run fails on the NPU host"
        rows.append(entry)
    return {"fallback": rows if ops is not None else None, "supported": supported, "wide_dtypes": wide,
            "op_data": dict(ops.source) if ops is not None else None}


def run_ops(argv: Sequence[str], root: Path, release: Optional[str], steps: Optional[int],
            seconds: Optional[float]) -> dict[str, Any]:
    from ascend_migrate.emulated_npu import emulated_env, ensure_built
    from ascend_migrate.knowledge.npu_ops import DTYPES_NOT_CHECKED
    from ascend_migrate.validate import child
    from ascend_migrate.validate.command import CommandError, copy_tree, resolve_program
    from ascend_migrate.validate.harness import harness_env
    from ascend_migrate.validate.harness.inject import _ascend_migrate_harness as names

    chosen, how = _release(release)
    root = Path(root).resolve()
    work = Path(tempfile.mkdtemp(prefix="ascend-migrate-ops-"))
    try:
        tree = work / "tree" / root.name
        copy_tree(root, tree)
        try:
            launch = resolve_program(list(argv), root)
        except CommandError as exc:
            raise click.ClickException(str(exc)) from exc
        ensure_built()
        env, _withheld = child.child_env(None)
        env = emulated_env(env, device_count=1)  # transfer_to_npu as the release built for this torch
        env["NPU_STANDIN_OPS_RELEASE"] = chosen or "-"
        out = work / "records"
        env = harness_env(out, steps=0 if seconds else (steps or DEFAULT_STEPS), seed=0, threads=None, base=env)
        env[names.ENV_OPS] = chosen or "-"
        if seconds:
            env[names.ENV_OPS_SECONDS] = str(seconds)
        cap = (seconds + 300) if seconds else child.DEFAULT_CAP_S
        outcome = child.run_child(launch, cwd=tree, env=env, cap_s=cap, log_path=work / "output.log")
        counts: dict[str, dict[str, int]] = {}
        recorded_steps, statuses, errors = 0, [], []
        for path in sorted(out.glob(names.OPS_PREFIX + "*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            statuses.append(record.get("status"))
            if record.get("error"):
                errors.append(record["error"])
            recorded_steps = max(recorded_steps, record.get("steps") or 0)
            for op, by_dtype in (record.get("ops") or {}).items():
                slot = counts.setdefault(op, {})
                for key, n in by_dtype.items():
                    slot[key] = slot.get(key, 0) + int(n)
        report: dict[str, Any] = {
            "release": chosen or release,
            "release_choice": how,
            "release_known": chosen is not None,
            "command": list(argv),
            "steps": recorded_steps,
            "stopped_by": ("steps" if "stopped" in statuses else "time" if "time" in statuses
                           else "end of the command" if statuses else None),
            "exit": {"kind": outcome.kind, "code": outcome.returncode},
            "dtypes_checked": False,
            "not_checked": DTYPES_NOT_CHECKED,
            "notes": ["ran on the emulated npu with transfer_to_npu imported in memory; no file of the "
                      "project was written"] + errors,
        }
        report.update(analyse(counts, chosen, recorded_steps))
        ended_well = report["stopped_by"] in ("steps", "time") or (
            report["stopped_by"] == "end of the command" and outcome.kind == "exited" and outcome.returncode == 0)
        report["complete"] = bool(ended_well and counts)
        if not ended_well:
            report["notes"].append(f"the command did not run to its end or to the asked steps ({outcome.describe()} "
                                   f"after {recorded_steps} step(s)): operators it would dispatch after that "
                                   "point are not known")
            report["tail"] = list(outcome.tail)[-15:]
        if not counts:
            report["notes"].append("no operator reached the npu: the command never put a tensor on the "
                                   "device (or failed before it did); see the tail below")
            report["tail"] = list(outcome.tail)[-15:]
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def render_text(report: dict[str, Any]) -> str:
    lines = []
    release = report["release"] or "(none)"
    if not report["release_known"]:
        lines.append(f"torch_npu {release}: {report['release_choice']}; no prediction made")
    else:
        src = report.get("op_data") or {}
        lines.append(f"torch_npu {release} ({report['release_choice']}; op-plugin "
                     f"{(src.get('op_plugin_commit') or '?')[:10]}), {report['steps']} step(s), "
                     f"stopped by {report['stopped_by'] or 'nothing (no record)'}")
        fallback = report["fallback"] or []
        if not report["supported"] and not fallback:
            lines.append("no operator reached the npu: nothing to predict")
        elif not fallback:
            lines.append("no operator of this run falls back to the CPU"
                         + ("" if report.get("complete") else " (of the part that ran)"))
        else:
            lines.append(f"{len(fallback)} operator(s) run on the CPU on the NPU host:")
            for row in fallback:
                per = f" ({row['per_step']}/step)" if "per_step" in row else ""
                lines.append(f"  {row['op']}  {row['count']} call(s){per}  [{', '.join(row['dtypes'])}]"
                             + (f"  -- {row['fails']}" if row.get("fails") else ""))
        lines.append(f"{len(report['supported'])} operator(s) have an NPU kernel")
    for row in report["wide_dtypes"]:
        lines.append(f"  {row['op']}: {', '.join(row['dtypes'])} tensors on the device ({row['count']} call(s))")
    lines.append(f"not checked: {report['not_checked']}")
    for note in report["notes"]:
        lines.append(f"note: {note}")
    for line in report.get("tail") or []:
        lines.append(f"  | {line}")
    return "\n".join(lines)


@click.command(name="ops", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--torch-npu", "release", default=None,
              help="The torch_npu release the NPU host runs (default: the newest with operator data).")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help=f"Stop after N optimizer steps (default {DEFAULT_STEPS}).")
@click.option("--seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop after T seconds instead (an inference command).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("."),
              help="The project folder the command runs in (a copy of it; default: here).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def ops_command(release: Optional[str], steps: Optional[int], seconds: Optional[float], fmt: str,
                root: Path, command: tuple[str, ...]) -> None:
    """Which operators of COMMAND run on the CPU on the NPU host (torch_npu's fallback)."""
    if steps is not None and seconds is not None:
        raise click.UsageError("give --steps or --seconds, not both")
    report = run_ops(list(command), root, release, steps, seconds)
    if fmt == "json":
        click.echo(json.dumps(report, indent=1))
    else:
        click.echo(render_text(report))
    # 1: the answer covers only part of the run (the command failed or put nothing on the device)
    sys.exit(0 if report.get("complete", True) or not report["release_known"] else 1)
