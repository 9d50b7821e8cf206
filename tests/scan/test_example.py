"""The bundled example's findings are exact: rule ids and lines."""
from pathlib import Path

from ascend_migrate.scan.api import scan

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cifar_trainer"


def test_example_findings_exact():
    expected = (Path(__file__).parent / "example_cifar_trainer.expected").read_text().splitlines()
    result = scan(EXAMPLE, use_cache=False)
    assert [f"{f.path}:{f.line} {f.rule}" for f in result.findings] == expected


def test_example_inventory():
    result = scan(EXAMPLE, use_cache=False)
    assert [(e.path, e.kind) for e in result.entry_points] == [("train.py", "main-guard")]
    assert not result.notes
    rules = result.rules_fired()
    # The example exercises each family the scanner knows.
    for family in ("CU101", "CU102", "CU103", "DV001", "DV002", "DV004", "DS001", "DS002", "DS003",
                   "AM001", "AM002", "PR001", "EX001", "EX002", "PK001", "PK002", "FW001", "DV006"):
        assert family in rules, family
