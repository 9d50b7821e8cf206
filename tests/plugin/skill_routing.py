"""Which shipped skill a user request would load, by keyword overlap with the descriptions.

A heuristic, not the client's real selection (which a model makes from the descriptions): it
tokenises each description's "Use when ..." clause, keeps the words no other skill's clause
uses (its trigger words), and scores a request by how many of them it contains. If the trigger
words of two skills overlapped, or a request that clearly belongs to one skill scored higher
for another, the descriptions would be ambiguous to a model too.
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

STOP = frozenset("""a an and or the to of in on for with from by is are be it its this that as at
use when user asks about wants mentions do not if any into than only one all other such
my our we i me you your can how what why which there their they has have been being
""".split())
# The domain every skill shares: naming it selects none of them.
SHARED = frozenset("ascend npu npus huawei torch_npu pytorch torch code run runs 昇腾 华为".split())


def description(skill_dir: Path) -> str:
    text = (skill_dir / "SKILL.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---", 2)[1])
    return " ".join(front["description"].split())


def trigger_clause(desc: str) -> str:
    """The "Use when ..." sentence(s), without the "Do not use ..." redirections."""
    start = desc.find("Use when")
    end = desc.find("Do not use")
    return desc[start:end if end > start else None] if start >= 0 else desc


def stem(word: str) -> str:
    for suffix in ("ing", "es", "s", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


# Chinese is written without spaces between words: a run of CJK characters counts by its
# overlapping two-character pieces, so 迁移 in a description matches 把项目迁移到昇腾 in a request.
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")


def cjk_pieces(text: str) -> set[str]:
    pieces: set[str] = set()
    for run in CJK.findall(text):
        pieces |= {run} if len(run) == 1 else {run[i:i + 2] for i in range(len(run) - 1)}
    return pieces - SHARED


def tokens(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9_.]+", text.lower())
    return {stem(w.strip(".")) for w in words if w.strip(".") and w.strip(".") not in STOP | SHARED} | cjk_pieces(text)


def trigger_words(skills: dict[str, str]) -> dict[str, set[str]]:
    clauses = {name: tokens(trigger_clause(desc)) for name, desc in skills.items()}
    return {name: words - set().union(*(w for n, w in clauses.items() if n != name))
            for name, words in clauses.items()}


def route(request: str, triggers: dict[str, set[str]]) -> tuple[str | None, dict[str, int]]:
    """The single best skill (None on a tie or no match) and every skill's score."""
    req = tokens(request)
    scores = {name: len(req & words) for name, words in triggers.items()}
    best = max(scores.values())
    winners = [n for n, s in scores.items() if s == best]
    return (winners[0] if best > 0 and len(winners) == 1 else None), scores
