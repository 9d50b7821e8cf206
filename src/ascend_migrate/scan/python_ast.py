"""Static analysis of one Python module with the stdlib `ast`.

The analyser resolves import aliases (`import torch.cuda as tc`, `from torch import cuda`,
`from torch.cuda.amp import autocast as ac`, `tc = torch.cuda`), respects names shadowed by
parameters and assignments, ignores text in docstrings and log messages, and recognises code
that already branches for npu. Each finding may carry fixes for both migration styles as
edits on exact source ranges.
"""
from __future__ import annotations

import ast
import re
from bisect import bisect_left
from heapq import heappush, heappushpop
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Union

from ascend_migrate.knowledge.base import KnowledgeBase, Rule, format_message
from ascend_migrate.scan.bounds import MAX_FINDINGS_PER_RULE
from ascend_migrate.scan.entries import is_main_guard
from ascend_migrate.scan.finding import Edit, Finding, Fix, Position, split_lines

DEVICE_TYPE = "_device_type"  # the name the agnostic style binds to the run-time device type
ACCEL_TYPE = "_accel_type"  # the host's accelerator type, None without one (agnostic style)
# What the original's "cuda" means on this host: the accelerator; without one still "cuda", so a
# CUDA-only path (AMP, a device test, a torch.cuda call) stays off or fails as it did before.
CUDA_OR_ACCEL = f'{ACCEL_TYPE} or "cuda"'
AMP_DEVICE_CALLS = {"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
                    "torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler", "torch.get_device_module"}
AUTOCAST_CUDA_PARAMS = ("enabled", "dtype", "cache_enabled")  # torch.cuda.amp.autocast's positional order
CUDA_DEVICE = re.compile(r"^cuda(:\d+)?$")
# How a framework device name can start ("/gpu:0", "/job:w/...", "gpu:0", "device:GPU:0"): only
# such strings are matched against the device-name rules' patterns.
DEVICE_NAME_STARTS = frozenset("/gGdD")
# The CUDA part of a device string completed at run time: "cuda:{}".format(i), "cuda:%d" % i, "cuda:" + s
BUILT_DEVICE = re.compile(r"^cuda:(\{[^{}]*\}|%[dis]|)$")
# `case "cuda":` patterns exist from Python 3.10; older parsers never produce them.
MATCH_VALUE: tuple = tuple(getattr(ast, name) for name in ("MatchValue",) if hasattr(ast, name))
NPU_ENTRY = re.compile(r"^(npu(:\d+)?|hccl)$")
TYPE_CHECKS = {"isinstance", "issubclass"}
PROSE_KEYWORDS = {"help", "description", "epilog", "msg", "message", "doc", "usage"}
NCCL_TOKEN = re.compile(r"(?i)(?:^|[:,\s])nccl(?:$|[,\s])")
NCCL_ANY_CASE = re.compile(r"(?i)nccl")
PROCESS_GROUP_CALLS = ("init_process_group", "new_group")  # the calls whose backend transfer_to_npu maps
DEVICE_STRING = re.compile(r"cuda(?::\d+)?")  # a whole device string, not a path that contains one
TRANSFER_MAPS_NCCL = " (transfer_to_npu, which this module imports, maps it to hccl)"
UPPER_NCCL_NOTE = (" (not in lower case: transfer_to_npu maps only the spelling 'nccl' to hccl, and only"
                   " in init_process_group/new_group arguments; write it in lower case where it reaches them)")
MESSAGE_FUNCS = {"print"}
MESSAGE_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "write"}
DEVICE_KWARGS = {"device", "map_location", "device_type", "device_id", "device_ids", "output_device"}
ARCH_GUARD_EXCEPTIONS = {"AttributeError", "RuntimeError", "TypeError", "AssertionError", "Exception", "BaseException"}

MATCH_PATTERN_NOTE = (" (in a match pattern, which cannot name a run-time value: not rewritten; "
                      "test `_accel_type or \"cuda\"` in an if/elif instead)")  # message suffix; such findings get no fix
NOT_A_DEVICE_NOTE = (" (`{receiver}` is not evidently the running device: if it holds stored data, such as a"
                     " device name read from a saved graph, a checkpoint or a config, the original names CUDA"
                     " as data; check this test by hand)")  # message and fix-description suffix
STORED_LOCATION_NOTE = (" (a map_location's `loc` is where the checkpoint saved the tensor, not the running device:"
                        " not rewritten; decide by hand how the saved CUDA locations load here)")
# Message suffix of a finding that a branch for npu makes harmless; such findings get no fix.
# What is broken on NPU whatever branch it sits in (Rule.npu_branch_effect == "keep") never gets it.
NPU_HANDLED = (" (already handled: this code branches for npu; further CUDA uses in the branch that"
               " it makes harmless are not listed)")
# The same for an arm a device-agnostic port keeps for CUDA only (`if device == "cuda":` where the
# device is the run-time type, "npu" on an NPU host): it never runs there.
CUDA_ONLY_KEPT = (" (kept for CUDA only: this device-agnostic port never takes this branch on an NPU host;"
                  " further CUDA uses in it are not listed)")
# Every suffix that marks a finding as harmless on the NPU (validate and migrate read them).
OFF_NPU_SUFFIXES = (NPU_HANDLED, CUDA_ONLY_KEPT)
# The module-level binding the agnostic rewrite adds (fix/rewrite.py's prelude).
AGNOSTIC_PRELUDE = re.compile(r"(?m)^_accel_type = ")
# An import statement of transfer_to_npu (`from torch_npu.contrib import transfer_to_npu`, ...).
TRANSFER_IMPORT = re.compile(r"(?m)^[ \t]*(?:from|import)[ \t]+torch_npu\.contrib\b[^\n]*\btransfer_to_npu\b")

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]


@dataclass
class ModuleFacts:
    """What the engine needs beyond findings."""

    main_guard_line: int = 0
    imports_torch_npu: bool = False
    has_transfer_import: bool = False
    frameworks: dict[str, int] = field(default_factory=dict)  # framework key -> first line


class _Scope:
    __slots__ = ("names", "is_class")

    def __init__(self, names: dict[str, Optional[str]], is_class: bool = False) -> None:
        self.names = names
        self.is_class = is_class


def _import_bindings(node: Union[ast.Import, ast.ImportFrom]) -> Iterable[tuple[str, str]]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                top = alias.name.split(".")[0]
                yield top, top
    else:
        if node.level or not node.module:
            return
        for alias in node.names:
            if alias.name == "*":
                continue
            yield alias.asname or alias.name, f"{node.module}.{alias.name}"


_IMPORTING_CALLS = {("pytest", "importorskip"), ("importlib", "import_module")}


def imported_module(value: ast.AST) -> Optional[str]:
    """The module that `value` imports and returns when it is a call that works like an import
    statement: `pytest.importorskip("torch")` (test modules that skip without torch) or
    `importlib.import_module("torch.cuda")`, also called by their bare names. The name it is
    assigned to is then that module, exactly as after `import torch as name`; without this the
    CUDA calls made through it go unseen, and they surface only once a rewrite has added a
    plain `import torch` (a second pass would then change the file again)."""
    if not isinstance(value, ast.Call) or not value.args:
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        known = (func.value.id, func.attr) in _IMPORTING_CALLS
    elif isinstance(func, ast.Name):
        known = any(func.id == attr for _, attr in _IMPORTING_CALLS)
    else:
        known = False
    first = value.args[0]
    if not known or not isinstance(first, ast.Constant) or not isinstance(first.value, str):
        return None
    module = first.value
    if not module or module.startswith(".") or not all(part.isidentifier() for part in module.split(".")):
        return None
    return module


def _target_names(target: ast.AST) -> Iterable[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


# Fields that only ever hold marker nodes (Load/Store, operators): nothing to visit there.
_MARKER_FIELDS = frozenset({"ctx", "op", "ops"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


class FastVisitor(ast.NodeVisitor):
    """ast.NodeVisitor with the same visiting order, at about half the cost per node.

    The stdlib visitor looks the method up by name for every node and descends into marker
    nodes (each `Name`'s `Load`, each operator); on a large tree that bookkeeping costs more
    than the analysis. Here the method is looked up once per node class and marker fields are
    not entered: no visitor in this package defines a method for a marker class (a test checks).
    """

    _dispatch: dict[type, str] = {}  # node class -> method name; each subclass gets its own

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}

    def visit(self, node: ast.AST):
        cls = node.__class__
        name = self._dispatch.get(cls)
        if name is None:
            name = "visit_" + cls.__name__
            if not hasattr(self, name):
                name = "generic_visit"
            self._dispatch[cls] = name
        return getattr(self, name)(node)

    def generic_visit(self, node: ast.AST) -> None:
        cls = node.__class__
        fields = _CHILD_FIELDS.get(cls)
        if fields is None:
            fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _MARKER_FIELDS)
        visit = self.visit
        AST = ast.AST
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, AST):
                        visit(item)
            elif isinstance(value, AST):
                visit(value)


