"""Keyword and setting rules (the keyword, keyword-value and config-value kinds): a keyword a
call, a method or a dict passes (`load_in_8bit=True`, `num_gpus=1`, `{"GPU": 1}`,
`non_blocking="cuda"`), and a config key set to a value the NPU lacks, as a keyword, an absl
flag default or a dataclass field default. Rules of a library apply only in modules that
import it."""
from __future__ import annotations

import ast
import re
from typing import Optional

from ascend_migrate.knowledge.base import Rule
from ascend_migrate.scan.finding import Edit, Fix
from ascend_migrate.scan.pyast.nodes import _is_str, _literal_in
from ascend_migrate.scan.pyast.registry import on
from ascend_migrate.scan.pyast.reporting import _remove_argument


class Settings:
    """Mixin of the analyser: the keyword and setting family."""

    @on("call", 10)
    def _call_keywords(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if qual is None:
            return
        for rule in self.kb.rules_of_kind("keyword"):
            if qual in rule.match["names"]:
                self._check_keywords(rule, node, qual)

    @on("call", 70)
    def _call_setting_values(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if node.keywords or name_of_definer(func):
            self._check_setting_values(node)

    @on("call", 90)
    def _call_method_keywords(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if isinstance(func, ast.Attribute) and qual is None:
            self._check_method_keywords(node, func)

    @on("call", 100)
    def _call_scheduled_keywords(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if node.keywords:
            self._check_scheduled_keywords(node, func, qual)

    @on("call", 110)
    def _call_dict(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if isinstance(func, ast.Name) and func.id == "dict" and self.lookup("dict") is None:
            self._check_dict_entries([(kw.arg, kw.value, kw) for kw in node.keywords if kw.arg])

    @on("dict", 10)
    def _dict_entries(self, entries: list[tuple[str, ast.AST, ast.AST]]) -> None:
        self._check_dict_entries(entries)

    @on("keyword", 10)
    def _keyword_value(self, node: ast.keyword) -> None:
        for rule in self.kb.rules_of_kind("keyword-value"):
            if node.arg in rule.match["keywords"] and _is_str(node.value) and "cuda" in node.value.value:  # type: ignore[union-attr]
                call = self.parent(node)
                edit = _remove_argument(self, call, node) if isinstance(call, ast.Call) else None
                fixes = [self._fix(style, rule, [edit], f"drop {node.arg}") for style in ("transfer", "agnostic")] if edit else []
                self._handled.add(id(node.value))
                self.report(rule, node, f"{node.arg}={node.value.value!r}", fixes=fixes)  # type: ignore[union-attr]

    def _check_keywords(self, rule: Rule, node: ast.Call, qual: str) -> None:
        wanted = rule.match["keywords"]
        allowed = rule.match.get("unless_values", ())
        bad = [kw for kw in node.keywords if kw.arg in wanted and not _literal_in(kw.value, allowed)]
        if not bad:
            return
        ordered = [kw.arg for kw in node.keywords if kw.arg in wanted]
        in_order = ordered == [k for k in wanted if k in ordered] and node.keywords[: len(bad)] == bad
        for kw in bad:
            fixes: list[Fix] = []
            if rule.fix_kind("transfer") != "manual" and in_order:
                edit = Edit(self.start(kw), self.start(kw.value), "")
                fixes = [self._fix(style, rule, [edit], f"pass `{kw.arg}` positionally") for style in ("transfer", "agnostic")]
            self.report(rule, kw, qual, fixes=fixes, keyword=kw.arg or "")

    def _setting_rules_here(self) -> list[Rule]:
        return [rule for rule in self.kb.rules_of_kind("config-value")
                if any(self._imports_module(m) for m in rule.match.get("in_modules_importing", ()))]

    def _check_setting_values(self, node: ast.Call) -> None:
        """config-value rules in Python: a config key passed as a keyword argument
        (`get_distribution_strategy(distribution_strategy="mirrored", all_reduce_alg="nccl")`) or
        defined as an absl flag with that default (`flags.DEFINE_string("distribution_strategy",
        "mirrored", ...)`), with a literal value the rule reports. The value is claimed, so the
        generic nccl finding does not also offer its `hccl` rewrite for it."""
        rules = self._setting_rules_here()
        if not rules:
            return
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        pairs: list[tuple[str, ast.AST, ast.AST, str]] = []
        if name.startswith("DEFINE_"):
            key = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            default = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "default"), None)
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and default is not None:
                pairs.append((key.value, default, default, f"--{key.value} default"))
        else:
            pairs += [(kw.arg, kw.value, kw, kw.arg) for kw in node.keywords if kw.arg]
            # a dataclass field's default (`optim: str = field(default="paged_adamw_32bit")`): the
            # option a HfArgumentParser builds from the field's name
            owner = self.parent(node)
            if name == "field" and isinstance(owner, ast.AnnAssign) and owner.value is node \
                    and isinstance(owner.target, ast.Name):
                default = next((k.value for k in node.keywords if k.arg == "default"), None)
                if default is not None:
                    pairs.append((owner.target.id, default, default, f"{owner.target.id} default"))
        for rule in rules:
            keys = rule.match["keys"]
            for key, value, where, label in pairs:
                spec = keys.get(key)
                if spec is None or not isinstance(value, ast.Constant) or value.value is None:
                    continue
                if re.fullmatch(spec["values"], str(value.value)):
                    self._handled.add(id(value))
                    new = (spec.get("replace") or {}).get("python")
                    fixes = [self._fix(style, rule, [self._replace(value, new)], f"set {key} to {new}")
                             for style in ("transfer", "agnostic") if rule.fix_kind(style) == "safe"] if new else []
                    self.report(rule, where, f"{label}={value.value!r}", fixes=fixes, detail=spec["note"])

    def _imports_module(self, top: str) -> bool:
        """Does this module import `top` (or a submodule of it) anywhere?

        Method and dict-entry keywords (`model.compile(jit_compile=True)`, `{"GPU": 1}`) are only
        meaningful for one library; a rule names the libraries whose import makes them so."""
        cache = self.__dict__.setdefault("_imports_cache", {})
        if top not in cache:
            cache[top] = import_line_pattern(top).search(self._source_text) is not None
        return cache[top]

    def _keyword_rules_here(self) -> list[Rule]:
        """Keyword rules whose library this module imports (decided once per module: this runs
        for every dict, keyword call and method call of the file)."""
        held = self.__dict__.get("_keyword_rules_cache")
        if held is None:
            held = self.__dict__["_keyword_rules_cache"] = [
                rule for rule in self.kb.rules_of_kind("keyword")
                if any(self._imports_module(m) for m in rule.match.get("in_modules_importing", ()))]
        return held

    def _check_method_keywords(self, node: ast.Call, func: ast.Attribute) -> None:
        """Keyword rules on methods of objects the scan cannot name (`model.compile(...)`,
        `Actor.options(num_gpus=1)`), in modules that import the rule's library."""
        for rule in self._keyword_rules_here():
            if func.attr in rule.match.get("methods", ()):
                self._check_keywords(rule, node, f".{func.attr}")

    def _check_scheduled_keywords(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        """Keyword rules on calls no name or method of theirs selects, when the call also carries
        one of the rule's scheduling keywords: `make_worker(placement_group=pg, num_gpus=n)`
        forwards both to Ray, while `throughput(num_gpus=n)` is any function's parameter."""
        for rule in self._keyword_rules_here():
            companions = rule.match.get("with_scheduling_keywords", ())
            if not companions or (qual is not None and qual in rule.match["names"]):
                continue
            if isinstance(func, ast.Attribute) and qual is None and func.attr in rule.match.get("methods", ()):
                continue  # `.options(...)`: the method check has it
            if any(kw.arg in companions for kw in node.keywords):
                label = func.id if isinstance(func, ast.Name) else \
                    f".{func.attr}" if isinstance(func, ast.Attribute) else self.seg(func)[:40]
                self._check_keywords(rule, node, label)

    def _check_dict_entries(self, entries: list[tuple[str, ast.AST, ast.AST]]) -> None:
        """Keyword rules whose settings also travel in dicts (`{"quantization": "awq"}`,
        `dict(num_gpus=1)`, a Ray bundle `{"GPU": 1}`): a literal value is needed, since a dict
        entry is read only for what it says, not for how a call uses it, unless the key itself
        is the setting (`dict_keys_any_value`: `{"GPU": per_worker}` asks Ray for GPUs)."""
        for rule in self._keyword_rules_here():
            keys = rule.match.get("dict_keys", ())
            any_value = rule.match.get("dict_keys_any_value", ())
            allowed = rule.match.get("unless_values", ())
            for key, value, node in entries:
                if key not in keys:
                    continue
                if isinstance(value, ast.Constant):
                    if value.value is not None and not _literal_in(value, allowed):
                        self.report(rule, node, f'{{"{key}": ...}}', keyword=key)
                elif key in any_value:
                    self.report(rule, node, f'{{"{key}": ...}}', keyword=key)


def name_of_definer(func: ast.AST) -> bool:
    """Is `func` an absl-style flag definer (`flags.DEFINE_string`, `DEFINE_enum`)?"""
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name.startswith("DEFINE_")


def import_line_pattern(top: str) -> "re.Pattern[str]":
    """A line that imports `top` or a submodule of it (`import top`, `from top.x import y`).

    Anchored at a line start and built from the escaped name only, so it stays linear on any
    line (the regex audit builds it for every library a keyword rule names)."""
    return re.compile(r"(?m)^[ \t]*(?:import|from)[ \t]+" + re.escape(top) + r"\b")
