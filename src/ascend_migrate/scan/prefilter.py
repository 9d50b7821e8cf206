r"""Which Python files need the full analysis, derived from the knowledge base.

Every qualified name the analyser resolves is spelled out literally somewhere in the file: an
import path plus attribute names, each component written in the source. So a file can only
produce a finding for a rule if it contains one of that rule's tokens (for `torch.nn.DataParallel`,
"DataParallel"). The tokens of every rule, plus the names behind the per-file facts (the
`__main__` guard, torch_npu imports, CUDA-only package imports), form one regex; a file that
matches none of them cannot have a finding and skips the analyser.

Such a file may still import a framework (FW001 is placed at the first import of PyTorch, JAX,
...), so it gets a parse and a walk over its import statements, about a tenth of the analysis.

The match runs on the decoded text (any source encoding), NFKC-normalised when it is not ASCII
(Python normalises identifiers, so `torch.ｃｕｄａ` is `torch.cuda`); a file with `\x`, `\u`,
`\N` or octal escapes always gets the full analysis, since an escape can spell a token. One gap
remains by design: a token split across adjacent string literals (`"cu" "da"`) is not seen.
"""
from __future__ import annotations

import ast
import re
import unicodedata
from typing import Iterable

from ascend_migrate.knowledge.base import KnowledgeBase

# Facts the analyser records besides findings: entry points and transfer_to_npu imports.
FACT_TOKENS = ("__main__", "torch_npu")
# Match kinds whose findings never come from Python source.
NON_PYTHON_KINDS = frozenset({"parse-error", "cuda-source", "dependency", "framework", "dependency-index",
                              "framework-pin", "cli-flag"})
# Kinds whose rules name no token of their own: every form they match spells "cuda" or "nccl".
_KIND_TOKENS = {
    "cuda-table": ("cuda",),
    "device-string": ("cuda",),
    "device-check": ("cuda",),
    "dynamic": ("cuda",),
    "cuda-private": ("cuda",),
    "nccl": ("nccl",),
}

_cache: dict[int, tuple[KnowledgeBase, "re.Pattern[str]"]] = {}
# An escape in a literal can spell any token ("\x63uda" is "cuda").
_ESCAPE = re.compile(r"\\(?:[xuUN0-7])")


# Components too common to tell a file apart; any other component of the name will do.
_COMMON = frozenset({"torch", "nn", "utils", "parallel", "distributed", "backends", "version", "amp"})


def _rarest_component(qualname: str) -> str:
    """The component to look for: every component of a resolved name is written in the file."""
    parts = qualname.split(".")
    cuda_like = [p for p in parts if re.search("cuda|cudnn|nccl", p, re.I)]
    if cuda_like:  # torch.backends.cudnn.benchmark: "cudnn" is rarer than "benchmark"
        return min(cuda_like, key=len)
    return max((p for p in parts if p not in _COMMON), key=len, default=max(parts, key=len))


def _literal_prefix(pattern: str) -> str:
    """The literal text a regex starts with (`^NCCL_[A-Z]+$` -> `NCCL_`)."""
    out = []
    for ch in pattern.lstrip("^"):
        if ch.isalnum() or ch == "_":
            out.append(ch)
        else:
            break
    return "".join(out)


