"""Read-only view of the ported tree for the static checks: files, parsed modules, and the
enclosing-guard analysis. Nothing in the tree is imported or run."""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Optional

from ascend_migrate.scan.own_outputs import own_file_name, own_output_kind
from ascend_migrate.scan.walk import walk_tree

CONFIG_SUFFIXES = {".sh", ".bash", ".zsh", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".conf"}
MAX_BYTES = 2_000_000
_MATCH = getattr(ast, "Match", None)  # Python 3.10+


@dataclass
class Project:
    root: Path
    python_files: list[str] = field(default_factory=list)  # POSIX paths relative to root
    config_files: list[str] = field(default_factory=list)
    dirs: set[str] = field(default_factory=set)  # every directory (relative, POSIX; "" = root)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    _text: dict[str, Optional[str]] = field(default_factory=dict)
    _trees: dict[str, Optional[ast.Module]] = field(default_factory=dict)

    def text(self, rel: str) -> Optional[str]:
        if rel not in self._text:
            try:
                data = (self.root / rel).read_bytes()
            except OSError as exc:
                self.skipped.append((rel, f"unreadable: {exc.strerror or exc}"))
                self._text[rel] = None
            else:
                self._text[rel] = data.decode("utf-8", errors="replace")
        return self._text[rel]

    def tree(self, rel: str) -> Optional[ast.Module]:
        if rel not in self._trees:
            text = self.text(rel)
            tree = None
            if text is not None:
                try:
                    tree = ast.parse(text, filename=rel)
                except (SyntaxError, ValueError) as exc:
                    self.skipped.append((rel, f"does not parse: {exc}"))
            if tree is not None:
                _set_parents(tree)
            self._trees[rel] = tree
        return self._trees[rel]

    def modules(self) -> Iterator[tuple[str, ast.Module]]:
        for rel in self.python_files:
            tree = self.tree(rel)
            if tree is not None:
                yield rel, tree


def load_project(root: Path | str) -> Project:
    root = Path(root).resolve()
    project = Project(root=root)
    if root.is_file():
        project.root = root.parent
        if root.suffix == ".py":
            project.python_files.append(root.name)
        return project
    tree = walk_tree(root, own_files=False)  # no special files, no link loops, no venvs or VCS folders
    project.dirs.update(tree.dirs)
    project.skipped.extend(tree.skipped)
    for item in tree.items:
        if item.is_dir:
            continue
        rel = item.rel
        name = rel.rsplit("/", 1)[-1]
        suffix = Path(name).suffix.lower()
        if suffix not in (".py", *CONFIG_SUFFIXES):
            continue
        if own_file_name(name):
            project.skipped.append((rel, "written by ascend-migrate"))
            continue  # change lists and reports written by this toolkit
        try:
            size = os.path.getsize(root / rel)
            head = _head(root / rel) if suffix == ".json" else b""
        except OSError:
            continue
        if size > MAX_BYTES:
            project.skipped.append((rel, f"larger than {MAX_BYTES} bytes"))
            continue
        own = own_output_kind(name, head) if head else None
        if own:  # a report or change list of this toolkit, wherever it was written
            project.skipped.append((rel, f"written by ascend-migrate ({own})"))
            continue
        if suffix == ".py":
            project.python_files.append(rel)
        else:
            project.config_files.append(rel)
    return project


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(4096)


# --- AST helpers ---------------------------------------------------------------------------

