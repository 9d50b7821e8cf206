"""Which edited lines ran: the edit-site files are compiled from a rewritten AST that calls a
builtin probe before each target statement.

Every target line gets a plan: the statement a probe goes before (a line inside a multi-line
statement, or a decorator line, maps to that statement), the first statement of an `except` or
`case` clause for the clause's own line, or no probe with the reason (blank line, comment,
`else:` / `finally:` / `try:` line, a line past the end of the file). The rewritten code is
compiled in memory only: no byte-code cache is read or written for these files.
"""
import ast
import builtins
import importlib.machinery
import importlib.util
import os
import sys

from . import PROBE_NAME

_HEADER_KEYWORDS = ("else", "finally", "try")
_CLAUSE_TYPES = tuple(t for t in (ast.ExceptHandler, getattr(ast, "match_case", None)) if t)


def _split_lines(text):
    # The line numbering the compiler uses (str.splitlines also breaks at form feeds and more).
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # after the final newline
    return lines


def _start(node):
    lines = [node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]
    return min(lines)


def _keyword_line(text):
    """'else' for a line reading `else:` (comment allowed after), else None."""
    for word in _HEADER_KEYWORDS:
        if text.startswith(word):
            rest = text[len(word):].lstrip()
            if rest.startswith(":") and (not rest[1:].strip() or rest[1:].lstrip().startswith("#")):
                return word
    return None


def _is_docstring(stmt, body, owner):
    return (body and body[0] is stmt and isinstance(owner, (ast.Module, ast.ClassDef,
                                                            ast.FunctionDef, ast.AsyncFunctionDef))
            and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str))


class _Stmt:
    __slots__ = ("node", "body", "index", "depth", "owner", "start", "end")

    def __init__(self, node, body, index, depth, owner):
        self.node, self.body, self.index, self.depth, self.owner = node, body, index, depth, owner
        self.start = _start(node)
        self.end = getattr(node, "end_lineno", None) or node.lineno


def _statements(tree):
    found = []

    def visit(owner, depth):
        for _field, value in ast.iter_fields(owner):
            if not isinstance(value, list):
                continue
            for index, item in enumerate(value):
                if isinstance(item, ast.stmt):
                    found.append(_Stmt(item, value, index, depth, owner))
                    visit(item, depth + 1)
                elif isinstance(item, _CLAUSE_TYPES):
                    visit(item, depth + 1)

    visit(tree, 0)
    return found


def _clause_header(stmt, line):
    """The `except`/`case` clause of compound `stmt` whose header holds `line`, or None."""
    node = stmt.node
    for clause in list(getattr(node, "handlers", ())) + list(getattr(node, "cases", ())):
        if not clause.body:
            continue
        first = getattr(clause, "lineno", None) or clause.pattern.lineno
        if first <= line < _start(clause.body[0]):
            return clause, first
    return None


