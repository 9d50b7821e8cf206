"""Entry points decided from evidence.

Each folder in entry_fixtures/ is a small project named for the pattern it shows; its EXPECTED
file lists every candidate as `selected|guarded|rejected PATH: words the reason must contain`
(`guarded`: selected, and also imported, so the transfer imports go under a `__name__` test).
The decision set must match exactly (no extra candidate, none missing).
"""
import ast
import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.report import json_report
from ascend_migrate.scan import entries
from ascend_migrate.scan.api import scan

FIXTURES = Path(__file__).parent / "entry_fixtures"
CASES = sorted(p for p in FIXTURES.iterdir() if (p / "EXPECTED").is_file())


def _expected(case: Path, guarded: bool = False) -> dict:
    """{path: (selected, reason words)}, or with guarded=True {path: guarded} of the selected."""
    out: dict = {}
    for line in (case / "EXPECTED").read_text().splitlines():
        if not line.strip():
            continue
        verdict, rest = line.split(" ", 1)
        path, reason = rest.split(": ", 1)
        assert verdict in ("selected", "guarded", "rejected"), line
        if guarded:
            if verdict != "rejected":
                out[path] = verdict == "guarded"
        else:
            out[path] = (verdict != "rejected", reason.strip())
    return out


def _decisions(result) -> dict[str, tuple[bool, str]]:
    return {e.path: (e.selected, e.reason) for e in [*result.entry_points, *result.rejected_entry_points]}


def test_every_pattern_has_a_fixture():
    names = {c.name for c in CASES}
    assert {"script_without_main_guard", "library_with_demo_main", "configurator_exec_script",
            "launched_by_shell_script", "setup_py_not_entry", "script_without_torch",
            "notebooks_reaching_torch", "console_script_in_pyproject", "script_saving_results"} <= names


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_entry_point_decisions(case: Path):
    result = scan(case, use_cache=False)
    got = _decisions(result)
    want = _expected(case)
    assert {p: s for p, (s, _) in got.items()} == {p: s for p, (s, _) in want.items()}
    for path, (_, words) in want.items():
        assert words in got[path][1], f"{path}: reason {got[path][1]!r} lacks {words!r}"
    assert all(e.selected for e in result.entry_points)
    assert not any(e.selected for e in result.rejected_entry_points)
    assert {e.path: e.guarded for e in result.entry_points} == _expected(case, guarded=True)
    assert not any(e.guarded for e in result.rejected_entry_points)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_report_lists_both_kinds_and_matches_the_schema(case: Path):
    result = scan(case, use_cache=False)
    data = json.loads(json_report.dumps(result))
    jsonschema.Draft202012Validator(json_report.load_schema()).validate(data)
    assert [e["path"] for e in data["entry_points"]] == [e.path for e in result.entry_points]
    assert [e["path"] for e in data["rejected_entry_points"]] == [e.path for e in result.rejected_entry_points]
    assert all(e["reason"] for e in data["entry_points"] + data["rejected_entry_points"])


# --------------------------------------------------------------------------- the migrator
def _migrate(root: Path, *extra: str):
    out = root.parent / (root.name + "-out")
    res = CliRunner().invoke(cli, ["migrate", str(root), "--output", str(out), "-q", *extra])
    assert res.exit_code == 0, res.output
    return out


def _has_transfer(path: Path) -> bool:
    return "from torch_npu.contrib import transfer_to_npu" in path.read_text()


def test_transfer_imports_go_only_into_selected_entry_points(tmp_path):
    import shutil

    for case in ("library_with_demo_main", "setup_py_not_entry", "configurator_exec_script",
                 "notebooks_reaching_torch"):
        shutil.copytree(FIXTURES / case, tmp_path / case)
        out = _migrate(tmp_path / case)
        want = _expected(FIXTURES / case)
        python = [p for p in (tmp_path / case).rglob("*") if p.suffix in (".py", ".ipynb")]
        assert python
        for src in python:
            rel = src.relative_to(tmp_path / case).as_posix()
            selected = want.get(rel, (False, ""))[0]
            assert _has_transfer(out / rel) == selected, rel
            if src.suffix == ".py":
                ast.parse((out / rel).read_text())


