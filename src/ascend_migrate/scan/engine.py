"""The scan engine: discover files, prefilter, analyse in parallel, cache, aggregate.

Nothing in the scanned tree is imported or executed. Per-file results are kept in one cache
index per tree, keyed by path, size, modification and inode-change time and inode (the content
hash is checked only when those change) and tied to the rule set, so re-scanning an unchanged tree reads no file.
Files are read and hashed where they are analysed (in the workers), so the tree's bytes are
never all held at once. JSON/YAML data files (no known config kind) are not scanned unless a
launch script names them.

The analysis of one file is `file_analysis.py` (a job and its result: `jobs.py`); putting the
per-file results together is `aggregate.py`.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from ascend_migrate import __version__
from ascend_migrate.knowledge.base import KnowledgeBase, load_knowledge
from ascend_migrate.knowledge.loader import DATA_DIR
from ascend_migrate.knowledge.user_data import user_coverage_files
from ascend_migrate.scan import config_kinds, entries, prefilter
from ascend_migrate.scan.bounds import MAX_SCAN_FINDINGS, MAX_SCAN_SECONDS
from ascend_migrate.scan.cache_codec import Codec, CacheFormatError
from ascend_migrate.scan.finding import Finding
from ascend_migrate.scan.own_outputs import own_output_kind
from ascend_migrate.scan.project_config import ConfigError, ProjectConfig, load_project_config
from ascend_migrate.scan.result import EntryPoint, FileNote, ScanResult
from ascend_migrate.scan.cache_location import cache_dir
from ascend_migrate.scan.jobs import MAX_FILE_BYTES, FileResult, Job, classify
from ascend_migrate.scan.file_analysis import analyse
from ascend_migrate.scan.aggregate import _aggregate, _named, _refs_by_name
from ascend_migrate.scan.walk import excluded, walk_tree

# Reached through the engine by the migrator, the reports and the tests; they live a floor below.
from ascend_migrate.scan.aggregate import (_PIN_HEAD, _PIN_VERSIONS, _agnostic_wording,  # noqa: F401
                                           is_agnostic_port, pinned_ceiling)
from ascend_migrate.scan.bounds import MAX_FINDINGS_PER_RULE  # noqa: F401
from ascend_migrate.scan.file_analysis import _console_scripts, analyse_python_text, cap_findings  # noqa: F401

INTERNAL_PREFIX = "internal error while analysing"


# --------------------------------------------------------------------------- discovery
def discover(root: Path, exclude: Iterable[str], notes: list[FileNote]) -> list[Job]:
    """Walk the tree (never following links out of it, never opening special files) and
    classify files. Every skipped folder and file is recorded in `notes`."""
    if not root.is_dir():
        if not root.is_file():  # a FIFO, socket or device: never opened
            notes.append(FileNote(root.name, "not a regular file: skipped"))
            return []
        job = classify(root.name)
        return [job] if job else []
    tree = walk_tree(root, exclude)
    for rel, reason in tree.skipped:
        notes.append(FileNote(rel, reason))
    for rel in tree.excluded_dirs:
        notes.append(FileNote(rel + "/", "folder skipped: excluded by configuration"))
    jobs: list[Job] = []
    for item in tree.items:
        if item.is_dir:
            continue  # its target is inside the tree and walked there
        job = classify(item.rel)
        if job is not None:
            jobs.append(job)
    return jobs


_excluded = excluded


# --------------------------------------------------------------------------- cache
CACHE_FORMAT = 7  # 5: JSON (cache_codec) instead of a pickle, which would run code on load; 6: console
# scripts as `module:function`, entry decisions with the function that gets the imports; 7: entries
# keep the inode-change time and inode
RACY_NS = 2_000_000_000  # a file modified this close to the index's writing is re-hashed


@dataclass
class CacheEntry:
    """A file's result, trusted while its stats stay the same. A rewrite that keeps the size and
    puts the old modification time back still changes the inode-change time (or the inode, when
    the file is replaced by a rename), so all four are compared."""

    size: int
    mtime_ns: int
    key: bytes  # content hash
    result: FileResult
    view: bytes = b""  # digest of what the entry-point decision reads from this file
    ctime_ns: int = 0
    ino: int = 0


@dataclass
class CacheIndex:
    """One file per scanned tree: every file's (size, mtime, hash, result), for one rule set."""
    digest: str = ""
    saved_ns: int = 0  # when the scan that wrote it started: files changed since are never trusted
    files: dict[str, CacheEntry] = field(default_factory=dict)
    # The entry-point decisions of the last scan and the key of their inputs (every file's
    # view digest and the overrides): an edit that changes no import or evidence keeps them.
    entries_key: bytes = b""
    entries: tuple = ()


