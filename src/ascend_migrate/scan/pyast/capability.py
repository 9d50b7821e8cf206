"""Capability queries (CU101, CU102, CU113, CU114): `get_device_capability()`, its bf16 gates
(`capability[0] >= 8`), architecture attributes of `get_device_properties()`, a query whose
failure an `except` turns into "feature off", and `torch.version.cuda` (None on NPU builds)."""
from __future__ import annotations

import ast
import re
from typing import Optional

from ascend_migrate.knowledge.base import KnowledgeBase, Rule
from ascend_migrate.scan.finding import Fix
from ascend_migrate.scan.pyast.nodes import _literal_in
from ascend_migrate.scan.pyast.registry import on
from ascend_migrate.scan.pyast.reporting import ACCEL_TYPE


class Capability:
    """Mixin of the analyser: the capability family."""

    @on("setup", 60)
    def _setup_capability(self, kb: KnowledgeBase) -> None:
        self._version_rules = {name: rule for rule in kb.rules_of_kind("cuda-version") for name in rule.match["names"]}
        self._swallowed_rule = next(iter(kb.rules_of_kind("guarded-capability")), None)

    @on("qualname", 20)
    def _qualname_cuda_version(self, node: ast.AST, qual: str) -> bool:
        version_rule = self._version_rules.get(qual)
        if version_rule is not None:
            self._report_cuda_version(version_rule, node, qual)
            return True
        return False

    @on("attribute", 30)
    def _attribute_of_call(self, node: ast.Attribute) -> None:
        self._check_call_attribute(node)

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
