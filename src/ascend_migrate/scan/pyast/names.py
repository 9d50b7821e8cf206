"""Rules that name an API (the qualname, float64, attribute, module-prefix and decorator kinds):
`DataParallel`, `torch.utils.cpp_extension.load`, `torch.float64`, `config.gpu_options`, a
package's module prefix. A rule's match options say when a use is harmless: only asked about
in `isinstance`, a C++-only build, an option turned off, float64 weights of a sampler."""
from __future__ import annotations

import ast
from typing import Callable, Optional

from ascend_migrate.knowledge.base import KnowledgeBase, Rule
from ascend_migrate.scan.pyast.nodes import _is_str
from ascend_migrate.scan.pyast.registry import on


class Names:
    """Mixin of the analyser: the named-API family."""

    @on("setup", 10)
    def _setup_names(self, kb: KnowledgeBase) -> None:
        self._qual_rules: dict[str, Rule] = {}
        for rule in (*kb.rules_of_kind("qualname"), *kb.rules_of_kind("float64")):
            for name in rule.match["names"]:
                self._qual_rules[name] = rule
        # attribute rules on objects (config.gpu_options) may name constructors too (tf.GPUOptions)
        self._attr_rules: dict[str, Rule] = {}
        for rule in kb.rules_of_kind("attribute"):
            for name in rule.match.get("qualnames", ()):
                self._qual_rules[name] = rule
            for name in rule.match["names"]:
                if name != "is_cuda":
                    self._attr_rules[name] = rule
        self._prefix_rules = [(name, rule) for rule in kb.rules_of_kind("module-prefix") for name in rule.match["names"]]
        self._prefix_keywords = {call: (kw, rule) for rule in kb.rules_of_kind("module-prefix")
                                 for call, kw in rule.match.get("keywords", {}).items()}

    @on("qualname", 40)
    def _qualname_rule(self, node: ast.AST, qual: str) -> bool:
        rule = self._qual_rules.get(qual)
        if rule is None:
            return False
        if rule.id == "CU101":
            self._report_capability(rule, node, qual)
        elif rule.match.get("not_in_type_checks") and self._in_type_check(node):
            pass  # isinstance(model, DataParallel) only asks; it creates nothing
        elif rule.match.get("builds") and not self._builds_cuda(node, rule.match["builds"].get(qual)):
            pass  # a C++-only extension build works on any host
        elif qual in rule.match.get("when_options_on", {}) and not self._turns_option_on(
                node, rule.match["when_options_on"][qual]):
            pass  # set_experimental_options({"auto_mixed_precision": False}) or other options
        elif rule.match.get("unless_args") and self._first_arg_in(node, rule.match["unless_args"]):
            pass  # the call turns the GPU setting off (`set_jit(False)`, a float32 policy)
        elif rule.match["kind"] == "float64" and self._sampler_weights_only(node):
            pass  # float64 weights a WeightedRandomSampler draws from on the CPU
        elif rule.match.get("arg_pattern"):
            self._report_if_arg_matches(rule, node, qual)
        elif rule.match.get("drop_statement"):
            self.report(rule, node, qual, fixes=self._drop_call_statement(rule, node))
        elif qual in rule.match.get("ports", {}):
            if isinstance(getattr(node, "ctx", None), ast.Load) and not isinstance(node, ast.Name):
                pass  # reading the switch sets nothing (the ported line reads it back)
            else:
                fixes = self._switch_port_fixes(rule, node, rule.match["ports"][qual])
                if fixes is not None:  # None: the switch's npu counterpart already follows it
                    self.report(rule, node, qual, fixes=fixes)
        else:
            self.report(rule, node, qual)
        return True

    @on("qualname", 50)
    def _qualname_prefix(self, node: ast.AST, qual: str) -> bool:
        for prefix, prefix_rule in self._prefix_rules:
            if qual == prefix or qual.startswith(prefix + "."):
                self.report(prefix_rule, node, qual)
                return True
        return False

    @on("attribute", 20)
    def _attribute_rule(self, node: ast.Attribute) -> None:
        if node.attr in self._attr_rules:
            self.report(self._attr_rules[node.attr], node, self.seg(node))

    @on("call", 60)
    def _call_prefix_keyword(self, node: ast.Call, func: ast.AST, qual: Optional[str]) -> None:
        if qual is None:
            return
        hit = self._prefix_keywords.get(qual)
        if hit is not None:
            keyword, rule = hit
            for kw in node.keywords:
                if kw.arg == keyword and not (isinstance(kw.value, ast.Constant) and not kw.value.value):
                    self.report(rule, kw, f"{qual}({keyword}=...)")

    @on("decorator", 10)
    def _decorator_rule(self, dec: ast.AST) -> None:
        self._check_decorator(dec)

    def _check_decorator(self, dec: ast.AST) -> None:
        target = dec.func if isinstance(dec, ast.Call) else dec
        qual = self.qualname(target)
        for rule in self.kb.rules_of_kind("decorator"):
            if qual in rule.match["names"]:
                self.report(rule, dec, qual)

    def _builds_cuda(self, node: ast.AST, spec: Optional[dict]) -> bool:
        """Whether an extension build call compiles CUDA code. Unknown (not a call, sources not
        literal) counts as yes. `spec`: {argument, position, suffixes} of the argument holding
        CUDA sources (for load_inline) or all sources (for load, checked by suffix)."""
        call = self.parent(node)
        if spec is not None and isinstance(node, ast.Name) and node.id in self._alias_names and not (
                isinstance(call, ast.Call) and call.func is node):
            return False  # `build = load_inline` was reported where the alias was made
        if spec is None or not (isinstance(call, ast.Call) and call.func is node):
            return True
        for kw in call.keywords:
            if kw.arg == "with_cuda" and isinstance(kw.value, ast.Constant):
                return bool(kw.value.value)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return True
        value = next((k.value for k in call.keywords if k.arg == spec["argument"]), None)
        if value is None and len(call.args) > spec["position"]:
            value = call.args[spec["position"]]
        suffixes = tuple(spec.get("suffixes", ()))
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return False
        if isinstance(value, (ast.List, ast.Tuple)):
            if not suffixes:
                return bool(value.elts)
            if all(_is_str(e) for e in value.elts):
                return any(e.value.endswith(suffixes) for e in value.elts)  # type: ignore[attr-defined]
            return True
        if suffixes and _is_str(value):
            return value.value.endswith(suffixes)  # type: ignore[attr-defined]
        return True

    def _sampler_weights_only(self, node: ast.AST) -> bool:
        """`torch.DoubleTensor(w)` (or `torch.tensor(w, dtype=torch.double)`) whose value only
        becomes the weights of a `WeightedRandomSampler`, directly or through one local name
        bound once (its length may be read too): the sampler keeps its weights on the CPU (it converts them to float64
        itself) and draws indices there, so nothing float64 reaches the device."""
        call = self.parent(node)
        if isinstance(call, ast.keyword) and call.arg == "dtype":
            call = self.parent(call)
        elif not (isinstance(call, ast.Call) and call.func is node):
            return False
        if not isinstance(call, ast.Call):
            return False
        if _sampler_weights_argument(call, self.parent):
            return True
        holder = self.parent(call)
        if not (isinstance(holder, ast.Assign) and holder.value is call and len(holder.targets) == 1
                and isinstance(holder.targets[0], ast.Name)):
            return False
        name = holder.targets[0].id
        scope = next((n for n in reversed(self._stack)
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))), None)
        if scope is None:
            return False
        loads, stores = [], 0
        for n in ast.walk(scope):
            if isinstance(n, ast.Name) and n.id == name:
                if isinstance(n.ctx, ast.Load):
                    loads.append(n)
                else:
                    stores += 1
        def sized(n: ast.AST) -> bool:  # len(weights): the sampler's num_samples
            p = self.parent(n)
            return isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "len" and p.args == [n]
        feeds = [n for n in loads if _sampler_weights_argument(n, self.parent)]
        return stores == 1 and bool(feeds) and all(n in feeds or sized(n) for n in loads)


def _sampler_weights_argument(node: ast.AST, parent_of: Callable[[ast.AST], Optional[ast.AST]]) -> bool:
    """Is `node` the weights of a `WeightedRandomSampler(...)` call (first argument or `weights=`)?"""
    parent = parent_of(node)
    if isinstance(parent, ast.keyword):
        call = parent_of(parent) if parent.arg == "weights" else None
        return isinstance(call, ast.Call) and _names_sampler(call)
    return isinstance(parent, ast.Call) and _names_sampler(parent) and bool(parent.args) and parent.args[0] is node


def _names_sampler(call: ast.Call) -> bool:
    func = call.func
    return (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "") \
        == "WeightedRandomSampler"
