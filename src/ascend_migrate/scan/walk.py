"""Walk a project tree safely: the one place that decides what is in the tree.

Used by the scanner, the migrator's copy (`--output`) and the validator. Guarantees:
- nothing blocks: FIFOs, sockets and devices are never opened (whatever their name);
- nothing loops: symlinks are never followed; a link whose target is inside the tree is
  reported as a link (the copy recreates it), one that leaves the tree, dangles or loops is
  skipped with a note;
- only folders that are provably not project source are skipped, each with a note: version
  control folders, virtual environments (recognised by their `pyvenv.cfg`, or conda's
  `conda-meta/history`), installed packages (`site-packages`), tagged caches (`CACHEDIR.TAG`),
  files package managers fetched (`node_modules`, `.eggs`), notebook autosave copies
  (`.ipynb_checkpoints`) and this tool's own outputs.
  A folder called `build`, `dist`, `env` or `.cache` is walked like any other;
- file names that are not valid UTF-8 are kept as surrogate-escaped strings, so they can be
  opened again; `display` turns them into readable text for reports.
"""
from __future__ import annotations

import fnmatch
import os
import stat
from pathlib import Path
from typing import Container, Iterable, NamedTuple, Optional, Union

from ascend_migrate.scan.own_outputs import OWN_DIRS, own_file_name

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})
INSTALLED_DIRS = frozenset({"site-packages", "dist-packages"})
# Third-party code fetched by package managers, and editor autosave copies of notebooks.
FETCHED_DIRS = frozenset({"node_modules", ".eggs", ".ipynb_checkpoints"})


class TreeItem(NamedTuple):
    """One entry of the tree. (Records here are not dataclasses: importing `dataclasses` costs
    a re-scan that answers from the stored report a noticeable share of its time.)"""

    rel: str  # POSIX path relative to the root; may hold surrogate escapes
    kind: str  # "file" (a regular file) | "link" (a symlink whose target stays inside the tree)
    link: str = ""  # the link's text, for kind == "link"
    is_dir: bool = False  # a link to a directory


class Walk:
    """What `walk_tree` found: the files and links, and what it skipped and why."""

    __slots__ = ("items", "skipped", "excluded_dirs", "dirs")

    def __init__(self, items: Optional[list[TreeItem]] = None, skipped: Optional[list[tuple[str, str]]] = None,
                 excluded_dirs: Optional[list[str]] = None, dirs: Optional[list[str]] = None) -> None:
        self.items: list[TreeItem] = [] if items is None else items
        self.skipped: list[tuple[str, str]] = [] if skipped is None else skipped  # (rel, reason)
        self.excluded_dirs: list[str] = [] if excluded_dirs is None else excluded_dirs  # by the user's patterns
        self.dirs: list[str] = [] if dirs is None else dirs  # every folder walked ("" is the root)

    def _fields(self) -> tuple:
        return (self.items, self.skipped, self.excluded_dirs, self.dirs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Walk) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces

    def __repr__(self) -> str:
        return (f"Walk(items={self.items!r}, skipped={self.skipped!r}, excluded_dirs={self.excluded_dirs!r}, "
                f"dirs={self.dirs!r})")

    @property
    def files(self) -> list[str]:
        return [i.rel for i in self.items if i.kind == "file"]


