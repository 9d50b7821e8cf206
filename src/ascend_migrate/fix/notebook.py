"""Rewrite Jupyter notebooks cell by cell with the same fixes as Python modules.

Cells share one namespace, so they are rewritten in order as parts of one program: the
transfer_to_npu imports go into the first code cell that parses, and `import torch` or the
`_device_type` helper are added only where no earlier cell provides them. IPython magics
(`%time`, `!pip`) are blanked for analysis, line for line, and the edits are then applied to
the real cell text, so magics stay as they are; a cell whose edits would read differently on the
real text is listed instead. Cells under a cell magic that does not run Python in the notebook
(`%%writefile`, `%%bash`) bind nothing and are not rewritten: their findings are listed.

The notebook is written back in its own JSON layout (indent, key order, escaping). When no
`json.dumps` layout reproduces the file (a hand edit, another tool's writer), only the `source`
values of the changed cells are replaced and every other byte is kept; the result must load to
exactly the rewritten notebook, or the notebook is reported and left alone.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from json.decoder import scanstring
from typing import Any, Iterator, Optional

from ascend_migrate.fix.rewrite import Change, Options, RewriteResult, apply_edits, rewrite_python
from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.scan.engine import Job, analyse_python_text
from ascend_migrate.scan.python_ast import PythonAnalyzer
from ascend_migrate.scan.notebook_cells import cell_lines, cell_magic, mask_magics, notebook_code_cells

_LAYOUT_ERROR = ("its JSON layout is not one this tool writes back byte for byte; "
                 "save it from Jupyter (or `jupyter nbconvert --to notebook`) first")
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
    spans = _source_spans(text, len(cells)) if layout is None else None
    if layout is None and spans is None:
        return RewriteResult(text, error=_LAYOUT_ERROR)
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
    if layout is not None:
        tail = layout.pop("tail")
        return RewriteResult(json.dumps(nb, **layout) + tail, changes=changes, manual=manual)
    new_text = _splice_sources(text, spans or [], [c.get("source") if isinstance(c, dict) else None for c in cells])
    if json.loads(new_text) != nb:
        return RewriteResult(text, error=_LAYOUT_ERROR)
    return RewriteResult(new_text, changes=changes, manual=manual)


# --------------------------------------------------------------------------- hand-laid-out notebooks
# A notebook no json.dumps call reproduces (edited by hand, or by a tool with its own layout) is
# written by replacing only the `source` values of the cells that changed; every other byte stays.
_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


class _Malformed(ValueError):
    pass


def _skip_ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _value_end(text: str, i: int) -> int:
    """End offset of the JSON value that starts at offset i."""
    ch = text[i:i + 1]
    if ch == '"':
        return scanstring(text, i + 1)[1]
    if ch in "[{":
        close = "]" if ch == "[" else "}"
        i = _skip_ws(text, i + 1)
        if text[i:i + 1] == close:
            return i + 1
        while True:
            if ch == "{":
                i = _skip_ws(text, _value_end(text, i))
                if text[i:i + 1] != ":":
                    raise _Malformed(i)
                i = _skip_ws(text, i + 1)
            i = _skip_ws(text, _value_end(text, i))
            if text[i:i + 1] == close:
                return i + 1
            if text[i:i + 1] != ",":
                raise _Malformed(i)
            i = _skip_ws(text, i + 1)
    m = _SCALAR.match(text, i)
    if not m:
        raise _Malformed(i)
    return m.end()


def _members(text: str, i: int) -> Iterator[tuple[str, int, int]]:
    """(key, value start, value end) of the object that starts at offset i."""
    i = _skip_ws(text, i + 1)
    if text[i:i + 1] == "}":
        return
    while True:
        key, i = scanstring(text, i + 1)
        i = _skip_ws(text, i)
        start = _skip_ws(text, i + 1)
        end = _value_end(text, start)
        yield key, start, end
        i = _skip_ws(text, end)
        if text[i:i + 1] != ",":
            return
        i = _skip_ws(text, i + 1)


def _source_spans(text: str, count: int) -> Optional[list[Optional[tuple[int, int]]]]:
    """Offsets of each cell's `source` value, or None when the text cannot be walked."""
    try:
        top = _skip_ws(text, 0)
        if text[top:top + 1] != "{":
            return None
        spans: list[Optional[tuple[int, int]]] = []
        for key, start, _end in _members(text, top):
            if key != "cells" or text[start:start + 1] != "[":
                continue
            spans = []  # a repeated key: json.loads keeps the last one
            i = _skip_ws(text, start + 1)
            while text[i:i + 1] not in ("]", ""):
                found = None
                if text[i:i + 1] == "{":
                    for cell_key, s0, s1 in _members(text, i):
                        if cell_key == "source":
                            found = (s0, s1)
                spans.append(found)
                i = _skip_ws(text, _value_end(text, i))
                if text[i:i + 1] == ",":
                    i = _skip_ws(text, i + 1)
        return spans if len(spans) == count else None
    except (_Malformed, ValueError, IndexError):
        return None


def _splice_sources(text: str, spans: list, sources: list) -> str:
    """`text` with each cell's source value re-written where it differs from what is stored."""
    ascii_only = text.isascii()
    newline = "\r\n" if "\r\n" in text else "\n"
    out, at = [], 0
    for span, source in zip(spans, sources):
        if span is None or source is None:
            continue
        s0, s1 = span
        if json.loads(text[s0:s1]) == source:
            continue
        if isinstance(source, str):
            new = json.dumps(source, ensure_ascii=ascii_only)
        elif not source:
            new = "[]"
        else:
            old = text[s0:s1]
            first = _skip_ws(old, 1)
            gap, close_gap = old[1:first], old[len(old[:-1].rstrip()):-1]
            items = [json.dumps(line, ensure_ascii=ascii_only) for line in source]
            if "\n" in gap:  # one item per line, as stored
                item_indent = gap[gap.rfind("\n") + 1:]
                close_indent = close_gap[close_gap.rfind("\n") + 1:] if "\n" in close_gap else ""
                new = "[" + newline + ("," + newline).join(item_indent + item for item in items) + newline \
                      + close_indent + "]"
            else:
                new = "[" + gap + ", ".join(items) + close_gap + "]"
        out += [text[at:s0], new]
        at = s1
    out.append(text[at:])
    return "".join(out)


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
