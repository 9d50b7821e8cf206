"""Our own lints over the shipped SKILL.md files, and proof that the lints catch problems."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from ascend_migrate.skillgen.lint import lint_skill_dir, lint_skill_text, split_frontmatter

REPO = Path(__file__).resolve().parents[2]
SKILLS = ("cuda-to-npu", "npu-training", "npu-troubleshooting")
# The one install step every shipped skill starts with: the toolkit wheel it carries.
WHEEL = "tools/ascend_migrate-{version}-py3-none-any.whl"


def skill_text(name: str) -> str:
    return (REPO / "skills" / name / "SKILL.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", SKILLS)
def test_skill_passes_all_lints(name):
    issues = lint_skill_dir(REPO / "skills" / name, root=REPO, plugin_root=REPO)
    assert not issues, "\n".join(map(str, issues))


@pytest.mark.parametrize("name", SKILLS)
def test_frontmatter(name):
    front, body, _ = split_frontmatter(skill_text(name))
    meta = yaml.safe_load(front)
    assert meta["name"] == name
    description = meta["description"]
    assert 100 <= len(description) <= 1024
    assert "Use when" in description
    assert "Do not use" in description  # boundaries against the sibling skills
    assert set(meta) <= {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
    assert body.strip()


@pytest.mark.parametrize("name", SKILLS)
def test_length_is_lean(name):
    lines = skill_text(name).count("\n")
    assert 60 <= lines < 500


@pytest.mark.parametrize("name", SKILLS)
def test_skill_runs_only_what_travels_with_it(name):
    """No shipped skill reaches outside its folder for tools: `${CLAUDE_PLUGIN_ROOT}` is gone
    (a skill copied alone has no plugin root), and the tool comes from the skill's own wheel,
    installed into a virtual environment, never into the system Python."""
    from ascend_migrate import __version__

    text = skill_text(name)
    assert "CLAUDE_PLUGIN_ROOT" not in text
    wheel = WHEEL.format(version=__version__)
    install = f'-m pip install "${{CLAUDE_SKILL_DIR}}/{wheel}"'
    assert install in text
    assert (REPO / "skills" / name / wheel).is_file()
    assert "python3 -m venv" in text.split(install)[0]


@pytest.mark.parametrize("name", SKILLS)
def test_skill_lints_clean_as_a_standalone_folder(name, tmp_path):
    """The same lints with the skill copied alone: nothing may point into the plugin."""
    import shutil

    copy = tmp_path / name
    shutil.copytree(REPO / "skills" / name, copy)
    issues = lint_skill_dir(copy, root=copy, plugin_root=None)
    assert not issues, "\n".join(map(str, issues))


def test_reference_docs_use_no_substitution_variables():
    """Claude Code fills `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_SKILL_DIR}` in SKILL.md bodies
    only; in a reference file an agent reads them literally and the command fails."""
    offenders = []
    for doc in sorted([*(REPO / "references").glob("*.md"), *(REPO / "skills").glob("*/references/*.md")]):
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            if "${CLAUDE_PLUGIN_ROOT}" in line or "${CLAUDE_SKILL_DIR}" in line:
                offenders.append(f"{doc.relative_to(REPO)}:{number}")
    assert not offenders, offenders


def test_python_blocks_exist_and_compile():
    md = MarkdownIt("commonmark")
    compiled = 0
    for name in SKILLS:
        for token in md.parse(skill_text(name)):
            if token.type == "fence" and token.info.strip().split(" ")[0] == "python":
                compile(token.content, f"{name}/SKILL.md", "exec")
                compiled += 1
    assert compiled >= 4  # the training skill's AMP, HF32, DDP and profiler examples


def test_skills_point_at_reference_docs():
    links = set()
    for name in SKILLS:
        links |= set(re.findall(r"\]\(references/([a-z0-9-]+\.md)\)", skill_text(name)))
    assert {"rules.md", "validation-checklist.md", "troubleshooting.md"} <= links


LINK_RE = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("name", SKILLS)
def test_skill_folder_is_self_contained(name, tmp_path):
    """Copied on its own, a skill keeps every document it links to: links stay inside the
    folder, one level deep, and each target exists there."""
    import shutil

    from ascend_migrate.knowledge.docs import SKILL_REFERENCES, skill_reference_targets

    copy = tmp_path / name
    shutil.copytree(REPO / "skills" / name, copy)
    docs = [copy / "SKILL.md", *sorted((copy / "references").glob("*.md"))]
    targets = set()
    for doc in docs:
        for target in LINK_RE.findall(doc.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            assert ".." not in target.split("/"), (doc.name, target)
            resolved = (doc.parent / target).resolve()
            assert resolved.is_file(), (doc.name, target)
            assert resolved.relative_to(copy).parts[:1] in ((), ("references",), ("SKILL.md",)), target
            assert len(resolved.relative_to(copy).parts) <= 2, target
            targets.add(resolved.relative_to(copy).as_posix())
    # every shared reference the skill carries is generated, not a hand-made copy
    generated = {t.split("/", 2)[2] for t in skill_reference_targets() if t.startswith(f"skills/{name}/")}
    shared = {p.name for p in (REPO / "references").glob("*.md")}
    carried = {p.name for p in (copy / "references").glob("*.md")}
    assert carried & shared == set(SKILL_REFERENCES[name])
    assert generated == {f"references/{n}" for n in SKILL_REFERENCES[name]}
    assert {t for t in targets if t.startswith("references/")} <= {f"references/{n}" for n in carried}
    for ref in generated:
        text = (copy / ref).read_text(encoding="utf-8")
        assert text.startswith("<!-- Generated by `ascend-migrate docs --write`")
        if len(text.splitlines()) > 100:
            assert "\n## Contents\n" in text, ref


# ---------------------------------------------------------------- the lints catch problems

GOOD = """---
name: demo
description: Does a thing. Use when the user asks for the thing.
---

