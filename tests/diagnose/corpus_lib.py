"""The real-log corpus: error excerpts in the shape users posted them, with the cause the
thread confirmed. Each file starts with `# thread:`, `# cause:` and `# expect:` (a signature
id, or `none` when the thread confirmed nothing was wrong) header lines.

Outcomes: named (the first-ranked error is the expected signature), area (another answer in
the expected signature's family: the user is sent to the right place), wrong (an answer in
another family, or any answer where nothing was wrong), nothing (no error reported).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ascend_migrate.diagnose.engine import Diagnoser
from ascend_migrate.diagnose.kb import default_kb

CORPUS = Path(__file__).resolve().parent / "corpus"


@dataclass
class Case:
    path: Path
    thread: str
    cause: str
    expect: Optional[str]  # None: no error should be reported
    body: str


@dataclass
class Outcome:
    case: Case
    got: Optional[str]
    confidence: Optional[str]
    correct: bool
    confidently_wrong: bool
    verdict: str = ""  # named | area | wrong | nothing (| quiet: nothing reported, as expected)
    has_code: bool = False  # the log holds an Ascend error code


def load(subset: str) -> list[Case]:
    cases = []
    for p in sorted((CORPUS / subset).glob("*.log")):
        head, body = {}, []
        for line in p.read_text(encoding="utf-8").splitlines():
            if not body and line.startswith("# ") and ":" in line:
                k, v = line[2:].split(":", 1)
                head[k.strip()] = v.strip()
            else:
                body.append(line)
        expect = head["expect"]
        cases.append(Case(p, head["thread"], head["cause"], None if expect == "none" else expect, "\n".join(body) + "\n"))
    return cases


def judge(case: Case) -> Outcome:
    d = Diagnoser()
    d.feed_text(case.body, case.path.name)
    errors = [m for m in d.matches() if m.severity == "error"]
    top = errors[0] if errors else None
    got = top.id if top else None
    if case.expect is None:
        correct = top is None
    else:
        correct = got == case.expect
    wrong_high = (not correct) and top is not None and top.confidence == "high"
    if case.expect is None:
        verdict = "quiet" if top is None else "wrong"
    elif top is None:
        verdict = "nothing"
    elif correct:
        verdict = "named"
    else:
        verdict = "area" if top.family == default_kb().get(case.expect).family else "wrong"
    has_code = bool(_CODE_RE.search(case.body))
    return Outcome(case, got, top.confidence if top else None, correct, wrong_high, verdict, has_code)


# An Ascend error code: a CANN message code, a six-digit runtime code, or a torch_npu ERR code.
_CODE_RE = re.compile(r"(?<![\w.])E[0-9A-Z]\d{4}(?=[:\[)]| ?:)|\b[1-5]0\d{4}\b|\bERR\d{5}\b")


def tally(outcomes: list[Outcome]) -> dict[str, int]:
    """Counts of each verdict (named, area, wrong, nothing, quiet)."""
    out = {k: 0 for k in ("named", "area", "wrong", "nothing", "quiet")}
    for o in outcomes:
        out[o.verdict] += 1
    return out


def score(subset: str) -> tuple[list[Outcome], float]:
    outcomes = [judge(c) for c in load(subset)]
    rate = sum(o.correct for o in outcomes) / len(outcomes) if outcomes else 0.0
    return outcomes, rate
