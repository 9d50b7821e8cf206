"""The generated model skill as an agent meets it: a fresh HOME, a fresh venv, a fresh checkout,
and nothing but the SKILL.md's bash blocks, run in order with ${CLAUDE_SKILL_DIR} filled in as
Claude Code does. Two project shapes: the bundled example (scripts at the root) and a package
trained with `python -m tinynet.train` whose requirements list the CUDA-only `apex` next to a
real dependency, plus a requirement file with a hostile name.

Package installs come from this machine's local package mirror, pointed at through PIP_* variables
only (the recipe honours PIP_INDEX_URL when it is set); without such a mirror the recipe tests
are skipped, the text checks still run."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chainhelpers import REPO, am, copy_project, copy_validated, replace_once

pytestmark = pytest.mark.needs_torch

HOSTILE_REQ = "requirements-$(touch PWNED).txt"
LOCAL_WHEELS = Path(os.environ.get("ASCEND_MIGRATE_TEST_WHEELS", "/opt/wheels"))
LOCAL_INDEX = Path(os.environ.get("ASCEND_MIGRATE_TEST_INDEX", "/opt/pypi/simple"))
LOCAL_EXTRA_INDEX = Path("/opt/pypi-more/simple")


def _example_chain(base: Path, validated: Path) -> dict:
    original, ported, _golden = copy_validated(validated, base)
    return {"original": original, "ported": ported, "model": "cifar-trainer", "drop_entry": None}


def _package_chain(base: Path) -> dict:
    original = copy_project(REPO / "tests" / "fixtures" / "chain" / "pkgtrain", base / "unported-checkout")
    (original / HOSTILE_REQ).write_text("pyyaml>=5.4\n", encoding="utf-8")
    ported = base / "tinynet-ported"
    assert am("migrate", original, "--style", "agnostic", "--output", ported).exit_code == 0
    # the manual work: apex is CUDA-only, drop it from the requirements and the code
    replace_once(ported / "requirements.txt", "apex\n", "")
    replace_once(ported / "tinynet" / "train.py",
                 "try:\n    from apex import amp  # mixed precision on the GPU cluster\nexcept ImportError:\n    amp = None\n",
                 "amp = None  # apex is CUDA-only; torch.autocast covers mixed precision\n")
    golden = base / "tinynet-golden" / "train.pt"
    res = am("validate", "capture", "tinynet/validation.py:train_steps", "--root", original, "-o", golden, "--steps", "4")
    assert res.exit_code == 0, res.output
    res = am("validate", ported, "--device", "cpu", "--golden", golden)
    assert res.exit_code == 0, res.output
    # an upstream checkout lacks the validation entry the port was validated with
    return {"original": original, "ported": ported, "model": "tinynet", "drop_entry": "tinynet/validation.py"}


@pytest.fixture(scope="module", params=["example", "package"])
def generated(request, tmp_path_factory):
    base = tmp_path_factory.mktemp(f"recipe-{request.param}")
    if request.param == "example":
        chain = _example_chain(base / "example", request.getfixturevalue("validated_example"))
    else:
        chain = _package_chain(base)
    skills = base / "kernelcat-skills"
    res = am("skill", chain["ported"], "--model", chain["model"], "--allow-cpu", "--out-root", skills)
    assert res.exit_code == 0, res.output
    chain.update(base=base, skill_dir=skills / chain["model"], output=res.output)
    chain["text"] = (chain["skill_dir"] / "SKILL.md").read_text(encoding="utf-8")
    chain["replay"] = json.loads((chain["skill_dir"] / "replay.json").read_text(encoding="utf-8"))
    return chain


def bash_blocks(text: str) -> list[str]:
    """The ```bash blocks of a Markdown text, in order."""
    return re.findall(r"(?ms)^```bash\n(.*?)^```\s*$", text)


def _offline_pip_env() -> dict[str, str] | None:
    if not any(LOCAL_WHEELS.glob("torch-2.13.0*.whl")) or not LOCAL_INDEX.is_dir():
        return None
    env = {"PIP_INDEX_URL": LOCAL_INDEX.as_uri(), "PIP_FIND_LINKS": str(LOCAL_WHEELS),
           "TORCH_INDEX_URL": LOCAL_INDEX.as_uri(),  # the recipe's CPU index for torch, mirrored
           "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           # no byte-compiling of every installed file (most of torch's install time): Python
           # compiles the modules it imports, into the venv, the first time
           "PIP_COMPILE": "0"}
    if LOCAL_EXTRA_INDEX.is_dir():
        env["PIP_EXTRA_INDEX_URL"] = LOCAL_EXTRA_INDEX.as_uri()
    return env


# --------------------------------------------------------------------------- the text


def test_the_skill_passes_the_agent_skills_validator(generated):
    tool = Path(sys.executable).parent / "agentskills"
    if not tool.exists():
        pytest.skip("skills-ref (agentskills) is not installed in this environment")
    res = subprocess.run([str(tool), "validate", str(generated["skill_dir"])], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_recipe_is_ordered_and_installs_nothing_from_an_unpatched_tree(generated):
    text, replay = generated["text"], generated["replay"]
    headings = re.findall(r"(?m)^### (\d)\. (.*)$", text)
    assert [n for n, _ in headings] == ["1", "2", "3", "4", "5", "6", "7"]
    assert [h.split()[0] for _, h in headings] == ["Environment", "Install", "Install", "Remove", "Reproduce",
                                                    "Install", "Validate"]
    blocks = bash_blocks(text)
    joined = "\n".join(blocks)
    venv_at, wheel_at = joined.index("-m venv"), joined.index("tools/ascend_migrate-")
    replay_at = joined.index(" replay ")
    assert venv_at < wheel_at < joined.index("torch==") < replay_at
    # every project install comes after the replay patched the tree
    for match in re.finditer(r"pip install -r ", joined):
        assert match.start() > replay_at
    assert joined.index(" validate ") > max(m.start() for m in re.finditer(r"pip install", joined))
    # the CUDA-only packages come from the ORIGINAL: the validated tree no longer names apex
    assert "apex" not in (generated["ported"] / "requirements.txt").read_text()
    assert "apex" in replay["environment"]["cuda_only_packages"]
    assert re.search(r"pip uninstall -y .*\bapex\b", joined)
    assert not re.search(r"pip install[^\n]*\bapex\b", joined)
    # torch_npu's runtime deps: the list `check` verifies (knowledge/compat.yaml), not a shorter one
    from ascend_migrate.check.compat import default_compat
    assert replay["environment"]["torch_npu_runtime_deps"] == [d.spec for d in default_compat().runtime_deps]
    # the tool: the wheel stored in the skill, no bare `ascend-migrate` on PATH in the recipe
    assert (generated["skill_dir"] / replay["environment"]["tool_wheel"]).is_file()
    assert not re.search(r"(?m)^ascend-migrate ", joined)
    # pinned, never bare, and only from the CPU index (PyPI's x86_64 torch is a CUDA build)
    assert re.search(r'(?m)^"\$VENV/bin/python" -m pip install torch==\d\S* --index-url "\$\{TORCH_INDEX_URL:-'
                     r'https://download\.pytorch\.org/whl/cpu\}"$', joined)
    assert "torch.version.cuda is None" in joined


def test_text_that_does_not_apply_is_not_printed_and_names_are_right(generated):
    text, replay = generated["text"], generated["replay"]
    assert replay["migrate"]["options"]["style"] == "agnostic"
    assert "must import torch_npu" not in text and "imports torch_npu at the top" not in text
    assert "the agnostic style adds no torch_npu import" in text
    # the project's name, not the folder the checkout happened to be in
    assert generated["original"].name not in text
    # the golden is named as stored; the re-capture uses the device it was captured on
    golden = replay["golden"]["file"]
    assert golden.startswith("golden/") and f'"${{CLAUDE_SKILL_DIR}}"/{golden}' in text
    assert "\n`golden.pt` is" not in text and f"\n`{golden}` is" in text
    assert f"--device {replay['golden']['captured_on']}" in text and "cuda:0" not in text
    # tables hold no cut JSON
    assert not re.search(r"\|[^|\n]*[{\[][^|\n]*\.\.\. \|", text)
    # paths inside the skill folder go through ${CLAUDE_SKILL_DIR}, explained once for other clients
    assert "SKILL_DIR/" not in text.replace("${CLAUDE_SKILL_DIR}/", "").replace('${CLAUDE_SKILL_DIR}"/', "")
    assert "in another client, replace it with that folder's path" in text
    assert "precision mode `fp32`" in text.lower() or "Precision mode `fp32`" in text


def test_every_project_name_in_a_shell_block_is_quoted(generated):
    if generated["model"] != "tinynet":
        pytest.skip("the hostile requirement file is part of the package project")
    joined = "\n".join(bash_blocks(generated["text"]))
    assert f"pip install -r '{HOSTILE_REQ}'" in joined
    # outside single quotes, no command substitution is left in any block
    unquoted = re.sub(r"'[^']*'", "''", joined)
    assert "$(" not in unquoted and "`" not in unquoted


