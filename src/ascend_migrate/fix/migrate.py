"""Migrate a whole tree: dry run (diff), in place (--write), or into a copy (--output DIR).

Never loses data: files are written atomically (temporary file, then rename) with their
mode, encoding, BOM and line endings preserved; nothing is written outside the target tree;
symlinks are not followed; binary and oversized files are left alone with a note; a file
whose rewrite does not parse or is not idempotent is not written at all.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.api import scan
from ascend_migrate.scan.engine import (MAX_FILE_BYTES, classify, content_key, load_coverage, override_path,
                                        split_batches, worker_gc)
from ascend_migrate.scan.file_analysis import decode_source
from ascend_migrate.scan.stray_bytes import restore
from ascend_migrate.scan.walk import display, is_regular_file, walk_tree
from ascend_migrate.fix.commit import ChangedSincePlanned, Transaction, WriteError, signals_held, signals_guarded
from ascend_migrate.fix.notebook import rewrite_notebook, verify_notebook
from ascend_migrate.fix.result import (FileOutcome, MigrationResult, change_list_bytes, change_paths,
                                       write_change_list)
from ascend_migrate.fix.runs import is_run_output, record_run, restore_state, set_aside_state
from ascend_migrate.fix.rewrite import Change, Options, rewrite_config, rewrite_python, verify

CHANGES_NAME = "ascend-migrate-changes"


class MigrateError(ValueError):
    """A usage problem (exit code 2): bad paths, unsafe output location, ..."""


def _encode(text: str, encoding: str, bom: bool) -> bytes:
    data = text.encode(encoding, errors="surrogateescape" if encoding.replace("_", "-").lower() in ("utf-8", "utf8") else "strict")
    return (b"\xef\xbb\xbf" + data) if bom else data


def _source_encoding(data: bytes) -> str:
    import tokenize

    try:
        enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return "utf-8"
    return "utf-8" if enc == "utf-8-sig" else enc


def plan(root: Path, opts: Options, torch_npu_version: Optional[str] = None, inject_init: bool = False,
         entry: Iterable[str] = (), no_entry: Iterable[str] = (), exclude: Iterable[str] = (),
         progress: Optional[Callable[[str, int, int], None]] = None) -> MigrationResult:
    """Compute every file's rewrite without touching the disk.

    `progress(phase, done, total)` is called as files are scanned ("scanning") and rewritten
    and verified ("rewriting"), so a front end can show where a long run is.
    """
    root = Path(root)
    if not root.exists():
        raise MigrateError(f"{root}: no such file or directory")
    if not root.is_dir() and not root.is_file():
        raise MigrateError(f"{root}: not a regular file or directory (a FIFO, socket or device)")
    kb = load_knowledge()
    result = MigrationResult(root=root, style=opts.style, options={
        "style": opts.style, "min_torch": opts.min_torch, "annotate": opts.annotate, "safe_only": opts.safe_only,
        "inject_init": inject_init, "torch_npu_version": torch_npu_version,
        # overrides as paths inside the tree, so a replay on another checkout means the same files
        "entry": sorted(override_path(root, e) for e in entry),
        "no_entry": sorted(override_path(root, e) for e in no_entry)})
    # the scan cache is shared with `scan`: a migrate after a scan re-analyses only changed files;
    # each rewrite below is verified only for the files it changes
    scan_result = scan(root, use_cache=True, torch_npu_version=torch_npu_version, entry=entry, no_entry=no_entry,
                       exclude=exclude,
                       progress=(lambda done, total: progress("scanning", done, total)) if progress else None)
    base = root if root.is_dir() else root.parent
    entry_points = {e.path for e in scan_result.entry_points}
    guarded_entries = {e.path for e in scan_result.entry_points if e.guarded}
    entry_functions = {e.path: e.inject_function for e in scan_result.entry_points if e.inject_function}
    init_targets = _package_inits(base) if inject_init else set()
    result.notes.extend(f"{n.path}: {n.reason}" for n in scan_result.notes)
    build_configs = set(scan_result.build_configs)  # the scan's decision, so both agree on every file
    paths = sorted({f.path for f in scan_result.findings} | entry_points | init_targets)
    paths = [p for p in paths if not is_run_output(base, p)]
    by_path: dict[str, list] = {}
    for f in scan_result.findings:
        by_path.setdefault(f.path, []).append(f)
    tasks = [_FileTask(rel, str(base / rel if root.is_dir() else root), rel in build_configs,
                       rel in entry_points or rel in init_targets, tuple(by_path.get(rel, ())),
                       guard_inject=rel in guarded_entries and rel not in init_targets,
                       inject_function="" if rel in init_targets else entry_functions.get(rel, ""),
                       # with a coverage release the scan and the workers here load the same one
                       analysis=scan_result.analyses.get(rel) if scan_result.torch_npu_version else None)
             for rel in paths]
    if progress:
        progress("rewriting", 0, len(paths))
    for done, (outcome, notes) in enumerate(_plan_files(tasks, opts, scan_result.torch_npu_version, kb), 1):
        result.notes.extend(notes)
        if outcome is not None:
            result.files.append(outcome)
        if progress:
            progress("rewriting", done, len(paths))
    return result


@dataclass(frozen=True)
class _FileTask:
    rel: str
    full: str
    build_config: bool  # the scan listed it as a build or CI config: never rewritten
    inject: bool  # an entry point (or a package __init__ with --inject-init)
    findings: tuple = ()  # the scan's findings in this file
    guard_inject: bool = False  # EntryPoint.guarded: inject only when run as a program
    inject_function: str = ""  # EntryPoint.inject_function: inject into this function's body
    analysis: Optional[tuple] = None  # the scan's (content hash, findings) of a fully analysed module


_PARALLEL_MIN = 64  # below this many files a process pool costs more than it saves
_WORKER: dict[str, Any] = {}


def _plan_files(tasks: list[_FileTask], opts: Options, npu_version: str, kb) -> Iterable[tuple]:
    """(outcome or None, notes) per task, in order: in this process for a few files, else in a
    pool of one worker per core (each file's rewrite and its verification are independent)."""
    workers = os.cpu_count() or 1
    if len(tasks) < _PARALLEL_MIN or workers == 1:
        coverage = load_coverage(npu_version) if npu_version else None
        for task in tasks:
            yield _plan_guarded(task, opts, kb, coverage)
        return
    from concurrent.futures import ProcessPoolExecutor

    batches = split_batches(tasks, workers * 8)  # the scan's batching: a few batches per worker
    with ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(npu_version,)) as pool:
        for outs in pool.map(_worker_batch, batches, [opts] * len(batches)):
            yield from outs


