"""Tree-level behaviour: odd files, configs, notebooks, suppressions, project config, cache, jobs."""
import json
import os
from pathlib import Path

import pytest

from ascend_migrate.scan.api import scan
from ascend_migrate.scan.engine import ConfigError


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))


def _write(root: Path, rel: str, text, mode="w"):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _rules(result, path=None):
    return sorted((f.path, f.line, f.rule) for f in result.findings if path is None or f.path == path)


def test_python2_and_syntax_errors_are_scanned_at_token_level(tmp_path):
    _write(tmp_path, "old.py", 'import torch\nprint "gpus", torch.cuda.device_count()\nx = y.cuda()\n')
    result = scan(tmp_path, use_cache=False)
    rules = _rules(result, "old.py")
    assert ("old.py", 1, "SC001") in rules
    assert ("old.py", 2, "CU001") in rules and ("old.py", 3, "DV002") in rules
    assert all(f.confidence == "low" for f in result.findings if f.path == "old.py" and f.rule != "SC001")
    assert any(n.path == "old.py" and "syntax error" in n.reason for n in result.notes)


def test_bad_encoding_is_reported_not_skipped(tmp_path):
    _write(tmp_path, "latin.py", b"# -*- coding: utf-8 -*-\nname = '\xe9t\xe9'\nx.cuda()\n")
    result = scan(tmp_path, use_cache=False)
    assert ("latin.py", 1, "SC001") in _rules(result)
    assert ("latin.py", 3, "DV002") in _rules(result)


def test_declared_latin1_encoding_parses(tmp_path):
    _write(tmp_path, "l1.py", b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9t\xe9'; torch.cuda.synchronize()\n")
    result = scan(tmp_path, use_cache=False)
    assert _rules(result, "l1.py") == [("l1.py", 2, "FW001"), ("l1.py", 3, "CU001")]
    assert [f.col for f in result.findings if f.rule == "CU001"] == [14]  # characters, not UTF-8 bytes


def test_notebook_cells(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": ["torch.cuda.synchronize()"]},
                    {"cell_type": "code", "source": ["%matplotlib inline\n", "import torch\n", "torch.cuda.synchronize()\n"]},
                    {"cell_type": "code", "source": "x = model.cuda()"}], "nbformat": 4}
    _write(tmp_path, "nb.ipynb", json.dumps(nb))
    result = scan(tmp_path, use_cache=False)
    found = [(f.line, f.rule, f.message.split(":")[0]) for f in result.findings if f.path == "nb.ipynb"]
    assert (3, "CU001", "cell 2") in found and (1, "DV002", "cell 3") in found


def test_notebook_cells_share_one_namespace(tmp_path):
    """Names imported in one cell resolve in later cells; a later rebinding shadows them."""
    nb = {"cells": [{"cell_type": "code", "source": "import torch\nfrom torch.cuda import amp\n"},
                    {"cell_type": "code", "source": "torch.cuda.synchronize()\nwith amp.autocast():\n    pass\n"},
                    {"cell_type": "code", "source": "torch = object()\n"},
                    {"cell_type": "code", "source": "torch.cuda.synchronize()\n"}], "nbformat": 4}
    _write(tmp_path, "nb.ipynb", json.dumps(nb))
    result = scan(tmp_path, use_cache=False)
    found = [(f.message.split(":")[0], f.line, f.rule) for f in result.findings if f.path == "nb.ipynb"]
    assert ("cell 2", 1, "CU001") in found and ("cell 2", 2, "AM001") in found
    assert not [x for x in found if x[0] == "cell 4"]


def test_configs_are_scanned_with_low_confidence(tmp_path):
    _write(tmp_path, "run.sh", "# nccl in a comment is ignored\nexport NCCL_IB_DISABLE=1\nCUDA_VISIBLE_DEVICES=0 python main.py --device cuda:0\n")
    _write(tmp_path, "ds.json", '{"communication_data_type": "fp16", "dist_backend": "nccl"}\n')
    _write(tmp_path, "main.py", "import torch\n\n\ndef main():\n    return torch.ones(1)\n")  # run.sh is its only evidence
    result = scan(tmp_path, use_cache=False)
    assert _rules(result, "run.sh") == [("run.sh", 2, "DS002"), ("run.sh", 3, "DV001"), ("run.sh", 3, "DV006")]
    assert _rules(result, "ds.json") == [("ds.json", 1, "DS001")]
    assert {f.confidence for f in result.findings if f.path in ("run.sh", "ds.json")} == {"low"}
    assert [(e.path, e.kind) for e in result.entry_points] == [("main.py", "launch-script")]


