"""SARIF 2.1.0: structure GitHub code scanning relies on, regions, fixes, fingerprints, limits."""
from __future__ import annotations

import json
import re
from urllib.parse import urlparse

from ascend_migrate.report import render, sarif
from ascend_migrate.scan.api import ScanResult


def _run(result, kb, **options):
    log = json.loads(sarif.dumps(result, kb, **options))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    assert len(log["runs"]) == 1
    return log["runs"][0]


def _placeholders() -> set:
    from ascend_migrate.knowledge.base import load_knowledge

    found = {m for r in load_knowledge().rules.values() for m in re.findall(r"\{[a-z_]+\}", r.message)}
    assert "{symbol}" in found  # the message templates this guards against
    return found


_PLACEHOLDERS = _placeholders()


def _check_structure(run):
    driver = run["tool"]["driver"]
    assert driver["name"] == "ascend-migrate" and driver["version"]
    ids = [r["id"] for r in driver["rules"]]
    assert len(ids) == len(set(ids))
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        descriptive = (rule["name"], rule["shortDescription"]["text"], rule["fullDescription"]["text"],
                       rule["help"]["text"])
        assert not any(p in text for p in _PLACEHOLDERS for text in descriptive), rule["id"]
        assert "helpUri" not in rule or urlparse(rule["helpUri"]).scheme
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert {"category", "effort", "transfer"} <= set(rule["properties"])
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    for res in run["results"]:
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note")
        assert res["message"]["text"]
        loc = res["locations"][0]["physicalLocation"]
        uri = loc["artifactLocation"]["uri"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert not urlparse(uri).scheme and not uri.startswith("/") and "\\" not in uri
        region = loc["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        if "endLine" in region:
            assert (region["endLine"], region["endColumn"]) > (region["startLine"], region["startColumn"])
        assert len(res["partialFingerprints"]["ascendMigrate/v1"]) == 32


def test_hand_result_structure(hand_result, kb):
    run = _run(hand_result, kb)
    _check_structure(run)
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == sorted(hand_result.rules_fired())
    assert len(run["results"]) == len(hand_result.findings)
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["properties"]["torchNpuVersion"] == "2.13.0"
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert {n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes} == {"src/bad.py", "big.py"}


def test_rule_descriptor_content(hand_result, kb):
    rules = {r["id"]: r for r in _run(hand_result, kb)["tool"]["driver"]["rules"]}
    cu101 = rules["CU101"]
    rule = kb.rule("CU101")
    assert cu101["name"] == "DeviceCapabilityQuery"
    assert cu101["shortDescription"]["text"] == "Device capability query"
    assert cu101["fullDescription"]["text"] == rule.why.strip()
    assert rule.before.strip() in cu101["help"]["markdown"] and rule.after.strip() in cu101["help"]["markdown"]
    assert rule.how.strip() in cu101["help"]["text"]
    assert "helpUri" not in cu101 and "informationUri" not in _run(hand_result, kb)["tool"]["driver"]
    relative = _run(hand_result, kb, docs_base="docs/")
    assert "informationUri" not in relative["tool"]["driver"]
    assert all("helpUri" not in r for r in relative["tool"]["driver"]["rules"])
    assert cu101["properties"]["transfer"] == "partial"
    assert rules["CU001"]["defaultConfiguration"]["level"] == "note"  # info -> note
    assert rules["EX001"]["defaultConfiguration"]["level"] == "error"
    absolute = _run(hand_result, kb, docs_base="https://example.org/docs/")
    assert absolute["tool"]["driver"]["informationUri"] == "https://example.org/docs/"
    assert absolute["tool"]["driver"]["rules"][0]["helpUri"].startswith("https://example.org/docs/references/")


def test_regions_are_one_based_with_exclusive_end(hand_result, kb):
    results = {r["ruleId"]: r for r in _run(hand_result, kb)["results"]}
    region = results["CU101"]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 8, "startColumn": 20, "endLine": 8, "endColumn": 54,
                      "snippet": {"text": "major, minor = torch.cuda.get_device_capability()"}}
    # an empty span (whole-file finding) has no end: SARIF then means the rest of the line
    sc = results["SC001"]["locations"][0]["physicalLocation"]["region"]
    assert sc["startLine"] == 1 and "endColumn" not in sc
    dv = results["DV001"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert dv == "src/dir%20with%20space/m%C3%BC.py"


def test_fixes_follow_the_requested_style(hand_result, kb):
    results = _run(hand_result, kb)["results"]
    transfer = {r["ruleId"]: r for r in results}
    fix = transfer["CU101"]["fixes"][0]
    assert "unsafe" in fix["description"]["text"]
    change = fix["artifactChanges"][0]
    assert change["artifactLocation"] == {"uri": "src/train.py", "uriBaseId": "%SRCROOT%"}
    assert change["replacements"] == [{
        "deletedRegion": {"startLine": 8, "startColumn": 20, "endLine": 8, "endColumn": 54},
        "insertedContent": {"text": "(torch.cuda.get_device_capability() or (0, 0))"},
    }]
    assert "fixes" not in transfer["DS001"]  # only an agnostic fix exists
    assert all("fixes" not in r for r in results if r["ruleId"] == "CU001")  # a fix without edits
    agnostic = {r["ruleId"]: r for r in _run(hand_result, kb, style="agnostic")["results"]}
    assert agnostic["CU101"]["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "(0, 0)"
    assert "device_type" in agnostic["DS001"]["fixes"][0]["description"]["text"]


def test_all_rules_lists_the_whole_knowledge_base(hand_result, kb):
    run = _run(hand_result, kb, all_rules=True)
    _check_structure(run)
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == sorted(kb.rules)


def test_result_cap_keeps_the_most_severe(make_finding, kb, monkeypatch):
    monkeypatch.setattr(sarif, "MAX_RESULTS", 2)
    result = ScanResult(root="/p", findings=[
        make_finding("CU001", "a.py", 1), make_finding("CU101", "a.py", 2),
        make_finding("DS001", "a.py", 3), make_finding("EX001", "b.cu", 1)])
    run = _run(result, kb)
    assert [r["ruleId"] for r in run["results"]] == ["CU101", "EX001"]
    assert run["properties"]["omittedResults"] == 2
    assert "2 less severe results omitted" in run["invocations"][0]["toolExecutionNotifications"][-1]["message"]["text"]


def _prints(run):
    return [r["partialFingerprints"]["ascendMigrate/v1"] for r in run["results"]]


def test_fingerprints_stable_across_renders_and_line_shifts(tree, scan_tree, kb):
    result = scan_tree(tree)
    first = _run(result, kb)
    _check_structure(first)
    assert first["results"]
    assert render(result, "sarif", kb) == render(result, "sarif", kb)
    assert _prints(first) == _prints(_run(scan_tree(tree), kb))
    train = tree / "pkg" / "train.py"
    lines = train.read_text(encoding="utf-8").splitlines(keepends=True)
    target = next(i for i, line in enumerate(lines) if "get_device_capability" in line)
    lines.insert(target, "\n")  # a blank line right above a finding
    train.write_text("".join(lines), encoding="utf-8")
    shifted = _run(scan_tree(tree), kb)
    assert sorted(_prints(shifted)) == sorted(_prints(first))
    line_of = {r["partialFingerprints"]["ascendMigrate/v1"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
               for r in first["results"]}
    moved = [r for r in shifted["results"] if r["ruleId"] == "CU101"][0]
    fp = moved["partialFingerprints"]["ascendMigrate/v1"]
    assert moved["locations"][0]["physicalLocation"]["region"]["startLine"] == line_of[fp] + 1


def test_single_file_scan_uses_the_parent_as_srcroot(tree, scan_tree, kb):
    run = _run(scan_tree(tree / "pkg" / "train.py"), kb)
    _check_structure(run)
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == (tree / "pkg").resolve().as_uri() + "/"
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]} == {"train.py"}


def test_sarif_root_maps_a_subfolder_scan_to_the_repository(tree, scan_tree, kb):
    run = _run(scan_tree(tree / "pkg"), kb, source_root=tree)
    _check_structure(run)
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tree.resolve().as_uri() + "/"
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris and all(u.startswith("pkg/") for u in uris)
    assert "pkg/train.py" in uris
    fixes = [c["artifactLocation"]["uri"] for r in run["results"] for x in r.get("fixes", [])
             for c in x["artifactChanges"]]
    assert all(u.startswith("pkg/") for u in fixes)


def test_scan_cli_sarif_root_and_docs_base(tree, kb, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from ascend_migrate.scan.cli import scan_command

    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    out = CliRunner().invoke(scan_command, [str(tree / "pkg"), "--format", "sarif", "--no-cache",
                                            "--sarif-root", str(tree), "--docs-base", "https://example.org/d/"])
    assert out.exit_code in (0, 1), out.output
    run = json.loads(out.stdout)["runs"][0]
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("pkg/")
               for r in run["results"])
    assert run["tool"]["driver"]["informationUri"] == "https://example.org/d/"
    bad = CliRunner().invoke(scan_command, [str(tree), "--format", "sarif", "--sarif-root", str(tree / "pkg")])
    assert bad.exit_code == 2 and "--sarif-root" in bad.output
    rel = CliRunner().invoke(scan_command, [str(tree), "--format", "sarif", "--docs-base", "docs/"])
    assert rel.exit_code == 2 and "absolute URL" in rel.output
