"""Matching realistic, noisy logs."""
import random
from pathlib import Path

from ascend_migrate.diagnose.engine import clean_lines, decode_err_code, diagnose_text, primary, report_dict
from ascend_migrate.diagnose.kb import default_kb

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "check" / "logs"
NOISE = [
    "INFO 2025-06-01 10:00:01 step 120/5000 loss=2.113 lr=2.0e-4",
    "[rank0]: Saving checkpoint to /ckpt/step_120",
    "Downloading model.safetensors: 100%|██████████| 4.97G/4.97G [01:02<00:00, 79.6MB/s]",
    "W0601 10:00:01.000000 123 site-packages/torch/distributed/run.py:793] OMP_NUM_THREADS set to 1",
    "",
    "    at train.py:88 in forward",
    "Epoch 3 finished: val_acc=0.8812 (best 0.8840)",
]


def ids(matches):
    return [m.id for m in matches]


def test_real_import_traceback_root_cause_first():
    ms = diagnose_text((LOGS / "import_without_cann.log").read_text())
    assert set(ids(ms)) == {"cann-libhccl-missing", "torch-backend-autoload-failed"}
    top = primary(ms)
    assert top.id == "cann-libhccl-missing" and top.line.startswith("ImportError: libhccl.so")


def test_ddp_log_several_matches_and_err_code():
    ms = diagnose_text((LOGS / "ddp_hccl_timeout.log").read_text())
    got = set(ids(ms))
    assert {"npu-out-of-memory", "hccl-exec-timeout", "hccl-call-failed", "hccl-connect-timeout", "torch-npu-err-code"} <= got
    assert "hccl-timeout-generic" not in got  # superseded by the specific ones
    # the OOM on rank 3 comes first and is the root cause of the others' timeouts
    assert primary(ms).id == "npu-out-of-memory"
    err = next(m for m in ms if m.id == "torch-npu-err-code")
    assert err.decoded["code"] == "ERR02200" and err.decoded["module"] == "DIST" and err.decoded["error"] == "HCCL"


def test_training_log_with_ansi_and_progress_bars():
    ms = diagnose_text((LOGS / "training_mixed.log").read_text())
    got = ids(ms)
    for sig in ("op-fallback-to-cpu", "fp64-downcast", "device-capability-none", "dtype-mismatch", "vector-core-exception", "torch-npu-err-code"):
        assert sig in got
    # warnings are never the root cause; among errors the most certain one wins
    assert primary(ms).severity == "error" and primary(ms).id == "dtype-mismatch"
    fallback = next(m for m in ms if m.id == "op-fallback-to-cpu")
    assert "\x1b" not in fallback.line


def test_near_requirement_blocks_unrelated_nonetype_errors():
    text = "\n".join(NOISE + ["TypeError: 'NoneType' object is not subscriptable"] + NOISE)
    assert "device-capability-none" not in ids(diagnose_text(text))


def test_every_signature_found_in_one_noisy_log():
    kb = default_kb()
    rng = random.Random(7)
    lines = []
    for sig in kb.signatures:
        lines += rng.sample(NOISE, 3) + sig.example.splitlines()
    lines += NOISE
    found = set(ids(diagnose_text("\n".join(lines))))
    missing = {s.id for s in kb.signatures} - found
    # a generic signature may be superseded on the line where a specific one also matches
    assert not missing, missing


def test_counts_repeats_once():
    text = "\n".join(["RuntimeError: Tensors must be contiguous"] * 3 + NOISE)
    (m,) = diagnose_text(text)
    assert m.count == 3 and m.line_no == 1


def test_decode_err_codes():
    d = decode_err_code("ERR01007")
    assert (d["module"], d["error"]) == ("OPS", "NOT_SUPPORT")
    u = decode_err_code("ERR09555")
    assert u["module"].startswith("unknown") and u["error"].startswith("unknown")
    assert decode_err_code("no code") is None


def test_clean_lines_and_json_report():
    assert clean_lines("a\r\nb\x1b[31mc\x1b[0m\rd\n") == ["a", "d"]
    rep = report_dict(diagnose_text("EI0006: Getting socket times out."), "x.log", 1)
    assert rep["schema_version"] == 2 and rep["primary"] == "hccl-connect-timeout"
    assert set(rep["matches"][0]) >= {"id", "cause", "fix", "line", "line_no", "confidence"}


def test_nothing_in_clean_log():
    assert diagnose_text("\n".join(NOISE * 20)) == []
