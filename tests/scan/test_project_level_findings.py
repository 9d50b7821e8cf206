"""Findings decided for the whole tree: a vLLM project is told once to pair vllm-ascend (not at
every import), and a device-agnostic port is not told about transfer_to_npu, which it does not use."""
from __future__ import annotations

from pathlib import Path

from ascend_migrate.scan.api import scan
from validate.vhelpers import write_tree

PRELUDE = '''
import torch
import torch.distributed as dist

# The host's accelerator (cuda, npu, xpu, ...), or None without one; tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_device_type = _accel_type or "cpu"
'''
BODY = '''

def main():
    torch.cuda.manual_seed_all(0)
    dist.init_process_group(backend=dist.get_default_backend_for_device(_device_type))


if __name__ == "__main__":
    main()
'''




def test_vllm_imports_are_one_project_level_finding(tmp_path):
    root = write_tree(tmp_path, {
        "serve/engine.py": "import vllm\nfrom vllm import LLM, SamplingParams\n\nllm = LLM(model='m')\n",
        "serve/client.py": "from vllm.sampling_params import SamplingParams\n",
        "rl/sync.py": "import vllm.distributed\n",
    })
    findings = scan(root, use_cache=False).findings
    assert not [f for f in findings if f.rule == "PK002"]
    project = [f for f in findings if f.rule == "FW001" and f.symbol == "vLLM"]
    assert len(project) == 1 and "vllm-ascend" in project[0].message and "VL008" in project[0].message


def _messages(root: Path) -> dict[str, str]:
    return {f.rule: f.message for f in scan(root, use_cache=False).findings if f.rule in ("FW001", "DS004", "CU001")}


def test_an_agnostic_port_is_not_told_about_transfer_to_npu(tmp_path):
    agnostic = _messages(write_tree(tmp_path / "agnostic", {"train.py": PRELUDE + BODY}))
    assert set(agnostic) == {"FW001", "DS004", "CU001"}
    assert all("device-agnostic port" in m for m in agnostic.values()), agnostic
    assert "when transfer_to_npu is imported" not in agnostic["CU001"]
    assert "transfer_to_npu rewrites its cuda/nccl arguments" not in agnostic["DS004"]

    # the same code with transfer_to_npu imported, and a CUDA original: the transfer wording
    transfer = _messages(write_tree(tmp_path / "transfer", {
        "train.py": "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n" + PRELUDE + BODY}))
    original = _messages(write_tree(tmp_path / "original", {"train.py": PRELUDE.replace("_accel_type = ", "accel = ") + BODY}))
    for messages in (transfer, original):
        assert "when transfer_to_npu is imported" in messages["CU001"]
        assert "transfer_to_npu" in messages["FW001"] and "device-agnostic" not in messages["FW001"]


def test_the_pytorch_plan_of_an_agnostic_port_follows_its_style(tmp_path):
    from ascend_migrate.report.json_report import to_json

    files = {"train.py": PRELUDE + BODY, "convert.py": "import tensorflow as tf\ntf.config.list_physical_devices('GPU')\n"}
    agnostic = to_json(scan(write_tree(tmp_path / "agnostic", files), use_cache=False))
    plan = next(p for p in agnostic["frameworks"] if p["key"] == "pytorch")
    assert plan["steps"] and "device-agnostic port" in plan["guidance"]
    assert any("--style agnostic" in step for step in plan["steps"])
    assert not any("transfer_to_npu imports at the entry points" in step for step in plan["steps"])

    files["train.py"] = "from torch_npu.contrib import transfer_to_npu\n" + files["train.py"]
    transfer = to_json(scan(write_tree(tmp_path / "transfer", files), use_cache=False))
    plan = next(p for p in transfer["frameworks"] if p["key"] == "pytorch")
    assert any("transfer_to_npu imports at the entry points" in step for step in plan["steps"])
    assert "device-agnostic" not in plan["guidance"]
