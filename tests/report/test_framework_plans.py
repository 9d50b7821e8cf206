"""A project that mixes PyTorch, TensorFlow and vLLM gets one report with a plan per framework."""
from __future__ import annotations

import json
import textwrap

import jsonschema
import pytest

from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.report.json_report import SCHEMA_PATH, to_json
from ascend_migrate.report.markdown import to_markdown
from ascend_migrate.report.terminal import summary
from ascend_migrate.scan.api import scan

KB = load_knowledge()

FILES = {
    "torch_part/train.py": """
        import torch
        model = torch.nn.Linear(4, 4).cuda()
        if __name__ == "__main__":
            torch.cuda.synchronize()
        """,
    "tf_part/train.py": """
        import tensorflow as tf
        gpus = tf.config.list_physical_devices("GPU")
        tf.config.experimental.set_memory_growth(gpus[0], True)
        """,
    "tf_part/requirements.txt": "tensorflow==2.15.0\n",
    "serve/app.py": """
        from vllm import LLM
        llm = LLM(model="org/model", quantization="gptq")
        """,
    "serve/requirements.txt": "vllm==0.23.0\n",
}


@pytest.fixture()
def report(tmp_path):
    for rel, text in FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return to_json(scan(tmp_path), KB)


def test_one_plan_per_framework_with_its_own_findings(report):
    plans = {p["key"]: p for p in report["frameworks"]}
    assert list(plans) == ["pytorch", "tensorflow", "vllm"]
    assert set(plans["tensorflow"]["by_rule"]) == {"TF001", "TF003", "TF017"}
    assert set(plans["vllm"]["by_rule"]) == {"VL001", "VL003"}
    assert "DV002" in plans["pytorch"]["by_rule"] and not any(r.startswith(("TF", "VL")) for r in plans["pytorch"]["by_rule"])
    assert sum(p["findings"] for p in plans.values()) == len([f for f in report["findings"] if f["rule"] != "FW001"])


def test_unsupported_version_is_a_blocker_up_front(report):
    tf = next(p for p in report["frameworks"] if p["key"] == "tensorflow")
    assert [(b["rule"], b["path"]) for b in tf["blockers"]] == [("TF017", "tf_part/requirements.txt")]
    assert "2.6.5" in tf["blockers"][0]["message"] and "1.15" in tf["blockers"][0]["message"]
    vllm = next(p for p in report["frameworks"] if p["key"] == "vllm")
    assert vllm["blockers"] == []  # 0.23.0 has a vllm-ascend release
    text = summary(report, KB)
    assert text.index("plan per framework") < text.index("category")
    assert "blocker tf_part/requirements.txt:1 TF017" in text
    md = to_markdown(report, KB)
    assert md.index("## Plan per framework") < md.index("## transfer_to_npu coverage")
    assert "### TensorFlow" in md and "### vLLM" in md and "### PyTorch" in md


def test_report_with_plans_matches_the_schema(report):
    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text()))


def test_single_framework_gets_the_generic_findings(tmp_path):
    (tmp_path / "train.py").write_text('import os\nimport tensorflow as tf\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n')
    plans = to_json(scan(tmp_path), KB)["frameworks"]
    assert [p["key"] for p in plans] == ["tensorflow"]
    assert "DV006" in plans[0]["by_rule"]


def test_a_framework_without_findings_gets_no_plan(tmp_path):
    """TensorFlow imported once inside a weight-conversion helper of a PyTorch project: named, but
    with nothing to port there is no six-step plan, and no per-framework section at all."""
    (tmp_path / "convert.py").write_text(
        "import torch\n\n\ndef from_tf(path):\n    import tensorflow as tf\n    return tf.train.load_checkpoint(path)\n"
        "\n\nif __name__ == '__main__':\n    torch.nn.Linear(2, 2).cuda()\n")
    report = to_json(scan(tmp_path, use_cache=False), KB)
    plans = {p["key"]: p for p in report["frameworks"]}
    assert plans["tensorflow"]["findings"] == 0 and plans["tensorflow"]["steps"] == []
    assert plans["pytorch"]["steps"]
    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text()))
    assert "plan per framework" not in summary(report, KB)
    assert "## Plan per framework" not in to_markdown(report, KB)


def test_an_idle_framework_next_to_busy_ones_is_one_line(report):
    text = summary(report, KB)
    assert "settle the version first" in text  # TensorFlow has work in the mixed project
    idle = dict(report, frameworks=[*report["frameworks"], {**report["frameworks"][1], "key": "other", "label": "Other",
                                                            "findings": 0, "steps": [], "blockers": []}])
    text = summary(idle, KB)
    assert "Other: no findings (first seen at" in text and text.count("settle the version first") == 1
    assert "### Other" in to_markdown(idle, KB) and "No findings: nothing to port." in to_markdown(idle, KB)