class _BindingCollector(FastVisitor):
    """Collect the names a scope binds, without entering nested scopes.

    expressions=False: the module has no `:=`, so no expression binds a name and expression
    subtrees (most of the nodes) are not entered."""

    def __init__(self, expressions: bool = True) -> None:
        self.expressions = expressions
        self.imports: dict[str, str] = {}
        self.others: set[str] = set()
        self.aliases: list[tuple[str, ast.AST]] = []  # name = <expression> candidates
        self.globals: set[str] = set()

    def collect(self, body: Iterable[ast.stmt]) -> None:
        for stmt in body:
            self.visit(stmt)

    def visit(self, node: ast.AST):
        if not self.expressions and isinstance(node, ast.expr):
            return None
        return FastVisitor.visit(self, node)

    def visit_Import(self, node: ast.Import) -> None:
        for name, qual in _import_bindings(node):
            self.imports.setdefault(name, qual)

    visit_ImportFrom = visit_Import  # type: ignore[assignment]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.others.add(node.name)
        for dec in node.decorator_list:
            self.visit(dec)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.others.add(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return

    def visit_ListComp(self, node: ast.AST) -> None:
        return

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_Global(self, node: ast.Global) -> None:
        self.globals.update(node.names)

    visit_Nonlocal = visit_Global  # type: ignore[assignment]

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.aliases.append((node.targets[0].id, node.value))
        for target in node.targets:
            self.others.update(_target_names(target))
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.others.update(_target_names(node.target))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.others.update(_target_names(node.target))

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.others.update(_target_names(node.target))
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self.others.update(_target_names(node.target))
        self.generic_visit(node)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self.others.update(_target_names(node.optional_vars))

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.others.add(node.name)
        self.generic_visit(node)


def _function_params(node: FunctionNode) -> list[str]:
    a = node.args
    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if a.vararg:
        params.append(a.vararg.arg)
    if a.kwarg:
        params.append(a.kwarg.arg)
    return params


def _param_of_default(args: ast.arguments, default: ast.AST) -> Optional[str]:
    """The name of the parameter whose default value is `default`."""
    positional = (*args.posonlyargs, *args.args)
    for param, value in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if value is default:
            return param.arg
    for param, kw_value in zip(args.kwonlyargs, args.kw_defaults):
        if kw_value is default:
            return param.arg
    return None


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


class PythonAnalyzer(FastVisitor):
    """Walk one module and report findings against the knowledge base."""

    def __init__(self, kb: KnowledgeBase, path: str, source: str, tree: ast.Module,
                 coverage: Optional[object] = None, cell: Optional[int] = None,
                 outer: Optional[dict[str, Optional[str]]] = None) -> None:
        """`outer`: names earlier notebook cells bound at module level (name -> qualified name,
        None for non-module values), so `torch` imported in cell 1 resolves in cell 5."""
        self.kb = kb
        self.outer = dict(outer or {})
        self.module_names: dict[str, Optional[str]] = {}
        self.path = path
        self.lines = split_lines(source)
        self._walrus = ":=" in source  # a name bound inside an expression (see _BindingCollector)
        self._source_text = source
        self.tree = tree
        self.coverage = coverage
        self.cell = cell
        self.findings: list[Finding] = []
        self.facts = ModuleFacts()
        self.scopes: list[_Scope] = []
        self._message_depth = 0
        self._npu_depth = 0
        self._npu_table_depth = 0  # inside a literal table/choice list that has an npu entry
        self._npu_nodes: list[ast.AST] = []  # npu-aware branches being visited, outermost first
        self._off_npu_depth = 0  # inside an arm an npu test keeps off the NPU (`else` of `== "npu"`)
        self._npu_reported: set[int] = set()  # branches that already have their one info finding
        self._cuda_only_nodes: set[int] = set()  # branches an agnostic port keeps for CUDA only
        self._kept_cuda_tests: set[int] = set()  # their `== "cuda"` tests: deliberate, not DV004
        # A device-agnostic port (the agnostic prelude, no transfer_to_npu): its device variables
        # hold the run-time type, so a plain `== "cuda"` test is False on an NPU host on purpose.
        self._agnostic_module = AGNOSTIC_PRELUDE.search(source) is not None and not TRANSFER_IMPORT.search(source)
        self._version_lines: set[int] = set()  # lines with a torch.version.cuda finding
        self._alias_names: set[str] = set()  # names bound by `x = torch.<...>` (aliases, not imports)
        self._guard_depth = 0  # inside try/except that catches arch-query failures
        self._stack: list[ast.AST] = []  # nodes being visited, outermost first
        self._parents: Optional[dict[int, ast.AST]] = None  # built only if the stack cannot answer
        self._list_index: dict[int, tuple[list, set[int]]] = {}  # id(list field) -> (it, ids of its items)
        self._wide_chars: dict[int, tuple[list[int], list[int]]] = {}  # long line -> its multi-byte characters
        self._snippets: dict[int, str] = {}  # line -> snippet of its findings
        # rule -> the positions of its first MAX_FINDINGS_PER_RULE findings, negated (a max-heap)
        self._kept_positions: dict[str, list[tuple[int, int]]] = {}
        self._suppressions: Optional[dict[int, Optional[set[str]]]] = None  # line -> rules ignored there
        self._handled: set[int] = set()  # node ids already reported by a more specific rule
        self._receivers: set[int] = set()  # handled `x.method` nodes whose receiver `x` is still visited
        self._try_import_depth = 0
        self._bnb_test_depth = 0  # inside a test that runs only where bitsandbytes is installed
        self._qual_rules: dict[str, Rule] = {}
        for rule in (*kb.rules_of_kind("qualname"), *kb.rules_of_kind("float64")):
            for name in rule.match["names"]:
                self._qual_rules[name] = rule
        # attribute rules on objects (config.gpu_options) may name constructors too (tf.GPUOptions)
        self._attr_rules: dict[str, Rule] = {}
        for rule in kb.rules_of_kind("attribute"):
            for name in rule.match.get("qualnames", ()):
                self._qual_rules[name] = rule
            for name in rule.match["names"]:
                if name != "is_cuda":
                    self._attr_rules[name] = rule
        # method name -> rule, for calls on receivers that are not modules (x.cuda(), x.double())
        self._method_rules: dict[str, Rule] = {}
        for rule in kb.rules_of_kind("method-call"):
            for name in rule.match["names"]:
                self._method_rules[name] = rule
        for rule in kb.rules_of_kind("float64"):
            for name in rule.match.get("methods", ()):
                self._method_rules[name] = rule
        self._package_by_import = {imp: pkg for pkg in kb.packages for imp in pkg.imports}
        # names that are the string "nccl" (torch.distributed.Backend.NCCL)
        self._nccl_names = frozenset(name for rule in kb.rules_of_kind("nccl") for name in rule.match.get("names", ()))
        self._version_rules = {name: rule for rule in kb.rules_of_kind("cuda-version") for name in rule.match["names"]}
        self._private_rule = next(iter(kb.rules_of_kind("cuda-private")), None)
        self._swallowed_rule = next(iter(kb.rules_of_kind("guarded-capability")), None)
        self._prefix_rules = [(name, rule) for rule in kb.rules_of_kind("module-prefix") for name in rule.match["names"]]
        self._prefix_keywords = {call: (kw, rule) for rule in kb.rules_of_kind("module-prefix")
                                 for call, kw in rule.match.get("keywords", {}).items()}
        self._env_table = {name: (spec or {}, rule) for rule in kb.rules_of_kind("env-table")
                           for name, spec in rule.match["vars"].items()}
        self._tools = [(re.compile(r"(?<![\w.-])" + re.escape(tool) + r"(?![\w-])"), tool, note, rule)
                       for rule in kb.rules_of_kind("tool-command") for tool, note in rule.match["tools"].items()]
        self._framework_by_import = {imp: fw for fw in kb.frameworks for imp in fw.imports}

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

    # ----------------------------------------------------------------- name resolution
    def _push_scope(self, body: Iterable[ast.stmt], params: Iterable[str] = (), is_class: bool = False) -> None:
        collector = _BindingCollector(expressions=self._walrus)
        collector.collect(body)
        names: dict[str, Optional[str]] = {p: None for p in params}
        for name in collector.others:
            names[name] = None
        for name, qual in collector.imports.items():
            names[name] = qual
        self.scopes.append(_Scope(names, is_class))
        # Simple aliases (`tc = torch.cuda`) are resolved after the scope exists, in order.
        for name, value in collector.aliases:
            if name in collector.imports:
                continue
            module = imported_module(value)
            if module is not None and (module.split(".")[0] == "torch" or module.split(".")[0] in self._package_by_import):
                self.scopes[-1].names[name] = module  # bound as by an import statement
                continue
            qual = self.qualname(value)
            if qual is not None and (qual.startswith("torch") or qual.split(".")[0] in self._package_by_import):
                self.scopes[-1].names[name] = qual
                self._alias_names.add(name)
        for name in collector.globals:
            self.scopes[-1].names.pop(name, None)

    def bind_only(self) -> dict[str, Optional[str]]:
        """Module-level bindings without analysing anything (for the next notebook cell)."""
        self._enter_module()
        return self.exported_names()

    def exported_names(self) -> dict[str, Optional[str]]:
        """Module-level bindings as the next notebook cell sees them (after `run`)."""
        return {**self.outer, **self.module_names}

    def lookup(self, name: str) -> Optional[str]:
        innermost = True
        for scope in reversed(self.scopes):
            if scope.is_class and not innermost:
                continue
            innermost = False
            if name in scope.names:
                return scope.names[name]
        return None

    def qualname(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def torch_name(self) -> Optional[str]:
        """A name bound to the torch module in the current scope chain, preferring `torch`."""
        if self.lookup("torch") == "torch":
            return "torch"
        for scope in reversed(self.scopes):
            for name, qual in scope.names.items():
                if qual == "torch" and self.lookup(name) == "torch":
                    return name
        return None

    # ----------------------------------------------------------------- reporting
    def report(self, rule: Rule, node: ast.AST, symbol: str, fixes: Iterable[Fix] = (),
               confidence: Optional[str] = None, severity: Optional[str] = None,
               start: Optional[Position] = None, end: Optional[Position] = None, suffix: str = "",
               **values: str) -> None:
        start = start or self.start(node)
        end = end or self.end(node)
        message = format_message(rule, symbol=symbol, **values) + suffix
        sev = severity or rule.severity
        fixes = tuple(fixes)
        if self._npu_table_depth:
            return  # {"cuda": torch.cuda.current_device, "npu": torch.npu.current_device}: ready as it is
        if self._bnb_test_depth and rule.match.get("quiet_in_bitsandbytes_tests"):
            return  # a test of the bitsandbytes integration: skipped where bitsandbytes is absent
        if self._npu_depth and (rule.npu_branch_effect == "info" or self._off_npu_depth):
            # Reported once per branch, as information: the code already has its npu path.
            # What no branch makes harmless is reported as anywhere else, and does not use up
            # the branch's one finding.
            branch = id(self._npu_nodes[0]) if self._npu_nodes else 0
            if branch in self._npu_reported:
                return
            self._npu_reported.add(branch)
            sev = "info"
            message += CUDA_ONLY_KEPT if branch in self._cuda_only_nodes else NPU_HANDLED
            fixes = ()
        if fixes and self._in_match_pattern():
            # A `case` pattern matches literal values; it cannot name a run-time value such as
            # the accelerator type, so nothing inside a pattern is ever rewritten.
            fixes = ()
            if MATCH_PATTERN_NOTE not in message:
                message += MATCH_PATTERN_NOTE
        if self.cell is not None:
            message = f"cell {self.cell}: {message}"
        self.findings.append(Finding(
            rule=rule.id, path=self.path, line=start.line, col=start.col,
            end_line=end.line, end_col=end.col, message=message, severity=sev,
            confidence=confidence or rule.confidence, snippet=self._snippet(start.line),
            symbol=symbol, fixes=fixes,
        ))
        if self.cell is None and not self._suppressed(start.line, rule.id):
            heap = self._kept_positions.setdefault(rule.id, [])
            if len(heap) < MAX_FINDINGS_PER_RULE:
                heappush(heap, (-start.line, -start.col))
            else:
                heappushpop(heap, (-start.line, -start.col))

    def _room(self, rule: Rule, at: Position) -> bool:
        """Can a finding of `rule` at `at` still be one the file keeps? `engine.cap_findings`
        keeps the first MAX_FINDINGS_PER_RULE of a rule by position; a finding placed after the
        last of the first that many seen so far never is, so its fixes are not built (a
        generated line of 50,000 CUDA calls builds 500 sets of fixes, not 50,000). Notebook
        cells, whose findings are placed later, always have room."""
        heap = self._kept_positions.get(rule.id)
        if self.cell is not None or heap is None or len(heap) < MAX_FINDINGS_PER_RULE:
            return True
        return (at.line, at.col) <= (-heap[0][0], -heap[0][1])

    def _suppressed(self, line: int, rule_id: str) -> bool:
        """Is a finding of `rule_id` on `line` dropped by an ignore comment (engine.SUPPRESS)?"""
        if self._suppressions is None:
            self._suppressions = {}
            if "ascend-migrate" in self._source_text:
                from ascend_migrate.scan.engine import SUPPRESS  # the engine imports this module
                for number, text in enumerate(self._source_text.splitlines(), 1):  # numbered as the engine does
                    m = SUPPRESS.search(text) if "ascend-migrate" in text else None
                    if m:
                        self._suppressions[number] = (None if m.group(1) is None else
                                                      {r.strip().upper() for r in m.group(1).split(",")})
        if line not in self._suppressions:
            return False
        rules = self._suppressions[line]
        return rules is None or rule_id in rules

    def _in_match_pattern(self) -> bool:
        """Is the node being visited part of a `case` pattern (not its guard or body)?"""
        if not MATCH_VALUE:  # Python < 3.10 has no match statements
            return False
        for node in reversed(self._stack):
            if isinstance(node, ast.pattern):
                return True
            if isinstance(node, (ast.match_case, ast.stmt)):
                return False
        return False

    def _fix(self, style: str, rule: Rule, edits: Iterable[Edit], description: str,
             requires: Iterable[str] = ()) -> Fix:
        return Fix(style=style, edits=tuple(edits), safety=rule.fix_kind(style), description=description,
                   requires=tuple(requires))

    def _replace(self, node: ast.AST, text: str) -> Edit:
        return Edit(self.start(node), self.end(node), text)

    # ----------------------------------------------------------------- traversal
    def _enter_module(self) -> None:
        if self.outer:
            self.scopes.append(_Scope(dict(self.outer), False))
        self._push_scope(self.tree.body)
        self.module_names = self.scopes[-1].names

    def run(self) -> list[Finding]:
        self._enter_module()
        for stmt in self.tree.body:
            if is_main_guard(stmt):
                self.facts.main_guard_line = stmt.lineno
        self.visit(self.tree)
        return self.findings

    def visit(self, node: ast.AST):  # type: ignore[override]
        self._stack.append(node)
        try:
            return super().visit(node)
        finally:
            self._stack.pop()

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

    def _visit_function(self, node: FunctionNode) -> None:
        bnb_test = False
        if not isinstance(node, ast.Lambda):
            for dec in node.decorator_list:
                self._check_decorator(dec)
                self.visit(dec)
            bnb_test = _needs_bitsandbytes(node.decorator_list)
        for default in (*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]):
            self.visit(default)
        body = node.body if isinstance(node.body, list) else [ast.Expr(node.body)]
        self._push_scope(body, _function_params(node))
        self._bnb_test_depth += bnb_test
        if isinstance(node.body, list):
            for stmt in node.body:
                self.visit(stmt)
        else:
            self.visit(node.body)
        self._bnb_test_depth -= bnb_test
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _visit_function  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for dec in node.decorator_list:
            self.visit(dec)
        for base in (*node.bases, *node.keywords):
            self.visit(base)
        bnb_test = _needs_bitsandbytes(node.decorator_list)
        self._push_scope(node.body, is_class=True)
        self._bnb_test_depth += bnb_test
        for stmt in node.body:
            self.visit(stmt)
        self._bnb_test_depth -= bnb_test
        self.scopes.pop()

    def _visit_comprehension(self, node: ast.AST) -> None:
        names: list[str] = []
        for gen in node.generators:  # type: ignore[attr-defined]
            names.extend(_target_names(gen.target))
        self.scopes.append(_Scope({n: None for n in names}))
        self.generic_visit(node)
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension  # type: ignore[assignment]

    def visit_Expr(self, node: ast.Expr) -> None:
        # A bare string statement is a docstring or a comment-like string: never a finding.
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return
        if isinstance(node.value, ast.JoinedStr):
            return
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        if _layout_only_on_cuda(node):
            self._kept_cuda_tests.add(id(node.test))
        aware = self._mentions_npu_chain(node)
        if not aware and self._visit_cuda_only(node):
            return
        self._visit_branch(node, aware)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        if _layout_only_on_cuda(node):
            self._kept_cuda_tests.add(id(node.test))
        aware = self._mentions_npu(node)
        if not aware and self._visit_cuda_only(node):
            return
        self._visit_branch(node, aware)

    def _visit_cuda_only(self, node: Union[ast.If, ast.IfExp]) -> bool:
        """In a device-agnostic port, `if device == "cuda": A else: B` keeps A for CUDA hosts: the
        device holds the run-time type, so A never runs on an NPU host, and the port does on
        every host what the original did there. The test is not a finding and nothing in A is
        broken on NPU (reported as information, like the arm an npu test keeps off the NPU).
        Returns False when this is not such a branch (visit it as any other)."""
        if not self._agnostic_module:
            return False
        body_is_cuda = _cuda_only_polarity(node.test)
        if body_is_cuda is None:
            return False
        self._kept_cuda_tests.add(id(node.test))
        self.visit(node.test)
        body = node.body if isinstance(node.body, list) else [node.body]
        orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
        for arm, cuda_only in ((body, body_is_cuda), (orelse, not body_is_cuda)):
            if cuda_only:
                self._cuda_only_nodes.add(id(node))
                self._npu_nodes.append(node)
                self._npu_depth += 1
                self._off_npu_depth += 1
            for child in arm:
                self.visit(child)
            if cuda_only:
                self._off_npu_depth -= 1
                self._npu_depth -= 1
                self._npu_nodes.pop()
        return True

    def _visit_branch(self, node: Union[ast.If, ast.IfExp], aware: bool) -> None:
        self._npu_depth += aware
        if aware:
            self._npu_nodes.append(node)
        # Which arm runs on the NPU, when the test itself says: `if device == "npu": A else: B`
        # never runs B there, so even what is broken on NPU (nccl, DataParallel) is harmless in B.
        polarity = _npu_polarity(node.test) if aware and self._npu_evidence(node.test, names=True) else None
        if polarity is None:
            self.generic_visit(node)
        else:
            self.visit(node.test)
            body = node.body if isinstance(node.body, list) else [node.body]
            orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
            for arm, off in ((body, not polarity), (orelse, polarity)):
                self._off_npu_depth += off
                for child in arm:
                    self.visit(child)
                self._off_npu_depth -= off
        if aware:
            self._npu_nodes.pop()
        self._npu_depth -= aware

    # ----------------------------------------------------------------- literals
    def _visit_literal(self, node: Union[ast.Dict, ast.Tuple, ast.List, ast.Set]) -> None:
        """A table or choice list that already names npu (`{"cuda": "nccl", "npu": "hccl"}`,
        `("cuda", "npu")`) is ready for Ascend: its strings are not findings."""
        items = [*(k for k in node.keys if k is not None), *node.values] if isinstance(node, ast.Dict) else node.elts
        strings = [i for i in items if _is_str(i)]
        table = any(NPU_ENTRY.match(i.value) for i in strings)  # type: ignore[attr-defined]
        if isinstance(node, ast.Dict):
            self._check_dict_entries([(k.value, v, k) for k, v in zip(node.keys, node.values)
                                      if k is not None and _is_str(k)])  # type: ignore[attr-defined]
        if table:
            self._handled.update(id(i) for i in strings)
        self._npu_table_depth += table
        self.generic_visit(node)
        self._npu_table_depth -= table

    visit_Dict = visit_Tuple = visit_List = visit_Set = _visit_literal  # type: ignore[assignment]

    def visit_Try(self, node: ast.Try) -> None:
        catches = _catches(node, ARCH_GUARD_EXCEPTIONS)
        import_guard = _catches(node, {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
        self._guard_depth += catches
        self._try_import_depth += import_guard
        for stmt in node.body:
            self.visit(stmt)
        self._guard_depth -= catches
        self._try_import_depth -= import_guard
        for item in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(item)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def _mentions_npu_chain(self, node: ast.If) -> bool:
        current: ast.AST = node
        while isinstance(current, ast.If):
            if self._mentions_npu(current.test):
                return True
            current = current.orelse[0] if len(current.orelse) == 1 else None  # type: ignore[assignment]
        return False

    def _mentions_npu(self, node: ast.AST) -> bool:
        """Does this test (or conditional expression) separate npu from other devices?

        Only that is evidence of a person's npu path. A choice list naming cuda and npu alike
        (`device in ("cuda", "npu")`, `startswith(("cuda", "npu"))`) and the device argument of
        an AMP object (`torch.amp.GradScaler("npu")`) run the same code on NPU as on CUDA; they
        are also what the transfer-style rewrite writes, so a re-scan of migrated code never
        takes the migrator's own edits for an npu branch.
        """
        test = node.test if isinstance(node, ast.IfExp) else node
        if self._npu_evidence(test, names=True):
            return True
        if isinstance(node, ast.IfExp):
            return self._npu_evidence(node.body, names=False) or self._npu_evidence(node.orelse, names=False)
        return False

    def _npu_evidence(self, root: ast.AST, names: bool) -> bool:
        """npu named in `root` other than beside cuda or as an AMP device argument.

        `names`: in a test, `x.npu`, `is_npu` and `torch_npu` count and an npu string may sit
        anywhere in a string; in the arms of a conditional expression only a string that starts
        with npu (the value chosen) counts.
        """
        same_as_cuda: set[int] = set()  # npu strings that do not separate npu from cuda
        for sub in ast.walk(root):  # breadth first: a collection or call comes before its items
            if isinstance(sub, ast.Constant):
                if isinstance(sub.value, str) and id(sub) not in same_as_cuda and (
                        "npu" in sub.value.lower() if names else sub.value.startswith("npu")):
                    return True
            elif isinstance(sub, (ast.Tuple, ast.List, ast.Set)):
                if any(_is_str(e) and e.value.startswith("cuda") for e in sub.elts):  # type: ignore[attr-defined]
                    same_as_cuda.update(id(e) for e in sub.elts)
            elif isinstance(sub, ast.Call):
                if sub.args and _is_str(sub.args[0]) and self.qualname(sub.func) in AMP_DEVICE_CALLS:
                    same_as_cuda.add(id(sub.args[0]))
            elif names and isinstance(sub, ast.Attribute):
                if sub.attr in ("npu", "is_npu"):
                    return True
            elif names and isinstance(sub, ast.Name):
                if sub.id in ("torch_npu", "is_npu", "npu"):
                    return True
        return False

    # ----------------------------------------------------------------- imports
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._note_import(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        self._note_import(node.module, node)
        for alias in node.names:
            self._note_import(f"{node.module}.{alias.name}", node, from_name=True)

    def _note_import(self, module: str, node: ast.AST, from_name: bool = False) -> None:
        if module == "torch_npu" or module.startswith("torch_npu."):
            self.facts.imports_torch_npu = True
            if module == "torch_npu.contrib.transfer_to_npu":
                self.facts.has_transfer_import = True
        if from_name:
            return
        top = module.split(".")[0]
        fw = self._framework_by_import.get(top)
        if fw is not None and fw.key not in self.facts.frameworks:
            self.facts.frameworks[fw.key] = node.lineno  # type: ignore[attr-defined]
        pkg = self._package_by_import.get(top)
        if pkg is not None:
            rule = self.kb.rule("PK002")
            guarded = self._try_import_depth > 0
            self.report(rule, node, top, detail=pkg.guidance + (" (import is guarded by try/except)" if guarded else ""),
                        severity="warning" if guarded else None)

    # ----------------------------------------------------------------- calls and messages
    def visit_Raise(self, node: ast.Raise) -> None:
        self._message_depth += 1
        self.generic_visit(node)
        self._message_depth -= 1

    def visit_Assert(self, node: ast.Assert) -> None:
        self.visit(node.test)
        if node.msg is not None:
            self._message_depth += 1
            self.visit(node.msg)
            self._message_depth -= 1

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        is_message = (isinstance(func, ast.Name) and func.id in MESSAGE_FUNCS) or (
            isinstance(func, ast.Attribute) and func.attr in MESSAGE_METHODS
            and self.qualname(func.value) not in ("torch", "torch.cuda")
        ) or self.qualname(func) == "warnings.warn"
        qual = self.qualname(func)
        if qual is not None:
            self._check_call(node, qual)
        if node.keywords or name_of_definer(func):
            self._check_setting_values(node)
        if isinstance(func, ast.Attribute) and qual is None:
            self._check_method_call(node, func)
            self._check_method_keywords(node, func)
        if node.keywords:
            self._check_scheduled_keywords(node, func, qual)
        if isinstance(func, ast.Name) and func.id == "dict" and self.lookup("dict") is None:
            self._check_dict_entries([(kw.arg, kw.value, kw) for kw in node.keywords if kw.arg])
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
            self._check_dynamic(node)
        if is_message:
            self.visit(func)
            self._message_depth += 1
            for arg in (*node.args, *node.keywords):
                self.visit(arg)
            self._message_depth -= 1
        else:
            self.generic_visit(node)

    # ----------------------------------------------------------------- qualified names
    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            qual = self.lookup(node.id)
            if qual is not None:
                self._check_qualname(node, qual)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if id(node) in self._handled:
            if id(node) in self._receivers:
                self.visit(node.value)  # `<receiver>.cuda(...)`: the receiver is code of its own
            return
        qual = self.qualname(node)
        if qual is not None:
            if self._check_qualname(node, qual):
                return
            self.generic_visit(node)
            return
        if node.attr == "is_cuda" and isinstance(node.ctx, ast.Load):
            self._check_is_cuda(node)
        elif node.attr in self._attr_rules:
            self.report(self._attr_rules[node.attr], node, self.seg(node))
        self._check_call_attribute(node)
        self.generic_visit(node)

    def _check_qualname(self, node: Union[ast.Name, ast.Attribute], qual: str) -> bool:
        """Match the longest prefix of `qual` that a rule knows; True when reported."""
        chain: list[tuple[ast.AST, str]] = []
        current: ast.AST = node
        current_qual = qual
        while True:
            chain.append((current, current_qual))
            if isinstance(current, ast.Attribute) and "." in current_qual:
                current = current.value
                current_qual = current_qual.rsplit(".", 1)[0]
            else:
                break
        for sub, sub_qual in chain:
            if id(sub) in self._handled:
                return True
            if self._report_qualname(sub, sub_qual):
                return True
        return False

    def _report_qualname(self, node: ast.AST, qual: str) -> bool:
        if qual in self._nccl_names:  # dist.Backend.NCCL is the string "nccl"
            self._report_nccl(node, "nccl", self.seg(node))
            return True
        version_rule = self._version_rules.get(qual)
        if version_rule is not None:
            self._report_cuda_version(version_rule, node, qual)
            return True
        entry = self.kb.cuda_names.get(qual)
        if entry is not None:
            rule = self.kb.rule(entry.rule)
            if rule.match["kind"] not in ("cuda-table", "qualname"):
                rule = self.kb.rule("CU001" if entry.transfer != "none" else "CU002")
            if rule.match["kind"] == "qualname" and rule.id in ("CU101",):
                self._report_capability(rule, node, qual)
                return True
            transfer = self._transfer_of(qual, entry.transfer)
            if rule.id == "CU001" and transfer == "none":
                rule = self.kb.rule("CU002")
            elif rule.id == "CU002" and transfer != "none" and entry.transfer == "none":
                rule = self.kb.rule("CU001")
            fixes = self._cuda_table_fixes(rule, node, qual, entry) if self._room(rule, self.start(node)) else []
            suffix = f" (behaviour differs: see {entry.rule})" if entry.transfer == "partial" and rule.id == "CU001" else ""
            self.report(rule, node, qual, fixes=fixes, suffix=suffix)
            return True
        rule = self._qual_rules.get(qual)
        if rule is not None:
            if rule.id == "CU101":
                self._report_capability(rule, node, qual)
            elif rule.match.get("not_in_type_checks") and self._in_type_check(node):
                pass  # isinstance(model, DataParallel) only asks; it creates nothing
            elif rule.match.get("builds") and not self._builds_cuda(node, rule.match["builds"].get(qual)):
                pass  # a C++-only extension build works on any host
            elif qual in rule.match.get("when_options_on", {}) and not self._turns_option_on(
                    node, rule.match["when_options_on"][qual]):
                pass  # set_experimental_options({"auto_mixed_precision": False}) or other options
            elif rule.match.get("unless_args") and self._first_arg_in(node, rule.match["unless_args"]):
                pass  # the call turns the GPU setting off (`set_jit(False)`, a float32 policy)
            elif rule.match["kind"] == "float64" and self._sampler_weights_only(node):
                pass  # float64 weights a WeightedRandomSampler draws from on the CPU
            elif rule.match.get("arg_pattern"):
                self._report_if_arg_matches(rule, node, qual)
            elif rule.match.get("drop_statement"):
                self.report(rule, node, qual, fixes=self._drop_call_statement(rule, node))
            elif qual in rule.match.get("ports", {}):
                if isinstance(getattr(node, "ctx", None), ast.Load) and not isinstance(node, ast.Name):
                    pass  # reading the switch sets nothing (the ported line reads it back)
                else:
                    fixes = self._switch_port_fixes(rule, node, rule.match["ports"][qual])
                    if fixes is not None:  # None: the switch's npu counterpart already follows it
                        self.report(rule, node, qual, fixes=fixes)
            else:
                self.report(rule, node, qual)
            return True
        for prefix, prefix_rule in self._prefix_rules:
            if qual == prefix or qual.startswith(prefix + "."):
                self.report(prefix_rule, node, qual)
                return True
        if self._private_rule is not None and qual.startswith("torch.cuda.") and self._report_private(node, qual):
            return True
        if qual.startswith("torch.cuda.") and not any(p.startswith("_") for p in qual.split(".")[2:]):
            parts = qual.split(".")
            # Only unknown *direct* names (attributes of known objects are covered above).
            if len(parts) == 3 or (len(parts) == 4 and f"torch.cuda.{parts[2]}" not in self.kb.cuda_names):
                self.report(self.kb.rule("CU002"), node, qual, confidence="medium")
                return True
        return False

    def _sampler_weights_only(self, node: ast.AST) -> bool:
        """`torch.DoubleTensor(w)` (or `torch.tensor(w, dtype=torch.double)`) whose value only
        becomes the weights of a `WeightedRandomSampler`, directly or through one local name
        bound once (its length may be read too): the sampler keeps its weights on the CPU (it converts them to float64
        itself) and draws indices there, so nothing float64 reaches the device."""
        call = self.parent(node)
        if isinstance(call, ast.keyword) and call.arg == "dtype":
            call = self.parent(call)
        elif not (isinstance(call, ast.Call) and call.func is node):
            return False
        if not isinstance(call, ast.Call):
            return False
        if _sampler_weights_argument(call, self.parent):
            return True
        holder = self.parent(call)
        if not (isinstance(holder, ast.Assign) and holder.value is call and len(holder.targets) == 1
                and isinstance(holder.targets[0], ast.Name)):
            return False
        name = holder.targets[0].id
        scope = next((n for n in reversed(self._stack)
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))), None)
        if scope is None:
            return False
        loads, stores = [], 0
        for n in ast.walk(scope):
            if isinstance(n, ast.Name) and n.id == name:
                if isinstance(n.ctx, ast.Load):
                    loads.append(n)
                else:
                    stores += 1
        def sized(n: ast.AST) -> bool:  # len(weights): the sampler's num_samples
            p = self.parent(n)
            return isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "len" and p.args == [n]
        feeds = [n for n in loads if _sampler_weights_argument(n, self.parent)]
        return stores == 1 and bool(feeds) and all(n in feeds or sized(n) for n in loads)

    def _drop_call_statement(self, rule: Rule, node: ast.AST) -> list[Fix]:
        """A call that is a statement of its own and does nothing on the NPU (`set_memory_growth(g, True)`)
        becomes `pass` (the statement may be the only one of its block)."""
        call = self.parent(node)
        if not (isinstance(call, ast.Call) and call.func is node):
            return []
        stmt = self.parent(call)
        if not (isinstance(stmt, ast.Expr) and stmt.value is call):
            return []
        return [self._fix(style, rule, [self._replace(stmt, "pass")], "drop the GPU-only call")
                for style in ("transfer", "agnostic") if rule.fix_kind(style) in ("safe", "unsafe")]

    def _switch_port_fixes(self, rule: Rule, node: ast.AST, port: dict) -> Optional[list[Fix]]:
        """A CUDA switch that the NPU ignores, set on a line of its own
        (`torch.backends.cudnn.deterministic = True`): insert after it, in each style, the
        statement that carries its intent on an NPU, run only on an NPU so that CUDA and CPU
        hosts do what the original did. The switch is read back rather than its value repeated
        (the value may be a call). [] when the assignment has another shape (a manual item);
        None when the inserted statement already follows (a ported file: nothing to report)."""
        stmt = self.parent(node)
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is node
                and isinstance(node, ast.Attribute)):
            return []
        torch = self.torch_name() or "torch"
        value = self.seg(node)
        when = port.get("when", "").format(value=value, torch=torch)
        then = port["then"].format(value=value, torch=torch)
        tests = {"transfer": f'hasattr({torch}, "npu")', "agnostic": f'{ACCEL_TYPE} == "npu"'}
        blocks = {style: (f"if {test} and {when}:" if when else f"if {test}:", then) for style, test in tests.items()}
        following = self._next_statement(stmt)
        if following is not None:
            seen = ast.dump(following)
            if any(seen == ast.dump(ast.parse(f"{head}\n    {body}").body[0]) for head, body in blocks.values()):
                return None
        start, end = self.start(stmt), self.end(stmt)
        lines = self.lines
        if end.line > len(lines) or start.line > len(lines):
            return []
        first, last = lines[start.line - 1], lines[end.line - 1]
        indent = first[:start.col]
        rest = last[end.col:].rstrip("\r\n")
        if indent.strip() or (rest.strip() and not rest.lstrip().startswith("#")) or self.cell is not None:
            return []  # shares its line with other code (`if x: a = 1`, `a = 1; b = 2`)
        newline = "\r\n" if last.endswith("\r\n") else "\n"
        step = "\t" if "\t" in indent else "    "
        at = Position(end.line, len(last.rstrip("\r\n")))
        fixes = []
        for style, (head, body) in blocks.items():
            text = f"{newline}{indent}{head}{newline}{indent}{step}{body}"
            requires = ("torch", "device_type") if style == "agnostic" else ("torch",)
            fixes.append(self._fix(style, rule, [Edit(at, at, text)], port["says"], requires=requires))
        return fixes

    def _next_statement(self, stmt: ast.stmt) -> Optional[ast.stmt]:
        """The statement right after `stmt` in its block, if any."""
        block = self.parent(stmt)
        for name in ("body", "orelse", "finalbody"):
            seq = getattr(block, name, None)
            if isinstance(seq, list):
                for i, s in enumerate(seq):
                    if s is stmt:
                        return seq[i + 1] if i + 1 < len(seq) else None
        return None

    def _report_if_arg_matches(self, rule: Rule, node: ast.AST, qual: str) -> None:
        """Calls whose first argument names the device kind (`tf.device("/GPU:0")`,
        `list_physical_devices("GPU")`): reported when a literal matches the rule's pattern, or,
        with medium confidence, when the argument is computed."""
        call = self.parent(node)
        if not (isinstance(call, ast.Call) and call.func is node):
            return
        arg = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg in ("device_type", "device_name", "device")), None)
        if arg is None:
            return
        if isinstance(arg, ast.Constant):
            if isinstance(arg.value, str) and re.search(rule.match["arg_pattern"], arg.value):
                self._claim_device_names(arg)
                self.report(rule, node, qual)
            return
        if isinstance(arg, ast.JoinedStr) and re.search(rule.match["arg_pattern"], self.seg(arg)):
            self._claim_device_names(arg)
            self.report(rule, node, qual)
            return
        self._claim_device_names(arg)
        self.report(rule, node, qual, confidence="medium")

    def _claim_device_names(self, arg: ast.AST) -> None:
        """The device names written in the argument of a reported pin (`tf.device("/gpu:0")`,
        `tf.device("/gpu:%d" % i)`) are that pin's finding, not findings of their own."""
        for sub in ast.walk(arg):  # the text parts of an f-string are constants too
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value[:1] in DEVICE_NAME_STARTS:
                self._handled.add(id(sub))

    def _transfer_of(self, qual: str, default: str) -> str:
        cov = self.coverage
        if cov is None:
            return default
        try:
            overlaid = cov.cuda_overlaid(qual[len("torch.cuda."):])  # type: ignore[attr-defined]
        except Exception:
            return default
        if overlaid is None:
            return default
        if default == "partial":
            return "partial" if overlaid else "none"
        return "auto" if overlaid else "none"

    # ----------------------------------------------------------------- specific rules
    def _in_guard(self, node: ast.AST) -> bool:
        """Is this expression already protected against a None/absent capability?"""
        if self._guard_depth:
            return True
        return self._in_expression_guard(node)

    def _in_expression_guard(self, node: ast.AST) -> bool:
        """`query() or default`, `query() if cond else default`: the None is handled in place."""
        parent = self.parent(node)
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.Or) and parent.values[0] is node:
            return True
        if isinstance(parent, ast.IfExp) and parent.body is node:
            return True
        return False

    def _report_swallowed(self, node: ast.AST, symbol: str) -> None:
        """A capability query whose failure on NPU a surrounding except turns into 'feature off'."""
        if self._swallowed_rule is None or not self._guard_depth or self._in_expression_guard(node):
            return
        self.report(self._swallowed_rule, node, symbol)

    def _report_capability(self, rule: Rule, node: ast.AST, qual: str) -> None:
        parent = self.parent(node)
        call = parent if isinstance(parent, ast.Call) and parent.func is node else None
        target = call or node
        self._handled.add(id(node))
        if call is not None and self._in_guard(call):
            self._report_swallowed(call, qual)
            return
        fixes: list[Fix] = []
        gate = self._bf16_gate(call) if call is not None else None
        if gate is not None:
            compare, newer = gate
            if newer is None:
                return  # the port's own per-build gate: as guarded as `query() if torch.version.cuda else ...`
            fixes += self._bf16_gate_fixes(rule, compare, newer)
        elif call is not None:
            text = self.seg(call)
            fixes.append(self._fix("transfer", rule, [self._replace(call, f"({text} or (0, 0))")],
                                   "fall back to (0, 0) when the NPU reports no capability"))
            fixes.append(self._fix("agnostic", rule, [self._replace(call, f"({text} if torch.version.cuda else (0, 0))")],
                                   "query the capability only on CUDA builds", requires=("torch",)))
        self.report(rule, target, qual, fixes=fixes)  # the call's arguments are visited with the call

    def _bf16_gate(self, query: ast.AST) -> Optional[tuple[ast.Compare, Optional[bool]]]:
        """`get_device_capability()[0] >= 8` (or `>= (8, 0)`, `< 8`, ...) where the answer picks
        bf16 or fp16: the comparison, and whether it holds on the newer (bf16) devices (None for
        a gate the agnostic style already split per build: nothing left to do). None for any
        other use of the query."""
        parent = self.parent(query)
        operand: ast.AST = query
        if isinstance(parent, ast.Subscript) and _literal_in(parent.slice, (0,)):
            operand, parent = parent, self.parent(parent)
            thresholds = {(ast.GtE, 8): True, (ast.Gt, 7): True, (ast.Lt, 8): False, (ast.LtE, 7): False}
        else:
            thresholds = {(ast.GtE, (8, 0)): True, (ast.GtE, (8,)): True,
                          (ast.Lt, (8, 0)): False, (ast.Lt, (8,)): False}
        if not (isinstance(parent, ast.Compare) and len(parent.ops) == 1):
            return None
        op = type(parent.ops[0])
        if parent.left is operand:
            other = parent.comparators[0]
        else:
            other = parent.left
            op = {ast.GtE: ast.LtE, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.Lt: ast.Gt}.get(op, op)
        try:
            bound = ast.literal_eval(other)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        newer = thresholds.get((op, bound)) if isinstance(bound, (int, tuple)) else None
        if newer is None:
            return None
        # Up through `and`/`or`/`not` to where the answer is used.
        used: ast.AST = parent
        site = self.parent(used)
        while isinstance(site, ast.BoolOp) or (isinstance(site, ast.UnaryOp) and isinstance(site.op, ast.Not)):
            used, site = site, self.parent(site)
        if isinstance(site, ast.IfExp) and site.body is used and self.qualname(site.test) == "torch.version.cuda":
            return parent, None  # already asked per build
        if isinstance(site, ast.IfExp) and site.test is used:
            chooses = _names_precision(site.body) or _names_precision(site.orelse)
        elif isinstance(site, ast.If) and site.test is used:
            chooses = any(_names_precision(stmt) for stmt in (*site.body, *site.orelse))
        elif isinstance(site, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and site.value is used:
            targets = site.targets if isinstance(site, ast.Assign) else [site.target]
            chooses = any(_names_precision(t) for t in targets)
        elif isinstance(site, ast.keyword) and site.arg:
            chooses = bool(PRECISION_WORD.search(site.arg))
        else:
            chooses = False
        return (parent, newer) if chooses else None

    def _bf16_gate_fixes(self, rule: Rule, compare: ast.Compare, newer: bool) -> list[Fix]:
        """Ask the device whether it supports bf16 instead of reading CUDA's compute capability,
        which an NPU does not have (the fallback to (0, 0) would pick fp16 on a 910B)."""
        transfer = f"{self._torch_prefixed('torch.cuda.is_bf16_supported')}()"  # torch.npu's under transfer_to_npu
        module = f"{self._torch_prefixed('torch.get_device_module')}({ACCEL_TYPE})"
        agnostic = f"{ACCEL_TYPE} is not None and getattr({module}, \"is_bf16_supported\", lambda: False)()"
        if not newer:
            transfer, agnostic = f"not {transfer}", f"not ({agnostic})"
        parent = self.parent(compare)
        if not isinstance(parent, (ast.IfExp, ast.If, ast.Assign, ast.AnnAssign, ast.keyword, ast.BoolOp, ast.UnaryOp)):
            transfer = f"({transfer})"
        cuda_build = self._torch_prefixed("torch.version.cuda")
        return [self._fix("transfer", rule, [self._replace(compare, transfer)],
                          "ask the device whether it supports bf16 (the query reports no capability on NPU)"),
                self._fix("agnostic", rule,
                          [self._replace(compare, f"({self.seg(compare)} if {cuda_build} else {agnostic})")],
                          "keep the capability test on CUDA builds; elsewhere ask the accelerator whether it"
                          " supports bf16", requires=("torch", "device_type", "torch>=2.4"))]

    def _check_call_attribute(self, node: ast.Attribute) -> None:
        for rule in self.kb.rules_of_kind("call-attribute"):
            if node.attr not in rule.match["attributes"] or not isinstance(node.value, ast.Call):
                continue
            qual = self.qualname(node.value.func)
            if qual not in rule.match["names"]:
                continue
            self._handled.add(id(node.value.func))
            if not isinstance(node.ctx, ast.Load):
                return
            if self._in_guard(node):
                self._report_swallowed(node, f"{qual}().{node.attr}")
                return
            fixes: list[Fix] = []
            if node.attr in rule.match.get("fixable", ()):
                text = self.seg(node)
                fixes.append(self._fix("transfer", rule, [self._replace(node, f"({text} or 0)")],
                                       "treat a missing architecture number as 0"))
                fixes.append(self._fix("agnostic", rule, [self._replace(node, f"({text} if torch.version.cuda else 0)")],
                                       "read architecture numbers only on CUDA builds", requires=("torch",)))
            self.report(rule, node, f"{qual}().{node.attr}", fixes=fixes, attribute=node.attr)
            return

    def _check_call(self, node: ast.Call, qual: str) -> None:
        kb = self.kb
        for rule in kb.rules_of_kind("keyword"):
            if qual in rule.match["names"]:
                self._check_keywords(rule, node, qual)
        for rule in kb.rules_of_kind("positional-count"):
            if qual in rule.match["names"] and len(node.args) >= rule.match["min_args"]:
                self.report(rule, node, qual, count=str(len(node.args)))
        for rule in kb.rules_of_kind("first-arg-device"):
            if qual in rule.match["names"]:
                self._check_first_arg_device(rule, node, qual)
        for rule in kb.rules_of_kind("resource-key"):
            if qual in rule.match["names"]:
                self._check_resource_key(rule, node, qual)
        for rule in kb.rules_of_kind("device-ids"):
            if qual in rule.match["names"]:
                self._check_device_ids(rule, node, qual)
        for rule in kb.rules_of_kind("path-argument"):
            if qual in rule.match["names"]:
                self._check_path_argument(rule, node, qual)
        hit = self._prefix_keywords.get(qual)
        if hit is not None:
            keyword, rule = hit
            for kw in node.keywords:
                if kw.arg == keyword and not (isinstance(kw.value, ast.Constant) and not kw.value.value):
                    self.report(rule, kw, f"{qual}({keyword}=...)")

    def _check_path_argument(self, rule: Rule, node: ast.Call, qual: str) -> None:
        """`torch.load("ckpt/cuda_run.pt")`: transfer_to_npu's wrapper of torch.load (and
        from_file) replaces "cuda" with "npu" in every positional str argument, the file name
        included, so the port opens another file. A pathlib.Path is not a str: the wrapper leaves
        it alone and torch opens the same file. Device strings (`map_location` given as "cuda:0")
        are what the wrapper is for, and are left as they are."""
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                text = arg.value
            elif isinstance(arg, ast.JoinedStr):
                text = "".join(v.value for v in arg.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            else:
                continue
            if "cuda" not in text or DEVICE_STRING.fullmatch(text):
                continue
            if self.lookup("pathlib") == "pathlib":
                path, requires = "pathlib.Path", ()
            else:
                bound = next((name for scope in reversed(self.scopes) for name, q in scope.names.items()
                              if q == "pathlib.Path" and self.lookup(name) == "pathlib.Path"), None)
                path, requires = (bound, ()) if bound else ("pathlib.Path", ("pathlib",))
            fix = self._fix("transfer", rule, [Edit(self.start(arg), self.start(arg), f"{path}("),
                                               Edit(self.end(arg), self.end(arg), ")")],
                            "pass the path as a pathlib.Path, which transfer_to_npu leaves as it is",
                            requires=requires)
            self._claim_device_names(arg)
            self.report(rule, arg, qual, fixes=[fix])

    def _check_device_ids(self, rule: Rule, node: ast.Call, qual: str) -> None:
        """`DistributedDataParallel(model, device_ids=[rank])`: right wherever the original ran
        (its module was on a CUDA device), but a device-agnostic port that falls back to the CPU
        must pass None there. The agnostic fix passes the value only when there is an accelerator;
        a value that is None, or already chosen on `_accel_type`, is left alone."""
        positions: dict[str, int] = rule.match.get("positions", {})
        given: list[tuple[str, ast.AST]] = [(kw.arg, kw.value) for kw in node.keywords if kw.arg in positions]
        given += [(name, node.args[at]) for name, at in positions.items()
                  if at < len(node.args) and not isinstance(node.args[at], ast.Starred)]
        given = [(name, value) for name, value in given
                 if not (_literal_in(value, (None,)) or _chooses_on_accelerator(value) or _none_in_a_branch(value))]
        if not given:
            return
        edits: list[Edit] = []
        for _, value in given:
            low = isinstance(value, (ast.IfExp, ast.Lambda, ast.NamedExpr))  # would bind to our `if`
            edits += [Edit(self.start(value), self.start(value), "((" if low else "("),
                      Edit(self.end(value), self.end(value), (")" if low else "") + f" if {ACCEL_TYPE} else None)")]
        names = [name for name, _ in sorted(given, key=lambda g: positions[g[0]])]
        fix = self._fix("agnostic", rule, edits, f"pass {' and '.join(names)} only on an accelerator",
                        requires=("device_type",))
        self.report(rule, given[0][1], qual, fixes=[fix], keyword=", ".join(f"{n}=..." for n in names))

    # ----------------------------------------------------------------- idioms
    def _report_private(self, node: ast.AST, qual: str) -> bool:
        """torch.cuda._lazy_call and friends: reported at the longest name ending in a private
        component (torch.cuda._utils._get_device_index, not torch.cuda._utils)."""
        rule = self._private_rule
        assert rule is not None
        parts = qual.split(".")
        rel = ".".join(parts[2:])
        npu_names = rule.match.get("npu_names", {})
        if rel in rule.match.get("redirected", ()):
            self.report(self.kb.rule("CU001"), node, qual)
            return True
        private = [i for i, p in enumerate(parts) if i >= 2 and p.startswith("_") and not p.startswith("__")]
        if not private:
            return False
        if rel not in npu_names and private[-1] != len(parts) - 1:
            return False  # reported at the shorter name that ends in the private component
        npu = npu_names.get(rel)
        suffix = f"; on NPU use {npu}" if npu else "; it has no torch_npu twin"
        self.report(rule, node, qual, suffix=suffix, confidence=None if npu else "medium")
        return True

    def _in_type_check(self, node: ast.AST) -> bool:
        """Is `node` the class argument of isinstance/issubclass (alone or in a tuple)?"""
        parent = self.parent(node)
        if isinstance(parent, ast.Tuple):
            node, parent = parent, self.parent(parent)
        return (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in TYPE_CHECKS
                and len(parent.args) == 2 and parent.args[1] is node)

    def _builds_cuda(self, node: ast.AST, spec: Optional[dict]) -> bool:
        """Whether an extension build call compiles CUDA code. Unknown (not a call, sources not
        literal) counts as yes. `spec`: {argument, position, suffixes} of the argument holding
        CUDA sources (for load_inline) or all sources (for load, checked by suffix)."""
        call = self.parent(node)
        if spec is not None and isinstance(node, ast.Name) and node.id in self._alias_names and not (
                isinstance(call, ast.Call) and call.func is node):
            return False  # `build = load_inline` was reported where the alias was made
        if spec is None or not (isinstance(call, ast.Call) and call.func is node):
            return True
        for kw in call.keywords:
            if kw.arg == "with_cuda" and isinstance(kw.value, ast.Constant):
                return bool(kw.value.value)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return True
        value = next((k.value for k in call.keywords if k.arg == spec["argument"]), None)
        if value is None and len(call.args) > spec["position"]:
            value = call.args[spec["position"]]
        suffixes = tuple(spec.get("suffixes", ()))
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return False
        if isinstance(value, (ast.List, ast.Tuple)):
            if not suffixes:
                return bool(value.elts)
            if all(_is_str(e) for e in value.elts):
                return any(e.value.endswith(suffixes) for e in value.elts)  # type: ignore[attr-defined]
            return True
        if suffixes and _is_str(value):
            return value.value.endswith(suffixes)  # type: ignore[attr-defined]
        return True

    def _report_cuda_version(self, rule: Rule, node: ast.AST, qual: str) -> None:
        """torch.version.cuda: None on NPU builds. Not reported in messages, nor as the test of a
        branch that only keeps CUDA-only calls off (the guard the capability fixes write)."""
        line = self.start(node).line
        if self._message_depth or line in self._version_lines:
            return
        if isinstance(node, ast.Name) and node.id in self._alias_names:
            return  # `v = torch.version.cuda` is reported where it is assigned, not at each use
        if not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            return
        guarded = self._guarded_branch(node)
        if guarded is not None and self._only_cuda_only(guarded):
            return
        self._version_lines.add(line)
        self.report(rule, node, qual)

    def _guarded_branch(self, node: ast.AST) -> Optional[list]:
        """The body of the if / conditional expression whose test contains `node`."""
        stack = self._stack
        for i in range(len(stack) - 2, -1, -1):
            anc = stack[i]
            if isinstance(anc, (ast.If, ast.IfExp)) and stack[i + 1] is anc.test:
                return anc.body if isinstance(anc.body, list) else [anc.body]
        return None

    def _only_cuda_only(self, nodes: list) -> bool:
        """Do these statements/expressions use CUDA-only APIs, and no API transfer_to_npu maps?"""
        found = False
        for root in nodes:
            for sub in ast.walk(root):
                if not isinstance(sub, (ast.Attribute, ast.Name)):
                    continue
                qual = self.qualname(sub)
                if not qual or qual in ("torch.cuda", "torch.backends"):
                    continue
                if qual.startswith(("torch.backends.cuda", "torch.backends.cudnn")):
                    found = True
                elif qual.startswith("torch.cuda."):
                    entry = self.kb.cuda_names.get(qual)
                    if any(p.startswith("_") for p in qual.split(".")[2:]):
                        found = True
                    elif entry is not None:
                        if entry.transfer == "auto" and entry.rule == "CU001":
                            return False
                        found = True
        return found

    def _check_keywords(self, rule: Rule, node: ast.Call, qual: str) -> None:
        wanted = rule.match["keywords"]
        allowed = rule.match.get("unless_values", ())
        bad = [kw for kw in node.keywords if kw.arg in wanted and not _literal_in(kw.value, allowed)]
        if not bad:
            return
        ordered = [kw.arg for kw in node.keywords if kw.arg in wanted]
        in_order = ordered == [k for k in wanted if k in ordered] and node.keywords[: len(bad)] == bad
        for kw in bad:
            fixes: list[Fix] = []
            if rule.fix_kind("transfer") != "manual" and in_order:
                edit = Edit(self.start(kw), self.start(kw.value), "")
                fixes = [self._fix(style, rule, [edit], f"pass `{kw.arg}` positionally") for style in ("transfer", "agnostic")]
            self.report(rule, kw, qual, fixes=fixes, keyword=kw.arg or "")

    def _first_arg_in(self, node: ast.AST, values: Iterable[object]) -> bool:
        """Is the first argument of the call around `node` one of the literal `values`?"""
        call = self.parent(node)
        if not (isinstance(call, ast.Call) and call.func is node):
            return False
        arg = call.args[0] if call.args else (call.keywords[0].value if call.keywords else None)
        return _literal_in(arg, values)

    def _turns_option_on(self, node: ast.AST, options: Iterable[str]) -> bool:
        """Does the call around `node` pass a literal dict that sets one of `options` to anything
        but False/None (`set_experimental_options({"auto_mixed_precision": True})`)? A dict built
        elsewhere says nothing the scan can read, so it does not count."""
        call = self.parent(node)
        if not (isinstance(call, ast.Call) and call.func is node):
            return False
        arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "options"), None)
        if not isinstance(arg, ast.Dict):
            return False
        return any(isinstance(key, ast.Constant) and key.value in options and not _literal_in(value, (False, None))
                   for key, value in zip(arg.keys, arg.values))

    def _setting_rules_here(self) -> list[Rule]:
        return [rule for rule in self.kb.rules_of_kind("config-value")
                if any(self._imports_module(m) for m in rule.match.get("in_modules_importing", ()))]

    def _check_setting_values(self, node: ast.Call) -> None:
        """config-value rules in Python: a config key passed as a keyword argument
        (`get_distribution_strategy(distribution_strategy="mirrored", all_reduce_alg="nccl")`) or
        defined as an absl flag with that default (`flags.DEFINE_string("distribution_strategy",
        "mirrored", ...)`), with a literal value the rule reports. The value is claimed, so the
        generic nccl finding does not also offer its `hccl` rewrite for it."""
        rules = self._setting_rules_here()
        if not rules:
            return
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        pairs: list[tuple[str, ast.AST, ast.AST, str]] = []
        if name.startswith("DEFINE_"):
            key = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            default = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "default"), None)
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and default is not None:
                pairs.append((key.value, default, default, f"--{key.value} default"))
        else:
            pairs += [(kw.arg, kw.value, kw, kw.arg) for kw in node.keywords if kw.arg]
            # a dataclass field's default (`optim: str = field(default="paged_adamw_32bit")`): the
            # option a HfArgumentParser builds from the field's name
            owner = self.parent(node)
            if name == "field" and isinstance(owner, ast.AnnAssign) and owner.value is node \
                    and isinstance(owner.target, ast.Name):
                default = next((k.value for k in node.keywords if k.arg == "default"), None)
                if default is not None:
                    pairs.append((owner.target.id, default, default, f"{owner.target.id} default"))
        for rule in rules:
            keys = rule.match["keys"]
            for key, value, where, label in pairs:
                spec = keys.get(key)
                if spec is None or not isinstance(value, ast.Constant) or value.value is None:
                    continue
                if re.fullmatch(spec["values"], str(value.value)):
                    self._handled.add(id(value))
                    new = (spec.get("replace") or {}).get("python")
                    fixes = [self._fix(style, rule, [self._replace(value, new)], f"set {key} to {new}")
                             for style in ("transfer", "agnostic") if rule.fix_kind(style) == "safe"] if new else []
                    self.report(rule, where, f"{label}={value.value!r}", fixes=fixes, detail=spec["note"])

    def _imports_module(self, top: str) -> bool:
        """Does this module import `top` (or a submodule of it) anywhere?

        Method and dict-entry keywords (`model.compile(jit_compile=True)`, `{"GPU": 1}`) are only
        meaningful for one library; a rule names the libraries whose import makes them so."""
        cache = self.__dict__.setdefault("_imports_cache", {})
        if top not in cache:
            cache[top] = import_line_pattern(top).search(self._source_text) is not None
        return cache[top]

    def _keyword_rules_here(self) -> list[Rule]:
        """Keyword rules whose library this module imports (decided once per module: this runs
        for every dict, keyword call and method call of the file)."""
        held = self.__dict__.get("_keyword_rules_cache")
        if held is None:
            held = self.__dict__["_keyword_rules_cache"] = [
                rule for rule in self.kb.rules_of_kind("keyword")
                if any(self._imports_module(m) for m in rule.match.get("in_modules_importing", ()))]
        return held

    def _check_method_keywords(self, node: ast.Call, func: ast.Attribute) -> None:
        """Keyword rules on methods of objects the scan cannot name (`model.compile(...)`,
        `Actor.options(num_gpus=1)`), in modules that import the rule's library."""
        for rule in self._keyword_rules_here():
            if func.attr in rule.match.get("methods", ()):
                self._check_keywords(rule, node, f".{func.attr}")

    def _check_scheduled_keywords(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        """Keyword rules on calls no name or method of theirs selects, when the call also carries
        one of the rule's scheduling keywords: `make_worker(placement_group=pg, num_gpus=n)`
        forwards both to Ray, while `throughput(num_gpus=n)` is any function's parameter."""
        for rule in self._keyword_rules_here():
            companions = rule.match.get("with_scheduling_keywords", ())
            if not companions or (qual is not None and qual in rule.match["names"]):
                continue
            if isinstance(func, ast.Attribute) and qual is None and func.attr in rule.match.get("methods", ()):
                continue  # `.options(...)`: the method check has it
            if any(kw.arg in companions for kw in node.keywords):
                label = func.id if isinstance(func, ast.Name) else \
                    f".{func.attr}" if isinstance(func, ast.Attribute) else self.seg(func)[:40]
                self._check_keywords(rule, node, label)

    def _check_resource_key(self, rule: Rule, table: ast.Call, qual: str) -> None:
        """A call that returns a resource table (`ray.available_resources()`), read for one of the
        rule's entries by name: `table.get("GPU", 0)` or `table["GPU"]`. Decided from the call
        the rule names, so other subscripts and `.get` calls cost nothing."""
        parent = self.parent(table)
        if isinstance(parent, ast.Subscript) and parent.value is table and isinstance(parent.ctx, ast.Load):
            node, key, shown = parent, parent.slice, "[{}]"
        elif isinstance(parent, ast.Attribute) and parent.attr == "get" and parent.value is table:
            call = self.parent(parent)
            if not (isinstance(call, ast.Call) and call.func is parent and call.args):
                return
            node, key, shown = call, call.args[0], ".get({})"
        else:
            return
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value in rule.match["keys"]:
            self.report(rule, node, f"{qual}()" + shown.format(f'"{key.value}"'))

    def _check_dict_entries(self, entries: list[tuple[str, ast.AST, ast.AST]]) -> None:
        """Keyword rules whose settings also travel in dicts (`{"quantization": "awq"}`,
        `dict(num_gpus=1)`, a Ray bundle `{"GPU": 1}`): a literal value is needed, since a dict
        entry is read only for what it says, not for how a call uses it, unless the key itself
        is the setting (`dict_keys_any_value`: `{"GPU": per_worker}` asks Ray for GPUs)."""
        for rule in self._keyword_rules_here():
            keys = rule.match.get("dict_keys", ())
            any_value = rule.match.get("dict_keys_any_value", ())
            allowed = rule.match.get("unless_values", ())
            for key, value, node in entries:
                if key not in keys:
                    continue
                if isinstance(value, ast.Constant):
                    if value.value is not None and not _literal_in(value, allowed):
                        self.report(rule, node, f'{{"{key}": ...}}', keyword=key)
                elif key in any_value:
                    self.report(rule, node, f'{{"{key}": ...}}', keyword=key)

    def _check_first_arg_device(self, rule: Rule, node: ast.Call, qual: str) -> None:
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "device"), None)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and CUDA_DEVICE.match(arg.value):
            self._handled.add(id(arg))
            quote = self.seg(arg)[0] if self.seg(arg)[:1] in "\"'" else '"'
            fixes = [
                self._fix("transfer", rule, [self._replace(arg, f"{quote}npu{quote}")], "use the npu device type"),
                self._fix("agnostic", rule, [self._replace(arg, self._cuda_or_accel() if arg.value == "cuda" else DEVICE_TYPE)],
                          "use the accelerator type (still cuda without one)", requires=("device_type",)),
            ]
            self.report(rule, node, qual, fixes=fixes)

    def _cuda_table_fixes(self, rule: Rule, node: ast.AST, qual: str, entry) -> list[Fix]:
        parent = self.parent(node)
        call = parent if isinstance(parent, ast.Call) and parent.func is node else None
        fixes: list[Fix] = []
        replace = rule.match.get("replace")
        if replace:
            fixes.append(self._fix("transfer", rule, [self._replace(node, self._torch_prefixed(replace))],
                                   f"use {replace}", requires=("torch",)))
        call_replace = rule.match.get("call_replace")
        if call_replace and call is not None:
            target = "autocast" if call_replace == "autocast" else "amp.GradScaler"
            positional = target == "autocast" and call.args  # torch.autocast orders them differently
            if positional and (len(call.args) > len(AUTOCAST_CUDA_PARAMS)
                               or any(isinstance(a, ast.Starred) for a in call.args)):
                return fixes
            for style, device in (("transfer", '"npu"'), ("agnostic", self._cuda_or_accel())):
                edits = [self._replace(node, self._torch_prefixed(f"torch.{target}"))]
                first = _first_arg_start(call, self)
                if first is None:
                    close = _call_close(self, call)
                    edits.append(Edit(close, close, device))
                elif positional:
                    for i, arg in enumerate(call.args):
                        at = self.start(arg)
                        edits.append(Edit(at, at, (device + ", " if i == 0 else "") + AUTOCAST_CUDA_PARAMS[i] + "="))
                else:
                    edits.append(Edit(first, first, device + ", "))
                requires = ("torch", "device_type") if style == "agnostic" else ("torch",)
                how = ("with the accelerator type (off without one, as on CUDA)" if style == "agnostic"
                       else "with the device type")
                fixes.append(self._fix(style, rule, edits, f"use torch.{target} {how}", requires=requires))
        elif rule.id == "AM003" and entry.agnostic:
            edits = self._custom_amp_edits(node, call, entry.agnostic)
            if edits:
                fixes.append(self._fix("agnostic", rule, edits,
                                       f"use {entry.agnostic} with the accelerator type (cuda without one, as before; "
                                       f"torch >= {entry.since})",
                                       requires=("torch", "device_type", f"torch>={entry.since}")))
        elif rule.id == "CU001" and entry.agnostic == "keep":
            # Harmless everywhere (a lazy no-op without CUDA): nothing to change.
            fixes.append(Fix(style="agnostic", edits=(), safety="none", description="harmless on every device"))
        elif rule.id == "CU001" and entry.agnostic and entry.idle and call is not None:
            # Without an accelerator the original call does nothing (or nothing useful): guard it.
            fixes.append(self._fix("agnostic", rule, self._guarded(call, node, self._torch_prefixed(entry.agnostic), entry.idle),
                                   f"use {entry.agnostic} when there is an accelerator (torch >= {entry.since})",
                                   requires=("torch", "device_type", f"torch>={entry.since}")))
        elif rule.id == "CU001" and entry.agnostic and not entry.idle:
            fixes.append(self._fix("agnostic", rule, [self._replace(node, self._torch_prefixed(entry.agnostic))],
                                   f"use {entry.agnostic} (torch >= {entry.since})", requires=("torch", f"torch>={entry.since}")))
        if rule.id == "CU001" and entry.agnostic != "keep" and "." not in entry.name:
            # Fallback for older torch floors: the device module has the same function. Without an
            # accelerator it is torch.cuda itself, so the call behaves as in the original.
            if entry.idle and call is not None:
                module = f"{self._torch_prefixed('torch.get_device_module')}({ACCEL_TYPE})"
                edits = self._guarded(call, node, f"{module}.{entry.name}", entry.idle)
            elif entry.idle and not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
                edits = None
            else:
                # Also a function handed on uncalled (`fn = torch.cuda.synchronize if ... else ...`):
                # whoever calls it later gets the accelerator's function, torch.cuda's without one.
                module = f"{self._torch_prefixed('torch.get_device_module')}({self._cuda_or_accel()})"
                edits = [self._replace(node, f"{module}.{entry.name}")]
            if edits:
                fixes.append(self._fix("agnostic", rule, edits,
                                       "use the device module of the accelerator (torch >= 2.4)",
                                       requires=("torch", "device_type", "torch>=2.4")))
        return fixes

    def _custom_amp_edits(self, node: ast.AST, call: Optional[ast.Call], agnostic: str) -> Optional[list[Edit]]:
        """`@torch.cuda.amp.custom_fwd` / `(cast_inputs=...)` -> `@torch.amp.custom_fwd(device_type=...)`
        (`custom_bwd` alike). The device type is the accelerator's, "cuda" without one: the
        decorator then consults CUDA autocast exactly as the original did. Only the decorator
        itself, or a call of it, is rewritten: an alias handed around may be called either way."""
        device = f"device_type={self._cuda_or_accel()}"
        new = self._torch_prefixed(agnostic)
        if call is not None:
            edits = [self._replace(node, new)]
            if call.keywords:
                at = self.start(call.keywords[0])
                edits.append(Edit(at, at, device + ", "))
            elif call.args:
                at = self.end(call.args[-1])
                edits.append(Edit(at, at, ", " + device))
            else:
                close = _call_close(self, call)
                edits.append(Edit(close, close, device))
            return edits
        parent = self.parent(node)
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(d is node for d in parent.decorator_list):
            return [self._replace(node, f"{new}({device})")]
        return None

    def _guarded(self, call: ast.Call, func: ast.AST, replacement: str, idle: str) -> list[Edit]:
        """`f(args)` -> `new(args) if _accel_type else IDLE`, as separate edits so that fixes inside
        the arguments still apply; parenthesised unless the call is a statement of its own."""
        parent = self.parent(call)
        bare = isinstance(parent, (ast.Expr, ast.Assign, ast.Return)) and parent.value is call
        start, end = self.start(call), self.end(call)
        edits = [self._replace(func, replacement), Edit(end, end, f" if {ACCEL_TYPE} else {idle}" + ("" if bare else ")"))]
        if not bare:
            edits.insert(0, Edit(start, start, "("))
        return edits

    def _cuda_or_accel(self) -> str:
        """`_accel_type or "cuda"`, quoted so that it also fits inside an f-string being visited
        (before Python 3.12 a replacement field cannot reuse the f-string's quote)."""
        for node in reversed(self._stack):
            if isinstance(node, ast.JoinedStr):
                text = self.seg(node).lstrip("rRbBfFuU")
                if text[:1] == '"':
                    return CUDA_OR_ACCEL.replace('"', "'")
                break
        return CUDA_OR_ACCEL

    def _torch_prefixed(self, qual: str) -> str:
        name = self.torch_name() or "torch"
        return name + qual[len("torch"):] if qual.startswith("torch") else qual

    def _check_decorator(self, dec: ast.AST) -> None:
        target = dec.func if isinstance(dec, ast.Call) else dec
        qual = self.qualname(target)
        for rule in self.kb.rules_of_kind("decorator"):
            if qual in rule.match["names"]:
                self.report(rule, dec, qual)

    def _check_method_call(self, node: ast.Call, func: ast.Attribute) -> None:
        rule = self._method_rules.get(func.attr)
        if rule is None:
            return
        if rule.match["kind"] == "method-call":
            self._handled.add(id(func))
            self._receivers.add(id(func))
            fixes = []
            attr_start = Position(self.end(func).line, self.end(func).col - len("cuda"))
            edits = self._cuda_method_edits(node, func, attr_start) if self._room(rule, attr_start) else None
            if edits is not None:
                fixes.append(self._fix("agnostic", rule, edits, "move to the run-time device",
                                       requires=("torch", "device_type")))
            self.report(rule, node, ".cuda()", fixes=fixes, start=attr_start)
        elif not node.args and not node.keywords:
            self.report(rule, node, f".{func.attr}()",
                        start=Position(self.end(func).line, self.end(func).col - len(func.attr)))

    def _cuda_method_edits(self, node: ast.Call, func: ast.Attribute, attr_start: Position) -> Optional[list[Edit]]:
        """`.cuda(...)` -> `.to(...)` as small edits (the arguments stay, so fixes inside them apply).

        No device: the run-time device. An int literal: that index of the run-time device. Any
        other value may be an int, a torch.device or a string (all of which `.to` accepts the way
        `.cuda` does, an int naming the accelerator) or None (`.cuda(None)` is the current device,
        `.to(None)` would not move): a plain name is kept with a None test, other expressions as they are.
        A name is not used on a host without an accelerator: `.to(0)` there raises, where the
        original, which never ran on such a host, named a GPU.
        """
        device_kw = next((k for k in node.keywords if k.arg == "device"), None)
        if len(node.args) > 1 or any(isinstance(a, ast.Starred) for a in node.args) \
                or any(k.arg is None for k in node.keywords) or (node.args and device_kw is not None):
            return None
        name_end = Position(attr_start.line, attr_start.col + len("cuda"))
        edits = [Edit(attr_start, name_end, "to")]
        value = node.args[0] if node.args else (device_kw.value if device_kw is not None else None)
        if value is None:
            keywords = node.keywords
            if keywords:
                at = self.start(keywords[0])
                edits.append(Edit(at, at, DEVICE_TYPE + ", "))
            else:
                close = _call_close(self, node)
                edits.append(Edit(close, close, DEVICE_TYPE))
            return edits
        start, end = self.start(value), self.end(value)
        if isinstance(value, ast.Constant) and isinstance(value.value, int) and not isinstance(value.value, bool):
            edits += [Edit(start, start, f"{self._torch_prefixed('torch.device')}({DEVICE_TYPE}, "), Edit(end, end, ")")]
        elif isinstance(value, ast.Constant) and value.value is None:
            edits.append(self._replace(value, DEVICE_TYPE))
        elif _plain_reference(value) and self.qualname(value) is None:
            text = self.seg(value)
            edits.append(Edit(start, start, f"{DEVICE_TYPE} if {text} is None or not {ACCEL_TYPE} else "))
        return edits

    def _check_is_cuda(self, node: ast.Attribute) -> None:
        rule = self.kb.rule("DV003")
        start = Position(self.end(node).line, self.end(node).col - len("is_cuda"))
        if "is_npu" in self._source_text:
            # The project branches for npu itself (`elif x.is_npu:`): a rewritten is_cuda would be
            # true on NPU and take the CUDA branch first.
            self.report(rule, node, ".is_cuda", start=start, severity="info",
                        suffix=" (left as is: this module tests is_npu itself)")
            return
        fix = self._fix("agnostic", rule, [self._replace(node, f'({self.seg(node.value)}.device.type == ({self._cuda_or_accel()}))')],
                        "ask whether the tensor is on the accelerator", requires=("device_type",))
        self.report(rule, node, ".is_cuda", fixes=[fix], start=start)

    def _check_dynamic(self, node: ast.Call) -> None:
        base = self.qualname(node.args[0])
        name = node.args[1]
        if base == "torch" and isinstance(name, ast.Constant) and name.value == "cuda":
            self.report(self.kb.rule("CU111"), node, 'getattr(torch, "cuda")')
            self._handled.add(id(name))
        elif base is not None and base.startswith("torch.cuda") and not isinstance(name, ast.Constant):
            self.report(self.kb.rule("CU111"), node, f"getattr({base}, ...)")

    # ----------------------------------------------------------------- strings and comparisons
    def visit_Compare(self, node: ast.Compare) -> None:
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and isinstance(node.comparators[0], (ast.Tuple, ast.List, ast.Set)):
            if self._check_device_membership(node, node.comparators[0]):
                return
        if id(node) in self._kept_cuda_tests:  # an agnostic port's deliberate CUDA-only test
            for part in (node.left, *node.comparators):
                if not _is_str(part):
                    self.visit(part)
            return
        if len(node.ops) == 1 and self._check_device_compare(node):
            for part in (node.left, *node.comparators):
                if not _is_str(part):
                    self.visit(part)
            return
        self.generic_visit(node)

    def _check_device_compare(self, node: ast.Compare) -> bool:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        rule = self.kb.rule("DV004")
        if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            if _is_str(right, "cuda"):
                other = left
            elif _is_str(left, "cuda"):
                other = right
            else:
                return False
            positive = isinstance(op, (ast.Eq, ast.Is))
            other_text = self.seg(other)
            transfer = f'{other_text} {"in" if positive else "not in"} ("cuda", "npu")'
            cuda = right if other is left else left
            fixes = [
                self._fix("transfer", rule, [self._replace(node, transfer)], "accept npu devices as well"),
                self._fix("agnostic", rule, [self._replace(cuda, f"({self._cuda_or_accel()})")],
                          "compare with the accelerator type (still cuda without one)", requires=("device_type",)),
            ]
            self.report(rule, node, self.seg(node).replace("\n", " "), fixes=fixes)
            return True
        if isinstance(op, (ast.In, ast.NotIn)) and _is_str(left, "cuda"):
            fix = self._fix("agnostic", rule, [self._replace(left, f"({self._cuda_or_accel()})")],
                            "look for the accelerator type (still cuda without one)", requires=("device_type",))
            self.report(rule, node, self.seg(node).replace("\n", " "), fixes=[fix])
            return True
        return False

    def _check_device_membership(self, node: ast.Compare, options: Union[ast.Tuple, ast.List, ast.Set]) -> bool:
        """`x in ("cuda", ...)`: the cuda entries name the accelerator (still cuda without one)."""
        cuda = [e for e in options.elts if _is_str(e, "cuda")]
        if not cuda:
            return False
        self._handled.update(id(e) for e in cuda)
        rule = self.kb.rule("DV004")
        if any(_is_str(e) and NPU_ENTRY.match(e.value) for e in options.elts):  # type: ignore[union-attr]
            pass  # `in ("cuda", "npu")` already accepts npu devices: nothing to report
        else:
            fixes = [self._fix("transfer", rule, [self._replace(e, f"{self.seg(e)}, {self.seg(e).replace('cuda', 'npu')}")
                                                  for e in cuda], "accept npu devices as well"),
                     self._fix("agnostic", rule, [self._replace(e, self._cuda_or_accel()) for e in cuda],
                               "accept the accelerator type (still cuda without one)", requires=("device_type",))]
            self.report(rule, node, self.seg(node).replace("\n", " "), fixes=fixes)
        self.visit(node.left)
        for e in options.elts:
            if id(e) not in self._handled:
                self.visit(e)
        return True

    def _check_startswith(self, node: ast.Call) -> bool:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "startswith" and len(node.args) == 1
                and (_is_str(node.args[0], "cuda") or _is_str(node.args[0], "cuda:"))):
            return False
        rule = self.kb.rule("DV004")
        arg = node.args[0]
        symbol = self.seg(node).replace("\n", " ")
        receiver = func.value
        if self._saved_location(receiver):
            # map_location=lambda storage, loc: ...: `loc` is where the checkpoint's tensor was saved
            # (data written by the original run), not the device this code runs on.
            self.report(rule, node, symbol, suffix=STORED_LOCATION_NOTE)
            return True
        quote = self.seg(arg)[0] if self.seg(arg)[:1] in "\"'" else '"'
        colon = ":" if arg.value == "cuda:" else ""  # type: ignore[attr-defined]
        transfer = [self._replace(arg, f"({quote}cuda{colon}{quote}, {quote}npu{colon}{quote})")]
        accel = self._cuda_or_accel()  # still "cuda" without an accelerator: the CPU path stays as it was
        agnostic = [self._replace(arg, f"({accel}) + {quote}:{quote}" if colon else accel)]
        note = "" if _looks_like_device(receiver) else NOT_A_DEVICE_NOTE.format(receiver=self.seg(receiver))
        fixes = [self._fix("transfer", rule, transfer, "accept npu devices as well" + note),
                 self._fix("agnostic", rule, agnostic, "test for the accelerator type (still cuda without one)" + note,
                           requires=("device_type",))]
        self.report(rule, node, symbol, fixes=fixes, suffix=note)
        return True

    def _saved_location(self, receiver: ast.AST) -> bool:
        """Is `receiver` the location parameter of a `map_location=lambda storage, loc: ...`?"""
        if not isinstance(receiver, ast.Name):
            return False
        for i in range(len(self._stack) - 1, -1, -1):
            scope = self._stack[i]
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return False
            if isinstance(scope, ast.Lambda):
                params = [a.arg for a in scope.args.args]
                if receiver.id not in params:
                    continue
                holder = self._stack[i - 1] if i else None
                return (isinstance(holder, ast.keyword) and holder.arg == "map_location"
                        and len(params) >= 2 and params.index(receiver.id) == 1)
        return False

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str) or self._message_depth or id(node) in self._handled:
            return
        value = node.value
        if CUDA_DEVICE.match(value):
            self._report_device_string(node, value)
        elif value == "cuda:" and isinstance(self.parent(node), ast.Call) and self._check_startswith(self.parent(node)):
            self._handled.add(id(node))
        elif BUILT_DEVICE.match(value) and self._report_built_device(node, value):
            pass
        elif value[:1] in DEVICE_NAME_STARTS and self._report_device_name(node, value):
            pass
        elif NCCL_TOKEN.search(value) and len(value) < 40:
            self._report_nccl(node, value)
        elif value in self._env_table:
            self._report_env(node, value)
        elif self._tools and self._report_tool(node, value):
            pass
        else:
            for rule in self.kb.rules_of_kind("env-var"):
                if re.match(rule.match["pattern"], value):
                    fixes = []
                    replacement = rule.match.get("replace")
                    if replacement:
                        text = self.seg(node).replace(value, replacement)
                        fixes.append(self._fix("transfer", rule, [self._replace(node, text)], f"use {replacement}"))
                    self.report(rule, node, value, fixes=fixes)

    def _device_name_rules_here(self) -> list[tuple["re.Pattern[str]", Rule]]:
        """device-name rules whose library this module imports, with their patterns (decided
        once per module)."""
        held = self.__dict__.get("_device_name_cache")
        if held is None:
            held = self.__dict__["_device_name_cache"] = [
                (re.compile(rule.match["pattern"]), rule) for rule in self.kb.rules_of_kind("device-name")
                if any(self._imports_module(m) for m in rule.match.get("in_modules_importing", ()))]
        return held

    def _report_device_name(self, node: ast.Constant, value: str) -> bool:
        """A framework device name written as a literal or completed at run time ("/gpu:0",
        "/gpu:%d" % i, "/gpu:{}".format(i), "/gpu:" + str(i), the text part of f"/gpu:{i}"):
        reported with the whole expression that builds it."""
        hit = next((rule for regex, rule in self._device_name_rules_here() if regex.match(value)), None)
        if hit is None:
            return False
        parent = self.parent(node)
        whole: ast.AST = node
        if isinstance(parent, ast.JoinedStr):
            whole = parent
        elif isinstance(parent, ast.BinOp) and parent.left is node and isinstance(parent.op, (ast.Mod, ast.Add)):
            whole = parent
        elif isinstance(parent, ast.Attribute) and parent.attr == "format":
            call = self.parent(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                whole = call
        self._handled.add(id(node))
        self.report(hit, whole, self.seg(whole).replace("\n", " ")[:80])
        return True

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        if self._message_depth:
            return
        first = node.values[0] if node.values else None
        if (isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("cuda:")
                and len(node.values) >= 2 and first.value == "cuda:"):
            text = self.seg(node)
            prefix_len = len(re.match(r"^[rRfF]{1,2}('''|\"\"\"|'|\")", text).group(0))  # type: ignore[union-attr]
            start = self.start(node)
            if start.line == self.end(node).line:
                cuda_start = Position(start.line, start.col + prefix_len)
                cuda_end = Position(start.line, start.col + prefix_len + 4)
                rule = self.kb.rule("DV001")
                fix = self._fix("agnostic", rule, [Edit(cuda_start, cuda_end, "{" + DEVICE_TYPE + "}")],
                                "use the run-time device type", requires=("device_type",))
                self.report(rule, node, text, fixes=[fix], confidence=self._device_confidence(node))
        self.generic_visit(node)

    def _report_built_device(self, node: ast.Constant, value: str) -> bool:
        """"cuda:{}".format(i), "cuda:%d" % i, "cuda:" + str(i): a CUDA device string built at run time."""
        parent = self.parent(node)
        if isinstance(parent, ast.Attribute) and parent.attr == "format" and value != "cuda:":
            whole = self.parent(parent)
            if not (isinstance(whole, ast.Call) and whole.func is parent):
                return False
        elif isinstance(parent, ast.BinOp) and parent.left is node and (
                (isinstance(parent.op, ast.Mod) and "%" in value) or (isinstance(parent.op, ast.Add) and value == "cuda:")):
            whole = parent
        else:
            return False
        rule = self.kb.rule("DV001")
        raw = self.seg(node)
        quote = raw[-1:]
        fixes = []
        if raw[:1] in "\"'" and raw.count(quote) == 2:
            text = f"({DEVICE_TYPE} + {quote}{value[4:]}{quote})"
            fixes.append(self._fix("agnostic", rule, [self._replace(node, text)], "use the run-time device type",
                                   requires=("device_type",)))
        self.report(rule, node, self.seg(whole).replace("\n", " ")[:80], fixes=fixes,
                    confidence=self._device_confidence(whole))
        return True

    def _report_env(self, node: ast.Constant, value: str) -> None:
        spec, rule = self._env_table[value]
        fixes = []
        replacement = spec.get("replace")
        if replacement:
            text = self.seg(node).replace(value, replacement)
            fixes.append(self._fix("transfer", rule, [self._replace(node, text)], f"use {replacement}"))
        self.report(rule, node, value, fixes=fixes, severity=spec.get("level"), detail=spec.get("note", ""))

    def _report_tool(self, node: ast.Constant, value: str) -> bool:
        """nvidia-smi / nvcc named in a command string (subprocess, os.system, shutil.which)."""
        hit = next((t for t in self._tools if t[0].search(value)), None)
        if hit is None:  # most strings name no tool: decide that before looking at the parent
            return False
        parent = self.parent(node)
        if isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
            return False  # {"nvcc": [...flags]}: the extension build, reported as EX002
        if isinstance(parent, ast.keyword) and parent.arg in PROSE_KEYWORDS:
            return False
        _, tool, note, rule = hit
        self.report(rule, node, tool, detail=note)
        return True

    def _device_confidence(self, node: ast.AST) -> str:
        parent = self.parent(node)
        if isinstance(parent, ast.keyword) and parent.arg in DEVICE_KWARGS:
            return "high"
        if isinstance(parent, ast.Call):
            qual = self.qualname(parent.func) or ""
            if qual == "torch.device" or (isinstance(parent.func, ast.Attribute) and parent.func.attr == "to"):
                return "high"
        return "medium"

    def _report_device_string(self, node: ast.Constant, value: str) -> None:
        parent = self.parent(node)
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.Or) and len(parent.values) == 2 \
                and parent.values[1] is node and isinstance(parent.values[0], ast.Name) \
                and parent.values[0].id == ACCEL_TYPE:
            return  # `_accel_type or "cuda"`: the agnostic style's own fallback, already migrated
        if isinstance(parent, ast.Call) and self._check_startswith(parent):
            self._handled.add(id(node))
            return
        rule = self.kb.rule("DV001")
        raw = self.seg(node)
        quote = raw[-1] if raw[-1:] in "\"'" else '"'
        simple = raw[:1] in "\"'" and raw.count(quote) == 2
        fixes = []
        if self._in_match_pattern():
            # `case "cuda":` cannot name a run-time value: the match needs an if/elif by hand.
            self.report(rule, node, value, confidence=self._device_confidence(node), suffix=MATCH_PATTERN_NOTE)
            return
        if simple and ":" not in value and self._names_accelerator(node, parent):
            fixes.append(self._fix("agnostic", rule, [self._replace(node, self._cuda_or_accel())],
                                   "use the accelerator type (still cuda without one)", requires=("device_type",)))
        elif simple:
            if ":" in value:
                text = f'f{quote}{{{DEVICE_TYPE}}}:{value.split(":")[1]}{quote}'
            else:
                text = DEVICE_TYPE
            fixes.append(self._fix("agnostic", rule, [self._replace(node, text)], "use the run-time device type",
                                   requires=("device_type",)))
        self.report(rule, node, value, fixes=fixes, confidence=self._device_confidence(node))

    def _names_accelerator(self, node: ast.Constant, parent: Optional[ast.AST]) -> bool:
        """Does this "cuda" select CUDA-only behaviour rather than a place for tensors: the device
        of an AMP call (off without CUDA), a key of a table looked up by device type, or the
        default of a parameter the function uses that way?"""
        if isinstance(parent, ast.arguments):
            return self._default_selects_cuda_path(node, parent)
        if isinstance(parent, ast.Dict):
            return any(k is node for k in parent.keys)
        call = parent
        if isinstance(parent, ast.keyword):
            if parent.arg not in ("device_type", "device"):
                return False
            call = self.parent(parent)
        elif isinstance(parent, ast.Call) and not (parent.args and parent.args[0] is node):
            return False
        return isinstance(call, ast.Call) and self.qualname(call.func) in AMP_DEVICE_CALLS

    def _default_selects_cuda_path(self, node: ast.Constant, args: ast.arguments) -> bool:
        """`def step(..., device_type="cuda")` whose body hands the parameter to autocast or a
        GradScaler, compares it, or looks a table up with it. A caller relying on the default got
        those CUDA-only paths switched off on a host without CUDA; `_device_type` ("cpu" there)
        would switch CPU autocast on instead, so the default keeps naming CUDA without an accelerator."""
        func = self._stack[-2] if len(self._stack) >= 2 else None
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or func.args is not args:
            return False
        name = _param_of_default(args, node)
        if name is None:
            return False
        body = func.body if isinstance(func.body, list) else [func.body]
        for sub in (n for stmt in body for n in ast.walk(stmt)):
            if isinstance(sub, ast.Compare):
                if any(isinstance(part, ast.Name) and part.id == name for part in (sub.left, *sub.comparators)):
                    return True
            elif isinstance(sub, ast.Subscript):
                if isinstance(sub.slice, ast.Name) and sub.slice.id == name:
                    return True
            elif isinstance(sub, ast.Call):
                func_node = sub.func
                if isinstance(func_node, ast.Attribute) and func_node.attr == "startswith" \
                        and isinstance(func_node.value, ast.Name) and func_node.value.id == name:
                    return True
                args_ = sub.args
                called = self.qualname(func_node)
                if called == "functools.partial" and args_:  # partial(torch.autocast, device_type=name)
                    called, args_ = self.qualname(args_[0]), args_[1:]
                device = args_[0] if args_ else next(
                    (k.value for k in sub.keywords if k.arg in ("device_type", "device")), None)
                if isinstance(device, ast.Name) and device.id == name and called in AMP_DEVICE_CALLS:
                    return True
        return False

    def _report_nccl(self, node: ast.AST, value: str, symbol: str = "") -> None:
        """A string naming nccl (`value`), or an expression that is one (`dist.Backend.NCCL`);
        as the backend argument of a process-group call the agnostic style derives it instead."""
        rule = self.kb.rule("DS001")
        fixes = []
        # A branch of a conditional backend (`"NCCL" if has_gpu else "GLOO"`) is the argument too.
        arg: ast.AST = node
        parent = self.parent(node)
        while isinstance(parent, ast.IfExp) and parent.test is not arg:
            arg, parent = parent, self.parent(parent)
        is_backend_arg = False
        pg_call = False  # an argument of the calls transfer_to_npu wraps
        if isinstance(parent, ast.keyword) and parent.arg == "backend":
            call = self.parent(parent)
            is_backend_arg = isinstance(call, ast.Call)
            pg_call = is_backend_arg and (self.qualname(call.func) or "").endswith(PROCESS_GROUP_CALLS)  # type: ignore[union-attr]
        elif isinstance(parent, ast.Call) and parent.args and parent.args[0] is arg:
            qual = self.qualname(parent.func) or ""
            is_backend_arg = pg_call = qual.endswith(PROCESS_GROUP_CALLS)
        suffix = ""
        if not symbol and "nccl" not in value:
            # transfer_to_npu's wrapper replaces the lower-case substring only; torch lower-cases
            # the name afterwards, so "NCCL" still reaches torch as nccl, which Ascend lacks.
            if pg_call:
                lowered = self.seg(node).replace(value, NCCL_ANY_CASE.sub("nccl", value))
                # Safe whatever the rule says for the style: torch reads the name in lower case anyway.
                fixes.append(Fix(style="transfer", edits=(self._replace(node, lowered),), safety="safe",
                                 description="spell the backend in lower case, the only spelling"
                                             " transfer_to_npu maps to hccl"))
            else:
                suffix = UPPER_NCCL_NOTE
        if is_backend_arg and value.lower() == "nccl":
            text = f"{self._torch_prefixed('torch.distributed.get_default_backend_for_device')}({DEVICE_TYPE})"
            fixes.append(self._fix("agnostic", rule, [self._replace(node, text)],
                                   "derive the backend from the device (torch >= 2.6)",
                                   requires=("torch", "device_type", "torch>=2.6")))
        severity = None
        if pg_call and value == "nccl" and TRANSFER_IMPORT.search(self._source_text):
            # A transfer port's entry module: the patch it imports maps this very spelling to hccl.
            severity, suffix = "info", TRANSFER_MAPS_NCCL
        self.report(rule, node, symbol or value, fixes=fixes, confidence="high" if is_backend_arg else "medium",
                    suffix=suffix, severity=severity)

    def visit_keyword(self, node: ast.keyword) -> None:
        for rule in self.kb.rules_of_kind("keyword-value"):
            if node.arg in rule.match["keywords"] and _is_str(node.value) and "cuda" in node.value.value:  # type: ignore[union-attr]
                call = self.parent(node)
                edit = _remove_argument(self, call, node) if isinstance(call, ast.Call) else None
                fixes = [self._fix(style, rule, [edit], f"drop {node.arg}") for style in ("transfer", "agnostic")] if edit else []
                self._handled.add(id(node.value))
                self.report(rule, node, f"{node.arg}={node.value.value!r}", fixes=fixes)  # type: ignore[union-attr]
        self.generic_visit(node)


