"""Run a SKILL.md's shell blocks the way an agent in Claude Code does: literally, in order.

Claude Code substitutes `${CLAUDE_SKILL_DIR}` and `${CLAUDE_PLUGIN_ROOT}` in a skill's body and
nothing else; each Bash call is a fresh shell whose working directory carries over but whose
environment changes do not. `run_block` reproduces exactly that, so a step that only works
with knowledge the skill does not state fails here.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from markdown_it import MarkdownIt

SHELLS = {"bash", "sh", "shell", "console"}


@dataclass(frozen=True)
class Block:
    heading: str  # the nearest heading above the block
    code: str
    line: int

    def __str__(self) -> str:
        return f"[{self.heading}] line {self.line}:\n{self.code}"


def shell_blocks(skill_md: Path) -> list[Block]:
    """The fenced shell blocks of a SKILL.md, in document order, with their section."""
    text = skill_md.read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").parse(text)
    heading, blocks = "", []
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            heading = tokens[index + 1].content
        elif token.type == "fence" and token.info.strip().split(" ")[0].lower() in SHELLS:
            blocks.append(Block(heading, token.content, (token.map[0] + 1) if token.map else 0))
    return blocks


def substitute(code: str, skill_dir: Path, plugin_root: Optional[Path] = None) -> str:
    """What Claude Code does to a skill body before the agent reads it."""
    code = code.replace("${CLAUDE_SKILL_DIR}", str(skill_dir))
    if plugin_root is not None:
        code = code.replace("${CLAUDE_PLUGIN_ROOT}", str(plugin_root))
    return code


def agent_env(home: Path, extra: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """A login-like environment for a new user: its own HOME, the system PATH, no venv active
    and none of the test run's Python settings."""
    env = {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "NO_COLOR": "1",
    }
    # The system's python3 may live elsewhere (pyenv): keep the directory of the first one.
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and (Path(folder) / "python3").exists() and ".venv" not in folder and "/venv" not in folder:
            env["PATH"] = f"{folder}:{env['PATH']}"
            break
    env.update(extra or {})
    return env


def run_block(block: Block, *, cwd: Path, env: Mapping[str, str], skill_dir: Path,
              plugin_root: Optional[Path] = None, timeout: float = 900) -> subprocess.CompletedProcess:
    """One Bash tool call: a fresh non-interactive bash, stopping at the first failing command
    (an agent reads each command's result before the next; a silent failure would be a lie).
    Pipes keep bash's default: the last command's status, as in the Bash tool."""
    code = substitute(block.code, skill_dir, plugin_root)
    return subprocess.run(["bash", "-e", "-c", code], cwd=cwd, env=dict(env),
                          capture_output=True, text=True, timeout=timeout)
