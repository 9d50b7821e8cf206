"""Paths that come from untrusted input, and the tool's own state folder.

A shared model skill (`replay.json`, `manual.patch`) and a checked-out tree are written by
someone else. Every path they name is checked before anything is written, read or deleted:
relative, no `..`, no drive letter, no NUL or backslash, no component that is version-control
or tool state, and no component inside the target that is a symbolic link (a link could point
anywhere, so following it would write outside).

State folders are the ones the tree walker skips by name (`scan.walk.skip_reason_by_name`:
`.git`, `.hg`, `.svn`, `.ascend-migrate`, installed packages, ...). A file written there acts
later and elsewhere: `core.fsmonitor` in `.git/config` runs on the next `git status`, a hook on
the next commit, a `.pth` file in `site-packages` on the next Python start, a planted
confirmation on the next validation. No port ever changes them (they are not part of the tree
hash either), so a path through one is refused rather than judged.

The `.ascend-migrate/` folder holds change lists, run history, validation reports and
confirmations. A tree can ship that folder (or a file in it) as a symlink; writing through it
would put those files wherever it points, so a link there is refused, never followed.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath

from ascend_migrate.scan.walk import skip_reason_by_name

STATE_DIR = ".ascend-migrate"
_DRIVE = re.compile(r"^[A-Za-z]:")
# Characters some file systems drop from names (HFS+ ignores these code points), so `.g\u200cit`
# would open `.git` there; removed before a component is compared.
_IGNORED_IN_NAMES = dict.fromkeys([*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070),
                                   0xFEFF])
# The short (8.3) name Windows gives `.git` on NTFS.
_SHORT_GIT = re.compile(r"^git~\d+$")


class UnsafePathError(ValueError):
    """A path from untrusted input would leave the target or go through a link (exit code 2)."""


def state_component(part: str) -> str:
    """Why the path component `part` is version-control or tool state ('' when it is not).

    Compared as a case-insensitive file system, or Windows, would open it: case folded, trailing
    dots and spaces dropped, ignorable code points removed; so `.GIT`, `.git.` and `.g\u200cit`
    count as `.git` everywhere (a skill shared from Linux is replayed on macOS too)."""
    folded = part.translate(_IGNORED_IN_NAMES).rstrip(". ").lower()
    if _SHORT_GIT.match(folded):
        return "version-control folder"
    return skip_reason_by_name(part) or skip_reason_by_name(folded)


def check_relative(rel: object, what: str = "path", *, state_ok: bool = False) -> str:
    """`rel` as a POSIX relative path string, or UnsafePathError saying why it is refused.

    `state_ok`: the path is one this tool chose under its own state folder (never input), so a
    `.ascend-migrate` component is expected; every path from a tree or a skill leaves it False."""
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
    if not state_ok:
        for part in parts:
            reason = state_component(part)
            if reason:
                raise UnsafePathError(f"{what} {rel!r}: {part!r} is refused ({reason}); nothing from a "
                                      "shared skill or tree is written into version-control or tool state")
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


def inside(root: Path, rel: object, what: str = "path", *, state_ok: bool = False) -> Path:
    """root/rel after checking rel (`check_relative`) and that no component is a symlink."""
    dest = Path(root) / check_relative(rel, what, state_ok=state_ok)
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
