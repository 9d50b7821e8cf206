"""Skill text: links that resolve inside the skill folder, and manual-fix guidance written once.

The how of each manual fix (replacement APIs, layouts, variable mappings) lives in
references/manual-fixes.md; the cuda-to-npu skill states the judgement calls and links there.
A second copy in the skill drifts: section 7 once said configs were edited by hand after the
migrator had learned to rewrite them.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SKILL_FILES = sorted((REPO / "skills").glob("*/SKILL.md")) + sorted((REPO / "skills").glob("*/references/*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.S)
# Names on the Ascend side of a fix: what a reader needs only while applying it.
FIX_NAMES = re.compile(
    r"\b(?:torch_npu(?:\.\w+)+|torch\.npu(?:\.\w+)+|npu_\w+|HCCL_\w+|ASCEND_\w+|NpuExtension|"
    r"scaled_dot_product_attention|BSND|BNSD|allow_hf32|is_bf16_supported|vector_core_num|FORCE_CUDA)\b")


def github_slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {github_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.M)}


@pytest.mark.parametrize("doc", SKILL_FILES, ids=lambda p: str(p.relative_to(REPO / "skills")))
def test_links_resolve_inside_the_skill(doc):
    skill_root = doc.parent if doc.name == "SKILL.md" else doc.parent.parent
    text = FENCE.sub("", doc.read_text(encoding="utf-8"))
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        file_part, _, fragment = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        assert dest.is_file(), f"{doc.name}: {target} does not exist"
        assert dest.is_relative_to(skill_root.resolve()), f"{doc.name}: {target} leaves the skill folder"
        if fragment:
            assert fragment in anchors(dest), f"{doc.name}: no heading for #{fragment} in {dest.name}"


def test_slug_matches_the_generated_contents():
    """The slug rule above is the one the generated tables of contents use."""
    generated = (REPO / "skills" / "cuda-to-npu" / "references" / "manual-fixes.md").read_text(encoding="utf-8")
    toc = re.findall(r"^- \[(.+)\]\(#([^)]+)\)$", generated, re.M)
    assert len(toc) >= 5
    assert all(github_slug(title) == slug for title, slug in toc)


def test_manual_fix_guidance_is_written_once():
    fixes = (REPO / "references" / "manual-fixes.md").read_text(encoding="utf-8")
    names = set(FIX_NAMES.findall(fixes))
    assert len(names) >= 10, "manual-fixes.md names too few fixes: the check would mean nothing"
    skill = (REPO / "skills" / "cuda-to-npu" / "SKILL.md").read_text(encoding="utf-8")
    prose = LINK.sub("", skill)  # link targets name sections, not fixes
    repeated = sorted(n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", prose))
    assert repeated == [], f"the skill repeats manual-fix details that live in manual-fixes.md: {repeated}"


def test_every_manual_fix_section_is_reachable_from_the_skill():
    fixes = REPO / "skills" / "cuda-to-npu" / "references" / "manual-fixes.md"
    sections = {a for a in anchors(fixes) if re.match(r"\d+-", a)}
    skill = (REPO / "skills" / "cuda-to-npu" / "SKILL.md").read_text(encoding="utf-8")
    linked = {t.partition("#")[2] for t in LINK.findall(skill) if t.startswith("references/manual-fixes.md#")}
    # sections 1 and 8 share a row; every other section has its own link
    assert sections - linked <= {"8-fp64-and-tf32"}, sorted(sections - linked)
