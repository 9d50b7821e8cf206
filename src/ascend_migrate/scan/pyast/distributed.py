"""Distributed training (DS001, DS006): the nccl backend, spelled as a string or as
`dist.Backend.NCCL`, and `DistributedDataParallel(device_ids=...)` on a host without an
accelerator."""
from __future__ import annotations

import ast
import re
from typing import Optional

from ascend_migrate.knowledge.base import KnowledgeBase, Rule
from ascend_migrate.scan.finding import Edit, Fix
from ascend_migrate.scan.pyast.context import TRANSFER_IMPORT
from ascend_migrate.scan.pyast.nodes import _literal_in
from ascend_migrate.scan.pyast.registry import on
from ascend_migrate.scan.pyast.reporting import ACCEL_TYPE, DEVICE_TYPE

NCCL_TOKEN = re.compile(r"(?i)(?:^|[:,\s])nccl(?:$|[,\s])")
NCCL_ANY_CASE = re.compile(r"(?i)nccl")
PROCESS_GROUP_CALLS = ("init_process_group", "new_group")  # the calls whose backend transfer_to_npu maps
TRANSFER_MAPS_NCCL = " (transfer_to_npu, which this module imports, maps it to hccl)"
UPPER_NCCL_NOTE = (" (not in lower case: transfer_to_npu maps only the spelling 'nccl' to hccl, and only"
                   " in init_process_group/new_group arguments; write it in lower case where it reaches them)")


class Distributed:
    """Mixin of the analyser: the distributed family."""

    @on("setup", 50)
    def _setup_distributed(self, kb: KnowledgeBase) -> None:
        # names that are the string "nccl" (torch.distributed.Backend.NCCL)
        self._nccl_names = frozenset(name for rule in kb.rules_of_kind("nccl") for name in rule.match.get("names", ()))

    @on("qualname", 10)
    def _qualname_nccl(self, node: ast.AST, qual: str) -> bool:
        if qual in self._nccl_names:  # dist.Backend.NCCL is the string "nccl"
            self._report_nccl(node, "nccl", self.seg(node))
            return True
        return False

    @on("constant", 50)
    def _constant_nccl(self, node: ast.Constant, value: str) -> bool:
        if NCCL_TOKEN.search(value) and len(value) < 40:
            self._report_nccl(node, value)
            return True
        return False

    @on("call", 50)
    def _call_device_ids(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if qual is None:
            return
        for rule in self.kb.rules_of_kind("device-ids"):
            if qual in rule.match["names"]:
                self._check_device_ids(rule, node, qual)

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


def _chooses_on_accelerator(node: ast.AST) -> bool:
    """`X if _accel_type else Y`: a value the agnostic style already picks per host."""
    return isinstance(node, ast.IfExp) and isinstance(node.test, ast.Name) and node.test.id == ACCEL_TYPE


def _none_in_a_branch(node: ast.AST) -> bool:
    """`[d.index] if d.type == "cuda" else None`: the author already passes None off the GPU."""
    return isinstance(node, ast.IfExp) and (_literal_in(node.body, (None,)) or _literal_in(node.orelse, (None,)))
