"""Tests of the device (DV004, DV003): `device == "cuda"`, `x in ("cuda", "cpu")`,
`s.startswith("cuda")`, `tensor.is_cuda`.

The transfer style accepts npu beside cuda; the agnostic style compares with the accelerator
type (still "cuda" on a host without one)."""
from __future__ import annotations

import ast
import re
from typing import Union

from ascend_migrate.scan.pyast.context import NPU_ENTRY
from ascend_migrate.scan.pyast.nodes import _is_str
from ascend_migrate.scan.finding import Position
from ascend_migrate.scan.pyast.registry import on

NOT_A_DEVICE_NOTE = (" (`{receiver}` is not evidently the running device: if it holds stored data, such as a"
                     " device name read from a saved graph, a checkpoint or a config, the original names CUDA"
                     " as data; check this test by hand)")  # message and fix-description suffix
STORED_LOCATION_NOTE = (" (a map_location's `loc` is where the checkpoint saved the tensor, not the running device:"
                        " not rewritten; decide by hand how the saved CUDA locations load here)")


class DeviceTests:
    """Mixin of the analyser: the device-test family."""

    @on("compare", 10)
    def _compare_membership(self, node: ast.Compare) -> bool:
        return (len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
                and isinstance(node.comparators[0], (ast.Tuple, ast.List, ast.Set))
                and self._check_device_membership(node, node.comparators[0]))

    @on("compare", 30)
    def _compare_device(self, node: ast.Compare) -> bool:
        if len(node.ops) == 1 and self._check_device_compare(node):
            for part in (node.left, *node.comparators):
                if not _is_str(part):
                    self.visit(part)
            return True
        return False

    @on("constant", 20)
    def _constant_startswith(self, node: ast.Constant, value: str) -> bool:
        """`s.startswith("cuda:")`: reported with the call."""
        if value == "cuda:" and isinstance(self.parent(node), ast.Call) and self._check_startswith(self.parent(node)):
            self._handled.add(id(node))
            return True
        return False

    @on("attribute", 10)
    def _attribute_is_cuda(self, node: ast.Attribute) -> None:
        if node.attr == "is_cuda" and isinstance(node.ctx, ast.Load):
            self._check_is_cuda(node)

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
