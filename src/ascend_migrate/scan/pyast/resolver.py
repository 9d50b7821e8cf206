"""Name resolution: scopes, imports, aliases, qualified names and shadowing.

`import torch.cuda as tc`, `from torch import cuda`, `tc = torch.cuda` and
`torch = pytest.importorskip("torch")` all bind a name to a qualified name; parameters,
assignments and other bindings shadow it in their scope."""
from __future__ import annotations

import ast
from typing import Iterable, Optional, Union

from ascend_migrate.scan.pyast.visitor import FastVisitor

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]


class _Scope:
    __slots__ = ("names", "is_class")

    def __init__(self, names: dict[str, Optional[str]], is_class: bool = False) -> None:
        self.names = names
        self.is_class = is_class


def _import_bindings(node: Union[ast.Import, ast.ImportFrom]) -> Iterable[tuple[str, str]]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, alias.name
            else:
                top = alias.name.split(".")[0]
                yield top, top
    else:
        if node.level or not node.module:
            return
        for alias in node.names:
            if alias.name == "*":
                continue
            yield alias.asname or alias.name, f"{node.module}.{alias.name}"


_IMPORTING_CALLS = {("pytest", "importorskip"), ("importlib", "import_module")}


def imported_module(value: ast.AST) -> Optional[str]:
    """The module that `value` imports and returns when it is a call that works like an import
    statement: `pytest.importorskip("torch")` (test modules that skip without torch) or
    `importlib.import_module("torch.cuda")`, also called by their bare names. The name it is
    assigned to is then that module, exactly as after `import torch as name`; without this the
    CUDA calls made through it go unseen, and they surface only once a rewrite has added a
    plain `import torch` (a second pass would then change the file again)."""
    if not isinstance(value, ast.Call) or not value.args:
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        known = (func.value.id, func.attr) in _IMPORTING_CALLS
    elif isinstance(func, ast.Name):
        known = any(func.id == attr for _, attr in _IMPORTING_CALLS)
    else:
        known = False
    first = value.args[0]
    if not known or not isinstance(first, ast.Constant) or not isinstance(first.value, str):
        return None
    module = first.value
    if not module or module.startswith(".") or not all(part.isidentifier() for part in module.split(".")):
        return None
    return module


def _target_names(target: ast.AST) -> Iterable[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


class _BindingCollector(FastVisitor):
    """Collect the names a scope binds, without entering nested scopes.

    expressions=False: the module has no `:=`, so no expression binds a name and expression
    subtrees (most of the nodes) are not entered."""

    def __init__(self, expressions: bool = True) -> None:
        self.expressions = expressions
        self.imports: dict[str, str] = {}
        self.others: set[str] = set()
        self.aliases: list[tuple[str, ast.AST]] = []  # name = <expression> candidates
        self.globals: set[str] = set()

    def collect(self, body: Iterable[ast.stmt]) -> None:
        for stmt in body:
            self.visit(stmt)

    def visit(self, node: ast.AST):
        if not self.expressions and isinstance(node, ast.expr):
            return None
        return FastVisitor.visit(self, node)

    def visit_Import(self, node: ast.Import) -> None:
        for name, qual in _import_bindings(node):
            self.imports.setdefault(name, qual)

    visit_ImportFrom = visit_Import  # type: ignore[assignment]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.others.add(node.name)
        for dec in node.decorator_list:
            self.visit(dec)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.others.add(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return

    def visit_ListComp(self, node: ast.AST) -> None:
        return

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_Global(self, node: ast.Global) -> None:
        self.globals.update(node.names)

    visit_Nonlocal = visit_Global  # type: ignore[assignment]

    def visit_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.aliases.append((node.targets[0].id, node.value))
        for target in node.targets:
            self.others.update(_target_names(target))
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.others.update(_target_names(node.target))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.others.update(_target_names(node.target))

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.others.update(_target_names(node.target))
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self.others.update(_target_names(node.target))
        self.generic_visit(node)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self.others.update(_target_names(node.optional_vars))

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.others.add(node.name)
        self.generic_visit(node)


def _function_params(node: FunctionNode) -> list[str]:
    a = node.args
    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if a.vararg:
        params.append(a.vararg.arg)
    if a.kwarg:
        params.append(a.kwarg.arg)
    return params


def _param_of_default(args: ast.arguments, default: ast.AST) -> Optional[str]:
    """The name of the parameter whose default value is `default`."""
    positional = (*args.posonlyargs, *args.args)
    for param, value in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if value is default:
            return param.arg
    for param, kw_value in zip(args.kwonlyargs, args.kw_defaults):
        if kw_value is default:
            return param.arg
    return None


class Resolver:
    """Mixin of the analyser: the scope chain and what a name or attribute chain stands for.

    Needs `scopes`, `outer`, `module_names`, `tree`, `_walrus`, `_alias_names`, `_package_by_import`."""

    # ----------------------------------------------------------------- name resolution
    def _push_scope(self, body: Iterable[ast.stmt], params: Iterable[str] = (), is_class: bool = False) -> None:
        collector = _BindingCollector(expressions=self._walrus)
        collector.collect(body)
        names: dict[str, Optional[str]] = {p: None for p in params}
        for name in collector.others:
            names[name] = None
        for name, qual in collector.imports.items():
            names[name] = qual
        self.scopes.append(_Scope(names, is_class))
        # Simple aliases (`tc = torch.cuda`) are resolved after the scope exists, in order.
        for name, value in collector.aliases:
            if name in collector.imports:
                continue
            module = imported_module(value)
            if module is not None and (module.split(".")[0] == "torch" or module.split(".")[0] in self._package_by_import):
                self.scopes[-1].names[name] = module  # bound as by an import statement
                continue
            qual = self.qualname(value)
            if qual is not None and (qual.startswith("torch") or qual.split(".")[0] in self._package_by_import):
                self.scopes[-1].names[name] = qual
                self._alias_names.add(name)
        for name in collector.globals:
            self.scopes[-1].names.pop(name, None)

    # ----------------------------------------------------------------- traversal
    def _enter_module(self) -> None:
        if self.outer:
            self.scopes.append(_Scope(dict(self.outer), False))
        self._push_scope(self.tree.body)
        self.module_names = self.scopes[-1].names

    def bind_only(self) -> dict[str, Optional[str]]:
        """Module-level bindings without analysing anything (for the next notebook cell)."""
        self._enter_module()
        return self.exported_names()

    def exported_names(self) -> dict[str, Optional[str]]:
        """Module-level bindings as the next notebook cell sees them (after `run`)."""
        return {**self.outer, **self.module_names}

    def lookup(self, name: str) -> Optional[str]:
        innermost = True
        for scope in reversed(self.scopes):
            if scope.is_class and not innermost:
                continue
            innermost = False
            if name in scope.names:
                return scope.names[name]
        return None

    def qualname(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def torch_name(self) -> Optional[str]:
        """A name bound to the torch module in the current scope chain, preferring `torch`."""
        if self.lookup("torch") == "torch":
            return "torch"
        for scope in reversed(self.scopes):
            for name, qual in scope.names.items():
                if qual == "torch" and self.lookup(name) == "torch":
                    return name
        return None

    def _visit_comprehension(self, node: ast.AST) -> None:
        names: list[str] = []
        for gen in node.generators:  # type: ignore[attr-defined]
            names.extend(_target_names(gen.target))
        self.scopes.append(_Scope({n: None for n in names}))
        self.generic_visit(node)
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension  # type: ignore[assignment]
