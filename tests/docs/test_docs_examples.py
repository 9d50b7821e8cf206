"""The commands the README's tour and each docs page's first example show are run, and what they
show is what they print.

The convention the pages follow (docs/README.md states it for writers):

- a page's first example is its first code block (indented by four spaces); the README's tour is
  every code block under "## A one-minute tour";
- a line that starts with `$ ` is a command; the lines after it, up to the next command, are what
  it prints (a line may be cut short with `...`, and `...` alone skips lines);
- a command exits 0 unless its comment says `exits N`;
- a command that needs an NPU or a network says so in its comment (`on an NPU host`,
  `needs a network`) and is not run here; the test checks that every such command is marked
  and that nothing else is;
- `$ # make the four manual edits ... in DIR/` stands for the edits examples/cifar_trainer's
  README lists, which the test makes in DIR; any other `$ #` line is a plain comment;
- `make` commands are the checkout's own targets and run in the checkout.

Everything runs on the CPU in one workspace that holds a copy of examples/cifar_trainer (the
checked-in example is never written), with a temporary HOME: the README's tour first, then each
page in name order, so a page may continue from the tour's ports (port-agnostic, port-transfer,
golden.pt). A command that already ran with the same inputs (the folder it runs in, unless that
is the workspace root, and every existing path it names, reports aside) is not run twice: its
recorded exit status and output are checked again. Shown output is compared line by line, in
order, with whitespace runs, durations, dates, the workspace path and HOME normalised.
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

from ci_gates import built_emulated_npu, unavailable

needs_torch = pytest.mark.needs_torch  # capture, validate and the scaffold run torch

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md"))
EXAMPLE = Path("examples") / "cifar_trainer"
#: Project folders besides the example that a page's first example runs in.
EXTRA_PROJECTS = (Path("tests") / "standin" / "projects" / "ops_probe",)

NEEDS_NPU = re.compile(r"--device\s+npu(:\d+)?\b|\bnpu-smi\b")
RUNS_ANYWHERE = re.compile(r"^ascend-migrate check\b")  # check reports a missing NPU stack itself
NEEDS_NETWORK = re.compile(r"^/plugin\b|\bpip install\b|^make demo\b|\bgit clone\b|\bcurl\b|\bwget\b|\bkb sync\b")
NPU_MARK = "on an NPU host"
NETWORK_MARK = "needs a network"
EDITS_STEP = re.compile(r"^# make the four manual edits .*\bin (\S+?)/?$")
TRAILING_COMMENT = re.compile(r"\s+#\s(.*)$")


# ----------------------------------------------------------------------------- reading the pages

@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)

    @property
    def comment(self) -> str:
        if self.command.startswith("#"):
            return self.command[1:].strip()
        m = TRAILING_COMMENT.search(self.command)
        return m.group(1) if m else ""

    @property
    def program(self) -> str:
        """The command without its comment and leading VAR=value settings."""
        text = self.command if self.command.startswith("#") else TRAILING_COMMENT.sub("", self.command)
        return re.sub(r"^(\w+=\S*\s+)+", "", text).strip()

    @property
    def expected_exit(self) -> int:
        m = re.search(r"\bexits (\d+)\b", self.comment)
        return int(m.group(1)) if m else 0


def code_blocks(text: str) -> list[list[str]]:
    """The indented code blocks of a page, each as its lines without the indent."""
    blocks, current, blanks = [], None, 0
    previous_blank = True
    for line in text.splitlines():
        if line.startswith("    ") and (current is not None or previous_blank):
            if current is None:
                current = []
            current.extend([""] * blanks)
            blanks = 0
            current.append(line[4:])
        elif not line.strip() and current is not None:
            blanks += 1
        else:
            if current is not None:
                blocks.append(current)
            current, blanks = None, 0
        previous_blank = not line.strip()
    if current is not None:
        blocks.append(current)
    return blocks


def steps_of(block: list[str]) -> list[Step]:
    steps: list[Step] = []
    for line in block:
        if line.startswith("$ "):
            steps.append(Step(line[2:].strip()))
        elif steps:
            steps[-1].shown.append(line)
    return steps


def first_example(page: Path) -> list[str]:
    blocks = code_blocks(page.read_text(encoding="utf-8"))
    return blocks[0] if blocks else []


def readme_tour() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## A one-minute tour\n")
    end = text.index("\n## ", start + 1)
    return code_blocks(text[start:end])


def all_examples() -> list[tuple[str, list[Step]]]:
    out = [(f"README.md tour block {i + 1}", steps_of(block)) for i, block in enumerate(readme_tour())]
    out += [(f"docs/{page.name}", steps_of(first_example(page))) for page in PAGES]
    return out


# ------------------------------------------------------------------------------ comparing output

_DURATION = re.compile(r"\b\d+(\.\d+)? ?s\b")
_DATE = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d{4}|Z)?")


def _normal(line: str) -> str:
    line = _DATE.sub("<date>", line)
    line = _DURATION.sub("<time>", line)
    return " ".join(line.split())


def _pattern(shown: str) -> re.Pattern:
    parts = [re.escape(part) for part in _normal(shown).split("...")]
    return re.compile(r"\s*" + ".*".join(parts) + r"\s*")


def missing_lines(shown: list[str], output: str) -> list[str]:
    """The shown lines that do not appear, in order, in `output`."""
    real = [_normal(line) for line in output.splitlines()]
    missing, at = [], 0
    for line in shown:
        if not line.strip() or line.strip() == "...":
            continue
        pattern = _pattern(line)
        for i in range(at, len(real)):
            if pattern.fullmatch(real[i]):
                at = i + 1
                break
        else:
            missing.append(line)
    return missing


# -------------------------------------------------------------------------------- running them

def _tree_digest(path: Path) -> str:
    h = hashlib.sha256()
    if path.is_file():
        h.update(path.read_bytes())
        return h.hexdigest()
    for item in sorted(path.rglob("*")):
        rel = item.relative_to(path)
        if {".ascend-migrate", "__pycache__"} & set(rel.parts) or item.suffix == ".pyc":
            continue
        h.update(str(rel).encode() + b"\0")
        if item.is_file():
            h.update(item.read_bytes())
    return h.hexdigest()


@dataclass
class Result:
    exit_code: int
    output: str
    cwd: Path
    seconds: float
    reused: bool = False


class Workspace:
    """One copy of the example, one temporary HOME, and the commands run so far."""

    def __init__(self, base: Path, build_dir: Optional[Path]) -> None:
        self.root = base / "work"
        self.home = base / "home"
        self.home.mkdir(parents=True)
        for rel in (EXAMPLE, *EXTRA_PROJECTS):
            shutil.copytree(ROOT / rel, self.root / rel,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ascend-migrate"))
        self.cwd = self.root
        self.env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "DEV_DIR", "OLDPWD")}
        self.env.update(HOME=str(self.home), PYTHONUNBUFFERED="1", PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                                   os.environ.get("PATH", "")]))
        if build_dir is not None:
            self.env["NPU_STANDIN_BUILD_DIR"] = str(build_dir)
        self._ran: dict[tuple, Result] = {}
        self.log: list[tuple[str, Result]] = []

    def _inputs(self, step: Step) -> tuple:
        inputs = []
        if self.cwd != self.root:
            inputs.append(("cwd", _tree_digest(self.cwd)))
        try:
            words = shlex.split(step.program)
        except ValueError:
            words = []
        skip = False
        for word in words:
            if skip or word in (">", "2>"):
                skip = word in ("-o", "--output", ">", "2>")
                continue
            skip = word in ("-o", "--output")
            path = self.home / word[2:] if word.startswith("~/") else self.cwd / word
            if word.startswith("-") or not path.exists():
                continue
            resolved = path.resolve()
            if resolved == self.root or not (resolved.is_relative_to(self.root) or resolved.is_relative_to(self.home)):
                continue
            inputs.append((word, _tree_digest(resolved)))
        return tuple(inputs)

    def run(self, step: Step) -> Result:
        if EDITS_STEP.match(step.command):
            target = self.cwd / EDITS_STEP.match(step.command).group(1)
            apply_manual_edits(target)
            return Result(0, "", self.cwd, 0.0)
        if step.command.startswith("#"):
            return Result(0, "", self.cwd, 0.0)
        key = (str(self.cwd.relative_to(self.root)), step.command, self._inputs(step))
        if key in self._ran:
            earlier = self._ran[key]
            result = Result(earlier.exit_code, earlier.output, earlier.cwd, 0.0, reused=True)
        else:
            result = self._execute(step)
            self._ran[key] = result
        self.cwd = result.cwd
        self.log.append((step.command, result))
        return result

    def _execute(self, step: Step) -> Result:
        in_checkout = step.program.startswith("make ")
        where = Path(self.root.parent / ".cwd")
        script = f'{step.command}\n__rc=$?\npwd > "{where}"\nexit $__rc\n'
        started = time.monotonic()
        proc = subprocess.run(["bash", "-c", script], cwd=ROOT if in_checkout else self.cwd, env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        seconds = time.monotonic() - started
        cwd = self.cwd if in_checkout else Path(where.read_text().strip())
        assert cwd.resolve().is_relative_to(self.root.resolve()), f"`{step.command}` left the workspace"
        output = proc.stdout.replace(str(self.root) + "/", "").replace(str(self.root), ".")
        output = output.replace(str(self.home), "~")
        return Result(proc.returncode, output, cwd, seconds)


def apply_manual_edits(port: Path) -> None:
    """The edits examples/cifar_trainer/README.md lists (tests/validate/test_example_e2e.py holds
    them, written for the agnostic port). In a transfer port the DataParallel branch tests
    torch.cuda.device_count(), and a device or backend name the transfer style already renamed
    (cuda to npu, nccl to hccl) needs no edit; any other edit that finds nothing to change fails."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("example_e2e", ROOT / "tests" / "validate" / "test_example_e2e.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for rel, old, new in module.MANUAL_EDITS:
        path = port / rel
        text = path.read_text(encoding="utf-8")
        if text.count(old) != 1:
            old = old.replace("torch.accelerator.device_count()", "torch.cuda.device_count()")
        if text.count(old) != 1 and old.replace("cuda", "npu").replace("nccl", "hccl") in text:
            continue  # the migrator made this one
        assert text.count(old) == 1, f"{path}: no single {old!r} to edit"
        path.write_text(text.replace(old, new), encoding="utf-8")