def test_the_output_says_how_an_agent_loads_the_skill(generated):
    out = generated["output"]
    assert "~/.claude/skills/" in out and "--install-to claude-user" in out
    assert f"cp -r {generated['skill_dir']} ~/.claude/skills/" in out


def test_install_to_writes_a_real_copy_and_refuses_a_different_skill(generated, tmp_path):
    ported, model = generated["ported"], generated["model"]
    clients = tmp_path / "client-skills"
    res = am("skill", ported, "--model", model, "--allow-cpu", "--out-root", tmp_path / "a", "--install-to", clients)
    assert res.exit_code == 0, res.output
    copy = clients / model
    assert not copy.is_symlink() and (copy / "SKILL.md").read_bytes() == (tmp_path / "a" / model / "SKILL.md").read_bytes()
    assert {p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()} == \
           {p.relative_to(tmp_path / "a" / model).as_posix() for p in (tmp_path / "a" / model).rglob("*") if p.is_file()}
    # a different skill of the same name is there: refused, nothing written anywhere
    (copy / "SKILL.md").write_text("---\nname: other\ndescription: someone else's\n---\n")
    res = am("skill", ported, "--model", model, "--allow-cpu", "--out-root", tmp_path / "b", "--install-to", clients)
    assert res.exit_code == 2 and "holds a different skill" in res.output and "--force" in res.output
    assert not (tmp_path / "b").exists()
    res = am("skill", ported, "--model", model, "--allow-cpu", "--out-root", tmp_path / "b", "--install-to", clients,
             "--force")
    assert res.exit_code == 0, res.output
    assert (copy / "SKILL.md").read_bytes() == (tmp_path / "b" / model / "SKILL.md").read_bytes()


