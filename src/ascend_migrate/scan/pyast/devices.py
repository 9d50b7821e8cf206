"""Device strings (DV001): "cuda", "cuda:0", f"cuda:{rank}", "cuda:{}".format(i), "cuda:" + s.

Both styles' edits: the agnostic style names the run-time device type (`_device_type`), or the
accelerator (`_accel_type or "cuda"`) where "cuda" selects CUDA-only behaviour (AMP, a table
looked up by device type); the transfer style leaves "cuda" to transfer_to_npu."""
from __future__ import annotations

import ast
import re
from typing import Optional

from ascend_migrate.scan.finding import Edit, Position
from ascend_migrate.scan.pyast.context import AMP_DEVICE_CALLS, CUDA_DEVICE
from ascend_migrate.scan.pyast.registry import on
from ascend_migrate.scan.pyast.reporting import ACCEL_TYPE, DEVICE_TYPE, MATCH_PATTERN_NOTE
from ascend_migrate.scan.pyast.resolver import _param_of_default

# The CUDA part of a device string completed at run time: "cuda:{}".format(i), "cuda:%d" % i, "cuda:" + s
BUILT_DEVICE = re.compile(r"^cuda:(\{[^{}]*\}|%[dis]|)$")
DEVICE_KWARGS = {"device", "map_location", "device_type", "device_id", "device_ids", "output_device"}


class DeviceStrings:
    """Mixin of the analyser: the device-string family."""

    @on("constant", 10)
    def _constant_device_string(self, node: ast.Constant, value: str) -> bool:
        if CUDA_DEVICE.match(value):
            self._report_device_string(node, value)
            return True
        return False

    @on("constant", 30)
    def _constant_built_device(self, node: ast.Constant, value: str) -> bool:
        return bool(BUILT_DEVICE.match(value)) and self._report_built_device(node, value)

    @on("fstring", 10)
    def _fstring_device(self, node: ast.JoinedStr) -> None:
        """f"cuda:{rank}": the "cuda" part names the run-time device type."""
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
