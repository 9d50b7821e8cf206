"""CSV scan report: one row per finding, for spreadsheet-based migration tracking.

Positions are those of the JSON report: `line`/`end_line` 1-based, `col`/`end_col` 0-based.
Quoting is the csv module's (fields with commas, quotes or newlines are quoted).
"""
from __future__ import annotations

import csv
import io
from typing import Any, Optional

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.report.json_report import as_report
from ascend_migrate.scan.api import ScanResult

COLUMNS = ("path", "line", "col", "end_line", "end_col", "rule", "name", "category", "severity",
           "confidence", "transfer", "effort", "symbol", "message")


def to_csv(result: "ScanResult | dict[str, Any]", kb: Optional[KnowledgeBase] = None) -> str:
    """Header row plus one row per finding, in report order (path, line, column)."""
    report = as_report(result, kb)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for f in report["findings"]:
        writer.writerow([f[c] for c in COLUMNS])
    return buf.getvalue()
