"""`ascend-migrate kb`: keep the per-release coverage files true to torch_npu.

    ascend-migrate kb sync --wheel torch_npu-2.13.0-cp311-...whl   write coverage for that release
    ascend-migrate kb sync --site-packages /path/to/site-packages  same, from an installed torch_npu
    ascend-migrate kb versions                                     releases with coverage / operator data
    ascend-migrate kb show 2.1.0                                   what transfer_to_npu covers there
    ascend-migrate kb diff 2.1.0.post10 2.13.0                     what changed between two releases
    ascend-migrate kb ops-sync --torch-npu 2.6.0 --op-plugin DIR   which aten operators it runs on the NPU

`kb sync` never writes into the installed package: it writes to the user's data folder
(`knowledge.user_data`, read before the packaged coverage) or to `--out`, atomically; a release
that has coverage already is replaced only with `--force`.
"""
from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Optional

import click

from ascend_migrate.knowledge.coverage import (
    available_versions,
    coverage_file,
    diff_coverage,
    is_user_file,
    load_coverage,
)
from ascend_migrate.knowledge.loader import KnowledgeError
from ascend_migrate.knowledge.sync import (
    RefusedInput,
    SyncError,
    build_coverage,
    coverage_filename,
    destination,
    open_tree,
    render,
    write_atomic,
)
from ascend_migrate.knowledge.user_data import user_coverage_dir
from ascend_migrate.printable import printable

READ_FIRST = "the user's data folder, read before the packaged knowledge"


def _echo(text: str, err: bool = False) -> None:
    """One line of output: versions, file names, package names and reasons come from a wheel
    or a file someone else wrote, so control characters in them are shown as escapes."""
    click.echo(printable(text), err=err)


@click.group(name="kb")
def kb_group() -> None:
    """Per-release knowledge: what transfer_to_npu covers in each torch_npu version."""


@kb_group.command(name="sync")
@click.option("--wheel", "wheel", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A torch_npu wheel file (.whl).")
@click.option("--site-packages", "site_packages", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A site-packages directory with torch_npu installed (or the torch_npu directory).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for the coverage file (default: the user's data folder, "
                   "$XDG_DATA_HOME/ascend-migrate/coverage, which scans read before the packaged knowledge).")
@click.option("--force", is_flag=True, help="Replace the coverage of a release that has one already.")
@click.option("--check", is_flag=True,
              help="Do not write; exit 1 if the existing coverage file differs from what the sources say.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def sync_command(wheel: Optional[Path], site_packages: Optional[Path], out_dir: Optional[Path],
                 force: bool, check: bool, as_json: bool) -> None:
    """Read a torch_npu release (never importing it) and write its coverage file.

    The installed package is never written: the file goes to the user's data folder (read
    before the packaged knowledge) or to --out. A release that has coverage already, packaged
    or synced, is replaced only with --force."""
    if (wheel is None) == (site_packages is None):
        raise click.UsageError("give exactly one of --wheel FILE or --site-packages DIR")
    try:
        tree = open_tree(wheel=wheel, site_packages=site_packages)
        doc = build_coverage(tree)
    except RefusedInput as exc:
        refused = click.ClickException(printable(str(exc)))
        refused.exit_code = 2  # an input this tool will not read: like a usage error
        raise refused from exc
    except SyncError as exc:
        raise click.ClickException(printable(str(exc))) from exc
    text = render(doc)
    version = doc["torch_npu_version"]
    if check:  # against the file scans read (or the one in --out)
        path = (out_dir / coverage_filename(version) if out_dir is not None
                else coverage_file(version) or user_coverage_dir() / coverage_filename(version))
        old = path.read_text(encoding="utf-8") if path.is_file() else ""
        if old == text:
            _echo(f"{path}: up to date")
            return
        diff = difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(path), "sources", n=1)
        click.echo(printable("".join(list(diff)[:200]), keep="\n"), err=True)
        raise SystemExit(1)
    try:
        path = destination(version, out_dir, force=force)
        write_atomic(path, text, force=force)
    except SyncError as exc:
        raise click.ClickException(printable(str(exc))) from exc
    except OSError as exc:
        raise click.ClickException(f"{out_dir or user_coverage_dir()}: cannot write the coverage file: "
                                   f"{exc.strerror or exc}; nothing was written") from exc
    t = doc["transfer_to_npu"]

    def count(key: str) -> Optional[int]:
        return len(t[key]) if t.get(key) is not None else None

    summary = {
        "path": str(path),
        "read_first": out_dir is None,
        "torch_npu_version": doc["torch_npu_version"],
        "torch_functions": count("torch_functions"),
        "tensor_methods": count("tensor_methods"),
        "module_methods": count("module_methods"),
        "cuda_functions": count("cuda_functions"),
        "npu_all": len(doc["npu_all"]) if doc["npu_all"] is not None else None,
        "distributed_patches": count("distributed_patches"),
        "missing": doc["missing"],
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True))
        return
    _echo(f"wrote {path}" + (f" ({READ_FIRST})" if out_dir is None else ""))
    for key in ("torch_functions", "tensor_methods", "module_methods", "cuda_functions", "npu_all",
                "distributed_patches"):
        _echo(f"  {key:20} {summary[key] if summary[key] is not None else 'not found'}")
    for key, reason in doc["missing"].items():
        _echo(f"  missing {key}: {reason}")


