"""Every regular expression the tool runs on input it did not write takes linear time on any line.

Bounds (regex_audit.verdict): each pattern's adversarial lines are screened at 250 and 2,000
characters (no line may take 20 ms / 50 ms there, 1 s for all of them); its 3 slowest are
timed at 10,000 and 100,000 characters, where no line may take over 0.5 s, nor over 30 ms with
a 100k/10k time ratio above 30 (linear gives about 10, quadratic about 100).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import regex_audit as ra  # noqa: E402


@pytest.fixture(scope="module")
def inventory() -> list[ra.Audited]:
    items, failed = ra.inventory()
    assert not failed, f"modules that could not be imported, so their patterns were not audited: {failed}"
    return items


def test_inventory_sees_every_kind_of_pattern(inventory):
    origins = " ".join(i.origin for i in inventory)
    patterns = {i.pattern for i in inventory}
    # module globals, diagnose signatures, rule match patterns and literals inside functions
    assert "ascend_migrate.scan.config_kinds." in origins and "failures.yaml" in origins
    assert any(o.startswith("knowledge/rules") for o in (i.origin for i in inventory))
    assert any(i.origin.startswith("scan/entries.py:") for i in inventory)
    from ascend_migrate.diagnose.kb import load_kb
    assert {p.pattern for s in load_kb().signatures for p in s.patterns} <= patterns
    assert len(inventory) > 200


def test_no_regex_call_site_escapes_the_audit():
    """A `re.*` call with a pattern that is not a literal must say where its patterns come from
    (DYNAMIC_SITES, each covered by the inventory or built from escaped literals only)."""
    _, dynamic = ra.call_sites()
    unknown = [f"{rel}:{line}: re.*({text})" for rel, text, line in dynamic
               if (rel, text) not in ra.DYNAMIC_SITES]
    assert not unknown, "regex call sites the audit cannot see; add them to DYNAMIC_SITES:\n" + "\n".join(unknown)
    stale = set(ra.DYNAMIC_SITES) - {(rel, text) for rel, text, _ in dynamic}
    assert not stale, f"DYNAMIC_SITES entries that no longer exist: {stale}"


def test_every_pattern_is_linear_on_adversarial_lines(inventory):
    failures = []
    exempt = [item for item in inventory if item.origin in ra.EXEMPT]
    assert len(exempt) == len(ra.EXEMPT), "an EXEMPT entry names no pattern any more"
    for item in inventory:
        if item.origin in ra.EXEMPT:
            continue
        why = ra.verdict(item)
        if why:
            failures.append(f"{item.origin}: {why} :: {item.pattern!r}")
    assert not failures, f"{len(failures)} super-linear patterns:\n" + "\n".join(failures)


def test_audit_catches_known_catastrophic_shapes():
    """The line builder finds the shapes that backtrack: adjacent overlapping repeats, `.*` after a
    literal that repeats, and a repeated group."""
    for bad in (r"([\w.$/{}~-]*[\w-]+\.(?:json|ya?ml))\b", r"x\w+\s*=\s*\w+:", r"(?i)error.*FORCE_CUDA",
                r"(?:\w+\s)*:"):
        assert ra.verdict(ra.Audited(bad, 0, "known-bad")) is not None, bad


def test_text_scanners_are_linear_in_line_length():
    """The scanners around the patterns: config (shell, YAML, JSON), dependency, token-fallback
    and launch-line scanners on one long line of a repeated unit, after each kind of prefix
    (an echo, an export, a YAML item, a JSON string). A token is measured and stored once, a
    line's snippet taken once, echoed text read in one pass."""
    failures = []
    for name, run in ra.scanner_runs().items():
        for prefix in ra.SCANNER_PREFIXES:
            for unit in ra.SCANNER_UNITS:
                why = ra.scanner_verdict(run, prefix, unit)
                if why:
                    failures.append(f"{name}: {prefix!r} + {unit!r} * n: {why}")
    assert not failures, f"{len(failures)} super-linear scanner lines:\n" + "\n".join(failures)


def test_launch_lines_are_linear_in_line_length():
    """A launch line of one long word (`python x.pyx...`) or very many: the scanners that read
    which script a launcher runs split its arguments into words, which must stay linear."""
    failures = []
    for name, run in ra.launch_runs().items():
        for prefix, unit in ra.LAUNCH_SHAPES:
            why = ra.launch_verdict(run, prefix, unit)
            if why:
                failures.append(f"{name}: {prefix!r} + {unit!r} * n: {why}")
    assert not failures, f"{len(failures)} super-linear launch lines:\n" + "\n".join(failures)
