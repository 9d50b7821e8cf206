"""`validate run --device emulated-npu`: the operators the port sends to the device, recorded in its
run, judged for a torch_npu release: the fallbacks (per step, where first dispatched), those the
CPU cannot run either and float64 on the device, in the JSON and markdown reports, the terminal
summary and the per-model skill; `--no-operators` and runs without the emulated npu say "not
checked"."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.emulated_npu import build as emu
from ascend_migrate.knowledge.npu_ops import FALLBACK_WARNING

pytestmark = pytest.mark.needs_torch

PROJECT = Path(__file__).resolve().parent / "projects" / "ops_validate"
COMMAND = ["python", "train.py"]


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
    res = invoke("validate", "capture", "--root", PROJECT, "--steps", "3", "-o", out, "--", *COMMAND)
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture()
def port(tmp_path) -> Path:
    out = tmp_path / "port"
    res = invoke("migrate", PROJECT, "--output", out)
    assert res.exit_code == 0, res.output
    return out


def validate(port: Path, golden: Path, device: str, *extra: object):
    env = port.parent / "env.json"
    env.write_text("{}")
    res = invoke("validate", "run", port, "--device", device, "--golden", golden, "--environment", env, "--no-ddp",
                 *extra, "--", *COMMAND)
    report = json.loads((port / ".ascend-migrate" / "validation-report.json").read_text())
    return res, report


def test_fallbacks_of_the_target_release_in_every_place_the_result_shows(emulated, port, golden, tmp_path):
    res, report = validate(port, golden, "emulated-npu", "--torch-npu", "2.2.0")
    assert report["verdict"] == "pass", report["reasons"]
    ops = report["operators"]
    assert ops["checked"] is True and ops["release"] == "2.2.0" and ops["release_known"] is True
    assert ops["steps"] == 3
    rows = {r["op"]: r for r in ops["fallback"]}
    assert set(rows) == {"aten::isin.Tensor_Tensor_out", "aten::_scaled_dot_product_efficient_attention"}
    isin = rows["aten::isin.Tensor_Tensor_out"]
    assert isin["dispatched_as"] == ["aten::isin.Tensor_Tensor"] and isin["dtypes"] == ["Long"]
    assert isin["count"] >= 3 and isin["per_step"] >= 1 and isin["cpu_kernel"] is True and "fails" not in isin
    source = (port / "train.py").read_text().splitlines()  # the port's lines (the migration added imports)
    line = next(i for i, text in enumerate(source, 1) if "torch.isin(" in text)
    assert isin["site"] == f"train.py:{line}"
    attention = rows["aten::_scaled_dot_product_efficient_attention"]
    assert attention["cpu_kernel"] is False and attention["site"].endswith("(fast_attention)")
    assert ops["cpu_cannot_run"] == ["aten::_scaled_dot_product_efficient_attention"]
    assert any("Double" in w["dtypes"] for w in ops["wide_dtypes"])
    assert ops["supported"] > 5 and "not checked" in ops["not_checked"]
    assert report["options"]["torch_npu"] == "2.2.0" and report["options"]["operators"] is True
    # the device printed torch_npu's own warning for the release, in the run's relayed output
    assert FALLBACK_WARNING.format(op="aten::isin.Tensor_Tensor_out") in res.output
    # terminal summary
    assert "operators on the NPU host (torch_npu 2.2.0, exact): 2 run on the CPU" in res.output
    assert f"aten::isin.Tensor_Tensor_out  " in res.output and f"first at train.py:{line}" in res.output
    assert "FAILS: no CPU kernel either" in res.output
    # markdown report
    md = (port / ".ascend-migrate" / "validation-report.md").read_text()
    section = md[md.index("## Operators on the NPU host"):md.index("## Environment")]
    assert "`aten::isin.Tensor_Tensor_out`" in section and "no: the run fails on the NPU host" in section
    assert "Double" in section
    # the per-model skill (a skill from an emulated run is written only as not validated on an NPU)
    res = invoke("skill", port, "--model", "opsval", "--out-root", tmp_path / "skills", "--original", PROJECT,
                 "--allow-cpu")
    assert res.exit_code == 0, res.output
    skill = (tmp_path / "skills" / "opsval" / "SKILL.md").read_text()
    part = skill[skill.index("### Operators torch_npu runs on the CPU"):]
    assert "torch_npu `2.2.0`" in part and "`aten::_scaled_dot_product_efficient_attention`" in part
    assert f"train.py:{line}" in part and "no: the run fails on the NPU host" in part


def test_the_default_release_is_the_newest_with_data_and_has_isin(emulated, port, golden):
    from ascend_migrate.knowledge.npu_ops import ops_versions

    res, report = validate(port, golden, "emulated-npu")
    ops = report["operators"]
    assert ops["release"] == ops_versions()[-1] and ops["release_choice"] == "newest release with data"
    assert [r["op"] for r in ops["fallback"]] == ["aten::_scaled_dot_product_efficient_attention"]
    assert "isin.Tensor_Tensor_out" not in res.output.split("verdict:")[-1]


def test_turned_off_or_not_on_the_emulated_npu_says_not_checked(emulated, port, golden):
    res, report = validate(port, golden, "emulated-npu", "--no-operators")
    assert report["verdict"] == "pass"
    assert report["operators"] == {"checked": False, "why": "turned off (--no-operators)"}
    assert "operators on the NPU host: not checked (turned off (--no-operators))" in res.output
    md = (port / ".ascend-migrate" / "validation-report.md").read_text()
    assert "Not checked: turned off (--no-operators)." in md


def test_an_entry_run_records_its_operators_too(emulated, tmp_path):
    import shutil

    project = tmp_path / "entry"
    shutil.copytree(PROJECT.parent / "ops_entry", project)
    golden = tmp_path / "golden.pt"
    res = invoke("validate", "capture", "model_entry.py:validation_entry", "--root", project, "-o", golden)
    assert res.exit_code == 0, res.output
    (tmp_path / "env.json").write_text("{}")
    res = invoke("validate", "run", project, "--device", "emulated-npu", "--golden", golden, "--torch-npu", "2.2.0",
                 "--environment", tmp_path / "env.json", "--no-ddp", "--report-dir", tmp_path / "out")
    report = json.loads((tmp_path / "out" / "validation-report.json").read_text())
    assert report["verdict"] == "pass", report["reasons"]
    ops = report["operators"]
    assert ops["checked"] is True and ops["release"] == "2.2.0"
    line = next(i for i, text in enumerate((project / "model_entry.py").read_text().splitlines(), 1)
                if "torch.isin(" in text)
    assert [(r["op"], r["site"]) for r in ops["fallback"]] == [
        ("aten::isin.Tensor_Tensor_out", f"model_entry.py:{line} (forward)")]
    assert "per_step" not in ops["fallback"][0]  # a model entry makes no steps
    assert "comparison" in report and "operators" not in (report["comparison"] or {}).get("target", {})


def test_recurrent_layers_are_recorded_as_the_layer_torch_npu_sees(npu_standin, tmp_path):
    """The device runs LSTM/GRU/RNN through CPU's own code on host copies; the layer's operator is
    still recorded once per call, forward under autograd and in inference mode."""
    script = tmp_path / "rnn.py"
    script.write_text(
        "import json, torch, torch_npu\n"
        "torch_npu._C.record_ops(True)\n"
        "lstm = torch.nn.LSTM(4, 8).to('npu')\n"
        "out, _ = lstm(torch.randn(5, 2, 4, device='npu'))\n"
        "out.sum().backward()\n"
        "with torch.inference_mode():\n"
        "    torch.nn.GRU(4, 8).to('npu')(torch.randn(5, 2, 4, device='npu'))\n"
        "print('REC ' + json.dumps(torch_npu._C.record_ops(False)))\n")
    proc = npu_standin.run([str(script)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    recorded = json.loads(next(l for l in proc.stdout.splitlines() if l.startswith("REC "))[4:])
    assert sum(recorded["aten::lstm.input"].values()) == 1 and "Float" in next(iter(recorded["aten::lstm.input"]))
    assert sum(recorded["aten::gru.input"].values()) == 1