def test_dependencies_in_every_declaration_format(tmp_path):
    _write(tmp_path, "requirements-gpu.txt", "torch==2.1\nflash_attn==2.5.0 ; sys_platform == 'linux'\n# xformers\n")
    _write(tmp_path, "pyproject.toml", '[project]\nname = "p"\ndependencies = [\n  "bitsandbytes>=0.41",\n  "numpy",\n]\n'
           '[tool.poetry.dependencies]\npython = "^3.10"\ndeepspeed = "^0.14"\nxformers = "^0.0.23"\n')
    _write(tmp_path, "setup.cfg", "[options]\ninstall_requires =\n    cupy-cuda12x\n    numpy\n")
    _write(tmp_path, "environment.yml", "dependencies:\n  - python=3.10\n  - pip:\n    - mamba-ssm==1.2\n")
    result = scan(tmp_path, use_cache=False)
    found = {(f.path, f.symbol) for f in result.findings if f.rule == "PK001"}
    assert found == {("requirements-gpu.txt", "flash_attn"), ("pyproject.toml", "bitsandbytes"),
                     ("pyproject.toml", "xformers"), ("setup.cfg", "cupy-cuda12x"), ("environment.yml", "mamba-ssm")}


def test_cuda_sources_are_triaged(tmp_path):
    _write(tmp_path, "a.cu", "__global__ void add(float* x) { x[threadIdx.x] += 1.f; }\n")
    _write(tmp_path, "b.cu", "__global__ void r(float* x) { __shared__ float s[32]; s[0] = __shfl_down_sync(0xffffffff, x[0], 1); }\n")
    _write(tmp_path, "c.cuh", "#include <cublas_v2.h>\n// __shared__ in a comment\nvoid g() { cublasSgemm(h); }\n")
    result = scan(tmp_path, use_cache=False)
    assert {f.path: f.symbol for f in result.findings if f.rule == "EX001"} == {
        "a.cu": "triage:low", "b.cu": "triage:medium", "c.cuh": "triage:high"}


def test_suppression_comment_and_project_config(tmp_path):
    _write(tmp_path, "a.py", 'import torch\nx = torch.zeros(1, device="cuda")  # ascend-migrate: ignore[DV001]\n'
                            'y = x.cuda()  # ascend-migrate: ignore\nz = x.cuda()\n')
    _write(tmp_path, "vendor/lib.py", "import torch\ntorch.cuda.synchronize()\n")
    _write(tmp_path, "pyproject.toml", '[tool.ascend-migrate]\nexclude = ["vendor"]\nignore = ["FW"]\n')
    result = scan(tmp_path, use_cache=False)
    assert _rules(result) == [("a.py", 4, "DV002")]


def test_bad_project_config_is_a_usage_error(tmp_path):
    _write(tmp_path, "pyproject.toml", '[tool.ascend-migrate]\nexclud = ["x"]\n')
    with pytest.raises(ConfigError, match="exclud"):
        scan(tmp_path)


def test_symlink_out_of_tree_is_not_followed(tmp_path):
    outside = _write(tmp_path, "outside/secret.py", "import torch\ntorch.cuda.synchronize()\n")
    root = tmp_path / "proj"
    root.mkdir()
    os.symlink(outside, root / "link.py")
    os.symlink(outside.parent, root / "linkdir")
    result = scan(root, use_cache=False)
    assert result.findings == []
    assert {n.path for n in result.notes} == {"link.py", "linkdir"}


def test_cache_and_parallel_give_identical_results(tmp_path):
    src = tmp_path / "proj"
    for i in range(80):
        _write(src, f"pkg/m{i}.py", f"import torch\nx{i} = torch.zeros(1).cuda()\ntorch.cuda.synchronize()\n")
    cold = scan(src, use_cache=True, jobs=1)
    warm = scan(src, use_cache=True, jobs=1)
    parallel = scan(src, use_cache=False, jobs=2)
    assert cold.findings == warm.findings == parallel.findings
    assert len(cold.findings) == 161  # 80 x (DV002 + CU001) + one FW001
    _write(src, "pkg/m0.py", "import torch\n")
    changed = scan(src, use_cache=True, jobs=1)
    assert len(changed.findings) == 159


def test_torch_npu_version_changes_the_advice(tmp_path):
    _write(tmp_path, "graphs.py", "import torch\ng = torch.cuda.CUDAGraph()\ns = torch.cuda.ExternalStream(0)\n")
    new = _rules(scan(tmp_path, use_cache=False, torch_npu_version="2.13.0"))
    old = _rules(scan(tmp_path, use_cache=False, torch_npu_version="2.1.0.post10"))
    assert new == [("graphs.py", 1, "FW001"), ("graphs.py", 2, "CU001"), ("graphs.py", 3, "CU001")]
    assert old == [("graphs.py", 1, "FW001"), ("graphs.py", 2, "CU002"), ("graphs.py", 3, "CU002")]
    with pytest.raises(ConfigError):
        scan(tmp_path, torch_npu_version="0.1")
