from __future__ import annotations

from pathlib import Path

import pytest

from ascend_migrate.knowledge.loader import KnowledgeError
from ascend_migrate.validate.checklist import load_checklist, render_checklist_reference
from ascend_migrate.validate.static import CHECKS

REPO = Path(__file__).resolve().parents[2]


def test_checklist_covers_the_issue_items():
    ids = {i.id for i in load_checklist()}
    expected = {
        "backend-in-entry-points", "device-capability-guarded", "amp-adapted", "no-dataparallel",
        "no-nccl", "cuda-sources-handled", "cuda-packages-replaced", "launch-configs",
        "dataloader-workers", "package-init-files", "env-vars-in-code", "host-environment",
        "sync-before-timing", "pin-memory-workers", "train-eval-modes", "checkpoint-state",
        "golden-outputs", "loss-curve", "ddp-smoke",
    }
    assert expected <= ids


def test_every_static_item_has_a_registered_check():
    for item in load_checklist():
        if item.kind == "static":
            assert item.check in CHECKS, item.id
        if item.kind == "manual":  # a manual item's check only says whether the question arises
            assert item.check is None or item.check in CHECKS, item.id


def test_reference_is_generated_from_the_data():
    text = render_checklist_reference()
    for item in load_checklist():
        assert f"### {item.id}" in text
    assert "0.99" in text and "1e-05" in text
    committed = REPO / "references" / "validation-checklist.md"
    assert committed.read_text(encoding="utf-8") == text, "regenerate references/validation-checklist.md"


@pytest.mark.parametrize(
    "body, key, reason",
    [
        ("items:\n  - id: a\n    title: t\n    kind: sometimes\n    severity: error\n    how: h\n    fix: f\n",
         "items[0] (a).kind", "not one of"),
        ("items:\n  - id: a\n    title: t\n    kind: manual\n    severity: error\n    fix: f\n",
         "items[0] (a).how", "missing required key"),
        ("items:\n  - id: a\n    title: t\n    kind: static\n    severity: error\n    how: h\n    fix: f\n",
         "items[0] (a).check", "need a check"),
        ("items: [\n", "line", "invalid YAML"),
        ("items:\n  - {id: a, title: t, kind: manual, severity: error, how: h, fix: f}\n"
         "  - {id: a, title: t, kind: manual, severity: error, how: h, fix: f}\n", "items[1] (a).id", "duplicate"),
    ],
)
def test_malformed_checklist_gives_one_clear_error(tmp_path, body, key, reason):
    bad = tmp_path / "checklist.yaml"
    bad.write_text(body, encoding="utf-8")
    with pytest.raises(KnowledgeError) as err:
        load_checklist(bad)
    assert str(err.value).startswith(f"{bad}: {key}")
    assert reason in str(err.value)