# --------------------------------------------------------------------- helpers
PRECISION_WORD = re.compile(r"(?i)(?:^|_)(?:bf16|bfloat16|fp16|float16)(?:_|$)")


def _names_precision(node: ast.AST) -> bool:
    """Does this code name a half-precision choice (`torch.bfloat16`, `.half()`, "bf16",
    `use_bf16`, `amp_dtype_fp16`)?"""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and (sub.attr == "half" or PRECISION_WORD.search(sub.attr)):
            return True
        if isinstance(sub, ast.Name) and PRECISION_WORD.search(sub.id):
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and PRECISION_WORD.search(sub.value):
            return True
    return False


_DEVICE_WORD = re.compile(r"(^|_)(device|dev|devices|place|accelerator|backend_device)(_|$|\d)", re.I)


def _looks_like_device(node: ast.AST) -> bool:
    """Is this expression evidently the device the code runs on (`device`, `args.device`,
    `str(x.device)`, `t.device.type`, `torch.device(...)`), as opposed to some string that
    may hold stored data (a name read from a saved graph, a checkpoint key, a config value)?"""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("str", "repr") and len(node.args) == 1:
            return _looks_like_device(node.args[0])
        if isinstance(func, ast.Attribute) and func.attr == "lower" and not node.args:
            return _looks_like_device(func.value)
        return isinstance(func, ast.Attribute) and func.attr == "device"  # torch.device(...)
    if isinstance(node, ast.JoinedStr) and len(node.values) == 1 and isinstance(node.values[0], ast.FormattedValue):
        return _looks_like_device(node.values[0].value)
    if isinstance(node, ast.Attribute):
        if node.attr == "type":
            return _looks_like_device(node.value)
        return bool(_DEVICE_WORD.search(node.attr))
    if isinstance(node, ast.Name):
        return bool(_DEVICE_WORD.search(node.id))
    if isinstance(node, ast.Subscript):  # args["device"], cfg["device_type"]
        key = node.slice
        return isinstance(key, ast.Constant) and isinstance(key.value, str) and bool(_DEVICE_WORD.search(key.value))
    return False


