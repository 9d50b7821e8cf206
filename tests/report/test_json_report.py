"""The canonical JSON report: schema, counts, effort, fingerprints, re-rendering."""
from __future__ import annotations

import json

import jsonschema
import pytest

from ascend_migrate import __version__
from ascend_migrate.report import FORMATS, render
from ascend_migrate.report import json_report
from ascend_migrate.scan.api import ScanResult


@pytest.fixture(scope="module")
def validator():
    schema = json_report.load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_hand_result_matches_schema_and_counts(hand_result, kb, validator):
    data = json_report.to_json(hand_result, kb)
    validator.validate(data)
    assert data["schema"] == "ascend-migrate/scan/1"
    assert data["tool"] == {"name": "ascend-migrate", "version": __version__}
    assert (data["root"], data["torch_npu_version"]) == ("/project", "2.13.0")
    assert (data["files_scanned"], data["lines_scanned"], data["duration_s"]) == (6, 1234, 0.25)
    counts = data["counts"]
    assert counts["findings"] == 11
    assert counts["by_severity"] == {"error": 6, "warning": 3, "info": 2}
    assert counts["by_rule"] == {"CU001": 2, "CU101": 1, "DS001": 1, "DV001": 1, "EX001": 4, "PK001": 1, "SC001": 1}
    assert counts["by_category"]["extension"] == 4
    assert counts["by_category_severity"]["cuda-api"] == {"error": 1, "warning": 0, "info": 2}
    # CU001 auto; CU101, DS001, DV001 partial; EX001 x4, PK001, SC001 none
    assert counts["by_transfer"] == {"auto": 2, "partial": 3, "none": 6}
    assert sum(counts["by_effort"].values()) == 11
    assert counts["files_with_findings"] == 6
    assert data["files"][:2] == [
        {"path": "src/train.py", "findings": 4, "by_severity": {"error": 1, "warning": 1, "info": 2}},
        {"path": "csrc/a.cu", "findings": 3, "by_severity": {"error": 3, "warning": 0, "info": 0}},
    ]
    assert data["entry_points"][0]["path"] == "src/train.py"
    assert [n["path"] for n in data["notes"]] == ["src/bad.py", "big.py"]
    assert set(data["rules"]) == set(counts["by_rule"])
    assert data["rules"]["CU101"]["doc_url"] == "references/rules.md#cu101"


def test_findings_carry_rule_metadata_and_fixes(hand_result, kb):
    data = json_report.to_json(hand_result, kb)
    cu101 = next(f for f in data["findings"] if f["rule"] == "CU101")
    assert cu101["name"] == "device-capability-query"
    assert (cu101["category"], cu101["transfer"], cu101["effort"]) == ("cuda-api", "partial", "low")
    assert cu101["doc_url"] == kb.rule("CU101").help_uri()
    assert [fx["style"] for fx in cu101["fixes"]] == ["transfer", "agnostic"]
    assert cu101["fixes"][0]["edits"][0]["start"] == [8, 19]
    # findings come out in position order
    keys = [(f["path"], f["line"], f["col"]) for f in data["findings"]]
    assert keys == sorted(keys)


def test_effort_counts_per_file_rules_once_per_file(hand_result, kb):
    effort = json_report.to_json(hand_result, kb)["effort"]
    # CU101 10 + DS001 10 + DV001 10 + SC001 10 + PK001 60 + EX001 (2 files) 2 * 240; CU001 costs nothing
    assert effort["minutes"] == 580
    assert effort["hours"] == 9.7
    assert effort["units"] == {"none": 2, "low": 4, "medium": 1, "high": 2}
    assert "EX001" in effort["per_file_rules"] and "PK001" in effort["per_file_rules"]


def test_unknown_rule_is_reported_not_dropped(make_finding, kb, validator):
    result = ScanResult(root=".", findings=[make_finding("ZZ999", "a.py", 3)])
    data = json_report.to_json(result, kb)
    validator.validate(data)
    f = data["findings"][0]
    assert (f["category"], f["transfer"], f["effort"]) == ("unknown", "unknown", "unknown")
    assert data["counts"]["by_transfer"]["unknown"] == 1
    assert data["effort"]["minutes"] == 0


def test_empty_result(kb, validator):
    data = json_report.to_json(ScanResult(root="empty"), kb)
    validator.validate(data)
    assert data["counts"]["findings"] == 0 and data["findings"] == [] and data["effort"]["hours"] == 0
    for fmt in FORMATS:
        assert render(ScanResult(root="empty"), fmt, kb)


def test_dumps_round_trips_and_saved_report_re_renders(hand_result, kb):
    text = json_report.dumps(hand_result, kb)
    loaded = json.loads(text)
    assert loaded == json_report.to_json(hand_result, kb)
    for fmt in FORMATS:
        assert render(loaded, fmt, kb) == render(hand_result, fmt, kb)


def test_render_rejects_unknown_format_and_input(hand_result, kb):
    with pytest.raises(ValueError, match="unknown report format"):
        render(hand_result, "xml", kb)
    with pytest.raises(TypeError):
        render({"schema": "something/else"}, "json", kb)


def test_fingerprints_are_stable_distinct_and_position_independent(hand_result, make_finding):
    prints = json_report.fingerprints(hand_result.findings)
    assert prints == json_report.fingerprints(list(hand_result.findings))
    assert len(set(prints)) == len(prints)  # identical synchronize() lines stay distinct
    shifted = [f.__class__(**{**f.__dict__, "line": f.line + 5, "end_line": f.end_line + 5})
               for f in hand_result.findings]
    assert json_report.fingerprints(shifted) == prints
    reindented = make_finding("CU101", "x.py", 4, snippet="    a =   f()")
    assert json_report.fingerprints([reindented]) == json_report.fingerprints(
        [make_finding("CU101", "x.py", 9, snippet="a = f()")])
    # a finding without a snippet: digits in its symbol (line numbers) do not matter
    a = make_finding("SC001", "b.py", 1, snippet="", symbol="syntax error line 1")
    b = make_finding("SC001", "b.py", 2, snippet="", symbol="syntax error line 2")
    assert json_report.fingerprints([a]) == json_report.fingerprints([b])


def test_real_scan_validates_and_survives_a_line_shift(tree, scan_tree, kb, validator):
    before = json_report.to_json(scan_tree(tree), kb)
    validator.validate(before)
    rules = before["counts"]["by_rule"]
    assert {"CU101", "DS001", "PK001", "SC001"} <= set(rules)
    assert before["entry_points"] and before["entry_points"][0]["path"] == "pkg/train.py"
    assert any(n["path"] == "pkg/broken.py" for n in before["notes"])

    train = tree / "pkg" / "train.py"
    train.write_text("\n\n" + train.read_text(encoding="utf-8"), encoding="utf-8")
    after = json_report.to_json(scan_tree(tree), kb)
    by_print = {f["fingerprint"]: f for f in before["findings"]}
    assert set(by_print) == {f["fingerprint"] for f in after["findings"]}
    for f in after["findings"]:
        if f["path"] == "pkg/train.py" and f["rule"] != "FW001":
            assert f["line"] == by_print[f["fingerprint"]]["line"] + 2
