"""Launch files and DataLoader settings the static items must see: containers built on CUDA
images or started with NVIDIA's runtime (launch-configs, through the real scanner), and
DataLoader keywords collected in a dict or worker counts taken from the host's CPU count
(dataloader-workers, pin-memory-workers). Fixture projects and their expected verdicts are in
tests/fixtures/validate/."""
from __future__ import annotations

import shutil
from pathlib import Path

from ascend_migrate.scan.api import scan
from ascend_migrate.validate.checklist import default_checklist
from ascend_migrate.validate.project import load_project
from ascend_migrate.validate.static import StaticContext, run_static
from ascend_migrate.validate.thresholds import load_thresholds

from vhelpers import write_tree

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "validate"
ITEMS = {i.id: i for i in default_checklist()}


def _decide(item_id: str, root: Path):
    ctx = StaticContext(scan=scan(root, use_cache=False), project=load_project(root), thresholds=load_thresholds())
    return run_static(ITEMS[item_id], ctx)


def _verdicts(result, bad_words: tuple[str, ...]) -> list[tuple[int, str]]:
    return sorted((e["line"], "bad" if any(w in e["message"] for w in bad_words) else "ok")
                  for e in result.evidence if e.get("path"))


def test_loader_settings_through_dicts_and_cpu_counts(tmp_path):
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "loader_settings", root)
    expected: dict[str, list[tuple[int, str]]] = {}
    for line in (root / "expected.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            item, lineno, verdict = line.split()
            expected.setdefault(item, []).append((int(lineno), verdict))
    workers = _decide("dataloader-workers", root)
    assert _verdicts(workers, ("hard-codes", "per CPU core")) == sorted(expected["dataloader-workers"])
    assert workers.status == "fail"
    pinned = _decide("pin-memory-workers", root)
    assert _verdicts(pinned, ("without worker",)) == sorted(expected["pin-memory-workers"])
    assert pinned.status == "fail"
    # the evidence names the dict a setting came through
    assert any("through **loader_args" in e["message"] for e in pinned.evidence)


def test_loader_dicts_that_set_nothing_wrong_pass(tmp_path):
    write_tree(tmp_path, {"data.py": """
        import os
        from torch.utils.data import DataLoader
        def make(ds, args):
            opts = dict(batch_size=args.batch_size, num_workers=args.workers, pin_memory=True)
            quiet = {"batch_size": 8, "pin_memory": False}
            workers = min(os.cpu_count(), 8)
            return DataLoader(ds, **opts), DataLoader(ds, **quiet), DataLoader(ds, num_workers=workers)
    """})
    assert _decide("pin-memory-workers", tmp_path).status == "pass"
    assert _decide("dataloader-workers", tmp_path).status == "pass"


def test_a_dict_bound_twice_is_not_guessed(tmp_path):
    """Two bindings of the dict: which one reaches the call is not known, so pin_memory is not judged."""
    write_tree(tmp_path, {"data.py": """
        from torch.utils.data import DataLoader
        def make(ds, fast):
            kw = {"pin_memory": True}
            if not fast:
                kw = {"pin_memory": True, "num_workers": 2}
            return DataLoader(ds, **kw)
    """})
    res = _decide("pin-memory-workers", tmp_path)
    assert res.status == "pass" and res.summary == "no pinned DataLoader"


def test_container_launch_files_fail_launch_configs(tmp_path):
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "container_launch", root)
    res = _decide("launch-configs", root)
    assert res.status == "fail"
    got = sorted((e["path"], e["line"]) for e in res.evidence if e.get("rule") == "NV002")
    assert got == [("Dockerfile", 2), ("README.md", 8), ("scripts/train_in_container.sh", 4),
                   ("scripts/train_in_container.sh", 5)]


def test_cpu_only_container_files_pass_launch_configs(tmp_path):
    write_tree(tmp_path, {
        "Dockerfile": "FROM python:3.11-slim\nRUN pip install -r requirements.txt\nCMD [\"python\", \"train.py\"]\n",
        "run.sh": "docker build -t trainer .\ndocker run --rm --shm-size 8g -v \"$PWD\":/w trainer python train.py\n",
        "README.md": "```bash\ndocker run --rm trainer python train.py\n```\n",
        "train.py": "print('train')\n",
    })
    res = _decide("launch-configs", tmp_path)
    assert res.status == "pass", res.evidence
