"""Scan and migrate agree on which configs describe a build or CI host.

Such a file is reported for review (no fix offered) and never rewritten; every other config
with a fix offered is rewritten. One decision (config_kinds.is_build_config) serves both: a
training launcher kept in a docker/ folder once got fixes from the scan that migrate then
refused to apply."""
from __future__ import annotations

from pathlib import Path

from ascend_migrate.fix.api import migrate
from ascend_migrate.scan.api import scan

FILES = {
    "train.py": "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n",
    ".github/workflows/ci.yml": "jobs:\n  test:\n    env:\n      CUDA_VISIBLE_DEVICES: \"0\"\n"
                                "    steps:\n      - run: python -m pytest\n",
    "docker/run_train.sh": "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\ntorchrun --nproc_per_node=2 train.py\n",
    "scripts/install_cuda.sh": "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0\npip install -e .\n",
    "scripts/launch.sh": "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\npython train.py --backend nccl\n",
}


def _tree(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_build_configs_are_reported_without_fixes_and_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    root = _tree(tmp_path / "proj")
    result = scan(root)
    assert sorted(result.build_configs) == [".github/workflows/ci.yml", "scripts/install_cuda.sh"]
    offered = {f.path for f in result.findings if f.fixes}
    reported = {f.path for f in result.findings}
    assert {".github/workflows/ci.yml", "scripts/install_cuda.sh"} <= reported - offered
    assert {"docker/run_train.sh", "scripts/launch.sh"} <= offered

    for style in ("transfer", "agnostic"):
        plan = migrate(root, style=style)
        rewritten = {f.path for f in plan.files if f.new is not None}
        configs = {p for p in FILES if not p.endswith(".py")}
        assert rewritten & configs == offered & configs, style
        assert any("ci.yml" in n and "not rewritten" in n for n in plan.notes), plan.notes
