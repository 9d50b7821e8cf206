"""The failure knowledge base: loads, has enough real signatures, each example matches."""
import pytest

from ascend_migrate.diagnose.engine import diagnose_text
from ascend_migrate.diagnose.kb import load_kb, default_kb
from ascend_migrate.knowledge.loader import KnowledgeError

KB = default_kb()


def test_at_least_30_signatures_with_unique_ids():
    ids = [s.id for s in KB.signatures]
    assert len(ids) >= 30 and len(set(ids)) == len(ids)


REQUIRED = [
    "cann-libhccl-missing", "missing-runtime-dependency", "set-precision-mode-500001", "module-not-found-project",
    "pyg-extension-build", "fp64-downcast", "hccl-connect-timeout", "hccl-exec-timeout", "force-cuda-build",
    "npu-out-of-memory", "op-not-implemented-privateuse1", "op-not-supported-npu", "dtype-mismatch",
    "op-fallback-to-cpu", "vector-core-exception", "aicpu-exception", "device-capability-none",
    "data-parallel-unsupported", "two-accelerators-conflict", "torch-backend-autoload-failed",
]


@pytest.mark.parametrize("sig_id", REQUIRED)
def test_issue_topics_are_covered(sig_id):
    assert KB.get(sig_id).fix


@pytest.mark.parametrize("sig", KB.signatures, ids=lambda s: s.id)
def test_each_example_is_diagnosed_as_its_signature(sig):
    found = {m.id for m in diagnose_text(sig.example)}
    assert sig.id in found, f"{sig.id}: example not matched; got {found}"


def test_err_code_tables():
    assert KB.err_modules["02"].name == "DIST" and KB.err_codes["100"].name == "ACL"
    assert {"001", "007", "100", "200"} <= set(KB.err_codes)


def _write(tmp_path, text):
    p = tmp_path / "failures.yaml"
    p.write_text(text)
    return p


MIN = """schema: 1
err_code_modules: {"00": {name: PTA, meaning: m}}
err_codes: {"001": {name: PARAM, meaning: m, fix: f}}
signatures:
"""
SIG = """  - id: {id}
    title: t
    category: {cat}
    severity: error
    confidence: high
    patterns: [{pat}]
    cause: c
    fix: f
    example: e
    sources: [s]
"""


@pytest.mark.parametrize(
    "body, key, reason",
    [
        (SIG.format(id="a", cat="environment", pat="'('"), "signatures[0] (a).patterns[0]", "invalid regex"),
        (SIG.format(id="a", cat="weather", pat="x"), "signatures[0] (a).category", "is not one of"),
        (SIG.format(id="Bad_Id", cat="environment", pat="x"), "signatures[0] (Bad_Id).id", "lowercase"),
        (SIG.format(id="a", cat="environment", pat="x") * 2, "signatures[1] (a).id", "duplicate id"),
        (SIG.format(id="a", cat="environment", pat="x").replace("    fix: f\n", ""), "signatures[0] (a).fix", "missing required key"),
        (SIG.format(id="a", cat="environment", pat="x") + "    supersedes: [nope]\n", "a.supersedes", "unknown id"),
    ],
)
def test_malformed_data_gives_one_clear_error(tmp_path, body, key, reason):
    with pytest.raises(KnowledgeError) as exc:
        load_kb(_write(tmp_path, MIN + body))
    assert exc.value.key == key and reason in exc.value.reason
    assert str(exc.value).startswith(str(tmp_path / "failures.yaml") + ": ")


def test_yaml_syntax_error_names_the_line(tmp_path):
    with pytest.raises(KnowledgeError) as exc:
        load_kb(_write(tmp_path, "signatures: [\n  - id: a\n   bad"))
    assert "invalid YAML" in exc.value.reason and exc.value.key.startswith("line ")
