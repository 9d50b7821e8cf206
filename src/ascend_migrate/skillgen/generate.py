"""Generate a per-model skill from a passing validation report, a scan and a change list."""
from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from pathlib import Path
import re
from typing import Any, Callable, Optional

from ascend_migrate.skillgen.errors import SkillGenError
from ascend_migrate.skillgen.inputs import (
    DEFAULT_CHANGES,
    DEFAULT_REPORT,
    ScanSummary,
    load_changes,
    load_report,
    load_scan,
    scan_from_dict,
)
from ascend_migrate.skillgen.lint import lint_skill_text
from ascend_migrate.skillgen.replaykit import build_bundle, find_original, gate_report, migrate_options
from ascend_migrate.skillgen.naming import display_name, model_slug
from ascend_migrate.skillgen.render import (
    HUAWEI_PIP_INDEX,
    RenderInputs,
    check_pip_index,
    render_files,
)
from ascend_migrate.skillgen.writer import write_skill

DEFAULT_OUT_ROOT = "~/.kernelcat/skills"
VERSION_OK = re.compile(r"^[0-9][0-9A-Za-z.+_-]{0,40}$|^[A-Za-z0-9][A-Za-z0-9 ,._+-]{0,60}$")
MAX_NOTES_BYTES = 64 * 1024


def _scan_project(project: Path, warn: Callable[[str], None]) -> ScanSummary:
    """Run the scanner in-process when no --scan file was given."""
    try:
        from ascend_migrate.scan.api import scan
    except ImportError as exc:  # the scanner is an optional area of the build
        warn(f"scanner unavailable ({exc}); the skill will have no scan summary")
        return ScanSummary()
    try:
        result = scan(project)
    except Exception as exc:  # noqa: BLE001 - a scan failure must not hide the real task
        warn(f"scan of {project} failed ({type(exc).__name__}: {exc}); the skill will have no scan summary")
        return ScanSummary()
    data = {
        "findings": [f.to_dict() for f in result.findings],
        "entry_points": [asdict(e) if is_dataclass(e) else e for e in result.entry_points],
        "torch_npu_version": result.torch_npu_version,
    }
    for key in ("packages", "frameworks"):
        value = getattr(result, key, None)
        if value:
            data[key] = value
    return scan_from_dict(data, f"scan of {project}")


def _add_install_facts(bundle: Any, project: Path, original: Path, display: str,
                       warn: Callable[[str], None]) -> None:
    """Store what a fresh host installs, decided now (skillgen.recipe): the tool's wheel, the CUDA-only
    packages of the ORIGINAL, the validated tree's third-party imports, torch_npu's runtime deps."""
    from ascend_migrate.skillgen.recipe import (
        _cuda_package_table,
        cuda_only_packages,
        import_sets,
        project_name,
        runtime_dep_specs,
    )
    from ascend_migrate.skillgen.render import _project_files
    from ascend_migrate.skillgen.wheel import build_tool_wheel

    wheel_name, wheel_bytes = build_tool_wheel()
    bundle.files[f"tools/{wheel_name}"] = wheel_bytes
    try:
        cuda_only = cuda_only_packages(original)
    except Exception as exc:  # noqa: BLE001 - the scan must not hide the task; say what is missing
        warn(f"scan of the original {original} failed ({type(exc).__name__}: {exc}); the skill lists no "
             "CUDA-only packages to remove")
        cuda_only = []
    cuda_imports = set(_cuda_package_table()[0])
    bundle.source_name = project_name(original, display)
    code_packages, test_packages = import_sets(project, list(_project_files(project)), cuda_imports)
    bundle.replay["project"] = bundle.source_name
    bundle.replay["environment"].update({
        "tool_wheel": f"tools/{wheel_name}",
        "cuda_only_packages": cuda_only,
        "project_packages": code_packages,
        "test_packages": test_packages,
        "torch_npu_runtime_deps": runtime_dep_specs(),
    })
    bundle.files["replay.json"] = (json.dumps(bundle.replay, indent=2, sort_keys=False) + "\n").encode("utf-8")


