"""Which family checks run at which kind of node, and in which order.

A family module marks the methods the walk calls with `@on(event, rank)`; `scan/python_ast.py`
collects them once (`hooks`) and calls them while it walks the tree, in rank order. Ranks are
unique per event: the order decides which family claims a node first (a claimed node is in
`_handled` and later checks leave it alone) and the order of the findings.

Events and what a hook receives (after `self`, the analyser):

- setup      (kb): build the family's tables for this module
- call       (node, func, qual): every call, before its arguments are visited; `qual` is the
             called name resolved through imports, or None
- qualname   (node, qual) -> bool: a name or attribute resolved to a qualified name; True when
             reported (the walk stops at the longest name a hook reports)
- attribute  (node): an attribute whose value resolves to no qualified name
- constant   (node, value) -> bool: a string outside messages that no check has claimed; True
             stops the constants' chain
- fstring    (node): an f-string outside messages
- compare    (node) -> bool: a comparison; True when the hook has visited its parts itself
- keyword    (node): a keyword argument, before its value is visited
- dict       (entries): a dict literal's or `dict(...)`'s (key, value, node) entries with string keys
- decorator  (dec): a function's decorator, before it is visited
- import     (module, node): an imported module (not a name imported from it)
"""
from __future__ import annotations

from typing import Callable

EVENTS = ("setup", "call", "qualname", "attribute", "constant", "fstring", "compare", "keyword", "dict",
          "decorator", "import")
_HOOKS: dict[str, list[tuple[int, Callable]]] = {event: [] for event in EVENTS}


def on(event: str, rank: int) -> Callable[[Callable], Callable]:
    """Register the decorated method for `event` at `rank` (lower runs first)."""
    if event not in _HOOKS:
        raise ValueError(f"unknown event {event!r}")

    def register(method: Callable) -> Callable:
        name = f"{method.__module__}.{method.__qualname__}"
        kept = [(r, m) for r, m in _HOOKS[event] if f"{m.__module__}.{m.__qualname__}" != name]  # a reloaded module
        taken = [m for r, m in kept if r == rank]
        if taken:
            raise ValueError(f"{event} rank {rank} is taken by {taken[0].__qualname__}")
        _HOOKS[event] = [*kept, (rank, method)]
        return method

    return register


def hooks(event: str) -> tuple[Callable, ...]:
    """The methods registered for `event`, in rank order."""
    return tuple(method for _, method in sorted(_HOOKS[event], key=lambda item: item[0]))
