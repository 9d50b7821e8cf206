"""`ascend-migrate scan PATH`: the inventory of everything that breaks on Ascend."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ascend_migrate.knowledge.base import SEVERITIES

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
def scan_command(path: Path, fmt: str, output: Path | None, fail_on: str, select: tuple[str, ...],
                 ignore: tuple[str, ...], exclude: tuple[str, ...], jobs: int | None, no_cache: bool, torch_npu: str | None,
                 entry: tuple[str, ...], no_entry: tuple[str, ...], color: bool | None,
                 sarif_root: Path | None, docs_base: str | None) -> None:
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
    from ascend_migrate.console import detail, info, verbosity
    from ascend_migrate.knowledge.base import load_knowledge
    from ascend_migrate.knowledge.loader import KnowledgeError
    from ascend_migrate.report import render
    from ascend_migrate.report.terminal import Progress
    from ascend_migrate.scan.api import scan
    from ascend_migrate.scan.engine import INTERNAL_PREFIX, ConfigError
    from ascend_migrate.scan.walk import display

    if not path.exists():
        raise click.BadParameter(f"{path}: no such file or directory", param_hint="PATH")
    if sarif_root is not None:
        scanned = path.resolve() if path.is_dir() else path.resolve().parent
        if not sarif_root.is_dir() or not scanned.is_relative_to(sarif_root.resolve()):
            raise click.BadParameter(f"{sarif_root} is not a folder containing {path}", param_hint="--sarif-root")
    if docs_base is not None and "://" not in docs_base:
        raise click.BadParameter("must be an absolute URL such as https://example.org/docs/", param_hint="--docs-base")
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
    from ascend_migrate.console import set_color

    use_color = set_color(color) and output is None
    sarif_options = {"source_root": sarif_root, "docs_base": docs_base}
    text = render(result, fmt, kb=kb, color=use_color) if fmt == "text" else \
        render(result, fmt, kb=kb, sarif_options=sarif_options)
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
        info(f"wrote {fmt} report to {output} ({len(result.findings)} findings in {result.files_scanned} files)")
    else:
        click.echo(text, nl=not text.endswith("\n"))
    detail(f"scanned {result.files_scanned} files ({result.lines_scanned} lines) in {result.duration_s:.2f} s; "
           f"{len(result.entry_points)} entry points selected, {len(result.rejected_entry_points)} rejected; "
           f"{len(result.notes)} notes")
    internal = [n for n in result.notes if n.reason.startswith(INTERNAL_PREFIX)]
    for note in internal:  # one line per file; every other file was scanned
        click.echo(display(f"error: {note.path}: {note.reason}"), err=True)
    sys.exit(EXIT_ERROR if internal else exit_code(result, fail_on))


def exit_code(result, fail_on: str) -> int:
    if fail_on == "never":
        return EXIT_OK
    threshold = SEVERITIES.index(fail_on)
    worst = max((SEVERITIES.index(f.severity) for f in result.findings), default=-1)
    return EXIT_FINDINGS if worst >= threshold else EXIT_OK
