"""The real-repository harness (bench/realworld.py) keeps working: its static checks on small
sources, and one end-to-end run over a tiny tree written for this test."""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

# The harness reads syntax nodes that exist from Python 3.10 on; benchmarks run on the CI Python.
pytestmark = pytest.mark.skipif(sys.version_info < (3, 10), reason="bench harness needs Python 3.10+")

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("realworld_harness", ROOT / "bench" / "realworld.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


rw = _load()


def src(text: str) -> bytes:
    return textwrap.dedent(text).lstrip().encode()


# --------------------------------------------------------------------------- name binding
def test_helper_used_before_the_import_it_needs_is_reported():
    old = src("""
        import sys
        sys.path.insert(0, ".")
        import torch
        device = "cuda"
    """)
    new = src("""
        import sys
        _device_type = torch.accelerator.current_accelerator().type
        sys.path.insert(0, ".")
        import torch
        device = _device_type
    """)
    problems = rw.binding_problems(old, new, "late.py")
    assert [(p["line"], p["name"]) for p in problems] == [(2, "torch")]
    assert problems[0]["file"] == "late.py" and "before it is bound" in problems[0]["where"]


def test_names_bound_first_or_used_only_in_functions_are_fine():
    old = src("""
        import torch
        def pick():
            return "cuda"
        x = torch.zeros(1).cuda()
    """)
    new = src("""
        import torch
        def pick():
            return _device_type
        _device_type = torch.accelerator.current_accelerator().type
        x = torch.zeros(1).to(_device_type)
    """)
    assert rw.binding_problems(old, new, "ok.py") == []


def test_function_use_of_a_name_bound_nowhere_is_reported():
    old = src("""
        def go(t):
            return t.cuda()
    """)
    new = src("""
        def go(t):
            return t.to(_device_type)
    """)
    problems = rw.binding_problems(old, new, "lib.py")
    assert [(p["line"], p["name"]) for p in problems] == [(2, "_device_type")]
    assert "function" in problems[0]["where"]


def test_problems_the_original_already_had_are_not_counted():
    old = src("""
        x = torch.zeros(1)
        import torch
    """)
    new = src("""
        x = torch.zeros(1)
        import torch
        y = torch.ones(1)
    """)
    assert rw.binding_problems(old, new, "same.py") == []
    newer = new + b"z = torch_npu.npu.device_count()\n"
    assert [(p["line"], p["name"]) for p in rw.binding_problems(old, newer, "same.py")] == [(4, "torch_npu")]


def test_branches_comprehensions_and_star_imports():
    tree = ast.parse(src("""
        try:
            import torch_npu
        except ImportError:
            torch_npu = None
        flags = [n for n in range(3) if torch_npu]
        from somewhere import *
        anything_goes(torch_npu)
    """))
    assert rw.BindingCheck(tree, {"torch_npu", "n", "anything_goes"}).problems == []


# --------------------------------------------------------------------------- entry points by evidence
def test_code_evidence_tells_scripts_from_libraries():
    script = ast.parse(src("""
        import argparse, torch
        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        for step in range(3):
            loss = torch.ones(1, requires_grad=True).sum()
            loss.backward()
    """))
    library = ast.parse(src("""
        import torch
        SIZES = {"a": 1}
        def build():
            return torch.nn.Linear(2, 2)
    """))
    assert rw.code_evidence(script) == ["module-level argument parsing", "module-level training loop"]
    assert rw.code_evidence(library) == []


def test_launch_lines_name_the_script_not_its_config_argument(tmp_path):
    (tmp_path / "conf").mkdir()
    for name in ("fit.py", "conf/small.py", "tools/probe.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "tools" / "score.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("Run `python fit.py conf/small.py` and then\n\n    python -m tools.probe --fast\n")
    (tmp_path / "run.sh").write_text("python -m torch.distributed.launch --nproc_per_node=2 tools/score.py conf/small.py\n")
    files = rw.walk_files(tmp_path)
    found = rw.launch_mentions(tmp_path, files, {f for f in files if f.endswith(".py")})
    assert found == {"fit.py": {"launched by README.md"}, "tools/probe.py": {"launched by README.md"},
                     "tools/score.py": {"launched by run.sh"}}


def test_pow2_ratio_spots_a_loss_scaler():
    assert rw._pow2_ratio((2.5).hex(), (2.5 * 65536).hex()) == 16
    assert rw._pow2_ratio((2.5).hex(), (2.6).hex()) is None
    assert rw._pow2_ratio((2.5).hex(), (2.5).hex()) is None


# --------------------------------------------------------------------------- end to end on a tiny tree
TREE = {
    "start.sh": "#!/bin/sh\npython fit_model.py --epochs 1\n",
    "fit_model.py": """
        import argparse
        import torch
        from shared import blocks

        parser = argparse.ArgumentParser()
        parser.add_argument("--epochs", type=int, default=1)
        args = parser.parse_args()
        device = "cuda"
        net = blocks.make().to(device)
        scaler = torch.cuda.amp.GradScaler()
        for epoch in range(args.epochs):
            with torch.cuda.amp.autocast():
                out = net(torch.randn(4, 8, device=device)).sum()
            scaler.scale(out).backward()
        torch.cuda.synchronize()
    """,
    "shared/__init__.py": "",
    "shared/blocks.py": """
        import torch

        def make():
            return torch.nn.Linear(8, 2).cuda()

        if __name__ == "__main__":
            print(make()(torch.zeros(1, 8, device="cuda")))
    """,
    "prelude_then_torch.py": '''
        """Docstring first, then a path tweak, then torch."""
        import os
        import sys
        sys.path.insert(0, os.path.dirname(__file__))
        import torch

        def main():
            x = torch.zeros(2).cuda()
            torch.cuda.empty_cache()
            return x

        if __name__ == "__main__":
            main()
    ''',
}


@pytest.fixture(scope="module")
def run_result(tmp_path_factory):
    base = tmp_path_factory.mktemp("rw")
    repos = base / "repos"
    tree = repos / "tinyproj"
    for rel, text in TREE.items():
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    (repos / "COMMITS.txt").write_text("someone+tinyproj 0123abcd\n")
    out, md = base / "r.json", base / "r.md"
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + old if old else "")
    try:
        assert rw.main(["--repos", str(repos), "--out", str(out), "--md", str(md), "--work", str(base / "work"),
                        "--quiet"]) == 0
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    return json.loads(out.read_text()), md.read_text(), tree


def test_end_to_end_row_is_complete(run_result):
    payload, _, _ = run_result
    assert payload["schema"] == rw.SCHEMA
    [row] = payload["repositories"]
    assert row["name"] == "tinyproj" and row["commit"] == "someone/tinyproj@0123abcd"
    assert row["files"] == len(TREE) and row["python_files"] == 4
    scan = row["scan"]
    assert not scan["crashed"] and scan["files"] >= 4 and scan["findings"] > 0
    assert sum(scan["by_severity"].values()) == scan["findings"]
    for style in ("transfer", "agnostic"):
        step = row[style]
        assert not step["crashed"], step.get("error")
        assert step["edits"] > 0 and step["changed_files"], style
        assert set(step["changed_files"]) <= set(TREE)
        assert step["parse_checked"] == sum(1 for f in step["changed_files"] if f.endswith(".py"))
        for key in ("parse_failures", "name_binding", "refused", "dropped_files"):
            assert isinstance(step[key], list)
        assert step["idempotency"].get("crashed") is not True
        assert step["idempotency"]["changed_files"] == []  # own records (runs, change lists) are not counted


def test_end_to_end_entry_classification(run_result):
    payload, _, _ = run_result
    ent = payload["repositories"][0]["transfer"]["entries"]
    expected = {e["file"]: e["reasons"] for e in ent["expected_entries"]}
    # the launched, argparse-at-module-level script is an entry point; the imported module is not
    assert "launched by start.sh" in expected["fit_model.py"]
    assert "module-level argument parsing" in expected["fit_model.py"]
    assert "shared/blocks.py" not in expected
    assert expected["prelude_then_torch.py"] == ["main guard"]
    injected = set(ent["injected"])
    assert {e["file"] for e in ent["missed_entries"]} == set(expected) - injected
    assert {e["file"] for e in ent["injected_imported"]} == injected & {"shared/blocks.py", "shared/__init__.py"}
    for e in ent["injected_imported"]:
        assert e["imported_by"] == ["fit_model.py"]


def test_output_is_stable_and_the_markdown_has_the_table(run_result):
    payload, md, _ = run_result
    row = payload["repositories"][0]
    for style in ("transfer", "agnostic"):
        assert row[style]["changed_files"] == sorted(row[style]["changed_files"])
    assert "<!-- realworld:begin -->" in md and "<!-- realworld:end -->" in md
    table_line = next(line for line in md.splitlines() if line.startswith("| tinyproj |"))
    assert table_line.count("|") == rw.TABLE_HEAD.count("|")
    assert f"| {row['files']} ({row['python_files']}) |" in table_line


# a script users launch (notes.md) that another script of the tree also imports
LAUNCHED_AND_IMPORTED = {
    "runner.py": "import torch\nimport trainer\ntrainer.go()\n",
    "trainer.py": "import torch\ndef go():\n    pass\nif __name__ == '__main__':\n    go()\n",
    "notes.md": "    python trainer.py\n    python runner.py\n",
}


def _write(root, files):
    for rel, text in files.items():
        (root / rel).write_text(text)


def test_imported_module_also_launched_is_flagged(tmp_path):
    _write(tmp_path, LAUNCHED_AND_IMPORTED)
    ent = rw.entry_analysis(tmp_path, tmp_path, rw.walk_files(tmp_path), ["trainer.py"])
    assert ent["injected_imported"] == [{"file": "trainer.py", "imported_by": ["runner.py"], "importers": 1,
                                         "also_run_by_users": ["launched by notes.md"]}]
    assert [e["file"] for e in ent["missed_entries"]] == ["runner.py"]


def test_a_guarded_injection_into_an_imported_script_is_not_a_defect(tmp_path):
    _write(tmp_path, LAUNCHED_AND_IMPORTED)
    guarded = ('if __name__ in ("__main__", "__mp_main__"):\n    import torch_npu\n'
               '    from torch_npu.contrib import transfer_to_npu\n').encode()
    plain = b"import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n"
    body = LAUNCHED_AND_IMPORTED["trainer.py"].encode()
    assert rw.has_injection(guarded + body, "trainer.py") == "guarded"
    assert rw.has_injection(plain + body, "trainer.py") == "plain"
    assert rw.has_injection(guarded + plain + body, "trainer.py") == "plain"  # one unguarded import is enough
    assert rw.has_injection(body, "trainer.py") == ""
    ent = rw.entry_analysis(tmp_path, tmp_path, rw.walk_files(tmp_path), ["trainer.py", "runner.py"],
                            guarded=["trainer.py"])
    assert ent["injected_imported"] == []
    assert ent["injected_guarded"] == [{"file": "trainer.py", "imported_by": ["runner.py"], "importers": 1}]
    assert ent["missed_entries"] == []
