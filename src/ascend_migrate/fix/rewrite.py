"""Rewrite one file's text: apply the fixes the scanner attached to its findings.

Edits are applied on exact source ranges (the model Ruff uses), so everything outside an
edited range is byte-for-byte unchanged. After rewriting, the result is re-parsed and
re-scanned: a second pass must find nothing left to change, or the rewrite is rejected.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Optional

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.scan.engine import Job, analyse, analyse_python_text
from ascend_migrate.scan.finding import Edit, Finding, Fix, Position, split_lines
from ascend_migrate.scan.pyast.reporting import OFF_NPU_SUFFIXES
from ascend_migrate.scan.pyast.resolver import imported_module

STYLES = ("transfer", "agnostic")
TRANSFER_IMPORTS = ("import torch_npu", "from torch_npu.contrib import transfer_to_npu")
# `__mp_main__` is the name multiprocessing's spawn and forkserver workers give the main script.
RUN_AS_PROGRAM = 'if __name__ in ("__main__", "__mp_main__"):  # run as a program; importing it needs no torch_npu'
# TF Adapter initialisation at a TensorFlow entry point: TF 1.15 (npu_bridge) and TF 2.6.5 (npu_device).
# npu_device must come before the other imports, or ops may be placed off the NPU.
TF1_INIT = ("from npu_bridge.npu_init import *",)
TF2_INIT = ("import npu_device as npu", "npu.open().as_default()")
# Names that only TF1-style (graph and session) code uses.
_TF1_MARKERS = frozenset({"Session", "InteractiveSession", "MonitoredTrainingSession", "ConfigProto", "placeholder",
                          "estimator", "compat"})
TODO_MARK = "TODO(npu):"


@dataclass(frozen=True)
class Change:
    """One row of the change list."""

    file: str
    start_line: int
    end_line: int
    rule: str
    operation: str  # replace | insert | delete | inject | annotate | manual
    message: str
    safety: str = ""
    new_line: int = 0  # where start_line is in the migrated file (0: not known; configs keep 0)
    site: str = ""  # edits: that line's text in the migrated file, to find it again after later edits

    def to_dict(self) -> dict:
        return self.__dict__.copy()


@dataclass
class RewriteResult:
    text: str
    changes: list[Change] = field(default_factory=list)
    manual: list[Change] = field(default_factory=list)
    error: str = ""
    edits: list[Edit] = field(default_factory=list)  # the edits applied to the input text

    @property
    def changed(self) -> bool:
        return bool(self.changes)


@dataclass(frozen=True)
class Options:
    style: str = "transfer"
    min_torch: str = "2.6"
    annotate: bool = False
    safe_only: bool = False
    inject: bool = False  # put the transfer_to_npu imports in this file (entry point / package init)
    # The entry point is also imported (see EntryPoint.guarded): its imports go under a `__name__`
    # test, so they run when it is started as a program (and in its spawned workers), not on import.
    guard_inject: bool = False
    # A console script's module that a library imports (EntryPoint.inject_function): the imports
    # go first into this module-level function, the one the command calls.
    inject_function: str = ""


def version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", v)[:3])


# --------------------------------------------------------------------------- edits
def _offsets(lines: list[str]) -> list[int]:
    out = [0]
    for line in lines:
        out.append(out[-1] + len(line))
    return out


def _offset(starts: list[int], lines: list[str], pos: Position) -> int:
    if pos.line - 1 >= len(lines):
        return starts[-1]
    return starts[pos.line - 1] + pos.col


_NEWLINE = re.compile(r"\r\n|\r|\n")


def moved_line(pos: Position, applied: Iterable[Edit]) -> int:
    """The line `pos` lands on once `applied` (edits that do not contain it) are applied: a person
    fixing a manual item opens the migrated file, not the original."""
    delta = 0
    for e in applied:
        if e.end <= pos:
            delta += len(_NEWLINE.findall(e.text)) - (e.end.line - e.start.line)
    return pos.line + delta


def edit_sites_in_port(changes: list[Change], applied: list[Edit], new_text: str = "") -> list[Change]:
    """Each edit's line in the migrated file (`new_line`) and its text (`site`): validation places
    its probes there to report which edit sites the project's command ran. An inserted block is
    found at its first non-blank line; any other edit moves with the insertions before its line
    (those at its line's start included)."""
    out = []
    lines = new_text.splitlines()
    for c in changes:
        pos = Position(c.start_line, 0)
        inserted = c.operation in ("inject", "insert")
        before = [e for e in applied if e.end < pos] if inserted else applied
        line = moved_line(pos, before)
        while inserted and 0 < line < len(lines) and lines[line - 1].strip()[:1] in ("", "#"):
            line += 1  # an inserted block's first statement, not the blank or comment line that opens it
        site = lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""
        out.append(replace(c, new_line=line, site=site))
    return out


def _with_new_lines(changes: list[tuple[Change, Position]], applied: list[Edit]) -> list[Change]:
    return [replace(c, new_line=moved_line(pos, applied)) for c, pos in changes]


def apply_edits(text: str, edits: Iterable[Edit]) -> tuple[str, list[Edit]]:
    """Apply non-overlapping edits; return the new text and the edits that were dropped.

    Overlaps are resolved deterministically: identical edits collapse to one; an edit inside a
    wider one whose replacement keeps the original text verbatim (a wrapper such as
    `(X or (0, 0))`) is applied inside that copy, so nested fixes compose in one pass; otherwise
    the edit that starts first (then the wider one) wins and the others are dropped.
    """
    lines = split_lines(text)
    starts = _offsets(lines)
    spans = [(_offset(starts, lines, e.start), _offset(starts, lines, e.end), e.text, i, e)
             for i, e in enumerate(edits)]
    # Insertions first at a shared start: a line inserted before a statement stays when the
    # statement itself is rewritten (the `_device_type` helper above the first rewritten line).
    spans.sort(key=lambda s: (s[0], s[1] > s[0], -(s[1] - s[0]), s[3]))
    kept: list[_Span] = []
    dropped: list[Edit] = []
    seen: set[tuple[int, int, str]] = set()
    last_end = -1
    for start, end, new, _, edit in spans:
        if (start, end, new) in seen:
            continue
        if start < last_end:
            if not kept[-1].nest(text, start, end, new):
                dropped.append(edit)
                continue
        else:
            kept.append(_Span(start, end, new))
            last_end = max(last_end, end)
        seen.add((start, end, new))
    out = text
    for span in reversed(kept):
        out = out[:span.start] + span.composed(text) + out[span.end:]
    return out, dropped


@dataclass
class _Span:
    """A kept edit in character offsets, with the edits nested inside the text it keeps."""

    start: int
    end: int
    text: str
    inner: list[tuple[int, int, str]] = field(default_factory=list)

    def nest(self, source: str, start: int, end: int, new: str) -> bool:
        original = source[self.start:self.end]
        inside = self.start <= start < end <= self.end and (start, end) != (self.start, self.end)
        if not inside or self.text.count(original) != 1:
            return False
        if self.inner and start < self.inner[-1][1]:
            return False  # overlaps an edit already nested here
        self.inner.append((start, end, new))
        return True

    def composed(self, source: str) -> str:
        if not self.inner:
            return self.text
        k = self.text.index(source[self.start:self.end])
        out = self.text
        for start, end, new in reversed(self.inner):
            out = out[:k + start - self.start] + new + out[k + end - self.start:]
        return out


# --------------------------------------------------------------------------- insertion points
def _newline(text: str) -> str:
    if "\r\n" in text:
        return "\r\n"
    if "\r" in text and "\n" not in text:
        return "\r"
    return "\n"


def _prologue_end(tree: ast.Module) -> int:
    """Index of the first statement after a docstring and `from __future__` imports."""
    i = 0
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        i = 1
    while i < len(body) and isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__":
        i += 1
    return i


def _line_start(line: int) -> Position:
    return Position(line, 0)


def _insert_at_statement(tree: ast.Module, lines: list[str], index: int) -> Position:
    body = tree.body
    if index < len(body):  # before the decorators of a decorated statement, not between them and it
        stmt = body[index]
        return _line_start(min([stmt.lineno, *(d.lineno - 1 if _decorator_has_at_line(d, lines) else d.lineno
                                             for d in getattr(stmt, "decorator_list", ()))]))
    if body:
        return _line_start(body[-1].end_lineno + 1)  # type: ignore[operator]
    return _line_start(len(lines) + 1)


def _decorator_has_at_line(decorator: ast.expr, lines: list[str]) -> bool:
    """Whether the `@` of `decorator` sits on an earlier line than its expression (`@\\` continuation)."""
    line = lines[decorator.lineno - 1] if 0 < decorator.lineno <= len(lines) else ""
    return "@" not in line[:decorator.col_offset]


def _after_imports(tree: ast.Module, lines: list[str]) -> Position:
    """Just after the module's leading block of imports."""
    body = tree.body
    i = _prologue_end(tree)
    last = None
    while i < len(body) and isinstance(body[i], (ast.Import, ast.ImportFrom)):
        last = body[i]
        i += 1
    if last is None:
        return _insert_at_statement(tree, lines, _prologue_end(tree))
    return _line_start(last.end_lineno + 1)  # type: ignore[operator]


HELPER_NAMES = ("_accel_type", "_device_type")  # the names the agnostic helper binds


# Accelerators the agnostic helper accepts besides CUDA and the NPU when the module's original
# code names them itself: code that only knew CUDA ran on the CPU on an MPS or XPU host.
OTHER_ACCELERATORS = ("xpu", "mps")
_OTHER_ACCELERATOR_WORD = re.compile(r"\b(xpu|mps)\b")


def accelerators_used(source: str) -> tuple[str, ...]:
    """The accelerator types the `_accel_type` helper of a module accepts: CUDA (the original's),
    the NPU (the port's target), and any of xpu/mps the module's own code names."""
    named = set(_OTHER_ACCELERATOR_WORD.findall(source))
    return ("cuda", "npu") + tuple(a for a in OTHER_ACCELERATORS if a in named)


def device_type_helper(torch_name: str, min_torch: str, nl: str,
                       accepted: tuple[str, ...] = ("cuda", "npu")) -> str:
    """The module-level definitions of `_accel_type` and `_device_type` for the agnostic style.

    `_accel_type` is the host's accelerator type when the original could run there (CUDA, or an
    accelerator its own code names) or it is an Ascend NPU; None otherwise. Code that the
    original ran only on CUDA tests against `_accel_type or "cuda"`, so on a CPU-only host, or a
    Mac whose MPS the original never used, it stays off (or fails) exactly as the original did.
    `_device_type` is where tensors go: the accelerator, or the CPU without one.
    """
    t = torch_name
    v = version_tuple(min_torch)
    names = ", ".join(f'"{a}"' for a in accepted)
    spoken = ", ".join(accepted[:-1]) + " or " + accepted[-1]
    comment = (f"# The host's accelerator when it is {spoken}, else None (the CPU, where the original ran);"
               " tensors go to _device_type.")
    if v >= (2, 6):
        lines = [comment,
                 f"_accel_type = {t}.accelerator.current_accelerator().type "
                 f"if {t}.accelerator.is_available() else None",
                 f"_accel_type = _accel_type if _accel_type in ({names}) else None"]
    else:
        lines = [
            "def _accelerator_type():",
            '    """The first available accelerator type of those accepted, or None."""',
            f"    for name in ({names}):",
            f"        module = getattr({t}, name, None)",
            "        if module is not None and module.is_available():",
            "            return name",
            "    return None",
            "",
            "",
            comment,
            "_accel_type = _accelerator_type()",
        ]
    lines.append('_device_type = _accel_type or "cpu"')
    return nl + nl.join(lines) + nl


def _module_imports(tree: ast.Module, module: str) -> bool:
    """Does a module-level `import MODULE` (not `as` another name) bind it?"""
    return any(isinstance(node, ast.Import) and any(a.name == module and a.asname is None for a in node.names)
               for node in tree.body)


def _module_binds(tree: ast.Module, name: str) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return True
    return False


def _torch_binding(tree: ast.Module) -> Optional[str]:
    """The module-level name bound to the torch package, preferring `torch` itself (imports
    nested in module-level try/if blocks count; imports inside functions do not)."""
    found = None
    for node in _import_time_nodes(tree.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and imported_module(node.value) == "torch":  # torch = pytest.importorskip("torch")
            if node.targets[0].id == "torch":
                return "torch"
            found = found or node.targets[0].id
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is None and (alias.name == "torch" or alias.name.startswith("torch.")):
                    return "torch"
                if alias.name == "torch" and alias.asname and found is None:
                    found = alias.asname
    return found


# --------------------------------------------------------------------------- name binding
_DEFERRED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _import_time_nodes(nodes: Iterable[ast.AST]) -> Iterable[ast.AST]:
    """Every node under `nodes` that runs when the module is imported: function bodies are
    skipped (their decorators, defaults and annotations run at import time and are kept)."""
    stack = list(nodes)[::-1]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _DEFERRED):
            args = node.args
            children: list[ast.AST] = [*args.defaults, *[d for d in args.kw_defaults if d is not None]]
            if not isinstance(node, ast.Lambda):
                children = [*node.decorator_list, *children]
                if node.returns is not None:
                    children.append(node.returns)
        else:
            children = list(ast.iter_child_nodes(node))
        stack.extend(reversed(children))


def _binds(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name and isinstance(node.ctx, ast.Store)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in node.names)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    return False


def unbound_uses(text: str, names: Iterable[str], tree: Optional[ast.Module] = None) -> dict[str, int]:
    """Names of `names` that the module reads before binding them: name -> first such line.

    Module-level code runs top to bottom, so a read at import time must come after a binding
    in an earlier statement; code inside functions runs later and needs a module-level binding
    anywhere (or its own). Star imports and `global` rebinding are taken as binding nothing.
    `tree`: `ast.parse(text)` if the caller has it (only read here).
    """
    if tree is None:
        tree = ast.parse(text)
    wanted = set(names)
    problems: dict[str, int] = {}
    bound: set[str] = set()
    for stmt in tree.body:
        nodes = list(_import_time_nodes([stmt]))
        for node in nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in wanted \
                    and node.id not in bound and node.id not in problems:
                problems[node.id] = node.lineno
        bound.update(n for n in wanted if any(_binds(node, n) for node in nodes))
    missing = wanted - bound
    if not missing:
        return problems
    for node in ast.walk(tree):
        if isinstance(node, _DEFERRED):
            loads: dict[str, int] = {}
            local: set[str] = set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and sub.id in missing:
                    if isinstance(sub.ctx, ast.Load):
                        loads.setdefault(sub.id, sub.lineno)
                    else:
                        local.add(sub.id)
                elif isinstance(sub, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    local.update(n for n in missing if _binds(sub, n))
            for name, line in loads.items():
                if name not in local and name not in problems:
                    problems[name] = line
    return problems


def _statement_index(tree: ast.Module, pos: Position) -> int:
    """Index of the first module-level statement that does not end before `pos`."""
    for i, stmt in enumerate(tree.body):
        if (pos.line, pos.col) < (stmt.end_lineno, stmt.end_col_offset):  # type: ignore[operator]
            return i
    return len(tree.body)


def _function_bodies(tree: ast.Module) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) of every function body: code that does not run at import time."""
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, _DEFERRED):
            body = node.body if isinstance(node.body, list) else [node.body]
            spans.append(((body[0].lineno, body[0].col_offset), (body[-1].end_lineno, body[-1].end_col_offset)))
    return spans


def _deferred_at(spans: list[tuple[tuple[int, int], tuple[int, int]]], pos: Position) -> bool:
    return any(start <= (pos.line, pos.col) <= end for start, end in spans)


def _helper_place(tree: ast.Module, lines: list[str], torch_name: Optional[str],
                  edits: list[Edit]) -> tuple[Position, bool]:
    """Where the agnostic helper goes, and whether `import torch` must come with it.

    After the module-level statement that binds torch (and the imports right after it), and
    before the first statement that uses the helper's names at import time. Where torch is
    bound only later than that use (or only inside functions), `import torch` comes with it.
    """
    body = tree.body
    using = [e for e in edits if any(n in e.text for n in HELPER_NAMES)]
    spans = _function_bodies(tree) if using else []
    uses = [_statement_index(tree, e.start) for e in using if not _deferred_at(spans, e.start)]
    first_use = min(uses, default=len(body))
    bind = None
    if torch_name is not None:
        bind = next((i for i, stmt in enumerate(body)
                     if any(_binds(n, torch_name) for n in _import_time_nodes([stmt]))), None)
    if bind is None or bind >= first_use:
        if bind is None:
            pos = _after_imports(tree, lines)
            if _statement_index(tree, pos) <= first_use:
                return pos, True
        return _insert_at_statement(tree, lines, max(first_use, _prologue_end(tree))), True
    j = bind
    while j + 1 < min(first_use, len(body)) and isinstance(body[j + 1], (ast.Import, ast.ImportFrom)):
        j += 1
    return _line_start(body[j].end_lineno + 1), False  # type: ignore[operator]


def _has_transfer_imports(tree: ast.Module) -> tuple[bool, bool]:
    has_npu = has_transfer = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "torch_npu" or alias.name.startswith("torch_npu."):
                    has_npu = True
                if alias.name == "torch_npu.contrib.transfer_to_npu":
                    has_transfer = True
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("torch_npu"):
                has_npu = True
            if node.module == "torch_npu.contrib" and any(a.name == "transfer_to_npu" for a in node.names):
                has_transfer = True
            if node.module == "torch_npu.contrib.transfer_to_npu":
                has_transfer = True
    return has_npu, has_transfer


def _function_named(tree: ast.Module, name: str) -> Optional[ast.FunctionDef]:
    """The module-level (non-async) function `name` whose body starts on a line of its own."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name and node.body[0].lineno > node.lineno:
            return node
    return None


def _body_start(function: ast.FunctionDef, lines: list[str]) -> tuple[Position, str]:
    """Where statements go first in `function` (after its docstring), and their indentation."""
    body = function.body
    indent = re.match(r"[ \t]*", lines[body[0].lineno - 1]).group(0)  # type: ignore[union-attr]
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        if len(body) == 1:
            return _line_start(first.end_lineno + 1), indent  # type: ignore[operator]
        first = body[1]
    decorators = getattr(first, "decorator_list", ())
    return _line_start(min([first.lineno, *(d.lineno for d in decorators)])), indent


def _imports_top(tree: ast.Module, package: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == package for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and node.module.split(".")[0] == package:
            return True
    return False


def _tensorflow_init(tree: ast.Module) -> Optional[tuple[str, ...]]:
    """For a module that imports TensorFlow and no torch package: the TF Adapter lines it still
    needs (empty when it has them), else None (the torch_npu imports apply). TF1-style modules
    (sessions, placeholders, estimators, tf.compat.v1) get npu_bridge, the others npu_device."""
    from ascend_migrate.scan.entries import TORCH_PACKAGES

    tops: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        modules.update(names)
        tops.update(n.split(".")[0] for n in names)
    if "tensorflow" not in tops or tops & TORCH_PACKAGES:
        return None
    if "npu_device" in tops or "npu_bridge" in tops:
        return ()
    tf1 = any("tensorflow.compat.v1" in m for m in modules) or any(
        isinstance(n, ast.Attribute) and n.attr in _TF1_MARKERS for n in ast.walk(tree))
    return TF1_INIT if tf1 else TF2_INIT


# --------------------------------------------------------------------------- one file
def _usable(finding: Finding, opts: Options) -> Optional[Fix]:
    """The first fix for the style that is allowed under the options (safety, torch floor)."""
    for fix in finding.fixes:
        if fix.style != opts.style or fix.safety in ("manual", "none"):
            continue
        if opts.safe_only and fix.safety != "safe":
            continue
        if any(req.startswith("torch>=") and version_tuple(opts.min_torch) < version_tuple(req[len("torch>="):])
               for req in fix.requires):
            continue
        return fix
    return None


def _floor_note(finding: Finding, opts: Options) -> str:
    """Why a finding that has a rewrite for the style stays manual: the rewrite needs a newer
    torch than --min-torch allows (empty when that is not the reason)."""
    needed = [req[len("torch>="):] for fix in finding.fixes
              if fix.style == opts.style and fix.safety not in ("manual", "none")
              and not (opts.safe_only and fix.safety != "safe")
              for req in fix.requires if req.startswith("torch>=")]
    if not needed:
        return ""
    lowest = min(needed, key=version_tuple)
    return f" (not rewritten: the rewrite needs torch >= {lowest}, and --min-torch is {opts.min_torch})"


def _harmless(finding: Finding, style: str) -> bool:
    return any(f.style == style and f.safety == "none" for f in finding.fixes)


def _covered(finding: Finding, edits: list[Edit]) -> bool:
    """Is the finding's start inside a range another fix rewrites?"""
    start = Position(finding.line, finding.col)
    return any(e.start <= start < e.end for e in edits)


def rewrite_python(kb: KnowledgeBase, rel: str, text: str, opts: Options, coverage=None,
                   outer: Optional[dict[str, Optional[str]]] = None,
                   tree: Optional[ast.Module] = None, findings: Optional[list[Finding]] = None) -> RewriteResult:
    """Rewrite one Python module's text (already decoded, BOM removed).

    `outer` holds module-level bindings made elsewhere (earlier notebook cells, name -> qualified
    name): names resolve through them, and `torch` or `_device_type` are not added again.
    `tree`: `ast.parse(text)` if the caller has it. The module is parsed once: the analysis and
    the rewrite read the same tree (neither changes it). `findings`: what
    `analyse_python_text(Job(rel, "python"), text, kb, coverage)` returns for this very text
    (the scan's analysis of the same bytes; only without `outer`), so it is not run again.
    """
    outer = outer or {}
    if tree is None:
        try:
            tree = ast.parse(text, filename=rel)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None  # the analysis parses again and reports why (SC001)
    if findings is None or outer:
        findings = analyse_python_text(Job(rel, "python"), text, kb, coverage, outer=outer, tree=tree).findings
    if any(f.rule == "SC001" for f in findings):
        reason = next(f.symbol for f in findings if f.rule == "SC001")
        return RewriteResult(text, manual=[Change(rel, 1, 1, "SC001", "manual", f"not rewritten: {reason}")])
    if tree is None:  # pragma: no cover - analyse() reports this as SC001
        return RewriteResult(text, error="does not parse")
    lines = split_lines(text)
    nl = _newline(text)
    edits: list[Edit] = []
    changes: list[Change] = []
    requires: set[str] = set()
    annotate_lines: dict[int, list[Finding]] = {}
    pending: list[Finding] = []
    fix_rows: list[tuple[int, tuple[Edit, ...], Finding]] = []  # (row in changes, its edits, finding)
    for f in findings:
        fix = _usable(f, opts)
        if fix is not None:
            edits.extend(fix.edits)
            fix_rows.append((len(changes), fix.edits, f))
            requires.update(r for r in fix.requires if not r.startswith("torch>="))
            op = "delete" if all(not e.text for e in fix.edits) else "replace"
            changes.append(Change(rel, f.line, f.end_line, f.rule, op, fix.description or f.message, fix.safety))
        elif not _harmless(f, opts.style) and kb.rule(f.rule).fix_kind(opts.style) != "none" and (
                f.severity != "info" or opts.style == "agnostic") and not f.message.endswith(OFF_NPU_SUFFIXES):
            pending.append(f)
    manual_at: list[tuple[Change, Position]] = []
    for f in pending:
        if _covered(f, edits):
            continue
        manual_at.append((Change(rel, f.line, f.end_line, f.rule, "manual", f.message + _floor_note(f, opts)),
                          Position(f.line, f.col)))
        annotate_lines.setdefault(f.line, []).append(f)
    own_torch = _torch_binding(tree)
    torch_name = own_torch or ("torch" if outer.get("torch") == "torch" else None)
    if "device_type" in requires:
        requires.add("torch")
    helper_needed = "device_type" in requires and not _module_binds(tree, "_accel_type") \
        and "_accel_type" not in outer
    if "torch" in requires and torch_name is None and not helper_needed:
        pos = _insert_at_statement(tree, lines, _prologue_end(tree))
        edits.append(Edit(pos, pos, "import torch" + nl))
        changes.append(Change(rel, pos.line, pos.line, "", "insert", "import torch (needed by the rewritten code)", "safe"))
        torch_name = "torch"
    if "pathlib" in requires and not _module_imports(tree, "pathlib") and outer.get("pathlib") != "pathlib":
        pos = _insert_at_statement(tree, lines, _prologue_end(tree))
        edits.append(Edit(pos, pos, "import pathlib" + nl))
        changes.append(Change(rel, pos.line, pos.line, "", "insert", "import pathlib (needed by the rewritten code)",
                              "safe"))
    if helper_needed:
        if own_torch is None and torch_name is not None:  # bound by an earlier notebook cell
            pos, with_import = _insert_at_statement(tree, lines, _prologue_end(tree)), False
        else:
            pos, with_import = _helper_place(tree, lines, own_torch, edits)
        helper = device_type_helper("torch" if with_import else (torch_name or "torch"), opts.min_torch, nl,
                                    accelerators_used(text))
        if with_import:
            helper = nl + "import torch" + nl + helper
            changes.append(Change(rel, pos.line, pos.line, "", "insert", "import torch (needed by the rewritten code)", "safe"))
        if pos.line <= len(lines) and lines[pos.line - 1].strip():
            helper += nl
        if pos.line > len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
            helper = nl + helper
        edits.append(Edit(pos, pos, helper.lstrip("\r\n") if pos.line == 1 else helper))
        changes.append(Change(rel, pos.line, pos.line, "", "insert",
                              "define _accel_type and _device_type from the available accelerator", "safe"))
    tf_init = _tensorflow_init(tree) if opts.style == "transfer" and opts.inject else None
    if tf_init is not None:
        if tf_init:
            pos = _insert_at_statement(tree, lines, _prologue_end(tree))
            edits.append(Edit(pos, pos, nl.join(tf_init) + nl))
            what = "TF 1.15 (npu_bridge)" if tf_init == TF1_INIT else "TF 2.6.5 (npu_device)"
            changes.append(Change(rel, pos.line, pos.line, "", "inject",
                                  f"TF Adapter initialisation for {what} at the entry point", "safe"))
    elif opts.style == "transfer" and opts.inject and _imports_top(tree, "vllm"):
        # vllm-ascend plugs into vLLM itself; the blanket transfer_to_npu shim is not wanted there,
        # and touching torch_npu before the engine starts breaks its forked workers.
        changes_note = ("vLLM entry point: no transfer_to_npu imports injected; install vllm-ascend of the same "
                        "version and replace the remaining CUDA calls explicitly (torch.npu or "
                        "vllm.platforms.current_platform)")
        manual_at.append((Change(rel, 1, 1, "VL001", "manual", changes_note), Position(1, 0)))
    elif opts.style == "transfer" and opts.inject:
        has_npu, has_transfer = _has_transfer_imports(tree)
        if not has_transfer:
            pos = _insert_at_statement(tree, lines, _prologue_end(tree))
            imports = ([] if has_npu else [TRANSFER_IMPORTS[0]]) + [TRANSFER_IMPORTS[1]]
            function = _function_named(tree, opts.inject_function) if opts.inject_function else None
            if function is not None:
                pos, indent = _body_start(function, lines)
                imports = [indent + line for line in imports]
                what = (f"import torch_npu and transfer_to_npu first in {function.name}(), which the console "
                        f"script calls (importing the module loads neither)")
            elif opts.guard_inject:
                imports = [RUN_AS_PROGRAM] + ["    " + line for line in imports]
                what = "import torch_npu and transfer_to_npu when run as a program (importing it loads neither)"
            else:
                what = "import torch_npu and transfer_to_npu at the entry point"
            edits.append(Edit(pos, pos, nl.join(imports) + nl))
            changes.append(Change(rel, pos.line, pos.line, "", "inject", what, "safe"))
    if opts.annotate:
        # A line inside a multi-line rewrite is annotated above the line where that rewrite starts
        # (where the flagged code ends up once the rewrite joins the lines).
        placed: dict[int, list[Finding]] = {}
        for line, items in annotate_lines.items():
            target = line
            while True:
                outer_edit = next((e for e in edits if e.start < _line_start(target) < e.end), None)
                if outer_edit is None:
                    break
                target = outer_edit.start.line
            placed.setdefault(target, []).extend(items)
        for line, items in sorted(placed.items()):
            prev = lines[line - 2] if line >= 2 else ""
            current = lines[line - 1] if line - 1 < len(lines) else ""
            indent = re.match(r"[ \t]*", current).group(0)  # type: ignore[union-attr]
            notes = [f for f in items if f"{TODO_MARK} {f.rule}" not in prev]
            if not notes or _inside_multiline_string(tree, line):
                continue
            text_lines = "".join(f"{indent}# {TODO_MARK} {f.rule} {f.message}{nl}" for f in notes)
            edits.append(Edit(_line_start(line), _line_start(line), text_lines))
            for f in notes:
                changes.append(Change(rel, line, line, f.rule, "annotate", f"TODO comment: {f.message}", "safe"))
    fix_edit_ids = {id(e) for _, fix_edits, _ in fix_rows for e in fix_edits}
    withdrawn: set[int] = set()
    while True:
        new_text, dropped = apply_edits(text, edits)
        dropped_ids = {id(e) for e in dropped}
        if dropped_ids - fix_edit_ids:  # an inserted import, helper or comment did not fit
            return RewriteResult(text, error="an inserted line overlaps a rewritten range")
        # A fix applies whole or not at all: withdraw any fix that lost an edit, then re-apply.
        lost = [(row, fix_edits, f) for row, fix_edits, f in fix_rows
                if row not in withdrawn and any(id(e) in dropped_ids for e in fix_edits)]
        if not lost:
            break
        for row, fix_edits, f in lost:
            withdrawn.add(row)
            gone = {id(e) for e in fix_edits}
            edits = [e for e in edits if id(e) not in gone]
            manual_at.append((Change(rel, f.line, f.end_line, f.rule, "manual",
                                     f"{f.message} (its fix overlaps another one; not applied)"), Position(f.line, f.col)))
    changes = [c for i, c in enumerate(changes) if i not in withdrawn]
    applied = list({(e.start, e.end, e.text): e for e in edits}.values())  # identical edits apply once
    manual = _with_new_lines(manual_at, applied)
    return RewriteResult(new_text, changes=edit_sites_in_port(changes, applied, new_text), manual=manual,
                         edits=applied)


def _inside_multiline_string(tree: ast.Module, line: int) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and getattr(node, "lineno", line) < line <= getattr(node, "end_lineno", 0):
            if isinstance(node, ast.JoinedStr) or isinstance(node.value, str):
                return True
    return False


def rewrite_config(kb: KnowledgeBase, rel: str, text: str, kind: str, opts: Options) -> RewriteResult:
    """Rewrite shell / YAML / JSON launch configs (nccl, CUDA_VISIBLE_DEVICES, device flags)."""
    findings = analyse(Job(rel, "config", kind), text.encode("utf-8", "surrogateescape"), kb).findings
    edits: list[Edit] = []
    changes: list[Change] = []
    manual: list[Change] = []
    for f in findings:
        fix = _usable(f, opts)
        if fix is not None:
            edits.extend(fix.edits)
            changes.append(Change(rel, f.line, f.end_line, f.rule, "replace", fix.description, "safe"))
        elif f.severity != "info":
            manual.append(Change(rel, f.line, f.end_line, f.rule, "manual", f.message, new_line=f.line))
    new_text, _ = apply_edits(text, edits)  # line-preserving: config replacements hold no newline
    return RewriteResult(new_text, changes=changes, manual=manual)


def verify(kb: KnowledgeBase, rel: str, new_text: str, opts: Options, kind: str = "python", config_kind: str = "",
           coverage=None, old_text: Optional[str] = None) -> str:
    """Return '' when the rewritten text compiles, binds every name it introduces before using
    it, and a second pass (with the same inputs as the first) changes nothing."""
    if kind == "python":
        try:
            tree = ast.parse(new_text)
        except SyntaxError as exc:
            return f"rewritten code does not parse (line {exc.lineno}: {exc.msg})"
        problem = _compile_problem(new_text, rel)
        if problem and (old_text is None or not _compile_problem(old_text, rel)):
            return f"rewritten code does not compile ({problem})"
        names = ("torch", *HELPER_NAMES)
        unbound = unbound_uses(new_text, names, tree)
        if old_text is not None and unbound:
            try:
                before = unbound_uses(old_text, names)
            except SyntaxError:
                before = {}
            unbound = {n: line for n, line in unbound.items() if n not in before}
        if unbound:
            name, line = min(unbound.items(), key=lambda item: item[1])
            return f"rewritten code reads `{name}` before binding it (line {line}); not written"
        again = rewrite_python(kb, rel, new_text, opts, coverage, tree=tree)
    else:
        again = rewrite_config(kb, rel, new_text, config_kind, opts)
    if again.text != new_text:
        return "a second pass would change the file again (not idempotent)"
    return ""


def _compile_problem(text: str, rel: str) -> str:
    try:
        compile(text, rel, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"line {getattr(exc, 'lineno', '?')}: {getattr(exc, 'msg', exc)}"
    return ""
