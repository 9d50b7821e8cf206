"""`ascend-migrate scan PATH`: the inventory of everything that breaks on Ascend."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Optional

import click

from ascend_migrate.scan.finding import SEVERITIES  # the knowledge base's, without loading it

FAIL_LEVELS = (*SEVERITIES, "never")
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


@click.command("scan")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "md", "sarif", "csv"]), default="text",
              show_default=True, help="Report format. JSON is canonical; SARIF 2.1.0 for code-scanning UIs.")
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report here instead of stdout.")
@click.option("--fail-on", type=click.Choice(FAIL_LEVELS), default="error", show_default=True,
              help="Exit 1 when a finding at or above this severity exists.")
@click.option("--select", multiple=True, help="Only these rules or rule prefixes (repeatable, e.g. CU, DS003).")
@click.option("--ignore", multiple=True, help="Skip these rules or rule prefixes (repeatable).")
@click.option("--exclude", multiple=True, metavar="PATTERN",
              help="Skip paths matching PATTERN (repeatable; adds to [tool.ascend-migrate] exclude).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: one per core).")
@click.option("--no-cache", is_flag=True, help="Ignore and do not update the per-file result cache.")
@click.option("--torch-npu", "torch_npu", metavar="VERSION",
              help="Judge transfer_to_npu coverage for this torch_npu release (default: newest known).")
@click.option("--entry", "entry", multiple=True, metavar="FILE",
              help="Treat FILE as an entry point whatever the evidence says (repeatable).")
@click.option("--no-entry", "no_entry", multiple=True, metavar="FILE",
              help="Never treat FILE as an entry point (repeatable).")
@click.option("--color/--no-color", default=None, help="Colour the text report (default: when a terminal).")
@click.option("--sarif-root", type=click.Path(path_type=Path, file_okay=False), metavar="DIR",
              help="SARIF artifact paths are relative to DIR (e.g. the repository root when PATH is a subfolder).")
@click.option("--docs-base", metavar="URL",
              help="Absolute URL prefix for rule docs in SARIF (helpUri); without it the docs are inline only.")
@click.option("--summary", is_flag=True,
              help="With --format md: the summary tables and the entry points only (at most 25 listed), "
                   "without the findings; bounded for any size of tree.")
def scan_command(path: Path, fmt: str, output: Path | None, fail_on: str, select: tuple[str, ...],
                 ignore: tuple[str, ...], exclude: tuple[str, ...], jobs: int | None, no_cache: bool, torch_npu: str | None,
                 entry: tuple[str, ...], no_entry: tuple[str, ...], color: bool | None,
                 sarif_root: Path | None, docs_base: str | None, summary: bool) -> None:
    """Scan PATH (a project directory or one file) for CUDA-only code.

    Reports every CUDA API use (aliases resolved), device strings, nccl, DataParallel, AMP,
    capability checks, CUDA graphs, .cu sources and CUDA extension builds, Triton kernels,
    CUDA-only packages, frameworks and entry points. Nothing in PATH is imported or run.

    \b
    Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 usage or tool error
    (an internal error names its file on one line; the other files are still scanned).
    Silence one line with a trailing comment: `# ascend-migrate: ignore[DV001]`.
    Project defaults live under [tool.ascend-migrate] (exclude, select, ignore) in the nearest
    pyproject.toml at or above PATH; scan, migrate and validate all read it.
    """
    started = time.perf_counter()
    from ascend_migrate.console import detail, set_color, verbosity
    from ascend_migrate.printable import printable

    if not path.exists():
        raise click.BadParameter(f"{path}: no such file or directory", param_hint="PATH")
    if sarif_root is not None:
        scanned = path.resolve() if path.is_dir() else path.resolve().parent
        if not sarif_root.is_dir() or not scanned.is_relative_to(sarif_root.resolve()):
            raise click.BadParameter(f"{sarif_root} is not a folder containing {path}", param_hint="--sarif-root")
    if docs_base is not None and "://" not in docs_base:
        raise click.BadParameter("must be an absolute URL such as https://example.org/docs/", param_hint="--docs-base")
    if summary and fmt != "md":
        raise click.BadParameter("the summary is a Markdown view: use it with --format md", param_hint="--summary")
    use_color = set_color(color) and output is None
    snapshots = snap_key = fingerprint = None
    if not no_cache:  # the tree as the last scan with these options saw it: its report stands
        from ascend_migrate.scan import report_ledger
        from ascend_migrate.scan import report_snapshot as snapshots

        snap_key = snapshots.options_key(path, {
            "fmt": fmt, "color": use_color, "select": select, "ignore": ignore, "exclude": exclude,
            "torch_npu": torch_npu, "entry": entry, "no_entry": no_entry,
            "sarif_root": str(sarif_root.resolve()) if sarif_root is not None else None, "docs_base": docs_base,
            # only when given: the key of every other scan stays the one the stored-report reader computes
            **({"summary": True} if summary else {})})
        try:
            fingerprint = snapshots.tree_fingerprint(path, exclude)
        except OSError:
            fingerprint = None
        stored = snapshots.load(snap_key, fingerprint, fmt) if fingerprint is not None else None
        if stored is None and fingerprint is not None:  # a few files changed: patch the last report
            stored = report_ledger.patch_stored(snap_key, fingerprint, path, fmt, use_color)
        if stored is not None:
            facts = stored.facts
            seconds = time.perf_counter() - started
            _emit(stored.text(seconds), fmt, output, facts)
            detail(_detail_line(facts, seconds))
            sys.exit(_exit_for(facts["worst"], fail_on))

    from ascend_migrate.knowledge.base import load_knowledge
    from ascend_migrate.knowledge.loader import KnowledgeError
    from ascend_migrate.report import render
    from ascend_migrate.report.terminal import Progress
    from ascend_migrate.scan.api import scan
    from ascend_migrate.scan.engine import INTERNAL_PREFIX, ConfigError

    try:
        kb = load_knowledge()
        progress = Progress() if (fmt == "text" or output) and verbosity() >= 0 else None
        result = scan(path, select=select or None, ignore=ignore or None, jobs=jobs,
                      use_cache=not no_cache, torch_npu_version=torch_npu,
                      progress=progress.update if progress else None, entry=entry, no_entry=no_entry,
                      exclude=exclude)
        if progress:
            progress.close()
    except (ConfigError, KnowledgeError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    sarif_options = {"source_root": sarif_root, "docs_base": docs_base}

    def rendered() -> str:
        return render(result, fmt, kb=kb, color=use_color) if fmt == "text" else \
            render(result, fmt, kb=kb, sarif_options=sarif_options, summary=summary)

    internal = [n for n in result.notes if n.reason.startswith(INTERNAL_PREFIX)]
    facts = {"findings": len(result.findings), "files_scanned": result.files_scanned,
             "lines_scanned": result.lines_scanned, "entry_points": len(result.entry_points),
             "rejected": len(result.rejected_entry_points), "notes": len(result.notes),
             "worst": max((SEVERITIES.index(f.severity) for f in result.findings), default=-1)}
    text = None
    if snapshots is not None and fingerprint is not None and not internal:
        seconds, result.duration_s = result.duration_s, snapshots.STAND_IN_SECONDS
        template = snapshots.make_template(fmt, _rendered_and_kept(result, kb, fmt, use_color, snap_key, fingerprint)
                                           if fmt in report_ledger.FORMATS else rendered())
        result.duration_s = seconds
        if template is not None:
            stored = snapshots.Snapshot(fmt, template, facts)
            text = stored.text(seconds)
            snapshots.save(snap_key, fingerprint, stored)
    if text is None:
        text = rendered()
    _emit(text, fmt, output, facts)
    detail(_detail_line(facts, result.duration_s))
    for note in internal:  # one line per file; every other file was scanned
        click.echo(f"error: {printable(note.path)}: {printable(note.reason)}", err=True)
    sys.exit(EXIT_ERROR if internal else exit_code(result, fail_on))


def _rendered_and_kept(result: Any, kb: Any, fmt: str, color: bool, key: str, fingerprint: Any) -> str:
    """The report in `fmt` (json or text), as `render` gives it, and its ledger kept for the next
    re-scan to patch (scan/report_ledger.py)."""
    from ascend_migrate.report.json_report import as_report, report_text_and_items
    from ascend_migrate.scan import report_ledger

    report = as_report(result, kb)
    items = None
    if fmt == "json":
        text, items = report_text_and_items(report)
        if items is None:  # written the plain way: nor can it be patched
            return text
    else:
        from ascend_migrate.report.terminal import summary

        text = summary(report, kb, color=color)
    report_ledger.store(key, fingerprint, fmt, result, report, items)
    return text


def _emit(text: str, fmt: str, output: Optional[Path], facts: dict[str, Any]) -> None:
    """The report to stdout, or to `output` whole or not at all (exit 2 when it cannot be written)."""
    from ascend_migrate.console import info

    if output:
        from ascend_migrate.fix.commit import Transaction, WriteError, is_stream, write_stream

        data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
        txn = Transaction()  # written whole or not at all: never a truncated report
        try:
            if is_stream(output):  # a device or a pipe (-o /dev/null): nothing to replace, written as is
                write_stream(output, data)
            else:
                txn.stage_bytes(output, data)
                txn.commit()
        except WriteError as exc:
            txn.abort()
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
        info(f"wrote {fmt} report to {output} ({facts['findings']} findings in {facts['files_scanned']} files)")
    else:
        if fmt == "csv" and sys.stdout.isatty():
            from ascend_migrate.report.csv_report import terminal_csv

            text = terminal_csv(text)
        # click strips ANSI codes when stdout is no terminal: a regex pass over megabytes of JSON
        # that can only change text holding an escape character, so it runs only then
        click.echo(text, nl=not text.endswith("\n"), color=None if "\x1b" in text else True)


def _detail_line(facts: dict[str, Any], seconds: float) -> str:
    return (f"scanned {facts['files_scanned']} files ({facts['lines_scanned']} lines) in {seconds:.2f} s; "
            f"{facts['entry_points']} entry points selected, {facts['rejected']} rejected; {facts['notes']} notes")


def _exit_for(worst: int, fail_on: str) -> int:
    """Exit code for a scan whose most severe finding has index `worst` in SEVERITIES (-1: none)."""
    if fail_on == "never":
        return EXIT_OK
    return EXIT_FINDINGS if worst >= SEVERITIES.index(fail_on) else EXIT_OK


def exit_code(result, fail_on: str) -> int:
    return _exit_for(max((SEVERITIES.index(f.severity) for f in result.findings), default=-1), fail_on)
