"""The scan cache: one index per tree, keyed by path, size, modification and inode-change time and
inode, tied to the rule set."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import ascend_migrate.scan.engine as engine
from ascend_migrate.scan.api import scan

TRAIN = "import torch\nx = torch.zeros(1).cuda()\ntorch.cuda.synchronize()\n"
PLAIN = "import os\nprint(os.getcwd())\n"


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """Scan with the cache in a private folder, counting the files actually analysed."""
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(engine, "RACY_NS", 0)  # the test's files are seconds old, not minutes
    analysed: list[str] = []
    real = engine.analyse

    def counting(job, *args, **kwargs):
        analysed.append(job.rel)
        return real(job, *args, **kwargs)

    monkeypatch.setattr(engine, "analyse", counting)

    def run(root: Path):
        analysed.clear()
        result = scan(root, jobs=1)
        return result, sorted(analysed)

    return run


def _tree(root: Path) -> Path:
    for rel, text in (("train.py", TRAIN), ("util.py", PLAIN), ("pkg/model.py", TRAIN)):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _rules(result):
    return [(f.path, f.line, f.rule) for f in result.findings]


def test_unchanged_tree_reads_nothing(counted, tmp_path):
    root = _tree(tmp_path / "proj")
    cold, analysed = counted(root)
    assert analysed == ["pkg/model.py", "train.py", "util.py"]
    warm, analysed = counted(root)
    assert analysed == [] and _rules(warm) == _rules(cold)
    assert len(list((tmp_path / "cache" / "scan").iterdir())) == 1  # one index file for the tree


def test_edit_invalidates_only_that_file(counted, tmp_path):
    root = _tree(tmp_path / "proj")
    counted(root)
    (root / "util.py").write_text(TRAIN, encoding="utf-8")
    result, analysed = counted(root)
    assert analysed == ["util.py"]
    assert ("util.py", 3, "CU001") in _rules(result)


def test_edit_keeping_size_and_mtime_is_seen_through_the_racy_window(monkeypatch, counted, tmp_path):
    monkeypatch.setattr(engine, "RACY_NS", 2_000_000_000)
    root = _tree(tmp_path / "proj")
    counted(root)
    path = root / "util.py"
    before = path.stat()
    path.write_text(PLAIN.replace("getcwd", "getpid"), encoding="utf-8")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    _, analysed = counted(root)
    assert analysed == ["util.py"]  # written just before the index: re-hashed, not trusted


def test_touch_without_change_rehashes_but_reuses(counted, tmp_path):
    root = _tree(tmp_path / "proj")
    cold, _ = counted(root)
    stamp = (root / "train.py").stat().st_mtime_ns + 5_000_000_000
    os.utime(root / "train.py", ns=(stamp, stamp))
    result, analysed = counted(root)
    assert analysed == [] and _rules(result) == _rules(cold)  # hash equal: cached result re-used
    again, analysed = counted(root)
    assert analysed == [] and _rules(again) == _rules(cold)  # and the new mtime is recorded


def test_rename_invalidates(counted, tmp_path):
    root = _tree(tmp_path / "proj")
    counted(root)
    (root / "train.py").rename(root / "launch.py")
    result, analysed = counted(root)
    assert analysed == ["launch.py"]
    assert {f.path for f in result.findings if f.rule == "CU001"} == {"launch.py", "pkg/model.py"}


def test_rule_set_change_invalidates(counted, tmp_path, monkeypatch):
    root = _tree(tmp_path / "proj")
    counted(root)
    data = tmp_path / "kb"
    shutil.copytree(engine.DATA_DIR, data)
    version_file = next(p for p in sorted(data.rglob("*")) if p.suffix in (".yaml", ".json") and p.is_file())
    version_file.write_bytes(version_file.read_bytes() + b"\n# a new knowledge base version\n")
    monkeypatch.setattr(engine, "DATA_DIR", data)
    _, analysed = counted(root)
    assert analysed == ["pkg/model.py", "train.py", "util.py"]
    assert len(list((tmp_path / "cache" / "scan").iterdir())) == 1  # the stale index is replaced


def test_data_files_are_only_scanned_when_a_launch_script_names_them(counted, tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "golden_values.json").write_text('{"lm loss": {"values": [1.0, 2.0]}, "backend": "nccl"}\n')
    (root / "results.json").write_text('{"backend": "nccl"}\n')
    (root / "run.sh").write_text("torchrun train.py --cfg results.json\n")
    (root / "train.py").write_text(TRAIN)
    result, analysed = counted(root)
    assert {f.path for f in result.findings if f.rule != "FW001"} == {"results.json", "train.py"}
    assert analysed.count("results.json") == 2  # counted first, then read as the config it is
    warm, analysed = counted(root)
    assert _rules(warm) == _rules(result) and analysed == []  # the named file's analysis is cached
    (root / "run.sh").write_text("torchrun train.py\n")
    unnamed, analysed = counted(root)
    assert analysed == ["run.sh"] and {f.path for f in unnamed.findings if f.rule != "FW001"} == {"train.py"}


@pytest.fixture
def decided(counted, monkeypatch):
    """`counted`, also counting how often entry points are decided from scratch."""
    calls: list[int] = []
    real = engine.entries.decide

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine.entries, "decide", counting)

    def run(root: Path, **options):
        calls.clear()
        result = scan(root, jobs=1, **options)
        return result, len(calls)

    return run


def _entries(result):
    return ([(e.path, e.reason) for e in result.entry_points],
            [(e.path, e.reason) for e in result.rejected_entry_points])


def test_entry_decisions_are_reused_until_their_inputs_change(decided, tmp_path):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "model.py").write_text("import torch\nnet = torch.nn.Linear(2, 2)\n", encoding="utf-8")
    (root / "train.py").write_text("import torch\nfrom pkg import model\nprint(model.net(torch.ones(2)).cuda())\n",
                                   encoding="utf-8")
    (root / "tool.py").write_text("import torch\nif __name__ == '__main__':\n    print(torch.ones(1).cuda())\n",
                                  encoding="utf-8")
    first, calls = decided(root)
    assert calls == 1 and "train.py" in [e.path for e in first.entry_points]
    warm, calls = decided(root)
    assert calls == 0 and _entries(warm) == _entries(first)

    # an edit that changes no import or evidence: same decisions, not recomputed
    with (root / "pkg" / "model.py").open("a", encoding="utf-8") as fh:
        fh.write("# a comment\n")
    edited, calls = decided(root)
    assert calls == 0 and _entries(edited) == _entries(first)

    # the tool now imports train.py: train.py is a library, decided again
    (root / "tool.py").write_text("import torch\nimport train\nif __name__ == '__main__':\n    print(1)\n",
                                  encoding="utf-8")
    changed, calls = decided(root)
    assert calls == 1 and _entries(changed) != _entries(first)

    # an override is an input too, and so is its removal
    forced, calls = decided(root, no_entry=[str(root / "tool.py")])
    assert calls == 1 and "tool.py" not in [e.path for e in forced.entry_points]
    again, calls = decided(root)
    assert calls == 1 and _entries(again) == _entries(changed)

    # a new file changes the tree the imports resolve in
    (root / "extra.py").write_text("print('hello')\n", encoding="utf-8")
    _, calls = decided(root)
    assert calls == 1


def test_a_same_size_rewrite_with_the_old_mtime_put_back_is_read_again(counted, tmp_path):
    """Size and modification time can be made to match; the inode-change time cannot."""
    root = _tree(tmp_path / "proj")
    first, _ = counted(root)
    target = root / "pkg" / "model.py"
    st = target.stat()
    target.write_text(TRAIN.replace(".cuda()", ".cudx()"))  # same size, one finding fewer
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    again, analysed = counted(root)
    assert analysed == ["pkg/model.py"]
    assert len(again.findings) == len(first.findings) - 1
    assert _rules(again) == _rules(scan(root, jobs=1, use_cache=False))


def test_a_data_file_no_longer_named_says_nothing_from_its_cached_analysis(counted, tmp_path):
    """A data file a launch script named was analysed and cached as such; once no script names
    it, neither its findings nor its note (here: findings capped) are reported, as for a data
    file no scan ever analysed."""
    root = tmp_path / "proj"
    (root / "conf").mkdir(parents=True)
    (root / "train.py").write_text(TRAIN)
    (root / "conf" / "data.yaml").write_text("".join(f"k{i}: nvidia-smi\n" for i in range(505)))
    (root / "run.sh").write_text("python train.py --cfg conf/data.yaml\n")
    named, _ = counted(root)
    assert any(n.path == "conf/data.yaml" and "capped" in n.reason for n in named.notes)
    (root / "run.sh").write_text("python train.py\n")
    unnamed, _ = counted(root)
    fresh = scan(root, jobs=1, use_cache=False)
    assert [(n.path, n.reason) for n in unnamed.notes] == [(n.path, n.reason) for n in fresh.notes]
    assert not any(n.path == "conf/data.yaml" for n in unnamed.notes)
    assert _rules(unnamed) == _rules(fresh) and unnamed.build_configs == fresh.build_configs
