"""Folders recognised by a marker file inside them (a virtual environment's pyvenv.cfg, a
tagged cache, a conda environment) are skipped, and only those: the walk looks a marker up
only when the folder's own listing names it, so a marker that is a folder, or a conda-meta
without its history, leaves the folder in the tree."""
from __future__ import annotations

import os
from pathlib import Path

from ascend_migrate.scan.walk import skip_reason, walk_tree


def _tree(root: Path) -> None:
    for rel, body in {
        "train.py": "import torch\n",
        "venv/pyvenv.cfg": "home = /usr/bin\n", "venv/lib/x.py": "x = 1\n",
        "tagged/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n", "tagged/y.py": "y = 1\n",
        "conda/conda-meta/history": "==> 2024 <==\n", "conda/z.py": "z = 1\n",
        "half-conda/conda-meta/other": "", "half-conda/kept.py": "k = 1\n",
        "cfg-dir/pyvenv.cfg/inside.txt": "", "cfg-dir/kept.py": "k = 2\n",
        "linked/real.cfg": "home = /usr/bin\n", "linked/kept.py": "k = 3\n",
    }.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    os.symlink("real.cfg", root / "linked" / "pyvenv.cfg")  # a link to a file counts, as before


def test_marker_folders_are_skipped_and_look_alikes_are_not(tmp_path):
    _tree(tmp_path)
    walk = walk_tree(tmp_path)
    assert sorted(walk.skipped) == [
        ("conda/", "folder skipped: conda environment"),
        ("linked/", "folder skipped: virtual environment (pyvenv.cfg)"),
        ("tagged/", "folder skipped: cache folder (CACHEDIR.TAG)"),
        ("venv/", "folder skipped: virtual environment (pyvenv.cfg)"),
    ]
    assert [i.rel for i in walk.items if i.kind == "file"] == [
        "cfg-dir/kept.py", "cfg-dir/pyvenv.cfg/inside.txt", "half-conda/conda-meta/other", "half-conda/kept.py",
        "train.py"]


def test_skip_reason_with_and_without_a_listing_agree(tmp_path):
    _tree(tmp_path)
    for folder in ("venv", "tagged", "conda", "half-conda", "cfg-dir", "linked"):
        path = str(tmp_path / folder)
        assert skip_reason(path, folder) == skip_reason(path, folder, set(os.listdir(path))), folder
    assert skip_reason(str(tmp_path / "venv"), "venv", set()) == ""  # the listing is trusted
