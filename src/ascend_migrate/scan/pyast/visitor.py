"""A faster ast.NodeVisitor with the same visiting order."""
from __future__ import annotations

import ast

# Fields that only ever hold marker nodes (Load/Store, operators): nothing to visit there.
_MARKER_FIELDS = frozenset({"ctx", "op", "ops"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


class FastVisitor(ast.NodeVisitor):
    """ast.NodeVisitor with the same visiting order, at about half the cost per node.

    The stdlib visitor looks the method up by name for every node and descends into marker
    nodes (each `Name`'s `Load`, each operator); on a large tree that bookkeeping costs more
    than the analysis. Here the method is looked up once per node class and marker fields are
    not entered: no visitor in this package defines a method for a marker class (a test checks).
    """

    _dispatch: dict[type, str] = {}  # node class -> method name; each subclass gets its own

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}

    def visit(self, node: ast.AST):
        cls = node.__class__
        name = self._dispatch.get(cls)
        if name is None:
            name = "visit_" + cls.__name__
            if not hasattr(self, name):
                name = "generic_visit"
            self._dispatch[cls] = name
        return getattr(self, name)(node)

    def generic_visit(self, node: ast.AST) -> None:
        cls = node.__class__
        fields = _CHILD_FIELDS.get(cls)
        if fields is None:
            fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _MARKER_FIELDS)
        visit = self.visit
        AST = ast.AST
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, AST):
                        visit(item)
            elif isinstance(value, AST):
                visit(value)
