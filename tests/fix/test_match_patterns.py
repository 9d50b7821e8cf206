"""Strings inside `case` patterns are literal matches, never run-time values: they are listed as
manual with the reason and never rewritten (not merely kept out by the compile check)."""
import ast
import sys
from pathlib import Path

import pytest

from ascend_migrate.fix.rewrite import Options, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.engine import Job, analyse

pytestmark = pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements need Python 3.10+")

SOURCE = (Path(__file__).parent / "golden" / "agnostic" / "device_strings_in_match_patterns.in.py").read_text()


def _pattern_lines(text):
    lines = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.match_case):
            for sub in ast.walk(node.pattern):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "cuda" in sub.value:
                    lines.add(sub.lineno)
    return lines


def test_pattern_strings_have_no_fix_and_say_why():
    findings = analyse(Job("k.py", "python"), SOURCE.encode(), load_knowledge()).findings
    in_patterns = [f for f in findings if f.line in _pattern_lines(SOURCE)]
    assert {f.line for f in in_patterns} == _pattern_lines(SOURCE)
    for f in in_patterns:
        assert not any(fix.edits for fix in f.fixes), f
        assert "match pattern" in f.message


def test_patterns_survive_agnostic_rewrite_while_guard_and_body_change():
    result = rewrite_python(load_knowledge(), "k.py", SOURCE, Options(style="agnostic"))
    assert not result.error
    new_patterns = [ast.unparse(c.pattern) for n in ast.walk(ast.parse(result.text)) if isinstance(n, ast.Match)
                    for c in n.cases]
    old_patterns = [ast.unparse(c.pattern) for n in ast.walk(ast.parse(SOURCE)) if isinstance(n, ast.Match)
                    for c in n.cases]
    assert new_patterns == old_patterns
    manual = {c.start_line for c in result.manual if c.rule == "DV001"}
    assert manual == _pattern_lines(SOURCE)
    assert all("match pattern" in c.message for c in result.manual if c.rule == "DV001")
    assert 'torch.device("cuda")' not in result.text and '== "cuda:0"' not in result.text