def test_entry_and_no_entry_overrule_the_evidence(tmp_path):
    import shutil

    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "library_with_demo_main", root)
    res = CliRunner().invoke(cli, ["scan", str(root), "--format", "json", "--no-cache", "--fail-on", "never",
                                   "--entry", "textkit/vocab.py", "--no-entry", str(root / "try_embedder.py")])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [(e["path"], e["reason"]) for e in data["entry_points"]] == [
        ("textkit/vocab.py", 'chosen by --entry (`if __name__ == "__main__"` block at line 13); imports stay '
                             'under the `__name__` test: library module(s) textkit/__init__.py, textkit/embed.py import it')]
    assert data["entry_points"][0]["guarded"] is True  # running it loads transfer_to_npu, `import textkit` does not
    assert [(e["path"], e["reason"]) for e in data["rejected_entry_points"]] == [
        ("try_embedder.py", "excluded by --no-entry")]
    out = _migrate(root, "--entry", "textkit/vocab.py", "--no-entry", "try_embedder.py")
    assert _has_transfer(out / "textkit/vocab.py")
    assert not _has_transfer(out / "try_embedder.py")


def test_an_override_outside_the_tree_is_a_usage_error(tmp_path):
    (tmp_path / "a.py").write_text("import torch\n")
    res = CliRunner().invoke(cli, ["scan", str(tmp_path), "--no-cache", "--entry", "missing.py"])
    assert res.exit_code == 2
    assert "missing.py" in res.output


# --------------------------------------------------------------------------- evidence, unit level
def _facts(src: str) -> entries.EntryFacts:
    return entries.module_facts(ast.parse(src), src)


@pytest.mark.parametrize("src,what", [
    ("import argparse\np = argparse.ArgumentParser()\nargs = p.parse_args()\n", "parses command-line arguments"),
    ("import sys\nif len(sys.argv) > 1:\n    pass\n", "reads sys.argv"),
    ("exec(open('cfg.py').read())\n", "runs cfg.py with exec(open(...))"),
    ("for batch in data:\n    loss = step(batch)\n    loss.backward()\n", "a training loop"),
    ("import torch\nwith torch.no_grad():\n    out = net(x)\n", "model code under no_grad()"),
    ("def main():\n    pass\n\nmain()\n", "calls main() at module level"),
    ("import fire\n\ndef go():\n    pass\n\nfire.Fire(go)\n", "fire.Fire(...)"),
    ("#!/usr/bin/env python3\nimport torch\n", "a #! python line"),
])
def test_module_level_evidence(src, what):
    facts = _facts(src)
    assert any(what in e[2] for e in facts.evidence), facts.evidence


@pytest.mark.parametrize("src", [
    "import torch\nimport logging\nlogger = logging.getLogger(__name__)\ntorch.backends.cudnn.benchmark = True\n",
    "def _register():\n    pass\n\n_register()\n",
    "def train():\n    for x in data:\n        x.backward()\n",
    "class Model:\n    def fit(self):\n        args = parser.parse_args()\n",
    "if __name__ == '__main__':\n    args = parser.parse_args()\n",
    "for name in ('a', 'b'):\n    globals()[name] = name.upper()\n",
])
def test_library_code_is_not_evidence(src):
    assert [e for e in _facts(src).evidence if e[0] != "main-cli"] == []


