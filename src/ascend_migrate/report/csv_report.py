"""CSV scan report: one row per finding, for spreadsheet-based migration tracking.

Positions are those of the JSON report: `line`/`end_line` 1-based, `col`/`end_col` 0-based.
Quoting is the csv module's (fields with commas, quotes or newlines are quoted). A text cell
that a spreadsheet would read as a formula (`spreadsheet_cell`) gets a leading apostrophe.
"""
from __future__ import annotations

import csv
import io
from typing import Any, Optional

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.printable import printable
from ascend_migrate.report.json_report import as_report
from ascend_migrate.scan.api import ScanResult

COLUMNS = ("path", "line", "col", "end_line", "end_col", "rule", "name", "category", "severity",
           "confidence", "transfer", "effort", "symbol", "message")


# A spreadsheet evaluates a cell starting with these (tab and CR too, which some tools strip
# before looking): a file named `=HYPERLINK(...).py` would run as a formula when opened.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: Any) -> Any:
    """`value` as a CSV cell no spreadsheet evaluates: text starting like a formula gets the
    leading apostrophe Excel, LibreOffice and Sheets read as "this is text"; everything else,
    numbers included, is unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def to_csv(result: "ScanResult | dict[str, Any]", kb: Optional[KnowledgeBase] = None) -> str:
    """Header row plus one row per finding, in report order (path, line, column)."""
    report = as_report(result, kb)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for f in report["findings"]:
        writer.writerow([spreadsheet_cell(f[c]) for c in COLUMNS])
    return buf.getvalue()


def terminal_csv(text: str) -> str:
    """The CSV report `text` for a terminal: every cell through `printable`, so a file name
    holding an escape sequence or a line break shows as escapes rather than driving the
    terminal or starting a row of its own (a file, a pipe or `-o` gets the cells as they are)."""
    if text.replace("\n", "").isprintable():
        return text  # only row ends: nothing to escape
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in csv.reader(io.StringIO(text, newline="")):
        writer.writerow([printable(cell) for cell in row])
    return buf.getvalue()
