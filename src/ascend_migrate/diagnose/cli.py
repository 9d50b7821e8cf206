"""`ascend-migrate diagnose [LOG ...|-]`."""
from __future__ import annotations

import json
import sys

import click

from ascend_migrate.diagnose.engine import CONFIDENCE_RANK, Diagnoser, InputError, open_log, report_dict
from ascend_migrate.diagnose.kb import CONFIDENCES, FAILURES_FILE, load_kb
from ascend_migrate.diagnose.render import render_list, render_text
from ascend_migrate.knowledge.loader import KnowledgeError
from ascend_migrate.printable import printable

EXIT_NONE, EXIT_FOUND, EXIT_USAGE = 0, 1, 2

EPILOG = """\b
Exit status:
  0  no known error found (warnings, if any, are still listed)
  1  at least one known error found
  2  usage or input error: bad option, missing, empty or binary file
\b
JSON (--format json): {"schema_version": 2, "source" (a list for several logs), "lines",
  "primary": ID|null,
  "errors_found", "matches": [{"id", "title", "family", "category", "severity",
  "confidence", "role", "cause", "fix", "confirm", "source", "line_no", "line",
  "count", "rank", "timestamp", "details"?, "decoded"?}]}; the text report shows the
  same fields. Matches come ranked: the most likely root cause first.
"""


@click.command(name="diagnose", epilog=EPILOG)
@click.argument("logs", nargs=-1, metavar="[LOG]...")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Report format.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--min-confidence", type=click.Choice(CONFIDENCES), default="low", show_default=True,
              help="Drop matches below this confidence.")
@click.option("--list", "list_only", is_flag=True, help="List the known signatures by family and exit.")
@click.option("--kb", "kb_path", type=click.Path(dir_okay=False), default=None,
              help="Use another failures file (same schema as the built-in one).")
@click.option("-q", "--quiet", is_flag=True, help="Text: print only the most likely root cause (id, confidence, where).")
@click.option("-v", "--verbose", is_flag=True, help="Also list every line number where a match repeats.")
def diagnose_command(logs, fmt, as_json, min_confidence, list_only, kb_path, quiet, verbose):
    """Explain Ascend / torch_npu error logs: cause, fix and a command that confirms it.

    LOG is a log file (plain, .gz or UTF-16) or '-' for standard input; with no LOG, piped
    input is read. Give one log per rank of a distributed job: matches are ranked across
    them so the earliest most-certain root cause comes first, and timeouts on healthy ranks
    are listed as symptoms. torch_npu ERRxxxxx codes are decoded.
    """
    if as_json:
        fmt = "json"
    try:
        kb = load_kb(kb_path or FAILURES_FILE)
    except KnowledgeError as exc:
        raise click.UsageError(str(exc)) from exc
    if list_only:
        if fmt == "json":
            click.echo(json.dumps({"schema_version": 2, "signatures": [s.to_dict() for s in kb.signatures]}, indent=2))
        else:
            click.echo(render_list(kb), nl=False)
        return
    if not logs:
        if sys.stdin is None or sys.stdin.isatty():
            raise click.UsageError("give a LOG file, or '-' to read standard input")
        logs = ("-",)
    if logs.count("-") > 1:
        raise click.UsageError("standard input ('-') can be given once")
    d = Diagnoser(kb)
    for log in logs:
        try:
            if log == "-":
                stream = open_log(sys.stdin.buffer, "<stdin>")
                name = "<stdin>"
            else:
                stream = open_log(log)
                name = log
            with stream:
                d.feed_stream(stream, name)
        except InputError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    if fmt != "json":
        for note in d.notes:
            click.echo(f"note: {printable(note)}", err=True)
    floor = CONFIDENCE_RANK[min_confidence]
    matches = [m for m in d.matches() if CONFIDENCE_RANK[m.confidence] >= floor]
    if fmt == "json":
        click.echo(json.dumps(report_dict(matches, d.sources, d.lines, d.notes), indent=2))
    elif quiet:
        if matches:
            m = matches[0]
            click.echo(f"{m.id}\t{m.confidence}\t{printable(m.source)}:{m.line_no}")
    else:
        click.echo(render_text(matches, d.sources, verbose=verbose), nl=False)
    sys.exit(EXIT_FOUND if any(m.severity == "error" for m in matches) else EXIT_NONE)
