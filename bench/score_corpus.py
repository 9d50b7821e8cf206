#!/usr/bin/env python3
"""Print the real-log corpus score of `diagnose` (the table kept in bench/diagnose.md).

    python bench/score_corpus.py            # summary table and every miss
    python bench/score_corpus.py --all      # every case
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests" / "diagnose"))

from corpus_lib import score, tally  # noqa: E402


# main: the threads the signatures were written from; heldout and heldaside: threads they were
# not (heldaside: 2025-2026 logs written into the repository before the signatures it scores).
SUBSETS = ("main", "heldout", "heldaside")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="list every case, not only the misses")
    args = ap.parse_args(argv)
    rows = []
    print("| set | cases | named correctly | rate | right area | wrong | nothing | confidently wrong |")
    print("|---|---|---|---|---|---|---|---|")
    for subset in SUBSETS:
        outcomes, rate = score(subset)
        right = sum(o.correct for o in outcomes)
        wrong_high = sum(o.confidently_wrong for o in outcomes)
        t = tally(outcomes)
        print(f"| {subset} | {len(outcomes)} | {right} | {100 * rate:.1f}% | {t['area']} | {t['wrong']} | "
              f"{t['nothing']} | {wrong_high} |")
        rows += [(subset, o) for o in outcomes if args.all or not o.correct]
    if rows:
        print()
        for subset, o in rows:
            mark = "ok  " if o.correct else "MISS"
            print(f"{mark} {subset}/{o.case.path.name} ({o.verdict}): expected {o.case.expect or 'nothing'}, "
                  f"got {o.got or 'nothing'}{f' ({o.confidence})' if o.got else ''} - {o.case.thread}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
