"""The parts of the model-skill recipe that decide what a fresh host runs and installs."""
from __future__ import annotations

import subprocess
import textwrap

from ascend_migrate.skillgen.recipe import (
    cuda_only_packages,
    project_imports,
    project_name,
    public_version,
    validate_command,
)


def _tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def test_a_hostile_entry_or_command_stays_one_word_and_runs_nothing(tmp_path):
    entry = "val$(touch PWNED).py:fn"
    command = ["python", "train $(touch PWNED2).py", "--out", "`touch PWNED3`"]
    cmd = validate_command("printf '%s\\n'", "cpu", {"entry": entry, "ddp": False, "command": command},
                           "golden/a b.pt", None, [{"id": "host-environment", "note": "x"}], "${CLAUDE_SKILL_DIR}")
    res = subprocess.run(["bash", "-c", cmd.replace("${CLAUDE_SKILL_DIR}", str(tmp_path / "skill"))],
                         cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0
    words = res.stdout.splitlines()  # one argument per line, as bash passed them
    assert entry in words and f"{tmp_path / 'skill'}/golden/a b.pt" in words
    assert words[words.index("--"):] == ["--", *command]
    assert "--confirm" not in words  # a model skill carries no confirmation
    assert not list(tmp_path.glob("PWNED*"))


def test_cuda_only_packages_come_from_requirements_and_imports_of_the_original(tmp_path):
    root = _tree(tmp_path / "p", {
        "requirements.txt": "torch>=2.1\napex\nflash-attn>=2.5  # attention kernels\nnumpy\n",
        "model.py": "import torch\nfrom flash_attn import flash_attn_func\n",
    })
    assert cuda_only_packages(root) == ["apex", "flash-attn"]


def test_project_imports_are_third_party_only_and_use_distribution_names(tmp_path):
    root = _tree(tmp_path / "p", {
        "src/pkg/__init__.py": "",
        "src/pkg/train.py": """
            import os, json
            import torch, torch_npu
            import yaml
            from PIL import Image
            from pkg import helpers
            from . import local
            import torchvision.transforms as T
            from flash_attn import flash_attn_func
            """,
        "src/pkg/helpers.py": "import numpy as np\n",
        "setup.py": "from setuptools import setup\nimport versioneer\n",
    })
    files = [p for p in root.rglob("*") if p.is_file()]
    assert project_imports(root, files, {"flash_attn"}) == ["numpy", "pillow", "pyyaml", "torchvision"]


def test_project_name_is_the_declared_one_and_versions_drop_local_labels(tmp_path):
    assert project_name(_tree(tmp_path / "a", {"setup.py": 'setup(name="tinynet", version="1")\n'}), "x") == "tinynet"
    assert project_name(_tree(tmp_path / "b", {"pyproject.toml": '[project]\nname = "resnet-cifar"\n'}), "x") \
        == "resnet-cifar"
    assert project_name(tmp_path / "b" / "missing", "fallback") == "fallback"
    assert public_version("2.13.0+cpu") == "2.13.0" and public_version("2.1.0.post8") == "2.1.0.post8"
