"""The indented JSON writer is `json.dumps(obj, indent=2, ensure_ascii=False)`, byte for byte."""
from __future__ import annotations

import json
from collections import OrderedDict
from enum import IntEnum

from hypothesis import given, settings, strategies as st

from ascend_migrate.report import json_text

SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
           | st.text())  # every code point, lone surrogates and line breaks included
KEYS = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4)
                      | st.tuples(inner, inner), max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.integers(min_value=0, max_value=3))
def test_same_text_as_the_standard_library(value, level):
    expected = json.dumps(value, indent=2, ensure_ascii=False)
    assert json_text.dumps(value, level) == expected.replace("\n", "\n" + "  " * level)


class Level(IntEnum):
    HIGH = 2


def test_values_it_does_not_write_itself_go_to_the_standard_library():
    for value in ({"a": Level.HIGH}, [OrderedDict(b=1)], {"x": 10 ** 400}, {(1, 2): 3}):
        try:
            expected = json.dumps(value, indent=2, ensure_ascii=False)
        except TypeError:
            try:
                json_text.dumps(value)
            except TypeError:
                continue
            raise AssertionError(f"{value!r} was written although json.dumps refuses it")
        assert json_text.dumps(value) == expected


def test_a_report_sized_document():
    report = {"findings": [{"rule": f"CU{i:03d}", "line": i, "fixes": [{"edits": [[i, 0]], "text": "é\n\"x\""}],
                            "score": i / 7, "none": None, "ok": i % 2 == 0} for i in range(300)], "empty": {}, "list": []}
    assert json_text.dumps(report) == json.dumps(report, indent=2, ensure_ascii=False)


def test_a_report_string_that_spells_the_findings_stand_in_is_written_the_plain_way():
    from ascend_migrate.report.json_report import _HOLE, report_text, skeleton_text

    report = {"schema": "s", "findings": [{"rule": "DV001", "line": 1}], "notes": [{"path": "a", "reason": _HOLE}]}
    assert skeleton_text(report, "[]") is None
    assert report_text(report) == json.dumps(report, indent=2, ensure_ascii=False) + "\n"
