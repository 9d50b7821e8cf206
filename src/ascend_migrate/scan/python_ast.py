"""Static analysis of one Python module with the stdlib `ast`.

The analyser resolves import aliases (`import torch.cuda as tc`, `from torch import cuda`,
`from torch.cuda.amp import autocast as ac`, `tc = torch.cuda`), respects names shadowed by
parameters and assignments, ignores text in docstrings and log messages, and recognises code
that already branches for npu. Each finding may carry fixes for both migration styles as
edits on exact source ranges.

This module is the walk: it visits each node once, keeps the scopes (`pyast.resolver`) and the
context (`pyast.context`) up to date, and calls the checks the rule families registered for the
node's kind (`pyast.registry`), in their order. What a family detects and the edits it proposes
live in its own module under `pyast/`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional, Union

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.scan.entry_facts import is_main_guard
from ascend_migrate.scan.finding import Finding, split_lines
from ascend_migrate.scan.pyast.amp import Amp
from ascend_migrate.scan.pyast.capability import Capability
from ascend_migrate.scan.pyast.context import AGNOSTIC_PRELUDE, TRANSFER_IMPORT, Context, _needs_bitsandbytes
from ascend_migrate.scan.pyast.cuda_api import CudaApi
from ascend_migrate.scan.pyast.device_tests import DeviceTests
from ascend_migrate.scan.pyast.devices import DeviceStrings
from ascend_migrate.scan.pyast.distributed import Distributed
from ascend_migrate.scan.pyast.environment import Environment
from ascend_migrate.scan.pyast.frameworks import Frameworks
from ascend_migrate.scan.pyast.load_paths import LoadPaths
from ascend_migrate.scan.pyast.names import Names
from ascend_migrate.scan.pyast.registry import hooks
from ascend_migrate.scan.pyast.reporting import Reporting
from ascend_migrate.scan.pyast.resolver import FunctionNode, Resolver, _Scope, _function_params
from ascend_migrate.scan.pyast.settings import Settings
from ascend_migrate.scan.pyast.source import SourceText
from ascend_migrate.scan.pyast.switches import Switches
from ascend_migrate.scan.pyast.tensor_methods import TensorMethods
from ascend_migrate.scan.pyast.visitor import FastVisitor

MESSAGE_FUNCS = {"print"}
MESSAGE_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "write"}


@dataclass
class ModuleFacts:
    """What the engine needs beyond findings."""

    main_guard_line: int = 0
    imports_torch_npu: bool = False
    has_transfer_import: bool = False
    frameworks: dict[str, int] = field(default_factory=dict)  # framework key -> first line


class PythonAnalyzer(DeviceStrings, DeviceTests, TensorMethods, CudaApi, Amp, Distributed, LoadPaths, Capability,
                     Names, Switches, Frameworks, Environment, Settings, Context, Reporting, Resolver, SourceText,
                     FastVisitor):
    """Walk one module and report findings against the knowledge base."""

    # The family checks, per kind of node, in the order the walk calls them.
    _setup_hooks = hooks("setup")
    _call_hooks = hooks("call")
    _qualname_hooks = hooks("qualname")
    _attribute_hooks = hooks("attribute")
    _constant_hooks = hooks("constant")
    _fstring_hooks = hooks("fstring")
    _compare_hooks = hooks("compare")
    _keyword_hooks = hooks("keyword")
    _dict_hooks = hooks("dict")
    _decorator_hooks = hooks("decorator")
    _import_hooks = hooks("import")

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
        self._package_by_import = {imp: pkg for pkg in kb.packages for imp in pkg.imports}
        self._framework_by_import = {imp: fw for fw in kb.frameworks for imp in fw.imports}
        for setup in self._setup_hooks:  # each family's tables
            setup(self, kb)

    # ----------------------------------------------------------------- traversal
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

    def _visit_function(self, node: FunctionNode) -> None:
        bnb_test = False
        if not isinstance(node, ast.Lambda):
            for dec in node.decorator_list:
                for hook in self._decorator_hooks:
                    hook(self, dec)
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

    # ----------------------------------------------------------------- imports
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
        for hook in self._import_hooks:
            hook(self, module, node)

    # ----------------------------------------------------------------- calls and messages
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        is_message = (isinstance(func, ast.Name) and func.id in MESSAGE_FUNCS) or (
            isinstance(func, ast.Attribute) and func.attr in MESSAGE_METHODS
            and self.qualname(func.value) not in ("torch", "torch.cuda")
        ) or self.qualname(func) == "warnings.warn"
        qual = self.qualname(func)
        for hook in self._call_hooks:
            hook(self, node, func, qual)
        if is_message:
            self.visit(func)
            self._message_depth += 1
            for arg in (*node.args, *node.keywords):
                self.visit(arg)
            self._message_depth -= 1
        else:
            self.generic_visit(node)

    # ----------------------------------------------------------------- qualified names
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
        for hook in self._attribute_hooks:
            hook(self, node)
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
        """The families' checks of a qualified name, in order, until one reports it."""
        for hook in self._qualname_hooks:
            if hook(self, node, qual):
                return True
        return False

    # ----------------------------------------------------------------- strings and comparisons
    # ----------------------------------------------------------------- strings and comparisons
    def visit_Compare(self, node: ast.Compare) -> None:
        for hook in self._compare_hooks:
            if hook(self, node):
                return  # the hook visited the comparison's parts
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str) or self._message_depth or id(node) in self._handled:
            return
        value = node.value
        for hook in self._constant_hooks:
            if hook(self, node, value):
                return

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        if self._message_depth:
            return
        for hook in self._fstring_hooks:
            hook(self, node)
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        for hook in self._keyword_hooks:
            hook(self, node)
        self.generic_visit(node)
