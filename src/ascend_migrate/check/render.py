"""Terminal output for `check`."""
from __future__ import annotations

import textwrap

from ascend_migrate.check.model import Report

_MARK = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "skip": "skip"}
_COLOR = {"ok": "green", "warn": "yellow", "fail": "red", "skip": None}


def _sig_title(sig_id: str) -> str:
    from ascend_migrate.diagnose.kb import default_kb

    try:
        return default_kb().get(sig_id).title
    except KeyError:
        return sig_id


def render_text(report: Report, color: bool = False, width: int = 100) -> str:
    import click

    def paint(text: str, status: str) -> str:
        c = _COLOR.get(status)
        return click.style(text, fg=c, bold=status == "fail") if color and c else text

    title_w = max(len(s.title) for s in report.stages)
    lines = [f"ascend-migrate check --device {report.device}   (python: {report.python})", ""]
    if report.no_npu_stack:
        lines += [paint("No NPU stack is present on this machine (no torch_npu, no CANN, no driver).", "fail"), ""]
    pad = " " * (6 + 2 + title_w + 2)
    for s in report.stages:
        status = paint(f"{_MARK[s.status]:<6}", s.status)
        body = textwrap.wrap(s.found, width=max(40, width - len(pad))) or [""]
        lines.append(f"{status}  {s.title:<{title_w}}  {body[0]}")
        lines += [pad + b for b in body[1:]]
        if s.status in ("fail", "warn"):
            for label, text in (("cause: ", s.cause), ("fix:   ", s.fix)):
                if text:
                    wrapped = textwrap.wrap(text, width=max(40, width - len(pad) - len(label)))
                    lines.append(pad + label + wrapped[0])
                    lines += [pad + " " * len(label) + w for w in wrapped[1:]]
            if s.diagnosis:
                lines.append(pad + f"diagnosis: {_sig_title(s.diagnosis)} [{s.diagnosis}]")
    c = report.counts
    lines += [
        "",
        f"{c['ok']} ok, {c['warn']} warn, {c['fail']} fail, {c['skip']} skipped in {report.elapsed_s:.1f}s",
        paint(report.summary, report.verdict),
        "",
    ]
    return "\n".join(lines)