@pytest.mark.parametrize("src, cli", [
    ("if __name__ == '__main__':\n    args = parser.parse_args()\n", True),
    ("import sys\nif __name__ == '__main__':\n    run(sys.argv[1])\n", True),
    ("def main():\n    args = build().parse_args()\n\nif __name__ == '__main__':\n    main()\n", True),
    ("import fire\ndef go(n=1):\n    pass\nif __name__ == '__main__':\n    fire.Fire(go)\n", True),
    ("import tyro\nif __name__ == '__main__':\n    cfg = tyro.cli(Config)\n", True),
    ("import typer\ndef go(n: int = 1):\n    pass\nif __name__ == '__main__':\n    typer.run(go)\n", True),
    ("from absl import app\ndef main(argv):\n    pass\nif __name__ == '__main__':\n    app.run(main)\n", True),
    ("import click\n@click.command()\ndef serve():\n    pass\nif __name__ == '__main__':\n    serve()\n", True),
    ("import hydra\n@hydra.main(config_path='conf')\ndef train(cfg):\n    pass\n"
     "if __name__ == '__main__':\n    train()\n", True),
    ("from lightning.pytorch.cli import LightningCLI\nif __name__ == '__main__':\n    LightningCLI(Model)\n", True),
    # a demo: a shape check on random input, or arguments parsed from a fixed list
    ("import torch\nif __name__ == '__main__':\n    m = Net()\n    print(m(torch.randn(1, 3)).shape)\n", False),
    ("if __name__ == '__main__':\n    args = parser.parse_args([])\n    demo(args)\n", False),
    ("if __name__ == '__main__':\n    trainer.run()\n", False),
    ("def main():\n    print(1)\n\nif __name__ == '__main__':\n    main()\n", False),
])
def test_a_main_block_that_reads_the_command_line_is_a_tool_not_a_demo(src, cli):
    assert any(e[0] == "main-cli" for e in _facts(src).evidence) == cli


