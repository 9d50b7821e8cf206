"""`validate capture/run -- COMMAND`: the project's own command on both sides.

The agnostic port of a CUDA trainer validated on the CPU with the user's command line; each
harness fixture shape (tests/fixtures/command_projects) captured and validated against itself;
negative controls with one fault injected on the command's path.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli

pytestmark = pytest.mark.needs_torch

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
TRAINER = FIXTURES / "validate_commands" / "cuda_trainer"
SHAPES = FIXTURES / "command_projects"
TRAIN = ["python", "train.py", "--device", "cpu", "--epochs", "2", "--out", "{scratch}"]


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def report_of(root: Path) -> dict:
    return json.loads((root / ".ascend-migrate" / "validation-report.json").read_text())


def item(report: dict, item_id: str) -> dict:
    return next(i for i in report["items"] if i["id"] == item_id)


@pytest.fixture(scope="module")
def golden(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("golden") / "golden.pt"
    res = invoke("validate", "capture", "--root", TRAINER, "--steps", "6", "-o", out, "--", *TRAIN)
    assert res.exit_code == 0, res.output
    assert "captured 6 step(s)" in res.output
    assert not (TRAINER / "{scratch}").exists() and not (TRAINER / "checkpoints").exists()
    return out


@pytest.fixture()
def agnostic_port(tmp_path) -> Path:
    port = tmp_path / "port"
    res = invoke("migrate", TRAINER, "--style", "agnostic", "--output", port)
    assert res.exit_code == 0, res.output
    return port


def _validate(port: Path, golden: Path, *extra: object, command=TRAIN):
    env = port.parent / "env.json"
    env.write_text("{}")
    return invoke("validate", "run", port, "--golden", golden, "--environment", env, *extra, "--", *command)


def test_the_agnostic_port_passes_on_the_cpu_with_the_users_command(agnostic_port, golden):
    res = _validate(agnostic_port, golden)
    report = report_of(agnostic_port)
    loss = item(report, "loss-curve")
    assert loss["status"] == "pass", loss
    assert all(step["abs_diff"] == 0 for step in loss["evidence"][0]["steps"])  # bit-identical
    assert item(report, "golden-outputs")["status"] == "pass"
    assert "bit-identical" in item(report, "golden-outputs")["summary"]
    sites = item(report, "migrated-code-executed")
    assert sites["status"] == "pass", sites
    assert report["edit_sites"].startswith(sites["summary"].split(";")[0])
    ran = [e for e in sites["evidence"] if e.get("message", "").startswith("ran:")]
    missed = [e for e in sites["evidence"] if e.get("message", "").startswith("did not run:")]
    assert ran and missed  # the cuda-only branches of a cpu run did not run, and the report says which
    port_lines = (agnostic_port / "train.py").read_text().splitlines()
    set_device = next(n for n, text in enumerate(port_lines, 1) if "set_device_index(" in text)
    assert {(e["path"], e["line"]) for e in missed} >= {("train.py", set_device)}  # accelerator only
    # process-group set-up and the DDP wrapper run only under torchrun: the two-process run saw them
    under_ddp = [e for e in sites["evidence"] if e.get("message", "").startswith("ran in the two-process run:")]
    distributed_only = {n for n, text in enumerate(port_lines, 1)
                        if "init_process_group(" in text or "DistributedDataParallel(" in text}
    assert len(distributed_only) == 2 and {e["line"] for e in under_ddp} >= distributed_only, sites["evidence"]
    assert not {e["line"] for e in under_ddp} & {e["line"] for e in missed}
    ddp = item(report, "ddp-smoke")
    assert ddp["status"] == "pass", ddp
    assert report["command"]["same_command_line"] is True
    assert report["command"]["target"]["steps"] == 6
    assert "edit sites:" in res.output


def test_a_changed_constant_on_the_path_fails_at_the_first_step_it_touches(agnostic_port, golden):
    path = agnostic_port / "train.py"
    path.write_text(path.read_text().replace('default=1e-2', 'default=1e-3'))
    res = _validate(agnostic_port, golden, "--no-ddp")
    assert res.exit_code == 1
    loss = item(report_of(agnostic_port), "loss-curve")
    assert loss["status"] == "fail" and "loss diverges at step 1" in loss["summary"]


def test_fewer_steps_than_asked_is_a_fail_that_says_so(agnostic_port, golden):
    res = _validate(agnostic_port, golden, "--no-ddp",
                    command=["python", "train.py", "--device", "cpu", "--epochs", "0", "--out", "{scratch}"])
    assert res.exit_code == 1
    loss = item(report_of(agnostic_port), "loss-curve")
    assert loss["status"] == "fail" and "without a single optimizer step" in loss["summary"]
    res = _validate(agnostic_port, golden, "--no-ddp",
                    command=["python", "train.py", "--device", "cpu", "--epochs", "2", "--batch-size", "32",
                             "--out", "{scratch}"])
    loss = item(report_of(agnostic_port), "loss-curve")
    assert "ended after 4 of 6 asked step(s)" in loss["summary"]


def test_a_golden_from_an_entry_is_refused_for_a_command(agnostic_port, tmp_path):
    entry = tmp_path / "e"
    entry.mkdir()
    (entry / "validate_entries.py").write_text(
        "import torch\n\ndef train_steps(device, steps=2, seed=0):\n    m = torch.nn.Linear(2, 1)\n"
        "    return [float(m(torch.ones(1, 2)).sum()) for _ in range(steps)]\n")
    g = tmp_path / "entry.pt"
    assert invoke("validate", "capture", "validate_entries.py:train_steps", "--root", entry, "-o", g).exit_code == 0
    res = _validate(agnostic_port, g, "--no-ddp")
    assert res.exit_code == 1
    assert "captured from an entry, not from a command" in item(report_of(agnostic_port), "loss-curve")["summary"]


SHAPE_COMMANDS = {
    "import_time": ["python", "train.py"],
    "package_module": ["python", "-m", "trainer.train"],
    "ddp_torchrun": ["torchrun", "--nproc_per_node=2", "train.py"],
    "grad_scaler": ["python", "train.py"],
    "print_only": ["python", "train.py"],
    "endless": ["python", "train.py"],
    "grad_accum": ["python", "train.py"],
    "catch_all": ["python", "train.py"],
}


@pytest.fixture(scope="module")
def shape_goldens(tmp_path_factory):
    """Each shape's golden, captured once on an untouched copy with its own command (three steps)
    and used by both the shape's self-validation and its negative control."""
    captured: dict[str, Path] = {}

    def golden_of(shape: str) -> Path:
        if shape not in captured:
            base = tmp_path_factory.mktemp(f"golden-{shape}")
            original, golden = base / "original", base / "g.pt"
            shutil.copytree(SHAPES / shape, original)
            res = invoke("validate", "capture", "--root", original, "--steps", "3", "-o", golden, "--",
                         *SHAPE_COMMANDS[shape])
            assert res.exit_code == 0, res.output
            captured[shape] = golden
        return captured[shape]

    return golden_of


