"""Paths that come from untrusted input, and the tool's own state folder.

A shared model skill (`replay.json`, `manual.patch`) and a checked-out tree are written by
someone else. Every path they name is checked before anything is written, read or deleted:
relative, no `..`, no drive letter, no NUL or backslash, and no component inside the target
that is a symbolic link (a link could point anywhere, so following it would write outside).

The `.ascend-migrate/` folder holds change lists, run history, validation reports and
confirmations. A tree can ship that folder (or a file in it) as a symlink; writing through it
would put those files wherever it points, so a link there is refused, never followed.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath

STATE_DIR = ".ascend-migrate"
_DRIVE = re.compile(r"^[A-Za-z]:")


class UnsafePathError(ValueError):
    """A path from untrusted input would leave the target or go through a link (exit code 2)."""


def check_relative(rel: object, what: str = "path") -> str:
    """`rel` as a POSIX relative path string, or UnsafePathError saying why it is refused."""
    if not isinstance(rel, str) or not rel:
        raise UnsafePathError(f"{what} {rel!r}: not a non-empty relative path")
    if "\0" in rel or "\\" in rel or "\n" in rel or "\r" in rel:
        raise UnsafePathError(f"{what} {rel!r}: contains a NUL, backslash or line break")
    if rel.startswith("/") or _DRIVE.match(rel) or os.path.isabs(rel):
        raise UnsafePathError(f"{what} {rel!r}: absolute path")
    parts = PurePosixPath(rel).parts
    if ".." in parts:
        raise UnsafePathError(f"{what} {rel!r}: contains '..'")
    if not parts or parts == (".",):
        raise UnsafePathError(f"{what} {rel!r}: names no file")
    return rel


def no_link_below(root: Path, path: Path, what: str = "path") -> None:
    """Refuse when any existing component of `path` from `root` down (root excluded) is a
    symlink. Missing components are fine: they will be created as real folders."""
    root, path = Path(root), Path(path)
    try:
        rel_parts = path.relative_to(root).parts
    except ValueError:
        raise UnsafePathError(f"{what} {path}: outside {root}") from None
    cur = root
    for part in rel_parts:
        cur = cur / part
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return
        except NotADirectoryError:
            raise UnsafePathError(f"{what} {path}: {cur} is not a folder") from None
        if stat.S_ISLNK(st.st_mode):
            raise UnsafePathError(f"{what} {path}: {cur} is a symbolic link; refusing to follow it")


def inside(root: Path, rel: object, what: str = "path") -> Path:
    """root/rel after checking rel (`check_relative`) and that no component is a symlink."""
    dest = Path(root) / check_relative(rel, what)
    no_link_below(root, dest, what)
    return dest


def state_dir(root: Path, create: bool = True) -> Path:
    """ROOT/.ascend-migrate as a real folder (created when missing and `create`); a symlink or
    a non-folder there is refused with UnsafePathError."""
    folder = Path(root) / STATE_DIR
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        if create:
            folder.mkdir(parents=True, exist_ok=True)
            st = os.lstat(folder)
        else:
            return folder
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(f"{folder} is a symbolic link; refusing to write through it "
                              "(remove it, then run again)")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePathError(f"{folder} exists and is not a folder; move it away, then run again")
    return folder


def state_path(root: Path, *parts: str, create: bool = True) -> Path:
    """A path under ROOT/.ascend-migrate whose folders are real folders (no links)."""
    folder = state_dir(root, create)
    dest = folder.joinpath(*parts)
    no_link_below(folder, dest.parent, "state folder")
    return dest