@kb_group.command(name="versions")
@click.option("--json", "as_json", is_flag=True)
def versions_command(as_json: bool) -> None:
    """List the torch_npu releases we hold data for (newest last; the default is the newest): per
    release, its coverage file (what transfer_to_npu rewrites, from which wheel) and its operator
    data (which aten operators have an NPU kernel, from which op-plugin commit)."""
    from ascend_migrate.knowledge import npu_ops
    from ascend_migrate.knowledge.coverage import parse_version

    covered = available_versions()
    with_ops = npu_ops.ops_versions()
    rows = []
    for version in sorted(set(covered) | set(with_ops), key=parse_version):
        row: dict = {"version": version, "coverage": version in covered}
        if version in covered:
            try:
                cov = load_coverage(version)
            except KnowledgeError as exc:
                row["error"] = str(exc)
            else:
                row.update({"filename": cov.source.get("filename"), "sha256": cov.source.get("sha256"),
                            "path": str(cov.path), "user": is_user_file(cov.path)})
        row["operators"] = _ops_row(npu_ops, version) if version in with_ops else None
        rows.append(row)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        if not row["coverage"]:
            head = "no coverage file"
        else:
            head = row.get("error") or f"{row['filename'] or '(installed tree)'}"
            head += "  [synced by you]" if row.get("user") else ""
        ops = row["operators"]
        if ops is None:
            tail = "no operator data (`ops` makes no prediction for it)"
        elif ops.get("error"):
            tail = f"operator data unreadable: {ops['error']}"
        else:
            tail = (f"{ops['aten_overloads']} aten overloads from op-plugin {str(ops['op_plugin_commit'] or '?')[:10]}"
                    f" ({ops['file']}, {ops['layout']})" + ("  [synced by you]" if ops.get("user") else ""))
        _echo(f"{row['version']:16} coverage: {head}")
        _echo(f"{'':16} operators: {tail}")
    if any(row.get("user") for row in rows):
        _echo(f"[synced by you]: coverage from {user_coverage_dir()} ({READ_FIRST})")
    if any((row["operators"] or {}).get("user") for row in rows):
        _echo(f"[synced by you]: operator data from {npu_ops.user_ops_dir()} ({READ_FIRST})")


def _ops_row(npu_ops, version: str) -> dict:
    """Where a release's operator data came from (the op-plugin commit its release pins)."""
    try:
        ops = npu_ops.load_ops(version)
    except (npu_ops.RegistryError, OSError, ValueError) as exc:
        return {"error": str(exc)}
    if ops is None or ops.version != version:
        return {"error": "not found"}
    src = ops.source
    return {"op_plugin_commit": src.get("op_plugin_commit"), "torch_npu_commit": src.get("torch_npu_commit"),
            "layout": src.get("layout"), "file": src.get("file"), "torch_version": ops.torch_version,
            "aten_overloads": len(ops.aten), "torch_npu_own": len(ops.data.get("torch_npu_own") or []),
            "path": str(ops.path), "user": ops.path.parent == npu_ops.user_ops_dir()}


def _fmt(names) -> str:
    if names is None:
        return "(not found)"
    return ", ".join(sorted(names)) or "(none)"


