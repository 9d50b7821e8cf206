"""Suite-wide switches.

The suite also runs on the oldest supported Python, where no torch wheel exists: the scanner,
migrator, reports and diagnose must work there without torch. Tests that run torch (capture,
validate, the training scaffold, CPU checks) carry `needs_torch` and are skipped only when torch
cannot be imported; everywhere else they run.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

HAS_TORCH = importlib.util.find_spec("torch") is not None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_torch: runs torch (skipped where torch is not installed)")
    # Coverage a person synced (`kb sync`) lives in their data folder and is read before the
    # packaged one: the suite sees only the packaged knowledge, whatever this machine holds
    # (a folder that is never created unless a test syncs there).
    import tempfile

    os.environ["XDG_DATA_HOME"] = os.path.join(tempfile.gettempdir(), f"am-test-data-{os.getpid()}")
    # The workers of `pytest -n` share the cores: torch in each process they start keeps to one
    # intra-op thread unless told otherwise (both sides of every comparison run alike).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # What the tool caches in the user's folder goes to the test cache instead (ci_gates.user_cache).
    from ci_gates import user_cache

    os.environ["XDG_CACHE_HOME"] = str(user_cache())
    cache = os.environ.get("ASCEND_MIGRATE_TEST_CACHE", "").strip()
    if cache:
        # Under make, hypothesis keeps its example database with the other test caches,
        # outside the checkout (a local plugin install copies the checkout as it is).
        from hypothesis import settings
        from hypothesis.database import DirectoryBasedExampleDatabase

        settings.register_profile("outside-checkout",
                                  database=DirectoryBasedExampleDatabase(str(Path(cache) / "hypothesis")))
        settings.load_profile("outside-checkout")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):
        # A worker of `pytest -n`: the modules that run torch (minutes each, together most of the
        # suite's time) are handed out first and the quick ones fill the end, so no worker is
        # left alone with a long module at the end. The same stable order on every worker.
        items.sort(key=lambda item: item.get_closest_marker("needs_torch") is None)
    if HAS_TORCH:
        return
    skip = pytest.mark.skip(reason="needs torch, which this Python has no wheel for")
    for item in items:
        if item.get_closest_marker("needs_torch"):
            item.add_marker(skip)


# Folders whose modules share an expensive session fixture (the chain builds and validates the
# example once); their tests go to one worker together.
ONE_WORKER_FOLDERS = ("tests/chain/",)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # type: ignore[no-untyped-def]
    """Under `pytest -n N` (pytest-xdist), hand out whole modules, so that a module's fixtures are
    built once, on one worker; the folders above go out whole."""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            for folder in ONE_WORKER_FOLDERS:
                if module.startswith(folder):
                    return folder
            return module

    return ByModule(config, log)
