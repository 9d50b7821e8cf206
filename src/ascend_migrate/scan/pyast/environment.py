"""Environment variables, tools and packages (the env-table and env-var rules, NV001/VL006,
PK002): `CUDA_VISIBLE_DEVICES`, `nvidia-smi` in a command string, an import of a CUDA-only
package."""
from __future__ import annotations

import ast
import re

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.scan.pyast.registry import on

PROSE_KEYWORDS = {"help", "description", "epilog", "msg", "message", "doc", "usage"}


class Environment:
    """Mixin of the analyser: the environment family."""

    @on("setup", 20)
    def _setup_environment(self, kb: KnowledgeBase) -> None:
        self._env_table = {name: (spec or {}, rule) for rule in kb.rules_of_kind("env-table")
                           for name, spec in rule.match["vars"].items()}
        self._tools = [(re.compile(r"(?<![\w.-])" + re.escape(tool) + r"(?![\w-])"), tool, note, rule)
                       for rule in kb.rules_of_kind("tool-command") for tool, note in rule.match["tools"].items()]

    @on("constant", 60)
    def _constant_env_table(self, node: ast.Constant, value: str) -> bool:
        if value in self._env_table:
            self._report_env(node, value)
            return True
        return False

    @on("constant", 70)
    def _constant_tool(self, node: ast.Constant, value: str) -> bool:
        return bool(self._tools) and self._report_tool(node, value)

    @on("constant", 80)
    def _constant_env_var(self, node: ast.Constant, value: str) -> bool:
        for rule in self.kb.rules_of_kind("env-var"):
            if re.match(rule.match["pattern"], value):
                fixes = []
                replacement = rule.match.get("replace")
                if replacement:
                    text = self.seg(node).replace(value, replacement)
                    fixes.append(self._fix("transfer", rule, [self._replace(node, text)], f"use {replacement}"))
                self.report(rule, node, value, fixes=fixes)
        return False

    @on("import", 10)
    def _import_package(self, module: str, node: ast.AST) -> None:
        top = module.split(".")[0]
        pkg = self._package_by_import.get(top)
        if pkg is not None:
            rule = self.kb.rule("PK002")
            guarded = self._try_import_depth > 0
            self.report(rule, node, top, detail=pkg.guidance + (" (import is guarded by try/except)" if guarded else ""),
                        severity="warning" if guarded else None)

    def _report_env(self, node: ast.Constant, value: str) -> None:
        spec, rule = self._env_table[value]
        fixes = []
        replacement = spec.get("replace")
        if replacement:
            text = self.seg(node).replace(value, replacement)
            fixes.append(self._fix("transfer", rule, [self._replace(node, text)], f"use {replacement}"))
        self.report(rule, node, value, fixes=fixes, severity=spec.get("level"), detail=spec.get("note", ""))

    def _report_tool(self, node: ast.Constant, value: str) -> bool:
        """nvidia-smi / nvcc named in a command string (subprocess, os.system, shutil.which)."""
        hit = next((t for t in self._tools if t[0].search(value)), None)
        if hit is None:  # most strings name no tool: decide that before looking at the parent
            return False
        parent = self.parent(node)
        if isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
            return False  # {"nvcc": [...flags]}: the extension build, reported as EX002
        if isinstance(parent, ast.keyword) and parent.arg in PROSE_KEYWORDS:
            return False
        _, tool, note, rule = hit
        self.report(rule, node, tool, detail=note)
        return True
