"""`migrate --output`: a link that leaves the tree by name and comes back must not point at the
original checkout in the copy.

`c.py -> ../tr/src/a.py` in a tree at `tr/` resolves inside the tree, so it is kept; copied
verbatim to `out/c.py` it resolves to `tr/src/a.py` again, the unported original: validating
the port would run unported code and editing it would write the source. Every link in the
copy resolves inside the copy (or is left out with a note).
"""
from __future__ import annotations

import os
from pathlib import Path

from .conftest import make_project, run_cli, snapshot


def _inside(path: Path, root: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))


def _migrate(tmp_path: Path, tree: Path) -> tuple[Path, str]:
    out = tmp_path / "out"
    proc = run_cli("migrate", str(tree), "--output", str(out))
    assert proc.returncode in (0, 1), proc.stderr
    return out, proc.stdout + proc.stderr


def test_relative_link_through_the_tree_name_points_into_the_output(tmp_path: Path) -> None:
    tree = make_project(tmp_path / "tr")
    os.symlink("../tr/pkg/utils.py", tree / "c.py")
    os.symlink("../../tr/pkg", tree / "pkg" / "again")  # a folder, from one level down
    before = snapshot(tree)
    out, _text = _migrate(tmp_path, tree)
    for rel in ("c.py", "pkg/again"):
        assert (out / rel).is_symlink(), rel
        assert _inside(out / rel, out), f"{rel} -> {os.readlink(out / rel)} leaves the output"
    assert os.path.realpath(out / "c.py") == os.path.realpath(out / "pkg" / "utils.py")  # the ported file
    assert snapshot(tree) == before


def test_absolute_link_into_the_tree_points_into_the_output(tmp_path: Path) -> None:
    tree = make_project(tmp_path / "tr")
    os.symlink(str(tree / "pkg" / "utils.py"), tree / "abs.py")
    out, _text = _migrate(tmp_path, tree)
    assert (out / "abs.py").is_symlink() and not os.path.isabs(os.readlink(out / "abs.py"))
    assert _inside(out / "abs.py", out)


def test_plain_links_keep_their_text(tmp_path: Path) -> None:
    tree = make_project(tmp_path / "tr")
    os.symlink("pkg/utils.py", tree / "u.py")
    os.symlink("../train.py", tree / "pkg" / "t.py")
    out, _text = _migrate(tmp_path, tree)
    assert os.readlink(out / "u.py") == "pkg/utils.py"
    assert os.readlink(out / "pkg" / "t.py") == "../train.py"


def test_link_to_a_folder_that_is_not_copied_is_left_out_with_a_note(tmp_path: Path) -> None:
    tree = make_project(tmp_path / "tr")
    (tree / ".git").mkdir()
    (tree / ".git" / "config").write_text("[core]\n")
    os.symlink(".git/config", tree / "gitconfig")
    out, text = _migrate(tmp_path, tree)
    assert not os.path.lexists(out / "gitconfig")
    assert "gitconfig" in text
