"""`ascend-migrate migrate PATH`: rewrite a CUDA project for Ascend."""
from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("migrate")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--style", type=click.Choice(["transfer", "agnostic"]), default="transfer", show_default=True,
              help="transfer: inject torch_npu + transfer_to_npu into entry points and fix what it misses. "
                   "agnostic: device-agnostic PyTorch that runs on NPU, CUDA and CPU.")
@click.option("--write", is_flag=True, help="Rewrite files in place (atomically).")
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write a migrated copy of the tree here.")
@click.option("--force", is_flag=True, help="Allow a non-empty --output directory.")
@click.option("--annotate", is_flag=True, help="Put a `# TODO(npu): RULE ...` comment above each manual item.")
@click.option("--min-torch", default="2.6", show_default=True,
              help="Oldest torch the agnostic output must run on (selects torch.accelerator APIs).")
@click.option("--safe-only", is_flag=True, help="Apply only fixes marked safe (skip unsafe ones).")
@click.option("--inject-init", is_flag=True, help="Also inject the transfer_to_npu imports into top-level package __init__.py files.")
@click.option("--changes", "changes", type=click.Path(path_type=Path),
              help="Write the change list to CHANGES.json and CHANGES.csv (default with --write/--output: "
                   "ascend-migrate-changes.* in the target tree).")
@click.option("--torch-npu", "torch_npu", metavar="VERSION", help="torch_npu release whose transfer_to_npu coverage applies.")
@click.option("--entry", "entry", multiple=True, metavar="FILE",
              help="Treat FILE as an entry point (repeatable): transfer style injects the imports there.")
@click.option("--no-entry", "no_entry", multiple=True, metavar="FILE",
              help="Never treat FILE as an entry point (repeatable).")
@click.option("--exclude", multiple=True, metavar="PATTERN",
              help="Leave paths matching PATTERN unchanged (repeatable; adds to [tool.ascend-migrate] exclude).")
@click.option("--quiet", "-q", is_flag=True, help="No diff on stdout and no progress bar, only the summary.")
@click.option("--verbose", "-v", is_flag=True,
              help="List every manual item (not the first 50) and the edits per rewritten file.")
def migrate_command(path: Path, style: str, write: bool, output: Path | None, force: bool, annotate: bool,
                    min_torch: str, safe_only: bool, inject_init: bool, changes: Path | None,
                    torch_npu: str | None, entry: tuple[str, ...], no_entry: tuple[str, ...], exclude: tuple[str, ...],
                    quiet: bool, verbose: bool) -> None:
    """Rewrite PATH so it runs on Ascend NPUs. A dry run (unified diff) unless --write or --output.

    Fixes are edits on exact source ranges: comments, formatting, line endings and encodings
    outside them are untouched. Every rewritten file is re-parsed and re-scanned, and must be
    unchanged by a second run; otherwise it is not written. What cannot be fixed safely
    (DataParallel, CUDA extensions, Triton kernels, flash_attn calls) is listed as manual.

    Exit codes: 0 done, 1 some files could not be rewritten, 2 usage error, nothing could be
    written (the tree is left as it was) or an internal error (one line per file; the other
    files are still migrated).
    """
    from ascend_migrate.fix.api import migrate
    from ascend_migrate.fix.commit import Interrupted, WriteError
    from ascend_migrate.fix.migrate import MigrateError
    from ascend_migrate.report.terminal import Progress
    from ascend_migrate.printable import printable as display  # names and messages from the tree
    from ascend_migrate.scan.engine import ConfigError

    if write and output:
        raise click.UsageError("use either --write or --output, not both")
    if not path.exists():
        raise click.BadParameter(f"{path}: no such file or directory", param_hint="PATH")
    bars: dict[str, Progress] = {}

    def progress(phase: str, done: int, total: int) -> None:
        if phase not in bars:  # one bar per phase; the previous one is erased first
            for bar in bars.values():
                bar.close()
            bars[phase] = Progress(label=phase)
        bars[phase].update(done, total)

    try:
        result = migrate(path, style=style, output=output, write=write, force=force, annotate=annotate,
                         min_torch=min_torch, safe_only=safe_only, torch_npu_version=torch_npu,
                         inject_init=inject_init, changes_path=changes, entry=entry, no_entry=no_entry,
                         exclude=exclude, progress=None if quiet else progress)
    except (MigrateError, ConfigError, WriteError) as exc:
        click.echo(f"error: {display(str(exc))}", err=True)
        sys.exit(2)
    except Interrupted as exc:
        click.echo(f"error: interrupted by signal {exc.signum}: every file is either as it was or fully "
                   "migrated (rolled back while staging, finished once renaming had begun)", err=True)
        sys.exit(128 + exc.signum)
    finally:
        for bar in bars.values():
            bar.close()
    if not quiet and not (write or output):
        diff = result.diff()  # byte-exact through a pipe (a patch to apply); escaped on a terminal
        click.echo(display(diff, keep="\n\t") if sys.stdout.isatty() else diff, nl=False)
    changed = [f for f in result.files if f.new is not None]
    err = sys.stderr
    click.echo(f"{style} style: {len(result.changes)} edits in {len(changed)} files, "
               f"{len(result.manual)} manual items", file=err)
    if verbose:
        for f in changed:
            rules = sorted({c.rule for c in f.changes})
            click.echo(display(f"  rewrote {f.path}: {len(f.changes)} edits ({', '.join(rules) or 'layout'})"), file=err)
    shown = result.manual if verbose else result.manual[:50]
    for row in shown:  # written trees: the line to open is the migrated file's
        line = row.new_line if (write or output) and row.new_line else row.start_line
        click.echo(display(f"  manual {row.file}:{line} {row.rule} {row.message}"), file=err)
    if len(result.manual) > len(shown):
        click.echo(f"  ... {len(result.manual) - len(shown)} more in the change list (all with -v)", file=err)
    for f in result.errors:
        if not f.internal:
            click.echo(display(f"  not rewritten {f.path}: {f.error}"), file=err)
    for note in result.notes:
        click.echo(display(f"  note {note}"), file=err)
    if write:
        click.echo(f"rewrote {len(result.written)} files in place", file=err)
    elif output:
        click.echo(f"wrote the migrated tree to {output}", file=err)
    else:
        click.echo("dry run: nothing written (use --write or --output DIR)", file=err)
    for f in result.internal_errors:  # one line each, naming the file; the others were migrated
        click.echo(display(f"error: {f.path}: {f.error}"), file=err)
    sys.exit(2 if result.internal_errors else 1 if result.errors else 0)
