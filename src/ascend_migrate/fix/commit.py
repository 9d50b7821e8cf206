"""All-or-nothing writes: stage every file next to its destination, then commit by renames.

Staging is where permissions, full disks and missing folders show up; a failure there leaves
the destination exactly as it was. A failure while committing (rare: the renames are in
already-writable folders) restores every file committed so far from the bytes read before,
and removes folders it created.
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ascend_migrate.scan.walk import display


class WriteError(OSError):
    """Writing the tree failed; the destination was left (or put back) as it was."""


def _why(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc)


@dataclass
class _Staged:
    dest: Path
    tmp: Optional[Path]  # None: a symlink to create at commit
    link: str = ""
    original: Optional[bytes] = None  # bytes of the file replaced (None: it did not exist)
    original_mode: Optional[int] = None
    original_link: Optional[str] = None
    committed: bool = False


@dataclass
class Transaction:
    staged: list[_Staged] = field(default_factory=list)
    created_dirs: list[Path] = field(default_factory=list)

    # ------------------------------------------------------------------ staging
    def _mkdirs(self, folder: Path) -> None:
        missing = []
        cur = folder
        while not cur.exists() and not cur.is_symlink():
            missing.append(cur)
            if cur.parent == cur:
                break
            cur = cur.parent
        for d in reversed(missing):
            d.mkdir()
            self.created_dirs.append(d)

    def _remember(self, item: _Staged) -> None:
        dest = item.dest
        if dest.is_symlink():
            item.original_link = os.readlink(dest)
        elif dest.exists():
            if not dest.is_file():
                raise WriteError(f"{display(str(dest))} exists and is not a regular file")
            item.original = dest.read_bytes()
            item.original_mode = dest.stat().st_mode

    def stage_bytes(self, dest: Path, data: bytes, mode: Optional[int] = None) -> None:
        try:
            self._mkdirs(dest.parent)
            item = _Staged(dest, None)
            self._remember(item)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
            item.tmp = Path(tmp)
            self.staged.append(item)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            if mode is not None:
                os.chmod(tmp, stat.S_IMODE(mode))
        except OSError as exc:
            raise WriteError(f"cannot write {display(str(dest))}: {_why(exc)}") from exc

    def stage_copy(self, src: Path, dest: Path) -> None:
        try:
            self._mkdirs(dest.parent)
            item = _Staged(dest, None)
            self._remember(item)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
            os.close(fd)
            item.tmp = Path(tmp)
            self.staged.append(item)
            shutil.copy2(src, tmp, follow_symlinks=False)
        except OSError as exc:
            raise WriteError(f"cannot write {display(str(dest))}: {_why(exc)}") from exc

    def stage_link(self, dest: Path, link: str) -> None:
        try:
            self._mkdirs(dest.parent)
            if not os.access(dest.parent, os.W_OK):
                raise PermissionError(13, "Permission denied")
            item = _Staged(dest, None, link=link)
            self._remember(item)
            self.staged.append(item)
        except OSError as exc:
            raise WriteError(f"cannot write {display(str(dest))}: {_why(exc)}") from exc

    # ------------------------------------------------------------------ commit / abort
    def commit(self) -> None:
        try:
            for item in self.staged:
                if item.tmp is not None:
                    os.replace(item.tmp, item.dest)
                else:
                    if item.dest.is_symlink() or item.dest.exists():
                        item.dest.unlink()
                    os.symlink(item.link, item.dest)
                item.committed = True
        except OSError as exc:
            restored = self.abort()
            raise WriteError(f"cannot write {display(str(item.dest))}: {_why(exc)}; "
                             f"restored {restored} file(s) already written") from exc

    def abort(self) -> int:
        """Undo: drop staged temporaries, restore committed files. Returns files restored."""
        restored = 0
        for item in reversed(self.staged):
            try:
                if not item.committed:
                    if item.tmp is not None and item.tmp.exists():
                        item.tmp.unlink()
                    continue
                if item.dest.is_symlink() or item.dest.exists():
                    item.dest.unlink()
                if item.original_link is not None:
                    os.symlink(item.original_link, item.dest)
                elif item.original is not None:
                    item.dest.write_bytes(item.original)
                    if item.original_mode is not None:
                        os.chmod(item.dest, stat.S_IMODE(item.original_mode))
                restored += 1
            except OSError:
                continue
        for d in reversed(self.created_dirs):
            try:
                d.rmdir()
            except OSError:
                pass
        self.staged.clear()
        self.created_dirs.clear()
        return restored
