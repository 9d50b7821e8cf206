"""Tree-level migration: never lose data, keep bytes outside edits, verify, idempotency."""
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ascend_migrate.fix.api import migrate
from ascend_migrate.fix.migrate import MigrateError
from ascend_migrate.fix.rewrite import Options, apply_edits, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.api import scan
from ascend_migrate.scan.engine import Job, analyse
from ascend_migrate.scan.finding import Edit, Position

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cifar_trainer"


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))


def _tree(tmp_path, files: dict) -> Path:
    root = tmp_path / "src"
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return root


def test_crlf_bom_and_latin1_are_preserved(tmp_path):
    crlf = b"\xef\xbb\xbfimport torch\r\nx = y.cuda()  # move\r\nif __name__ == '__main__':\r\n    pass\r\n"
    latin = b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9'; z = w.cuda()\n"
    root = _tree(tmp_path, {"a.py": crlf, "b.py": latin})
    out = tmp_path / "out"
    migrate(root, style="agnostic", output=out)
    a = (out / "a.py").read_bytes()
    assert a.startswith(b"\xef\xbb\xbfimport torch\r\n") and b"\n" not in a.replace(b"\r\n", b"")
    assert b"x = y.to(_device_type)  # move\r\n" in a
    b = (out / "b.py").read_bytes()
    assert b"name = '\xe9'; z = w.to(_device_type)\n" in b
    assert (root / "a.py").read_bytes() == crlf  # the source is untouched


def test_nothing_to_change_is_byte_identical(tmp_path):
    data = b"import math\r\n\r\n\r\ndef f(x):  # odd   spacing\r\n    return math.sqrt(x)\r\n"
    root = _tree(tmp_path, {"m.py": data})
    result = migrate(root, style="agnostic", write=True)
    assert result.changes == [] and (root / "m.py").read_bytes() == data


def test_write_in_place_keeps_file_mode(tmp_path):
    root = _tree(tmp_path, {"run.py": "import torch\nx = torch.zeros(1).cuda()\n"})
    os.chmod(root / "run.py", 0o750)
    migrate(root, style="agnostic", write=True)
    assert stat.S_IMODE((root / "run.py").stat().st_mode) == 0o750
    assert ".to(_device_type)" in (root / "run.py").read_text()
    assert (root / "ascend-migrate-changes.json").exists() and (root / "ascend-migrate-changes.csv").exists()


def test_output_safety(tmp_path):
    root = _tree(tmp_path, {"a.py": "import torch\ntorch.cuda.synchronize()\n"})
    with pytest.raises(MigrateError, match="inside the source"):
        migrate(root, output=root / "ported")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    with pytest.raises(MigrateError, match="not empty"):
        migrate(root, output=busy)
    migrate(root, output=busy, force=True)
    assert (busy / "keep.txt").read_text() == "mine"


