"""CUDA calls and names (CU001, CU002, the cuda-table rules, CU111, CU112): what transfer_to_npu
maps, what it does not, and the agnostic style's device-module edits."""
from __future__ import annotations

import ast
from typing import Optional

from ascend_migrate.knowledge.base import KnowledgeBase, Rule
from ascend_migrate.scan.finding import Fix
from ascend_migrate.scan.pyast.registry import on
from ascend_migrate.scan.pyast.reporting import ACCEL_TYPE


class CudaApi:
    """Mixin of the analyser: the CUDA-API family."""

    @on("setup", 40)
    def _setup_cuda_api(self, kb: KnowledgeBase) -> None:
        self._private_rule = next(iter(kb.rules_of_kind("cuda-private")), None)

    @on("qualname", 30)
    def _qualname_cuda_table(self, node: ast.AST, qual: str) -> bool:
        entry = self.kb.cuda_names.get(qual)
        if entry is None:
            return False
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

    @on("qualname", 60)
    def _qualname_private(self, node: ast.AST, qual: str) -> bool:
        return self._private_rule is not None and qual.startswith("torch.cuda.") and self._report_private(node, qual)

    @on("qualname", 70)
    def _qualname_unknown_cuda(self, node: ast.AST, qual: str) -> bool:
        if qual.startswith("torch.cuda.") and not any(p.startswith("_") for p in qual.split(".")[2:]):
            parts = qual.split(".")
            # Only unknown *direct* names (attributes of known objects are covered above).
            if len(parts) == 3 or (len(parts) == 4 and f"torch.cuda.{parts[2]}" not in self.kb.cuda_names):
                self.report(self.kb.rule("CU002"), node, qual, confidence="medium")
                return True
        return False

    @on("call", 120)
    def _call_getattr(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2:
            self._check_dynamic(node)

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
            if not self._amp_call_fixes(rule, node, call, call_replace, fixes):  # the AMP family's edits
                return fixes
        elif rule.id == "AM003" and entry.agnostic:
            fixes += self._custom_amp_fixes(rule, node, call, entry)
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

    def _check_dynamic(self, node: ast.Call) -> None:
        base = self.qualname(node.args[0])
        name = node.args[1]
        if base == "torch" and isinstance(name, ast.Constant) and name.value == "cuda":
            self.report(self.kb.rule("CU111"), node, 'getattr(torch, "cuda")')
            self._handled.add(id(name))
        elif base is not None and base.startswith("torch.cuda") and not isinstance(name, ast.Constant):
            self.report(self.kb.rule("CU111"), node, f"getattr({base}, ...)")
