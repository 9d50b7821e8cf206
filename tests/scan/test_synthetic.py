"""Synthetic tests generated from the knowledge base.

Every torch.cuda name and every qualified-name rule fires under every import style, and a
negative twin of each (shadowed name; the same text in a comment, docstring or log message)
does not.
"""
import pytest

from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.engine import Job, analyse

KB = load_knowledge()


def _import_styles(qual: str):
    """(header, expression) pairs that all reach `qual` through a different import form."""
    parts = qual.split(".")
    yield f"import {parts[0]}", qual
    yield f"import {parts[0]} as th", "th." + ".".join(parts[1:])
    if len(parts) >= 3:
        parent, leaf = ".".join(parts[:-1]), parts[-1]
        yield f"import {parent} as m", f"m.{leaf}"
        yield f"from {parent} import {leaf}", leaf
        yield f"from {parent} import {leaf} as renamed", "renamed"
        grand, mid = ".".join(parts[:-2]), parts[-2]
        yield f"from {grand} import {mid}", f"{mid}.{leaf}"


def _targets():
    for qual, entry in KB.cuda_names.items():
        yield qual, None
    for rule in KB.rules_of_kind("qualname"):
        for name in rule.match["names"]:
            yield name, rule.id


# Rules that read the call's device argument fire on a call naming the GPU.
_CALLED = {name for rule in KB.rules_of_kind("qualname") if rule.match.get("arg_pattern")
           for name in rule.match["names"]}


# Calls that set many options fire on a literal dict turning the rule's option on.
_OPTIONS = {name: options[0] for rule in KB.rules_of_kind("qualname")
            for name, options in rule.match.get("when_options_on", {}).items()}


# Switches reported where they are set (reading one sets nothing).
_SET_ONLY = {name for rule in KB.rules_of_kind("qualname") for name in rule.match.get("ports", {})}


def _statement(qual: str, expr: str) -> str:
    return f"{expr} = True" if qual in _SET_ONLY else f"value = {_use(qual, expr)}"


def _use(qual: str, expr: str) -> str:
    if qual in _OPTIONS:
        return f'{expr}({{"{_OPTIONS[qual]}": True}})'
    return f'{expr}("/GPU:0")' if qual in _CALLED else expr


def _expected_rule(qual: str, explicit):
    if explicit:
        return explicit
    entry = KB.cuda_names[qual]
    rule = KB.rule(entry.rule)
    if rule.match["kind"] not in ("cuda-table", "qualname"):
        return "CU001" if entry.transfer != "none" else "CU002"
    return entry.rule


TARGETS = sorted(set(_targets()), key=lambda t: t[0])


def _rules(source: str) -> set[str]:
    return {f.rule for f in analyse(Job("t.py", "python"), source.encode(), KB).findings}


def test_every_target_fires_under_every_import_style():
    failures = []
    count = 0
    for qual, explicit in TARGETS:
        want = _expected_rule(qual, explicit)
        for header, expr in _import_styles(qual):
            if qual in _SET_ONLY and "." not in expr:
                continue  # `from torch.backends.cudnn import deterministic`: assigning it rebinds a name
            count += 1
            if want not in _rules(f"{header}\n{_statement(qual, expr)}\n"):
                failures.append(f"{qual} via {header!r}: {want} did not fire")
    assert count > 1000
    assert not failures, "\n".join(failures[:20])


def test_negative_twins_do_not_fire():
    failures = []
    for qual, explicit in TARGETS:
        want = _expected_rule(qual, explicit)
        expr = _use(qual, qual)
        root = qual.split(".")[0]
        twins = {
            "shadowed parameter": f"import {root}\n\ndef f({root}):\n    return {expr}\n",
            "shadowed assignment": f"import {root}\n\ndef f():\n    {root} = object()\n    return {expr}\n",
            "comment": f"import {root}\n# {expr}\nvalue = 1\n",
            "docstring": f'import {root}\n\ndef f():\n    """Calls {qual}()."""\n    return 1\n',
            "log message": f'import logging\nimport {root}\nlogging.getLogger().info("use {qual}")\nprint("{qual}")\n',
            "no import": f"value = {expr}\n",
        }
        for label, source in twins.items():
            if want in _rules(source):
                failures.append(f"{qual}: {label}")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("literal,rule", [('"cuda"', "DV001"), ('"cuda:3"', "DV001"), ('"nccl"', "DS001"),
                                          ('"NCCL_DEBUG"', "DS002"), ('"CUDA_VISIBLE_DEVICES"', "DV006")])
def test_string_rules_and_their_message_twins(literal, rule):
    assert rule in _rules(f"import torch\nvalue = {literal}\n")
    assert rule not in _rules(f"import logging\nlogging.warning({literal})\n")
    assert rule not in _rules(f'"""{literal[1:-1]} in a docstring"""\n')
    assert rule not in _rules(f"# {literal}\nvalue = 1\n")