def _emulated_npu_build() -> Optional[Path]:
    """The emulated npu built into the test cache, as tests/standin builds it."""
    import torch

    from ascend_migrate.emulated_npu import build as emu

    if emu.torch_release(torch.__version__) != emu.SUPPORTED_TORCH:
        unavailable(f"the docs' emulated-npu examples need torch {emu.SUPPORTED_TORCH}; this is {torch.__version__}")
    return built_emulated_npu()


# ------------------------------------------------------------------------------------- fixtures

def _needs(step: Step) -> set[str]:
    program = step.program
    needs = set()
    if NEEDS_NPU.search(program) and not RUNS_ANYWHERE.match(program):
        needs.add(NPU_MARK)
    if NEEDS_NETWORK.search(program):
        needs.add(NETWORK_MARK)
    return needs


def _marked(step: Step) -> set[str]:
    return {mark for mark in (NPU_MARK, NETWORK_MARK) if mark in step.comment}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    if shutil.which("bash") is None:
        unavailable("the docs' examples are shell commands; bash is not installed")
    ws = Workspace(tmp_path_factory.mktemp("docs-examples"), _emulated_npu_build())
    yield ws
    timings = os.environ.get("DOCS_EXAMPLES_TIMINGS", "").strip()
    if timings:  # what each command cost, for whoever tunes this test
        Path(timings).write_text("".join(f"{r.seconds:7.1f} s {'reused ' if r.reused else ''}{c}\n"
                                         for c, r in ws.log), encoding="utf-8")