@pytest.mark.parametrize("shape", sorted(SHAPE_COMMANDS))
def test_every_project_shape_validates_against_itself(tmp_path, shape, shape_goldens):
    """Capture on a copy, validate another copy with the same command: every shape ends with a
    pass, the same losses, and (for torchrun) ranks that agree."""
    port = tmp_path / "port"
    shutil.copytree(SHAPES / shape, port)
    command = SHAPE_COMMANDS[shape]
    res = _validate(port, shape_goldens(shape), command=command)
    report = report_of(port)
    for item_id in ("loss-curve", "golden-outputs"):
        assert item(report, item_id)["status"] == "pass", (item_id, item(report, item_id))
    steps = report["command"]["target"]["steps"]
    assert steps == 3
    if shape == "grad_accum":
        counts = [len(s) for s in report["comparison"]["golden"]["step_losses"]]
        assert counts == [4, 4, 4]
    if shape == "ddp_torchrun":
        assert item(report, "ddp-smoke")["status"] == "pass"
        assert report["command"]["target"]["processes"] == 2


def test_edit_sites_are_found_again_after_hand_edits_move_them(agnostic_port, golden):
    """Manual work in step 7 moves lines: each site is found again by its text, and a site whose
    line was edited away is reported as such, never checked on the wrong line."""
    def statuses():
        sites = item(report_of(agnostic_port), "migrated-code-executed")
        return sites, {(e["path"], e["line"]): e["message"].split(":")[0] for e in sites["evidence"] if e.get("line")}

    _validate(agnostic_port, golden, "--no-ddp")
    _, before = statuses()
    path = agnostic_port / "train.py"
    lines = path.read_text().splitlines(keepends=True)
    scaler = next(i for i, text in enumerate(lines, 1) if "GradScaler(" in text)
    lines.insert(1, "# notes added by hand\n# while fixing the manual items\n")
    path.write_text("".join(lines).replace("GradScaler(_accel_type or \"cuda\", enabled=args.amp)",
                                           "GradScaler(enabled=args.amp)  # fixed by hand"))
    _validate(agnostic_port, golden, "--no-ddp")
    sites, after = statuses()
    assert sites["status"] == "pass"
    expected = {(f, line + 2 if line > 1 else line): s for (f, line), s in before.items() if (f, line) != ("train.py", scaler)}
    assert after == expected
    assert any("changed by hand after the migration" in e["message"] and "GradScaler" in e["message"]
               for e in sites["evidence"])


def test_a_port_whose_only_edit_is_a_launcher_the_command_does_not_use(tmp_path):
    from vhelpers import write_tree

    original = write_tree(tmp_path / "o", {
        "train.py": """
            import torch
            model = torch.nn.Linear(4, 2)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            g = torch.Generator().manual_seed(0)
            for step in range(4):
                x = torch.randn(8, 4, generator=g)
                loss = model(x).pow(2).mean()
                opt.zero_grad(); loss.backward(); opt.step()
            """,
        "run.sh": "export CUDA_VISIBLE_DEVICES=0,1\npython train.py\n"})
    golden = tmp_path / "g.pt"
    assert invoke("validate", "capture", "--root", original, "--steps", "3", "-o", golden, "--", "python",
                  "train.py").exit_code == 0
    port = tmp_path / "port"
    assert invoke("migrate", original, "--style", "agnostic", "--output", port).exit_code == 0
    _validate(port, golden, command=["python", "train.py"])
    sites = item(report_of(port), "migrated-code-executed")
    assert sites["status"] == "skip" and "changed no Python code" in sites["summary"], sites


