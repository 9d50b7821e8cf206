"""Text output for `diagnose` and the generated troubleshooting reference."""
from __future__ import annotations

import textwrap
from typing import Optional

from ascend_migrate.diagnose.engine import Match, chain
from ascend_migrate.diagnose.kb import FAMILIES, WRITTEN, KnowledgeBase, default_kb
from ascend_migrate.printable import printable


def _wrap(label: str, text: str, width: int = 100) -> str:
    indent = " " * (len(label) + 4)
    return textwrap.fill(text, width=width, initial_indent=f"    {label}", subsequent_indent=indent)


def _where(m: Match, several: bool) -> str:
    where = f"{printable(m.source)}:{m.line_no}" if several else f"line {m.line_no}"
    extra = [f"rank {m.rank}" if m.rank is not None else "", printable(m.timestamp or "")]
    extra = [e for e in extra if e]
    return where + (f" ({', '.join(extra)})" if extra else "")


def render_text(matches: list[Match], source, verbose: bool = False) -> str:
    """The text report. It shows every field of the JSON report for each match; what comes
    from the logs (their names, the matched line, the values read from it) is shown escaped,
    so a log cannot send escape sequences (OSC 52 writes the clipboard) to the terminal."""
    sources = [printable(s) for s in ([source] if isinstance(source, str) else list(source))]
    label = sources[0] if len(sources) == 1 else f"{len(sources)} logs"
    if not matches:
        return (
            f"{label}: no known Ascend failure signature found.\n"
            "Run `ascend-migrate check --device npu:0` to test the environment, and "
            "`ascend-migrate diagnose --list` to see what is recognised.\n"
        )
    errors = sum(1 for m in matches if m.severity == "error")
    out = [f"{label}: {len(matches)} known issue(s), {errors} error(s); most likely root cause first, marked '*'.", ""]
    several = len(sources) > 1
    out += render_chain(matches, several)
    for i, m in enumerate(matches):
        mark = "*" if i == 0 and m.severity == "error" else "-"
        times = f", {m.count}x" if m.count > 1 else ""
        out.append(f"{mark} [{m.id}] {m.title}")
        out.append(f"    {m.severity}, confidence {m.confidence}, {m.role}, family {m.family}, category {m.category}{times}")
        out.append(f"    at:      {_where(m, several)}")
        out.append(f"    line:    {printable(m.line)}")
        if m.details:
            out.append("    details: " + ", ".join(f"{printable(k)}={printable(v)}" for k, v in m.details.items()))
        if m.decoded:
            d = m.decoded
            if "module" in d:  # torch_npu ERR<mm><ccc>
                out.append(f"    decoded: {d['code']} = {d['module']} ({d['module_meaning']}) / {d['error']} ({d['meaning'] or '?'})")
            else:  # a CANN / runtime / HCCL code decoded by family
                out.append(f"    decoded: {d['code']} = {d['family_area']} / {d['area']}")
        out.append(_wrap("cause:   ", m.cause))
        out.append(_wrap("fix:     ", m.fix))
        if m.confirm:
            out.append(f"    confirm: {m.confirm}")
        if m.relayed:
            out.append("    relayed: the same failure as the layers around it reported it (not separate causes):")
            out += [f"             line {r['line_no']} [{r['id']}] {printable(r.get('code') or r['title'])}" for r in m.relayed]
        if verbose and m.other_lines:
            out.append("    also at lines: " + ", ".join(str(n) for n in m.other_lines))
        out.append("")
    return "\n".join(out)


def render_chain(matches: list[Match], several: bool = False) -> list[str]:
    """The failure as a chain: the cause, what followed from it, and the command that confirms
    the cause. Several errors in one log are usually one failure seen from several layers (a
    device fault, the runtime call that noticed it, the framework error that relayed it); the
    user should act on the cause only."""
    cause, consequences = chain(matches)
    if cause is None:
        return []
    def one(m: Match) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in (m.details or {}).items() if k in ("operator", "dtype", "shape", "device"))
        lines = sorted({r["line_no"] for r in m.relayed})
        relayed = f"; relayed on line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else ""
        return f"[{m.id}] {_where(m, several)}: {m.title}" + (f" ({extra})" if extra else "") + relayed
    out = ["Chain (cause first, then what followed from it):", f"  cause:        {one(cause)}"]
    if cause.confidence == "low":
        out.append("                (low confidence: only the layer that failed is known; read the lines above it)")
    out += [f"  consequence:  {one(m)}" for m in consequences[:12]]
    if len(consequences) > 12:
        out.append(f"  ... and {len(consequences) - 12} more")
    if cause.confirm:
        out.append(f"  confirm the cause before changing anything: {cause.confirm}")
    out.append("")
    return out