def _npu_polarity(test: ast.AST) -> Optional[bool]:
    """True when a test that names npu holds exactly on the NPU path (`x == "npu"`,
    `device.type in ("npu",)`, `is_npu`, `s.startswith("npu")`, `torch.npu.is_available()`),
    False when it holds exactly off it (`!=`, `not in`, `not ...`), None when it cannot tell
    (`and`/`or` mix other conditions in)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _npu_polarity(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare):
        if len(test.ops) != 1:
            return None
        if isinstance(test.ops[0], (ast.Eq, ast.Is, ast.In)):
            return True
        if isinstance(test.ops[0], (ast.NotEq, ast.IsNot, ast.NotIn)):
            return False
        return None
    if isinstance(test, (ast.Name, ast.Attribute, ast.Call)):
        return True
    return None


_BNB_REQUIREMENT = re.compile(r"(?i)\brequires?_(?:bitsandbytes|bnb)\w*|\bis_bnb(?:_4bit)?_available\b|bitsandbytes")


def _needs_bitsandbytes(decorators: list) -> bool:
    """A test decorated to run only where bitsandbytes is installed (`@require_bitsandbytes`,
    `@require_bnb`, `@pytest.mark.skipif(not is_bnb_available(), ...)`): a test of the
    bitsandbytes integration itself, skipped on a host without bitsandbytes. What it quantises
    is not porting work."""
    for dec in decorators:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
        if re.fullmatch(r"(?i)requires?_(?:bitsandbytes|bnb)\w*", name):
            return True
        if name in ("skipif", "skipUnless", "skipIf") and isinstance(dec, ast.Call) and dec.args:
            if _BNB_REQUIREMENT.search(ast.unparse(dec.args[0])):
                return True
    return False


def _sampler_weights_argument(node: ast.AST, parent_of: Callable[[ast.AST], Optional[ast.AST]]) -> bool:
    """Is `node` the weights of a `WeightedRandomSampler(...)` call (first argument or `weights=`)?"""
    parent = parent_of(node)
    if isinstance(parent, ast.keyword):
        call = parent_of(parent) if parent.arg == "weights" else None
        return isinstance(call, ast.Call) and _names_sampler(call)
    return isinstance(parent, ast.Call) and _names_sampler(parent) and bool(parent.args) and parent.args[0] is node


def _names_sampler(call: ast.Call) -> bool:
    func = call.func
    return (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "") \
        == "WeightedRandomSampler"


def _layout_only_on_cuda(node: Union[ast.If, ast.IfExp]) -> bool:
    """`if x.device.type == "cuda": x = x.contiguous()` (or `x.contiguous() if ... else x`): a
    memory-layout workaround for a CUDA kernel, kept off other devices. Skipping it on an NPU
    changes no value, so the test is right as it is."""
    if _cuda_only_polarity(node.test) is not True:
        return False
    if isinstance(node, ast.IfExp):
        return _contiguous_call(node.body) and isinstance(node.orelse, (ast.Name, ast.Attribute))
    if node.orelse:
        return False
    for stmt in node.body:
        if not isinstance(stmt, ast.Assign):
            return False
        values = stmt.value.elts if isinstance(stmt.value, ast.Tuple) else [stmt.value]
        if not all(_contiguous_call(v) for v in values):
            return False
    return True


def _contiguous_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "contiguous"
            and not node.args and not node.keywords)


def _cuda_only_polarity(test: ast.AST) -> Optional[bool]:
    """True for `x == "cuda"` (the body is the CUDA arm), False for `x != "cuda"` (the else is),
    None for any other test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right = test.left, test.comparators[0]
    if not any(_is_str(side) and CUDA_DEVICE.match(side.value) for side in (left, right)):  # type: ignore[attr-defined]
        return None
    if isinstance(test.ops[0], (ast.Eq, ast.Is)):
        return True
    if isinstance(test.ops[0], (ast.NotEq, ast.IsNot)):
        return False
    return None


