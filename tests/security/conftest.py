"""Helpers for the hostile-input tests: a small CUDA project and a byte-exact tree snapshot."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TRAIN = '''"""Train a tiny classifier on CUDA."""
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def main():
    model = torch.nn.Linear(4, 2).cuda()
    torch.cuda.synchronize()
    return model


if __name__ == "__main__":
    main()
'''

UTILS = '''import torch


def to_gpu(x):
    return x.cuda()


def free():
    torch.cuda.empty_cache()
'''


def make_project(root: Path, n_extra: int = 0) -> Path:
    """A CUDA project in the shape real ones have: an entry script, a package, a launcher."""
    (root / "pkg").mkdir(parents=True)
    (root / "train.py").write_text(TRAIN)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "utils.py").write_text(UTILS)
    (root / "run.sh").write_text("#!/bin/sh\nCUDA_VISIBLE_DEVICES=0 python train.py --backend nccl\n")
    for i in range(n_extra):
        (root / "pkg" / f"layer_{i}.py").write_text(UTILS.replace("to_gpu", f"to_gpu_{i}"))
    return root


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under root: bytes for files, target for links, plus mode and owner."""
    out: dict[str, tuple] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            st = os.lstat(p)
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_file():
                out[rel] = ("file", p.read_bytes(), st.st_mode, st.st_uid, st.st_gid)
            else:
                out[rel] = ("dir", st.st_mode)
    return out


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120,
            input: str | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "ASCEND_MIGRATE_CACHE_DIR": str(
        Path(os.environ.get("TMPDIR", "/tmp")) / "am-security-cache"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "ascend_migrate", *args], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=timeout, input=input)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")
