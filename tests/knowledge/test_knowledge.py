"""The knowledge base: complete for torch 2.13, schema-checked, and in sync with its docs."""
import importlib
import pkgutil
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.knowledge.base import load_knowledge, load_knowledge_from
from ascend_migrate.knowledge.docs import render_all
from ascend_migrate.knowledge.loader import DATA_DIR, KnowledgeError


def _runner() -> CliRunner:
    """A runner that keeps stderr apart: click 8.2+ always does; 8.1 (Python 3.9) needs asking."""
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


ROOT = Path(__file__).resolve().parents[2]


def _public_cuda_names() -> set[str]:
    torch = pytest.importorskip("torch")
    import torch.cuda

    names = {f"torch.cuda.{n}" for n in torch.cuda.__all__}
    for mod in pkgutil.iter_modules(torch.cuda.__path__):
        if mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"torch.cuda.{mod.name}")
        public = getattr(module, "__all__", None)
        if public is None:
            public = [n for n, v in vars(module).items()
                      if not n.startswith("_") and isinstance(v, type) and v.__module__ == module.__name__]
        names.update(f"torch.cuda.{mod.name}.{n}" for n in public)
    return names


def test_every_public_torch_cuda_name_is_classified():
    kb = load_knowledge()
    missing = sorted(_public_cuda_names() - set(kb.cuda_names))
    assert not missing, f"not classified in torch_cuda.yaml: {missing}"


def test_partial_mappings_are_explicit():
    kb = load_knowledge()
    for name, rule in [("get_device_capability", "CU101"), ("DoubleTensor", "CU105"), ("graphs.CUDAGraph", "CU106"),
                       ("nvtx.range_push", "CU107"), ("cudart", "CU108"), ("amp.GradScaler", "AM002")]:
        assert kb.cuda_names[f"torch.cuda.{name}"].rule == rule
    assert kb.cuda_names["torch.cuda.get_device_name"].transfer == "partial"


def test_every_rule_has_docs_and_examples():
    kb = load_knowledge()
    for rule in kb.rules.values():
        for field in ("message", "why", "how", "before", "after", "npu"):
            assert getattr(rule, field).strip(), f"{rule.id}.{field}"


def test_what_an_npu_branch_makes_harmless_follows_the_rule_data():
    """Errors no style fixes automatically stay errors inside a branch for npu; what a rewrite or
    transfer_to_npu handles becomes information there; an explicit `npu_branch` wins."""
    kb = load_knowledge()
    effect = {rid: rule.npu_branch_effect for rid, rule in kb.rules.items()}
    for rid in ("DS003", "EX002", "EX003", "PK002", "CU002", "CU107"):
        assert effect[rid] == "keep", rid
    for rid in ("CU001", "DV001", "DV004", "CU101", "PR002", "NV001"):
        assert effect[rid] == "info", rid
    nccl = kb.rule("DS001")
    assert (nccl.severity, nccl.npu_branch, effect["DS001"]) == ("warning", "keep", "keep")  # set in the YAML
    derived = {rid for rid, rule in kb.rules.items() if not rule.npu_branch and effect[rid] == "keep"}
    assert all(kb.rules[rid].severity == "error" for rid in derived)
    assert all(kb.rules[rid].fix_kind(style) not in ("safe", "unsafe") for rid in derived for style in ("transfer", "agnostic"))


@pytest.mark.parametrize("mutation,key", [
    (lambda t: t.replace("severity: info", "severity: loud", 1), "severity"),
    (lambda t: t.replace("    effort: none\n", "", 1), "effort"),
    (lambda t: t.replace("  - id: CU001", "  - id: cu1", 1), "id"),
    (lambda t: t + "  - [unclosed\n", "line"),
    (lambda t: t.replace("    effort: none\n", "    effort: none\n    npu_branch: maybe\n", 1), "npu_branch"),
])
def test_malformed_rule_file_gives_one_clear_error(tmp_path, mutation, key):
    data = tmp_path / "knowledge"
    shutil.copytree(DATA_DIR, data, ignore=shutil.ignore_patterns("*.py", "__pycache__", "coverage"))
    path = data / "rules" / "cuda_api.yaml"
    path.write_text(mutation(path.read_text()))
    with pytest.raises(KnowledgeError) as info:
        load_knowledge_from(data)
    message = str(info.value)
    assert message.startswith(str(path)) and key in message


def test_generated_references_are_in_sync():
    stale = [target for target, text in render_all().items()
             if not (ROOT / target).exists() or (ROOT / target).read_text(encoding="utf-8") != text]
    assert not stale, f"run `ascend-migrate docs --write`: {stale}"


def test_docs_outside_a_checkout_says_so(tmp_path):
    from click.testing import CliRunner

    from ascend_migrate.knowledge.cli import docs_command

    for args in ([], ["--check"], ["--write"]):
        out = _runner().invoke(docs_command, [*args, "--root", str(tmp_path)])
        assert out.exit_code == 2, out.output
        assert "not an ascend-migrate checkout" in out.stderr and "out of date" not in out.output
    assert list(tmp_path.iterdir()) == []  # --write created nothing there


def test_docs_check_in_the_checkout_and_its_help():
    from click.testing import CliRunner

    from ascend_migrate.knowledge.cli import docs_command

    repo = Path(__file__).resolve().parents[2]
    out = _runner().invoke(docs_command, ["--check", "--root", str(repo)])
    assert out.exit_code == 0 and "up to date" in out.output
    help_text = _runner().invoke(docs_command, ["--help"]).output
    for option in ("--check", "--write", "--root"):
        assert option in help_text  # every option the help names exists (click rejects unknown ones)
    assert _runner().invoke(docs_command, ["--check", "--write", "--root", str(repo)]).exit_code == 2


def test_docs_check_names_a_stale_skill_wheel(tmp_path):
    """A skill folder installs the wheel it carries: `docs --check` must see a wheel that no longer
    matches the package, as it sees a stale reference."""
    import shutil

    from ascend_migrate.knowledge.cli import docs_command
    from ascend_migrate.knowledge.docs import skill_tool_wheels

    repo = Path(__file__).resolve().parents[2]
    (tmp_path / "src").symlink_to(repo / "src")
    shutil.copytree(repo / "references", tmp_path / "references")
    shutil.copytree(repo / "skills", tmp_path / "skills")
    wheels = sorted(skill_tool_wheels(tmp_path))
    assert _runner().invoke(docs_command, ["--write", "--root", str(tmp_path)]).exit_code == 0
    assert _runner().invoke(docs_command, ["--check", "--root", str(tmp_path)]).exit_code == 0
    (tmp_path / wheels[0]).write_bytes(b"an older build")
    out = _runner().invoke(docs_command, ["--check", "--root", str(tmp_path)])
    assert out.exit_code == 1 and f"out of date: {wheels[0]}" in out.output, out.output
