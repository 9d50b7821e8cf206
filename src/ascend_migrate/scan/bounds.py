"""Bounds on what one file and one scan may keep, so a crafted tree costs bounded time and memory.

A generated file can hold a finding on every line (160,000 `torch.cuda.synchronize()` calls in
a 4 MB module) and one line can hold a token of 50,000 characters. Without bounds every finding
is built, measured and stored before anything is trimmed, and every copy of a long token goes
into a symbol, a message and a snippet. Here:

* `RuleCap` collects a file's findings and stops building them past `MAX_FINDINGS_PER_RULE`
  of one rule: the rest are only counted, and one info finding of the rule says how many were
  left out (the same summary `engine.cap_findings` writes, so the report reads the same
  whichever did the capping);
* `clip` bounds a symbol taken from the file, and so the message built around it;
* `MAX_FILE_FINDINGS` and `MAX_FILE_CANDIDATES` bound the findings an analysis of one file
  produces (its budget of candidate lines and of candidates, `engine`), `MAX_SCAN_FINDINGS`
  and `MAX_SCAN_SECONDS` those of one scan.
  Whatever a bound leaves out is said in the file's note: nothing is dropped silently.
"""
from __future__ import annotations

from typing import Callable, Optional

from ascend_migrate.scan.finding import Finding

MAX_FINDINGS_PER_RULE = 500  # per file: a generated file must not make a report of hundreds of MB
MAX_SYMBOL_CHARS = 120  # a symbol (and so a message) quotes at most this much of a token
# lines the prefilter marks as candidates, analysed per Python file: about 4 s of analysis
MAX_FILE_FINDINGS = 20_000
# candidates (prefilter matches) analysed per Python file, however few lines hold them: one
# generated line of 100,000 CUDA calls is cut like 100,000 lines of one call each
MAX_FILE_CANDIDATES = 40_000
MAX_SCAN_FINDINGS = 200_000  # kept over a whole scan; later files are listed as not analysed
MAX_SCAN_SECONDS = 1_800.0  # analysis time of one scan; later files are listed as not analysed

CAPPED_SYMBOL = "capped"


def clip(text: str, limit: int = MAX_SYMBOL_CHARS) -> str:
    """`text` cut to `limit` characters, with `...` and the full length when cut: a 50 kB token
    is named by its start and its size, not copied into every finding that quotes it."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def capped_summary(rule: str, path: str, line: int, col: int, more: int, limit: int) -> Finding:
    """The info finding that stands for `more` findings of `rule` left out of a file."""
    return Finding(rule=rule, path=path, line=line, col=col, end_line=line, end_col=col,
                   message=f"{more} more {rule} findings in this file from this line on are not listed "
                           f"(at most {limit} per rule per file)",
                   severity="info", confidence="low", symbol=CAPPED_SYMBOL)


def summary_count(finding: Finding) -> Optional[int]:
    """How many findings a summary written by `capped_summary` stands for (None: not one)."""
    if finding.symbol != CAPPED_SYMBOL or finding.severity != "info":
        return None
    count, sep, _ = finding.message.partition(" more ")
    return int(count) if sep and count.isdigit() else None


class RuleCap:
    """A file's findings, at most `limit` per rule; past that a finding is counted, not built.

    Scanners ask `room(rule)` before building a finding (building one formats a message and
    copies a snippet) and hand it to `add`; `skip` counts one they did not build. `findings()`
    gives the kept ones plus a summary per rule that overflowed, placed where the first finding
    left out would have been."""

    def __init__(self, path: str, limit: int = MAX_FINDINGS_PER_RULE) -> None:
        self.path = path
        self.limit = limit
        self.kept: list[Finding] = []
        self.counts: dict[str, int] = {}
        self.first_over: dict[str, tuple[int, int]] = {}  # rule -> (line, col) of the first left out

    def room(self, rule: str) -> bool:
        return self.counts.get(rule, 0) < self.limit

    def skip(self, rule: str, line: int, col: int) -> None:
        n = self.counts[rule] = self.counts.get(rule, 0) + 1
        if n == self.limit + 1:
            self.first_over[rule] = (line, col)

    def add(self, finding: Finding) -> None:
        if summary_count(finding) is not None:  # another collector's summary: passed on as it is
            self.kept.append(finding)
        elif self.room(finding.rule):
            self.counts[finding.rule] = self.counts.get(finding.rule, 0) + 1
            self.kept.append(finding)
        else:
            self.skip(finding.rule, finding.line, finding.col)

    def offer(self, rule: str, line: int, col: int, build: Callable[[], Finding]) -> None:
        """`add(build())` while the rule has room, else only count it."""
        if self.room(rule):
            self.add(build())
        else:
            self.skip(rule, line, col)

    def extend(self, findings: list[Finding]) -> None:
        for f in findings:
            self.add(f)

    def findings(self) -> list[Finding]:
        out = list(self.kept)
        for rule, (line, col) in self.first_over.items():
            out.append(capped_summary(rule, self.path, line, col, self.counts[rule] - self.limit, self.limit))
        return out
