"""The scanner, the validated tree's hash and the skill generator decide alike what belongs to a
project: one walker (`scan.walk`) and one recogniser of this tool's outputs (`scan.own_outputs`)."""
from __future__ import annotations

import json

from ascend_migrate.scan.api import scan
from ascend_migrate.scan.own_outputs import is_own_output
from ascend_migrate.skillgen import render
from ascend_migrate.validate import provenance


def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _project(tmp_path):
    return _write(tmp_path / "proj", {
        "train.py": "import torch\nx = torch.zeros(2).cuda()\n",
        "build/gen_kernels.py": "import torch\ny = torch.ones(1).cuda()\n",
        "dist/launch.py": "import torch_scatter\nprint(torch_scatter)\n",
        "env/settings.py": "DEVICE = 'cuda'\n",
        "requirements.txt": "torch\n",
        "pyenv_local/pyvenv.cfg": "home = /usr/bin\n",
        "pyenv_local/lib/site.py": "import torch_sparse\n",
        "ascend-migrate-changes.json": json.dumps({"schema": "ascend-migrate/changes/1", "changes": []}),
        "reports/scan.json": json.dumps({"schema": "ascend-migrate/scan/1", "findings": []}),
        ".ascend-migrate/validation-report.json": "{}",
        "pkg/__pycache__/m.cpython-311.pyc": "x",
    })


def test_build_dist_env_are_source_and_venvs_are_not_everywhere(tmp_path):
    root = _project(tmp_path)
    hashed = {rel for rel, _ in provenance.iter_tree(root)}
    assert {"build/gen_kernels.py", "dist/launch.py", "env/settings.py", "train.py", "requirements.txt"} <= hashed
    assert not any(rel.startswith(("pyenv_local/", ".ascend-migrate/")) for rel in hashed)
    assert "ascend-migrate-changes.json" not in hashed and "reports/scan.json" not in hashed
    assert not any("__pycache__" in rel for rel in hashed)

    scanned = {f.path for f in scan(root, use_cache=False).findings}
    assert "build/gen_kernels.py" in scanned and not any(p.startswith("pyenv_local/") for p in scanned)

    facts = {p.relative_to(root).as_posix() for p in render._project_files(root)}
    assert {"build/gen_kernels.py", "dist/launch.py", "env/settings.py"} <= facts
    assert not any(rel.startswith("pyenv_local/") for rel in facts) and "reports/scan.json" not in facts
    _, pyg = render._project_facts(root)
    assert pyg == {"torch_scatter"}  # from dist/, not from the virtual environment's torch_sparse


def test_one_recogniser_of_own_outputs(tmp_path):
    root = _project(tmp_path)
    assert provenance.is_own_output is is_own_output
    assert is_own_output(root / "reports" / "scan.json") and is_own_output(root / "ascend-migrate-changes.json")
    assert not is_own_output(root / "requirements.txt") and not is_own_output(root / "train.py")


def test_tree_hash_of_an_ordinary_tree_is_unchanged_by_runtime_files(tmp_path):
    root = _write(tmp_path / "plain", {"a.py": "print(1)\n", "sub/b.py": "print(2)\n", "README.md": "x\n"})
    before = provenance.tree_hash(root)
    _write(root, {"sub/__pycache__/b.cpython-311.pyc": "bytecode", "pkg.egg-info/PKG-INFO": "meta"})
    assert provenance.tree_hash(root) == before
    _write(root, {"build/extra.py": "print(3)\n"})
    assert provenance.tree_hash(root) != before
