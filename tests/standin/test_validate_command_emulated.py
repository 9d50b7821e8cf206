"""A transfer port validated with the user's command on the emulated npu (`--device
emulated-npu`): a PASS labelled emulated everywhere, and negative controls that fail naming the
fault."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.emulated_npu import build as emu

HERE = Path(__file__).resolve().parent
TRAINER = HERE.parent / "fixtures" / "validate_commands" / "cuda_trainer"
ORIGINAL = ["python", "train.py", "--device", "cpu", "--epochs", "2", "--out", "{scratch}"]
PORT = ["python", "train.py", "--device", "cuda", "--epochs", "2", "--out", "{scratch}"]


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture()
def emulated(npu_standin, monkeypatch):
    monkeypatch.setenv(emu.BUILD_DIR_ENV, str(npu_standin.build_dir))
    monkeypatch.delenv("ASCEND_MIGRATE_EMULATED_NPU", raising=False)
    return npu_standin


@pytest.fixture(scope="module")
def golden(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("golden") / "golden.pt"
    res = invoke("validate", "capture", "--root", TRAINER, "--steps", "5", "-o", out, "--", *ORIGINAL)
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture()
def transfer_port(tmp_path) -> Path:
    port = tmp_path / "port"
    res = invoke("migrate", TRAINER, "--output", port)
    assert res.exit_code == 0, res.output
    return port


def _validate(port: Path, golden: Path, *extra: object):
    env = port.parent / "env.json"
    env.write_text("{}")
    res = invoke("validate", "run", port, "--device", "emulated-npu", "--golden", golden, "--environment", env,
                 *extra, "--", *PORT)
    return res, json.loads((port / ".ascend-migrate" / "validation-report.json").read_text())


def _item(report: dict, item_id: str) -> dict:
    return next(i for i in report["items"] if i["id"] == item_id)


def test_the_transfer_port_passes_on_the_emulated_npu_labelled_emulated(emulated, transfer_port, golden):
    res, report = _validate(transfer_port, golden)
    assert _item(report, "loss-curve")["status"] == "pass", _item(report, "loss-curve")
    assert all(s["abs_diff"] == 0 for s in _item(report, "loss-curve")["evidence"][0]["steps"])
    assert report["command"]["target"]["trained_on"].startswith("npu")
    assert report["command"]["same_command_line"] is False  # both lines are recorded
    assert report["command"]["golden"]["command"] == ORIGINAL and report["command"]["run"] == PORT
    sites = _item(report, "migrated-code-executed")
    assert sites["status"] == "pass"
    assert any(e.get("message", "").startswith("ran: inject") for e in sites["evidence"])
    assert _item(report, "ddp-smoke")["status"] == "pass", _item(report, "ddp-smoke")
    # labelled wherever the result shows
    assert report["provenance"]["device_kind"] == "emulated-npu"
    assert "emulated npu" in report["provenance"]["device"] and "emulated npu" in report["verdict_note"]
    assert "emulated npu" in res.output
    md = (transfer_port / ".ascend-migrate" / "validation-report.md").read_text()
    assert "emulated npu" in md


def test_dataparallel_left_under_the_device_test_fails_on_two_emulated_devices(emulated, transfer_port, golden):
    path = transfer_port / "train.py"
    text = path.read_text()
    path.write_text(text.replace(
        "    optimizer = torch.optim.AdamW(",
        "    if not distributed and torch.cuda.device_count() > 1:\n"
        "        model = nn.DataParallel(model)\n"
        "    optimizer = torch.optim.AdamW(", 1))
    res, report = _validate(transfer_port, golden, "--no-ddp")
    assert res.exit_code == 1
    loss = _item(report, "loss-curve")
    assert loss["status"] == "fail" and "DataParallel" in loss["summary"], loss["summary"]


def test_a_cuda_call_without_the_transfer_import_fails_naming_it(emulated, transfer_port, golden):
    path = transfer_port / "train.py"
    path.write_text(path.read_text().replace("from torch_npu.contrib import transfer_to_npu\n", ""))
    res, report = _validate(transfer_port, golden, "--no-ddp")
    assert res.exit_code == 1
    loss = _item(report, "loss-curve")
    assert loss["status"] == "fail"
    assert "cuda" in loss["summary"].lower() or "CUDA" in loss["summary"], loss


def test_a_port_command_that_never_reaches_the_npu_is_not_a_pass(emulated, transfer_port, golden):
    """The original's --device cpu on the port trains on the CPU: an emulated-npu verdict from it
    would prove nothing about the npu device."""
    env = transfer_port.parent / "env.json"
    env.write_text("{}")
    res = invoke("validate", "run", transfer_port, "--device", "emulated-npu", "--golden", golden,
                 "--environment", env, "--no-ddp", "--", *ORIGINAL)
    assert res.exit_code == 1
    report = json.loads((transfer_port / ".ascend-migrate" / "validation-report.json").read_text())
    loss = _item(report, "loss-curve")
    assert loss["status"] == "fail" and "trained on cpu, not on npu" in loss["summary"]
