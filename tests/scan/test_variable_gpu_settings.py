"""GPU choices whose value is only known at run time: a Ray request forwarded by a wrapper the
scan cannot name, TensorFlow device names built in helpers, and official-models flags filled
in from shell variables. Each is checked through the whole scan (walk, prefilter, analysis)."""
from __future__ import annotations

from ascend_migrate.scan.api import scan
from validate.vhelpers import write_tree

DEVICE_HELPER = """
    import tensorflow as tf


    def device_for(layer, num_gpus):
        return "/gpu:%d" % (layer % num_gpus)


    def embedding_device():
        return "/gpu:0"


    def pinned(x):
        with tf.device("/gpu:1"):
            return tf.identity(x)
"""
TORCH_NOTES = '''
    """Moving from TensorFlow: what was "/gpu:0" there is torch.device("cuda", 0) here."""
    import torch

    OLD_NAME = "/gpu:0"
'''
WORKERS = """
    import ray


    def start(make_actor, group, share, metrics):
        worker = make_actor(placement_group=group, num_gpus=share)
        metrics.log(num_gpus=share)
        return worker
"""
LAUNCH = """
    #!/bin/bash
    python3 train.py --distribution_strategy=$STRATEGY --num_gpus=${NUM_GPUS} --dtype="$DTYPE"
"""
# `--num_gpus` and `--dtype` belong to other tools too: without an official-models flag in the
# same script they are not TensorFlow settings
DEEPSPEED = """
    #!/bin/bash
    deepspeed --num_gpus=$NUM_GPUS finetune.py --dtype=$DTYPE
"""


def _by_file(root):
    out: dict[str, list] = {}
    for f in scan(root, use_cache=False).findings:
        out.setdefault(f.path, []).append(f)
    return out


def test_tensorflow_device_names_are_reported_where_built_and_pins_once(tmp_path):
    root = write_tree(tmp_path / "p", {"nmt_like/helpers.py": DEVICE_HELPER, "notes.py": TORCH_NOTES})
    found = _by_file(root)
    rows = sorted((f.line, f.rule, f.symbol) for f in found["nmt_like/helpers.py"] if f.rule.startswith("TF"))
    assert rows == [
        (5, "TF021", '"/gpu:%d" % (layer % num_gpus)'),
        (9, "TF021", '"/gpu:0"'),
        (13, "TF004", "tensorflow.device"),
    ], rows
    assert not [f for f in found.get("notes.py", []) if f.rule == "TF021"]


def test_a_forwarded_ray_request_needs_a_scheduling_keyword_beside_it(tmp_path):
    root = write_tree(tmp_path / "p", {"workers.py": WORKERS})
    rows = [(f.line, f.symbol) for f in _by_file(root)["workers.py"] if f.rule == "VL009"]
    assert rows == [(5, "make_actor")], rows


def test_flags_filled_in_from_shell_variables(tmp_path):
    root = write_tree(tmp_path / "p", {"run.sh": LAUNCH, "ds.sh": DEEPSPEED})
    found = _by_file(root)
    rows = sorted((f.line, f.symbol, f.severity) for f in found["run.sh"] if f.rule == "TF020")
    assert rows == [
        (2, "--distribution_strategy=$STRATEGY", "info"),
        (2, '--dtype="$DTYPE', "info"),
        (2, "--num_gpus=${NUM_GPUS}", "warning"),
    ], rows
    assert not [f for f in found.get("ds.sh", []) if f.rule == "TF020"]
