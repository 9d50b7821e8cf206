"""Model names: safe slugs or a clear refusal, never a path outside the output root."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from ascend_migrate.skillgen.errors import SkillGenError
from ascend_migrate.skillgen.naming import display_name, model_slug

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@pytest.mark.parametrize(
    "name, slug",
    [
        ("resnet50", "resnet50"),
        ("ResNet-50", "resnet-50"),
        ("Qwen2.5-7B-Instruct", "qwen2-5-7b-instruct"),
        ("  bert base  ", "bert-base"),
        ("yolo_v5__s", "yolo-v5-s"),
        ("Café-Net", "cafe-net"),
        ("ＳＷＩＮ", "swin"),  # full-width letters fold to ASCII
        ("模型-v2", "v2"),
        ("a:b*c?d", "a-b-c-d"),
        ("x" * 64, "x" * 64),
    ],
)
def test_slugs(name, slug):
    assert model_slug(name) == slug


@pytest.mark.parametrize(
    "name, reason",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("../../x", "looks like a path"),
        ("a/b", "looks like a path"),
        ("a\\b", "looks like a path"),
        ("..", "looks like a path"),
        (".", "looks like a path"),
        (".hidden", "must not start with '.'"),
        ("~root", "must not start with '~'"),
        ("模型", "no ASCII letters or digits"),
        ("---", "no ASCII letters or digits"),
        ("x" * 65, "limited to 64"),
        ("y" * 500, "at most 200"),
        ("bad\x00name", "control"),
        ("line\nbreak", "control"),
        ("zero\u200bwidth", "control"),
        ("claude-helper", "reserved word"),
        ("Anthropic LM", "reserved word"),
    ],
)
def test_refusals(name, reason):
    with pytest.raises(SkillGenError) as info:
        model_slug(name)
    assert reason in str(info.value)
    assert info.value.exit_code == 2


def test_non_string_is_refused():
    with pytest.raises(SkillGenError):
        model_slug(None)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=120))
def test_any_text_gives_a_valid_slug_or_a_refusal(name):
    try:
        slug = model_slug(name)
    except SkillGenError as exc:
        assert str(exc)
        return
    assert SLUG.match(slug) and len(slug) <= 64
    assert "claude" not in slug and "anthropic" not in slug


def test_display_name_is_single_line_and_inert():
    assert display_name("Evil `name` | <b>\n# heading") == "Evil name b heading"
