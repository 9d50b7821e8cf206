"""Shared by the stored-report and report-ledger tests: a small project to scan, a scan through
the CLI in this process, and reports compared without their scan time (the one part two scans of
a tree may differ in)."""
from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.scan import report_snapshot as snapshots


TRAIN = '''import argparse
import torch
import torch.distributed as dist
from torch.cuda.amp import GradScaler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="nccl")
    args = parser.parse_args()
    dist.init_process_group(args.backend)
    model = torch.nn.Linear(4, 4).cuda()
    scaler = GradScaler()
    print(torch.cuda.get_device_capability())


if __name__ == "__main__":
    main()
'''
# a comment outside ASCII: reports and stored bytes carry it as UTF-8
UTIL = "import torch\n\n\ndef to_dev(x):\n    return x.to('cuda:0')  # « device » ×\n"


def write_project(root: Path) -> Path:
    """A launched trainer, a helper module of a package and the launch script, at `root`."""
    (root / "pkg").mkdir(parents=True)
    (root / "train.py").write_text(TRAIN, encoding="utf-8")
    (root / "pkg" / "util.py").write_text(UTIL, encoding="utf-8")
    (root / "run.sh").write_text("export NCCL_DEBUG=INFO\ntorchrun --nproc_per_node=2 train.py\n", encoding="utf-8")
    return root


def isolate(tmp_path: Path, monkeypatch) -> None:
    """A private cache folder, and the test's just-written files counted as settled."""
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(snapshots, "RACY_NS", 0)


def scan_cli(root: Path, *args: str) -> tuple[int, str]:
    """`ascend-migrate scan ROOT --fail-on never ARGS`: exit code and stdout."""
    res = CliRunner().invoke(cli, ["scan", str(root), "--fail-on", "never", *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    return res.exit_code, res.stdout


def without_time(fmt: str, text: str) -> str:
    if fmt == "json":
        return re.sub(r'"duration_s": [0-9.e+-]+', '"duration_s": T', text)
    return re.sub(r"in [0-9.]+ s", "in T s", text)
