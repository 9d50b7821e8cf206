"""Generate a per-model skill from a passing validation report, a scan and a change list."""
from __future__ import annotations

from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Callable, Optional

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
from ascend_migrate.skillgen.naming import display_name, model_slug
from ascend_migrate.skillgen.render import (
    HUAWEI_PIP_INDEX,
    RenderInputs,
    check_pip_index,
    render_files,
)
from ascend_migrate.skillgen.writer import write_skill

DEFAULT_OUT_ROOT = "~/.kernelcat/skills"
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
    warn: Callable[[str], None] = lambda message: None,
) -> tuple[str, dict[str, str]]:
    """Check every input and return (slug, {relative path: text}); writes nothing."""
    slug = model_slug(model)
    check_pip_index(pip_index)
    if not project.exists():
        raise SkillGenError(f"{project}: project path does not exist")
    if report is None:
        default = (project if project.is_dir() else project.parent) / DEFAULT_REPORT
        if default.is_file():
            report = default
            warn(f"using the validation report at {default}")
    validation = load_report(report)  # refuse early: nothing else matters without a pass
    if changes is None:
        default = (project if project.is_dir() else project.parent) / DEFAULT_CHANGES
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
    )
    files = render_files(inputs)
    if len(files["SKILL.md"].splitlines()) >= 480:
        files = render_files(inputs, compact=True)
    problems = lint_skill_text(
        files["SKILL.md"],
        path=f"{slug}/SKILL.md",
        folder_name=slug,
        link_exists=lambda target: target in files,
        plugin_path_exists=None,
    )
    if problems:
        listing = "\n  ".join(str(p) for p in problems[:10])
        raise SkillGenError(f"the rendered skill fails its own checks, nothing written:\n  {listing}")
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