# --------------------------------------------------------------------------- the recipe, run


def test_following_only_the_bash_blocks_reproduces_and_validates(generated, tmp_path):
    pip_env = _offline_pip_env()
    if pip_env is None:
        pytest.skip("no local package mirror with torch 2.13.0 (set ASCEND_MIGRATE_TEST_WHEELS/_INDEX)")
    home = tmp_path / "home"
    home.mkdir()
    checkout = copy_project(generated["original"], tmp_path / "checkout")
    if generated["drop_entry"]:
        (checkout / generated["drop_entry"]).unlink()
    base_python = Path(getattr(sys, "_base_executable", sys.executable)).parent  # not a venv: a plain Python
    env = {"HOME": str(home), "PATH": f"{base_python}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", **pip_env}
    skill_dir = generated["skill_dir"]
    outputs = []
    for block in bash_blocks(generated["text"]):
        script = block.replace("${CLAUDE_SKILL_DIR}", str(skill_dir))  # what Claude Code substitutes
        res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=checkout, env=env,
                             capture_output=True, text=True, timeout=1200)
        outputs.append(res.stdout + res.stderr)
        assert res.returncode == 0, f"block failed:\n{script}\n--- output ---\n{outputs[-1][-4000:]}"
    replay = generated["replay"]
    assert any(f"tree reproduced: {replay['tree']['sha256']}" in out for out in outputs)
    report = json.loads((checkout / ".ascend-migrate" / "validation-report.json").read_text())
    assert report["verdict"] == "pass", report["reasons"]
    assert report["provenance"]["tree"]["sha256"] == replay["tree"]["sha256"]
    assert report["provenance"]["golden"]["compared"] and report["provenance"]["precision"]["mismatch"] == []
    venv = home / ".kernelcat" / "venvs" / generated["model"]
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert (site / "ascend_migrate" / "cli.py").is_file()  # the tool came from the stored wheel
    assert not (site / "apex").exists()
    # the hostile requirement file name ran nothing
    assert not list(tmp_path.rglob("PWNED")) and not (Path.cwd() / "PWNED").exists()
