"""All-or-nothing writes: stage every file next to its destination, then commit by renames.

Staging is where permissions, full disks and missing folders show up; a failure there leaves
the destination exactly as it was. A failure while committing (rare: the renames are in
already-writable folders) restores every file committed so far from the bytes read before,
and removes folders it created.

Before committing, every file the plan was computed from is read again: a file saved by an
editor since the plan was made is refused (nothing is written), never silently overwritten.
SIGTERM, SIGINT and SIGHUP during staging roll back (temporaries removed, tree untouched);
during the renames they are held until the last rename is done, so an interrupted write
leaves the tree as it was or fully written, never half of each. A replaced file keeps its
mode, owner and group (the owner can only be kept when running as root).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from ascend_migrate.scan.walk import display


class WriteError(OSError):
    """Writing the tree failed; the destination was left (or put back) as it was."""


def is_stream(path: Path) -> bool:
    """Is `path` a device or a pipe (`-o /dev/null`, `/dev/stdout`, a FIFO)? Such a target is
    written in place: it cannot be replaced by a rename, and it holds nothing to keep or restore."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def write_stream(path: Path, data: bytes) -> None:
    """Write `data` to a device or pipe (see is_stream); WriteError when it cannot be opened or written."""
    try:
        with open(path, "wb") as fh:
            fh.write(data)
    except OSError as exc:
        raise WriteError(f"cannot write {display(str(path))}: {_why(exc)}") from exc


class ChangedSincePlanned(WriteError):
    """A file changed on disk after its rewrite was planned (nothing was written)."""


class Interrupted(KeyboardInterrupt):
    """A termination signal arrived while writing; the write was rolled back or finished."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum


_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))
# Seconds to sleep after each staged file and each rename; only for tests that interrupt a write.
PAUSE_ENV = "ASCEND_MIGRATE_WRITE_PAUSE"


def _pause() -> None:
    value = os.environ.get(PAUSE_ENV)
    if value:
        try:
            time.sleep(float(value))
        except ValueError:
            pass


class _SignalGuard:
    """While active: a termination signal raises Interrupted (staging), or is held and raised
    when the critical section ends (committing). No-op outside the main thread."""

    def __init__(self) -> None:
        self.pending: Optional[int] = None
        self.critical = False
        self.saved: dict[int, object] = {}

    def _handler(self, signum: int, _frame: object) -> None:
        if self.critical:
            self.pending = self.pending or signum
            return
        raise Interrupted(signum)

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in _SIGNALS:
            try:
                self.saved[sig] = signal.signal(sig, self._handler)
            except (ValueError, OSError):
                continue

    def uninstall(self) -> None:
        for sig, old in self.saved.items():
            signal.signal(sig, old)  # type: ignore[arg-type]
        self.saved.clear()


_GUARD: Optional[_SignalGuard] = None


@contextlib.contextmanager
def signals_guarded() -> Iterator[None]:
    """Turn termination signals into Interrupted for the duration (nested use is one guard)."""
    global _GUARD
    if _GUARD is not None:
        yield
        return
    guard = _SignalGuard()
    guard.install()
    _GUARD = guard
    try:
        yield
        if guard.pending:
            raise Interrupted(guard.pending)
    finally:
        _GUARD = None
        guard.uninstall()


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold termination signals until the block ends (then raise Interrupted if one came)."""
    guard = _GUARD
    if guard is None or guard.critical:
        yield
        return
    guard.critical = True
    try:
        yield
    finally:
        guard.critical = False
    if guard.pending:
        signum, guard.pending = guard.pending, None
        raise Interrupted(signum)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def new_file_mode() -> int:
    """The mode a plain `open(path, "w")` would give a new file: 0666 less the umask.

    Read from /proc where it can be (reading the umask any other way means setting it, which
    would race with other threads); otherwise set and restored at once."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _keep_owner(tmp: str, st: Optional[os.stat_result]) -> None:
    """Give the new file the replaced file's owner and group (then its mode: chown clears setuid)."""
    if st is None:
        return
    mine = os.stat(tmp)
    if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
        try:
            os.chown(tmp, st.st_uid if os.geteuid() == 0 else -1, st.st_gid)
        except PermissionError:
            pass  # not root: the owner cannot be given away; the mode is still kept


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
    original_stat: Optional[os.stat_result] = None
    expected: Optional[str] = None  # sha256 the file must still have at commit (None: no check)
    committed: bool = False


