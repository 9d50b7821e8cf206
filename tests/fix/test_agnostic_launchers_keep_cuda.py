"""An agnostic port's launch scripts still run on CUDA hosts, so they keep every CUDA setting:
a CUDA variable set in a shell word gets its Ascend twin beside it (same value), and device or
backend names on a command line (`--device cuda:0`, `nccl`) are left for a person instead of
being renamed. The transfer style, which runs on NPU hosts only, renames them."""
import subprocess

import pytest

from ascend_migrate.fix.rewrite import Options, rewrite_config
from ascend_migrate.knowledge.base import load_knowledge

KB = load_knowledge()

LAUNCH = """#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1  # two cards
CUDA_VISIBLE_DEVICES=0 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py --device cuda:0
docker run -e CUDA_VISIBLE_DEVICES="0,1" --env=CUDA_LAUNCH_BLOCKING=1 trainer:latest
export CUDA_VISIBLE_DEVICES=$(python pick_gpus.py)
python train.py CUDA_VISIBLE_DEVICES=0
torchrun --nproc_per_node=2 train.py --backend nccl
"""


def _port(style: str, text: str = LAUNCH, kind: str = "sh"):
    return rewrite_config(KB, "launch.sh", text, kind, Options(style=style))


def test_shell_assignments_gain_the_ascend_twin_and_keep_the_cuda_setting():
    out = _port("agnostic").text.splitlines()
    assert out[1] == "export CUDA_VISIBLE_DEVICES=0,1 ASCEND_RT_VISIBLE_DEVICES=0,1  # two cards"
    assert out[2] == ("CUDA_VISIBLE_DEVICES=0 ASCEND_RT_VISIBLE_DEVICES=0 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
                      " PYTORCH_NPU_ALLOC_CONF=expandable_segments:True python train.py --device cuda:0")
    assert out[3] == ('docker run -e CUDA_VISIBLE_DEVICES="0,1" -e ASCEND_RT_VISIBLE_DEVICES="0,1"'
                      " --env=CUDA_LAUNCH_BLOCKING=1 --env=ASCEND_LAUNCH_BLOCKING=1 trainer:latest")
    assert out[4:] == LAUNCH.splitlines()[4:]  # a computed value, a program argument, names on command lines


def test_what_the_agnostic_style_cannot_keep_for_both_hosts_is_listed():
    manual = {(c.start_line, c.rule) for c in _port("agnostic").manual}
    assert {(3, "DV001"), (5, "DV006"), (6, "DV006"), (7, "DS001")} <= manual


def test_the_transfer_style_renames():
    out = _port("transfer").text
    assert "export ASCEND_RT_VISIBLE_DEVICES=0,1  # two cards" in out
    assert "--device npu:0" in out and "--backend hccl" in out
    assert "CUDA_VISIBLE_DEVICES=0,1" not in out


def test_a_second_agnostic_pass_changes_nothing():
    once = _port("agnostic").text
    again = _port("agnostic", once)
    assert again.text == once


@pytest.mark.skipif(subprocess.run(["bash", "-c", "true"]).returncode != 0, reason="needs bash")
def test_the_twin_has_the_same_value_in_the_shell():
    line = _port("agnostic", 'export CUDA_VISIBLE_DEVICES="0, 1"\n').text
    out = subprocess.run(["bash", "-c", line + 'echo "$CUDA_VISIBLE_DEVICES|$ASCEND_RT_VISIBLE_DEVICES"'],
                         capture_output=True, text=True, check=True).stdout
    assert out == "0, 1|0, 1\n"


def test_yaml_env_tables_are_left_for_a_person_in_the_agnostic_style():
    text = 'env:\n  CUDA_VISIBLE_DEVICES: "0,1"\n'
    result = _port("agnostic", text, "yaml")
    assert result.text == text and [c.rule for c in result.manual] == ["DV006"]
