"""A re-scan after a few edits patches the last report (scan/report_ledger.py): whatever the
edit, the report is the one a scan without any cache writes, byte for byte but the scan time;
edits that only change what is found in the edited files are patched without a full scan,
and anything that reaches other files' parts of the report runs one."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.scan import engine
from ascend_migrate.scan import report_ledger as ledgers
from ascend_migrate.scan import report_snapshot as snapshots
from scan.report_cli import isolate, scan_cli, without_time

TRAIN = '''import argparse
import torch
import torch.distributed as dist
from models.net import Net


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="nccl")
    args = parser.parse_args()
    dist.init_process_group(args.backend)
    model = Net().cuda()
    print(torch.cuda.get_device_capability())


if __name__ == "__main__":
    main()
'''
NET = '''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x.to("cuda:0"))
'''
DATA = '''import torch


def loader(ds, bs):
    return torch.utils.data.DataLoader(ds, batch_size=bs, pin_memory=True)
'''
RUN = "export NCCL_DEBUG=INFO\ntorchrun --nproc_per_node=2 train.py\n"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "proj"
    (root / "models").mkdir(parents=True)
    (root / "train.py").write_text(TRAIN)
    (root / "models" / "net.py").write_text(NET)
    (root / "models" / "data.py").write_text(DATA)
    (root / "run.sh").write_text(RUN)
    (root / "README.md").write_text("# demo\n\n```\nbash run.sh\n```\n")
    return root


def _scan(root: Path, *args: str) -> str:
    return scan_cli(root, *args)[1]


_without_time = without_time


@pytest.fixture
def rescan(monkeypatch) -> Callable[..., tuple[str, int]]:
    """Scan a tree with the cache and without it, require the same report (but the time), and
    tell how many full scans the cached scan ran (0: it was patched, or its report stored)."""
    full: list = []
    real = engine.run_scan
    monkeypatch.setattr(engine, "run_scan", lambda *a, **k: full.append(a) or real(*a, **k))

    def run(root: Path, fmt: str = "json", *args: str) -> tuple[str, int]:
        full.clear()
        cached = _scan(root, "--format", fmt, *args)
        runs = len(full)
        fresh = _scan(root, "--format", fmt, "--no-cache", *args)
        assert _without_time(fmt, cached) == _without_time(fmt, fresh)
        return cached, runs

    return run


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _replace(old: str, new: str) -> Callable[[Path], None]:
    def edit(path: Path) -> None:
        data = path.read_text()
        assert old in data
        path.write_text(data.replace(old, new))
    return edit


# (what, file, edit, patched without a full scan)
EDITS = [
    ("a finding added in a library module", "models/data.py",
     lambda p: _append(p, "\n\ndef pin(x):\n    return x.cuda(non_blocking=True)\n"), True),
    ("a finding removed, same size", "models/net.py", _replace('"cuda:0"', '"cpu:00"'), True),
    ("an edit below the framework's first import", "models/data.py",
     lambda p: _append(p, "\n\ndef sync():\n    torch.cuda.synchronize()\n"), True),
    ("an edit to the entry's body, same lines", "train.py", _replace("Net().cuda()", "Net().npu() "), True),
    ("a launch script's setting", "run.sh", _replace("NCCL_DEBUG=INFO", "NCCL_DEBUG=WARN"), True),
    ("touched, not changed", "models/net.py", lambda p: os.utime(p), True),
    ("lines moved in a library module", "models/net.py",
     lambda p: p.write_text("# the network\n\n" + p.read_text() + "\n\ndef h(x):\n    return x.cuda()\n"),
     True),
    ("lines moved above a framework's first import", "models/data.py", lambda p: p.write_text("# data\n" + p.read_text()),
     False),
    ("lines moved in an entry candidate", "train.py", lambda p: p.write_text("# trainer\n" + p.read_text()), False),
    ("a line moved in a launch script", "run.sh", lambda p: p.write_text("#!/bin/bash\n" + p.read_text()), False),
    ("a new framework imported", "models/data.py", lambda p: p.write_text("import tensorflow as tf\n" + p.read_text()), False),
    ("the main guard moved", "train.py", _replace("def main():", "# entry\n\n\ndef main():"), False),
    ("a new import between modules", "models/net.py", lambda p: p.write_text("from models import data\n" + p.read_text()), False),
    ("a syntax error", "models/net.py", lambda p: _append(p, "\ndef broken(:\n"), None),
]


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("what, rel, edit, patched", EDITS, ids=[e[0] for e in EDITS])
def test_every_edit_gives_the_fresh_scans_report(project, rescan, fmt, what, rel, edit, patched):
    first, _ = rescan(project, fmt)
    edit(project / rel)
    after, runs = rescan(project, fmt)
    if patched is not None:
        assert runs == (0 if patched else 1), what
    if patched and what != "touched, not changed" and fmt == "json":
        assert _without_time(fmt, after) != _without_time(fmt, first)  # the edit shows
    again = _scan(project, "--format", fmt)  # and the next re-scan of the unchanged tree
    assert _without_time(fmt, again) == _without_time(fmt, after)


def test_a_run_of_edits_stays_exact(project, rescan):
    """One edit after another, each patched from the ledger the previous one wrote."""
    rescan(project)
    steps = [("models/data.py", "\n\ndef a(x):\n    return x.cuda()\n"),
             ("models/net.py", "\n\ndef b():\n    return torch.cuda.device_count()\n"),
             ("models/data.py", "\n\ndef c(x):\n    return x.to('cuda')\n"),
             ("train.py", "\n# trailing comment\n")]
    for rel, text in steps:
        _append(project / rel, text)
        report, runs = rescan(project)
        assert runs == 0, rel
    assert json.loads(report)["counts"]["findings"] >= 8


def test_options_are_honoured(project, rescan):
    options = ("--select", "DV", "--ignore", "DV002")
    rescan(project, "json", *options)
    _append(project / "models" / "data.py", "\n\ndef d(x):\n    return x.to('cuda:1')\n")
    text, runs = rescan(project, "json", *options)
    report = json.loads(text)
    assert runs == 0 and report["findings"] and {f["rule"][:2] for f in report["findings"]} == {"DV"}


def test_an_agnostic_port_keeps_its_wording(project, rescan, tmp_path):
    """The device-agnostic wording depends on every file; an edit elsewhere keeps it exact."""
    out = tmp_path / "port"
    res = CliRunner().invoke(cli, ["migrate", str(project), "--style", "agnostic", "--output", str(out)])
    assert res.exit_code in (0, 1), res.output
    rescan(out)
    _append(out / "models" / "data.py", "\n\ndef e(x):\n    return x.cuda()\n")
    assert rescan(out)[1] == 0


def test_added_and_removed_files_run_a_full_scan(project, rescan):
    rescan(project)
    (project / "models" / "extra.py").write_text("import torch\nx = torch.cuda.is_available()\n")
    assert rescan(project)[1] == 1
    (project / "models" / "extra.py").unlink()
    assert rescan(project)[1] == 1
    (project / "notes.txt").write_text("not scanned\n")  # a file no scan reads: still patched
    assert rescan(project)[1] == 0


def test_fresh_files_are_read_again(project, rescan, monkeypatch):
    """A file modified close to the moment its stats were taken is never trusted by them: a
    same-size rewrite that keeps every stat but the content is still seen."""
    monkeypatch.setattr(snapshots, "RACY_NS", 10 ** 18)
    rescan(project)
    (key,) = [p.stem for p in (Path(os.environ["ASCEND_MIGRATE_CACHE_DIR"]) / "report").glob("*.ledger")]
    head = ledgers._read(key)[0]
    assert head["stats"] and all(v is None for v in head["stats"].values())
    target = project / "models" / "net.py"
    st = target.stat()
    target.write_text(NET.replace('"cuda:0"', '"cpu:00"'))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    report, _ = rescan(project)
    assert "cuda:0" not in report


def test_a_damaged_ledger_is_a_miss(project, rescan):
    rescan(project)
    (ledger,) = (Path(os.environ["ASCEND_MIGRATE_CACHE_DIR"]) / "report").glob("*.ledger")
    data = bytearray(ledger.read_bytes())
    data[-5] ^= 0x01  # one bit of the stored findings' text: the CRC no longer matches
    ledger.write_bytes(bytes(data))
    _append(project / "models" / "data.py", "\n\ndef f(x):\n    return x.cuda()\n")
    assert rescan(project)[1] == 1
    ledger.write_bytes(b"not a ledger")
    assert ledgers._read(ledger.stem) is None


def test_formats_without_a_ledger_run_a_full_scan(project, rescan):
    rescan(project, "sarif")
    _append(project / "models" / "data.py", "\n\ndef g(x):\n    return x.cuda()\n")
    assert rescan(project, "sarif")[1] == 1


def test_a_tree_with_a_name_that_is_not_utf8_keeps_no_ledger(project, rescan):
    """Such a name is shown escaped in the report; the ledger does not try to keep it apart."""
    odd = os.fsencode(project) + b"/caf\xe9.py"
    with open(odd, "wb") as fh:
        fh.write(b"import torch\nx = torch.cuda.is_available()\n")
    rescan(project)
    assert not list((Path(os.environ["ASCEND_MIGRATE_CACHE_DIR"]) / "report").glob("*.ledger"))
    _append(project / "models" / "data.py", "\n\ndef k(x):\n    return x.cuda()\n")
    report, runs = rescan(project)
    assert runs == 1 and "caf\\\\xe9.py" in report


def test_a_notebook_edit_is_patched(project, rescan):
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": ["import torch\n", "x = torch.randn(2).cuda()\n"]}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "explore.ipynb").write_text(json.dumps(notebook))
    rescan(project)
    cell["source"].append("y = x.to('cuda:1')\n")
    (project / "explore.ipynb").write_text(json.dumps(notebook))
    report, runs = rescan(project)
    assert runs == 0 and "cuda:1" in report