def _read_notes(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SkillGenError(f"{path}: cannot read notes: {exc.strerror or exc}") from None
    if len(raw) > MAX_NOTES_BYTES:
        raise SkillGenError(f"{path}: notes are {len(raw)} bytes; the limit is {MAX_NOTES_BYTES}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SkillGenError(f"{path}: notes are not UTF-8 text") from None
    if text.lstrip().startswith("---"):
        raise SkillGenError(f"{path}: notes must be plain Markdown without a frontmatter block")
    return text


def render_model_skill(
    project: Path,
    model: str,
    *,
    report: Optional[Path],
    scan: Optional[Path] = None,
    changes: Optional[Path] = None,
    notes: Optional[Path] = None,
    style: Optional[str] = None,
    pip_index: str = HUAWEI_PIP_INDEX,
    original: Optional[Path] = None,
    allow_cpu: bool = False,
    warn: Callable[[str], None] = lambda message: None,
) -> tuple[str, dict[str, Any]]:
    """Check every input and return (slug, {relative path: text or bytes}); writes nothing."""
    slug = model_slug(model)
    check_pip_index(pip_index)
    if not project.exists():
        raise SkillGenError(f"{project}: project path does not exist")
    if not project.is_dir():
        raise SkillGenError(f"{project}: give the folder of the validated port, not a file")
    if report is None:
        default = (project if project.is_dir() else project.parent) / DEFAULT_REPORT
        if default.is_file():
            report = default
            warn(f"using the validation report at {default}")
    validation = load_report(report)  # refuse early: nothing else matters without a pass
    prov = gate_report(validation.raw, Path(validation.path), project, allow_cpu)
    if changes is None:
        from ascend_migrate.fix.runs import last_change_list

        default = last_change_list(project) or project / DEFAULT_CHANGES
        if default.is_file():
            changes = default
            warn(f"using the change list at {default}")
    change_list = load_changes(changes) if changes is not None else None
    scan_summary = load_scan(scan) if scan is not None else _scan_project(project, warn)
    chosen_style = style or (change_list.style if change_list else "") or "transfer"
    if change_list and change_list.style and style and change_list.style != style:
        raise SkillGenError(
            f"--style {style} disagrees with the change list, which was made with style "
            f"{change_list.style!r}"
        )
    options = migrate_options(project, style or (change_list.style if change_list else None))
    source = find_original(project, original)
    cpu_only = prov.get("device_kind") != "npu"
    if cpu_only:
        warn(f"validated on {prov.get('device')}, not an NPU: the skill is marked as CPU-only validation")
    host = prov.get("host") or {}
    versions = {k: str(host[k]) for k in ("python", "torch", "torch_npu", "cann", "driver", "npu_model")
                if host.get(k) and VERSION_OK.match(str(host[k]))}
    bundle = build_bundle(project, source, validation.raw, prov, options, slug, pip_index, allow_cpu, versions)
    _add_install_facts(bundle, project, source, display_name(model), warn)
    inputs = RenderInputs(
        slug=slug,
        display=display_name(model),
        project_root=project,
        report=validation,
        scan=scan_summary,
        changes=change_list,
        style=chosen_style,
        pip_index=pip_index,
        notes=_read_notes(notes) if notes is not None else "",
        cpu_only=cpu_only,
        bundle=bundle,
        provenance=prov,
    )
    files: dict[str, Any] = render_files(inputs)
    if len(files["SKILL.md"].splitlines()) >= 480:
        files = render_files(inputs, compact=True)
    problems = lint_skill_text(
        files["SKILL.md"],
        path=f"{slug}/SKILL.md",
        folder_name=slug,
        link_exists=lambda target: target in files or target in bundle.files,
        plugin_path_exists=None,
    )
    if problems:
        listing = "\n  ".join(str(p) for p in problems[:10])
        raise SkillGenError(f"the rendered skill fails its own checks, nothing written:\n  {listing}")
    files.update(bundle.files)
    return slug, files


def generate_model_skill(
    project: Path,
    model: str,
    *,
    out_root: Path | str = DEFAULT_OUT_ROOT,
    force: bool = False,
    **kwargs,
) -> Path:
    """Render and write the model skill; return the path of the written SKILL.md."""
    slug, files = render_model_skill(project, model, **kwargs)
    return write_skill(Path(out_root), slug, files, force=force)
