"""SARIF output validated against the SARIF 2.1.0 JSON schema, with format checks.

The schema is not kept in this repository: it is taken at test time from an npm package
that ships it (Microsoft's jest-sarif, schema `sarif-2.1.0-rtm.5`, the text of the 2.1.0
standard) and cached under `.test-cache/`. When it cannot be fetched the tests are skipped
locally and fail under CI, like the plugin validators.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from urllib.parse import urlparse

import pytest
from ci_gates import cache_dir, cache_lock, unavailable

from ascend_migrate.report import sarif

REPO = Path(__file__).resolve().parents[2]
CACHE = cache_dir() / "sarif-schema"
PACKAGE = "@microsoft/jest-sarif@1.0.0-beta.0"
MEMBER = "package/lib/schemas/sarif-2.1.0-rtm.5.json"


@pytest.fixture(scope="session")
def schema() -> dict:
    target = CACHE / "sarif-2.1.0.json"
    with cache_lock("sarif-schema"):
        _fetch_schema(target)
    data = json.loads(target.read_text(encoding="utf-8"))
    assert "SARIF" in data["title"] and "2.1.0" in data["title"]
    return data


def _fetch_schema(target: Path) -> None:
    if not target.exists():
        npm = shutil.which("npm")
        if npm is None:
            unavailable("npm is not installed; cannot fetch the SARIF 2.1.0 schema")
        CACHE.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([npm, "pack", PACKAGE, "--pack-destination", str(CACHE), "--loglevel=error"],
                              capture_output=True, text=True, timeout=300)
        tarballs = sorted(CACHE.glob("*.tgz"))
        if proc.returncode != 0 or not tarballs:
            unavailable(f"npm pack {PACKAGE} failed:\n{proc.stderr[-2000:]}")
        with tarfile.open(tarballs[-1]) as tar:
            member = tar.extractfile(MEMBER)
            assert member is not None, f"{MEMBER} missing from {PACKAGE}"
            target.write_bytes(member.read())


def _absolute_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    parsed = urlparse(value)
    return bool(parsed.scheme) and " " not in value and "\\" not in value


def _uri_reference(value: object) -> bool:
    return not isinstance(value, str) or (" " not in value and "\\" not in value)


def _validator(schema: dict):
    jsonschema = pytest.importorskip("jsonschema")
    checker = jsonschema.FormatChecker()
    # `uri` is checked strictly here (jsonschema only checks it when an optional package is
    # installed): a relative helpUri/informationUri is what code-scanning uploads reject.
    checker.checks("uri")(_absolute_uri)
    checker.checks("uri-reference")(_uri_reference)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=checker)


def _errors(validator, log: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]


def test_format_checker_rejects_a_relative_help_uri(schema, hand_result, kb):
    log = sarif.to_sarif(hand_result, kb)
    log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = "references/rules.md#cu001"
    assert any("helpUri" in e for e in _errors(_validator(schema), log))


@pytest.mark.parametrize("options", [{}, {"all_rules": True}, {"style": "agnostic"},
                                     {"docs_base": "https://example.org/ascend-migrate/"}])
def test_hand_result_validates(schema, hand_result, kb, options):
    log = json.loads(sarif.dumps(hand_result, kb, **options))
    assert _errors(_validator(schema), log) == []


def test_scanned_tree_validates_with_a_source_root(schema, tree, scan_tree, kb):
    log = json.loads(sarif.dumps(scan_tree(tree / "pkg"), kb, source_root=tree, all_rules=True))
    assert log["runs"][0]["results"]
    assert _errors(_validator(schema), log) == []
