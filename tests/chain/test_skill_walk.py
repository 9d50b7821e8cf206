"""The skills followed literally by an agent on a machine without a GPU or an NPU.

Each shell block of a SKILL.md runs as written, in order, as a separate Bash call from the
project's root (Claude Code substitutes `${CLAUDE_SKILL_DIR}` and nothing else), in a fresh
HOME whose only Python packages are the ones the skill's own install steps put there. The
steps that need judgement are done the way the skill says to do them, by this test: the
command users launch and a tiny data sample in the project's own format (step 4; no model
code), the style chosen in step 3, the manual fix of each item the change list marks manual.
The walk must end with a verdict that tells the truth without any confirmation, a per-model
skill and a replay that passes.

Fixtures are in the shapes real projects have: a script that parses arguments, loads data and
trains at import time, with DataParallel under `if device == "cuda":` and a helper module that
runs `stty size` when imported; and a package launched as `python -m trainer.train`.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gates import cache_dir, unavailable, user_cache
from skill_blocks import Block, agent_env, run_block, shell_blocks

pytestmark = pytest.mark.needs_torch

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "walk"
ENTRIES = Path(__file__).parent / "walk_entries"
TORCH_VERSION = "2.13.0"  # the CPU torch this machine's pip resolves from local files


def _local_torch_source() -> dict[str, str]:
    """Where this machine's pip finds the CPU torch==2.13.0 wheel and a mirror of an index for
    its dependencies, as the two variables the skill's install block reads. Anything else would
    make the walk download PyPI's CUDA build (several GB): then the walk cannot run here."""
    proc = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    config = dict(re.findall(r"^(\S+?)='(.*)'$", proc.stdout, re.MULTILINE))
    links = [os.environ.get("PIP_FIND_LINKS", "")] + [v for k, v in config.items() if k.endswith("find-links")]
    folders = [f for value in links for f in value.split() if f and Path(f).is_dir()]
    wheels = [f for f in folders if list(Path(f).glob(f"torch-{TORCH_VERSION}+cpu-*.whl"))]
    mirrors = [u for k, v in config.items() if k.endswith("index-url") for u in v.split()
               if u.startswith("file://") and Path(u[len("file://"):]).is_dir()]
    if not wheels or not mirrors:
        return {}
    return {"PIP_FIND_LINKS": wheels[0], "TORCH_INDEX_URL": mirrors[0]}


class Walk:
    """One agent following one skill in one HOME."""

    def __init__(self, skill: str, home: Path, cwd: Path) -> None:
        self.skill_dir = REPO / "skills" / skill
        self.blocks = shell_blocks(self.skill_dir / "SKILL.md")
        self.home = home
        self.cwd = cwd
        pip_cache = cache_dir() / "pip"
        pip_cache.mkdir(parents=True, exist_ok=True)
        self.env = agent_env(home, {"PIP_CACHE_DIR": str(pip_cache), "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                                    # pip byte-compiles all of torch's 700 MB at install (most of
                                    # the install's CPU); Python compiles what it imports instead
                                    "PIP_COMPILE": "0",
                                    "TORCH_VERSION": TORCH_VERSION, **_local_torch_source(),
                                    # the emulated npu's build is cached in the user's cache folder:
                                    # one per torch and source, kept between test runs and shared
                                    # with the rest of the suite (ci_gates.user_cache)
                                    "XDG_CACHE_HOME": str(user_cache())})
        self.log: list[str] = []

    def block(self, heading_prefix: str, contains: str = "") -> Block:
        found = [b for b in self.blocks if b.heading.startswith(heading_prefix) and contains in b.code]
        assert len(found) == 1, (heading_prefix, contains, [b.heading for b in self.blocks])
        return found[0]

    def run(self, block: Block, expect: int = 0, style: str = "transfer", timeout: float = 900) -> str:
        # Step 3's decision is the only thing the agent changes in a command: the style.
        code = block.code.replace("--style transfer", f"--style {style}")
        proc = run_block(Block(block.heading, code, block.line), cwd=self.cwd, env=self.env,
                         skill_dir=self.skill_dir, timeout=timeout)
        out = proc.stdout + proc.stderr
        self.log.append(f"$ {code}\n[exit {proc.returncode}]\n{out[-3000:]}")
        assert proc.returncode == expect, "\n\n".join(self.log[-3:])
        # the project's own output is echoed behind "| " (its tracebacks are evidence); ours never crashes
        ours = "\n".join(line for line in out.splitlines() if not line.lstrip().startswith("|"))
        assert "Traceback (most recent call last)" not in ours, out[-3000:]
        return out


