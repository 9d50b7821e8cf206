"""Methods called on tensors and modules the scan cannot name: `.cuda(...)` (DV002) becomes
`.to(...)` the run-time device in the agnostic style; `.double()` (float64 rules) is reported."""
from __future__ import annotations

import ast
from typing import Optional

from ascend_migrate.knowledge.base import KnowledgeBase, Rule
from ascend_migrate.scan.finding import Edit, Position
from ascend_migrate.scan.pyast.registry import on
from ascend_migrate.scan.pyast.reporting import ACCEL_TYPE, DEVICE_TYPE, _call_close


class TensorMethods:
    """Mixin of the analyser: the tensor-method family."""

    @on("setup", 30)
    def _setup_tensor_methods(self, kb: KnowledgeBase) -> None:
        # method name -> rule, for calls on receivers that are not modules (x.cuda(), x.double())
        self._method_rules: dict[str, Rule] = {}
        for rule in kb.rules_of_kind("method-call"):
            for name in rule.match["names"]:
                self._method_rules[name] = rule
        for rule in kb.rules_of_kind("float64"):
            for name in rule.match.get("methods", ()):
                self._method_rules[name] = rule

    @on("call", 80)
    def _call_method(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if isinstance(func, ast.Attribute) and qual is None:
            self._check_method_call(node, func)

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


def _plain_reference(node: ast.AST) -> bool:
    """A name or a chain of attributes on a name (`rank`, `args.gpu`): cheap and safe to read twice."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
