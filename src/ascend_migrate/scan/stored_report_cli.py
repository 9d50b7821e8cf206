"""`ascend-migrate scan` answered from the stored report, before the CLI framework is loaded.

A re-scan of a tree that has not changed since the last scan with the same options writes
the report that scan stored (see `report_snapshot`). Most of the time left on that path is
the interpreter starting and importing click; this module reads the command line itself
and, when the stored report still stands, writes it exactly as `scan_command` would: same
bytes on stdout or in the `-o` file, same stderr lines, same exit code.

It understands only the plain spellings of `scan`'s options (`--format json`, `-o FILE`, ...).
Anything else — an unknown or repeated option, a `--opt=value` or bundled short form, a
value that looks like an option, `--no-cache`, `--help`, a path that does not exist, a
stdout that is not UTF-8, a report that would need ANSI codes stripped — returns None
before anything is written, and the caller runs the full CLI, which gives the normal
behaviour, messages and exit codes. A tree changed in a few files gets the last report
patched (`report_ledger`) and written the same way. So does a miss: the fingerprint taken here is handed
to the full scan, which would otherwise take it again.
"""
from __future__ import annotations

import codecs
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.exits import EXIT_BROKEN_PIPE

FORMATS = ("text", "json", "md", "sarif", "csv")
FAIL_LEVELS = ("info", "warning", "error", "never")  # scan.cli.FAIL_LEVELS (a test keeps them equal)

# option spelling -> (parameter, repeatable)
_VALUE_OPTIONS: dict[str, tuple[str, bool]] = {
    "--format": ("fmt", False), "--output": ("output", False), "-o": ("output", False),
    "--fail-on": ("fail_on", False), "--select": ("select", True), "--ignore": ("ignore", True),
    "--exclude": ("exclude", True), "--jobs": ("jobs", False), "-j": ("jobs", False),
    "--torch-npu": ("torch_npu", False), "--entry": ("entry", True), "--no-entry": ("no_entry", True),
    "--sarif-root": ("sarif_root", False), "--docs-base": ("docs_base", False),
}
_FLAGS: dict[str, tuple[str, Any]] = {
    "--color": ("color", True), "--no-color": ("color", False),
    "-q": ("verbosity", -1), "--quiet": ("verbosity", -1), "-v": ("verbosity", 1), "--verbose": ("verbosity", 1),
}
_REPEATABLE = ("select", "ignore", "exclude", "entry", "no_entry")


class _NotHere(Exception):
    """This invocation is for the full CLI."""


def parse_scan_args(args: list[str]) -> Optional[dict[str, Any]]:
    """The options of `scan ARGS` as `scan_command` would receive them (plus `verbosity`), or
    None when the command line uses anything this reader does not handle exactly like click."""
    opts: dict[str, Any] = {name: () for name in _REPEATABLE}
    seen: set[str] = set()
    paths: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token in _VALUE_OPTIONS:
            name, repeatable = _VALUE_OPTIONS[token]
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            if not value or value.startswith("-"):
                return None
            if repeatable:
                opts[name] = (*opts[name], value)
            elif name in seen:
                return None
            else:
                opts[name] = value
            seen.add(name)
            i += 2
            continue
        if token in _FLAGS:
            name, value = _FLAGS[token]
            if name in seen:
                return None
            seen.add(name)
            opts[name] = value
        elif token.startswith("-") or not token:
            return None
        else:
            paths.append(token)
        i += 1
    if len(paths) != 1:
        return None
    fmt = opts.get("fmt", "text")
    fail_on = opts.get("fail_on", "error")
    if fmt not in FORMATS or fail_on not in FAIL_LEVELS:
        return None
    jobs = opts.get("jobs")
    if jobs is not None and not (jobs.isascii() and jobs.isdigit() and int(jobs) >= 1):
        return None
    return {
        "path": Path(paths[0]), "fmt": fmt, "output": Path(opts["output"]) if "output" in opts else None,
        "fail_on": fail_on, "select": opts["select"], "ignore": opts["ignore"], "exclude": opts["exclude"],
        "torch_npu": opts.get("torch_npu"), "entry": opts["entry"], "no_entry": opts["no_entry"],
        "color": opts.get("color"), "sarif_root": Path(opts["sarif_root"]) if "sarif_root" in opts else None,
        "docs_base": opts.get("docs_base"), "verbosity": opts.get("verbosity", 0),
    }


def _stdout_is_plain_utf8() -> bool:
    """click writes to stdout as it is when its encoding is not ASCII; a UTF-8 stream then
    receives exactly the bytes we would write."""
    stream = sys.stdout
    try:
        return (stream is not None and codecs.lookup(stream.encoding).name == "utf-8"
                and hasattr(stream, "buffer"))
    except (AttributeError, LookupError, TypeError):
        return False


