"""Rewrite Jupyter notebooks cell by cell with the same fixes as Python modules.

Cells share one namespace, so they are rewritten in order as parts of one program: the
transfer_to_npu imports go into the first code cell that parses, and `import torch` or the
`_device_type` helper are added only where no earlier cell provides them. IPython magics
(`%time`, `!pip`) are blanked for analysis, line for line, and the edits are then applied to
the real cell text, so magics stay as they are.

The notebook is written back in its own JSON layout (indent, key order, escaping); a layout
this module cannot reproduce exactly is reported rather than rewritten into a noisy diff.
"""
from __future__ import annotations

import ast
import json
from dataclasses import replace
from typing import Any, Optional

from ascend_migrate.fix.rewrite import Change, Options, RewriteResult, apply_edits, rewrite_python
from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.scan.python_ast import PythonAnalyzer

_LAYOUTS = [(indent, sort_keys, ascii_only) for indent in (1, 2, 4, None)
            for sort_keys in (True, False) for ascii_only in (False, True)]


def _layout(nb: Any, text: str) -> Optional[dict[str, Any]]:
    """The json.dumps arguments that reproduce `text` byte for byte, if any."""
    tail = text[len(text.rstrip("\n")):]
    for indent, sort_keys, ascii_only in _LAYOUTS:
        kwargs = {"indent": indent, "sort_keys": sort_keys, "ensure_ascii": ascii_only}
        if json.dumps(nb, **kwargs) + tail == text:
            return {**kwargs, "tail": tail}
    return None


def _mask(source: str) -> str:
    """Magic and shell lines blanked, keeping their line endings: every other line, and every
    line number, stays as it is."""
    out = []
    for line in source.splitlines(keepends=True):
        if line.lstrip().startswith(("%", "!")):
            body = line.rstrip("\r\n")
            out.append(line[len(body):])  # keep only the line ending
        else:
            out.append(line)
    return "".join(out)


def rewrite_notebook(kb: KnowledgeBase, rel: str, text: str, opts: Options, coverage=None) -> RewriteResult:
    """Rewrite every code cell of the notebook `text`; change rows carry `cell N:` and cell lines."""
    try:
        nb = json.loads(text)
    except ValueError as exc:
        return RewriteResult(text, error=f"not a readable notebook: {exc}")
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return RewriteResult(text, error="not a notebook: no 'cells' list")
    layout = _layout(nb, text)
    if layout is None:
        return RewriteResult(text, error="its JSON layout is not one this tool writes back byte for byte; "
                                         "save it from Jupyter (or `jupyter nbconvert --to notebook`) first")
    changes: list[Change] = []
    manual: list[Change] = []
    names: dict[str, Optional[str]] = {}  # module-level bindings of the cells so far
    needs_inject = opts.style == "transfer"
    changed = False
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        raw = cell.get("source", "")
        source = "".join(str(s) for s in raw) if isinstance(raw, list) else str(raw)
        masked = _mask(source)
        try:
            ast.parse(masked)
        except SyntaxError as exc:
            manual.append(Change(rel, exc.lineno or 1, exc.lineno or 1, "SC001", "manual",
                                 f"cell {number}: not rewritten: syntax error line {exc.lineno}: {exc.msg}",
                                 new_line=exc.lineno or 1))
            continue
        cell_opts = replace(opts, inject=needs_inject)
        result = rewrite_python(kb, rel, masked, cell_opts, coverage, outer=names)
        needs_inject = False
        if result.error:
            return RewriteResult(text, error=f"cell {number}: {result.error}")
        changes += [replace(c, message=f"cell {number}: {c.message}") for c in result.changes]
        manual += [replace(c, message=f"cell {number}: {c.message}") for c in result.manual]
        new_source, dropped = apply_edits(source, result.edits)
        if dropped:  # cannot happen: the same edits applied to the masked text without overlap
            return RewriteResult(text, error=f"cell {number}: edits overlap")
        new_masked = _mask(new_source)
        names = PythonAnalyzer(kb, rel, new_masked, ast.parse(new_masked), outer=names).bind_only()
        if new_source != source:
            changed = True
            cell["source"] = new_source.splitlines(keepends=True) if isinstance(raw, list) else new_source
    if not changed:
        return RewriteResult(text, changes=changes, manual=manual)
    tail = layout.pop("tail")
    return RewriteResult(json.dumps(nb, **layout) + tail, changes=changes, manual=manual)


def code_cells(text: str) -> list[tuple[int, str]]:
    """(cell number, source with magics blanked) of every code cell."""
    out = []
    for number, cell in enumerate(json.loads(text).get("cells", []), 1):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            raw = cell.get("source", "")
            out.append((number, _mask("".join(str(s) for s in raw) if isinstance(raw, list) else str(raw))))
    return out


def verify_notebook(kb: KnowledgeBase, rel: str, old_text: str, new_text: str, opts: Options, coverage=None) -> str:
    """'' when every cell that parsed still parses and a second pass changes nothing."""
    before = dict(code_cells(old_text))
    for number, source in code_cells(new_text):
        try:
            ast.parse(source)
        except SyntaxError as exc:
            try:
                ast.parse(before.get(number, ""))
            except SyntaxError:
                continue  # it did not parse before either: left as it was
            return f"cell {number}: rewritten code does not parse (line {exc.lineno}: {exc.msg})"
    if rewrite_notebook(kb, rel, new_text, opts, coverage).text != new_text:
        return "a second pass would change the notebook again (not idempotent)"
    return ""