@pytest.fixture(scope="module")
def agent_home(tmp_path_factory) -> Path:
    """The HOME every walk shares: step 0's venv, built once by the skill's own blocks."""
    if not _local_torch_source():
        unavailable(f"no local CPU torch=={TORCH_VERSION} wheel and index mirror for pip; the walk would "
                    "download PyPI's CUDA build")
    home = tmp_path_factory.mktemp("agent-home")
    walk = Walk("cuda-to-npu", home, home)
    for block in walk.blocks:
        if block.heading.startswith("0. Tools"):
            walk.run(block, timeout=1800)
    venv_python = home / ".venvs" / "ascend-migrate" / "bin" / "python"
    probe = subprocess.run([str(venv_python), "-c", "import torch, ascend_migrate; print(torch.__version__)"],
                           capture_output=True, text=True)
    assert probe.returncode == 0 and probe.stdout.startswith(f"{TORCH_VERSION}+cpu"), probe.stdout + probe.stderr
    return home


def _project(tmp_path: Path, fixture: str, style: str) -> Path:
    """The user's checkout; one per port, so each walk records its own model skill."""
    project = tmp_path / "work" / f"{fixture}-{style}"
    shutil.copytree(FIXTURES / fixture, project)
    return project


#: Step 4's judgement per fixture: the command its README launches, shortened, with the data
#: flag pointing at the sample the agent made (an absolute path: the port runs from its folder).
COMMANDS = {
    "script_trains_at_import": 'python main.py --epochs 2 --data "$(realpath "$WORK")/sample/batches.pt"',
    "package_module_cli": "python -m trainer.train --steps 20",
}


def work_dir(walk: Walk) -> Path:
    return walk.cwd.parent / "ascend-work" / walk.cwd.name


