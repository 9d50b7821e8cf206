"""Sync the real torch_npu wheels and compare with the committed coverage files.

The 2.13.0 wheel is downloaded once (only the wheel, no dependencies) into
<repo>/.test-cache/wheels/ and reused. With CI set, a failed download fails the test;
elsewhere it is skipped with the reason. The older shipped releases are checked when their
wheels are already in the cache.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from ci_gates import cache_dir, unavailable
from click.testing import CliRunner

from ascend_migrate.knowledge.coverage import COVERAGE_DIR, available_versions, load_coverage
from ascend_migrate.knowledge.sync_cli import kb_group

REPO = Path(__file__).resolve().parents[2]
CACHE = cache_dir() / "wheels"
DOWNLOADED = ("2.13.0",)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pip_download_args(version: str, filename: str) -> list[str]:
    """pip arguments that fetch exactly `filename` whatever the host's Python and platform."""
    stem = filename[: -len(".whl")]
    _name, _ver, python_tag, abi_tag, platform_tag = stem.split("-")[-5:]
    args = ["--only-binary=:all:", "--implementation", python_tag[:2], "--abi", abi_tag]
    digits = python_tag[2:]
    args += ["--python-version", f"{digits[0]}.{digits[1:]}"]
    for platform in platform_tag.split("."):
        args += ["--platform", platform]
    return args


def cached_wheel(version: str, download: bool) -> Path:
    cov = load_coverage(version)
    filename, sha = cov.source["filename"], cov.source["sha256"]
    path = CACHE / filename
    if path.is_file() and _sha256(path) == sha:
        return path
    if not download:
        pytest.skip(f"{filename} is not in {CACHE}")
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q",
               f"torch-npu=={version}", "-d", tmp, *_pip_download_args(version, filename)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            unavailable(f"downloading torch-npu=={version} failed: {exc}")
        if proc.returncode != 0:
            unavailable(f"downloading torch-npu=={version} failed:\n{proc.stderr[-2000:]}")
        got = Path(tmp) / filename
        if not got.is_file():
            pytest.fail(f"pip did not produce {filename}; got {sorted(p.name for p in Path(tmp).iterdir())}")
        os.replace(got, path)
    if _sha256(path) != sha:
        pytest.fail(f"{filename} from the index does not have the sha256 recorded in the coverage file")
    return path


def _sync_and_compare(version: str, wheel: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(kb_group, ["sync", "--wheel", str(wheel), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    produced = tmp_path / f"torch_npu-{version}.json"
    committed = load_coverage(version, COVERAGE_DIR).path  # the packaged file, not a user's sync
    assert produced.read_bytes() == committed.read_bytes(), (
        f"{committed.name} is stale: run `ascend-migrate kb sync --wheel {wheel} --out {committed.parent} --force`"
    )


@pytest.mark.parametrize("version", DOWNLOADED)
def test_sync_of_downloaded_wheel_matches_committed_file(version, tmp_path):
    wheel = cached_wheel(version, download=True)
    _sync_and_compare(version, wheel, tmp_path)


@pytest.mark.parametrize("version", [v for v in available_versions() if v not in DOWNLOADED])
def test_sync_of_cached_older_wheels_matches_committed_file(version, tmp_path):
    wheel = cached_wheel(version, download=False)
    _sync_and_compare(version, wheel, tmp_path)


def test_pip_arguments_pin_the_recorded_file():
    assert _pip_download_args(
        "2.1.0.post10", "torch_npu-2.1.0.post10-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    ) == ["--only-binary=:all:", "--implementation", "cp", "--abi", "cp311", "--python-version", "3.11",
          "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64"]
