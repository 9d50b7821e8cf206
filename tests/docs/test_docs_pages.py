"""The README stays a landing page and the docs pages stay findable and honest.

The README is short, names the test command CI runs and the build needs of the emulated npu;
every docs page opens with a worked example and says what it does not cover; every relative link
in the README and the docs resolves, anchors included.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
TOPIC_PAGES = [p for p in PAGES if p.name != "README.md"]

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def _links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = "\n".join(line for line in text.splitlines() if not line.startswith("    "))  # code blocks
    return [m.group(1) for m in LINK.finditer(text)]


def test_readme_is_a_landing_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move detail to docs/"


def test_readme_names_the_ci_test_command_and_ci_runs_it():
    text = README.read_text(encoding="utf-8")
    assert "make test" in text
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert [line for line in ci.splitlines() if line and not line.startswith(("#", "set ", "cd "))] == ["make test"]


def test_readme_says_how_to_install_the_emulated_npus_build_needs():
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "C++ compiler" in text and "Python's headers" in text
    for package in ("g++", "python3-dev", "gcc-c++", "python3-devel", "ninja"):
        assert package in text, package


def test_every_page_is_listed_in_the_docs_index_and_the_readme():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    for page in TOPIC_PAGES:
        assert f"({page.name})" in index, f"docs/README.md does not list {page.name}"
        assert f"(docs/{page.name})" in readme, f"README.md does not link docs/{page.name}"


@pytest.mark.parametrize("page", TOPIC_PAGES, ids=[p.name for p in TOPIC_PAGES])
def test_page_opens_with_a_worked_example_and_says_what_it_leaves_out(page):
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# "), "a page starts with its title"
    first_section = []
    for line in lines[1:]:
        if line.startswith("## "):
            break
        first_section.append(line)
    example = [line for line in first_section if line.startswith("    ")]
    assert example, "no example before the first section"
    assert any(re.match(r"    (\$ )?(ascend-migrate|make|python|/plugin|NPU_STANDIN_AUTOCAST=0 ascend-migrate)", line)
               for line in example), "the opening example runs no command"
    assert any(line == "## Not covered" for line in lines), "no 'Not covered' section"


@pytest.mark.parametrize("page", [README, *PAGES], ids=["README.md", *[f"docs/{p.name}" for p in PAGES]])
def test_relative_links_resolve(page):
    for target in _links(page):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: {target} does not exist"
        if anchor and resolved.suffix == ".md":
            assert anchor in _anchors(resolved), f"{page.name}: no heading for #{anchor} in {resolved.name}"
