"""The real-log corpus: error excerpts in the shape users posted them, with the cause the
thread confirmed. Each file starts with `# thread:`, `# cause:` and `# expect:` (a signature
id, or `none` when the thread confirmed nothing was wrong) header lines."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ascend_migrate.diagnose.engine import Diagnoser

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
    return Outcome(case, got, top.confidence if top else None, correct, wrong_high)


def score(subset: str) -> tuple[list[Outcome], float]:
    outcomes = [judge(c) for c in load(subset)]
    rate = sum(o.correct for o in outcomes) / len(outcomes) if outcomes else 0.0
    return outcomes, rate