def _make_sample(walk: Walk, fixture: str) -> None:
    """The tiny sample in the project's format (read from its loader): `load_batches` reads a
    list of (images, labels) saved with torch.save."""
    if fixture != "script_trains_at_import":
        return  # it makes its own batches from a seeded generator
    import torch

    sample = work_dir(walk) / "sample"
    sample.mkdir(parents=True, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    batches = [(torch.randn(4, 3, 32, 32, generator=g), torch.randint(0, 10, (4,), generator=g)) for _ in range(4)]
    torch.save(batches, sample / "batches.pt")


def _with_command(block: Block, fixture: str) -> Block:
    assert "python train.py ARGS" in block.code, block.code
    return Block(block.heading, block.code.replace("python train.py ARGS", COMMANDS[fixture]), block.line)


def _port_walk(walk: Walk, fixture: str, style: str, manual_fix, rescan_fails: bool = True) -> dict:
    """Steps 1-9 of cuda-to-npu; returns what the test wants to look at afterwards."""
    out = walk.run(walk.block("1. Check"), expect=1)
    assert "No NPU" in out
    walk.run(walk.block("2. Scan"))
    scan = json.loads((work_dir(walk) / "scan.json").read_text())
    assert scan["summary"]["total"] > 0 if "summary" in scan else scan["findings"]
    _make_sample(walk, fixture)
    walk.run(_with_command(walk.block("5. Capture"), fixture))
    assert (work_dir(walk) / "golden.pt").is_file()
    migrate = walk.block("6. Migrate")
    out = walk.run(migrate, style=style)
    assert f"{style} style: 0 edits in 0 files" in out  # the second run changes nothing
    port = work_dir(walk) / "port"
    changes = json.loads((port / "ascend-migrate-changes.json").read_text())
    rescan = walk.block("7. Manual")
    validate = _with_command(walk.block("8. Validate"), fixture)
    result = {"port": port, "changes": changes}
    if manual_fix is not None:
        # Before the manual work the walk must not look done: re-scan and verdict both fail.
        walk.run(rescan, expect=1 if rescan_fails else 0)
        out = walk.run(validate, expect=1)
        result["verdict_before_fix"] = out
        manual_fix(port)
    walk.run(rescan)
    out = walk.run(validate)
    assert "verdict: PASS" in out, out[-3000:]
    report = json.loads((port / ".ascend-migrate" / "validation-report.json").read_text())
    assert not any(i["status"] == "confirmed" for i in report["items"])
    sites = next(i for i in report["items"] if i["id"] == "migrated-code-executed")
    assert sites["status"] == "pass" and "edit site(s)" in sites["summary"], sites
    loss = next(i for i in report["items"] if i["id"] == "loss-curve")
    assert all(s["abs_diff"] == 0 for s in loss["evidence"][0]["steps"]), loss  # bit-identical on CPU kernels
    if style == "transfer":
        assert report["provenance"]["device_kind"] == "emulated-npu" and "emulated" in out
    result["report"] = report
    out = walk.run(walk.block("9. Record"), style=style)
    written = re.search(r"^wrote (\S+)/SKILL\.md$", out, re.MULTILINE)
    assert written, out
    skill_dir = Path(written.group(1))
    assert skill_dir.parent == walk.home / ".kernelcat" / "skills", skill_dir
    assert (skill_dir / "SKILL.md").is_file(), out
    assert "--confirm" not in (skill_dir / "SKILL.md").read_text()
    result["skill_dir"] = skill_dir
    result["skill_output"] = out
    return result


def _drop_dataparallel(port: Path) -> None:
    """The minimal manual fix the skill's table names: keep the single-device model."""
    main = port / "main.py"
    text = main.read_text()
    fixed = re.sub(r"\n(\s*)net = torch\.nn\.DataParallel\(net\)\n", r"\n\1pass  # one device per process\n", text)
    assert fixed != text
    main.write_text(fixed)


def _backend_from_device(port: Path) -> None:
    """The manual fix for a hard-coded "nccl" default in a device-agnostic port."""
    train = port / "trainer" / "train.py"
    text = train.read_text()
    fixed = text.replace('parser.add_argument("--backend", default="nccl")',
                         'parser.add_argument("--backend", default="hccl" if _accel_type == "npu" else "nccl")')
    assert fixed != text
    train.write_text(fixed)


def _replay(walk: Walk, result: dict, fixture: str, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh" / fixture
    shutil.copytree(FIXTURES / fixture, fresh)
    tool = walk.home / ".venvs" / "ascend-migrate" / "bin" / "ascend-migrate"
    device = "emulated-npu" if result["report"]["provenance"]["device_kind"] == "emulated-npu" else "cpu"
    proc = subprocess.run([str(tool), "replay", str(result["skill_dir"]), str(fresh), "--device", device],
                          capture_output=True, text=True, env=walk.env, cwd=tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("style", ["transfer", "agnostic"])
def test_skill_walk_on_a_script_that_trains_at_import(agent_home, tmp_path, style):
    fixture = "script_trains_at_import"
    project = _project(tmp_path, fixture, style)
    walk = Walk("cuda-to-npu", agent_home, project)
    result = _port_walk(walk, fixture, style, _drop_dataparallel)
    manual = [c for c in result["changes"]["changes"] if c["operation"] == "manual"]
    assert [c["rule"] for c in manual] == ["DS003"], manual
    assert "no-dataparallel" in result["verdict_before_fix"] or "DataParallel" in result["verdict_before_fix"]
    _replay(walk, result, fixture, tmp_path)


def test_two_projects_in_one_parent_folder_keep_their_own_files(agent_home, tmp_path):
    """Issue of a shared work folder: the second project's scan and golden never replace the first's."""
    first, second = tmp_path / "work" / "first", tmp_path / "work" / "second"
    shutil.copytree(FIXTURES / "script_trains_at_import", first)
    shutil.copytree(FIXTURES / "package_module_cli", second)
    walks = {"script_trains_at_import": Walk("cuda-to-npu", agent_home, first),
             "package_module_cli": Walk("cuda-to-npu", agent_home, second)}
    for fixture, walk in walks.items():
        walk.run(walk.block("2. Scan"))
        _make_sample(walk, fixture)
        walk.run(_with_command(walk.block("5. Capture"), fixture))
    a, b = work_dir(walks["script_trains_at_import"]), work_dir(walks["package_module_cli"])
    assert a != b and a.parent == b.parent
    assert json.loads((a / "scan.json").read_text()) != json.loads((b / "scan.json").read_text())
    import torch

    metas = [json.loads(torch.load(d / "golden.pt", weights_only=True)["meta"])["command"] for d in (a, b)]
    assert metas[0][:2] == ["python", "main.py"] and metas[1][:3] == ["python", "-m", "trainer.train"]


@pytest.mark.parametrize("style", ["transfer", "agnostic"])
def test_skill_walk_on_a_package_run_with_python_m(agent_home, tmp_path, style):
    fixture = "package_module_cli"
    project = _project(tmp_path, fixture, style)
    walk = Walk("cuda-to-npu", agent_home, project)
    if style == "transfer":
        result = _port_walk(walk, fixture, style, None)  # the backend default is rewritten to hccl
    else:
        # The agnostic port keeps the CUDA host's "nccl" default: a warning for the re-scan and
        # a failed no-nccl item for the verdict, until the agent derives it from the device.
        result = _port_walk(walk, fixture, style, _backend_from_device, rescan_fails=False)
        assert "no-nccl" in result["verdict_before_fix"]
    if style == "transfer":
        train = (result["port"] / "trainer" / "train.py").read_text()
        assert "transfer_to_npu" in train  # the module users launch gets the imports
    _replay(walk, result, fixture, tmp_path)


def test_npu_troubleshooting_walk(agent_home, tmp_path):
    """Host check, then a captured log diagnosed, from the troubleshooting skill's blocks."""
    cwd = tmp_path / "job"
    cwd.mkdir()
    (cwd / "failure.log").write_text(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "    import torch_npu\n"
        "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n")
    walk = Walk("npu-troubleshooting", agent_home, cwd)
    out = walk.run(walk.block("Triage loop", "ascend-migrate check"), expect=1)
    assert "No NPU" in out
    out = walk.run(walk.block("Triage loop", "ascend-migrate diagnose"), expect=1)
    assert "set_env.sh" in out
