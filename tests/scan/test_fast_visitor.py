"""FastVisitor visits what ast.NodeVisitor visits, in the same order, minus marker nodes."""
from __future__ import annotations

import ast
from pathlib import Path

from ascend_migrate.scan import python_ast
from ascend_migrate.scan.pyast.visitor import FastVisitor

REPO = Path(__file__).resolve().parents[2]
MARKERS = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


class _Recorder:
    def __init__(self):
        self.seen = []

    def visit(self, node):
        self.seen.append(node)
        return super().visit(node)


class SlowRecorder(_Recorder, ast.NodeVisitor):
    pass


class FastRecorder(_Recorder, FastVisitor):
    pass


def test_same_nodes_in_the_same_order_on_real_modules():
    files = sorted((REPO / "src").rglob("*.py")) + sorted((REPO / "tests" / "fixtures").rglob("*.py"))
    compared = 0
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        slow, fast = SlowRecorder(), FastRecorder()
        slow.visit(tree)
        fast.visit(tree)
        expected = [n for n in slow.seen if not isinstance(n, MARKERS)]
        assert fast.seen == expected, path
        assert len(fast.seen) < len(slow.seen) or not any(isinstance(n, MARKERS) for n in slow.seen)
        compared += 1
    assert compared > 50


def test_no_visitor_in_the_package_handles_a_marker_node():
    markers = {c.__name__ for base in MARKERS for c in _subclasses(base)}
    assert {"Load", "Store", "Add", "Eq", "And", "Not"} <= markers
    assert python_ast.PythonAnalyzer in set(_subclasses(FastVisitor))
    checked = 0
    for visitor in _subclasses(FastVisitor):
        if not visitor.__module__.startswith("ascend_migrate."):
            continue
        checked += 1
        handled = {name[len("visit_"):] for name in dir(visitor) if name.startswith("visit_")}
        assert not handled & markers, (visitor.__name__, handled & markers)
    assert checked >= 2  # the analyser and the binding collector at least