# Demo

See [ref](ref.md). Run `python ${CLAUDE_PLUGIN_ROOT}/scripts/tool.py`.

```python
print("ok")
```
"""


def lint(text, *, links=("ref.md",), plugin=("scripts/tool.py",), folder="demo"):
    return [
        i.message
        for i in lint_skill_text(
            text, path="demo/SKILL.md", folder_name=folder,
            link_exists=lambda t: t in links,
            plugin_path_exists=(lambda rel: rel in plugin) if plugin is not None else None,
        )
    ]


def test_lint_accepts_good_skill():
    assert lint(GOOD) == []


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda t: t.replace("name: demo", "name: Demo_Skill"), "lowercase"),
        (lambda t: t.replace("name: demo", "name: claude-demo"), "reserved word"),
        (lambda t: t.replace("name: demo", "name: other"), "does not match its folder"),
        (lambda t: t.replace("Does a thing.", "Maps CUDA -> NPU."), "'<' or '>'"),
        (lambda t: t.replace("Does a thing. Use when the user asks for the thing.", "x" * 1100), "limit is 1024"),
        (lambda t: t.replace("Use when the user asks for the thing.", "Handy."), "Use when"),
        (lambda t: t.replace("---\n\n# Demo", "version: 1.0\n---\n\n# Demo"), "outside the Agent Skills spec"),
        (lambda t: t.replace("description: Does", "description: 'Does"), "not valid YAML"),
        (lambda t: t.replace("(ref.md)", "(Ref.md)"), "does not exist"),
        (lambda t: t.replace("(ref.md)", "(/etc/passwd)"), "absolute"),
        (lambda t: t.replace("scripts/tool.py", "scripts/missing.py"), "does not exist in the plugin"),
        (lambda t: t + "Install `${CLAUDE_SKILL_DIR}/tools/gone.whl`.\n", "does not exist in the skill folder"),
        (lambda t: t + "Install `${CLAUDE_SKILL_DIR}/../ref.md`.\n", "does not exist in the skill folder"),
        (lambda t: t.replace('print("ok")', 'print("ok"'), "does not compile"),
        (lambda t: t + "line\n" * 500, "under 500"),
        (lambda t: t.split("---\n", 2)[2], "no YAML frontmatter"),
    ],
)
def test_lint_rejects(mutate, expected):
    messages = lint(mutate(GOOD))
    assert any(expected in m for m in messages), messages


def test_lint_rejects_plugin_paths_outside_a_plugin():
    messages = lint(GOOD, plugin=None)
    assert any("not inside a plugin" in m for m in messages)


def test_lint_dir_checks_link_case_on_disk(tmp_path):
    skill = tmp_path / "demo"
    skill.mkdir()
    (skill / "Ref.md").write_text("x\n")
    (skill / "SKILL.md").write_text(GOOD.replace("Run `python ${CLAUDE_PLUGIN_ROOT}/scripts/tool.py`.", ""))
    messages = [i.message for i in lint_skill_dir(skill)]
    assert any("ref.md" in m and "does not exist" in m for m in messages)
    (skill / "Ref.md").rename(skill / "ref.md")
    assert lint_skill_dir(skill) == []


def test_lint_dir_rejects_links_escaping_the_root(tmp_path):
    skill = tmp_path / "root" / "demo"
    skill.mkdir(parents=True)
    (tmp_path / "outside.md").write_text("x\n")
    text = GOOD.replace("(ref.md)", "(../../outside.md)").replace(
        "Run `python ${CLAUDE_PLUGIN_ROOT}/scripts/tool.py`.", "")
    (skill / "SKILL.md").write_text(text)
    messages = [i.message for i in lint_skill_dir(skill, root=tmp_path / "root")]
    assert any("outside.md" in m for m in messages)
