"""`ascend-migrate emulated-npu`: build, inspect and remove the emulated npu.

    ascend-migrate emulated-npu build            compile it now (otherwise the first use does)
    ascend-migrate emulated-npu status [--json]  built or not, where, for which torch, what is missing
    ascend-migrate emulated-npu clean            remove the cached builds
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Dict, List

import click

from ascend_migrate.console import info, verbosity
from ascend_migrate.emulated_npu import build as emu


@click.group(name="emulated-npu")
def emulated_npu_group() -> None:
    """The emulated npu: run a transfer-style port on a machine without an Ascend NPU.

    \b
    What it is: a CPU-backed device named "npu" (PyTorch's PrivateUse1 backend with host
    memory and PyTorch's CPU kernels) and a `torch_npu` package of our own around it:
    torch.npu, an "hccl" process group over gloo, and a transfer_to_npu that patches torch
    as our coverage data records for the chosen torch_npu release. `ascend-migrate validate
    --device emulated-npu` runs a port on it; the port's process alone sees it as torch_npu,
    nothing is installed.

    \b
    A pass on it shows that the port puts every tensor, module, autocast region and process
    group on a device named npu (through transfer_to_npu's patches as recorded per release)
    and computes the same numbers as on CPU.

    \b
    What it is not: Ascend's torch_npu or CANN. It says nothing about Ascend numerics (CPU
    kernels run), speed, memory (no device limit, no out-of-memory), or operator and dtype
    support (every dense CPU op and dtype works, float64 and complex included, where CANN may
    lack them; sparse tensors do not work at all). Validate on an NPU host before calling a
    port done.

    \b
    It is C++ compiled on first use against torch 2.13.0 (the only torch it supports) into
    ${XDG_CACHE_HOME:-~/.cache}/ascend-migrate/emulated-npu/; that needs a C++ compiler
    (g++ or clang++), this Python's headers (python3-dev / python3-devel) and ninja
    (pip install ninja).
    """


@emulated_npu_group.command(name="build", short_help="Compile it now (otherwise its first use does).")
def build_command() -> None:
    """Compile the emulated npu now, or report the build already cached.

    Exit 0 when it is built, 1 with what is missing or the compiler's last lines otherwise.
    -v shows the compiler's output as it runs.
    """
    before = emu.status()
    if before["built"]:
        done = before.get("build") or {}
        click.echo(f"already built: {before['build_dir']}"
                   + (f" (compiled in {done['seconds']} s on {done.get('built_at', '?')})" if done.get("seconds") else ""))
        return
    info(f"building the emulated npu into {before['build_dir'] or emu.cache_root()} (30 to 50 s on 2 cores) ...")
    started = time.monotonic()
    try:
        directory = emu.ensure_built(verbose=verbosity() > 0)
    except emu.EmulatedNpuError as exc:
        raise click.ClickException(str(exc)) from exc
    seconds = time.monotonic() - started
    marker = emu.read_marker(directory) or {}
    if marker.get("pid") not in (None, os.getpid()):
        click.echo(f"built by another process while this one waited ({seconds:.1f} s): {directory}")
    else:
        click.echo(f"built in {seconds:.1f} s: {directory}")


@emulated_npu_group.command(name="status", short_help="Built or not, where, for which torch; what is missing.")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status_command(as_json: bool) -> None:
    """Whether the emulated npu is built, where, for which torch and source, and what a build
    here would still need.

    Exit 0 when it is built or can be built here, 1 when it is not built and something it needs
    is missing.
    """
    state = emu.status()
    if as_json:
        click.echo(json.dumps(state, indent=2, sort_keys=True))
    else:
        click.echo(_status_text(state))
    if not state["built"] and state["missing"]:
        raise SystemExit(1)


def _status_text(state: Dict[str, Any]) -> str:
    lines: List[str] = []
    if state["built"]:
        lines.append("emulated npu: built")
    elif state["missing"]:
        lines.append("emulated npu: not built, and it cannot be built here (see below)")
    else:
        lines.append("emulated npu: not built yet (the first use builds it; or run `ascend-migrate emulated-npu build`)")
    override = " (from NPU_STANDIN_BUILD_DIR)" if state["build_dir_override"] else ""
    lines.append(f"  build folder  {state['build_dir'] or '-'}{override}")
    torch = state["torch"] or "not importable"
    lines.append(f"  torch         {torch} (supported: {state['supported_torch']})")
    lines.append(f"  python        {state['python']}")
    lines.append(f"  source        {state['source_sha256']}")
    done = state.get("build")
    if done:
        lines.append(f"  compiled      {done.get('built_at', '?')} in {done.get('seconds', '?')} s with "
                     f"{done.get('compiler', '?')}")
    cached = state["cached"]
    lines.append(f"  cache         {state['cache_root']} ({len(cached)} folder{'s' if len(cached) != 1 else ''})")
    if state["missing"]:
        lines.append("  missing for a build:")
        lines.extend(f"    - {problem}" for problem in state["missing"])
    else:
        lines.append("  missing for a build: nothing")
    return "\n".join(lines)


@emulated_npu_group.command(name="clean", short_help="Remove the cached builds.")
def clean_command() -> None:
    """Remove every cached build under ${XDG_CACHE_HOME:-~/.cache}/ascend-migrate/emulated-npu/.

    A folder where a build is in progress is left alone; a folder named by NPU_STANDIN_BUILD_DIR
    is never touched. Exit 1 when a folder could not be removed.
    """
    before = emu.cached_builds()
    removed = emu.clean()
    for path in removed:
        click.echo(f"removed {path}")
    if not before:
        click.echo(f"nothing to remove under {emu.cache_root()}")
    failed: List[Path] = []
    for path in before:
        if path in removed:
            continue
        if emu.is_busy(path):
            click.echo(f"left {path}: a build is in progress there")
        else:
            failed.append(path)
    if failed:
        raise click.ClickException("could not remove " + ", ".join(str(p) for p in failed))