@dataclass
class Transaction:
    """Staged writes. With `root`, a destination under it whose folders include a symlink is
    refused (a link planted in the tree must not carry writes elsewhere)."""

    staged: list[_Staged] = field(default_factory=list)
    created_dirs: list[Path] = field(default_factory=list)
    root: Optional[Path] = None

    def _check_links(self, dest: Path) -> None:
        if self.root is None:
            return
        try:
            dest.parent.relative_to(self.root)
        except ValueError:
            return  # a place the user named outside the tree (--changes FILE): theirs to choose
        from ascend_migrate.safe_paths import UnsafePathError, no_link_below

        try:
            no_link_below(self.root, dest.parent, "destination")
        except UnsafePathError as exc:
            raise WriteError(str(exc)) from None

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
            item.original_stat = dest.stat()
            item.original_mode = item.original_stat.st_mode

    def stage_bytes(self, dest: Path, data: bytes, mode: Optional[int] = None,
                    expected: Optional[bytes] = None) -> None:
        """Stage `data` for `dest`. `expected`: the bytes the rewrite was planned from; the
        file must still hold them (checked now and again right before the rename)."""
        try:
            self._check_links(dest)
            self._mkdirs(dest.parent)
            item = _Staged(dest, None)
            self._remember(item)
            if expected is not None:
                item.expected = _digest(expected)
                if item.original is None or _digest(item.original) != item.expected:
                    raise ChangedSincePlanned(f"{display(str(dest))} changed since the rewrite was planned "
                                              "(saved by another program?); run migrate again")
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
            item.tmp = Path(tmp)
            self.staged.append(item)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            _keep_owner(tmp, item.original_stat)
            if mode is None:  # a temporary file is made 0600; the file it becomes is not secret
                mode = item.original_mode if item.original_mode is not None else new_file_mode()
            os.chmod(tmp, stat.S_IMODE(mode))
            _pause()
        except WriteError:
            raise
        except OSError as exc:
            raise WriteError(f"cannot write {display(str(dest))}: {_why(exc)}") from exc

    def stage_copy(self, src: Path, dest: Path) -> None:
        try:
            self._check_links(dest)
            self._mkdirs(dest.parent)
            item = _Staged(dest, None)
            self._remember(item)
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
            os.close(fd)
            item.tmp = Path(tmp)
            self.staged.append(item)
            shutil.copy2(src, tmp, follow_symlinks=False)
            _pause()
        except WriteError:
            raise
        except OSError as exc:
            raise WriteError(f"cannot write {display(str(dest))}: {_why(exc)}") from exc

    def stage_link(self, dest: Path, link: str) -> None:
        try:
            self._check_links(dest)
            self._mkdirs(dest.parent)
            if not os.access(dest.parent, os.W_OK):
                raise PermissionError(13, "Permission denied")
            item = _Staged(dest, None, link=link)
            self._remember(item)
            self.staged.append(item)
        except WriteError:
            raise
        except OSError as exc:
            raise WriteError(f"cannot write {display(str(dest))}: {_why(exc)}") from exc

    # ------------------------------------------------------------------ commit / abort
    def _changed_since_planned(self) -> list[str]:
        changed = []
        for item in self.staged:
            if item.expected is None:
                continue
            try:
                now = _digest(item.dest.read_bytes()) if not item.dest.is_symlink() else ""
            except OSError:
                now = ""
            if now != item.expected:
                changed.append(display(str(item.dest)))
        return changed

    def commit(self) -> None:
        """Rename every staged file into place; signals are held until the last rename."""
        changed = self._changed_since_planned()
        if changed:
            self.abort()
            more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
            raise ChangedSincePlanned(f"{', '.join(changed[:3])}{more} changed since the rewrite was planned "
                                      "(saved by another program?); run migrate again")
        with signals_held():
            try:
                for item in self.staged:
                    if item.tmp is not None:
                        os.replace(item.tmp, item.dest)
                    else:
                        if item.dest.is_symlink() or item.dest.exists():
                            item.dest.unlink()
                        os.symlink(item.link, item.dest)
                    item.committed = True
                    _pause()
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