def serve_stored_report(args: list[str]) -> Optional[int]:
    """Write the stored report for `scan ARGS` and return the exit code, or None (nothing
    written) when the full CLI must run."""
    started = time.perf_counter()
    state = {"writing": False}
    try:
        return _serve(args, started, state)
    except _NotHere:
        return None
    except Exception:
        if not state["writing"]:
            return None  # any doubt before a byte is written: the full CLI decides
        raise


def _serve(args: list[str], started: float, state: dict[str, bool]) -> int:
    opts = parse_scan_args(args)
    if opts is None:
        raise _NotHere
    path: Path = opts["path"]
    output: Optional[Path] = opts["output"]
    sarif_root: Optional[Path] = opts["sarif_root"]
    docs_base: Optional[str] = opts["docs_base"]
    fmt: str = opts["fmt"]
    if not path.exists():
        raise _NotHere
    if sarif_root is not None:
        scanned = path.resolve() if path.is_dir() else path.resolve().parent
        if not sarif_root.is_dir() or not scanned.is_relative_to(sarif_root.resolve()):
            raise _NotHere
    if docs_base is not None and "://" not in docs_base:
        raise _NotHere
    if output is None and not _stdout_is_plain_utf8():  # also: a stdout with a byte buffer
        raise _NotHere

    from ascend_migrate.color_policy import color_enabled
    from ascend_migrate.scan import report_snapshot as snapshots

    use_color = color_enabled(opts["color"]) and output is None
    key = snapshots.options_key(path, {
        "fmt": fmt, "color": use_color, "select": opts["select"], "ignore": opts["ignore"],
        "exclude": opts["exclude"], "torch_npu": opts["torch_npu"], "entry": opts["entry"],
        "no_entry": opts["no_entry"], "sarif_root": str(sarif_root.resolve()) if sarif_root is not None else None,
        "docs_base": docs_base})
    try:
        fingerprint = snapshots.tree_fingerprint(path, opts["exclude"])
    except OSError:
        raise _NotHere from None
    stored = snapshots.load_body(key, fingerprint, fmt)
    if stored is None:  # a few files changed: the last report patched (scan/report_ledger.py)
        from ascend_migrate.scan import report_ledger

        patched = report_ledger.patch_stored(key, fingerprint, path, fmt, use_color)
        if patched is not None:
            stored = patched.facts, patched.template.encode("utf-8", "surrogatepass")
    if stored is None:
        snapshots.prime(path, opts["exclude"], fingerprint)  # the full scan takes it from here
        raise _NotHere
    facts, body = stored
    try:
        worst = int(facts["worst"])
        detail = (f"scanned {facts['files_scanned']} files ({facts['lines_scanned']} lines) in {{:.2f}} s; "
                  f"{facts['entry_points']} entry points selected, {facts['rejected']} rejected; {facts['notes']} notes")
        wrote = f"wrote {fmt} report to {output} ({facts['findings']} findings in {facts['files_scanned']} files)"
        wrote.encode("utf-8")
    except (KeyError, TypeError, ValueError):
        raise _NotHere from None
    if "\x1b" in wrote or not wrote.isprintable():
        raise _NotHere
    if not snapshots.strict_utf8(body):
        raise _NotHere  # click could not write it as is: leave the error to it
    if output is None and b"\x1b" in body and not use_color:
        raise _NotHere  # click would strip the escapes: leave that to it
    seconds = time.perf_counter() - started
    chunks = snapshots.body_chunks(fmt, body, seconds)
    state["writing"] = True
    if not body.endswith(b"\n"):
        chunks.append(b"\n")
    if output is not None:
        _write_file(output, b"".join(chunks))
        if opts["verbosity"] >= 0:
            sys.stderr.write(wrote + "\n")
    else:
        _write_stdout(chunks)
    if opts["verbosity"] > 0:
        sys.stderr.write(detail.format(seconds) + "\n")
    sys.stderr.flush()
    return _exit_for(worst, opts["fail_on"])


def _write_file(output: Path, data: bytes) -> None:
    """The report into `output` whole or not at all, as `scan_command` writes it; any failure
    leaves the file as it was and hands over to the full CLI (which reports the error)."""
    from ascend_migrate.fix.commit import Transaction, WriteError, is_stream, write_stream

    txn = Transaction()
    try:
        if is_stream(output):
            write_stream(output, data)
        else:
            txn.stage_bytes(output, data)
            txn.commit()
    except WriteError:
        txn.abort()
        raise _NotHere from None


def _write_stdout(chunks: list) -> None:
    """The bytes `click.echo(text, nl=not text.endswith("\\n"))` writes to a UTF-8 stdout, and
    a reader that went away ends the process with the status the full CLI gives."""
    try:
        sys.stdout.flush()
        out = sys.stdout.buffer
        for chunk in chunks:
            out.write(chunk)
        out.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        sys.exit(EXIT_BROKEN_PIPE)


def _exit_for(worst: int, fail_on: str) -> int:
    """As scan.cli._exit_for, with the severities in their order."""
    if fail_on == "never":
        return 0
    return 1 if worst >= FAIL_LEVELS.index(fail_on) else 0