def test_symlink_out_of_tree_is_never_written(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("import torch\nx = y.cuda()\n")
    root = _tree(tmp_path, {"a.py": "import torch\n"})
    os.symlink(outside, root / "link.py")
    migrate(root, style="agnostic", write=True)
    assert outside.read_text() == "import torch\nx = y.cuda()\n"


def test_unparseable_file_is_listed_not_rewritten(tmp_path):
    root = _tree(tmp_path, {"old.py": "print 'x'; torch.cuda.synchronize()\n"})
    result = migrate(root, write=True)
    assert (root / "old.py").read_text() == "print 'x'; torch.cuda.synchronize()\n"
    assert any(c.rule == "SC001" for c in result.manual)


def test_overlapping_edits_resolve_deterministically():
    text = "abcdef\n"
    edits = [Edit(Position(1, 1), Position(1, 4), "X"), Edit(Position(1, 2), Position(1, 5), "Y"),
             Edit(Position(1, 1), Position(1, 4), "X"), Edit(Position(1, 0), Position(1, 0), "<")]
    out, dropped = apply_edits(text, edits)
    assert out == "<aXef\n" and [e.text for e in dropped] == ["Y"]
    assert apply_edits(text, list(reversed(edits)))[0] == out


def test_nested_edit_composes_inside_a_wrapper_that_keeps_the_original():
    text = "x = f(g(1))\n"
    outer = Edit(Position(1, 4), Position(1, 11), "(f(g(1)) or 0)")   # wraps the original verbatim
    inner = Edit(Position(1, 6), Position(1, 10), "h(1)")
    out, dropped = apply_edits(text, [inner, outer])
    assert out == "x = (f(h(1)) or 0)\n" and not dropped
    rewritten = Edit(Position(1, 4), Position(1, 11), "k()")             # does not keep it: inner dropped
    out, dropped = apply_edits(text, [inner, rewritten])
    assert out == "x = k()\n" and dropped == [inner]


def test_nested_cuda_calls_rewrite_in_one_pass(tmp_path):
    """A capability query whose argument is itself a fixable CUDA call: both fixes land, and the
    second pass finds nothing (before, the overlap made the file fail verification)."""
    src = "import torch\nmajor, minor = torch.cuda.get_device_capability(torch.cuda.current_device())\n"
    root = _tree(tmp_path, {"m.py": src})
    result = migrate(root, style="agnostic", write=True)
    assert not result.errors
    assert (root / "m.py").read_text() == (
        "import torch\nmajor, minor = (torch.cuda.get_device_capability(torch.accelerator.current_device_index())"
        " if torch.version.cuda else (0, 0))\n")
    assert [c.rule for c in result.changes] == ["CU101", "CU001"]


def test_annotate_lists_manual_items_once(tmp_path):
    root = _tree(tmp_path, {"m.py": "import torch\nmodel = torch.nn.DataParallel(net)\n"})
    migrate(root, write=True, annotate=True)
    once = (root / "m.py").read_text()
    assert "# TODO(npu): DS003" in once
    migrate(root, write=True, annotate=True)
    assert (root / "m.py").read_text() == once


_SNIPPETS = [
    "x = torch.zeros(2).cuda()", "torch.cuda.synchronize()", 'd = torch.device("cuda")',
    "ok = t.is_cuda", 'same = t.device.type == "cuda"', "cap = torch.cuda.get_device_capability()",
    "s = torch.cuda.amp.GradScaler()", "with torch.cuda.amp.autocast():\n    y = 1",
    'dist.init_process_group("nccl")', "n = torch.cuda.get_device_name(device=0)",
    'p = torch.cuda.get_device_properties(0).major', "m = nn.DataParallel(m)", "value = compute(1, 2)",
    'log.info("cuda")', "def f(torch):\n    return torch.cuda.is_available()", "y = [i for i in range(3)]",
    'loader = DataLoader(ds, pin_memory_device="cuda")', "z = f'cuda:{rank}'",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_SNIPPETS), min_size=1, max_size=8),
       st.sampled_from(["transfer", "agnostic"]), st.booleans())
def test_property_scanner_never_raises_and_output_is_idempotent(snippets, style, inject):
    source = "import torch\nimport torch.nn as nn\nimport torch.distributed as dist\n" + "\n".join(snippets) + "\n"
    kb = load_knowledge()
    analyse(Job("p.py", "python"), source.encode(), kb)
    opts = Options(style=style, inject=inject, annotate=True)
    once = rewrite_python(kb, "p.py", source, opts).text
    compile(once, "p.py", "exec")
    assert rewrite_python(kb, "p.py", once, opts).text == once


def _losses(script: Path, *args: str) -> bytes:
    log = script.parent / "losses.json"
    subprocess.run([sys.executable, "-W", "ignore", str(script), "--steps", "20", "--loss-log", str(log), *args],
                   check=True, cwd=script.parent, capture_output=True, timeout=600)
    return log.read_bytes()


