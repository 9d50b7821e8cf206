"""Accuracy corpus: every line of tests/scan/corpus/<family>/* that must be reported carries
`# expect: RULE[, RULE]`, every line that must stay quiet carries `# expect: none`. A rule may
name the severity it must have: `# expect: CU101:info` (code in a branch that handles npu).

Scored over the whole corpus: recall must be 100% (each expected rule found on its line) and
there must be no false alarm (no finding of an unexpected rule on any line, marked or not).
On failure a per-family table and the first disagreements are printed.
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.engine import analyse, classify

CORPUS = Path(__file__).parent / "corpus"
_ITEM = r"[A-Z]{2}\d{3}(?::(?:info|warning|error))?"
EXPECT = re.compile(r"#\s*expect:\s*(none|" + _ITEM + r"(?:\s*,\s*" + _ITEM + r")*)\s*$")
MIN_MUST_REPORT = 170
MIN_MUST_NOT_REPORT = 100


def _expectations(text: str) -> tuple[dict[int, set[str]], dict[tuple[int, str], str]]:
    """line -> expected rules, and (line, rule) -> required severity where one is named."""
    rules: dict[int, set[str]] = {}
    severities: dict[tuple[int, str], str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        m = EXPECT.search(line)
        if not m:
            continue
        rules[lineno] = set()
        if m.group(1) == "none":
            continue
        for item in m.group(1).split(","):
            rule, _, severity = item.strip().partition(":")
            rules[lineno].add(rule)
            if severity:
                severities[(lineno, rule)] = severity
    return rules, severities


def _score():
    kb = load_knowledge()
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    problems: list[str] = []
    for path in sorted(p for p in CORPUS.rglob("*") if p.is_file()):
        rel = path.relative_to(CORPUS).as_posix()
        family = rel.split("/", 1)[0]
        job = classify(rel)
        assert job is not None, f"{rel}: not a file the scanner reads"
        text = path.read_text(encoding="utf-8")
        expected, severities = _expectations(text)
        found: dict[int, set[str]] = defaultdict(set)
        for finding in analyse(job, path.read_bytes(), kb).findings:
            want = severities.get((finding.line, finding.rule))
            if want is not None and finding.severity != want:
                rows[family]["wrong severity"] += 1
                problems.append(f"severity     {rel}:{finding.line} {finding.rule} is {finding.severity}, expected {want}")
            found[finding.line].add(finding.rule)
        row = rows[family]
        for line, rules in expected.items():
            if rules:
                row["must report"] += 1
                row["expected findings"] += len(rules)
            else:
                row["must not report"] += 1
            for rule in sorted(rules - found.get(line, set())):
                row["missed"] += 1
                problems.append(f"missed       {rel}:{line} {rule}")
        for line, rules in sorted(found.items()):
            for rule in sorted(rules - expected.get(line, set())):
                row["false alarms"] += 1
                problems.append(f"false alarm  {rel}:{line} {rule}" + ("" if line in expected else " (unmarked line)"))
    return rows, problems


def _table(rows) -> str:
    cols = ["must report", "expected findings", "missed", "must not report", "false alarms", "wrong severity"]
    lines = [f"{'family':16}" + "".join(f"{c:>19}" for c in cols)]
    for family in sorted(rows):
        lines.append(f"{family:16}" + "".join(f"{rows[family][c]:>19}" for c in cols))
    total = {c: sum(r[c] for r in rows.values()) for c in cols}
    lines.append(f"{'total':16}" + "".join(f"{total[c]:>19}" for c in cols))
    return "\n".join(lines)


def test_corpus_recall_is_complete_and_there_are_no_false_alarms():
    rows, problems = _score()
    report = _table(rows) + "\n" + "\n".join(problems[:60])
    assert not problems, report


def test_corpus_is_large_and_spread_over_the_families():
    rows, _ = _score()
    must = sum(r["must report"] for r in rows.values())
    must_not = sum(r["must not report"] for r in rows.values())
    assert must >= MIN_MUST_REPORT, _table(rows)
    assert must_not >= MIN_MUST_NOT_REPORT, _table(rows)
    thin = [f for f, r in rows.items() if r["must report"] < 5 or r["must not report"] < 3]
    assert not thin, f"families with too few labelled lines: {thin}\n" + _table(rows)


def test_expect_markers_are_well_formed():
    """A typo in a marker (`# expect CU001`, `# expect: cu001`) would silently drop a case."""
    loose = re.compile(r"#\s*expect\b")
    bad = []
    for path in CORPUS.rglob("*"):
        if path.is_file():
            for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if loose.search(line) and not EXPECT.search(line):
                    bad.append(f"{path.relative_to(CORPUS)}:{lineno}")
    assert not bad, bad
