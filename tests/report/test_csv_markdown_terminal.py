"""CSV, Markdown and the terminal summary, parsed back rather than eyeballed."""
from __future__ import annotations

import csv
import io
import re

from markdown_it import MarkdownIt

from ascend_migrate.report import csv_report, markdown, render, terminal
from ascend_migrate.scan.api import ScanResult

ANSI = re.compile(r"\x1b\[[0-9;]*m")


# --------------------------------------------------------------------------- CSV
def test_csv_parses_back_one_row_per_finding(hand_result, kb):
    rows = list(csv.reader(io.StringIO(csv_report.to_csv(hand_result, kb))))
    assert tuple(rows[0]) == csv_report.COLUMNS
    body = [dict(zip(rows[0], r)) for r in rows[1:]]
    assert len(body) == len(hand_result.findings)
    sc = next(r for r in body if r["rule"] == "SC001")
    assert sc["message"] == 'file could not be parsed (syntax error line 1: "a | b", then, "quotes")'
    dv = next(r for r in body if r["rule"] == "DV001")
    assert dv["message"] == "device string `cuda` | pipe\nnewline"
    assert dv["path"] == "src/dir with space/m\u00fc.py"
    cu = next(r for r in body if r["rule"] == "CU101")
    assert (cu["line"], cu["col"], cu["end_line"], cu["end_col"]) == ("8", "19", "8", "53")
    assert (cu["name"], cu["category"], cu["transfer"], cu["effort"]) == (
        "device-capability-query", "cuda-api", "partial", "low")
    assert cu["symbol"] == "torch.cuda.get_device_capability"


def test_csv_of_empty_result_is_just_the_header(kb):
    assert csv_report.to_csv(ScanResult(root="."), kb) == ",".join(csv_report.COLUMNS) + "\n"


# --------------------------------------------------------------------------- Markdown
def _tables(text):
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables, current, row = [], None, None
    for tok in tokens:
        if tok.type == "table_open":
            current = []
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "inline" and row is not None and current is not None:
            row.append(tok.content)
        elif tok.type == "tr_close":
            current.append(row)
            row = None
        elif tok.type == "table_close":
            tables.append(current)
            current = None
    return tables


def _headings(text):
    tokens = MarkdownIt("commonmark").parse(text)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def test_markdown_has_the_summary_tables(hand_result, kb):
    text = markdown.to_markdown(hand_result, kb)
    heads = _headings(text)
    for h in ("Summary", "transfer_to_npu coverage", "By category", "By rule", "Effort estimate",
              "Entry points", "Files not fully scanned", "Findings"):
        assert h in heads
    tables = {tuple(t[0]): t[1:] for t in _tables(text)}
    summary = tables[("Findings", "Errors", "Warnings", "Info", "Files with findings", "Estimated effort")]
    assert summary == [["11", "6", "3", "2", "6", "9.7 h"]]
    coverage = {r[0]: r[1] for r in tables[("Coverage", "Findings", "Share", "Meaning")]}
    assert coverage == {"`auto`": "2", "`partial`": "3", "`none`": "6"}
    by_rule = {r[0]: r for r in tables[("Rule", "Name", "Category", "Severity", "transfer_to_npu", "Effort", "Findings")]}
    assert by_rule["[EX001](#ex001)"][1] == "cuda-source-file"
    assert by_rule["[EX001](#ex001)"][-1] == "4"
    cats = {r[0]: r[1] for r in tables[("Category", "Findings", "Errors", "Warnings", "Info")]}
    assert cats["extension"] == "4"
    effort = tables[("Effort", "Findings", "Counted", "Minutes each", "Minutes")]
    assert effort[-1][0] == "**total**" and "580" in effort[-1][-1]
    files = tables[("File", "Findings", "Errors", "Warnings", "Info")]
    assert files[0][:2] == ["`src/train.py`", "4"]


def test_markdown_findings_grouped_by_file_with_escaped_cells(hand_result, kb):
    text = markdown.to_markdown(hand_result, kb)
    heads = _headings(text)
    assert "`src/train.py` (4)" in heads and "`csrc/a.cu` (3)" in heads
    finding_tables = [t for t in _tables(text) if t[0] == ["Line", "Rule", "Severity", "Message"]]
    rows = [r for t in finding_tables for r in t[1:]]
    assert len(rows) == len(hand_result.findings)
    assert all(len(r) == 4 for r in rows)  # a pipe inside a message does not split the cell
    assert ["8:20", "[CU101](#cu101)", "error"] == next(r[:3] for r in rows if "CU101" in r[1])
    assert any(r[3] == "device string `cuda` | pipe\\nnewline" for r in rows)  # a line break shown escaped


def test_markdown_of_a_real_scan(tree, scan_tree, kb):
    result = scan_tree(tree)
    text = render(result, "md", kb)
    assert len(_tables(text)) >= 6
    assert "`pkg/train.py`" in text and "| main-guard |" in text


SCRIPT = """import argparse
import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.parse_args()
    torch.nn.Linear(4, 4).cuda()


if __name__ == "__main__":
    main()
"""


def _many_scripts(root, n):
    (root / "scripts").mkdir(parents=True)
    for i in range(n):
        (root / "scripts" / f"run_{i:02d}.py").write_text(SCRIPT, encoding="utf-8")
    return root


