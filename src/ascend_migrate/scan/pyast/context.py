"""The context of a node: npu branches, guards, try/except, messages and tests.

Code that already branches for npu (`if device.type == "npu": ... else: ...`), a table that
names npu beside cuda, the arm a device-agnostic port keeps for CUDA only, a try/except that
turns a failed capability query into "feature off", a guarded import, a test that runs only
where bitsandbytes is installed: the walk keeps this state so every family reads it alike."""
from __future__ import annotations

import ast
import re
from typing import Optional, Union

from ascend_migrate.scan.pyast.nodes import _catches, _is_str
from ascend_migrate.scan.pyast.registry import on

CUDA_DEVICE = re.compile(r"^cuda(:\d+)?$")
NPU_ENTRY = re.compile(r"^(npu(:\d+)?|hccl)$")
TYPE_CHECKS = {"isinstance", "issubclass"}
ARCH_GUARD_EXCEPTIONS = {"AttributeError", "RuntimeError", "TypeError", "AssertionError", "Exception", "BaseException"}
AMP_DEVICE_CALLS = {"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
                    "torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler", "torch.get_device_module"}
# The module-level binding the agnostic rewrite adds (fix/rewrite.py's prelude).
AGNOSTIC_PRELUDE = re.compile(r"(?m)^_accel_type = ")
# An import statement of transfer_to_npu (`from torch_npu.contrib import transfer_to_npu`, ...).
TRANSFER_IMPORT = re.compile(r"(?m)^[ \t]*(?:from|import)[ \t]+torch_npu\.contrib\b[^\n]*\btransfer_to_npu\b")


class Context:
    """Mixin of the analyser: the visits that open a context, and questions about it.

    Needs the state `PythonAnalyzer.__init__` sets up (`_npu_depth`, `_npu_nodes`, `_guard_depth`,
    `_message_depth`, ...) and `qualname`, `parent`, `visit`."""

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
            entries = [(k.value, v, k) for k, v in zip(node.keys, node.values)
                       if k is not None and _is_str(k)]  # type: ignore[attr-defined]
            for hook in self._dict_hooks:
                hook(self, entries)
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

    @on("compare", 20)
    def _compare_kept_cuda_test(self, node: ast.Compare) -> bool:
        """An agnostic port's deliberate CUDA-only test: its parts are visited, its strings are not findings."""
        if id(node) not in self._kept_cuda_tests:
            return False
        for part in (node.left, *node.comparators):
            if not _is_str(part):
                self.visit(part)
        return True

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

    def _in_type_check(self, node: ast.AST) -> bool:
        """Is `node` the class argument of isinstance/issubclass (alone or in a tuple)?"""
        parent = self.parent(node)
        if isinstance(parent, ast.Tuple):
            node, parent = parent, self.parent(parent)
        return (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in TYPE_CHECKS
                and len(parent.args) == 2 and parent.args[1] is node)

    def _guarded_branch(self, node: ast.AST) -> Optional[list]:
        """The body of the if / conditional expression whose test contains `node`."""
        stack = self._stack
        for i in range(len(stack) - 2, -1, -1):
            anc = stack[i]
            if isinstance(anc, (ast.If, ast.IfExp)) and stack[i + 1] is anc.test:
                return anc.body if isinstance(anc.body, list) else [anc.body]
        return None


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
