"""A migrated tree, scanned again, still reports every item the migration left to a person.

The migrator's own rewrites (`device in ("cuda", "npu")`, `GradScaler("npu")`, ...) mention npu;
if the scanner took them as a person's npu branch, a re-scan would downgrade what is still
broken (DataParallel under a rewritten device test) to "already handled". For each project the
migrate tests use, in both styles: migrate with an output folder, scan the output, and find each
manual row of the change list there (at its `new_line`) with its rule and original severity.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ascend_migrate.fix.api import migrate
from ascend_migrate.scan.api import scan

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "fix" / "golden"
PROJECTS = [ROOT / "examples" / "cifar_trainer", ROOT / "tests" / "fixtures" / "chain" / "charlm",
            *sorted(p for p in (ROOT / "tests" / "fix" / "projects").iterdir() if p.is_dir())]
GOLDEN_INPUTS = sorted({src.name: src for src in GOLDEN.glob("*/*.in.*")}.values(), key=lambda p: p.name)
STYLES = ("transfer", "agnostic")


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))


def _project_of(src: Path, tmp_path: Path) -> Path:
    """A one-file project from a golden input (`module.in.py` -> `module.py`)."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copyfile(src, root / src.name.replace(".in.", "."))
    return root


def _manual_items_survive(root: Path, style: str, tmp_path: Path) -> int:
    """Migrate `root`, re-scan the output, return how many manual items were checked."""
    severity = {(f.path, f.rule, f.line): f.severity for f in scan(root, jobs=1, use_cache=False).findings}
    out = tmp_path / f"out-{style}"
    result = migrate(root, style=style, output=out)
    manual = [c for outcome in result.files for c in outcome.manual]
    rescan = scan(out, jobs=1, use_cache=False).findings
    found = {(f.path, f.rule, f.line, f.severity) for f in rescan}
    missing = []
    for item in manual:
        assert item.new_line, f"{item.file}:{item.start_line} {item.rule}: manual item without a line in the output"
        wanted = severity.get((item.file, item.rule, item.start_line))
        assert wanted is not None, f"{item.file}:{item.start_line} {item.rule}: not a finding of the original scan"
        if (item.file, item.rule, item.new_line, wanted) not in found:
            near = [(f.rule, f.line, f.severity, f.message) for f in rescan
                    if f.path == item.file and f.rule == item.rule]
            missing.append(f"{item.file}:{item.new_line} {item.rule} {wanted}; re-scan has {near}")
    assert not missing, f"{style}: manual items the re-scan of the output lost:\n" + "\n".join(missing)
    return len(manual)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_rescan_of_project_reports_every_manual_item(project, style, tmp_path):
    root = tmp_path / "src"
    shutil.copytree(project, root)
    checked = _manual_items_survive(root, style, tmp_path)
    if project.name == "dataparallel_under_device_test":
        assert checked >= 2  # both DataParallel calls


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("src", GOLDEN_INPUTS, ids=lambda p: p.name)
def test_rescan_of_golden_input_reports_every_manual_item(src, style, tmp_path):
    try:
        if src.name.endswith(".py"):
            compile(src.read_bytes(), str(src), "exec")
    except SyntaxError:  # newer syntax (`match`) on the oldest Python: SC001 there, nothing to port
        pytest.skip(f"{src.name} does not parse on Python {sys.version_info[0]}.{sys.version_info[1]}")
    _manual_items_survive(_project_of(src, tmp_path), style, tmp_path)


def test_dataparallel_under_a_rewritten_device_test_stays_an_error(tmp_path):
    """The reported case: `if device == 'cuda':` around DataParallel becomes `in ("cuda", "npu")`."""
    out = tmp_path / "out"
    migrate(ROOT / "tests" / "fix" / "projects" / "dataparallel_under_device_test", style="transfer", output=out)
    assert (out / "train.py").read_text().count('if device in ("cuda", "npu"):') == 2
    parallel = [f for f in scan(out, jobs=1, use_cache=False).findings if f.rule == "DS003"]
    assert [(f.line, f.severity, "already handled" in f.message) for f in parallel] == [(24, "error", False),
                                                                                      (32, "error", False)]


@pytest.mark.parametrize("style", STYLES)
def test_a_genuine_npu_branch_of_the_original_is_still_handled(style, tmp_path):
    """`elif device == "npu":` written by a person: the CUDA code beside it is information,
    before the migration and after it."""
    project = ROOT / "tests" / "fix" / "projects" / "npu_branch_in_original"
    expected = [("DV004", 9, "info", True), ("DV001", 21, "info", True)]

    def handled(root: Path) -> list:
        return [(f.rule, f.line, f.severity, "already handled" in f.message)
                for f in scan(root, jobs=1, use_cache=False).findings if f.rule != "FW001"]

    assert handled(project) == expected
    out = tmp_path / "out"
    result = migrate(project, style=style, output=out)
    assert not [c for outcome in result.files for c in outcome.manual]
    shift = 2 if style == "transfer" else 0  # the two transfer_to_npu imports at the top
    assert handled(out) == [(rule, line + shift, sev, note) for rule, line, sev, note in expected]