def _is_str(node: ast.AST, value: Optional[str] = None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and (value is None or node.value == value)


def name_of_definer(func: ast.AST) -> bool:
    """Is `func` an absl-style flag definer (`flags.DEFINE_string`, `DEFINE_enum`)?"""
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith("DEFINE_")


def _chooses_on_accelerator(node: ast.AST) -> bool:
    """`X if _accel_type else Y`: a value the agnostic style already picks per host."""
    return isinstance(node, ast.IfExp) and isinstance(node.test, ast.Name) and node.test.id == ACCEL_TYPE


def _none_in_a_branch(node: ast.AST) -> bool:
    """`[d.index] if d.type == "cuda" else None`: the author already passes None off the GPU."""
    return isinstance(node, ast.IfExp) and (_literal_in(node.body, (None,)) or _literal_in(node.orelse, (None,)))


def _literal_in(node: Optional[ast.AST], values: Iterable[object]) -> bool:
    """Is `node` a literal equal to one of `values` (same type: `False` is not `0`)?

    Rules list the literal values that turn a setting off or name what the NPU runs
    (`jit_compile=False`, `set_jit(False)`, `num_gpus=0`, `quantization="ascend"`)."""
    if not isinstance(node, ast.Constant):
        return False
    return any(type(v) is type(node.value) and v == node.value for v in values)


def _catches(node: ast.Try, names: set[str]) -> bool:
    for handler in node.handlers:
        if handler.type is None:
            return True
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for t in types:
            label = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            if label in names:
                return True
    return False


def _first_arg_start(call: ast.Call, an: PythonAnalyzer) -> Optional[Position]:
    nodes = [*call.args, *call.keywords]
    if not nodes:
        return None
    first = min(nodes, key=lambda n: (n.lineno, n.col_offset))
    return an.start(first)


def _call_close(an: PythonAnalyzer, call: ast.Call) -> Position:
    end = an.end(call)
    return Position(end.line, end.col - 1)


def _remove_argument(an: PythonAnalyzer, call: ast.Call, kw: ast.keyword) -> Optional[Edit]:
    nodes = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    idx = next(i for i, n in enumerate(nodes) if n is kw)
    if idx > 0:
        return Edit(an.end(nodes[idx - 1]), an.end(kw), "")
    if len(nodes) > 1:
        return Edit(an.start(kw), an.start(nodes[1]), "")
    return Edit(an.start(kw), an.end(kw), "")


def _plain_reference(node: ast.AST) -> bool:
    """A name or a chain of attributes on a name (`rank`, `args.gpu`): cheap and safe to read twice."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def import_line_pattern(top: str) -> "re.Pattern[str]":
    """A line that imports `top` or a submodule of it (`import top`, `from top.x import y`).

    Anchored at a line start and built from the escaped name only, so it stays linear on any
    line (the regex audit builds it for every library a keyword rule names)."""
    return re.compile(r"(?m)^[ \t]*(?:import|from)[ \t]+" + re.escape(top) + r"\b")

