"""scan on crafted trees: deep nesting keeps a file's findings, long lines cost linear time.

Bounds stated here: each scan of these small crafted trees finishes under MAX_SECONDS
(before the fixes one 3,000-character shell line took 33 s, the nested file lost every finding).
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from ascend_migrate.scan.api import scan

MAX_SECONDS = 10
HEAD = "import torch\nx = torch.zeros(1).cuda()\n"
TAIL = "torch.cuda.synchronize()\n"


def _scan(root: Path):
    start = time.process_time()
    result = scan(root, jobs=1, use_cache=False)
    took = time.process_time() - start
    assert took < MAX_SECONDS, took
    return result


@pytest.mark.parametrize("body", [
    "-" * 100_000 + "1",                       # MemoryError in CPython's parser
    "(" * 5_000 + "1" + ")" * 5_000,           # too many nested parentheses
    "+".join(["1"] * 60_000),                  # parses, but the tree is 60,000 deep
    "[" * 3_000 + "]" * 3_000,
    "+".join(["x.cuda()"] * 900),               # parses; deep for a recursive walk
], ids=["unary-minus", "parentheses", "binop-chain", "lists", "binop-900"])
def test_deeply_nested_file_is_reported_and_still_scanned(tmp_path, body):
    (tmp_path / "deep.py").write_text(HEAD + "y = " + body + "\n" + TAIL, encoding="utf-8")
    result = _scan(tmp_path)
    rules = {f.rule for f in result.findings if f.path == "deep.py"}
    notes = [n.reason for n in result.notes if n.path == "deep.py"]
    assert {"DV002", "CU001"} <= rules, rules  # the findings around the nested line are kept
    if notes:  # not parsed (or not walked): reported like any unparsable file
        assert "SC001" in rules and "nested" in notes[0], notes
    assert not [n for n in result.notes if "internal error" in n.reason]


def test_long_shell_line_of_config_like_words(tmp_path):
    """The launch-config reference pattern was cubic in a run of path characters."""
    (tmp_path / "run.sh").write_text("python train.py --cfg " + "a-" * 50_000 + " --x conf.yaml\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(HEAD + TAIL, encoding="utf-8")
    (tmp_path / "conf.yaml").write_text("backend: nccl\n", encoding="utf-8")
    result = _scan(tmp_path)
    assert any(f.path == "conf.yaml" for f in result.findings)  # still named by the launch line


def test_long_pyproject_scripts_line(tmp_path):
    """The console-script pattern was quadratic in a long word."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\n[project.scripts]\n' + "w" * 200_000 + "\ntrain = \"pkg.train:main\"\n",
        encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "train.py").write_text(HEAD + "def main():\n    pass\n", encoding="utf-8")
    result = _scan(tmp_path)
    assert any(e.path == "pkg/train.py" for e in result.entry_points)


def test_findings_per_rule_per_file_are_capped(tmp_path):
    """A generated file with thousands of findings of one rule: the first MAX_FINDINGS_PER_RULE
    are listed, one info finding and the file's note say how many more were left out."""
    from ascend_migrate.scan.engine import MAX_FINDINGS_PER_RULE

    n = MAX_FINDINGS_PER_RULE + 700
    (tmp_path / "gen.py").write_text("import torch\n" + "".join(f"x{i} = torch.zeros(1).cuda()\n" for i in range(n))
                                     + "torch.cuda.synchronize()\n", encoding="utf-8")
    result = _scan(tmp_path)
    dv = [f for f in result.findings if f.rule == "DV002"]
    assert len(dv) == MAX_FINDINGS_PER_RULE + 1
    summary = [f for f in dv if f.symbol == "capped"]
    assert len(summary) == 1 and summary[0].severity == "info" and "700 more DV002" in summary[0].message
    assert summary[0].line == MAX_FINDINGS_PER_RULE + 2  # where the first left-out finding is
    assert [f.rule for f in result.findings if f.rule == "CU001"] == ["CU001"]  # other rules untouched
    assert [n.reason for n in result.notes if n.path == "gen.py"] == [
        f"findings capped at {MAX_FINDINGS_PER_RULE} per rule: DV002 (700 more)"]
