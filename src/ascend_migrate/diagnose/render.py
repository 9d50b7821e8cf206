"""Text output for `diagnose` and the generated troubleshooting reference."""
from __future__ import annotations

import textwrap
from typing import Optional

from ascend_migrate.diagnose.engine import Match, primary
from ascend_migrate.diagnose.kb import CATEGORIES, KnowledgeBase, default_kb


def _wrap(label: str, text: str, width: int = 100) -> str:
    indent = " " * (len(label) + 4)
    return textwrap.fill(text, width=width, initial_indent=f"    {label}", subsequent_indent=indent)


def render_text(matches: list[Match], source: str) -> str:
    if not matches:
        return (
            f"{source}: no known Ascend failure signature found.\n"
            "Run `ascend-migrate check --device npu:0` to test the environment, and "
            "`ascend-migrate diagnose --list` to see what is recognised.\n"
        )
    top = primary(matches)
    out = [f"{source}: {len(matches)} known issue(s); most likely root cause first marked '*'.", ""]
    ordered = ([top] if top else []) + [m for m in matches if m is not top]
    for m in ordered:
        mark = "*" if m is top else "-"
        times = f", {m.count}x" if m.count > 1 else ""
        out.append(f"{mark} [{m.id}] {m.title}  ({m.severity}, confidence {m.confidence}{times})")
        out.append(f"    line {m.line_no}: {m.line}")
        out.append(_wrap("cause: ", m.cause))
        out.append(_wrap("fix:   ", m.fix))
        out.append("")
    return "\n".join(out)


def render_list(kb: Optional[KnowledgeBase] = None) -> str:
    kb = kb or default_kb()
    width = max(len(s.id) for s in kb.signatures)
    lines = [f"{s.id.ljust(width)}  {s.category:<12} {s.title}" for s in kb.signatures]
    return "\n".join(lines) + "\n"


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
        "`ascend-migrate diagnose LOG` matches a log against these signatures and prints the cause",
        "and fix for each one it finds (`--json` for tools). Signature ids are stable.",
        f"There are {len(kb.signatures)} signatures.",
        "",
    ]
    for cat in CATEGORIES:
        sigs = [s for s in kb.signatures if s.category == cat]
        if not sigs:
            continue
        out += [f"## {cat.capitalize()}", ""]
        for s in sigs:
            out += [
                f"### `{s.id}`: {s.title}",
                "",
                f"- Severity: {s.severity}; confidence when matched: {s.confidence}",
                "- Matches: " + ", ".join(f"`{_cell(p.pattern)}`" for p in s.patterns),
            ]
            if s.near is not None:
                out.append(f"- Only with `{_cell(s.near.pattern)}` within a few lines")
            out += [
                f"- Cause: {s.cause}",
                f"- Fix: {s.fix}",
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
    out.append("")
    return "\n".join(out)
