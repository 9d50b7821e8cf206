"""The worked example in references/entry-contract.md runs as documented: both entries capture
on CPU, the port validates against them, and the train entry passes the two-process DDP run."""
from __future__ import annotations

import re

from chainhelpers import REPO, am, load_report
import pytest

pytestmark = pytest.mark.needs_torch  # runs torch

DOC = REPO / "references" / "entry-contract.md"

CLASSIFIER = '''
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, dropout=0.1):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(8 * 16, 10)

    def forward(self, x):
        return self.head(self.drop(self.features(x).flatten(1)))
'''


def test_worked_example_runs_as_documented(tmp_path):
    text = DOC.read_text(encoding="utf-8")
    assert "--golden model.pt --no-ddp" in text and "--golden train.pt" in text  # the commands run below
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(CLASSIFIER)
    (project / "validate_entries.py").write_text(blocks[0])
    # the order the page gives: entry in the original, goldens, then the port is validated
    for spec, out, extra in (("validate_entries.py:validation_entry", "model.pt", ()),
                             ("validate_entries.py:train_steps", "train.pt", ("--steps", "3"))):
        res = am("validate", "capture", spec, "--root", project, "-o", tmp_path / out, *extra)
        assert res.exit_code == 0, res.output
    ported = tmp_path / "ported"
    res = am("migrate", project, "--output", ported)
    assert res.exit_code == 0, res.output
    res = am("validate", "run", ported, "--golden", tmp_path / "model.pt", "--no-ddp")
    assert res.exit_code == 0, res.output
    res = am("validate", "run", ported, "--golden", tmp_path / "train.pt", "--ddp-steps", "2")
    assert res.exit_code == 0, res.output
    items = {i["id"]: i for i in load_report(ported)["items"]}
    for item_id in ("golden-outputs", "loss-curve", "ddp-smoke"):
        assert items[item_id]["status"] == "pass", (item_id, items[item_id]["summary"])
