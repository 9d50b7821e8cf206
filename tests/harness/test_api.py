"""The parent-side API: the child's environment, reading records and progress, and what the
injected folder may contain. No child process runs torch here."""
from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import pytest

from ascend_migrate.validate import harness
from ascend_migrate.validate.harness import (ENV_DIR, ENV_SEED, ENV_SITES, ENV_STEPS, ENV_THREADS,
                                             RECORD_SCHEMA, SITE_DIR, STOP_EXIT_CODE,
                                             harness_env, progress, read_records)

INJECTED = sorted(SITE_DIR.rglob("*.py"))


def test_site_dir_holds_the_start_up_hook_and_the_private_package():
    assert (SITE_DIR / "sitecustomize.py").is_file()
    assert (SITE_DIR / "_ascend_migrate_harness" / "__init__.py").is_file()
    assert STOP_EXIT_CODE == 86
    from ascend_migrate.validate.harness.inject import _ascend_migrate_harness as names
    assert (names.ENV_DIR, names.STOP_EXIT_CODE, names.SCHEMA) == (ENV_DIR, STOP_EXIT_CODE,
                                                                   RECORD_SCHEMA)


@pytest.mark.parametrize("path", INJECTED, ids=lambda p: str(p.relative_to(SITE_DIR)))
def test_injected_code_is_stdlib_only_and_python_3_9(path):
    """It runs in whatever interpreter runs the project: no import of this toolkit or of a
    third-party module at import time, and nothing newer than Python 3.9's grammar."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, feature_version=(3, 9))
    if not hasattr(sys, "stdlib_module_names"):
        pytest.skip("sys.stdlib_module_names needs Python 3.10")
    stdlib = set(sys.stdlib_module_names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside the private package
                continue
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in ("torch", "_ascend_migrate_harness"):
                # torch: only submodules of an already imported torch, inside functions
                assert top != "torch" or not any(node is stmt for stmt in tree.body), name
                continue
            assert top in stdlib, f"{path.name} imports {name}"
    for node in ast.walk(tree):
        assert not isinstance(node, getattr(ast, "Match", ())), "match needs Python 3.10"


def test_env_prepends_the_site_dir_and_keeps_the_path(tmp_path):
    base = {"PYTHONPATH": os.pathsep.join(["/opt/a", str(SITE_DIR), "/opt/b"]), "HOME": "/h",
            ENV_SITES: "/stale.json", ENV_SEED: "9"}
    env = harness_env(tmp_path / "out", steps=7, base=base)
    assert env["PYTHONPATH"].split(os.pathsep) == [str(SITE_DIR), "/opt/a", "/opt/b"]
    assert env[ENV_DIR] == str((tmp_path / "out").resolve())
    assert (env[ENV_STEPS], env[ENV_SEED], env[ENV_THREADS]) == ("7", "0", "1")
    assert ENV_SITES not in env and env["HOME"] == "/h"
    assert (tmp_path / "out").is_dir()
    assert base["PYTHONPATH"].startswith("/opt/a")  # the base is not changed


def test_env_without_seed_threads_or_path(tmp_path):
    env = harness_env(tmp_path, steps=0, seed=None, threads=None, base={"PATH": "/bin"})
    assert env["PYTHONPATH"] == str(SITE_DIR)
    assert ENV_SEED not in env and ENV_THREADS not in env and env[ENV_STEPS] == "0"


def test_env_writes_the_edit_sites(tmp_path):
    site = str(tmp_path / "train.py")
    env = harness_env(tmp_path / "out", steps=1, sites={site: [9, 3, 3]}, base={})
    assert json.loads(Path(env[ENV_SITES]).read_text()) == {"files": {site: [3, 9]}}
    with pytest.raises(ValueError):
        harness_env(tmp_path / "out", steps=1, sites={"train.py": [1]}, base={})
    with pytest.raises(ValueError):
        harness_env(tmp_path / "out", steps=1, sites={site: [0]}, base={})
    with pytest.raises(ValueError):
        harness_env(tmp_path / "out", steps=-1, base={})
    with pytest.raises(ValueError):
        harness_env(tmp_path / "out", steps=1, threads=0, base={})


def _record(rank, pid, **extra):
    data = {"schema": RECORD_SCHEMA, "rank": rank, "pid": pid, "status": "stopped",
            "sites": None, "site_details": None}
    data.update(extra)
    return data


def test_read_records_sorts_and_skips_what_it_cannot_read(tmp_path):
    (tmp_path / "rank-1-5.json").write_text(json.dumps(_record(1, 5)))
    (tmp_path / "rank-0-9.json").write_text(json.dumps(_record(0, 9)))
    (tmp_path / "rank-0-3.json").write_text(json.dumps(_record(
        0, 3, sites={"/p/a.py": {"4": "ran", "7": "not-run"}},
        site_details={"/p/a.py": {"7": {"reason": "x"}}})))
    (tmp_path / "rank-0-4.json").write_text('{"schema": "ascend-migr')  # cut short
    (tmp_path / "rank-2-4.json").write_text(json.dumps({"schema": "other"}))
    (tmp_path / ".rank-0-8.json.tmp").write_text("{")  # a write in progress is not a record
    records = read_records(tmp_path)
    assert [(r["rank"], r["pid"]) for r in records] == [(0, 3), (0, 9), (1, 5)]
    assert records[0]["sites"] == {"/p/a.py": {4: "ran", 7: "not-run"}}
    assert records[0]["site_details"] == {"/p/a.py": {7: {"reason": "x"}}}
    assert len(records.problems) == 2
    assert any("rank-0-4.json" in p for p in records.problems)
    assert isinstance(records, list)


def test_progress_takes_the_highest_step_and_latest_time(tmp_path):
    assert progress(tmp_path) == (0, 0.0)
    (tmp_path / "progress-11.txt").write_text("3 0 1700000000.500 0\n")
    (tmp_path / "progress-12.txt").write_text("5 1 1700000000.250 1\n")
    (tmp_path / "progress-13.txt").write_text("garbage")
    assert progress(tmp_path) == (5, 1700000000.5)


def test_public_names():
    assert set(harness.__all__) <= set(dir(harness))
