"""Requests written the way users write them each load exactly the skill meant for them.

The router (skill_routing.py) reads nothing but the three descriptions: a request scores the
words of a skill's "Use when ..." clause that no other skill's clause uses. Porting anything
that exists goes to cuda-to-npu, new training code or training features on code already on the
NPU to npu-training, failures and host problems to npu-troubleshooting.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from skill_routing import description, route, tokens, trigger_clause, trigger_words  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SKILLS = ("cuda-to-npu", "npu-training", "npu-troubleshooting")

PORTING = [
    "Port my training script to Ascend 910B",
    "Port this CUDA repository to Ascend",
    "Can you migrate my model from CUDA to an Atlas 800 server?",
    "We need our inference service converted to run on 910B cards",
    "What does transfer_to_npu do with torch.cuda calls?",
    "Replace nccl with the right backend in this repo",
    "My project uses flash_attn and some .cu kernels, what breaks on Ascend?",
    "Make a migration plan for this codebase",
    "move this repo off our A100 GPUs onto huawei npus",
    "this trainer only runs on nvidia gpus, get it working with torch_npu",
    "convert train.py so it runs on a 910C instead of cuda",
    "we got a 310P box, can the existing inference code run there?",
    "How much work is porting this GPU model to Ascend?",
    "our code calls .cuda() everywhere, make it NPU compatible",
    "Migrate the DataParallel training in this project to NPU",
    "Port our vLLM serving setup to Ascend with vllm-ascend",
    "We have a TensorFlow 2 model on GPUs that must move to an Ascend cluster",
    "Port these Triton kernels and the CUDA extension to NPU",
    "take this github repo that trains on GPU and port it to ascend",
    "is our GPU codebase ready for Ascend? list what has to change",
]
NEW_TRAINING = [
    "Write a training script for ResNet on the NPU from scratch",
    "Switch my NPU training loop to bf16 with loss scaling",
    "How do I run multi-node training with torchrun on Ascend?",
    "Steps are slow on the NPU, how do I profile them?",
    "Saving and resuming checkpoints gives a different loss curve",
    "I need reproducibility between runs on the NPU",
    "Give me a scaffold to start a new torch_npu project",
    "Set up fp16 AMP with GradScaler on NPU",
    "add gradient accumulation to my NPU trainer",
    "enable determinism and HF32 settings for training on 8 NPUs",
]
ERRORS = [
    "import torch_npu fails with libhccl.so missing",
    "Error code EZ9999 appears when my job starts",
    "HCCL times out with EI0006 on two machines",
    "The driver and CANN versions disagree, what do I install?",
    "This operator falls back to the CPU and results are wrong",
    "My job hangs after the first step with ERR01007",
    "got error 500001 right after the first op",
    "libascendcl.so: cannot open shared object file",
    "the job crashes with a traceback from torch_npu on rank 3",
    "results are wrong only on the NPU, fine on CPU",
]
REQUESTS = ([(r, "cuda-to-npu") for r in PORTING] + [(r, "npu-training") for r in NEW_TRAINING]
            + [(r, "npu-troubleshooting") for r in ERRORS])


@pytest.fixture(scope="module")
def descriptions():
    return {name: description(REPO / "skills" / name) for name in SKILLS}


def test_the_request_set_covers_each_kind():
    assert len(PORTING) >= 20 and len(NEW_TRAINING) >= 10 and len(ERRORS) >= 10
    assert len({r for r, _ in REQUESTS}) == len(REQUESTS)


def test_each_skill_has_trigger_words_of_its_own(descriptions):
    for name, words in trigger_words(descriptions).items():
        assert len(words) >= 8, (name, words)


@pytest.mark.parametrize("request_text,expected", REQUESTS)
def test_request_selects_one_skill(descriptions, request_text, expected):
    chosen, scores = route(request_text, trigger_words(descriptions))
    assert chosen == expected, scores


def test_descriptions_lead_with_when_to_use(descriptions):
    """The listing may cut a description short: the trigger comes first."""
    for name, text in descriptions.items():
        assert text.startswith("Use when"), name
        assert tokens(trigger_clause(text)), name
