"""The last rendered report of a tree, written again when a re-scan finds nothing changed.

An agent re-scans after every edit, and many re-scans find the tree as it was. Rebuilding
the report then (thousands of findings turned into dicts, then into megabytes of JSON or
SARIF) costs far more than finding out that nothing changed: one walk of the tree and one
`stat` per file. So `scan` keeps, per tree and per set of options, the bytes of the last
report it rendered, with a fingerprint of everything the report was made from:

- every file the walk finds (path, type, size, modification and inode-change times, inode:
  rewriting a file, even one that keeps its size and is given its old modification time
  back, changes at least the inode-change time) and everything the walk skipped, and why;
- the project's `[tool.ascend-migrate]` table (where it is and its bytes);
- the options (format, rules selected, exclusions, entry overrides, torch_npu release,
  colour, SARIF root, docs URL), the path as given, the folder it resolves to and the
  current folder (overrides and SARIF roots are resolved against it);
- the tool itself: its version and the bytes of every source and knowledge file of the
  package, so any change to a rule, an analyser or a renderer is a miss.

When the fingerprint matches, the stored report is written out again with only the scan
time filled in; nothing is parsed, analysed or rendered, and the analysers are not even
imported. Anything else is a miss and the normal scan runs (and stores its report).

Racy files: a snapshot is stored only when every file was last modified at least
`RACY_NS` before the fingerprint was taken (the rule the per-file cache follows), so a
file rewritten within one timestamp tick of the scan, keeping its size, cannot go unseen.

The snapshot files hold only the report the user asked for (already shown to them) and
are read as data: a damaged or foreign file is a miss, never an error.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import zlib
from pathlib import Path
from typing import Any, NamedTuple, Optional

from ascend_migrate import __version__
from ascend_migrate.scan.cache_location import cache_dir
from ascend_migrate.scan.project_config import find_project_config
from ascend_migrate.scan.walk import walk_tree

SNAPSHOT_FORMAT = 1
RACY_NS = 2_000_000_000  # as the per-file cache (engine.RACY_NS): a file this fresh is not trusted
MAGIC = b"ascend-migrate report snapshot\n"
# The scan time is the one part of a report that differs between two scans of the same tree.
# The stored report holds this stand-in where the time goes; it is rendered with it and the
# real time is put in its place (only when the stand-in's text occurs exactly where expected).
STAND_IN_SECONDS = 987654.321
_TIME_FIELDS = {"json": 1, "text": 1, "md": 1, "sarif": 0, "csv": 0}  # times each format shows it


def duration_text(fmt: str, seconds: float) -> str:
    """The scan time as the renderer of `fmt` writes it (JSON: seconds rounded to ms; text and
    Markdown: two decimals)."""
    if fmt == "json":
        return json.dumps(round(seconds, 3))
    return f"{seconds:.2f}"


_TOOL_DIGEST: Optional[str] = None


def tool_digest() -> str:
    """Identity of this build: version plus every source and data file of the package.

    Hashing the package's bytes on every re-scan costs more than the rest of the check of a
    small tree, so the digest is kept in the cache under a key made of the version and every
    package file's path, size, modification and inode-change times and inode; it is computed
    again whenever any of them changes, and kept only when every file is settled (`RACY_NS`)."""
    global _TOOL_DIGEST
    if _TOOL_DIGEST is None:
        started = time.time_ns()
        package = Path(__file__).resolve().parents[1]
        files: list[tuple[str, str]] = []
        for dirpath, dirnames, filenames in os.walk(package):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".py", ".yaml", ".yml", ".json")):
                    full = os.path.join(dirpath, name)
                    files.append((os.path.relpath(full, package), full))
        listing = []
        newest = 0
        for rel, full in files:
            st = os.stat(full)
            listing.append((rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
            newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
        key = hashlib.blake2b(repr((__version__, str(package), listing)).encode("utf-8", "surrogateescape"),
                              digest_size=16).hexdigest()
        memo = cache_dir() / "report" / f"tool-{key}.digest"
        try:
            known = memo.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            known = ""
        if len(known) == 32 and all(c in "0123456789abcdef" for c in known):
            _TOOL_DIGEST = known
            return known
        h = hashlib.blake2b(__version__.encode(), digest_size=16)
        for rel, full in files:
            h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            with open(full, "rb") as fh:
                h.update(fh.read())
        _TOOL_DIGEST = h.hexdigest()
        if newest < started - RACY_NS:
            write_cache_file(memo, _TOOL_DIGEST.encode("ascii"))
    return _TOOL_DIGEST


def write_cache_file(path: Path, data: bytes) -> None:
    """Write a cache file atomically (a name unique to this process, then a rename); failing
    to write it only costs the next run."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


