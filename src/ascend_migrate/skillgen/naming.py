"""Turn a user-supplied model name into a safe skill folder name.

A model skill lives at `<out-root>/<slug>/SKILL.md`, and the Agent Skills spec requires the
frontmatter `name` to equal that folder name, so the slug must satisfy both the filesystem
and the spec: 1-64 characters of `a-z`, `0-9` and single hyphens, no leading or trailing
hyphen. Names that look like paths are refused outright rather than "cleaned": mapping
`../../x` to `x` would silently target another model's skill.
"""
from __future__ import annotations

import re
import unicodedata

from ascend_migrate.skillgen.errors import SkillGenError

MAX_SLUG_LENGTH = 64
MAX_NAME_LENGTH = 200
RESERVED_WORDS = ("claude", "anthropic")
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def model_slug(name: object) -> str:
    """Return the folder/skill name for `name`, or raise SkillGenError saying why not."""
    if not isinstance(name, str):
        raise SkillGenError("model name must be a string")
    stripped = name.strip()
    if not stripped:
        raise SkillGenError("model name is empty; pass --model NAME (for example --model resnet50)")
    if len(stripped) > MAX_NAME_LENGTH:
        raise SkillGenError(
            f"model name is {len(stripped)} characters long; use at most {MAX_NAME_LENGTH}"
        )
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") for ch in stripped):
        raise SkillGenError("model name contains control or invisible characters")
    if "/" in stripped or "\\" in stripped or stripped in (".", ".."):
        raise SkillGenError(
            f"model name {stripped!r} looks like a path; pass a plain name such as 'llama-7b'"
        )
    if stripped.startswith("."):
        raise SkillGenError(f"model name {stripped!r} must not start with '.'")
    if stripped.startswith("~"):
        raise SkillGenError(f"model name {stripped!r} must not start with '~'")

    # Fold compatibility forms and accents ("ｑｗｅｎ" -> "qwen", "café" -> "cafe"), then keep
    # ASCII letters and digits; every other run of characters becomes one hyphen.
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", stripped))
    ascii_only = "".join(ch for ch in folded if not unicodedata.combining(ch))
    ascii_only = ascii_only.encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_only).strip("-")
    if not slug:
        raise SkillGenError(
            f"model name {stripped!r} has no ASCII letters or digits to build a skill name from; "
            "pass an ASCII name such as 'bert-base'"
        )
    if len(slug) > MAX_SLUG_LENGTH:
        raise SkillGenError(
            f"model name gives the skill name {slug[:20]}... ({len(slug)} characters); "
            f"skill names are limited to {MAX_SLUG_LENGTH}: pass a shorter --model"
        )
    for word in RESERVED_WORDS:
        if word in slug:
            raise SkillGenError(f"skill names must not contain the reserved word {word!r}")
    assert SLUG_RE.match(slug), slug
    return slug


def display_name(name: str, limit: int = 80) -> str:
    """A one-line, Markdown-inert version of the user's name for headings and prose."""
    text = unicodedata.normalize("NFKC", name.strip())
    text = "".join(ch for ch in text if ch.isalnum() or ch in " ._+-()")
    text = re.sub(r"\s+", " ", text).strip()
    return text[:limit] or model_slug(name)