@kb_group.command(name="show")
@click.argument("version", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the whole coverage document.")
def show_command(version: Optional[str], as_json: bool) -> None:
    """What transfer_to_npu covers in VERSION (default: newest)."""
    try:
        cov = load_coverage(version)
    except KnowledgeError as exc:
        raise click.ClickException(printable(str(exc))) from exc
    if as_json:
        click.echo(json.dumps(cov.data, indent=1, sort_keys=True))
        return
    if version and version != cov.version:
        _echo(f"(using coverage of torch_npu {cov.version} for {version})")
    src = cov.source
    _echo(f"torch_npu {cov.version}  from {src.get('filename') or src.get('kind')}")
    if is_user_file(cov.path):
        _echo(f"coverage file:              {cov.path} ({READ_FIRST})")
    _echo(f"torch.* rewritten:          {_fmt(cov.torch_functions)}")
    _echo(f"torch.Tensor.* rewritten:   {_fmt(cov.tensor_methods)}")
    _echo(f"torch.nn.Module.* rewritten: {_fmt(cov.module_methods)}")
    _echo(f"torch.cuda.* rewritten:     {_fmt(cov.cuda_functions)}")
    for overlay in cov.overlays:
        what = f"{len(overlay.names)} names" if overlay.names is not None else "whole module"
        _echo(f"overlay {overlay.target} <- {overlay.source} ({what})")
    _echo(f"distributed patches:        {_fmt(cov.distributed_patches)}")
    _echo(f"torch.jit.script disabled:  {cov.jit_script_disabled}")
    _echo(f"TORCH_TRANSFER_TO_NPU=1:    {'supported' if cov.env_activation else 'not supported'}")
    for package in cov.third_party_packages or ():
        entry = cov.third_party(package)
        _echo(f"third party {package} >= {entry['min_version']}: {len(entry['apis'])} functions")
    for key, reason in cov.missing.items():
        _echo(f"missing {key}: {reason}")


@kb_group.command(name="diff")
@click.argument("a")
@click.argument("b")
def diff_command(a: str, b: str) -> None:
    """What differs in transfer_to_npu coverage between releases A and B (JSON)."""
    try:
        result = diff_coverage(load_coverage(a), load_coverage(b))
    except KnowledgeError as exc:
        raise click.ClickException(printable(str(exc))) from exc
    click.echo(json.dumps(result, indent=1, sort_keys=True))


@kb_group.command(name="ops-sync")
@click.option("--torch-npu", "version", required=True, help="The torch_npu release, e.g. 2.1.0.post10.")
@click.option("--op-plugin", "op_plugin", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A checkout of Ascend/op-plugin (a work tree, or a git directory read with --op-plugin-rev).")
@click.option("--op-plugin-rev", default=None,
              help="The op-plugin commit to read (default: the one --pytorch pins, else the work tree).")
@click.option("--pytorch", "pytorch", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A checkout of Ascend/pytorch (torch_npu's own registrations; its submodule pin).")
@click.option("--pytorch-rev", default=None, help="The Ascend/pytorch tag or commit of the release.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for the data file (default: the user's data folder, read before the packaged data).")
@click.option("--force", is_flag=True, help="Replace the data of a release that has some already.")
def ops_sync_command(version: str, op_plugin: Path, op_plugin_rev: Optional[str], pytorch: Optional[Path],
                     pytorch_rev: Optional[str], out_dir: Optional[Path], force: bool) -> None:
    """Write which aten operators torch_npu VERSION runs on the NPU, read from op-plugin's registry.

    Give the op-plugin commit the release pins (the third_party/op-plugin submodule of
    Ascend/pytorch at the release's tag): --pytorch DIR --pytorch-rev TAG finds it."""
    from ascend_migrate.knowledge import npu_ops

    try:
        torch_npu = npu_ops.open_tree(pytorch, pytorch_rev) if pytorch is not None else None
        rev = op_plugin_rev
        if rev is None and torch_npu is not None:
            rev = torch_npu.submodule("third_party/op-plugin")
            if rev is None:
                raise npu_ops.RegistryError("--pytorch: no op-plugin submodule pin found (give --pytorch-rev "
                                            "on a git directory, or --op-plugin-rev)")
        doc = npu_ops.build_ops(version, npu_ops.open_tree(op_plugin, rev), torch_npu)
    except (npu_ops.RegistryError, ValueError) as exc:
        raise click.ClickException(printable(str(exc))) from exc
    base = out_dir if out_dir is not None else npu_ops.user_ops_dir()
    path = base / npu_ops.ops_filename(version)
    if path.exists() and not force:
        raise click.ClickException(f"{path} exists; give --force to replace it")
    try:
        write_atomic(path, npu_ops.render(doc), force=True)
    except (SyncError, OSError) as exc:
        raise click.ClickException(f"{path}: cannot write: {exc}") from exc
    src = doc["source"]
    _echo(f"wrote {path}" + (f" ({READ_FIRST})" if out_dir is None else ""))
    _echo(f"  torch {doc['torch_version']}: {len(doc['aten'])} aten overloads with an NPU kernel "
               f"(+{len(doc['torch_npu_own'])} torch_npu's own), {src['layout']} {src['file']} "
               f"at op-plugin {src['op_plugin_commit']}")