class Fingerprint(NamedTuple):
    """What a report of the tree was made from, as of `taken_ns`."""

    digest: str
    newest_mtime_ns: int  # the most recent modification among the files
    taken_ns: int  # wall clock when the fingerprint was started
    # What the digest was made from, for a report patched file by file (scan/report_ledger.py):
    # the digest of everything but the files' own stats (the project table, what the walk
    # skipped), and each file's (path, mode, size, mtime, ctime, inode) or (path, "error", errno).
    frame: str = ""
    stats: tuple = ()

    def settled(self) -> bool:
        """Every file was last modified well before the fingerprint: safe to store."""
        return self.newest_mtime_ns < self.taken_ns - RACY_NS


_PRIMED: dict[tuple[str, tuple[str, ...], str], Fingerprint] = {}


def prime(path: Path, exclude: tuple[str, ...], fingerprint: Fingerprint) -> None:
    """Hand a fingerprint just taken (and found to match no stored report) to the next
    `tree_fingerprint` call for the same tree in this process: the full scan that follows
    need not walk the tree again. Taken earlier, it is only more careful about fresh files."""
    _PRIMED[(str(path), tuple(exclude), os.getcwd())] = fingerprint


def tree_fingerprint(path: Path, exclude: tuple[str, ...]) -> Fingerprint:
    """Fingerprint of the tree (or file) at `path` as a scan with these exclusions sees it.

    `exclude` are the command line's patterns; the project table's are covered by hashing
    the table itself (a table that changes changes the fingerprint)."""
    primed = _PRIMED.pop((str(path), tuple(exclude), os.getcwd()), None)
    if primed is not None:
        return primed
    taken = time.time_ns()
    h = hashlib.blake2b(digest_size=20)
    newest = 0
    root = path if path.is_dir() else path.parent
    config = find_project_config(root) if path.is_dir() else None
    if config is not None:
        st = config.stat()
        newest = st.st_mtime_ns
        h.update(b"config\0" + str(config).encode("utf-8", "surrogateescape") + b"\0" + config.read_bytes())
    if path.is_dir():
        exclude = (*_config_exclude(path, config), *exclude)
        tree = walk_tree(path, exclude)
        for rel, reason in tree.skipped:
            h.update(f"skip\0{rel}\0{reason}\n".encode("utf-8", "surrogateescape"))
        for rel in tree.excluded_dirs:
            h.update(f"excluded\0{rel}\n".encode("utf-8", "surrogateescape"))
        names = [item.rel for item in tree.items]
    else:
        names = [path.name]
    base = str(root) + os.sep
    stats: list = []
    times = [newest]
    for rel in names:
        try:
            st = os.stat(base + rel)
        except OSError as exc:
            stats.append((rel, "error", exc.errno))
            continue
        stats.append((rel, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        times.append(st.st_ctime_ns if st.st_ctime_ns > st.st_mtime_ns else st.st_mtime_ns)
    frame = h.hexdigest()
    h.update(repr(stats).encode("utf-8", "surrogateescape"))  # one encoding of the whole listing
    return Fingerprint(h.hexdigest(), max(times), taken, frame, tuple(stats))


def _config_exclude(root: Path, config: Optional[Path]) -> tuple[str, ...]:
    """The project table's exclude patterns as the engine applies them (only when there is a
    table: reading it needs the TOML parser). A table that cannot be read gives none; the
    scan then stops with the error, and nothing is stored."""
    if config is None:
        return ()
    from ascend_migrate.scan.project_config import ConfigError, load_project_config

    try:
        return load_project_config(root).exclude
    except ConfigError:
        return ()


def options_key(path: Path, options: dict[str, Any]) -> str:
    """Which snapshot file belongs to this scan: the tree, where it is asked from, the options,
    the build and the coverage files the user synced (`knowledge.user_data`)."""
    from ascend_migrate.knowledge.user_data import user_coverage_listing

    material = json.dumps({
        "format": SNAPSHOT_FORMAT, "tool": tool_digest(), "path": str(path),
        "resolved": str(path.resolve()), "cwd": os.getcwd(), "options": options,
        "user_coverage": user_coverage_listing(),  # a release synced since changes the report
    }, sort_keys=True, default=str, ensure_ascii=True)
    return hashlib.blake2b(material.encode("ascii"), digest_size=16).hexdigest()


def snapshot_file(key: str) -> Path:
    return cache_dir() / "report" / f"{key}.snapshot"


class Snapshot:
    """A stored report: the text with the stand-in time, and what the CLI says besides it."""

    def __init__(self, fmt: str, template: str, facts: dict[str, Any]) -> None:
        self.fmt = fmt
        self.template = template
        self.facts = facts  # findings, files_scanned, lines_scanned, worst, entry_points, rejected, notes

    def text(self, seconds: float) -> str:
        """The report with the scan time filled in."""
        if not _TIME_FIELDS[self.fmt]:
            return self.template
        return self.template.replace(duration_text(self.fmt, STAND_IN_SECONDS), duration_text(self.fmt, seconds))


def load_body(key: str, fingerprint: Fingerprint, fmt: str) -> Optional[tuple[dict[str, Any], bytes]]:
    """The facts and the stored bytes (UTF-8, stand-in time) for `key` if made from a tree with
    this fingerprint; the bytes are checked against the stored CRC-32 when the header has one."""
    try:
        with snapshot_file(key).open("rb") as fh:
            data = fh.read()
    except OSError:
        return None
    try:
        if not data.startswith(MAGIC):
            return None
        head_end = data.index(b"\n", len(MAGIC))
        head = json.loads(data[len(MAGIC):head_end])
        if (not isinstance(head, dict) or head.get("fingerprint") != fingerprint.digest or head.get("fmt") != fmt
                or not isinstance(head.get("facts"), dict) or head.get("length") != len(data) - head_end - 1):
            return None
    except ValueError:
        return None
    body = data[head_end + 1:]
    if "crc32" in head and head["crc32"] != zlib.crc32(body):
        return None
    return head["facts"], body


def load(key: str, fingerprint: Fingerprint, fmt: str) -> Optional[Snapshot]:
    """The stored report for `key` if it was made from a tree with this fingerprint."""
    found = load_body(key, fingerprint, fmt)
    if found is None:
        return None
    try:
        template = found[1].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return Snapshot(fmt, template, found[0])


def strict_utf8(body: bytes) -> bool:
    """Is `body` UTF-8 that a strict encoder could have written (no encoded surrogates, which
    `surrogatepass` lets through)? Cheap for the usual report: a surrogate's encoding starts
    with 0xED, and a report without that byte needs no decoding to tell."""
    if b"\xed" not in body:
        return True
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def body_chunks(fmt: str, body: bytes, seconds: float) -> list:
    """The stored bytes with the scan time filled in, as pieces to write one after another
    (views of `body`: the megabytes around the time are not copied)."""
    if not _TIME_FIELDS[fmt]:
        return [body]
    stand_in = duration_text(fmt, STAND_IN_SECONDS).encode("ascii")
    actual = duration_text(fmt, seconds).encode("ascii")
    view = memoryview(body)
    chunks: list = []
    start = 0
    while True:
        at = body.find(stand_in, start)
        if at < 0:
            break
        chunks += [view[start:at], actual]
        start = at + len(stand_in)
    chunks.append(view[start:])
    return chunks


def make_template(fmt: str, rendered: str) -> Optional[str]:
    """`rendered` (made with STAND_IN_SECONDS as the scan time) if the stand-in occurs exactly
    where the format shows the time, else None (never stored: the time could not be put back)."""
    stand_in = duration_text(fmt, STAND_IN_SECONDS)
    return rendered if rendered.count(stand_in) == _TIME_FIELDS.get(fmt, -1) else None


def save(key: str, fingerprint: Fingerprint, snap: Snapshot) -> None:
    """Store `snap` (atomically; a failure to store is ignored: it only costs the next scan)."""
    if not fingerprint.settled():
        return
    body = snap.template.encode("utf-8", "surrogatepass")
    head = json.dumps({"fingerprint": fingerprint.digest, "fmt": snap.fmt, "facts": snap.facts,
                       "length": len(body), "crc32": zlib.crc32(body)}, sort_keys=True, ensure_ascii=True).encode("ascii")
    path = snapshot_file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # only when storing: a re-scan that reads its report need not import it

        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(MAGIC + head + b"\n" + body)
            os.replace(tmp, path)
        except OSError:
            os.unlink(tmp)
            raise
    except OSError:
        pass
