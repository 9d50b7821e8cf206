"""Diagnose signatures run in a linear form that matches exactly the lines the written one does."""
from __future__ import annotations

import re

import pytest

from ascend_migrate.diagnose.kb import WRITTEN, default_kb, linear_form

LINES = [
    "EH9999: init env failed", "xx EH9999 EH9999 yy init env failed", "init env failed EH9999",
    "[ERROR] HCCL hccl socket timeout after 1800s", "hccl " * 50, "float64 double unsupported on npu",
    "double unsupported", "unsupported float64 npu", "Free memory on device 3 is less than desired",
    "libtorch_npu.so: undefined symbol: _Z3foo", "/usr/local/Ascend/x/liba.so.1: undefined symbol: x",
    "/usr/lib/torch_npu/lib/libtorch_npu.so: undefined symbol: y", "torch_npu 2.1 is incompatible with CANN",
]


@pytest.mark.parametrize("written", sorted({WRITTEN[p.pattern] for s in default_kb().signatures for p in s.patterns
                                            if p.pattern in WRITTEN}))
def test_linear_form_matches_the_same_lines(written):
    linear = re.compile(linear_form(written))
    plain = re.compile(written)
    sig = next(s for s in default_kb().signatures if any(WRITTEN.get(p.pattern) == written for p in s.patterns))
    for line in [*LINES, sig.example or ""]:
        assert bool(linear.search(line)) == bool(plain.search(line)), (written, line)


def test_linear_form_shapes():
    assert linear_form("A.*B") == "^(?:(?!A).)*(?P<_sig>A(?:(?!B).)*B)"
    assert linear_form("(?i)a|b.*c") == "(?i)a|b.*c"  # a top-level alternation is left alone
    assert linear_form("no wildcard") == "no wildcard"
    m = re.search(linear_form(r"(?P<lib>\w+\.so).*missing"), "x: libfoo.so is missing")
    assert m and m.group("lib") == "libfoo.so" and m.group("_sig") == "libfoo.so is missing"
