"""`ascend-migrate skill PATH --model NAME`: write the per-model replay skill.

Exit codes: 0 written; 2 refused or bad input (no passing report, malformed JSON, unsafe
model name, existing SKILL.md without --force), nothing written; 1 the write itself failed
(the previous skill, if any, is intact).
"""
from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Optional

import click

from ascend_migrate.printable import printable
from ascend_migrate.skillgen.errors import SkillGenError
from ascend_migrate.skillgen.generate import DEFAULT_OUT_ROOT, render_model_skill
from ascend_migrate.skillgen.render import HUAWEI_PIP_INDEX
from ascend_migrate.skillgen.writer import check_install, client_root, install_copy, write_skill

_file = click.Path(dir_okay=False, path_type=Path)


@click.command("skill")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--model", "model", required=True, help="Model name; becomes the skill folder name (slugified).")
@click.option("--report", type=_file, help="Validation report JSON; its verdict must be pass.")
@click.option("--scan", "scan_file", type=_file, help="Scan JSON (ascend-migrate scan --format json). Default: scan PATH now.")
@click.option("--changes", type=_file, help="Change list JSON written by ascend-migrate migrate.")
@click.option("--notes", type=_file, help="Markdown with manual adaptation notes to include.")
@click.option("--style", type=click.Choice(["transfer", "agnostic"]), default=None,
              help="Migration style used (default: from the change list, else transfer).")
@click.option("--pip-index", default=HUAWEI_PIP_INDEX, show_default=True,
              help="Package index the generated install steps set first.")
@click.option("--out-root", default=DEFAULT_OUT_ROOT, show_default=True,
              help="Folder that holds model skills; the skill goes to OUT_ROOT/<model>/SKILL.md.")
@click.option("--original", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The unported checkout the port started from (default: the source of the last `migrate --output` "
                   "run); the manual work is stored as a diff against its migrate output.")
@click.option("--allow-cpu", is_flag=True,
              help="Accept a report validated on CPU (or CUDA); the skill then says so in its title and description.")
@click.option("--install-to", "install_to", metavar="CLIENT|DIR",
              help="Also write a copy where an agent client loads skills: claude-user (~/.claude/skills/<model>), "
                   "claude-project (./.claude/skills/<model>), or DIR/<model>. A different skill there is "
                   "replaced only with --force.")
@click.option("--force", is_flag=True, help="Replace an existing SKILL.md (atomically).")
@click.option("--dry-run", is_flag=True, help="Print the rendered SKILL.md instead of writing it.")
def skill_command(
    path: Path,
    model: str,
    report: Optional[Path],
    scan_file: Optional[Path],
    changes: Optional[Path],
    notes: Optional[Path],
    style: Optional[str],
    pip_index: str,
    out_root: str,
    original: Optional[Path],
    allow_cpu: bool,
    install_to: Optional[str],
    force: bool,
    dry_run: bool,
) -> None:
    """Write a replayable skill for a ported model at OUT_ROOT/<model>/SKILL.md.

    Refuses unless the validation report passed by the one verdict rule, carries an intact
    checksum, compared the outputs with goldens, was made on an NPU (or --allow-cpu), and
    matches the tree at PATH as it is now. Besides SKILL.md the folder holds manual.patch,
    replay.json, the entry file and the golden file: `ascend-migrate replay SKILL_DIR TARGET`.
    """
    def warn(message: str) -> None:
        click.echo(f"warning: {printable(message)}", err=True)

    try:
        slug, files = render_model_skill(
            path, model, report=report, scan=scan_file, changes=changes, notes=notes,
            style=style, pip_index=pip_index, original=original, allow_cpu=allow_cpu, warn=warn,
        )
        if dry_run:
            click.echo(files["SKILL.md"], nl=False)
            return
        installed = None
        if install_to:
            check_install(client_root(install_to), slug, files, force=force)  # refuse before writing anything
        written = write_skill(Path(out_root), slug, files, force=force)
        if install_to:
            installed = install_copy(client_root(install_to), slug, files, force=force)
    except SkillGenError as exc:
        click.echo(f"error: {printable(exc)}", err=True)
        sys.exit(exc.exit_code)
    # the skill's files/ and entry/ hold names from the ported tree: shown escaped
    click.echo(f"wrote {printable(written)}")
    for rel in sorted(files):
        if rel != "SKILL.md":
            click.echo(f"wrote {printable(written.parent / rel)}")
    folder = written.parent
    if installed is not None:
        click.echo(f"installed a copy for the agent: {printable(installed.parent)}")
    else:
        click.echo(printable(f"\nThe skill is in {folder}. Agents do not look there: Claude Code loads skills from "
                             f"~/.claude/skills/<name>/ (every project) or .claude/skills/<name>/ (one project). "
                             f"Copy it:\n  cp -r {shlex.quote(str(folder))} ~/.claude/skills/\n"
                             f"or run this command again with --install-to claude-user (or claude-project, or a "
                             f"folder). Other clients: add {folder / 'SKILL.md'} the way they load skills.", keep="\n"))
