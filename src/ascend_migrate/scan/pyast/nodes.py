"""Small predicates on syntax nodes that several rule families share."""
from __future__ import annotations

import ast
from typing import Iterable, Optional


def _is_str(node: ast.AST, value: Optional[str] = None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and (value is None or node.value == value)


def _literal_in(node: Optional[ast.AST], values: Iterable[object]) -> bool:
    """Is `node` a literal equal to one of `values` (same type: `False` is not `0`)?

    Rules list the literal values that turn a setting off or name what the NPU runs
    (`jit_compile=False`, `set_jit(False)`, `num_gpus=0`, `quantization="ascend"`)."""
    if not isinstance(node, ast.Constant):
        return False
    return any(type(v) is type(node.value) and v == node.value for v in values)


def _catches(node: ast.Try, names: set[str]) -> bool:
    for handler in node.handlers:
        if handler.type is None:
            return True
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for t in types:
            label = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            if label in names:
                return True
    return False