_DIGEST: dict[str, str] = {}


def _kb_digest() -> str:
    """The rule set's identity: tool version, knowledge base files and the analysers' sources."""
    h = hashlib.blake2b(digest_size=12)
    h.update(__version__.encode())
    for path in sorted(DATA_DIR.rglob("*")):
        if path.suffix in (".yaml", ".json") and path.is_file():
            h.update(path.name.encode())
            h.update(path.read_bytes())
    for path in user_coverage_files():  # releases the user synced stand in for packaged ones
        h.update(b"user:" + path.name.encode())
        h.update(path.read_bytes())
    here = Path(__file__).parent
    for module in ("python_ast.py", "text_scanners.py", "engine.py", "config_kinds.py", "stray_bytes.py",
                   "entries.py", "prefilter.py", "suppress.py", "file_analysis.py", "aggregate.py", "jobs.py"):
        h.update((here / module).read_bytes())
    for path in sorted((here / "pyast").glob("*.py")):  # the Python analyser's families
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _cache_file(root: Path, npu_version: str) -> Path:
    key = hashlib.blake2b(f"{root.resolve()}|{npu_version}|{CACHE_FORMAT}".encode(), digest_size=12).hexdigest()
    return cache_dir() / "scan" / f"{key}.index"


_CODEC: Optional[Codec] = None


def _codec() -> Codec:
    """The cache's codec, built once: it may only ever construct these classes."""
    global _CODEC
    if _CODEC is None:
        from ascend_migrate.scan.finding import Edit, Fix, Position
        _CODEC = Codec((CacheIndex, CacheEntry, FileResult, Finding, Fix, Edit, Position,
                        entries.EntryFacts, entries.ImportRef, entries.Decision))
    return _CODEC


def _load_cache(path: Path, digest: str) -> CacheIndex:
    """The tree's index, read in one go; empty when missing, unreadable, not an index this
    version wrote (garbage, a planted pickle: never executed, only parsed as JSON and refused)
    or for another rule set."""
    try:
        with path.open("rb") as fh:
            data = _codec().loads(fh.read())
    except (OSError, CacheFormatError):
        return CacheIndex(digest)
    if (not isinstance(data, CacheIndex) or data.digest != digest
            or not all(type(k) is str and isinstance(v, CacheEntry) and isinstance(v.result, FileResult)
                       for k, v in data.files.items())):
        return CacheIndex(digest)
    return data


def _save_cache(path: Path, index: CacheIndex) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(_codec().dumps(index))
        os.replace(tmp, path)
    except OSError:
        pass  # caching is an optimisation; never fail a scan for it


# --------------------------------------------------------------------------- parallel workers
_WORKER_STATE: dict[str, Any] = {}


def _worker_init(npu_version: Optional[str]) -> None:
    _WORKER_STATE["kb"] = load_knowledge()
    _WORKER_STATE["coverage"] = load_coverage(npu_version)
    worker_gc()


def worker_gc() -> None:
    """Collect garbage less often in a worker process (never in a caller's process).

    A worker builds and drops one syntax tree per file: millions of short-lived container
    objects. With the default thresholds the collector runs every 700 allocations and its
    older generations keep walking the knowledge base and coverage tables loaded at start.
    Those are frozen (never collected: they live as long as the worker) and young objects
    are collected every 100,000 allocations; on Megatron-LM a one-process cold scan took
    about 8% less CPU (bench/cold_breakdown.py, bench/README.md). What is found does not
    depend on when garbage is collected."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def _worker(batch: list[tuple[Job, str, Optional[bytes]]]) -> list[tuple]:
    kb = _WORKER_STATE["kb"]
    cov = _WORKER_STATE["coverage"]
    return [_process(job, full, old, kb, cov) for job, full, old in batch]


def content_key(data: bytes) -> bytes:
    """The hash a file's cached result is kept under (the migrator checks it before re-using one)."""
    return hashlib.blake2b(data, digest_size=16).digest()