class Plan:
    """The probes of one file. `lines[target] = (key or None, statement line or None, reason)`."""

    def __init__(self, source, targets, first_key):
        self.lines = {}
        self.next_key = first_key
        self.tree = None
        text = importlib.util.decode_source(source) if isinstance(source, bytes) else source
        self.text_lines = _split_lines(text)
        try:
            self.tree = ast.parse(source)
        except (SyntaxError, ValueError) as exc:
            for line in targets:
                self.lines[line] = (None, None, "file does not parse: %s" % (exc,))
            return
        self._inserts = {}  # id(body) -> (body, {index: [key, ...]})
        self._keys = {}  # (id(body), index) -> key
        statements = _statements(self.tree)
        self._after_futures = self._future_end()
        for line in sorted(set(targets)):
            self.lines[line] = self._plan_line(line, statements)

    def _future_end(self):
        """Index in the module body after the docstring and `from __future__` imports."""
        end = 0
        for index, stmt in enumerate(self.tree.body):
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                end = index + 1
            elif index == 0 and _is_docstring(stmt, self.tree.body, self.tree):
                end = 1
            else:
                break
        return end

    def _probe(self, body, index, owner):
        if owner is self.tree:  # docstring and `from __future__` imports stay first
            index = max(index, self._after_futures)
        slot = (id(body), index)
        key = self._keys.get(slot)
        if key is None:
            key = self.next_key
            self.next_key += 1
            self._keys[slot] = key
            self._inserts.setdefault(id(body), (body, {}))[1].setdefault(index, []).append(key)
        return key

    def _plan_line(self, line, statements):
        if line < 1 or line > len(self.text_lines):
            return (None, None, "no such line")
        text = self.text_lines[line - 1].strip()
        if not text:
            return (None, None, "blank line")
        if text.startswith("#"):
            return (None, None, "comment")
        starting = [s for s in statements if s.node.lineno == line]
        if starting:
            outer = min(starting, key=lambda s: s.depth)
            if isinstance(outer.node, ast.Try) or type(outer.node).__name__ == "TryStar":
                inline = [s for s in starting if s is not outer]
                if not inline:
                    return (None, None, "'try:' line")
                outer = min(inline, key=lambda s: s.depth)
            return self._before(outer, None)
        holding = [s for s in statements if s.start <= line <= s.end]
        if not holding:
            return (None, None, "not part of a statement")
        inner = max(holding, key=lambda s: s.depth)
        node = inner.node
        body = getattr(node, "body", None)
        compound = isinstance(body, list) and body and isinstance(body[0], ast.stmt)
        if line < node.lineno:
            return self._before(inner, "decorator of the definition at line %d" % node.lineno)
        if not compound or line < _start(body[0]):
            return self._before(inner, "inside the statement at line %d" % node.lineno)
        word = _keyword_line(text)
        if word is not None:
            return (None, None, "'%s:' line" % word)
        clause = _clause_header(inner, line)
        if clause is not None:
            clause_node, first = clause
            kind = "except" if isinstance(clause_node, ast.ExceptHandler) else "case"
            key = self._probe(clause_node.body, 0, clause_node)
            return (key, first, "%s clause: ran means its body was entered" % kind)
        return (None, None, "not the start of a statement")

    def _before(self, stmt, reason):
        if _is_docstring(stmt.node, stmt.body, stmt.owner):
            key = self._probe(stmt.body, stmt.index + 1, stmt.owner)
            return (key, stmt.node.lineno, reason or "docstring: ran means its body ran")
        key = self._probe(stmt.body, stmt.index, stmt.owner)
        return (key, stmt.node.lineno if reason else None, reason)

    def code(self, filename):
        """The rewritten module compiled, or None when the file does not parse."""
        if self.tree is None:
            return None
        for body, at in self._inserts.values():
            for index in sorted(at, reverse=True):
                anchor = body[index] if index < len(body) else body[-1]
                for key in reversed(at[index]):
                    body.insert(index, _probe_stmt(key, anchor))
        return compile(self.tree, filename, "exec", dont_inherit=True)


def _probe_stmt(key, anchor):
    call = ast.Expr(value=ast.Call(func=ast.Name(id=PROBE_NAME, ctx=ast.Load()),
                                   args=[ast.Constant(value=key)], keywords=[]))
    for node in ast.walk(call):
        node.lineno = anchor.lineno
        node.col_offset = anchor.col_offset
        node.end_lineno = anchor.lineno
        node.end_col_offset = anchor.col_offset
    return call


class ProbeLoader(importlib.machinery.SourceFileLoader):
    """Loads an edit-site file from its source with the probes in (never from or to a .pyc)."""

    def get_code(self, fullname):
        code = SITES.code_for(self.path) if SITES is not None else None
        if code is None:
            return self.source_to_code(self.get_data(self.path), self.path)
        return code


SITES = None  # the one Sites object of this process


def patch_runpy(site_set):
    """runpy.run_path compiles a file itself: give it the probed code of an edit-site file. It
    is how a multiprocessing spawn child runs the parent's main script as `__mp_main__`."""
    import runpy
    original = getattr(runpy, "_get_code_from_file", None)  # (run_name, fname); 3.13: (fname)
    if original is None or getattr(original, "_ascend_migrate_wrapped", False):
        return

    def _get_code_from_file(*args, **kwargs):
        result = original(*args, **kwargs)
        fname = args[-1] if args else kwargs.get("fname")
        try:
            real = site_set.match(os.fsdecode(fname))
            code = site_set.code_for(os.fsdecode(fname)) if real is not None else None
        except Exception:
            return result
        if code is None:
            return result
        site_set.run_by_path.add(real)
        return (code, result[1]) if isinstance(result, tuple) else code

    _get_code_from_file._ascend_migrate_wrapped = True
    runpy._get_code_from_file = _get_code_from_file


