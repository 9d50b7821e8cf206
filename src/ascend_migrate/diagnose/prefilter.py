"""One cheap pass that picks the log lines worth matching.

Every signature pattern is parsed once to find the literal text it cannot match without
(its "required literals"; one set per top-level alternative). Each alternative must contain
one of a small list of anchors (lowercase literals, `prefilter_anchors` in failures.yaml);
an alternative without one gets its longest required literal as an extra anchor. A log block
is lowercased once and searched for each anchor with `str.find` (a C loop, far faster than
running every regex on every line); only the lines holding an anchor are matched in full.

Sound by construction: a line that some pattern matches contains one of that pattern's
required literals, hence an anchor, hence is selected. Lowercasing only widens the selection.
"""
from __future__ import annotations

from pathlib import Path
import re
from typing import Iterable, Iterator, Optional, Sequence

try:  # Python 3.11+
    from re import _constants as _sre_c  # type: ignore[attr-defined]
    from re import _parser as _sre_p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_p  # type: ignore[no-redef]

from ascend_migrate.knowledge.loader import KnowledgeError

MAX_ALTERNATIVES = 64
_POSSESSIVE = getattr(_sre_c, "POSSESSIVE_REPEAT", object())
_ATOMIC = getattr(_sre_c, "ATOMIC_GROUP", object())
MIN_ANCHOR = 3


def _alternatives(items) -> list[list[str]]:
    """Required literal runs of a parsed sequence, one list per alternative."""
    alts: list[list[str]] = [[]]
    run: list[str] = []

    def flush() -> None:
        if run:
            text = "".join(run)
            for a in alts:
                a.append(text)
            run.clear()

    for op, av in items:
        if op is _sre_c.LITERAL:
            run.append(chr(av))
            continue
        flush()
        sub: list[list[str]] | None = None
        if op is _sre_c.SUBPATTERN:
            sub = _alternatives(av[-1])
        elif op is _sre_c.BRANCH:
            sub = [lits for branch in av[1] for lits in _alternatives(branch)]
        elif op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT) and av[0] >= 1:
            sub = _alternatives(av[2])
        elif op is _POSSESSIVE and av[0] >= 1:
            sub = _alternatives(av[2])
        elif op is _ATOMIC:
            sub = _alternatives(av)
        if sub is None or sub == [[]]:
            continue
        if len(alts) * len(sub) > MAX_ALTERNATIVES:
            # too many combinations: keep only what every alternative of `sub` shares (nothing)
            continue
        alts = [a + s for a in alts for s in sub]
    flush()
    return alts


def required_literals(pattern: str) -> list[list[str]]:
    """For each top-level alternative of `pattern`, the literal strings it must contain."""
    parsed = _sre_p.parse(pattern)
    return [[lit for lit in alt if lit] for alt in _alternatives(list(parsed))]


def build_anchors(signatures: Sequence, declared: Iterable[str], file: Path | str) -> tuple[str, ...]:
    """The anchor list: the declared ones plus whatever an uncovered alternative needs."""
    anchors = [a.lower() for a in declared if a]
    for a in anchors:
        if len(a) < MIN_ANCHOR:
            raise KnowledgeError(file, "prefilter_anchors", f"anchor {a!r} is shorter than {MIN_ANCHOR} characters")
    for sig in signatures:
        for j, pat in enumerate(sig.patterns):
            for alt in required_literals(pat.pattern):
                low = [lit.lower() for lit in alt]
                if any(a in lit for lit in low for a in anchors):
                    continue
                longest = max(low, key=len, default="")
                if len(longest) < MIN_ANCHOR:
                    raise KnowledgeError(
                        file,
                        f"{sig.id}.patterns[{j}]",
                        "cannot be prefiltered: it has no literal text of 3 or more characters that every match contains",
                    )
                anchors.append(longest)
    # an anchor that contains another one is redundant: the shorter one finds the same lines
    anchors = sorted(set(anchors), key=len)
    kept: list[str] = []
    for a in anchors:
        if not any(k in a for k in kept):
            kept.append(a)
    return tuple(kept)


def candidate_lines(block: str, anchors: Sequence[str],
                    extra: Optional["re.Pattern[str]"] = None) -> Iterator[tuple[int, int]]:
    """(start, end) offsets of the lines of `block` that contain an anchor, or a match of
    `extra` (a pattern for text no fixed anchor can find, such as CANN error codes), in order."""
    low = block.lower()
    if len(low) != len(block):  # a character changed length when lowercased: go line by line
        pos = 0
        for line in block.split("\n"):
            end = pos + len(line)
            ll = line.lower()
            if any(a in ll for a in anchors) or (extra is not None and extra.search(line)):
                yield pos, end
            pos = end + 1
        return
    starts: set[int] = set()
    if extra is not None:
        for m in extra.finditer(block):
            starts.add(block.rfind("\n", 0, m.start()) + 1)
    for a in anchors:
        i = low.find(a)
        while i != -1:
            s = low.rfind("\n", 0, i) + 1
            starts.add(s)
            e = low.find("\n", i)
            if e == -1:
                break
            i = low.find(a, e)
    for s in sorted(starts):
        e = block.find("\n", s)
        yield s, (len(block) if e == -1 else e)