def run_steps(ws: Workspace, where: str, steps: list[Step]) -> list[str]:
    """Run `steps` from the workspace root; return what went wrong."""
    problems = []
    ws.cwd = ws.root
    for step in steps:
        if _marked(step):
            continue
        tools = {"jq", "rg"} & set(re.findall(r"[\w-]+", step.program))
        for tool in sorted(tools):
            if shutil.which(tool, path=ws.env["PATH"]) is None:
                unavailable(f"`{step.command}` needs {tool}, which is not installed")
        result = ws.run(step)
        if result.exit_code != step.expected_exit:
            tail = "\n".join(result.output.splitlines()[-15:])
            problems.append(f"{where}: `{step.command}` exited {result.exit_code}, not {step.expected_exit}:\n{tail}")
            continue
        missing = missing_lines(step.shown, result.output)
        if missing:
            problems.append(f"{where}: `{step.command}` did not print, in this order:\n  "
                            + "\n  ".join(missing) + "\n--- it printed:\n" + result.output[-4000:])
    return problems


@pytest.fixture(scope="module")
def tour(workspace) -> list[str]:
    steps = [step for block in readme_tour() for step in steps_of(block)]
    return run_steps(workspace, "README.md tour", steps)


# ---------------------------------------------------------------------------------------- tests

def test_every_command_that_needs_an_npu_or_a_network_says_so_and_no_other_does():
    wrong = []
    for where, steps in all_examples():
        for step in steps:
            if _needs(step) != _marked(step):
                wrong.append(f"{where}: `{step.command}` needs {sorted(_needs(step)) or 'neither'}, "
                             f"marked {sorted(_marked(step)) or 'neither'}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_first_example_is_commands_with_their_output(page):
    steps = steps_of(first_example(page))
    assert first_example(page) and first_example(page)[0].startswith("$ "), \
        f"{page.name}: the first code block does not start with a `$ ` command"
    assert any(not s.command.startswith("#") and not _marked(s) for s in steps), \
        f"{page.name}: the first example has no command that runs here"


@needs_torch
def test_readme_tour_runs_as_shown(tour, workspace):
    assert readme_tour(), "README.md has no tour"
    ran = [command for command, _ in workspace.log]
    assert any(c.startswith("ascend-migrate replay") for c in ran), ran
    assert not tour, "\n\n".join(tour)


@needs_torch
def test_readme_tour_shows_the_replayed_tree_hash_the_docs_show(tour, workspace):
    text = README.read_text(encoding="utf-8")
    shown = set(re.findall(r"tree reproduced: ([0-9a-f]{64})", text))
    assert len(shown) == 1, shown
    replays = [r for c, r in workspace.log if c.startswith("ascend-migrate replay")]
    assert replays and all(f"tree reproduced: {h}" in replays[-1].output for h in shown), \
        replays[-1].output if replays else "no replay ran"
    pages = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
    for other in set(re.findall(r"\b[0-9a-f]{64}\b", pages)):
        assert other in shown, f"docs show tree hash {other}, the README {shown}"


@needs_torch
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_first_example_runs_as_shown(page, tour, workspace):
    problems = run_steps(workspace, f"docs/{page.name}", steps_of(first_example(page)))
    assert not problems, "\n\n".join(problems)

