"""Score `diagnose` on error excerpts in the shape users posted them in public threads.

`corpus/main`: threads the knowledge base was built from. `corpus/heldout`: threads it does
not cite, written after the signatures were fixed, to measure what it does on logs it was not
tuned to. `corpus/heldaside`: 2025-2026 threads it does not cite, written into the repository
before the signatures that score them. A case counts as named correctly when the first-ranked error is the cause the thread
confirmed (or nothing is reported when the thread confirmed nothing was wrong). Confidently
wrong: a wrong first-ranked error of high confidence.
"""
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # --import-mode=importlib: make corpus_lib importable
from corpus_lib import CORPUS, load, score, tally  # noqa: E402

BENCH_DOC = Path(__file__).resolve().parents[2] / "bench" / "diagnose.md"


def test_corpus_has_enough_cases_each_with_its_thread():
    main, held, aside = load("main"), load("heldout"), load("heldaside")
    assert len(main) >= 60 and len(held) >= 8 and len(aside) >= 8
    for case in main + held + aside:
        assert re.match(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+$", case.thread), case.path
        assert case.cause and case.body.strip()
    cited = set(re.findall(r"https://github\.com/\S+", (CORPUS.parents[2] / "src/ascend_migrate/knowledge/failures.yaml").read_text()))
    assert not {c.thread for c in held + aside} & cited, "held-out threads must not be cited by the knowledge base"


def test_main_corpus_named_correctly_and_never_confidently_wrong():
    outcomes, rate = score("main")
    misses = [(o.case.path.name, o.case.expect, o.got) for o in outcomes if not o.correct]
    assert rate >= 0.85, misses
    assert not [o for o in outcomes if o.confidently_wrong], misses


def test_heldout_never_confidently_wrong():
    outcomes, rate = score("heldout")
    assert not [o.case.path.name for o in outcomes if o.confidently_wrong]
    assert rate >= 6 / 8  # the score recorded in bench/diagnose.md; do not tune signatures to these


def test_heldaside_names_the_cause_and_never_answers_wrong_or_nothing():
    """The acceptance bar on logs the signatures were not written from: at least 4 in 5 named,
    no answer in the wrong family, and never silence on a log that holds an Ascend error code."""
    outcomes, rate = score("heldaside")
    assert rate >= 0.8, [(o.case.path.name, o.case.expect, o.got) for o in outcomes if not o.correct]
    assert not [o.case.path.name for o in outcomes if o.verdict == "wrong"]
    assert not [o.case.path.name for o in outcomes if o.verdict == "nothing" and o.has_code]


def test_main_corpus_never_silent_on_an_ascend_code():
    outcomes, _ = score("main")
    assert not [o.case.path.name for o in outcomes if o.verdict == "nothing" and o.has_code]


@pytest.mark.parametrize("subset", ["main", "heldout", "heldaside"])
def test_scores_recorded_in_bench_doc_are_current(subset):
    outcomes, _ = score(subset)
    right = sum(o.correct for o in outcomes)
    t = tally(outcomes)
    doc = BENCH_DOC.read_text()
    row = f"| {subset} | {len(outcomes)} | {right} | {100 * right / len(outcomes):.1f}% | {t['area']} | {t['wrong']} | {t['nothing']} |"
    assert row in doc, f"update bench/diagnose.md (python bench/score_corpus.py): {row}"
