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

from ascend_migrate.validate.operators import WIDE_DTYPES, analyse, choose_release as _release  # noqa: F401

DEFAULT_STEPS = 3


def run_ops(argv: Sequence[str], root: Path, release: Optional[str], steps: Optional[int],
            seconds: Optional[float]) -> dict[str, Any]:
    from ascend_migrate.emulated_npu import emulated_env, ensure_built
    from ascend_migrate.knowledge.npu_ops import DTYPES_NOT_CHECKED
    from ascend_migrate.validate import child
    from ascend_migrate.validate.command import CommandError, copy_tree, resolve_program
    from ascend_migrate.validate.harness import harness_env
    from ascend_migrate.validate.harness.inject import _ascend_migrate_harness as names
    from ascend_migrate.validate.operators import collect

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
        collected = collect(out, tree)
        counts, statuses, errors = collected["counts"], collected["statuses"], collected["errors"]
        recorded_steps = collected["steps"]
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
        report.update(analyse(counts, chosen, recorded_steps, collected["sites"]))
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
                             + (f"  first at {row['site']}" if row.get("site") else "")
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
