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


def test_a_training_recipe_folder_is_ported_like_any_other(tmp_path, monkeypatch):
    """`recipe/` holds training entry points and their configs in many projects: it is not a
    build folder, for entry points nor for configs."""
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    files = {
        "recipe/dapo/main_dapo.py": "import torch\n\n\ndef main():\n    print(torch.ones(2).cuda())\n\n\n"
                                    "if __name__ == \"__main__\":\n    main()\n",
        "recipe/dapo/config/trainer.yaml": "trainer:\n  device: cuda\n  backend: nccl\n",
        "recipe/dapo/run_dapo.sh": "#!/bin/bash\npython3 recipe/dapo/main_dapo.py --config recipe/dapo/config/trainer.yaml\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    result = scan(root)
    assert [e.path for e in result.entry_points] == ["recipe/dapo/main_dapo.py"]
    assert result.build_configs == []
    assert any(f.fixes for f in result.findings if f.path == "recipe/dapo/config/trainer.yaml")
    plan = migrate(root, style="transfer")
    rewritten = {f.path for f in plan.files if f.new is not None}
    assert {"recipe/dapo/main_dapo.py", "recipe/dapo/config/trainer.yaml"} <= rewritten
