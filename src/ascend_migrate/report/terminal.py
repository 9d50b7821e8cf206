"""The terminal summary of a scan, and a progress bar for long scans.

Locations print as `path:line:col` with a 1-based column, the convention editors and
terminals turn into links (the JSON report keeps the 0-based column).
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, Optional, TextIO

import click

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.printable import printable_data
from ascend_migrate.report.json_report import as_report, plans_to_show, synced_note
from ascend_migrate.scan.api import ScanResult

SEVERITY_COLORS = {"error": "red", "warning": "yellow", "info": "cyan"}
TRANSFER_COLORS = {"auto": "green", "partial": "yellow", "none": "red"}
DEFAULT_LIMIT = 200


def summary(
    result: "ScanResult | dict[str, Any]",
    kb: Optional[KnowledgeBase] = None,
    color: bool = False,
    top: int = 10,
    limit: int = DEFAULT_LIMIT,
) -> str:
    """Counts, coverage, effort, then the `top` files by findings, entry points and unscanned
    files, then up to `limit` findings."""
    report = printable_data(as_report(result, kb))  # names and texts from the tree, escaped
    st = _styler(color)
    counts = report["counts"]
    sev = counts["by_severity"]
    out: list[str] = []
    npu = f", transfer_to_npu coverage of torch_npu {report['torch_npu_version']}" if report["torch_npu_version"] else ""
    npu += synced_note(report["torch_npu_version"])
    out.append(st(f"{report['tool']['name']} {report['tool']['version']}", bold=True)
               + f": scanned {report['files_scanned']:,} files ({report['lines_scanned']:,} lines) "
               f"in {report['duration_s']:.2f} s{npu}")
    out.append(f"root: {report['root']}")
    out.append("")
    sev_text = ", ".join(st(f"{sev[s]} {s}", fg=SEVERITY_COLORS[s]) if sev[s] else f"0 {s}"
                         for s in ("error", "warning", "info"))
    out.append(st(f"{counts['findings']:,} findings", bold=True)
               + f" in {counts['files_with_findings']:,} files: {sev_text}")

    plans = report.get("frameworks") or []
    if plans_to_show(plans):
        out.append("")
        out.append(st("plan per framework:", bold=True))
        for plan in plans:
            if not plan["findings"]:
                out.append(f"  {plan['label']}: no findings (first seen at {plan['first_seen']}): nothing to port")
                continue
            sev = plan["by_severity"]
            out.append(f"  {plan['label']}: {plan['findings']} findings ({sev.get('error', 0)} error, "
                       f"{sev.get('warning', 0)} warning, {sev.get('info', 0)} info), first seen at {plan['first_seen']}")
            for b in plan["blockers"]:
                out.append(st(f"    blocker {b['path']}:{b['line']} {b['rule']}: ", fg="red") + _clip(_one_line(b["message"])))
            for i, step in enumerate(plan["steps"], 1):
                out.append(f"    {i}. {_clip(_one_line(step))}")

    if counts["by_category"]:
        out.append("")
        cats = sorted(counts["by_category"].items(), key=lambda kv: (-kv[1], kv[0]))
        width = max(len("category"), *(len(c) for c, _ in cats))
        out.append(st(f"  {'category':<{width}}  {'error':>6} {'warning':>8} {'info':>6} {'total':>6}", bold=True))
        for cat, n in cats:
            s = counts["by_category_severity"][cat]
            out.append(f"  {cat:<{width}}  {s['error']:>6} {s['warning']:>8} {s['info']:>6} {n:>6}")

    out.append("")
    cov = counts["by_transfer"]
    parts = [st(f"{k} {n}", fg=TRANSFER_COLORS.get(k)) if n else f"{k} 0"
             for k, n in cov.items() if n or k != "unknown"]
    out.append("transfer_to_npu coverage: " + " · ".join(parts))
    out.append("  (auto: handled at run time; partial: mapped, but behaves differently; none: needs a code change)")
    effort = report["effort"]
    out.append(f"estimated manual effort: about {effort['hours']:g} h ({effort['minutes']:,} min)")

    files = report["files"][:top]
    if files:
        out.append("")
        out.append(st(f"top files ({len(files)} of {len(report['files'])}):", bold=True))
        width = max(len(f["path"]) for f in files)
        for f in files:
            s = f["by_severity"]
            out.append(f"  {f['path']:<{width}}  {f['findings']:>5}  "
                       f"({s['error']} error, {s['warning']} warning, {s['info']} info)")

    out.append("")
    entries = report["entry_points"]
    if entries:
        out.append(st(f"entry points ({len(entries)}):", bold=True))
        width = max(len(f"{e['path']}:{e['line']}") for e in entries[:top])
        for e in entries[:top]:
            status = ("imports transfer_to_npu" if e["has_transfer_import"]
                      else "imports torch_npu" if e["imports_torch_npu"] else "no torch_npu import yet")
            out.append(f"  {e['path'] + ':' + str(e['line']):<{width}}  {e['kind']}  ({status})")
            if e.get("reason"):
                out.append(f"      {_clip(e['reason'])}")
        out += _more(len(entries) - top, "entry points")
    else:
        out.append("entry points: none found")
    rejected = report.get("rejected_entry_points") or []
    if rejected:
        out.append(st(f"not entry points ({len(rejected)}; overrule with --entry FILE):", bold=True))
        for e in rejected[:top]:
            out.append(f"  {e['path']}: {_clip(e.get('reason', ''))}")
        out += _more(len(rejected) - top, "candidates")

    if report["notes"]:
        out.append("")
        out.append(st(f"not fully scanned ({len(report['notes'])}):", bold=True))
        for n in report["notes"][:top]:
            out.append(f"  {n['path']}: {n['reason']}")
        out += _more(len(report["notes"]) - top, "files")

    findings = report["findings"]
    if findings:
        out.append("")
        out.append(st("findings:", bold=True))
        shown = findings[:max(0, limit)]
        locs = [f"{f['path']}:{f['line']}:{f['col'] + 1}" for f in shown]
        loc_w = max(len(x) for x in locs) if locs else 0
        rule_w = max((len(f["rule"]) for f in shown), default=5)
        for loc, f in zip(locs, shown):
            severity = f["severity"]
            out.append(f"  {loc:<{loc_w}}  {st(f['rule'].ljust(rule_w), bold=True)}  "
                       f"{st(severity.ljust(7), fg=SEVERITY_COLORS.get(severity))}  {_one_line(f['message'])}")
        if len(findings) > len(shown):
            out.append(f"  ... {len(findings) - len(shown):,} more; see all with --format json, md or csv "
                       "(e.g. `-o report.md --format md`)")
    return "\n".join(out) + "\n"


def _clip(text: str, width: int = 150) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _more(hidden: int, what: str) -> list[str]:
    return [f"  ... {hidden:,} more {what} (all are in --format md or json)"] if hidden > 0 else []


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _styler(color: bool) -> Callable[..., str]:
    def style(text: str, fg: Optional[str] = None, bold: bool = False) -> str:
        if not color or (fg is None and not bold):
            return text
        return click.style(text, fg=fg, bold=bold or None)

    return style


class Progress:
    """A progress bar on stderr for long scans; usable as `scan(progress=...)`.

    Drawn only when the stream is a terminal and the scan has more than `threshold` files,
    redrawn at most every `interval` seconds; `close()` erases it.
    """

    def __init__(self, stream: Optional[TextIO] = None, threshold: int = 200, width: int = 30,
                 interval: float = 0.1, label: str = "scanning") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.threshold = threshold
        self.width = width
        self.interval = interval
        self.label = label
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last: Optional[float] = None
        self._drawn = 0  # width of the bar on screen

    def enabled_for(self, total: int) -> bool:
        return self._tty and total > self.threshold

    def update(self, done: int, total: int) -> None:
        if not self.enabled_for(total):
            return
        now = time.monotonic()
        if done < total and self._last is not None and now - self._last < self.interval:
            return
        self._last = now
        filled = self.width * done // total if total else self.width
        bar = "#" * filled + "-" * (self.width - filled)
        line = f"{self.label} [{bar}] {done}/{total} files"
        self.stream.write("\r" + line)
        self.stream.flush()
        self._drawn = max(self._drawn, len(line))

    __call__ = update

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