def test_a_package_module_with_a_command_line_main_is_an_entry_point_with_guarded_imports(tmp_path):
    files = {
        "pyproject.toml": '[project]\nname = "convkit"\n',
        "convkit/__init__.py": "",
        "convkit/export.py": "import argparse\nimport torch\n\ndef main():\n    p = argparse.ArgumentParser()\n"
                             "    p.add_argument('--ckpt')\n    a = p.parse_args()\n    torch.load(a.ckpt).cuda()\n\n"
                             "if __name__ == '__main__':\n    main()\n",
        "convkit/layers.py": "import torch\n\nif __name__ == '__main__':\n    print(torch.randn(2).cuda().shape)\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = scan(tmp_path, use_cache=False)
    assert [(e.path, e.guarded) for e in result.entry_points] == [("convkit/export.py", True)]
    assert "parses command-line arguments" in result.entry_points[0].reason
    assert [e.path for e in result.rejected_entry_points] == ["convkit/layers.py"]
    assert "demo" in result.rejected_entry_points[0].reason


def test_torch_is_reached_through_torch_based_packages():
    assert _facts("from transformers import AutoModel\n").torch
    assert _facts("import timm.models\n").torch
    assert not _facts("import numpy as np\nimport tiktoken\n").torch


@pytest.mark.parametrize("text,want", [
    ("python train.py --lr 1\n", [(1, "train.py", "")]),
    ("CUDA_VISIBLE_DEVICES=0 python3 -u tools/eval.py cfg.py\n", [(1, "tools/eval.py", "")]),
    ("python -m torch.distributed.launch --nproc_per_node=8 main.py --x\n", [(1, "main.py", "")]),
    ("torchrun \\\n  --nnodes 2 \\\n  pretrain.py \\\n  --tp 2\n", [(1, "pretrain.py", "")]),
    ("python -m pkg.tools.serve --port 1\n", [(1, "pkg.tools.serve", "")]),
    ("cd examples/mnist && python main.py\n", [(1, "main.py", "examples/mnist")]),
    ("deepspeed --num_gpus 8 finetune.py --deepspeed ds.json\n", [(1, "finetune.py", "")]),
    ("accelerate launch --config_file a.yaml run_clm.py\n", [(1, "run_clm.py", "")]),
    ("uv run main.py --dry-run\n", [(1, "main.py", "")]),
    ("python -c 'import torch; print(1)'\n", []),
    ("python -m pip install -e .\npython -m pytest tests/test_x.py\n", []),
    ("# python commented_out.py\necho python\n", []),
    ("$(PYTHON) scripts/gen.py\n", [(1, "scripts/gen.py", "")]),
])
def test_launch_lines(text, want):
    assert entries.launches(text, "sh") == want


def test_markdown_launch_lines_come_from_shell_blocks_and_inline_code():
    md = ("Run `python quick.py` first.\n\n```bash\n$ python long.py \\\n    --steps 3\n```\n\n"
          "```python\n# python not_a_launch.py\n```\n")
    assert entries.launches(md, "md") == [(1, "quick.py", ""), (4, "long.py", "")]


@pytest.mark.parametrize("rel,build", [
    ("setup.py", True), ("pkg/setup.py", True), ("install.sh", True), ("scripts/install_deps.sh", True),
    ("build.sh", True), ("build_ext.py", True), ("tools/rocm_install.sh", True), ("docker/entry.sh", True),
    (".github/scripts/report.py", True), ("packaging/make_release.sh", True),
    ("train.py", False), ("build_vocab.py", False), ("make_dataset.py", False), ("dist_train.sh", False),
    ("scripts/pretrain.sh", False), ("data/prepare.py", False),
])
def test_build_and_install_scripts(rel, build):
    assert entries.is_build_script(rel) is build


def test_launch_lines_of_build_scripts_do_not_count(tmp_path):
    (tmp_path / "build.sh").write_text("python compile_ops.py\n")
    # no evidence of its own: only the build script's launch line could make it an entry point
    (tmp_path / "compile_ops.py").write_text("import torch\n\n\ndef build():\n    return torch.__version__\n")
    (tmp_path / "run.sh").write_text("python train.py\n")
    (tmp_path / "train.py").write_text("import torch\nprint(torch.__version__)\n")
    result = scan(tmp_path, use_cache=False)
    assert [e.path for e in result.entry_points] == ["train.py"]
    assert result.rejected_entry_points == []


def test_a_file_scanned_alone_is_judged_without_its_tree(tmp_path):
    """Scanning one file: the local modules it imports are not there, so an import that is not
    standard library may bring torch in; only an all-stdlib script is rejected."""
    (tmp_path / "run_local.py").write_text("from mymodel import Net\n\nif __name__ == '__main__':\n    Net()\n")
    (tmp_path / "tidy.py").write_text("import os\n\nif __name__ == '__main__':\n    print(os.getcwd())\n")
    alone = scan(tmp_path / "run_local.py", use_cache=False)
    assert [(e.path, e.selected) for e in alone.entry_points] == [("run_local.py", True)]
    stdlib_only = scan(tmp_path / "tidy.py", use_cache=False)
    assert stdlib_only.entry_points == []
    assert "never reaches torch" in stdlib_only.rejected_entry_points[0].reason


def test_build_and_install_scripts_are_not_rewritten_as_launch_scripts(tmp_path):
    (tmp_path / "install_rocm.sh").write_text("export CUDA_VISIBLE_DEVICES=0\npython setup.py develop\n")
    (tmp_path / "run.sh").write_text("export CUDA_VISIBLE_DEVICES=0\npython train.py\n")
    (tmp_path / "train.py").write_text("import torch\nprint(torch.ones(1).cuda())\n")
    out = _migrate(tmp_path)
    assert (out / "install_rocm.sh").read_text() == (tmp_path / "install_rocm.sh").read_text()
    assert "CUDA_VISIBLE_DEVICES" not in (out / "run.sh").read_text()
    changes = json.loads((out / "ascend-migrate-changes.json").read_text())
    assert any(n.startswith("install_rocm.sh: a build, install or CI script") for n in changes["notes"])
    assert {c["file"] for c in changes["changes"] if c["operation"] != "manual"} >= {"run.sh", "train.py"}
    assert not any(c["file"] == "install_rocm.sh" and c["operation"] != "manual" for c in changes["changes"])


@pytest.mark.parametrize("text", [
    '[project.scripts]\nspeak = "talker.cli:main"\n',
    '[project]\nname = "talker"\nscripts.speak = "talker.cli:main"\n',  # a dotted key in [project]
    '[project]\nname = "talker"\ngui-scripts."speak-ui" = "talker.cli:main"\n',
    '[project]\nscripts = { speak = "talker.cli:main" }\n',  # an inline table
    'setup(entry_points={"console_scripts": ["speak = talker.cli:main"]})\n',
    'project.scripts.speak = "talker.cli:main"\n',  # a dotted key at the top level
    '[tool.flit.scripts]\nspeak = "talker.cli:main"\n',
])
def test_console_scripts_in_every_spelling(text):
    from ascend_migrate.scan.engine import _console_scripts

    assert _console_scripts(text) == ["talker.cli:main"]
