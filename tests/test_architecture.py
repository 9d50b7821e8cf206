"""The package's floors (ARCHITECTURE.md): imports go one way, and the scanner's modules stay small.

Every `import` of a module of the package counts, wherever it is written: at the top of a module
or inside a function (a deferred import is still a dependency, and a circle of deferred imports
is still a circle). Only imports under `if TYPE_CHECKING:` are left out: they never run.
"""
from __future__ import annotations

import ast
from pathlib import Path

import ascend_migrate

SRC = Path(ascend_migrate.__file__).resolve().parent
SCAN = SRC / "scan"
MAX_SCAN_LINES = 600

# Circles that are known and not yet broken, each with where it is. The test fails on any other
# circle, and on one listed here that is gone (take it off the list then).
KNOWN_CIRCLES: dict[frozenset[str], str] = {}

# Scanner modules over the limit that are still to be split, with the size they may not exceed
# meanwhile. The test fails when one grows, and when one fits (take it off the list then).
NOT_YET_SPLIT: dict[str, int] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import statements inside `if TYPE_CHECKING:` blocks."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                skipped.update(id(sub) for stmt in node.body for sub in ast.walk(stmt))
    return skipped


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of the package it imports."""
    modules = _modules()

    def known(name: str) -> str:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        skipped = _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod
                targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in modules else origin
                           for alias in node.names]
            for target in targets:
                if target.split(".")[0] == "ascend_migrate":
                    found = known(target)
                    if found and found != name:
                        graph[name].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_graph_sees_deferred_imports_and_the_floors():
    graph = import_graph()
    assert len(graph) > 100
    # a deferred import (inside a function) is an edge: scan.api imports the engine inside scan()
    assert "ascend_migrate.scan.engine" in graph["ascend_migrate.scan.api"]
    # the floor below both: the types a scan returns
    assert "ascend_migrate.scan.result" in graph["ascend_migrate.scan.engine"]
    assert "ascend_migrate.scan.api" not in graph["ascend_migrate.scan.engine"]


def test_circles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [frozenset({"a", "b", "c"})]


def test_no_import_circle_in_the_package():
    found = set(circles(import_graph()))
    new = [sorted(c) for c in found if c not in KNOWN_CIRCLES]
    assert not new, f"modules that import each other: {new}"
    gone = [sorted(c) for c in KNOWN_CIRCLES if c not in found]
    assert not gone, f"no longer a circle, take it off KNOWN_CIRCLES: {gone}"


def test_no_scanner_module_over_the_limit():
    sizes = {str(p.relative_to(SCAN)): len(p.read_text(encoding="utf-8").splitlines())
             for p in sorted(SCAN.rglob("*.py"))}
    assert "pyast/registry.py" in sizes and "python_ast.py" in sizes
    over = {name: n for name, n in sizes.items() if n > MAX_SCAN_LINES and name not in NOT_YET_SPLIT}
    assert not over, f"scanner modules over {MAX_SCAN_LINES} lines: {over}"
    grown = {name: sizes[name] for name, ceiling in NOT_YET_SPLIT.items() if sizes.get(name, 0) > ceiling}
    assert not grown, f"grew while waiting to be split: {grown}"
    fits = [name for name in NOT_YET_SPLIT if sizes.get(name, 0) <= MAX_SCAN_LINES]
    assert not fits, f"within the limit now, take them off NOT_YET_SPLIT: {fits}"


def test_each_family_check_is_registered_once_in_rank_order():
    from ascend_migrate.scan.pyast.registry import EVENTS, hooks
    from ascend_migrate.scan.python_ast import PythonAnalyzer

    for event in EVENTS:
        registered = hooks(event)
        assert len({h.__qualname__ for h in registered}) == len(registered), event
        assert getattr(PythonAnalyzer, f"_{event}_hooks") == registered, event
        for hook in registered:  # the analyser inherits every hook from its family
            assert getattr(PythonAnalyzer, hook.__name__) is hook, hook.__qualname__
    assert len(hooks("call")) >= 10 and len(hooks("constant")) >= 8


def test_the_analysers_parts_import_only_from_lower_floors():
    """scan/pyast: the shared parts below the families, no family importing another."""
    floors = {"visitor": 0, "registry": 0, "nodes": 0, "source": 1, "resolver": 1, "reporting": 2, "context": 3}
    prefix = "ascend_migrate.scan.pyast."
    graph = import_graph()
    parts = [name for name in graph if name.startswith(prefix)]
    families = [name for name in parts if name[len(prefix):] not in floors]
    assert len(families) >= 10, families
    for name in parts:
        mine = floors.get(name[len(prefix):], 4)  # a family module
        for dep in graph[name]:
            if dep.startswith(prefix):
                assert floors.get(dep[len(prefix):], 4) < mine, f"{name} imports {dep}"
