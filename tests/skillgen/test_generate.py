"""`ascend-migrate skill`: renders from a passing report, refuses everything else, and never
loses or misplaces data."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.skillgen import writer
from ascend_migrate.skillgen.cli import skill_command
from ascend_migrate.skillgen.lint import lint_skill_dir, split_frontmatter
from ascend_migrate.skillgen.render import HUAWEI_PIP_INDEX, TEMPLATE_DIR

REPO = Path(__file__).resolve().parents[2]
SECTIONS = [
    "## Apply if", "## How to follow this skill", "### 1. Environment", "### 2. Install the tool",
    "### 3. Install torch", "### 4. Remove CUDA-only packages", "### 5. Reproduce the port",
    "### 6. Install the project's dependencies", "### 7. Validate", "## Code changes",
    "## Model-specific adaptation points", "## Scan summary", "## Validation", "## Capture the golden again",
]


def run(argv):
    return CliRunner().invoke(skill_command, argv, catch_exceptions=False)


def written(inputs, slug="resnet-50") -> Path:
    return inputs.out / slug / "SKILL.md"


# ------------------------------------------------------------------ the happy path


def test_passing_report_writes_a_complete_skill(inputs):
    result = run(inputs.args())
    assert result.exit_code == 0, result.output
    skill = written(inputs)
    text = skill.read_text(encoding="utf-8")
    positions = [text.index(heading) for heading in SECTIONS]
    assert positions == sorted(positions)
    front, body, _ = split_frontmatter(text)
    meta = yaml.safe_load(front)
    assert meta["name"] == "resnet-50" == skill.parent.name
    assert "Use when" in meta["description"]
    # environment, versions and thresholds come from the report
    assert "pip install torch==2.1.0 --index-url" in text and "pip install torch_npu==2.1.0.post8 numpy==1.26.4" in text
    assert "| cosine_min | 0.99 |" in text and "| loss_curve.steps | 50 |" in text
    assert "| golden-compare: golden outputs | pass | cosine 0.99998, max abs err 3.1e-05 |" in text
    assert "8.0.RC3" in text
    # exact code changes from the change list, with their before/after text
    assert "| 5-5 | DS003 | replace | DataParallel to DistributedDataParallel |" in text
    assert "-model = nn.DataParallel(model)\n+model = DDP(model, device_ids=[rank])" in text
    # adaptation points: the finding without an automatic fix, with its location
    adaptation = text.split("## Model-specific adaptation points")[1].split("## Scan summary")[0]
    assert "DS003" in adaptation and "train.py:5" in adaptation and "CU101" not in adaptation
    assert "\nascend-migrate migrate . --write --style transfer\n" in text
    assert lint_skill_dir(skill.parent) == []
    assert "wrote" in result.output


def test_pip_index_is_set_before_any_install(inputs):
    assert run(inputs.args()).exit_code == 0
    text = written(inputs).read_text()
    blocks = re.findall(r"(?ms)^```bash\n(.*?)^```", text)
    installing = [b for b in blocks if re.search(r"pip install(?! -y)", b)]
    assert len(installing) >= 3
    for block in installing:  # every block that installs sets the index first (unless the caller set one)
        index = block.index(f'export PIP_INDEX_URL="${{PIP_INDEX_URL:-{HUAWEI_PIP_INDEX}}}"')
        assert index < block.index("-m pip install")


def test_pip_index_is_configurable(inputs):
    url = "https://pypi.example.org/simple/"
    assert run(inputs.args(pip_index=url)).exit_code == 0
    text = written(inputs).read_text()
    assert f'export PIP_INDEX_URL="${{PIP_INDEX_URL:-{url}}}"' in text and HUAWEI_PIP_INDEX not in text


@pytest.mark.parametrize("url", ["ftp://x/simple", "https://x/simple'; rm -rf ~ #", "https://a b", ""])
def test_pip_index_must_be_a_plain_url(inputs, url, snapshot):
    result = run(inputs.args(pip_index=url))
    assert result.exit_code == 2 and "--pip-index" in result.output
    assert snapshot(inputs.out) == {}


def test_pyg_extensions_are_built_from_source(inputs):
    (inputs.project / "gnn.py").write_text("from torch_scatter import scatter\nimport torch_cluster\n")
    assert run(inputs.args()).exit_code == 0
    text = written(inputs).read_text()
    assert "#### PyG extensions: build from source" in text
    assert "git clone https://github.com/rusty1s/pytorch_scatter.git" in text
    assert "pip install torch_scatter" not in text and "torch-scatter" not in text  # never a prebuilt wheel
    assert "git clone https://github.com/rusty1s/pytorch_cluster.git" in text
    assert "pytorch_sparse" not in text
    assert "data.pyg.org" not in text


def test_no_pyg_section_without_pyg(inputs):
    assert run(inputs.args()).exit_code == 0
    assert "PyG extensions" not in written(inputs).read_text()


def test_rendering_is_deterministic(inputs, tmp_path):
    assert run(inputs.args()).exit_code == 0
    first = written(inputs).read_bytes()
    assert run(inputs.args(force=True)).exit_code == 0
    assert written(inputs).read_bytes() == first


def test_dry_run_prints_and_writes_nothing(inputs, snapshot):
    result = run(inputs.args(dry_run=True))
    assert result.exit_code == 0
    assert result.output.startswith("---\nname: resnet-50\n")
    assert snapshot(inputs.out) == {}


def test_notes_are_included(inputs):
    notes = inputs.write("notes.md", "Replaced `flash_attn_func` with SDPA in `model/attn.py`.\n")
    assert run(inputs.args(notes=notes)).exit_code == 0
    assert "Replaced `flash_attn_func` with SDPA" in written(inputs).read_text()


def test_style_conflict_is_refused(inputs, snapshot):
    result = run(inputs.args(style="agnostic"))
    assert result.exit_code == 2 and "disagrees" in result.output
    assert snapshot(inputs.out) == {}


def test_long_inputs_move_to_references_and_stay_under_500_lines(inputs):
    changes = {"style": "transfer", "changes": [
        {"file": f"pkg/mod{i % 30}.py", "start_line": i, "end_line": i + 1, "rule": "CU101",
         "operation": "replace", "message": f"edit {i}", "before": "x.cuda()", "after": "x.npu()"}
        for i in range(1, 400)]}
    items = [{"id": f"check-{i}", "status": "pass"} for i in range(120)]
    findings = [{"rule": f"CU{100 + i % 90}", "path": f"f{i}.py", "line": i, "severity": "warning",
                 "message": "m", "fixes": []} for i in range(600)]
    argv = inputs.args(changes=inputs.changes(changes), report=inputs.report(items=items),
                       scan=inputs.scan({"findings": findings, "entry_points": []}))
    assert run(argv).exit_code == 0
    skill = written(inputs)
    text = skill.read_text()
    assert len(text.splitlines()) < 500
    assert "[code changes](references/code-changes.md)" in text
    assert "[validation items](references/validation-items.md)" in text
    full = (skill.parent / "references" / "code-changes.md").read_text()
    assert full.count("| CU101 | replace |") == 399
    assert (skill.parent / "references" / "validation-items.md").read_text().count("| pass |") == 120
    assert lint_skill_dir(skill.parent) == []


def test_hostile_content_in_inputs_stays_contained(inputs):
    changes = {"changes": [{
        "file": "a|b`c.py", "start_line": 1, "end_line": 2, "rule": "X|Y", "operation": "op\n---",
        "message": "pipe | newline\n## Heading <script>", "before": "```\nnot code\n````",
        "after": "---\nname: evil\n---"}]}
    report = inputs.report(items=[{"id": "a|b", "status": "pass", "detail": "x\n# y"}],
                           environment={"torch": "2.1.0; rm -rf /", "python": "3.10"})
    assert run(inputs.args(changes=inputs.changes(changes), report=report)).exit_code == 0
    skill = written(inputs)
    text = skill.read_text()
    front, body, _ = split_frontmatter(text)
    assert yaml.safe_load(front)["name"] == "resnet-50"
    commands = "\n".join(re.findall(r"(?ms)^```bash\n(.*?)^```", text))
    assert "rm -rf" not in commands  # shown in the table of what the host reported, never run
    assert "torch==2.1.0;" not in commands  # an unparseable version is shown, never pinned into a command
    assert not re.search(r"pip install[^\n]* torch( |$)", text, re.M)  # and never a bare torch
    assert lint_skill_dir(skill.parent) == []
    assert "\n## Heading" not in text


# ------------------------------------------------------------------ refusals


def _report_variants():
    base = {"schema": "ascend-migrate/validation-report/1", "verdict": "pass", "items": [],
            "thresholds": {}, "environment": {}}
    yield "verdict fail", dict(base, verdict="fail"), "the report says 'fail' but its items decide 'pass'"
    yield "verdict PASS", dict(base, verdict="PASS"), "the report says 'PASS'"
    yield "verdict true", dict(base, verdict=True), "must be a str"
    yield "wrong schema", dict(base, schema="ascend-migrate/validation-report/2"), "not an ascend-migrate validation report"
    yield "no schema", {k: v for k, v in base.items() if k != "schema"}, "schema is None"
    yield "no items", {k: v for k, v in base.items() if k != "items"}, "no 'items' field"
    yield "items not list", dict(base, items={}), "'items' must be a list"
    yield "thresholds not dict", dict(base, thresholds=[]), "'thresholds' must be a dict"
    yield "no environment", {k: v for k, v in base.items() if k != "environment"}, "no 'environment'"
    yield "failed item", dict(base, items=[{"id": "golden", "status": "fail", "severity": "error"}]), \
        "items decide 'fail'"
    yield "failed item, verdict fail", dict(base, verdict="fail", items=[
        {"id": "golden", "status": "fail", "severity": "error"}]), "verdict is 'fail' (golden failed"
    yield "item not object", dict(base, items=["x"]), "items[0] must be an object"
    yield "top-level list", [base], "must be a JSON object"


@pytest.mark.parametrize("data, message", [v[1:] for v in _report_variants()],
                         ids=[v[0] for v in _report_variants()])
def test_refuses_without_a_passing_report(inputs, snapshot, data, message):
    report = inputs.write("bad-report.json", inputs.signed(data))
    result = run(inputs.args(report=report))
    assert result.exit_code == 2
    assert message in result.output and "bad-report.json" in result.output
    assert snapshot(inputs.out) == {}


def test_refuses_when_report_is_missing(inputs, snapshot):
    argv = inputs.args()
    index = argv.index("--report")
    del argv[index:index + 2]
    result = run(argv)
    assert result.exit_code == 2 and "without a passing validation report" in result.output
    assert snapshot(inputs.out) == {}


def test_refuses_when_report_file_does_not_exist(inputs, snapshot):
    result = run(inputs.args(report=inputs.base / "nope.json"))
    assert result.exit_code == 2 and "nope.json: validation report not found" in result.output
    assert snapshot(inputs.out) == {}


@pytest.mark.parametrize(
    "which, content, message",
    [
        ("report", "{not json", "validation report is not valid JSON: Expecting property name"),
        ("report", b"\xff\xfe\x00garbage", "not UTF-8"),
        ("report", "", "not valid JSON"),
        ("scan", "[1, 2", "scan result is not valid JSON"),
        ("scan", {"findings": {}}, "'findings' must be a list"),
        ("scan", {"findings": [{"path": "a.py"}]}, "findings[0] has no 'rule'"),
        ("changes", "nul\x00l", "change list is not valid JSON"),
        ("changes", {"changes": "x"}, "must have a 'changes' list"),
        ("changes", [{"rule": "X"}], "changes[0] has no 'file'"),
        ("changes", [{"file": "a.py", "start_line": 9, "end_line": 2}], "start_line <= end_line"),
        ("changes", {"style": "magic", "changes": []}, "unknown migration style"),
    ],
)
def test_malformed_inputs_name_file_and_reason(inputs, snapshot, which, content, message):
    path = inputs.write(f"bad-{which}.json", content)
    result = run(inputs.args(**{which: path}))
    assert result.exit_code == 2, result.output
    assert f"bad-{which}.json" in result.output and message in result.output
    assert "Traceback" not in result.output
    assert snapshot(inputs.out) == {}


@pytest.mark.parametrize("name", ["../../x", "a/b", "", ".hidden", "..", "x" * 300, "模型", "/etc/passwd"])
def test_hostile_model_names_write_nothing_anywhere(inputs, snapshot, name):
    argv = inputs.args(model=name)
    before = snapshot(inputs.base)
    escaped = (inputs.out / name / "SKILL.md") if name else None
    result = run(argv)
    assert result.exit_code == 2 and result.output.startswith("error: ")
    assert snapshot(inputs.base) == before
    assert not inputs.out.exists()
    if escaped is not None and len(name) < 200:
        assert not escaped.exists()


def test_unicode_name_is_slugified_inside_out_root(inputs):
    result = run(inputs.args(model="Ｌｌａｍａ 3 ✓ 8B"))
    assert result.exit_code == 0, result.output
    assert written(inputs, "llama-3-8b").is_file()
    assert [p.name for p in inputs.out.iterdir()] == ["llama-3-8b"]


# ------------------------------------------------------------------ overwrite and atomicity


def test_no_overwrite_without_force(inputs):
    assert run(inputs.args()).exit_code == 0
    skill = written(inputs)
    skill.write_text("hand-edited\n")
    result = run(inputs.args())
    assert result.exit_code == 2 and "already exists; give this port another --model name, or pass --force" in result.output
    assert skill.read_text() == "hand-edited\n"
    result = run(inputs.args(force=True))
    assert result.exit_code == 0
    assert skill.read_text().startswith("---\nname: resnet-50\n")
    # no temp files left
    assert sorted(p.name for p in skill.parent.iterdir()) == ["SKILL.md", "entry", "manual.patch", "replay.json",
                                                              "tools"]


def test_force_removes_stale_generated_references(inputs):
    many = {"changes": [{"file": "a.py", "start_line": i, "end_line": i, "rule": "R"} for i in range(100)]}
    assert run(inputs.args(changes=inputs.changes(many))).exit_code == 0
    extra = written(inputs).parent / "references" / "code-changes.md"
    assert extra.is_file()
    assert run(inputs.args(force=True)).exit_code == 0
    assert not extra.exists()


def test_failed_replace_keeps_the_old_skill(inputs, monkeypatch):
    assert run(inputs.args()).exit_code == 0
    skill = written(inputs)
    skill.write_text("previous skill\n")
    before = sorted(p.name for p in skill.parent.iterdir())

    real_replace = os.replace

    def broken_replace(src, dst):
        if Path(dst).is_relative_to(inputs.out):  # only the skill's own writes fail
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(writer.os, "replace", broken_replace)
    result = run(inputs.args(force=True))
    assert result.exit_code == 1 and "No space left on device" in result.output
    assert skill.read_text() == "previous skill\n"
    assert sorted(p.name for p in skill.parent.iterdir()) == before


def test_failure_while_writing_the_temp_file_leaves_nothing(inputs, monkeypatch, snapshot):
    def broken_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(writer.os, "fsync", broken_fsync)
    result = run(inputs.args())
    assert result.exit_code == 1 and "Input/output error" in result.output
    assert not written(inputs).exists()
    assert [p for p in inputs.out.rglob("*") if p.is_file()] == []


def test_write_goes_through_a_temp_file_and_rename(inputs, monkeypatch):
    seen = []
    real_link = os.link

    def spy_link(src, dst, *args, **kwargs):
        seen.append((Path(src), Path(dst)))
        assert Path(src).parent == Path(dst).parent
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(writer.os, "link", spy_link)
    assert run(inputs.args()).exit_code == 0
    assert [dst.name for _, dst in seen][-1] == "SKILL.md"  # written last
    assert all(Path(src).name.startswith(f".{dst.name}.") for src, dst in seen)


def test_symlinked_skill_folder_is_refused(inputs, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    inputs.out.mkdir()
    (inputs.out / "resnet-50").symlink_to(outside, target_is_directory=True)
    result = run(inputs.args(force=True))
    assert result.exit_code == 2 and "symbolic link" in result.output
    assert list(outside.iterdir()) == []


def test_out_root_that_is_a_file_is_refused(inputs):
    inputs.out.write_text("a file")
    result = run(inputs.args())
    assert result.exit_code == 2 and "is not a folder" in result.output
    assert inputs.out.read_text() == "a file"


# ------------------------------------------------------------------ entry points and packaging


def test_top_level_cli_dispatches_to_skill(inputs):
    result = CliRunner().invoke(cli, ["skill", *inputs.args()], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert written(inputs).is_file()


def test_script_wrapper_runs_from_a_checkout(inputs):
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "generate_model_skill.py"), *inputs.args()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert written(inputs).is_file()
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "generate_model_skill.py"), *inputs.args()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "already exists" in proc.stderr


def test_scan_runs_when_no_scan_file_is_given(inputs, monkeypatch):
    """Without --scan the project is scanned in-process; a scanner failure only warns."""
    import ascend_migrate.scan.api as api

    def fake_scan(root, **kwargs):
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(api, "scan", fake_scan)
    argv = inputs.args()
    index = argv.index("--scan")
    del argv[index:index + 2]
    result = CliRunner().invoke(skill_command, argv)
    assert result.exit_code == 0, result.output
    assert "warning: scan of" in result.output and "engine exploded" in result.output
    assert "No scan result was available" in written(inputs).read_text()


def test_template_has_one_source_of_truth():
    assert (TEMPLATE_DIR / "SKILL.md.j2").is_file()
    assert TEMPLATE_DIR.is_relative_to(REPO / "src" / "ascend_migrate")
    copies = [p for p in (REPO / "templates").rglob("*.j2") if p.name == "SKILL.md.j2"]
    assert copies == []
    assert "skillgen/templates/model-skill/SKILL.md.j2" in (REPO / "templates" / "README.md").read_text()
    pyproject = (REPO / "pyproject.toml").read_text()
    assert re.search(r'ascend_migrate = \[[^\]]*"\*\*/\*\.j2"', pyproject)


def test_report_with_host_check_stages(inputs):
    """The validator stores `ascend-migrate check --json` as the environment: stages with details."""
    environment = {"device": "npu:0", "verdict": "ok", "stages": [
        {"id": "python", "title": "Python", "status": "ok", "found": "3.10.14", "details": {"python": "3.10.14"}},
        {"id": "torch", "title": "torch", "status": "ok", "found": "torch 2.5.1", "details": {"version": "2.5.1"}},
        {"id": "torch_npu", "title": "torch_npu", "status": "ok", "found": "2.5.1", "details": {"version": "2.5.1"}},
        {"id": "cann", "title": "CANN install", "status": "ok", "found": "8.1.RC1", "details": {"version": "8.1.RC1"}},
    ]}
    thresholds = {"outputs": {"fp16": {"cosine_min": 0.98}}, "used": {"dtype": "fp32", "outputs": {"cosine_min": 0.99, "rmse": None}}}
    report = inputs.report(environment=environment, thresholds=thresholds, device="npu:0",
                           summary={"pass": 3, "fail": 0}, comparison={"cosine": 0.99991})
    assert run(inputs.args(report=report)).exit_code == 0
    text = written(inputs).read_text()
    assert "| CANN install | ok: 8.1.RC1 |" in text
    assert "pip install torch==2.5.1 --index-url" in text and "pip install torch_npu==2.5.1" in text and "CANN must be `8.1.RC1`" in text
    assert "| outputs.cosine_min | 0.99 |" in text and "0.98" not in text and "rmse" not in text
    assert "| comparison.cosine | 0.99991 |" in text and "on `npu:0`" in text


def test_manual_pending_item_blocks_a_pass(inputs, snapshot):
    report = inputs.report(items=[{"id": "host-environment", "status": "manual-pending", "severity": "error"}],
                           verdict="fail")
    result = run(inputs.args(report=report))
    assert result.exit_code == 2 and "host-environment undecided" in result.output
    assert snapshot(inputs.out) == {}


def test_default_report_location_is_used(inputs):
    default = inputs.project / ".ascend-migrate" / "validation-report.json"
    default.parent.mkdir()
    default.write_bytes(inputs.report().read_bytes())
    argv = inputs.args()
    index = argv.index("--report")
    del argv[index:index + 2]
    result = run(argv)
    assert result.exit_code == 0, result.output
    assert "using the validation report at" in result.output


def test_change_list_from_migrate_with_manual_rows(inputs):
    """`migrate --write` leaves ascend-migrate-changes.json in the tree; manual rows are
    adaptation points, not edits."""
    data = {"schema": "ascend-migrate/changes/1", "style": "transfer", "errors": [], "notes": [],
            "changes": [
                {"file": "train.py", "start_line": 1, "end_line": 1, "rule": "EX001", "operation": "inject",
                 "message": "import transfer_to_npu", "safety": "safe"},
                {"file": "requirements.txt", "start_line": 1, "end_line": 1, "rule": "PK001",
                 "operation": "manual", "message": "dependency `torch_scatter`: build from source", "safety": ""}]}
    (inputs.project / "ascend-migrate-changes.json").write_text(json.dumps(data))
    argv = inputs.args()
    index = argv.index("--changes")
    del argv[index:index + 2]
    result = run(argv)
    assert result.exit_code == 0, result.output
    assert "using the change list at" in result.output
    text = written(inputs).read_text()
    code = text.split("## Code changes")[1].split("## Model-specific")[0]
    adaptation = text.split("## Model-specific adaptation points")[1].split("## Scan summary")[0]
    assert "1 edit(s) in 1 file(s)" in code and "PK001" not in code
    assert "`requirements.txt:1` **PK001**: dependency `torch_scatter`: build from source" in adaptation


def test_project_packages_keep_the_cpu_torch_and_pytorch_packages_come_from_its_index(inputs):
    """An unpinned torchvision from the general index would bring its own torch (a CUDA build on
    x86_64) or a CUDA torchvision that does not load beside the CPU torch: step 6 pins torch with
    a constraint, offers the CPU index, and imports the PyTorch packages at the end."""
    for root in (inputs.project, inputs.original):
        (root / "vision.py").write_text("import torchvision\nimport yaml\n", encoding="utf-8")
    result = run(inputs.args())
    assert result.exit_code == 0, result.output
    text = written(inputs).read_text(encoding="utf-8")
    step6 = text.split("### 6. Install the project's dependencies")[1].split("\n### ")[0]
    assert "printf '%s\\n' torch==2.1.0 > \"$VENV/torch-pin.txt\"" in step6
    install = next(line for line in step6.splitlines() if "pip install" in line and "torchvision" in line)
    assert '-c "$VENV/torch-pin.txt"' in install and "--extra-index-url" in install
    assert "assert torch.version.cuda is None" in step6
    assert "-c 'import torchvision'" in step6


def test_packages_only_tests_import_are_an_optional_block_not_part_of_step_6(inputs):
    """A test that imports a library to compare against (a reference implementation from
    `transformers`) must not add that library to the recipe's path: it goes to an optional block
    that keeps the CPU torch pinned like step 6."""
    for root in (inputs.project, inputs.original):
        (root / "tests").mkdir(exist_ok=True)
        (root / "tests" / "test_reference.py").write_text(
            "import transformers\nimport yaml\n", encoding="utf-8")
        (root / "loader.py").write_text("import yaml\n", encoding="utf-8")
    result = run(inputs.args())
    assert result.exit_code == 0, result.output
    text = written(inputs).read_text(encoding="utf-8")
    step6 = text.split("### 6. Install the project's dependencies")[1].split("\n### ")[0]
    main_block, optional = step6.split("Only the project's tests import")
    install = next(line for line in main_block.splitlines() if "pip install" in line and "yaml" in line.lower())
    assert "transformers" not in main_block
    assert "`transformers`" in optional.split("\n")[0] and "(optional)" in optional
    optional_install = next(line for line in optional.splitlines() if "pip install" in line)
    assert "transformers" in optional_install and "yaml" not in optional_install.lower()
    assert '-c "$VENV/torch-pin.txt"' in optional_install and '-c "$VENV/torch-pin.txt"' in install
    assert "assert torch.version.cuda is None" in optional
    replay = json.loads((written(inputs).parent / "replay.json").read_text(encoding="utf-8"))
    assert replay["environment"]["test_packages"] == ["transformers"]
    assert "transformers" not in replay["environment"]["project_packages"]