def _set_parents(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child._am_parent = node  # type: ignore[attr-defined]


def parent(node: ast.AST) -> Optional[ast.AST]:
    return getattr(node, "_am_parent", None)


def ancestors(node: ast.AST) -> Iterator[ast.AST]:
    cur = parent(node)
    while cur is not None:
        yield cur
        cur = parent(cur)


def dotted(node: ast.AST) -> str:
    """'torch.cuda.amp.autocast' for an Attribute/Name chain; '' otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Call):
        inner = dotted(node.func)
        if inner:
            parts.append(inner + "()")
            return ".".join(reversed(parts))
    return ""


def call_name(node: ast.Call) -> str:
    return dotted(node.func)


def node_at(tree: ast.Module, line: int, col: Optional[int] = None) -> Optional[ast.AST]:
    """The smallest node that starts on `line` (at `col` when given, else the first on the line)
    — or, failing that, the smallest node spanning the line."""
    best: Optional[ast.AST] = None
    best_key = None
    for node in ast.walk(tree):
        lineno = getattr(node, "lineno", None)
        end = getattr(node, "end_lineno", None)
        if lineno is None or end is None or not (lineno <= line <= end):
            continue
        starts_here = lineno == line and (col is None or node.col_offset == col)
        span = (end - lineno, (getattr(node, "end_col_offset", 0) or 0) - node.col_offset)
        key = (0 if starts_here else 1, span)
        if best_key is None or key < best_key:
            best, best_key = node, key
    return best


def _handler_names(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {dotted(t).rsplit(".", 1)[-1] for t in types}


def _contains(container: Iterable[ast.AST], node: ast.AST) -> bool:
    for stmt in container:
        if stmt is node:
            return True
        for sub in ast.walk(stmt):
            if sub is node:
                return True
    return False


def cuda_test(expr: ast.AST, transfer: bool) -> bool:
    """Does a condition test for CUDA specifically (so its branch does not run on an NPU)?

    device.type == "cuda", "cuda" in str(d), x.startswith("cuda"), torch.version.cuda; and
    torch.cuda.is_available() unless transfer_to_npu is in use (it makes that True on NPU)."""
    for sub in ast.walk(expr):
        if isinstance(sub, ast.Compare):
            for operand in [sub.left, *sub.comparators]:
                if isinstance(operand, ast.Constant) and isinstance(operand.value, str) and operand.value.startswith("cuda"):
                    return True
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "startswith":
            if any(isinstance(a, ast.Constant) and a.value == "cuda" for a in sub.args):
                return True
        if isinstance(sub, ast.Attribute) and dotted(sub).endswith("version.cuda"):
            return True
        if not transfer and isinstance(sub, ast.Call):
            name = call_name(sub)
            if name.endswith("cuda.is_available") or name.endswith("cuda.device_count"):
                return True
    return False


def guard_of(
    node: ast.AST,
    *,
    catches: Optional[set[str]] = None,
    transfer: bool = False,
    any_condition: bool = False,
) -> Optional[str]:
    """Describe what guards `node`, or None.

    catches: exception names a try handler must catch (Exception/BaseException always count);
    None means any handler. A CUDA-specific condition (see cuda_test) counts; with
    any_condition, so does any if/else, conditional expression or `and`."""
    child = node
    for anc in ancestors(node):
        if isinstance(anc, ast.Try) and _contains(anc.body, child):
            for handler in anc.handlers:
                names = _handler_names(handler)
                if catches is None or names & (catches | {"Exception", "BaseException"}):
                    return f"try/except {', '.join(sorted(names))} (line {anc.lineno})"
        if isinstance(anc, (ast.If, ast.IfExp, ast.While)) and child is not anc.test:
            if any_condition or cuda_test(anc.test, transfer):
                return f"condition on line {anc.lineno}: {ast.unparse(anc.test)[:80]}"
        if isinstance(anc, ast.BoolOp) and isinstance(anc.op, ast.And):
            idx = next((i for i, v in enumerate(anc.values) if v is child), None)
            if idx:
                for prior in anc.values[:idx]:
                    if any_condition or cuda_test(prior, transfer):
                        return f"condition on line {anc.lineno}: {ast.unparse(prior)[:80]}"
        if isinstance(anc, ast.Dict) and child in anc.values:
            key = anc.keys[anc.values.index(child)]
            if isinstance(key, ast.Constant) and key.value == "cuda":
                return f"mapping keyed by 'cuda' (line {anc.lineno})"
        if _MATCH and isinstance(anc, _MATCH):
            for case in anc.cases:
                if _contains(case.body, child) and "cuda" in ast.unparse(case.pattern):
                    return f"match case on line {case.pattern.lineno}"
        early = _early_exit_guard(anc, child, transfer, any_condition)
        if early:
            return early
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if not any_condition:
                break
        child = anc
    return None


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def _early_exit_guard(block_owner: ast.AST, child: ast.AST, transfer: bool, any_condition: bool) -> Optional[str]:
    """`if not torch.cuda.is_available(): return ...` earlier in the same block guards what follows."""
    for attr in ("body", "orelse", "finalbody"):
        block = getattr(block_owner, attr, None)
        if not isinstance(block, list) or child not in block:
            continue
        for stmt in block[: block.index(child)]:
            if isinstance(stmt, ast.If) and _exits(stmt.body) and (any_condition or cuda_test(stmt.test, transfer)):
                return f"early exit on line {stmt.lineno}: {ast.unparse(stmt.test)[:80]}"
    return None
