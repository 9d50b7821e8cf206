"""Positions, source text and syntactic parents of the module being analysed."""
from __future__ import annotations

import ast
from bisect import bisect_left
from typing import Optional

from ascend_migrate.scan.finding import Position

_SHORT_LIST = 16  # a list field up to this long is searched; a longer one is indexed once
_LONG_LINE = 1_000  # a line longer than this has its columns found through a table (`_long_line_col`)


def _parent_within(top: ast.AST, node: ast.AST, budget: int = 512) -> Optional[ast.AST]:
    """The parent of `node` inside the subtree of `top`; None when it is not there or the
    subtree is larger than `budget` nodes (the caller then builds the full parent index once,
    so a search never costs more than a walk of the tree)."""
    todo = [top]
    while todo and budget > 0:
        current = todo.pop()
        budget -= 1
        for child in ast.iter_child_nodes(current):
            if child is node:
                return current
            todo.append(child)
    return None


class SourceText:
    """Mixin of the analyser: columns in characters, segments of source text, parents of nodes.

    Needs `lines`, `tree`, `_stack`, `_parents`, `_list_index`, `_wide_chars`, `_snippets`."""

    # ----------------------------------------------------------------- positions and text
    def _col(self, lineno: int, byte_col: int) -> int:
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        if len(line) > _LONG_LINE:
            return self._long_line_col(lineno, line, byte_col)
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def _long_line_col(self, lineno: int, line: str, byte_col: int) -> int:
        """`_col` on a long line: the line's multi-byte characters are listed once (where each
        starts, in bytes, and how many extra bytes it and those before it take), so a line of a
        megabyte with thousands of nodes is not encoded again for each of them."""
        table = self._wide_chars.get(lineno)
        if table is None:
            starts: list[int] = []
            extra: list[int] = []
            if not line.isascii():
                offset = total = 0
                for ch in line:
                    width = len(ch.encode("utf-8", errors="surrogatepass"))
                    if width > 1:
                        starts.append(offset)
                        total += width - 1
                        extra.append(total)
                    offset += width
            table = self._wide_chars[lineno] = (starts, extra)
        starts, extra = table
        before = bisect_left(starts, byte_col)  # multi-byte characters starting before byte_col
        return byte_col - extra[before - 1] if before else byte_col

    def _snippet(self, lineno: int) -> str:
        """The finding's snippet: its line stripped, at most 200 characters; kept per line, so
        the thousands of findings of one long line do not each strip the whole of it."""
        snippet = self._snippets.get(lineno)
        if snippet is None:
            line_text = self.lines[lineno - 1] if lineno <= len(self.lines) else ""
            snippet = self._snippets[lineno] = line_text.strip()[:200]
        return snippet

    def start(self, node: ast.AST) -> Position:
        return Position(node.lineno, self._col(node.lineno, node.col_offset))  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> Position:
        return Position(node.end_lineno, self._col(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def text(self, start: Position, end: Position) -> str:
        if start.line == end.line:
            return self.lines[start.line - 1][start.col:end.col]
        parts = [self.lines[start.line - 1][start.col:]]
        parts.extend(self.lines[start.line:end.line - 1])
        parts.append(self.lines[end.line - 1][:end.col])
        return "".join(parts)

    def seg(self, node: ast.AST) -> str:
        return self.text(self.start(node), self.end(node))

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        """The syntactic parent of `node`.

        Almost always the node below it on the visiting stack; a full parent index (a walk of
        the whole tree, the costliest step of the analysis) is built only when the stack
        cannot answer (a node looked at before it is visited, or visited out of order).
        """
        stack = self._stack
        for i in range(len(stack) - 1, 0, -1):
            if stack[i] is node:
                candidate = stack[i - 1]
                if self._holds(candidate, node):
                    return candidate
                # A visitor that steps over a level (a call's keyword, a comprehension) leaves
                # the parent off the stack: it is inside the subtree of the node below.
                found = _parent_within(candidate, node)
                if found is not None:
                    return found
                break
        if self._parents is None:
            self._parents = {id(child): p for p in ast.walk(self.tree) for child in ast.iter_child_nodes(p)}
        return self._parents.get(id(node))

    def _holds(self, parent: ast.AST, node: ast.AST) -> bool:
        """Is `node` a direct child of `parent`? Its fields are read directly; a long list field
        (a literal of 100,000 items, a module body) is indexed once, so asking for each of its
        items costs constant time instead of a pass over all of them."""
        for name in parent._fields:
            value = getattr(parent, name, None)
            if value is node:
                return True
            if type(value) is list and value:
                if len(value) <= _SHORT_LIST:
                    if any(item is node for item in value):
                        return True
                    continue
                index = self._list_index.get(id(value))
                if index is None or index[0] is not value:
                    index = self._list_index[id(value)] = (value, {id(item) for item in value})
                if id(node) in index[1]:
                    return True
        return False
