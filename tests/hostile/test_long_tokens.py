"""Text scanners on one long token or one line of many matches: linear time, bounded findings.

A DeepSpeed config holding one 50 kB string of `nccl-nccl-...` took 70 s and 1 GB: every
embedded `nccl` measured the whole token and stored it in a symbol, a message and a snippet.
Bounds stated here: each scan of these one-file trees finishes under MAX_SECONDS, keeps one
finding per token, and no symbol or message is longer than MAX_TEXT characters.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from ascend_migrate.scan.api import scan

MAX_SECONDS = 6
MAX_TEXT = 600
TOKEN = "nccl-" * 10_000  # 50 kB


def _scan(root: Path):
    start = time.process_time()
    result = scan(root, jobs=1, use_cache=False)
    took = time.process_time() - start
    assert took < MAX_SECONDS, took
    for f in result.findings:
        assert len(f.symbol) <= MAX_TEXT and len(f.message) <= MAX_TEXT and len(f.snippet) <= 200, f.rule
    return result


@pytest.mark.parametrize("name,text", [
    ("ds_config.json", '{"train_batch_size": 8,\n "comm": "%s"}\n' % TOKEN),
    ("run.sh", 'export X="%s"\npython train.py\n' % TOKEN),
    ("conf.yaml", "backend: %s\ndevice: cuda\n" % TOKEN),
], ids=["json", "shell", "yaml"])
def test_one_long_token_is_one_finding(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    result = _scan(tmp_path)
    ds = [f for f in result.findings if f.rule == "DS001"]
    assert len(ds) == 1, [(f.col, f.end_col) for f in ds[:5]]
    assert ds[0].end_col - ds[0].col == len(TOKEN)  # the finding still spans the whole token
    assert ds[0].symbol.startswith("nccl-nccl-") and "characters" in ds[0].symbol


def test_long_version_specifier_is_clipped_in_the_message(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("vllm" + ">=0.1," * 4_000 + "<0.2\n", encoding="utf-8")
    result = _scan(tmp_path)
    assert any(f.rule != "FW001" for f in result.findings)


def test_echoed_line_of_many_matches_is_linear(tmp_path: Path) -> None:
    """`_in_echoed_text` read the line up to each match: quadratic on a long echo line."""
    (tmp_path / "run.sh").write_text('echo "start ' + "nccl CUDA_VISIBLE_DEVICES nvidia-smi " * 3_000 + '"\n'
                                     + "nccl " * 10_000 + "\n", encoding="utf-8")
    result = _scan(tmp_path)
    assert [f.line for f in result.findings if f.rule == "DS001" and f.symbol != "capped"] == [2] * 500


def test_per_rule_cap_stops_collection_and_counts_the_rest(tmp_path: Path) -> None:
    from ascend_migrate.scan.engine import MAX_FINDINGS_PER_RULE

    (tmp_path / "run.sh").write_text("export NCCL_DEBUG=INFO\n" * (MAX_FINDINGS_PER_RULE + 300), encoding="utf-8")
    result = _scan(tmp_path)
    ds2 = [f for f in result.findings if f.rule == "DS002"]
    assert len(ds2) == MAX_FINDINGS_PER_RULE + 1
    summary = [f for f in ds2 if f.symbol == "capped"]
    assert len(summary) == 1 and "300 more DS002" in summary[0].message, summary
    assert summary[0].line == MAX_FINDINGS_PER_RULE + 1
    assert [n.reason for n in result.notes if n.path == "run.sh"] == [
        f"findings capped at {MAX_FINDINGS_PER_RULE} per rule: DS002 (300 more)"]


def test_collection_stops_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scanner itself builds no more than the cap (plus the summary): trimming afterwards
    would build every finding first."""
    from ascend_migrate.knowledge.base import load_knowledge
    from ascend_migrate.scan import text_scanners as ts
    from ascend_migrate.scan.engine import MAX_FINDINGS_PER_RULE

    built = []
    real = ts.Finding

    def counting(*args, **kwargs):
        built.append(kwargs.get("rule"))
        return real(*args, **kwargs)

    monkeypatch.setattr(ts, "Finding", counting)
    ts.scan_config(load_knowledge(), "run.sh", "nccl " * 5_000 + "\n", "sh")
    assert built.count("DS001") <= MAX_FINDINGS_PER_RULE, built.count("DS001")


def test_broken_python_with_a_long_line_of_tokens(tmp_path: Path) -> None:
    """The token-level fallback for a file that does not parse: one snippet per line, capped."""
    (tmp_path / "bad.py").write_text("def (:\n" + "torch.cuda.synchronize(); " * 8_000 + "\n", encoding="utf-8")
    result = _scan(tmp_path)
    rules = [f for f in result.findings if f.path == "bad.py" and f.rule not in ("SC001",)]
    assert 0 < len(rules) <= 502


def _reference_in_echoed_text(code: str, index: int) -> bool:
    """What the echo check answers, read the slow way (the whole line up to `index`)."""
    from ascend_migrate.scan.text_scanners import _ECHO

    before = code[:index]
    last = None
    for last in _ECHO.finditer(before):
        pass
    if last is None:
        return False
    quoted = before[last.end():]
    for quote in ('"', "'"):
        if quoted.count(quote) % 2 == 1:
            inside = quoted[quoted.rfind(quote) + 1:]
            return "$(" not in inside and "`" not in inside
    return False


def test_one_pass_echo_reader_agrees_with_reading_the_line() -> None:
    import random

    from ascend_migrate.scan.text_scanners import _Echoed

    rng = random.Random(7)
    parts = ["echo ", "printf ", "log_info ", '"', "'", "$(", "`", ")", " nccl ", "; ", "x", " ", "$", "(", "| "]
    for _ in range(400):
        code = "".join(rng.choice(parts) for _ in range(rng.randint(1, 25)))
        reader = _Echoed(code)
        positions = sorted(rng.sample(range(len(code) + 1), min(len(code) + 1, 8)))
        for pos in positions + positions[:3]:  # in order, then again from the start
            assert reader(pos) == _reference_in_echoed_text(code, pos), (code, pos)
