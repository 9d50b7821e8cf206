"""migrate re-uses the scan's analysis of a module whose bytes did not change, and the plan
is the same as when every module is analysed again."""
from __future__ import annotations

from pathlib import Path

import pytest

from ascend_migrate.fix import migrate as migrate_mod
from ascend_migrate.fix import rewrite
from ascend_migrate.fix.rewrite import Options
from ascend_migrate.scan import api, engine

FILES = {
    "train.py": ("import argparse\nimport torch\nimport torch.distributed as dist\n"
                 "from torch.cuda.amp import GradScaler, autocast\n\n\n"
                 "def main():\n    p = argparse.ArgumentParser()\n    p.add_argument('--backend', default='nccl')\n"
                 "    a = p.parse_args()\n    dist.init_process_group(a.backend)\n"
                 "    m = torch.nn.Linear(2, 2).cuda()\n    s = GradScaler()\n"
                 "    with autocast():\n        y = m(torch.ones(2, device='cuda'))\n"
                 "    torch.cuda.synchronize()  # ascend-migrate: ignore[CU001]\n\n\n"
                 "if __name__ == '__main__':\n    main()\n"),
    "pkg/__init__.py": "",
    "pkg/dev.py": "import torch\n\n\ndef put(x):\n    return x.to('cuda:0') if torch.cuda.is_available() else x\n",
    "pkg/quiet.py": "import math\n\n\ndef f(x):\n    return math.sqrt(x)\n",
    "setup.py": "from setuptools import setup\nsetup(name='p', install_requires=['torch', 'apex'])\n",
}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _summary(result) -> list:
    return [(f.path, f.new, f.changes, f.manual, f.error) for f in result.files] + sorted(result.notes)


def _plan(root: Path, style: str, monkeypatch, reuse: bool, given: list) -> list:
    real_scan = migrate_mod.scan
    real_rewrite = migrate_mod.rewrite_python

    def scan(*a, **k):
        res = real_scan(*a, **k)
        if not reuse:
            res.analyses = {}
        return res

    def spy(*a, **k):
        given.append(k.get("findings") is not None)
        return real_rewrite(*a, **k)

    monkeypatch.setattr(migrate_mod, "scan", scan)
    monkeypatch.setattr(migrate_mod, "rewrite_python", spy)
    return _summary(migrate_mod.plan(root, Options(style=style)))


@pytest.mark.parametrize("style", ["transfer", "agnostic"])
def test_the_plan_is_the_same_with_and_without_the_scans_analyses(tree, monkeypatch, style):
    reused: list = []
    fresh: list = []
    with_reuse = _plan(tree, style, monkeypatch, True, reused)
    without = _plan(tree, style, monkeypatch, False, fresh)
    assert with_reuse == without
    assert any(reused) and not any(fresh)


def test_a_module_changed_after_the_scan_is_analysed_again(tree, monkeypatch):
    real_scan = migrate_mod.scan

    def scan_then_edit(*a, **k):  # the file changes between the scan and the rewrite
        res = real_scan(*a, **k)
        (tree / "pkg" / "dev.py").write_text(FILES["pkg/dev.py"] + "\n\ndef more(m):\n    return m.cuda()\n")
        return res

    monkeypatch.setattr(migrate_mod, "scan", scan_then_edit)
    result = migrate_mod.plan(tree, Options(style="agnostic"))
    dev = next(f for f in result.files if f.path == "pkg/dev.py")
    assert b"return m.to(_device_type)" in dev.new


def test_the_scan_offers_only_full_uncapped_analyses(tree):
    result = api.scan(tree, use_cache=False)
    assert {"train.py", "pkg/dev.py", "setup.py"} <= set(result.analyses)
    assert "pkg/quiet.py" not in result.analyses  # the prefilter read its imports only
    first = result.analyses["train.py"][1][0]
    kept = engine.cap_findings(engine.FileResult(findings=[first], analysed=True), 1)
    capped = engine.cap_findings(engine.FileResult(findings=[first, first], analysed=True), 1)
    assert kept.analysed and not capped.analysed  # a capped list is not what the analysis gave


def test_rewrite_python_with_given_findings_matches_its_own_analysis(tree):
    from ascend_migrate.knowledge.base import load_knowledge

    kb = load_knowledge()
    text = FILES["train.py"]
    own = engine.analyse_python_text(engine.Job("train.py", "python"), text, kb).findings
    for style in ("transfer", "agnostic"):
        a = rewrite.rewrite_python(kb, "train.py", text, Options(style=style))
        b = rewrite.rewrite_python(kb, "train.py", text, Options(style=style), findings=list(own))
        assert (a.text, a.changes, a.manual) == (b.text, b.changes, b.manual)