@pytest.mark.needs_torch
def test_example_agnostic_port_runs_on_cpu_with_identical_losses(tmp_path):
    original = tmp_path / "original"
    import shutil
    shutil.copytree(EXAMPLE, original)
    ported = tmp_path / "ported"
    result = subprocess.run([sys.executable, "-m", "ascend_migrate", "migrate", str(EXAMPLE), "--style", "agnostic",
                             "--output", str(ported)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "torch.cuda.amp" not in (ported / "train.py").read_text()
    assert _losses(ported / "train.py") == _losses(original / "train.py", "--device", "cpu")
    again = migrate(ported, style="agnostic")
    assert [f.path for f in again.files if f.new is not None] == []


def test_example_transfer_port_leaves_only_covered_or_manual_findings(tmp_path):
    ported = tmp_path / "ported"
    result = migrate(EXAMPLE, style="transfer", output=ported)
    assert not result.errors
    train = (ported / "train.py").read_text()
    assert "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n" in train
    kb = load_knowledge()
    manual = {(c.file, c.rule) for c in result.manual}  # lines shift by the injected imports
    for f in scan(ported, use_cache=False).findings:
        fix = f.fix_for("transfer")
        assert fix is None or not fix.edits, f"fixable finding left: {f}"
        covered = kb.rule(f.rule).transfer != "none"
        assert covered or (f.path, f.rule) in manual or f.severity == "info", f


@pytest.mark.parametrize("style", ["transfer", "agnostic"])
@pytest.mark.parametrize("annotate", [False, True])
def test_manual_items_point_into_the_migrated_file(tmp_path, style, annotate):
    """Inserted imports, helpers and TODO comments move lines: a manual row names the line a person
    opens in the migrated tree, and that line is the one the original flagged."""
    ported = tmp_path / "ported"
    result = migrate(EXAMPLE, style=style, output=ported, annotate=annotate)
    moved = 0
    assert result.manual
    for row in result.manual:
        before = (EXAMPLE / row.file).read_text(encoding="utf-8").splitlines()
        after = (ported / row.file).read_text(encoding="utf-8").splitlines()
        assert row.new_line >= 1, row
        assert after[row.new_line - 1] == before[row.start_line - 1], row
        if annotate and row.file.endswith(".py"):
            assert after[row.new_line - 2].lstrip().startswith(f"# TODO(npu): {row.rule}"), row
        moved += row.new_line != row.start_line
    assert moved, "nothing was inserted above a manual item; the test no longer exercises moved lines"


def test_moved_line_counts_only_edits_before_the_position():
    from ascend_migrate.fix.rewrite import moved_line

    edits = [
        Edit(Position(1, 0), Position(1, 0), "import a\nimport b\n"),   # +2 above
        Edit(Position(3, 4), Position(5, 2), "x"),                     # 3 lines joined: -2
        Edit(Position(9, 0), Position(9, 3), "y\r\nz"),                # after the position
    ]
    assert moved_line(Position(7, 0), edits) == 7
    assert moved_line(Position(5, 8), edits) == 5 + 2 - 2  # after the join, on its last line
    assert moved_line(Position(1, 0), edits[:1]) == 3
    assert moved_line(Position(10, 0), edits) == 11



def _notebook(cells, **dump) -> str:
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c}
                    for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, **dump) + "\n"


