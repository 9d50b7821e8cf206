"""Rewrite Jupyter notebooks cell by cell with the same fixes as Python modules.

Cells share one namespace, so they are rewritten in order as parts of one program: the
transfer_to_npu imports go into the first code cell that parses, and `import torch` or the
`_device_type` helper are added only where no earlier cell provides them. IPython magics
(`%time`, `!pip`) are blanked for analysis, line for line, and the edits are then applied to
the real cell text, so magics stay as they are; a cell whose edits would read differently on the
real text is listed instead. Cells under a cell magic that does not run Python in the notebook
(`%%writefile`, `%%bash`) bind nothing and are not rewritten: their findings are listed.

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
from ascend_migrate.scan.engine import Job, analyse_python_text
from ascend_migrate.scan.python_ast import PythonAnalyzer
from ascend_migrate.scan.text_scanners import cell_lines, cell_magic, mask_magics, notebook_code_cells

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
    needs_inject = opts.style == "transfer" and opts.inject  # only a notebook chosen as an entry point
    changed = False
    for cell in notebook_code_cells(text):
        number, source, masked = cell.number, cell.source, cell.masked
        try:
            ast.parse(masked)
        except SyntaxError as exc:
            manual.append(Change(rel, exc.lineno or 1, exc.lineno or 1, "SC001", "manual",
                                 f"cell {number}: not rewritten: syntax error line {exc.lineno}: {exc.msg}",
                                 new_line=exc.lineno or 1))
            continue
        if not cell.in_kernel:  # %%writefile, %%bash, ...: not notebook code; list, do not touch
            found = analyse_python_text(Job(rel, "python"), masked, kb, coverage, outer=names).findings
            manual += [Change(rel, f.line, f.end_line, f.rule, "manual",
                              f"cell {number} (%%{cell_magic(source)}, not rewritten): {f.message}", new_line=f.line)
                       for f in found if f.severity != "info"]
            continue
        result = rewrite_python(kb, rel, masked, replace(opts, inject=needs_inject), coverage, outer=names)
        needs_inject = False
        if result.error:
            return RewriteResult(text, error=f"cell {number}: {result.error}")
        new_source, dropped = apply_edits(source, result.edits)
        if dropped or mask_magics(new_source) != result.text:
            # The edits do not mean the same thing on the stored text as on the analysed one.
            manual.append(Change(rel, 1, 1, "", "manual",
                                 f"cell {number}: not rewritten: its magics and the rewrite overlap", new_line=1))
            continue
        changes += [replace(c, message=f"cell {number}: {c.message}") for c in result.changes]
        manual += [replace(c, message=f"cell {number}: {c.message}") for c in result.manual]
        names = PythonAnalyzer(kb, rel, result.text, ast.parse(result.text), outer=names).bind_only()
        if new_source != source:
            changed = True
            nb["cells"][number - 1]["source"] = cell_lines(new_source) if isinstance(cell.raw, list) else new_source
    if not changed:
        return RewriteResult(text, changes=changes, manual=manual)
    tail = layout.pop("tail")
    return RewriteResult(json.dumps(nb, **layout) + tail, changes=changes, manual=manual)


def verify_notebook(kb: KnowledgeBase, rel: str, old_text: str, new_text: str, opts: Options, coverage=None) -> str:
    """'' when every cell that parsed still parses and a second pass changes nothing."""
    before = {c.number: c.masked for c in notebook_code_cells(old_text)}
    for number, source in ((c.number, c.masked) for c in notebook_code_cells(new_text)):
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