def _worker_init(npu_version: str) -> None:
    _WORKER["kb"] = load_knowledge()
    _WORKER["coverage"] = load_coverage(npu_version) if npu_version else None
    worker_gc()


def _worker_batch(batch: list[_FileTask], opts: Options) -> list[tuple]:
    return [_plan_guarded(task, opts, _WORKER["kb"], _WORKER["coverage"]) for task in batch]


def _plan_guarded(task: _FileTask, opts: Options, kb, coverage) -> tuple:
    try:
        return _plan_file(task, opts, kb, coverage)
    except Exception as exc:  # one file's internal error must not stop the others
        if os.environ.get("ASCEND_MIGRATE_DEBUG"):
            raise
        return FileOutcome(task.rel, b"", error=f"internal error: {type(exc).__name__}: {exc}", internal=True), []


def _plan_file(task: _FileTask, opts: Options, kb, coverage) -> tuple[Optional[FileOutcome], list[str]]:
    """One file's rewrite, verified; (None, notes) when the file is left out."""
    rel, full = task.rel, Path(task.full)
    notes: list[str] = []
    job = classify(rel)
    if task.build_config:  # it configures a build, install or CI host, not the run the port is for
        notes.append(f"{rel}: a build, install or CI script, not a launch script: not rewritten")
    if job is None or job.kind not in ("python", "config", "notebook") or not full.is_file() \
            or full.is_symlink() or task.build_config:
        manual = [Change(rel, f.line, f.end_line, f.rule, "manual", f.message, new_line=f.line)
                  for f in task.findings if f.severity != "info"]
        return (FileOutcome(rel, b"", manual=manual) if manual else None), notes
    data = full.read_bytes()
    if len(data) > MAX_FILE_BYTES or b"\0" in data[:8192]:
        notes.append(f"{rel}: not rewritten (binary or over {MAX_FILE_BYTES} bytes)")
        return None, notes
    outcome = FileOutcome(rel, data)
    file_opts = Options(style=opts.style, min_torch=opts.min_torch, annotate=opts.annotate,
                        safe_only=opts.safe_only, inject=task.inject, guard_inject=task.guard_inject,
                        inject_function=task.inject_function)
    if job.kind == "python":
        text, problem = decode_source(data)
        if text is None or problem:
            outcome.manual.append(Change(rel, 1, 1, "SC001", "manual", f"not rewritten: {problem}", new_line=1))
            return outcome, notes
        # the scan analysed these very bytes (same rules, same coverage): its findings stand
        reuse = task.analysis is not None and task.analysis[0] == content_key(data)
        rewritten = rewrite_python(kb, rel, text, file_opts, coverage,
                                   findings=list(task.analysis[1]) if reuse else None)
    elif job.kind == "notebook":  # a byte order mark is set aside and written back (bom below)
        text = data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
        rewritten = rewrite_notebook(kb, rel, text, file_opts, coverage)
    else:
        text = data.decode("utf-8", errors="surrogateescape")
        rewritten = rewrite_config(kb, rel, text, job.config_kind, file_opts)
    outcome.changes, outcome.manual = rewritten.changes, rewritten.manual
    # a rule that holds only under an old release of a library the project pins (`needs_pin`) is
    # listed where the scan, which reads the pins, reported it
    pinned = {r.id for r in kb.rules.values() if r.match.get("needs_pin")}
    if pinned:
        reported = {(f.line, f.rule) for f in task.findings}
        outcome.manual = [c for c in outcome.manual if c.rule not in pinned or (c.start_line, c.rule) in reported]
    if rewritten.error:
        outcome.error = rewritten.error
    elif rewritten.text != text:
        if job.kind == "notebook":
            problem = verify_notebook(kb, rel, text, rewritten.text, file_opts, coverage)
        else:
            problem = verify(kb, rel, rewritten.text, file_opts, job.kind, job.config_kind, coverage, text)
        if not problem and job.kind == "python":
            problem = _compile_problem(text, rewritten.text, rel)
        if problem:
            outcome.error = problem
            outcome.changes = []
    if outcome.error:  # the file stays as it was: manual items keep their lines
        outcome.manual = [replace(c, new_line=c.start_line) for c in outcome.manual]
    elif rewritten.text != text:
        bom = data.startswith(b"\xef\xbb\xbf")
        if job.kind == "python":
            outcome.new = _encode(restore(rewritten.text), _source_encoding(data), bom)
        elif job.kind == "notebook":
            outcome.new = (b"\xef\xbb\xbf" if bom else b"") + rewritten.text.encode("utf-8", errors="surrogateescape")
        else:
            outcome.new = rewritten.text.encode("utf-8", errors="surrogateescape")
    return outcome, notes


