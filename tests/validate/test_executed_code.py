"""A passing validation must have gone through ported code (agent-walk D10), and a flat golden
loss curve compares nothing (D11).

The fixture has the shape of a single-script CIFAR trainer: `main.py` picks the device, wraps
the model and trains at import time; the model lives in `models/`; the validation entry imports
only the model package. A transfer migration changes `main.py` alone, so the entry runs none of
the migrated code."""
from __future__ import annotations

import json

import pytest

from ascend_migrate.fix.api import migrate
from ascend_migrate.validate import runner
from ascend_migrate.validate.dynamic import capture
from ascend_migrate.validate.executed import changed_files, record_executed
from ascend_migrate.validate.metrics import constant_losses
from vhelpers import write_tree

pytestmark = pytest.mark.needs_torch

TRAINER = {
    "models/__init__.py": "from .tiny import TinyNet\n",
    "models/tiny.py": """
        import torch.nn as nn


        class TinyNet(nn.Module):
            def __init__(self, classes=4):
                super().__init__()
                self.body = nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 16), nn.ReLU(), nn.Linear(16, classes))

            def forward(self, x):
                return self.body(x)
        """,
    "main.py": """
        import argparse

        import torch
        import torch.nn as nn

        from models import TinyNet

        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, default=0.1)
        args = parser.parse_args()
        device = "cuda" if torch.cuda.is_available() else "cpu"
        net = TinyNet().to(device)
        if device == "cuda":
            torch.backends.cudnn.benchmark = True
        optimizer = torch.optim.SGD(net.parameters(), lr=args.lr)
        for step in range(100):
            x = torch.randn(8, 3, 4, 4, device=device)
            loss = nn.functional.cross_entropy(net(x), torch.randint(0, 4, (8,), device=device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
    "validate_entries.py": """
        import torch

        from models import TinyNet


        def train_steps(device="cpu", steps=3, seed=0):
            gen = torch.Generator().manual_seed(seed)
            net = TinyNet().to(device)
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            losses = []
            for _ in range(steps):
                x = torch.randn(8, 3, 4, 4, generator=gen).to(device)
                y = torch.randint(0, 4, (8,), generator=gen).to(device)
                loss = torch.nn.functional.cross_entropy(net(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            return {"losses": losses, "model": net}
        """,
}

# the same entry with the loss of a one-column output: cross-entropy over one class is always 0
FLAT_ENTRY = TRAINER["validate_entries.py"].replace("y = torch.randint(0, 4, (8,), generator=gen).to(device)",
                                                    "y = torch.zeros(8, dtype=torch.long).to(device)").replace(
    "net(x), y)", "net(x)[:, :1], y)")


def _item(report: dict, item_id: str) -> dict:
    return next(i for i in report["items"] if i["id"] == item_id)


def _validate(port, golden) -> dict:
    return runner.validate_project(port, runner.ValidateOptions(environment={}, golden=golden, ddp=False))


@pytest.fixture()
def trainer(tmp_path):
    original = write_tree(tmp_path / "original", TRAINER)
    port = tmp_path / "port"
    migrate(original, style="transfer", output=port)
    golden = tmp_path / "train.pt"
    capture("validate_entries.py:train_steps", original, "cpu", golden, steps=3)
    return original, port, golden


def test_the_migration_changed_only_the_script(trainer):
    _, port, _ = trainer
    found = changed_files(port)
    assert found is not None
    assert [f for f in found[1] if f.endswith(".py")] == ["main.py"]


def test_an_entry_that_skips_the_migrated_code_is_not_a_pass(trainer):
    _, port, golden = trainer
    report = _validate(port, golden)
    item = _item(report, "migrated-code-executed")
    assert item["status"] == "manual-pending"
    assert "none of the 1 changed Python file(s) (main.py)" in item["summary"]
    assert "validate with the project's own command" in item["summary"] and "--confirm" not in item["summary"]
    assert report["verdict"] == "fail"
    # the numbers themselves matched: it is only the coverage that is missing
    assert _item(report, "loss-curve")["status"] == "pass"
    executed = report["comparison"]["target"]["executed_files"]
    assert "models/tiny.py" in executed and "main.py" not in executed
    missed = [e for e in item["evidence"] if e.get("path") == "main.py"]
    assert missed and "never executed" in missed[0]["message"]


def test_a_recorded_confirmation_never_clears_the_item(trainer):
    """Only evidence clears an automatic item: a confirmation on record (an older version wrote
    them) is ignored and the report says so."""
    _, port, golden = trainer
    state = port / ".ascend-migrate" / "validation-confirmations.json"
    state.write_text(json.dumps({"schema": "ascend-migrate/validation-confirmations/1", "confirmed": {
        "migrated-code-executed": {"at": "2026-01-01T00:00:00+00:00", "note": "ok"}}}))
    report = _validate(port, golden)
    assert _item(report, "migrated-code-executed")["status"] == "manual-pending"
    assert report["verdict"] == "fail"
    assert report["confirmations_refused"][0]["id"] == "migrated-code-executed"


def test_an_entry_through_a_changed_module_passes(trainer, tmp_path):
    _, port, golden = trainer
    # the model module was changed too (a manual fix, listed in the change list)
    path = port / "ascend-migrate-changes.json"
    data = json.loads(path.read_text())
    data["changes"].append({"file": "models/tiny.py", "start_line": 5, "end_line": 5, "rule": "DV001",
                            "operation": "manual", "message": "device", "safety": "manual", "new_line": 0})
    path.write_text(json.dumps(data))
    (port / ".ascend-migrate" / "last-changes.json").unlink()  # the root copy is the one read now
    item = _item(_validate(port, golden), "migrated-code-executed")
    assert item["status"] == "pass"
    assert item["summary"].startswith("the entry executed 1 of 2 changed Python file(s); not executed: main.py")


def test_without_a_change_list_the_item_is_not_decided(trainer):
    _, port, golden = trainer
    (port / "ascend-migrate-changes.json").unlink()
    (port / ".ascend-migrate" / "last-changes.json").unlink()
    item = _item(_validate(port, golden), "migrated-code-executed")
    assert item["status"] == "skip" and "no change list" in item["summary"]


def test_the_entry_module_itself_does_not_count(tmp_path):
    project = write_tree(tmp_path / "p", {"validate_entries.py": TRAINER["validate_entries.py"],
                                         "models/__init__.py": TRAINER["models/__init__.py"],
                                         "models/tiny.py": TRAINER["models/tiny.py"]})
    golden = tmp_path / "g.pt"
    capture("validate_entries.py:train_steps", project, "cpu", golden, steps=2)
    (project / "ascend-migrate-changes.json").write_text(json.dumps({"changes": [
        {"file": "validate_entries.py", "start_line": 1, "end_line": 1, "rule": "DV001", "operation": "replace"}]}))
    item = _item(_validate(project, golden), "migrated-code-executed")
    assert item["status"] == "skip" and "no changed Python module" in item["summary"]


def test_recording_sees_imported_and_called_files_only(tmp_path):
    project = write_tree(tmp_path / "p", {"a.py": "def f():\n    return 1\n", "b.py": "X = 2\n",
                                         "c.py": "def g():\n    return 3\n"})
    import sys

    sys.path.insert(0, str(project))
    try:
        with record_executed(project) as seen:
            import a  # noqa: F401
            import b  # noqa: F401
            a.f()
        with record_executed(project) as again:  # a second recording starts from nothing
            import c

            c.g()
    finally:
        sys.path.remove(str(project))
        for name in ("a", "b", "c"):
            sys.modules.pop(name, None)
    assert seen.files() == ["a.py", "b.py"]
    assert again.files() == ["c.py"]


def test_recording_leaves_tracers_alone(tmp_path):
    """A debugger or coverage tool that traces the validation keeps tracing."""
    import sys

    def outer(frame, event, arg):
        return None

    previous = sys.gettrace()
    sys.settrace(outer)
    try:
        with record_executed(tmp_path):
            pass
        assert sys.gettrace() is outer
    finally:
        sys.settrace(previous)


def test_modules_imported_before_the_run_do_not_count(tmp_path):
    import sys

    project = write_tree(tmp_path / "p", {"early.py": "Y = 1\n", "late.py": "Z = 2\n"})
    sys.path.insert(0, str(project))
    try:
        import early  # noqa: F401

        with record_executed(project) as seen:
            import early  # noqa: F401,F811  (already imported: nothing runs)
            import late  # noqa: F401
    finally:
        sys.path.remove(str(project))
        for name in ("early", "late"):
            sys.modules.pop(name, None)
    assert seen.files() == ["late.py"]


def test_constant_losses_are_named():
    assert constant_losses([-0.0, -0.0, 0.0, -0.0]) == "every golden loss is -0 (4 steps)"
    assert constant_losses([1.5, 1.5]) is not None
    assert constant_losses([2.3, 2.29]) is None
    assert constant_losses([0.0]) is None  # one step says nothing about movement


def test_a_flat_golden_loss_curve_is_not_confirmed(tmp_path):
    files = dict(TRAINER, **{"validate_entries.py": FLAT_ENTRY})
    project = write_tree(tmp_path / "p", files)
    golden = tmp_path / "flat.pt"
    saved = capture("validate_entries.py:train_steps", project, "cpu", golden, steps=3)
    assert all(x == 0.0 for x in saved.losses)
    report = _validate(project, golden)
    item = _item(report, "loss-curve")
    assert item["status"] == "manual-pending"
    assert "every golden loss is" in item["summary"] and "checks nothing" in item["summary"]
    assert any(r.startswith("loss-curve undecided") for r in report["reasons"])


def test_capture_warns_about_a_flat_loss(tmp_path):
    from click.testing import CliRunner

    from ascend_migrate.cli import cli

    files = dict(TRAINER, **{"validate_entries.py": FLAT_ENTRY})
    project = write_tree(tmp_path / "p", files)
    res = CliRunner().invoke(cli, ["validate", "capture", "validate_entries.py:train_steps", "--root", str(project),
                                   "-o", str(tmp_path / "g.pt"), "--steps", "3"])
    assert res.exit_code == 0
    assert "every golden loss is" in res.output and "capture again" in res.output


def test_a_replay_carries_no_confirmation(tmp_path):
    """A model skill records the items its port's person decided; a replay names them to be
    decided again and records nothing: a decision holds only for the tree and host it was made on."""
    from ascend_migrate.replay import _decisions_to_make_again
    from ascend_migrate.validate.runner import load_confirmations

    target = tmp_path / "fresh"
    target.mkdir()
    said: list[str] = []
    _decisions_to_make_again([{"id": "cuda-sources-unbuilt", "note": "built by the Makefile only"}], said.append)
    assert load_confirmations(target) == {}
    assert not (target / ".ascend-migrate").exists()
    assert any("to be decided again here: cuda-sources-unbuilt" in line for line in said)