def test_markdown_summary_keeps_the_entry_points_and_is_bounded(tmp_path, scan_tree, kb):
    """The summary an agent reads before porting: every summary table and the entry points
    (at most ENTRY_ROWS listed, the rest counted), no findings or rule sections."""
    n = markdown.ENTRY_ROWS + 7
    result = scan_tree(_many_scripts(tmp_path / "proj", n))
    assert len(result.entry_points) == n
    full = render(result, "md", kb)
    text = render(result, "md", kb, summary=True)
    heads = _headings(text)
    for h in ("Summary", "transfer_to_npu coverage", "By category", "By rule", "Effort estimate", "Entry points"):
        assert h in heads
    assert "Findings" not in heads and "Rules" not in heads
    entry_table = next(t for t in _tables(text) if t[0][:3] == ["File", "Line", "Kind"])
    assert len(entry_table) - 1 == markdown.ENTRY_ROWS
    assert "7 more entry points not listed here: all of them are under `entry_points` in the JSON report." in text
    full_entries = next(t for t in _tables(full) if t[0][:3] == ["File", "Line", "Kind"])
    assert len(full_entries) - 1 == n and "more entry points" not in full
    assert full.startswith(text.split("## Entry points")[0])  # the same tables before the entry points
    assert len(text) < len(full) / 2


def test_markdown_summary_of_a_small_tree_lists_every_entry_point(tree, scan_tree, kb):
    result = scan_tree(tree)
    text = render(result, "md", kb, summary=True)
    assert "| `pkg/train.py` |" in text and "| main-guard |" in text and "more entry points" not in text
    assert f"The {len(result.findings)} findings themselves" in text


# --------------------------------------------------------------------------- terminal
def test_summary_without_colour_has_the_counts(hand_result, kb):
    text = terminal.summary(hand_result, kb, color=False)
    assert not ANSI.search(text)
    assert "11 findings in 6 files: 6 error, 3 warning, 2 info" in text
    assert "transfer_to_npu coverage: auto 2 · partial 3 · none 6" in text
    assert "about 9.7 h (580 min)" in text
    assert re.search(r"^  extension\s+4\s+0\s+0\s+4$", text, re.M)
    assert "src/train.py:16  main-guard  (no torch_npu import yet)" in text
    assert "big.py: skipped: too big" in text
    assert re.search(r"^  src/train\.py:8:20\s+CU101  error    `?CU101 at src/train\.py:8", text, re.M)
    assert re.search(r"^  src/train\.py\s+4  \(1 error, 1 warning, 2 info\)$", text, re.M)


def test_summary_aligns_and_caps_the_findings_list(hand_result, kb):
    text = terminal.summary(hand_result, kb, limit=3)
    lines = text.splitlines()
    listed = lines[lines.index("findings:") + 1:]
    assert len(listed) == 4 and listed[-1].startswith("  ... 8 more; see all with --format json")
    assert len({line.index(" CU") if " CU" in line else line.index(" EX") for line in listed[:3]}) == 1
    assert "top files (2 of 6)" in terminal.summary(hand_result, kb, top=2)
    one = terminal.summary(hand_result, kb, top=1)
    assert "  src/bad.py: syntax error line 1: invalid syntax\n  ... 1 more files" in one
    assert "big.py" not in one.split("not fully scanned")[1].split("findings:")[0]


def test_summary_with_colour(hand_result, kb):
    coloured = terminal.summary(hand_result, kb, color=True)
    assert ANSI.search(coloured)
    assert ANSI.sub("", coloured) == terminal.summary(hand_result, kb, color=False)
    assert render(hand_result, "text", kb, color=True) == coloured


def test_summary_of_empty_scan(kb):
    text = terminal.summary(ScanResult(root="."), kb)
    assert "0 findings in 0 files" in text and "entry points: none found" in text
    assert "findings:" not in text


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_only_on_a_terminal_and_for_big_scans():
    quiet = _Stream(tty=False)
    p = terminal.Progress(stream=quiet, interval=0)
    for i in range(1001):
        p(i, 1000)
    p.close()
    assert quiet.getvalue() == ""

    small = _Stream(tty=True)
    p = terminal.Progress(stream=small, interval=0)
    p.update(5, 50)
    p.close()
    assert small.getvalue() == ""

    big = _Stream(tty=True)
    with terminal.Progress(stream=big, interval=0) as p:
        p.update(0, 500)
        p.update(250, 500)
        p.update(500, 500)
    out = big.getvalue()
    assert "250/500 files" in out and "500/500 files" in out
    assert "[" + "#" * 15 + "-" * 15 + "]" in out
    assert out.endswith("\r") and out.rstrip("\r").endswith(" ")  # erased on close


def test_progress_throttles_redraws():
    stream = _Stream(tty=True)
    p = terminal.Progress(stream=stream, interval=3600)
    for i in range(1, 400):
        p.update(i, 400)
    p.update(400, 400)  # completion always draws
    assert stream.getvalue().count("\r") == 2


def _links_and_slugs(text):
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    links, slugs = [], set()
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            title = tokens[i + 1].content
            slugs.add("-".join(title.strip().lower().replace(":", "").split()))
        for child in tok.children or []:
            if child.type == "link_open":
                links.append(child.attrGet("href"))
    return links, slugs


def test_markdown_rule_links_work_outside_this_checkout(hand_result, kb):
    text = markdown.to_markdown(hand_result, kb)
    assert "references/" not in text
    links, slugs = _links_and_slugs(text)
    assert links
    for href in links:  # every link is absolute or lands on a heading of this document
        assert href.startswith(("http://", "https://")) or (href.startswith("#") and href[1:] in slugs), href
    assert {"#" + r.lower() for r in hand_result.rules_fired()} <= set(links)
    cu101 = text.split("\n### CU101\n", 1)[1].split("\n### ", 1)[0]
    assert " ".join(kb.rule("CU101").how.split()) in cu101