def render_list(kb: Optional[KnowledgeBase] = None) -> str:
    kb = kb or default_kb()
    width = max(len(s.id) for s in kb.signatures)
    out: list[str] = []
    for fam in FAMILIES:
        sigs = [s for s in kb.signatures if s.family == fam]
        if not sigs:
            continue
        out.append(f"{fam}:")
        out += [f"  {s.id.ljust(width)}  {s.confidence:<6} {s.title}" for s in sigs]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_reference(kb: Optional[KnowledgeBase] = None) -> str:
    """references/troubleshooting.md, generated from knowledge/failures.yaml."""
    kb = kb or default_kb()
    out = [
        "# Ascend troubleshooting reference",
        "",
        "<!-- Generated from src/ascend_migrate/knowledge/failures.yaml by `ascend-migrate docs --write`. Do not edit. -->",
        "",
        "`ascend-migrate diagnose LOG...` matches logs against these signatures and prints, for each",
        "one it finds, the cause, the fix and a command that confirms it (`--format json` for tools).",
        "Signatures are grouped by family; signature ids are stable.",
        f"There are {len(kb.signatures)} signatures.",
        "",
    ]
    for fam in FAMILIES:
        sigs = [s for s in kb.signatures if s.family == fam]
        if not sigs:
            continue
        out += [f"## {fam.replace('-', ' ').capitalize()}", ""]
        for s in sigs:
            out += [
                f"### `{s.id}`: {s.title}",
                "",
                f"- Severity: {s.severity}; confidence when matched: {s.confidence}; {s.role}; category {s.category}",
                "- Matches: " + ", ".join(f"`{_cell(WRITTEN.get(p.pattern, p.pattern))}`" for p in s.patterns),
            ]
            if s.near is not None:
                out.append(f"- Only with `{_cell(WRITTEN.get(s.near.pattern, s.near.pattern))}` within a few lines")
            out += [
                f"- Cause: {s.cause}",
                f"- Fix: {s.fix}",
                *([f"- Confirm: `{_cell(s.confirm)}`"] if s.confirm else []),
                "- Example:",
                "",
                "  ```text",
                *[f"  {ln}" for ln in s.example.splitlines()],
                "  ```",
                "",
            ]
    out += [
        "## torch_npu error codes",
        "",
        "torch_npu appends `[ERROR] <time> (PID:…, Device:…, RankID:…) ERR<mm><ccc> <module> <message>`",
        "to its errors. `diagnose` decodes every code it sees.",
        "",
        "| mm | module | meaning |",
        "|---|---|---|",
    ]
    out += [f"| {k} | {v.name} | {_cell(v.meaning)} |" for k, v in sorted(kb.err_modules.items())]
    out += ["", "| ccc | name | meaning | what to do |", "|---|---|---|---|"]
    out += [
        f"| {k} | {v.name} | {_cell(v.meaning)} | {_cell(v.fix)} |"
        for k, v in sorted(kb.err_codes.items())
    ]
    out += _code_families()
    out.append("")
    return "\n".join(out)


def _code_families() -> list[str]:
    """The CANN / runtime / HCCL code families (knowledge/error_codes.yaml) as tables: what
    `diagnose` answers, at low confidence, for a code no signature explains."""
    from ascend_migrate.diagnose.codes import default_codes

    t = default_codes()
    out = ["", "## CANN, runtime and HCCL codes by family", "",
           "A line whose code no signature explains is answered with the code's family (low",
           "confidence): where to look, and one command to run.", "",
           "| code | family | area | what to check |", "|---|---|---|---|"]
    out += [f"| `E{k}....` | {f.family} | {_cell(f.area)} | {_cell(f.check)} |" for k, f in sorted(t.prefixed.items())]
    out += [f"| {low}-{high} | {f.family} | {_cell(f.area)} | {_cell(f.check)} |" for low, high, f, _ in t.numeric]
    singles = sorted(t.prefixed_codes.items()) + [(str(c), e) for _, _, _, cs in t.numeric for c, e in sorted(cs.items())]
    out += ["", "| code | area | meaning |", "|---|---|---|"]
    out += [f"| {c} | {_cell(e['area'])} | {_cell(e['meaning'])} |" for c, e in singles]
    out += ["", "| HCCL error code | name | meaning |", "|---|---|---|"]
    out += [f"| {n} | {r['name']} | {_cell(r['meaning'])} |" for n, r in sorted(t.hccl_results.items())]
    return out