def display(text: str) -> str:
    """Text with surrogate escapes (undecodable bytes of a name or file) shown as `\\xNN`."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def skip_reason(path: str, name: str, names: Optional[Container[str]] = None) -> str:
    """Why the folder at `path` is not project source ('' when it may be).

    `names`: the folder's entry names when the caller has listed it already; a marker file
    that is not among them cannot exist, so it is not looked up (one failing `stat` fewer per
    marker and folder)."""
    return skip_reason_by_name(name) or _skip_reason_by_content(path, names)


def skip_reason_by_name(name: str) -> str:
    if name in VCS_DIRS:
        return "version-control folder"
    if name in OWN_DIRS:
        return "written by ascend-migrate"
    if name in INSTALLED_DIRS:
        return "installed packages"
    if name in FETCHED_DIRS:
        return "fetched third-party files" if name != ".ipynb_checkpoints" else "notebook autosave copies"
    return ""


def _skip_reason_by_content(path: str, names: Optional[Container[str]]) -> str:
    if (names is None or "pyvenv.cfg" in names) and os.path.isfile(os.path.join(path, "pyvenv.cfg")):
        return "virtual environment (pyvenv.cfg)"
    if (names is None or "CACHEDIR.TAG" in names) and os.path.isfile(os.path.join(path, "CACHEDIR.TAG")):
        return "cache folder (CACHEDIR.TAG)"
    if (names is None or "conda-meta" in names) and os.path.isfile(os.path.join(path, "conda-meta", "history")):
        return "conda environment"
    return ""


def excluded(rel: str, patterns: Iterable[str]) -> bool:
    for pat in patterns:
        pat = pat.rstrip("/")
        if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel, pat + "/*") or rel.startswith(pat + "/"):
            return True
    return False


def special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device file"
    return "special file"


def _link_target(full: str, root_real: str) -> tuple[Optional[str], str]:
    """(real target, '') for a link that resolves inside the tree, else (None, reason)."""
    try:
        target = os.path.realpath(full, strict=True) if _STRICT else _realpath_strict(full)
    except (OSError, RuntimeError) as exc:
        if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == 40:  # ELOOP
            return None, "symlink loop: skipped"
        return None, "broken symlink: skipped"
    if target != root_real and not target.startswith(root_real.rstrip(os.sep) + os.sep):
        return None, "symlink to outside the tree: not followed"
    return target, ""


try:  # os.path.realpath(strict=...) exists from Python 3.10
    os.path.realpath(".", strict=True)  # type: ignore[call-arg]
    _STRICT = True
except TypeError:  # pragma: no cover - Python 3.9
    _STRICT = False


def _realpath_strict(full: str) -> str:  # pragma: no cover - Python 3.9
    os.stat(full)  # raises ELOOP / ENOENT
    return os.path.realpath(full)


def _kind(entry: os.DirEntry) -> int:
    """The entry's file type bits (as in st_mode). The folder listing usually says (d_type), so
    the common kinds cost no `stat`; anything else (a FIFO, a device, a file system that does
    not fill d_type in) is `lstat`ed."""
    if entry.is_symlink():
        return stat.S_IFLNK
    if entry.is_dir(follow_symlinks=False):
        return stat.S_IFDIR
    if entry.is_file(follow_symlinks=False):
        return stat.S_IFREG
    return entry.stat(follow_symlinks=False).st_mode


def walk_tree(root: Path | str, exclude: Iterable[str] = (), *, own_files: bool = True) -> Walk:
    """Every regular file and in-tree symlink under `root`, in sorted order, plus what was skipped.

    `own_files`: also skip the files this tool names after itself (the change lists,
    `ascend-migrate-changes.*`); reports are recognised by content (`own_outputs`)."""
    root = os.fspath(root)
    patterns = tuple(exclude)
    out = Walk()
    root_real = os.path.realpath(root)
    stack = [""]
    # a folder is listed when its parent is (its listing tells which marker files to look
    # up), and its entries are taken from here when its turn comes
    listings: dict[str, Union[list[os.DirEntry], OSError]] = {"": _listing(root)}
    while stack:
        rel_dir = stack.pop()
        out.dirs.append(rel_dir)
        entries = listings.pop(rel_dir)
        if isinstance(entries, OSError):
            out.skipped.append((rel_dir or ".", f"unreadable folder: {entries.strerror or entries}"))
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                mode = _kind(entry)
            except OSError as exc:
                out.skipped.append((rel, f"unreadable: {exc.strerror or exc}"))
                continue
            if stat.S_ISLNK(mode):
                if excluded(rel, patterns):
                    continue
                target, reason = _link_target(entry.path, root_real)
                if target is None:
                    out.skipped.append((rel, reason))
                    continue
                is_dir = os.path.isdir(target)
                if not is_dir and not os.path.isfile(target):
                    out.skipped.append((rel, f"symlink to a {special_kind(os.stat(target).st_mode)}: skipped"))
                    continue
                out.items.append(TreeItem(rel, "link", os.readlink(entry.path), is_dir))
            elif stat.S_ISDIR(mode):
                if excluded(rel, patterns):
                    out.excluded_dirs.append(rel)
                    continue
                reason = skip_reason_by_name(entry.name)
                if not reason:
                    listing = _listing(entry.path)
                    reason = _skip_reason_by_content(
                        entry.path, None if isinstance(listing, OSError) else {e.name for e in listing})
                if reason:
                    out.skipped.append((rel + "/", f"folder skipped: {reason}"))
                    continue
                listings[rel] = listing
                subdirs.append(rel)
            elif stat.S_ISREG(mode):
                if excluded(rel, patterns):
                    continue
                if own_files and own_file_name(entry.name):
                    continue
                out.items.append(TreeItem(rel, "file"))
            else:
                out.skipped.append((rel, f"{special_kind(mode)}: skipped"))
        stack.extend(reversed(subdirs))
    out.items.sort(key=lambda i: i.rel.split("/"))
    return out


def _listing(folder: str) -> Union[list[os.DirEntry], OSError]:
    """The folder's entries sorted by name, or the error listing it gave."""
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as exc:
        return exc


def is_regular_file(path: Path | str) -> bool:
    """True only for a regular file (links are not followed; FIFOs and devices are False)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
