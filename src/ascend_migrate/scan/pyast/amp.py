"""Automatic mixed precision (AM001-AM005): `torch.cuda.amp.autocast(...)` and `GradScaler(...)`
become `torch.autocast` / `torch.amp.GradScaler` with a device type, `custom_fwd`/`custom_bwd`
take `device_type=`, positional AMP arguments and a CUDA device type as first argument."""
from __future__ import annotations

import ast
from typing import Optional

from ascend_migrate.knowledge.base import Rule
from ascend_migrate.scan.finding import Edit, Fix
from ascend_migrate.scan.pyast.context import CUDA_DEVICE
from ascend_migrate.scan.pyast.registry import on
from ascend_migrate.scan.pyast.reporting import DEVICE_TYPE, _call_close, _first_arg_start

AUTOCAST_CUDA_PARAMS = ("enabled", "dtype", "cache_enabled")  # torch.cuda.amp.autocast's positional order


class Amp:
    """Mixin of the analyser: the AMP family (the cuda-table findings of AMP names are reported by
    `CudaApi`, which asks this family for their fixes)."""

    @on("call", 20)
    def _call_positional_count(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if qual is None:
            return
        for rule in self.kb.rules_of_kind("positional-count"):
            if qual in rule.match["names"] and len(node.args) >= rule.match["min_args"]:
                self.report(rule, node, qual, count=str(len(node.args)))

    @on("call", 30)
    def _call_first_arg_device(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if qual is None:
            return
        for rule in self.kb.rules_of_kind("first-arg-device"):
            if qual in rule.match["names"]:
                self._check_first_arg_device(rule, node, qual)

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

    def _amp_call_fixes(self, rule: Rule, node: ast.AST, call: ast.Call, call_replace: str, fixes: list[Fix]) -> bool:
        """`torch.cuda.amp.autocast(...)` -> `torch.autocast(DEVICE, ...)` (`GradScaler` alike), added
        to `fixes`; False when the call cannot be rewritten so (more positional arguments than
        autocast takes, or a starred one)."""
        target = "autocast" if call_replace == "autocast" else "amp.GradScaler"
        positional = target == "autocast" and call.args  # torch.autocast orders them differently
        if positional and (len(call.args) > len(AUTOCAST_CUDA_PARAMS)
                           or any(isinstance(a, ast.Starred) for a in call.args)):
            return False
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
        return True

    def _custom_amp_fixes(self, rule: Rule, node: ast.AST, call: Optional[ast.Call], entry) -> list[Fix]:
        edits = self._custom_amp_edits(node, call, entry.agnostic)
        if not edits:
            return []
        return [self._fix("agnostic", rule, edits,
                          f"use {entry.agnostic} with the accelerator type (cuda without one, as before; "
                          f"torch >= {entry.since})",
                          requires=("torch", "device_type", f"torch>={entry.since}"))]

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
