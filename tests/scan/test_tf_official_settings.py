"""TensorFlow official-models settings: the absl flags of launch scripts, the same keys in
runtime configs and Python, and an all_reduce_alg of nccl that must not be rewritten to hccl
(TensorFlow accepts only nccl or hierarchical_copy there)."""
from __future__ import annotations


from ascend_migrate.fix.api import migrate
from ascend_migrate.scan.api import scan
from validate.vhelpers import write_tree




LAUNCH = """
    #!/bin/bash
    python3 official/vision/train.py --experiment=resnet_imagenet --config_file=configs/gpu.yaml
    python3 resnet_ctl_imagenet_main.py --distribution_strategy=mirrored --all_reduce_alg=nccl --num_gpus=8
    torchrun --nproc_per_node 8 ddp.py --backend nccl
"""
CONFIG = """
    runtime:
      distribution_strategy: mirrored
      all_reduce_alg: nccl
"""


def test_all_reduce_alg_is_a_tensorflow_finding_and_never_becomes_hccl(tmp_path):
    root = write_tree(tmp_path / "project", {"scripts/train.sh": LAUNCH, "configs/gpu.yaml": CONFIG})
    findings = scan(root, use_cache=False).findings
    on_lines = {(f.path, f.line, f.rule) for f in findings if f.rule in ("DS001", "TF019", "TF020")
                and "all_reduce_alg" in (f.snippet or "")}
    assert on_lines == {("scripts/train.sh", 3, "TF020"), ("configs/gpu.yaml", 3, "TF019")}, on_lines
    message = next(f.message for f in findings if f.rule == "TF019" and f.line == 3)
    assert "hccl` is no value" in message and "npu.distribute.all_reduce" in message

    for style in ("transfer", "agnostic"):
        out = tmp_path / f"out-{style}"
        migrate(root, style=style, output=out)
        script = (out / "scripts/train.sh").read_text(encoding="utf-8")
        config = (out / "configs/gpu.yaml").read_text(encoding="utf-8")
        assert "--all_reduce_alg=nccl" in script and "all_reduce_alg: nccl" in config
        # the PyTorch backend flag is renamed where the port runs on NPU hosts only; an agnostic
        # launcher still runs on CUDA hosts, so it keeps the name and lists it
        assert ("--backend hccl" if style == "transfer" else "--backend nccl") in script


def test_dtype_flag_counts_only_beside_official_models_flags(tmp_path):
    root = write_tree(tmp_path, {
        "tf/run.sh": "python3 main.py --distribution_strategy=one_device --dtype=fp16\n",
        "pt/run.sh": "deepspeed train.py --dtype fp16 --deepspeed ds.json\n",
    })
    tf020 = [(f.path, f.symbol) for f in scan(root, use_cache=False).findings if f.rule == "TF020"]
    assert tf020 == [("tf/run.sh", "--dtype=fp16")]


def test_readme_command_lines_are_documentation(tmp_path):
    root = write_tree(tmp_path, {"README.md": """
        Train on 8 GPUs:

            python3 resnet_ctl_imagenet_main.py --distribution_strategy=mirrored --dtype=fp16 --enable_xla
    """, "main.py": "import tensorflow as tf\n"})
    assert not [f for f in scan(root, use_cache=False).findings if f.rule in ("TF020", "TF019", "DS001")]