def _compile_problem(old: str, new: str, rel: str) -> str:
    """'' unless the rewrite stops a module that compiled from compiling (the parser accepts some
    code the compiler rejects, e.g. an unreachable `case` pattern)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(new, rel, "exec", dont_inherit=True)
            return ""
        except (SyntaxError, ValueError) as exc:
            problem = f"rewritten code does not compile (line {getattr(exc, 'lineno', '?')}: {getattr(exc, 'msg', exc)})"
        try:
            compile(old, rel, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return ""  # it did not compile before either
    return problem


def _package_inits(base: Path) -> set[str]:
    """Top-level package __init__.py files (directly under the root or src/)."""
    found = set()
    for parent in (base, base / "src"):
        if parent.is_dir():
            for child in sorted(parent.iterdir()):
                init = child / "__init__.py"
                if child.is_dir() and not child.is_symlink() and init.is_file():
                    found.add(init.relative_to(base).as_posix())
    return found


def _inside(child: Path, parent: Path) -> bool:
    child, parent = child.resolve(), parent.resolve()
    return child == parent or parent in child.parents


def apply(result: MigrationResult, *, write: bool = False, output: Optional[Path] = None, force: bool = False,
          changes_path: Optional[Path] = None) -> None:
    """Write the planned rewrites: in place (write=True) or into a copy of the tree (output).

    All or nothing: every file (and the change list) is staged first and committed by renames;
    on failure the target is left or put back as it was and WriteError (exit 2) is raised."""
    with signals_guarded():  # SIGTERM/SIGINT: roll back while staging, held while renaming
        _apply(result, write=write, output=output, force=force, changes_path=changes_path)


def _check_state_folder(target_base: Path) -> None:
    """Refuse, before anything is written, a `.ascend-migrate` (or its runs folder) that is a link."""
    from ascend_migrate.safe_paths import STATE_DIR, UnsafePathError, no_link_below

    try:
        no_link_below(target_base, target_base / STATE_DIR / "runs" / "x", "run history")
    except UnsafePathError as exc:
        raise MigrateError(f"{exc}; nothing was written") from None


def _apply(result: MigrationResult, *, write: bool, output: Optional[Path], force: bool,
           changes_path: Optional[Path]) -> None:
    root = result.root
    base = root if root.is_dir() else root.parent
    txn = Transaction()
    if output is not None:
        output = Path(output)
        if _inside(output, base):
            raise MigrateError(f"--output {output} is inside the source tree {base}; choose a directory outside it")
        if output.exists() and not output.is_dir():
            raise MigrateError(f"--output {output} exists and is not a directory")
        if output.exists() and any(output.iterdir()) and not force:
            raise MigrateError(f"--output {output} is not empty; use --force to write into it")
        target_base = output
        txn.root = output  # a folder link already in OUT (--force) must not carry writes out of it
    elif write:
        target_base = base
    else:
        target_base = None
    if target_base is not None and target_base.is_dir():
        _check_state_folder(target_base)
    written: list[str] = []
    stale, moved = None, []
    if output is not None and force:
        with signals_held():  # the moves are undone as a whole, never half done
            try:  # an earlier port's validation report must never pass for this tree's
                stale, moved = set_aside_state(output)
            except OSError as exc:
                raise WriteError(f"cannot set aside the earlier validation state in {output / '.ascend-migrate'}: "
                                 f"{exc.strerror or exc}; nothing was written to {output}") from exc
    try:
        if output is not None:
            _stage_copy(root, output, result, txn)
        if target_base is not None:
            for f in result.files:
                if f.new is None or f.error:
                    continue
                src = base / f.path
                dest = target_base / f.path
                if not _inside(dest.parent, target_base) or dest.is_symlink():
                    result.notes.append(f"{f.path}: not written (would leave the tree or follow a symlink)")
                    continue
                if output is not None:
                    _check_unchanged(src, f)
                # in place: the file must still hold the bytes the rewrite was planned from
                txn.stage_bytes(dest, f.new, src.stat().st_mode, expected=f.original if output is None else None)
                written.append(f.path)
            if changes_path is None:
                changes_path = target_base / CHANGES_NAME
                if not written and changes_path.with_suffix(".json").exists():
                    changes_path = None  # a run that changed nothing keeps the previous list
        if changes_path is not None:
            json_data, csv_data = change_list_bytes(result)
            json_path, csv_path = change_paths(changes_path)
            txn.stage_bytes(json_path, json_data)
            txn.stage_bytes(csv_path, csv_data)
    except BaseException as exc:
        with signals_held():  # a second signal must not stop the roll-back half way
            txn.abort()
            restore_state(stale, moved)
        if isinstance(exc, WriteError):
            where = "in place" if write else f"to {output}" if output is not None else "the change list"
            raise type(exc)(f"{exc}; nothing was written {where}") from exc
        raise
    # From the first rename to the run record, termination signals are held (raised after).
    with signals_held():
        try:
            txn.commit()
        except BaseException as exc:
            restore_state(stale, moved)  # commit() already put the files back
            if isinstance(exc, WriteError):
                where = "in place" if write else f"to {output}" if output is not None else "the change list"
                raise type(exc)(f"{exc}; nothing was written {where}") from exc
            raise
        if stale is not None:
            result.notes.append(f".ascend-migrate/{stale.name}/: the earlier port's validation state, set aside "
                                "(validate this tree again)")
        result.written.extend(written)
        if target_base is not None:
            record_run(result, base, target_base, output)  # this run's own folder under .ascend-migrate/runs
            if changes_path is not None:
                write_change_list(result, changes_path)  # again, now with the run record


def _check_unchanged(src: Path, f: FileOutcome) -> None:
    try:
        now = src.read_bytes()
    except OSError as exc:
        raise WriteError(f"cannot read {display(str(src))}: {exc.strerror or exc}") from exc
    if now != f.original:
        raise ChangedSincePlanned(f"{display(str(src))} changed since the rewrite was planned (saved by another "
                                  "program?); run migrate again")


def _stage_copy(root: Path, output: Path, result: MigrationResult, txn: Transaction) -> None:
    """Stage a copy of the source (one file, or the tree with its in-tree symlinks)."""
    if not root.is_dir():
        txn.stage_copy(root, output / root.name)
        return
    tree = walk_tree(root, own_files=False)
    for rel, reason in tree.skipped:  # the scan noted most of these already: say they are not copied
        note = f"{rel}: {reason}"
        if note in result.notes:
            result.notes[result.notes.index(note)] = f"{note} (not copied)"
        else:
            result.notes.append(f"{note} (not copied)")
    for rel in tree.excluded_dirs:  # excluded from migration, still part of the project
        for dirpath, _dirs, files in os.walk(root / rel):
            for name in files:
                src = Path(dirpath) / name
                if is_regular_file(src):
                    txn.stage_copy(src, output / src.relative_to(root))
    copied = {i.rel for i in tree.items if i.kind == "file"} | set(tree.dirs)
    for item in tree.items:
        dest = output / item.rel
        if item.kind == "link":
            link, why_not = _link_in_copy(root, item, copied, tree.excluded_dirs)
            if link is None:
                result.notes.append(f"{item.rel}: {why_not}")
                continue
            txn.stage_link(dest, link)
        else:
            txn.stage_copy(root / item.rel, dest)
    if not tree.items:
        txn._mkdirs(output)


def _link_in_copy(root: Path, item, copied: set[str], excluded_dirs: Iterable[str]) -> tuple[Optional[str], str]:
    """The text of `item`'s link in the copy, or (None, why it is left out).

    The walker keeps a link whose real target is inside the tree, but its text may still leave
    the tree and come back by name (`c.py -> ../tr/src/a.py` in `tr/`) or be absolute: copied
    as it is, it would point at the original checkout, so running or editing the port would run
    or edit unported source. Such a link is rewritten to the relative path of its real target
    within the tree; a link whose text only goes down (no `..`, not absolute) keeps its text,
    since each step stays in the copy. A target the copy does not hold (a skipped folder such as
    `.git`, an unreadable file) is not linked at all."""
    target = os.path.realpath(os.path.join(root, item.rel))
    target_rel = Path(os.path.relpath(target, os.path.realpath(root))).as_posix()
    target_rel = "" if target_rel == "." else target_rel
    held = target_rel in copied or any(target_rel == d or target_rel.startswith(d + "/") for d in excluded_dirs)
    if not held:
        return None, f"symlink to {target_rel}, which is not copied: not recreated"
    if not os.path.isabs(item.link) and ".." not in Path(item.link).parts:
        return item.link, ""
    link_dir = os.path.dirname(item.rel) or "."
    return Path(os.path.relpath(target_rel or ".", link_dir)).as_posix(), ""
