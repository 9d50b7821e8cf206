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
# Every script a shipped skill runs. Some are written by other areas of the toolkit; all must
# exist before release, so a missing one fails here.
EXPECTED_SCRIPTS = {
    "check_npu_basics.py", "scan_cuda_apis.py", "migrate_to_npu.py", "run_validation.py",
    "diagnose_npu_error.py", "setup_npu_env.py", "generate_model_skill.py", "replay_model_skill.py",
}
SCRIPT_RE = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}/scripts/([A-Za-z0-9_.-]+\.py)")


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


def test_scripts_referenced_by_skills_exist():
    referenced = set()
    for name in SKILLS:
        referenced |= set(SCRIPT_RE.findall(skill_text(name)))
    assert referenced == EXPECTED_SCRIPTS, referenced ^ EXPECTED_SCRIPTS
    missing = sorted(s for s in referenced if not (REPO / "scripts" / s).is_file())
    assert not missing, f"scripts referenced by skills but missing from scripts/: {missing}"


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
        links |= set(re.findall(r"\]\(\.\./\.\./references/([a-z0-9-]+\.md)\)", skill_text(name)))
    assert {"rules.md", "validation-checklist.md", "troubleshooting.md"} <= links


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
