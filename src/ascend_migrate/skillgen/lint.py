"""Checks every SKILL.md we ship or generate must pass.

They cover what the reference validators leave out (links and script paths resolve,
case-sensitively; Python code blocks compile; the file stays under 500 lines) and repeat the
frontmatter rules of the strictest of them (name format, reserved words, description length,
no angle brackets, only the six spec fields), so a problem shows up with a line number before
an external tool is run.
"""
from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import yaml
from markdown_it import MarkdownIt

MAX_LINES = 500
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
ALLOWED_FIELDS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
RESERVED_WORDS = ("claude", "anthropic")
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
PLUGIN_REF_RE = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}/([A-Za-z0-9_.\-/]+)")
SKILL_REF_RE = re.compile(r"\$\{CLAUDE_SKILL_DIR\}/([A-Za-z0-9_.\-/]+)")
PYTHON_INFOS = {"python", "py", "python3"}


@dataclass(frozen=True)
class LintIssue:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def split_frontmatter(text: str) -> tuple[Optional[str], str, int]:
    """Return (frontmatter text or None, body, 1-based line number where the body starts)."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return None, text, 1
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    return None, text, 1


def _exists_case_sensitive(base: Path, relative: str) -> bool:
    current = base
    for part in [p for p in relative.split("/") if p and p != "."]:
        if part == "..":
            current = current.parent
            continue
        try:
            entries = os.listdir(current)
        except OSError:
            return False
        if part not in entries:
            return False
        current = current / part
    return current.exists()


def lint_skill_text(
    text: str,
    *,
    path: str,
    folder_name: str,
    link_exists: Callable[[str], bool],
    plugin_path_exists: Optional[Callable[[str], bool]],
) -> list[LintIssue]:
    """Lint one SKILL.md given as text.

    `link_exists(target)` decides whether a relative link target (POSIX, relative to the
    skill folder, fragment removed) resolves. `plugin_path_exists(rel)` does the same for
    `${CLAUDE_PLUGIN_ROOT}/rel`; pass None for a skill that lives outside a plugin, where any
    such reference is an error.
    """
    issues: list[LintIssue] = []

    def add(line: int, message: str) -> None:
        issues.append(LintIssue(path, line, message))

    line_count = len(text.splitlines())
    if line_count >= MAX_LINES:
        add(line_count, f"{line_count} lines; keep SKILL.md under {MAX_LINES}")
    if "\r" in text:
        add(1, "use LF line endings")

    front, body, body_line = split_frontmatter(text)
    if front is None:
        add(1, "no YAML frontmatter block (--- ... ---) at the top")
        meta: dict = {}
    else:
        try:
            loaded = yaml.safe_load(front)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            add(1 + (mark.line + 1 if mark else 0), f"frontmatter is not valid YAML: {exc}")
            loaded = {}
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            add(2, "frontmatter must be a mapping")
            loaded = {}
        meta = loaded
    if front is not None:
        _check_frontmatter(meta, folder_name, add)

    md = MarkdownIt("commonmark")
    tokens = md.parse(body)
    for token in tokens:
        line = body_line + (token.map[0] if token.map else 0)
        if token.type == "fence":
            info = (token.info or "").strip().split(" ")[0].lower()
            if info in PYTHON_INFOS:
                try:
                    compile(token.content, f"{path}:{line}", "exec")
                except SyntaxError as exc:
                    add(line + (exc.lineno or 0), f"python block does not compile: {exc.msg}")
        if token.type == "inline" and token.children:
            for child in token.children:
                if child.type in ("link_open", "image"):
                    attr = "href" if child.type == "link_open" else "src"
                    target = str(child.attrGet(attr) or "")
                    problem = _check_link(target, link_exists)
                    if problem:
                        add(line, problem)

    for number, raw in enumerate(text.splitlines(), start=1):
        for match in SKILL_REF_RE.finditer(raw):
            # Files the skill's commands use must travel with the skill folder.
            rel = match.group(1).rstrip(".")
            if ".." in rel.split("/") or not link_exists(rel):
                add(number, f"${{CLAUDE_SKILL_DIR}}/{rel} does not exist in the skill folder")
        for match in PLUGIN_REF_RE.finditer(raw):
            rel = match.group(1).rstrip(".")
            if plugin_path_exists is None:
                add(number, f"${{CLAUDE_PLUGIN_ROOT}}/{rel}: this skill is not inside a plugin")
            elif not plugin_path_exists(rel):
                add(number, f"${{CLAUDE_PLUGIN_ROOT}}/{rel} does not exist in the plugin")
    return issues


def _check_frontmatter(meta: dict, folder_name: str, add: Callable[[int, str], None]) -> None:
    extra = sorted(set(map(str, meta)) - ALLOWED_FIELDS)
    if extra:
        add(2, f"fields outside the Agent Skills spec: {', '.join(extra)}")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        add(2, "frontmatter 'name' is missing or not a string")
    else:
        if len(name) > MAX_NAME:
            add(2, f"name is {len(name)} characters; the limit is {MAX_NAME}")
        if not NAME_RE.match(name):
            add(2, f"name {name!r} must be lowercase letters, digits and single hyphens")
        if name != folder_name:
            add(2, f"name {name!r} does not match its folder {folder_name!r}")
        for word in RESERVED_WORDS:
            if word in name:
                add(2, f"name must not contain the reserved word {word!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        add(2, "frontmatter 'description' is missing or empty")
    else:
        if len(description) > MAX_DESCRIPTION:
            add(2, f"description is {len(description)} characters; the limit is {MAX_DESCRIPTION}")
        if "<" in description or ">" in description:
            add(2, "description must not contain '<' or '>'")
        if "use when" not in description.lower():
            add(2, "description should say when to use the skill ('Use when ...')")
    compatibility = meta.get("compatibility")
    if compatibility is not None:
        if not isinstance(compatibility, str):
            add(2, "compatibility must be a string")
        elif len(compatibility) > MAX_COMPATIBILITY:
            add(2, f"compatibility is {len(compatibility)} characters; the limit is {MAX_COMPATIBILITY}")
    metadata = meta.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            add(2, "metadata must be a mapping")
        elif any(not isinstance(v, str) for v in metadata.values()):
            add(2, "metadata values must be strings (quote numbers and versions)")
    tools = meta.get("allowed-tools")
    if tools is not None and not isinstance(tools, str):
        add(2, "allowed-tools must be a space-separated string")


def _check_link(target: str, link_exists: Callable[[str], bool]) -> Optional[str]:
    if not target or target.startswith("#"):
        return None
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto:, ...
        return None
    if target.startswith("${"):
        return None
    clean = target.split("#", 1)[0].split("?", 1)[0]
    if clean.startswith("/"):
        return f"link {target!r} is absolute; use a path relative to the skill folder"
    if not link_exists(clean):
        return f"link target {clean!r} does not exist (checked case-sensitively)"
    return None


def lint_skill_dir(
    skill_dir: Path,
    *,
    root: Optional[Path] = None,
    plugin_root: Optional[Path] = None,
) -> list[LintIssue]:
    """Lint `skill_dir/SKILL.md` on disk.

    Links must resolve inside `root` (default: the skill folder itself). `plugin_root` is the
    plugin the skill ships in, or None for a standalone skill.
    """
    skill_dir = skill_dir.resolve()
    skill_file = skill_dir / "SKILL.md"
    try:
        text = skill_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [LintIssue(str(skill_file), 1, f"cannot read: {exc}")]
    bound = (root or skill_dir).resolve()

    def link_exists(target: str) -> bool:
        joined = posixpath.normpath(posixpath.join(skill_dir.as_posix(), target))
        if not (joined == bound.as_posix() or joined.startswith(bound.as_posix() + "/")):
            return False
        return _exists_case_sensitive(skill_dir, target)

    plugin_exists = None
    if plugin_root is not None:
        def plugin_exists(rel: str) -> bool:
            return _exists_case_sensitive(plugin_root.resolve(), rel)

    return lint_skill_text(
        text,
        path=str(skill_file),
        folder_name=skill_dir.name,
        link_exists=link_exists,
        plugin_path_exists=plugin_exists,
    )