def test_notebook_is_rewritten_cell_by_cell_keeping_magics_and_layout(tmp_path):
    text = _notebook([["%load_ext autoreload\n", "import torch\n"],
                      ["!nvidia-smi\n", "torch.cuda.synchronize()\n", "x = torch.ones(2).cuda()"]],
                     indent=1, sort_keys=True, ensure_ascii=False)
    root = _tree(tmp_path, {"nb.ipynb": text})
    result = migrate(root, style="agnostic", write=True)
    assert not result.errors
    new = (root / "nb.ipynb").read_text()
    cells = [c["source"] for c in json.loads(new)["cells"]]
    assert cells[0][0] == "%load_ext autoreload\n" and cells[1][0] == "!nvidia-smi\n"
    assert "torch.accelerator.synchronize() if _accel_type else None\n" in cells[1]
    assert cells[1][-1] == "x = torch.ones(2).to(_device_type)"
    assert sum("_device_type = " in line for c in cells for line in c) == 1  # defined once, where first needed
    assert new == json.dumps(json.loads(new), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    assert {c.message.split(":")[0] for c in result.changes} == {"cell 2"}
    assert migrate(root, style="agnostic").diff() == ""  # a second run changes nothing


def test_transfer_imports_go_into_the_first_code_cell_only(tmp_path):
    root = _tree(tmp_path, {"nb.ipynb": _notebook(["import torch", "torch.cuda.synchronize()"], indent=1)})
    migrate(root, style="transfer", write=True)
    cells = [c["source"] for c in json.loads((root / "nb.ipynb").read_text())["cells"]]
    assert cells[0].startswith("import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n")
    assert cells[1] == "torch.cuda.synchronize()"


def _hand_edited(text: str) -> str:
    """One stored line re-indented by hand (one space more): no json.dumps call writes it."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if '"cell_type"' in line)
    lines[at] = " " + lines[at]
    return "\n".join(lines)


def _outside_sources(text: str) -> str:
    """The text with every `source` value blanked: what a layout-keeping rewrite may not touch."""
    import re

    return re.sub(r'"source": (\[[^\]]*\]|"(?:[^"\\]|\\.)*")', '"source": _', text)


@pytest.mark.parametrize("dump", [{"indent": 1, "ensure_ascii": False}, {"indent": 3}, {"indent": 2, "sort_keys": True}],
                         ids=["nbformat", "indent3", "sorted"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_notebook_in_a_hand_made_layout_gets_only_its_sources_replaced(tmp_path, dump, newline):
    stored = _hand_edited(_notebook([["%pip install -q timm\n", "import torch\n", "print('héllo')\n"],
                                     "torch.cuda.synchronize()\nx = torch.ones(2).cuda()",
                                     ["# untouched\n", "y = 1"]], **dump)).replace("\n", newline)
    root = _tree(tmp_path, {"nb.ipynb": stored.encode()})
    for style in ("transfer", "agnostic"):
        result = migrate(root, style=style, output=tmp_path / f"out-{style}")
        assert not result.errors, result.errors
        new = (tmp_path / f"out-{style}" / "nb.ipynb").read_bytes().decode()
        assert _outside_sources(new) == _outside_sources(stored)  # every byte outside the sources kept
        cells = [c["source"] for c in json.loads(new)["cells"]]
        assert cells[2] == ["# untouched\n", "y = 1"]
        if style == "transfer":
            assert cells[0][:3] == ["%pip install -q timm\n", "import torch_npu\n",
                                    "from torch_npu.contrib import transfer_to_npu\n"]
        else:
            assert "x = torch.ones(2).to(_device_type)" in cells[1]
        assert migrate(tmp_path / f"out-{style}", style=style).diff() == ""  # a second run changes nothing


def test_a_repeated_cells_key_edits_the_one_json_reads(tmp_path):
    """Two `cells` keys: json.loads keeps the last, so that is the one the writer edits."""
    body = _notebook(["import torch\ntorch.cuda.synchronize()"], indent=3)
    text = body.replace('{\n   "cells"', '{\n   "cells": [{"cell_type": "code", "source": "x = 1"}],\n   "cells"', 1)
    root = _tree(tmp_path, {"nb.ipynb": text})
    result = migrate(root, style="agnostic", write=True)
    assert not result.errors
    new = (root / "nb.ipynb").read_text()
    assert '"source": "x = 1"' in new  # the shadowed first list is left as it was
    assert "torch.accelerator.synchronize()" in json.loads(new)["cells"][0]["source"]


def test_a_notebook_whose_text_cannot_be_walked_is_reported_not_rewritten(tmp_path):
    """A NaN literal loads in Python but is not JSON this writer walks: reported, not touched."""
    text = _notebook(["import torch\ntorch.cuda.synchronize()"], indent=3).replace(
        '"metadata": {}', '"metadata": {"score": NaN}', 1)
    root = _tree(tmp_path, {"nb.ipynb": text})
    result = migrate(root, style="agnostic", write=True)
    assert (root / "nb.ipynb").read_text() == text
    assert result.errors and "JSON layout" in result.errors[0].error


@pytest.mark.needs_torch
def test_helper_is_kept_when_the_first_statement_after_the_imports_is_rewritten():
    """The `_device_type` definition and a fix of the next line start at the same offset: both apply
    (the definition used to be dropped, leaving `_device_type` undefined)."""
    kb = load_knowledge()
    source = "import torch\ntorch.cuda.is_available()\nx = torch.ones(2).cuda()\n"
    out = rewrite_python(kb, "a.py", source, Options(style="agnostic"))
    assert out.text.index("_device_type = ") < out.text.index("x = torch.ones(2).to(_device_type)")
    ns: dict = {}
    exec(compile(out.text, "a.py", "exec"), ns)  # runs on this CPU-only machine
    assert ns["x"].device.type == "cpu"


def test_a_fix_that_loses_an_edit_is_withdrawn_whole():
    """Two fixes claim overlapping ranges: the loser is not half-applied but listed as manual."""
    from ascend_migrate.fix import rewrite as rw
    from ascend_migrate.scan.finding import Finding, Fix

    text = "import torch\ny = f(a, b)\n"
    first = Finding(rule="CU001", path="a.py", line=2, col=4, end_line=2, end_col=11, message="first",
                    severity="warning", fixes=(Fix(style="transfer", edits=(Edit(Position(2, 4), Position(2, 11), "g(a, b)"),),
                                                   safety="safe"),))
    second = Finding(rule="CU002", path="a.py", line=2, col=6, end_line=2, end_col=10, message="second",
                     severity="warning", fixes=(Fix(style="transfer", edits=(
                         Edit(Position(2, 0), Position(2, 1), "z"),          # applies on its own
                         Edit(Position(2, 6), Position(2, 7), "A")), safety="safe"),))  # loses to `first`
    original = rw.analyse_python_text
    try:
        rw.analyse_python_text = lambda *a, **k: type("R", (), {"findings": [first, second]})()
        out = rw.rewrite_python(load_knowledge(), "a.py", text, Options(style="transfer"))
    finally:
        rw.analyse_python_text = original
    assert out.text == "import torch\ny = g(a, b)\n"  # not "z = g(a, b)": the second fix is withdrawn whole
    assert [c.rule for c in out.changes] == ["CU001"]
    assert [c.rule for c in out.manual] == ["CU002"] and "not applied" in out.manual[0].message


def test_modulo_continuation_is_not_taken_for_a_magic(tmp_path):
    """`%2` continuing an expression is the modulo operator: kept, and the fix around it is exact."""
    root = _tree(tmp_path, {"nb.ipynb": _notebook([["import torch\n", "n = 7\n", "cap = torch.cuda.get_device_capability(\n",
                                                     "    n\n", "    %2\n", ")\n"]], indent=1)})
    migrate(root, style="transfer", write=True)
    cell = json.loads((root / "nb.ipynb").read_text())["cells"][0]["source"]
    assert cell[-3:] == ["    n\n", "    %2\n", ") or (0, 0))\n"]


def test_writefile_cells_are_listed_not_rewritten_and_bind_nothing(tmp_path):
    cells = ["import torch\n", "%%writefile helper.py\nimport torch\nx = torch.zeros(2, device=\"cuda\")\n",
             "y = torch.ones(2, device=\"cuda\")\n"]
    root = _tree(tmp_path, {"nb.ipynb": _notebook(cells, indent=1)})
    result = migrate(root, style="agnostic", write=True)
    new = [c["source"] for c in json.loads((root / "nb.ipynb").read_text())["cells"]]
    assert new[1] == cells[1]
    assert "_device_type = " in new[2] and new[2].endswith('y = torch.ones(2, device=_device_type)\n')
    assert [m.message.split(" ", 2)[:2] for m in result.manual] == [["cell", "2"]]


def test_cell_lines_split_like_jupyter(tmp_path):
    root = _tree(tmp_path, {"nb.ipynb": _notebook([["import torch\n", 's = "a\u2028b"\n', "x = torch.zeros(2, device='cuda')"]],
                                                  indent=1, ensure_ascii=False)})
    migrate(root, style="agnostic", write=True)
    cell = json.loads((root / "nb.ipynb").read_text())["cells"][0]["source"]
    assert 's = "a\u2028b"\n' in cell and all(line.endswith("\n") for line in cell[:-1])


def test_annotation_inside_a_multiline_rewrite_goes_above_it(tmp_path):
    src = ('import torch\ndef f(x):\n    on = (x\n          .is_cuda) and '
           'torch.cuda.get_device_properties(0).warp_size > 32\n    return on\n')
    root = _tree(tmp_path, {"a.py": src})
    result = migrate(root, style="agnostic", annotate=True, write=True)
    assert not result.errors
    lines = (root / "a.py").read_text().splitlines()
    at = lines.index("def f(x):") + 1  # below the helper the rewrite needs
    assert lines[at].strip().startswith("# TODO(npu): CU102")
    assert lines[at + 1].startswith('    on = ((x.device.type == (_accel_type or "cuda")))')
    assert [(m.rule, m.new_line) for m in result.manual] == [("CU102", at + 2)]


def test_each_run_keeps_its_change_list_and_a_no_op_run_erases_nothing(tmp_path):
    import json

    from ascend_migrate.fix.api import migrate
    from ascend_migrate.fix.runs import last_change_list

    root = tmp_path / "proj"
    root.mkdir()
    (root / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\nif __name__ == '__main__':\n    pass\n")
    first = migrate(root, write=True)
    assert first.written and first.run_dir is not None
    first_list = json.loads((first.run_dir / "changes.json").read_text())
    assert first_list["changes"] and first_list["run"]["options"]["style"] == "transfer"
    assert last_change_list(root) == first.run_dir / "changes.json"
    legacy = (root / "ascend-migrate-changes.json").read_text()

    second = migrate(root, write=True)
    assert not second.written and second.run_dir != first.run_dir
    assert json.loads((second.run_dir / "changes.json").read_text())["changes"] == []
    # the pointer and the top-level list still name the first run's work
    assert last_change_list(root) == first.run_dir / "changes.json"
    assert json.loads(last_change_list(root).read_text()) == first_list
    assert (root / "ascend-migrate-changes.json").read_text() == legacy
    runs = sorted(p.name for p in (root / ".ascend-migrate" / "runs").iterdir())
    assert runs == sorted([first.run_dir.name, second.run_dir.name])
