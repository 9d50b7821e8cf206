"""The scan cache cannot run code: a planted pickle or garbage in the cache folder is a miss.

Whoever can write to the cache folder (a CI cache restored from another job, a shared home)
must not be able to make the next scan execute anything; the index is JSON decoded into a
closed set of dataclasses, and anything else is ignored.
"""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

import ascend_migrate.scan.engine as engine
from ascend_migrate.scan.api import scan
from ascend_migrate.scan.cache_codec import CacheFormatError

CORPUS = Path(__file__).parent / "corpus"
TRAIN = "import torch\nx = torch.zeros(1).cuda()\ntorch.cuda.synchronize()\n"


class _Payload:
    """Unpickling this writes a marker file: the proof that a pickle was executed."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _report(result) -> list:
    return [f.to_dict() for f in result.findings] + [vars(e) for e in result.entry_points]


@pytest.fixture
def cache(monkeypatch, tmp_path) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(folder))
    monkeypatch.setattr(engine, "RACY_NS", 0)
    return folder


def _tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "train.py").write_text(TRAIN + "if __name__ == '__main__':\n    pass\n", encoding="utf-8")
    (root / "pkg" / "model.py").write_text(TRAIN, encoding="utf-8")
    return root


@pytest.mark.parametrize("planted", ["pickle", "pickle-of-an-index", "garbage", "json-unknown-class",
                                     "json-wrong-type", "json-wrong-entry", "empty", "deep-json"])
def test_planted_cache_file_is_a_miss_and_never_executed(cache, tmp_path, planted):
    root = _tree(tmp_path / "proj")
    marker = tmp_path / "executed"
    index_path = engine._cache_file(root, engine.resolve_npu_version(None))
    index_path.parent.mkdir(parents=True)
    payloads = {
        "pickle": pickle.dumps(_Payload(str(marker))),
        "pickle-of-an-index": pickle.dumps(engine.CacheIndex(engine._kb_digest(), files={"x": _Payload(str(marker))})),
        "garbage": os.urandom(4096),
        "json-unknown-class": b'{"\\u0000c":"Popen","v":[["touch","x"]]}',
        "json-wrong-type": b'{"\\u0000c":"Position","v":["1",2]}',
        "json-wrong-entry": engine._codec().dumps(engine.CacheIndex(engine._kb_digest(), files={"train.py": 5})),
        "empty": b"",
        "deep-json": b"[" * 200_000 + b"]" * 200_000,
    }
    index_path.write_bytes(payloads[planted])
    planted_result = scan(root, jobs=1)
    assert not marker.exists()
    fresh = scan(root, jobs=1, use_cache=False)
    assert _report(planted_result) == _report(fresh) and fresh.findings
    # the planted file was replaced by a real index, which the next scan uses
    assert engine._load_cache(index_path, engine._kb_digest()).files.keys() == {"train.py", "pkg/model.py"}
    assert not index_path.read_bytes().startswith(b"\x80")


def test_index_round_trip_is_exact_on_the_corpus(cache, tmp_path):
    """Every kind of result the scanner caches (fixes, edits, entry facts, decisions, stray
    bytes as surrogates) comes back equal, with tuples still tuples."""
    cold = scan(CORPUS, jobs=1)
    index_path = engine._cache_file(CORPUS, engine.resolve_npu_version(None))
    loaded = engine._load_cache(index_path, engine._kb_digest())
    assert len(loaded.files) > 20 and loaded.entries
    again = engine._codec().loads(engine._codec().dumps(loaded))
    assert again == loaded
    some = next(f for e in loaded.files.values() for f in e.result.findings if f.fixes)
    assert isinstance(some.fixes, tuple) and isinstance(some.fixes[0].edits, tuple)
    hash(some.fixes[0].edits[0])  # frozen dataclasses stay hashable
    warm = scan(CORPUS, jobs=1)
    assert _report(warm) == _report(cold)


def test_codec_refuses_what_it_did_not_write():
    codec = engine._codec()
    for data in (b'{"\\u0000b":"zz"}', b'{"\\u0000c":"Position","v":[1]}', b"\xff\xfe",
                 b'{"\\u0000c":"Fix","v":["transfer",[5],"safe","",[]]}',
                 b'{"\\u0000c":"Position","v":[1,2],"x":0}'):
        with pytest.raises(CacheFormatError):
            codec.loads(data)