class Sites:
    """The edit sites given by the parent: {absolute path: [line, ...]}."""

    def __init__(self, files):
        global SITES
        self.files = {}  # real path -> (path as given, [lines])
        for path, lines in files.items():
            self.files[os.path.realpath(path)] = (path, sorted(set(int(n) for n in lines)))
        self.names = {os.path.basename(p) for p in self.files}
        self.plans = {}  # real path -> Plan (files loaded through the probing loader)
        self.codes = {}
        self.run_by_path = set()  # real paths run through runpy.run_path with the probes
        self.seen = set()
        self.next_key = 0
        setattr(builtins, PROBE_NAME, self.seen.add)
        SITES = self

    def match(self, path):
        """The real path of `path` when it is an edit-site file, else None."""
        if not path or os.path.basename(path) not in self.names:
            return None
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            return None
        return real if real in self.files else None

    def adopt(self, spec):
        """Give the probing loader to a spec found for an edit-site file."""
        origin = spec.origin
        if not origin or not origin.endswith(".py") or not spec.has_location:
            return
        if self.match(origin) is None:
            return
        if not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return
        spec.loader = ProbeLoader(spec.name, origin)

    def code_for(self, path):
        real = self.match(path)
        if real is None:
            return None
        code = self.codes.get(real)
        if code is not None:
            return code
        with open(path, "rb") as fh:
            source = fh.read()
        plan = Plan(source, self.files[real][1], self.next_key)
        self.next_key = plan.next_key
        code = plan.code(path)
        self.plans[real] = plan
        if code is not None:
            self.codes[real] = code
        return code

    def _unprobed_loads(self):
        """Real paths of edit-site files that a module in sys.modules was loaded from without
        the probes (importlib.util.spec_from_file_location, runpy.run_path, ...)."""
        found = set()
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if not isinstance(path, str) or os.path.basename(path) not in self.names:
                continue
            real = self.match(path)
            loader = getattr(module, "__loader__", None)
            if real is None or isinstance(loader, ProbeLoader):
                continue
            if loader is None and real in self.run_by_path:
                continue  # runpy.run_path's module (a spawned child's __mp_main__), probed
            found.add(real)
        return found

    def report(self):
        """({path as given: {line: status}}, {path as given: {line: detail}}): status is "ran",
        "not-run" or "unprobeable"; a detail says which statement a line was mapped to and why,
        or why a line could not be probed."""
        statuses, details = {}, {}
        unprobed = self._unprobed_loads()
        for real, (given, lines) in self.files.items():
            plan = self.plans.get(real)
            loaded = plan is not None
            if plan is None:
                try:
                    with open(real, "rb") as fh:
                        plan = Plan(fh.read(), lines, 0)
                except OSError as exc:
                    plan = None
                    reason = "file not readable: %s" % (exc.strerror or exc)
            file_status, file_detail = {}, {}
            for line in lines:
                if plan is None:
                    file_status[line] = "unprobeable"
                    file_detail[line] = {"reason": reason}
                    continue
                key, statement, why = plan.lines[line]
                detail = {}
                if statement is not None:
                    detail["statement"] = statement
                if why:
                    detail["reason"] = why
                if key is None:
                    status = "unprobeable"
                elif loaded and key in self.seen:
                    status = "ran"
                elif real in unprobed:
                    status = "unprobeable"
                    detail["reason"] = "the file was loaded without probes"
                else:
                    status = "not-run"
                    if not loaded:
                        detail["reason"] = "the file was never imported"
                file_status[line] = status
                if detail:
                    file_detail[line] = detail
            statuses[given] = file_status
            if file_detail:
                details[given] = file_detail
        return statuses, details