def _process(job: Job, full: str, old_key: Optional[bytes], kb: KnowledgeBase, cov: Any) -> tuple:
    """Read, check, hash and analyse one file: ("note", reason), ("same", key) when the content
    hash equals `old_key` (the cached result stands), or ("new", key, FileResult)."""
    try:
        with open(full, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return ("note", f"unreadable: {exc.strerror or exc}")
    own = own_output_kind(job.rel, data)
    if own:
        return ("note", f"skipped: written by ascend-migrate ({own})")
    if b"\0" in data[:8192] and job.kind != "notebook":
        return ("note", "skipped: binary content")
    key = content_key(data)
    if key == old_key:
        return ("same", key)
    return ("new", key, _safe_analyse(job, data, kb, cov))


def _safe_analyse(job: Job, data: bytes, kb: KnowledgeBase, cov: Any, defer_data: bool = True) -> FileResult:
    try:
        return analyse(job, data, kb, cov, defer_data=defer_data)
    except RecursionError:
        return FileResult(note="too deeply nested to analyse")
    except Exception as exc:  # one odd file must not lose the whole scan
        return FileResult(note=f"{INTERNAL_PREFIX}: {type(exc).__name__}: {exc}")


def load_coverage(version: Optional[str]) -> Any:
    try:
        from ascend_migrate.knowledge import coverage as cov_mod
    except ImportError:
        return None
    return cov_mod.load_coverage(version)


def resolve_npu_version(version: Optional[str]) -> str:
    """The torch_npu version whose coverage is used ('' when none is shipped)."""
    try:
        from ascend_migrate.knowledge import coverage as cov_mod
    except ImportError:
        if version:
            raise ConfigError("no torch_npu coverage data is available in this build")
        return ""
    from ascend_migrate.knowledge.loader import KnowledgeError

    if version is None and not cov_mod.available_versions():
        return ""
    try:
        return cov_mod.resolve_version(version)
    except KnowledgeError as exc:
        raise ConfigError(str(exc)) from exc


# --------------------------------------------------------------------------- the scan
def run_scan(root: Path, *, select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None,
             jobs: Optional[int] = None, use_cache: bool = True, torch_npu_version: Optional[str] = None,
             progress: Optional[Callable[[int, int], Any]] = None, entry: Iterable[str] = (),
             no_entry: Iterable[str] = (), exclude: Iterable[str] = ()) -> ScanResult:
    started = time.perf_counter()
    if not root.exists():
        raise ConfigError(f"{root}: no such file or directory")
    kb = load_knowledge()
    npu_version = resolve_npu_version(torch_npu_version)
    scan_root = root if root.is_dir() else root.parent
    config = load_project_config(scan_root) if root.is_dir() else ProjectConfig()
    select = tuple(s.upper() for s in (select or config.select))
    ignore = tuple(s.upper() for s in (ignore or config.ignore))
    for prefix in (*select, *ignore):
        if not any(rid.startswith(prefix) for rid in kb.rules):
            raise ConfigError(f"no rule matches {prefix!r} (see `ascend-migrate rules`)")

    result = ScanResult(root=str(root), torch_npu_version=npu_version)
    job_list = discover(root, (*config.exclude, *exclude), result.notes)
    cache_path = _cache_file(scan_root, npu_version)
    cache = _load_cache(cache_path, _kb_digest()) if use_cache else CacheIndex()
    trusted_before = cache.saved_ns - RACY_NS
    # stamped with the scan's start: a file changed while the scan ran is never trusted later
    fresh = CacheIndex(cache.digest, saved_ns=time.time_ns())

    results: dict[str, FileResult] = {}
    skipped: dict[str, str] = {}  # rel -> reason, reported in discovery order
    todo: list[tuple[Job, str, Optional[bytes]]] = []
    stats: dict[str, tuple[int, int]] = {}
    for job in job_list:
        full = scan_root / job.rel if root.is_dir() else root
        try:
            st = os.stat(full)
        except OSError as exc:
            skipped[job.rel] = f"unreadable: {exc.strerror or exc}"
            continue
        if st.st_size > MAX_FILE_BYTES:
            skipped[job.rel] = f"skipped: {st.st_size} bytes is over the {MAX_FILE_BYTES}-byte limit"
            continue
        hit = cache.files.get(job.rel)
        if hit is not None and (hit.size, hit.mtime_ns, hit.ctime_ns, hit.ino) == \
                (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) \
                and max(st.st_mtime_ns, st.st_ctime_ns) < trusted_before:
            results[job.rel] = hit.result
            fresh.files[job.rel] = hit
            continue
        stats[job.rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        todo.append((job, str(full), hit.key if hit is not None else None))

    total = len(results) + len(todo)
    done = len(results)
    if progress:
        progress(done, total)

    def take(job: Job, out: tuple) -> None:
        if out[0] == "note":
            skipped[job.rel] = out[1]
            return
        size, mtime, ctime, ino = stats[job.rel]
        if out[0] == "same":  # touched, not changed: the cached result stands
            entry = replace(cache.files[job.rel], size=size, mtime_ns=mtime, ctime_ns=ctime, ino=ino)
        else:
            entry = CacheEntry(size, mtime, out[1], out[2], ctime_ns=ctime, ino=ino)
        results[job.rel] = entry.result
        fresh.files[job.rel] = entry

    kept = [sum(len(r.findings) for r in results.values())]  # findings the scan holds so far

    def over_limit() -> str:
        """Why the scan analyses no more files ('' while it may): a bound on the findings one scan
        keeps and on its time, so a tree of generated files cannot take hours or gigabytes."""
        if kept[0] >= MAX_SCAN_FINDINGS:
            return f"not analysed: the scan keeps at most {MAX_SCAN_FINDINGS:,} findings and reached that"
        if time.perf_counter() - started > MAX_SCAN_SECONDS:
            return f"not analysed: the scan's time limit of {MAX_SCAN_SECONDS:g} s was reached"
        return ""

    def take_counted(job: Job, out: tuple) -> None:
        take(job, out)
        if job.rel in results:
            kept[0] += len(results[job.rel].findings)

    workers = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    if len(todo) < 64 or workers == 1:
        cov = load_coverage(npu_version) if npu_version else None
        for job, full_path, old in todo:
            why = over_limit()
            if why:
                skipped[job.rel] = why
            else:
                take_counted(job, _process(job, full_path, old, kb, cov))
            done += 1
            if progress:
                progress(done, total)
    else:
        batches = split_batches(todo, workers * 8)
        with ProcessPoolExecutor(max_workers=workers, initializer=_worker_init,
                                 initargs=(npu_version or None,)) as pool:
            for number, (batch, outs) in enumerate(zip(batches, pool.map(_worker, batches))):
                for (job, _, _), out in zip(batch, outs):
                    why = over_limit()
                    if why:
                        skipped[job.rel] = why
                    else:
                        take_counted(job, out)
                done += len(batch)
                if progress:
                    progress(done, total)
                if over_limit():  # the batches not started yet are not started at all
                    pool.shutdown(wait=False, cancel_futures=True)
                    for rest in batches[number + 1:]:
                        for job, _, _ in rest:
                            skipped[job.rel] = over_limit()
                    break
    for job in job_list:
        if job.rel in skipped:
            result.notes.append(FileNote(job.rel, skipped[job.rel]))
    result.lead_notes = len(result.notes)
    named = _named_data_files(results, scan_root, kb)
    for rel, res in named.items():  # kept analysed in the cache: a warm scan does not redo them
        results[rel] = res
        if rel in fresh.files:
            fresh.files[rel] = replace(fresh.files[rel], result=res, view=b"")  # a new result: a new view
    _aggregate(result, results, kb, scan_root)
    result.analyses = {rel: (entry.key, tuple(entry.result.findings)) for rel, entry in fresh.files.items()
                       if entry.result.analysed and entry.result is results.get(rel)}
    result.file_results = {rel: (entry.key, results[rel]) for rel, entry in fresh.files.items() if rel in results}
    fresh.entries_key, fresh.entries = cache.entries_key, cache.entries
    _decide_entries(result, results, root, entry, no_entry, fresh)
    if use_cache and (todo or named or len(fresh.files) != len(cache.files)
                      or fresh.entries_key != cache.entries_key):
        _save_cache(cache_path, fresh)
    result.selection = (select, ignore)
    result.findings = [f for f in result.findings if _selected(f.rule, select, ignore)]
    result.findings.sort(key=Finding.sort_key)
    result.duration_s = time.perf_counter() - started
    return result


def split_batches(items: list, n: int) -> list[list]:
    size = max(1, -(-len(items) // n))
    return [items[i:i + size] for i in range(0, len(items), size)]


def _selected(rule: str, select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    if select and not any(rule.startswith(s) for s in select):
        return False
    return not any(rule.startswith(s) for s in ignore)


def _named_data_files(results: dict[str, FileResult], root: Path, kb: KnowledgeBase) -> dict[str, FileResult]:
    """Data files left unscanned that a launch script names, now analysed as configs."""
    refs = _refs_by_name(results)
    out: dict[str, FileResult] = {}
    for rel, res in results.items():
        if not res.deferred or not _named(refs, rel):
            continue
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        full = _safe_analyse(classify(rel) or Job(rel, "config", "json"), data, kb, None, defer_data=False)
        out[rel] = replace(full, data_file=True)
    return out


def _view_digest(res: FileResult) -> bytes:
    view = (res.entry, tuple(res.launches), tuple(res.console_scripts))
    return hashlib.blake2b(repr(view).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _decide_entries(result: ScanResult, results: dict[str, FileResult], root: Path,
                    entry: Iterable[str], no_entry: Iterable[str], index: Optional[CacheIndex] = None) -> None:
    """Entry points from the evidence of every file (see scan/entries.py), with overrides.

    With an index, the decisions are re-used when no file's view and no override changed:
    deciding resolves every import of the tree, the largest fixed cost of a warm re-scan."""
    forced = [override_path(root, p) for p in entry]
    refused = [override_path(root, p) for p in no_entry]
    for given, rel in zip((*entry, *no_entry), (*forced, *refused)):
        if rel not in results or not rel.endswith((".py", ".ipynb")):
            raise ConfigError(f"{given}: not a Python file or notebook of the scanned tree (--entry/--no-entry)")
    decisions = None
    if index is not None:
        key = hashlib.blake2b(repr((sorted(forced), sorted(refused), root.is_dir())).encode(), digest_size=16)
        for rel in sorted(results):
            cached = index.files.get(rel)
            if cached is not None and cached.result is results[rel]:
                if not cached.view:
                    cached.view = _view_digest(results[rel])
                digest = cached.view
            else:
                digest = _view_digest(results[rel])
            key.update(rel.encode("utf-8", "surrogatepass") + b"\0" + digest)
        if index.entries_key == key.digest():
            decisions = list(index.entries)
        else:
            index.entries_key = key.digest()
    if decisions is None:
        views = {rel: entries.FileView(res.entry, res.launches, res.console_scripts) for rel, res in results.items()}
        decisions = entries.decide(views, entry=forced, no_entry=refused, whole_tree=root.is_dir())
        if index is not None:
            index.entries = tuple(decisions)
    for d in decisions:
        res = results.get(d.path)
        point = EntryPoint(d.path, d.line, d.kind, d.has_transfer_import or bool(res and res.has_transfer_import),
                           d.imports_torch_npu or bool(res and res.imports_torch_npu), d.reason, d.selected,
                           d.guarded, d.inject_function)
        (result.entry_points if d.selected else result.rejected_entry_points).append(point)


def override_path(root: Path, path: str) -> str:
    """An --entry/--no-entry FILE as a path relative to the scan root (given relative to it, or to
    the current folder, or absolute)."""
    base = root if root.is_dir() else root.parent
    candidate = Path(path)
    for full in (candidate, Path.cwd() / candidate):
        try:
            return full.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return candidate.as_posix()
