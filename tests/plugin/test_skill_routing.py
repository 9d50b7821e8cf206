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
# Requests as users write them in Chinese, for DeepSpeed, Megatron and MindSpeed projects, with
# plog files, for a host that has not failed yet and for the CANN environment; NaN and accuracy
# differences on code that runs belong to npu-troubleshooting whoever wrote the code.
PORTING_MORE = [
    "把这个CUDA训练项目迁移到昇腾910B上",
    "帮我把模型代码移植到华为昇腾NPU",
    "Port our DeepSpeed ZeRO-3 fine-tuning repo from A100s to Ascend",
    "We train with Megatron-LM on GPUs; move it to Ascend with MindSpeed",
    "migrate this Megatron pretraining codebase to 910B",
    "这个项目有自定义算子和.cu kernel，怎么迁移到昇腾？",
]
NEW_TRAINING_MORE = [
    "在NPU训练脚本里开启混合精度，bf16还是fp16？",
    "从零写一个昇腾上的训练脚本，要支持梯度累积",
    "add bf16 mixed precision and gradient accumulation to our NPU trainer",
]
ERRORS_MORE = [
    "昇腾上运行报错 EZ9999，怎么办",
    "训练时算子不支持，日志说 fall back to the CPU",
    "loss becomes NaN after a few hundred steps on the NPU",
    "the loss turns inf and accuracy drifts from the reference run on Ascend",
    "迁移完成后在昇腾上精度异常，loss对不上",
    "here is the plog from ~/ascend/log/debug, what failed?",
    "my DeepSpeed job hangs and HCCL times out on rank 2",
    "MindSpeed pretraining crashes with EI0006 on the second node",
    "we just got a new 910B server, check the host before we start anything",
    "how do I set up the CANN environment, where is set_env.sh?",
    "source set_env.sh every time? the CANN environment is missing in my shell",
]
REQUESTS = ([(r, "cuda-to-npu") for r in PORTING + PORTING_MORE]
            + [(r, "npu-training") for r in NEW_TRAINING + NEW_TRAINING_MORE]
            + [(r, "npu-troubleshooting") for r in ERRORS + ERRORS_MORE])


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


# Neighbours: each request holds a trigger word of the skill it must not load (migrate, DeepSpeed,
# mixed precision, 迁移, 精度...) and still loads the one meant for it.
NEIGHBOURS = [
    ("迁移完成后在昇腾上精度异常，loss对不上", "npu-troubleshooting", "cuda-to-npu"),
    ("my DeepSpeed job hangs and HCCL times out on rank 2", "npu-troubleshooting", "cuda-to-npu"),
    ("the migrated Megatron model crashes with EZ9999 in the plog", "npu-troubleshooting", "cuda-to-npu"),
    ("the loss becomes NaN after 200 steps with fp16", "npu-troubleshooting", "npu-training"),
    ("add gradient accumulation to our trainer already running on the NPU", "npu-training", "npu-troubleshooting"),
    ("migrate our fp16 GradScaler training script from CUDA to Ascend", "cuda-to-npu", "npu-training"),
    ("check which ops of this CUDA model break before we migrate it", "cuda-to-npu", "npu-troubleshooting"),
]


@pytest.mark.parametrize("request_text,expected,not_this", NEIGHBOURS)
def test_neighbour_request_does_not_load_the_skill_it_borrows_a_word_from(descriptions, request_text, expected,
                                                                       not_this):
    chosen, scores = route(request_text, trigger_words(descriptions))
    assert scores[not_this] > 0, ("not a neighbour of " + not_this, scores)
    assert chosen == expected, scores
