"""The validation report: one verdict, every item with evidence, thresholds, environment.

JSON schema key "ascend-migrate/validation-report/1"; the skill generator accepts a report only
with that key and verdict "pass". Markdown is rendered from the same dict.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

SCHEMA = "ascend-migrate/validation-report/1"
STATUSES = ("pass", "fail", "manual-pending", "confirmed", "skip")
BLOCKING = ("fail", "manual-pending")


def verdict_of(items: Iterable[dict[str, Any]]) -> tuple[str, list[str]]:
    """(verdict, reasons) by the one rule in `validate.verdict.decide`."""
    from ascend_migrate.validate.verdict import decide

    decision = decide(items)
    return decision.verdict, decision.reasons


def summary_counts(items: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts = {s: 0 for s in STATUSES}
    for item in items:
        counts[item["status"]] = counts.get(item["status"], 0) + 1
    return counts


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=False, default=str) + "\n"


_ICON = {"pass": "PASS", "fail": "FAIL", "manual-pending": "PENDING", "confirmed": "CONFIRMED", "skip": "SKIP"}


def _md_escape(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _evidence_line(ev: dict[str, Any]) -> str:
    where = ""
    if ev.get("path"):
        where = f"`{ev['path']}" + (f":{ev['line']}" if ev.get("line") else "") + "` "
    rule = f"[{ev['rule']}] " if ev.get("rule") else ""
    text = ev.get("message", "")
    if ev.get("note"):
        text += f" — {ev['note']}"
    if ev.get("output"):
        text = f"output `{ev['output']}`: {text}"
    return f"- {where}{rule}{text}".rstrip()


def _fmt(v: Any) -> str:
    if v is None:
        return "not applied"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def to_markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Validation report",
        "",
        f"**Verdict: {report['verdict'].upper()}**"
        + (f" ({report['verdict_note']})" if report.get("verdict_note") else ""),
        "",
        f"- Project: `{report.get('project')}`",
        f"- Device: `{report.get('device')}`",
        f"- Created: {report.get('created')}",
        f"- Tool: ascend-migrate {report.get('tool', {}).get('version', '')}",
    ]
    counts = report.get("summary", {})
    if counts:
        lines.append("- Items: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
    if report.get("reasons"):
        lines += ["", "## Why it fails", ""] + [f"- {r}" for r in report["reasons"]]
    if report.get("open_warnings"):
        lines += ["", "## Open warnings (do not block the verdict)", ""] + [f"- {r}" for r in report["open_warnings"]]
    prov = report.get("provenance")
    if prov:
        golden = prov.get("golden") or {}
        tree = prov.get("tree") or {}
        host = prov.get("host") or {}
        lines += ["", "## Provenance", "",
                  f"- Device: `{prov.get('device')}`" + ("" if prov.get("device_kind") == "npu" else
                                                         " (not an NPU: this run does not show the port works on Ascend)"),
                  "- Host: " + (", ".join(f"{k} {v}" for k, v in host.items() if v) or "not recorded"),
                  f"- Goldens compared: {'yes' if golden.get('compared') else 'no'}"
                  + (f" (`{golden.get('sha256')}`)" if golden.get("sha256") else "")
                  + (f"; {golden['why_not']}" if golden.get("why_not") else ""),
                  f"- Tree hash: `{tree.get('sha256')}` over {tree.get('files')} files ({tree.get('algorithm')})"]
        prec = prov.get("precision") or {}
        if prec.get("mode"):
            on = sorted(k for k, v in ((prec.get("run") or {}).get("switches") or {}).items() if v)
            lines.append(f"- Precision mode: {prec['mode']} (thresholds assume {prec.get('thresholds_assume')}); "
                         f"switches on in the run: {', '.join(on) or 'none'}"
                         + (f"; MISMATCH: {'; '.join(prec['mismatch'])}" if prec.get("mismatch") else ""))
        if report.get("checksum"):
            lines.append(f"- Report checksum: `{report['checksum'].get('value')}`")
    lines += ["", "## Items", "", "| Status | ID | Item | Kind | Severity | Summary |", "|---|---|---|---|---|---|"]
    for item in report["items"]:
        lines.append(
            f"| {_ICON.get(item['status'], item['status'])} | `{item['id']}` | {_md_escape(item['title'])} | "
            f"{item['kind']} | {item['severity']} | {_md_escape(item.get('summary', ''))} |"
        )
    lines += ["", "## Evidence", ""]
    for item in report["items"]:
        if not item.get("evidence"):
            continue
        lines += [f"### {item['id']} ({item['status']})", ""]
        lines += [_evidence_line(ev) for ev in item["evidence"][:60]]
        if item["status"] in BLOCKING and item.get("fix"):
            lines.append(f"- Fix: {item['fix']}")
        lines.append("")
    th = report.get("thresholds", {})
    used = th.get("used") or {}
    lines += ["## Thresholds", "", f"Source: `{th.get('source')}`", ""]
    if used:
        lines.append(f"Used for this run: dtype **{used.get('dtype')}**")
        lines.append("")
        gate = used.get("outputs") or {}
        for key, value in gate.items():
            lines.append(f"- outputs.{key}: {_fmt(value)}")
        for key, value in (used.get("hard") or {}).items():
            lines.append(f"- hard.{key}: {_fmt(value)}")
        for key, value in (used.get("loss") or {}).items():
            lines.append(f"- loss.{key}: {_fmt(value)}")
        lines.append("")
    lines += ["| dtype | cosine >= | max abs <= | rel_err <= | max_rel <= | mean_rel <= | rmse <= | small value | loss rtol | loss atol |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for dtype, gate in (th.get("outputs") or {}).items():
        loss = (th.get("loss") or {}).get(dtype, {})
        lines.append(
            f"| {dtype} | {_fmt(gate.get('cosine_min'))} | {_fmt(gate.get('max_abs'))} | {_fmt(gate.get('rel_err'))} | "
            f"{_fmt(gate.get('max_rel'))} | {_fmt(gate.get('mean_rel'))} | {_fmt(gate.get('rmse'))} | "
            f"{_fmt(gate.get('small_value'))} | {_fmt(loss.get('rtol'))} | {_fmt(loss.get('atol'))} |"
        )
    hard = th.get("hard") or {}
    lines += ["", f"Hard limits: cosine < {_fmt(hard.get('cosine_min'))}, max abs > {_fmt(hard.get('max_abs'))}, "
                  f"NaN/Inf: {'fail' if hard.get('nan_inf') else 'ignored'}.", ""]
    ddp = th.get("ddp") or {}
    if ddp:
        lines += [f"DDP: {ddp.get('nproc')} processes, {ddp.get('steps')} steps, timeout {ddp.get('timeout_s')} s, "
                  f"parameter rtol {_fmt(ddp.get('param_rtol'))}.", ""]
    comparison = report.get("comparison")
    if comparison and comparison.get("outputs"):
        lines += ["## Output comparison", "",
                  "| Output | Status | dtype | cosine | max_abs | rel_err | max_rel | mean_rel | rmse | NaN/Inf |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for out in comparison["outputs"]:
            m = out.get("metrics") or {}
            lines.append(
                f"| `{out['output']}` | {out['status']} | {out['dtype']} | {_fmt(m.get('cosine'))} | {_fmt(m.get('max_abs'))} | "
                f"{_fmt(m.get('rel_err'))} | {_fmt(m.get('max_rel'))} | {_fmt(m.get('mean_rel'))} | {_fmt(m.get('rmse'))} | "
                f"{m.get('target_nan_inf', '')} |"
            )
        lines.append("")
    if "operators" in report:
        from ascend_migrate.validate.operators import markdown_lines

        lines += markdown_lines(report.get("operators"))
    env = report.get("environment")
    lines += ["## Environment", "", "```json", json.dumps(env, indent=2, default=str)[:6000], "```", ""]
    return "\n".join(lines)
