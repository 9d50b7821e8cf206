"""`ascend-migrate diagnose [LOG|-]`."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ascend_migrate.diagnose.engine import CONFIDENCE_RANK, clean_lines, diagnose_lines, report_dict
from ascend_migrate.diagnose.kb import CONFIDENCES, FAILURES_FILE, load_kb
from ascend_migrate.diagnose.render import render_list, render_text
from ascend_migrate.knowledge.loader import KnowledgeError

EPILOG = """\b
Exit status: 0 one or more known failures found, 1 none found, 2 usage error
(unreadable file, bad option).
\b
JSON (--json): {"schema_version": 1, "source", "lines", "primary": ID|null,
  "matches": [{"id", "title", "category", "severity", "confidence", "cause", "fix",
               "line_no", "line", "count", "decoded"?}]}
"""


def _read(source: str) -> str:
    if source == "-":
        data = sys.stdin.buffer.read()
    else:
        path = Path(source)
        if path.is_dir():
            raise click.UsageError(f"{source} is a directory; give a log file or '-'")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise click.UsageError(f"cannot read {source}: {exc.strerror or exc}") from exc
    return data.decode("utf-8", errors="replace")


@click.command(name="diagnose", epilog=EPILOG)
@click.argument("log", required=False, default=None)
@click.option("--json", "as_json", is_flag=True, help="Print the machine-readable report.")
@click.option(
    "--min-confidence",
    type=click.Choice(CONFIDENCES),
    default="low",
    show_default=True,
    help="Drop matches below this confidence.",
)
@click.option("--list", "list_only", is_flag=True, help="List the known signatures and exit.")
@click.option(
    "--kb",
    "kb_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Use another failures file (same schema as the built-in one).",
)
def diagnose_command(log, as_json, min_confidence, list_only, kb_path):
    """Explain an Ascend / torch_npu error log: cause and fix for each known failure.

    LOG is a log file or traceback; '-' (or no argument with piped input) reads stdin.
    Every known signature found is reported with the line it matched, how sure the match
    is, the cause and the fix; torch_npu ERRxxxxx codes are decoded. The most likely root
    cause (the earliest most-certain error) is marked.
    """
    try:
        kb = load_kb(kb_path or FAILURES_FILE)
    except KnowledgeError as exc:
        raise click.UsageError(str(exc)) from exc
    if list_only:
        if as_json:
            click.echo(json.dumps({"schema_version": 1, "signatures": [s.to_dict() for s in kb.signatures]}, indent=2))
        else:
            click.echo(render_list(kb), nl=False)
        return
    if log is None:
        if sys.stdin.isatty():
            raise click.UsageError("give a LOG file, or '-' to read standard input")
        log = "-"
    text = _read(log)
    lines = clean_lines(text)
    floor = CONFIDENCE_RANK[min_confidence]
    matches = [m for m in diagnose_lines(lines, kb) if CONFIDENCE_RANK[m.confidence] >= floor]
    source = "<stdin>" if log == "-" else log
    if as_json:
        click.echo(json.dumps(report_dict(matches, source, len(lines)), indent=2))
    else:
        click.echo(render_text(matches, source), nl=False)
    sys.exit(0 if matches else 1)
