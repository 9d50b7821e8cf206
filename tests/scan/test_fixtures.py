"""Fixture pairs: every tests/scan/fixtures/NAME.py has NAME.expected listing `line:col RULE [severity]`."""
from pathlib import Path

import pytest

from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.engine import Job, analyse

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p for p in FIXTURES.glob("*.py") if p.with_suffix(".expected").exists())


def _render(findings, with_severity: bool) -> list[str]:
    rows = sorted(findings, key=lambda f: (f.line, f.col, f.rule))
    return [f"{f.line}:{f.col} {f.rule}" + (f" {f.severity}" if with_severity else "") for f in rows]


def test_fixtures_are_found():
    assert len(CASES) >= 4


@pytest.mark.parametrize("source", CASES, ids=lambda p: p.stem)
def test_fixture(source: Path):
    expected = [ln.strip() for ln in source.with_suffix(".expected").read_text().splitlines() if ln.strip()]
    with_severity = any(len(ln.split()) == 3 for ln in expected)
    result = analyse(Job(source.name, "python"), source.read_bytes(), load_knowledge())
    assert _render(result.findings, with_severity) == expected


@pytest.mark.parametrize("source", CASES, ids=lambda p: p.stem)
def test_fixture_findings_are_unique(source: Path):
    """One construct is reported once per rule (nested calls were once visited twice)."""
    result = analyse(Job(source.name, "python"), source.read_bytes(), load_knowledge())
    keys = [(f.line, f.col, f.end_line, f.end_col, f.rule) for f in result.findings]
    assert len(keys) == len(set(keys))
