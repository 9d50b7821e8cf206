"""TensorFlow, vLLM and Ray bits: framework device names ("/gpu:0", TF021), calls whose first
argument names the device kind (`tf.device("/GPU:0")`), GPU-only calls that become `pass`,
options that turn a GPU feature on, and resource tables read for their GPUs
(`ray.available_resources()["GPU"]`)."""
from __future__ import annotations

import ast
import re
from typing import Iterable, Optional

from ascend_migrate.knowledge.base import Rule
from ascend_migrate.scan.finding import Fix
from ascend_migrate.scan.pyast.nodes import _literal_in
from ascend_migrate.scan.pyast.registry import on

# How a framework device name can start ("/gpu:0", "/job:w/...", "gpu:0", "device:GPU:0"): only
# such strings are matched against the device-name rules' patterns.
DEVICE_NAME_STARTS = frozenset("/gGdD")


class Frameworks:
    """Mixin of the analyser: the framework family."""

    @on("constant", 40)
    def _constant_device_name(self, node: ast.Constant, value: str) -> bool:
        return value[:1] in DEVICE_NAME_STARTS and self._report_device_name(node, value)

    @on("call", 40)
    def _call_resource_key(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if qual is None:
            return
        for rule in self.kb.rules_of_kind("resource-key"):
            if qual in rule.match["names"]:
                self._check_resource_key(rule, node, qual)

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