def rule_tokens(kb: KnowledgeBase) -> dict[str, tuple[str, ...]]:
    """rule id -> strings, one of which a Python file must contain for the rule to fire.

    Raises ValueError for a match kind this module does not know, so a new kind cannot slip past
    the prefilter unnoticed.
    """
    out: dict[str, tuple[str, ...]] = {}
    for rule in kb.rules.values():
        kind = rule.match["kind"]
        if kind in NON_PYTHON_KINDS:
            continue
        tokens: list[str] = list(_KIND_TOKENS.get(kind, ()))
        names = list(rule.match.get("names", ()))
        if kind in ("qualname", "keyword", "call-attribute", "positional-count", "first-arg-device",
                    "decorator", "float64", "guarded-capability", "cuda-version", "module-prefix",
                    "resource-key", "device-ids"):
            tokens += [_rarest_component(n) for n in names]
            tokens += list(rule.match.get("methods", ()))
            tokens += list(rule.match.get("dict_keys", ()))
            if kind == "module-prefix":
                tokens += [_rarest_component(n) for n in rule.match.get("keywords", {})]
        elif kind == "path-argument":
            tokens.append("cuda")  # the rule needs a path that contains it
        elif kind in ("method-call", "attribute"):
            tokens += names
            tokens += [_rarest_component(n) for n in rule.match.get("qualnames", ())]
        elif kind == "keyword-value":
            tokens += list(rule.match.get("keywords", ()))
        elif kind == "env-var":
            prefix = _literal_prefix(rule.match["pattern"])
            if not prefix:
                raise ValueError(f"{rule.id}: env-var pattern has no literal prefix for the prefilter")
            tokens.append(prefix)
        elif kind == "env-table":
            tokens += list(rule.match["vars"])
        elif kind == "config-value":  # the same settings as keywords or absl flag defaults
            tokens += list(rule.match["keys"])
        elif kind == "device-name":  # the pattern ignores case: the rule names its spellings
            tokens += list(rule.match["tokens"])
        elif kind == "tool-command":
            tokens += list(rule.match["tools"])
        elif kind == "package-import":
            tokens += [imp for pkg in kb.packages for imp in pkg.imports]
        elif kind not in _KIND_TOKENS:
            raise ValueError(f"{rule.id}: the prefilter does not know match kind {kind!r}")
        if not tokens:
            raise ValueError(f"{rule.id}: no prefilter token")
        out[rule.id] = tuple(dict.fromkeys(tokens))
    return out


_ANY_CASE = ("cuda", "nccl")


def _regex(tokens: Iterable[str]) -> "re.Pattern[str]":
    """cuda and nccl match anywhere in any case (CUDA_VISIBLE_DEVICES, NCCL_DEBUG, CUDAExtension,
    is_cuda); every other token is an identifier and matches only as a whole word, so `script`
    does not match `description`."""
    words = sorted({t for t in tokens if not any(a in t.lower() for a in _ANY_CASE)}, key=lambda t: (-len(t), t))
    alternatives = [r"(?i:cuda|nccl)"]
    if words:
        alternatives.append(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")
    return re.compile("|".join(alternatives))


def pattern(kb: KnowledgeBase) -> "re.Pattern[str]":
    """The compiled prefilter for this knowledge base (built once per knowledge base)."""
    hit = _cache.get(id(kb))
    if hit is not None and hit[0] is kb:
        return hit[1]
    tokens = [t for ts in rule_tokens(kb).values() for t in ts] + list(FACT_TOKENS)
    compiled = _regex(tokens)
    _cache[id(kb)] = (kb, compiled)
    return compiled


def needs_analysis(text: str, kb: KnowledgeBase) -> bool:
    """Whether the decoded source `text` can have a finding or an entry-point fact."""
    if _ESCAPE.search(text):
        return True
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return pattern(kb).search(text) is not None


def framework_imports(tree: ast.Module, kb: KnowledgeBase) -> dict[str, int]:
    """framework key -> line of its first import, as the analyser records it."""
    by_import = {imp: fw.key for fw in kb.frameworks for imp in fw.imports}
    found: dict[str, int] = {}
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules = [node.module]
        else:
            continue
        for module in modules:
            key = by_import.get(module.split(".")[0])
            if key is not None and (key not in found or node.lineno < found[key]):
                found[key] = node.lineno
    return found


_NESTED = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(body: list) -> Iterable[ast.AST]:
    """Every statement, however nested (imports are statements; expressions, the bulk of a tree,
    cannot hold one), without walking expressions as ast.walk would."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        for name in _NESTED:
            child = getattr(node, name, None)
            if isinstance(child, list):
                stack.extend(reversed(child))
