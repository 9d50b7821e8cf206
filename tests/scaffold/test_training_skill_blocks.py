"""Every Python block of the npu-training skill (SKILL.md and its references) runs on a CPU
torch, each in a fresh namespace and working directory, in one interpreter."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from markdown_it import MarkdownIt
import pytest

pytestmark = pytest.mark.needs_torch  # runs torch

SKILL = Path(__file__).resolve().parents[2] / "skills" / "npu-training"
PYTHON_INFOS = {"python", "py", "python3"}

RUNNER = textwrap.dedent("""
    import json, os, sys, tempfile, traceback
    blocks = json.load(open(sys.argv[1], encoding="utf-8"))
    failed = 0
    for block in blocks:
        where = f"{block['file']}:{block['line']}"
        cwd = os.getcwd()
        os.chdir(tempfile.mkdtemp(prefix="block-"))
        try:
            exec(compile(block["code"], where, "exec"), {"__name__": "__main__"})
            print("ok", where, flush=True)
        except BaseException:
            failed += 1
            print("FAILED", where, flush=True)
            traceback.print_exc(file=sys.stdout)
        finally:
            os.chdir(cwd)
    sys.exit(1 if failed else 0)
""")


def python_blocks() -> list[dict]:
    md = MarkdownIt("commonmark")
    blocks = []
    for path in [SKILL / "SKILL.md", *sorted((SKILL / "references").glob("*.md"))]:
        for token in md.parse(path.read_text(encoding="utf-8")):
            if token.type == "fence" and token.info.strip().split(" ")[0] in PYTHON_INFOS:
                blocks.append({"file": str(path.relative_to(SKILL)), "line": token.map[0] + 1,
                               "code": token.content})
    return blocks


def test_skill_has_blocks_in_the_skill_and_its_references():
    files = {b["file"] for b in python_blocks()}
    assert "SKILL.md" in files
    assert {"references/distributed.md", "references/checkpoints.md",
            "references/validation-entry.md", "references/timing-and-memory.md"} <= files


def test_every_python_block_runs_on_cpu(tmp_path):
    blocks = python_blocks()
    (tmp_path / "blocks.json").write_text(json.dumps(blocks), encoding="utf-8")
    (tmp_path / "runner.py").write_text(RUNNER, encoding="utf-8")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, str(tmp_path / "runner.py"), str(tmp_path / "blocks.json")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    ran = [line for line in proc.stdout.splitlines() if line.startswith("ok ")]
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert len(ran) == len(blocks) >= 10, proc.stdout