def test_the_exception_of_a_torchrun_rank_is_named():
    from ascend_migrate.validate.command import error_line, failure_site

    tail = ["[rank1]: Traceback (most recent call last):",
            '[rank1]:   File "/work/p/train.py", line 96, in <module>',
            "[rank1]:     assert gradient_accumulation_steps % ddp_world_size == 0",
            "[rank1]: AssertionError",
            "E1127 torch/distributed/elastic/multiprocessing/api.py: failed (exitcode: 1)"]
    assert error_line(tail) == "AssertionError"
    assert failure_site(tail, "/work/p") == "train.py:96: assert gradient_accumulation_steps % ddp_world_size == 0"


def test_the_command_runs_in_a_copy_and_writes_nothing_into_either_tree(tmp_path):
    """A script that saves `checkpoint.pth` and a log where it stands, and reads `../data`: the
    user's tree and the port stay as they were, and the sibling data folder is reached."""
    from vhelpers import write_tree

    write_tree(tmp_path / "data", {"x.txt": "0.5\n"})
    files = {"train.py": """
        import pathlib
        import torch
        scale = float(pathlib.Path("../data/x.txt").read_text())
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        g = torch.Generator().manual_seed(0)
        for step in range(4):
            loss = model(torch.randn(8, 4, generator=g) * scale).pow(2).mean()
            opt.zero_grad(); loss.backward(); opt.step()
            pathlib.Path("train.log").open("a").write(f"{loss.item()}\\n")
        torch.save(model.state_dict(), "checkpoint.pth")
        """}
    original = write_tree(tmp_path / "project", files)
    port = write_tree(tmp_path / "port", files)
    before = sorted(p.name for p in original.iterdir())
    golden = tmp_path / "g.pt"
    res = invoke("validate", "capture", "--root", original, "--steps", "4", "-o", golden, "--", "python", "train.py")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in original.iterdir()) == before
    _validate(port, golden, command=["python", "train.py"])
    assert item(report_of(port), "loss-curve")["status"] == "pass"
    assert not (port / "checkpoint.pth").exists() and not (port / "train.log").exists()


_LR_LINE = re.compile(r"""(?:\blr=|"--lr",[^\n]*?default=)(?P<value>\d[\d.e-]*)""")


@pytest.mark.parametrize("shape", sorted(SHAPE_COMMANDS))
def test_every_project_shape_fails_with_a_changed_learning_rate(tmp_path, shape, shape_goldens):
    """The negative control of each shape: the port's learning rate tripled on the command's path
    is a FAIL at the first loss after the first update."""
    port = tmp_path / "port"
    shutil.copytree(SHAPES / shape, port)
    changed = False
    for path in sorted(port.rglob("*.py")):
        text = path.read_text()
        m = _LR_LINE.search(text)
        if m:
            value = float(m.group("value")) * 3
            path.write_text(text[:m.start("value")] + repr(value) + text[m.end("value"):])
            changed = True
            break
    assert changed, shape
    res = _validate(port, shape_goldens(shape), "--no-ddp", command=SHAPE_COMMANDS[shape])
    assert res.exit_code == 1
    loss = item(report_of(port), "loss-curve")
    assert loss["status"] == "fail" and "loss diverges at step" in loss["summary"], loss["summary"]


def test_an_exception_in_every_torchrun_rank_is_named(tmp_path):
    """torchrun's own closing summary is about 40 lines: the ranks' exception above it is still
    what the failure says."""
    from vhelpers import write_tree

    root = write_tree(tmp_path / "p", {"t.py": """
        import torch.distributed as dist
        dist.init_process_group("gloo")
        raise RuntimeError("boom in rank %d" % dist.get_rank())
        """})
    res = invoke("validate", "capture", "--root", root, "--steps", "2", "-o", tmp_path / "g.pt", "--",
                 "torchrun", "--standalone", "--nproc_per_node=2", "t.py")
    assert res.exit_code == 1
    assert "RuntimeError: boom in rank" in res.output and "t.py:3" in res.output, res.output[-2000:]


def test_asking_for_an_npu_on_a_host_without_one_says_which_device_to_use(agnostic_port, golden):
    _validate(agnostic_port, golden, "--no-ddp", "--device", "npu:0")
    loss = item(report_of(agnostic_port), "loss-curve")
    assert loss["status"] == "fail", loss
    assert "trained on cpu, not on npu" in loss["summary"]
    assert "agnostic port with --device cpu and a transfer port with --device emulated-npu" in loss["summary"]
