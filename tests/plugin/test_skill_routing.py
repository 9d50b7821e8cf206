"""The three skills' descriptions do not compete: their trigger words are disjoint, and sample
user requests each select exactly the skill meant for them (keyword-overlap heuristic, see
skill_routing.py)."""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from skill_routing import description, route, tokens, trigger_clause, trigger_words  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SKILLS = ("cuda-to-npu", "npu-training", "npu-troubleshooting")

REQUESTS = [
    ("Port this CUDA repository to Ascend", "cuda-to-npu"),
    ("Can you migrate my model from CUDA to an Atlas 800 server?", "cuda-to-npu"),
    ("We need our inference service converted to run on 910B cards", "cuda-to-npu"),
    ("What does transfer_to_npu do with torch.cuda calls?", "cuda-to-npu"),
    ("Replace nccl with the right backend in this repo", "cuda-to-npu"),
    ("My project uses flash_attn and some .cu kernels, what breaks on Ascend?", "cuda-to-npu"),
    ("Make a migration plan for this codebase", "cuda-to-npu"),
    ("Switch my training loop to bf16 with loss scaling on the NPU", "npu-training"),
    ("How do I run multi-node training with torchrun on Ascend?", "npu-training"),
    ("Steps are slow on the NPU, how do I profile them?", "npu-training"),
    ("Saving and resuming checkpoints gives a different loss curve", "npu-training"),
    ("I need reproducibility between runs on the NPU", "npu-training"),
    ("Give me a training script to start from for torch_npu", "npu-training"),
    ("Set up fp16 AMP with GradScaler on NPU", "npu-training"),
    ("import torch_npu fails with libhccl.so missing", "npu-troubleshooting"),
    ("Error code EZ9999 appears when my job starts", "npu-troubleshooting"),
    ("HCCL times out with EI0006 on two machines", "npu-troubleshooting"),
    ("The driver and CANN versions disagree, what do I install?", "npu-troubleshooting"),
    ("This operator falls back to the CPU and results are wrong", "npu-troubleshooting"),
    ("My job hangs after the first step with ERR01007", "npu-troubleshooting"),
]


@pytest.fixture(scope="module")
def descriptions():
    return {name: description(REPO / "skills" / name) for name in SKILLS}


def test_trigger_clauses_share_no_words(descriptions):
    clauses = {n: tokens(trigger_clause(d)) for n, d in descriptions.items()}
    for a, b in itertools.combinations(SKILLS, 2):
        assert not clauses[a] & clauses[b], (a, b, clauses[a] & clauses[b])
    assert all(len(words) >= 8 for words in clauses.values())


@pytest.mark.parametrize("request_text,expected", REQUESTS)
def test_request_selects_one_skill(descriptions, request_text, expected):
    chosen, scores = route(request_text, trigger_words(descriptions))
    assert chosen == expected, scores


def test_every_skill_is_chosen_by_some_request(descriptions):
    assert {e for _, e in REQUESTS} == set(SKILLS) and len(REQUESTS) >= 20
