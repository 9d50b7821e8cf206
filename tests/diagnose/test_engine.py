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
    assert {"npu-out-of-memory", "hccl-exec-timeout", "hccl-connect-timeout"} <= got
    assert "hccl-timeout-generic" not in got  # superseded by the specific ones
    # the OOM on rank 3 comes first and is the root cause of the others' timeouts
    assert primary(ms).id == "npu-out-of-memory"
    # rank 0's ERR suffix and HCCL call error relay its own timeout two lines above: folded into it
    timeout = next(m for m in ms if m.id == "hccl-exec-timeout")
    assert {r["id"] for r in timeout.relayed} == {"hccl-call-failed", "torch-npu-err-code"}
    assert "torch-npu-err-code" not in got and "hccl-call-failed" not in got
    err = decode_err_code(next(r for r in timeout.relayed if r["id"] == "torch-npu-err-code")["code"])
    assert err["code"] == "ERR02200" and err["module"] == "DIST" and err["error"] == "HCCL"


def test_training_log_with_ansi_and_progress_bars():
    ms = diagnose_text((LOGS / "training_mixed.log").read_text())
    got = ids(ms) + [r["id"] for m in ms for r in m.relayed]  # relays folded into the error they repeat count as found
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
    ms = diagnose_text("\n".join(lines))
    found = set(ids(ms)) | {r["id"] for m in ms for r in m.relayed}  # a relay folded into a neighbour was found
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


# ------------------------------------------------------------------ streaming and ranking
import gzip  # noqa: E402

from ascend_migrate.diagnose.engine import Diagnoser, diagnose_files, open_log, rank_matches  # noqa: E402
from ascend_migrate.diagnose.prefilter import candidate_lines, required_literals  # noqa: E402


def test_prefilter_selects_every_line_a_pattern_matches():
    kb = default_kb()
    rng = random.Random(3)
    lines = list(NOISE)
    for sig in kb.signatures:
        for ex in sig.example.splitlines():
            lines += [ex, ex.upper(), ex.lower(), "[rank3]: " + ex, ex[: len(ex) // 2], ex[len(ex) // 3:]]
    rng.shuffle(lines)
    block = "\n".join(lines)
    selected = {block[s:e] for s, e in candidate_lines(block, kb.anchors)}
    for line in lines:
        if any(p.search(line) for sig in kb.signatures for p in sig.patterns):
            assert line in selected, line


def test_required_literals_cover_alternatives():
    assert required_literals(r"EI0006|Getting socket") == [["EI0006"], ["Getting socket"]]
    assert required_literals(r"\b507035\b") == [["507035"]]
    alts = required_literals(r"(?i)(float64|double).*not supported")
    assert ["float64", "not supported"] in alts and ["double", "not supported"] in alts


def test_block_boundaries_do_not_lose_lines_or_line_numbers(monkeypatch):
    import ascend_migrate.diagnose.engine as eng

    text = "\n".join(NOISE * 40 + ["RuntimeError: Tensors must be contiguous"] + NOISE * 40
                     + ["    if torch.cuda.get_device_capability()[0] >= 8:", "TypeError: 'NoneType' object is not subscriptable"])
    whole = {m.id: m.line_no for m in diagnose_text(text)}
    monkeypatch.setattr(eng, "BLOCK_CHARS", 257)  # many tiny blocks
    d = Diagnoser()
    d.feed_text(text)
    assert {m.id: m.line_no for m in d.matches()} == whole
    assert d.lines == len(text.split("\n"))
    assert whole["device-capability-none"] == len(text.split("\n"))  # the near line came from the previous block


def test_root_cause_across_rank_logs_by_timestamp(tmp_path):
    rank0 = tmp_path / "rank0.log"
    rank0.write_text(
        "[rank0]: 2025-03-02 10:20:01 step 10 loss 2.1\n"
        "[rank0]: EI0002: 2025-03-02-10:50:01.123.456 The wait execution of the Notify register times out.\n"
    )
    rank3 = tmp_path / "rank3.log.gz"
    rank3.write_bytes(gzip.compress(
        b"[rank3]: 2025-03-02 10:20:01 step 10 loss 2.1\n"
        b"[rank3]: RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 3; 60.97 GiB total capacity)\n"
        b"[rank3]: [ERROR] 2025-03-02-10:20:05 (PID:77, Device:3, RankID:3) ERR00006 PTA memory error\n"
    ))
    ms, d = diagnose_files([rank0, rank3])
    assert ms[0].id == "npu-out-of-memory" and ms[0].rank == 3 and ms[0].source.endswith("rank3.log.gz")
    timeout = next(m for m in ms if m.id == "hccl-exec-timeout")
    assert timeout.role == "symptom" and timeout.rank == 0 and timeout.timestamp.startswith("2025-03-02-10:50:01")
    assert d.sources == [str(rank0), str(rank3)]


def test_earlier_cause_wins_across_logs_of_equal_confidence(tmp_path):
    a = tmp_path / "a.log"
    a.write_text("2025-03-02 11:00:00 RuntimeError: NPU out of memory. Tried to allocate 1.00 GiB\n")
    b = tmp_path / "b.log"
    b.write_text("2025-03-02 09:00:00 ImportError: libhccl.so: cannot open shared object file: No such file or directory\n")
    ms, _ = diagnose_files([a, b])
    assert [m.id for m in ms[:2]] == ["cann-libhccl-missing", "npu-out-of-memory"]


def test_generic_codes_are_low_and_never_outrank_a_specific_cause():
    text = ("[ERROR] RUNTIME(278,python3):2025-08-26-03:01:17.587.916 [driver.cc:65] GetDeviceCount:Call drvGetDevNum, drvRetCode=87.\n"
            "rtGetDeviceCount:ErrCode=507899, desc=[driver error:internal error], InnerCode=0x7020010\n")
    ms = diagnose_text(text)
    assert ms[0].id == "device-busy-likely"
    # the generic driver code on the next line is the same failure: folded into the specific cause
    assert [r["id"] for r in ms[0].relayed] == ["driver-internal-error"] and len(ms) == 1
    alone = diagnose_text("rtGetDeviceCount:ErrCode=507899, desc=[driver error:internal error]\n")
    assert alone[0].id == "driver-internal-error" and alone[0].confidence == "low"


def test_warnings_do_not_fire_error_signatures():
    text = ("[W compiler_depend.ts:61] Warning: HCCL execution timeout was set to never timeout (function operator())\n"
            "[W compiler_depend.ts:61] Warning: stream synchronize execution timeout was set to never timeout\n")
    assert [m for m in diagnose_text(text) if m.severity == "error"] == []


def test_missing_torch_npu_is_not_a_project_packaging_problem():
    (m,) = diagnose_text("ModuleNotFoundError: No module named 'torch_npu'\n")
    assert m.id == "torch-npu-not-installed" and m.confidence == "high"
    ids = [m.id for m in diagnose_text("ModuleNotFoundError: No module named 'models.backbone'\n")]
    assert ids == ["module-not-found-project"]


def test_unknown_non_ascend_library_is_not_reported():
    assert diagnose_text("ImportError('libcudart.so.12: cannot open shared object file: No such file or directory')\n") == []
    (m,) = diagnose_text("error while loading shared libraries: libascend_dump.so: cannot open shared object file\n")
    assert m.id == "ascend-shared-lib-missing" and m.details["package"] == "the CANN toolkit"
    assert "libascend_dump.so" in m.confirm and "the CANN toolkit" in m.cause


def test_triton_clash_needs_the_error_not_the_import_line_or_vllm_notices():
    """Near misses of triton-ascend-mainline-triton-clash: the import statement echoed in a
    traceback frame, vLLM's notice that Triton is absent, the uninstall that fixes the clash,
    an API change in triton.language and another package that is not a package."""
    text = (
        "INFO 06-03 11:20:40 [importing.py:63] Triton not installed or not compatible; certain GPU-related functions will not be available.\n"
        "INFO 06-03 11:20:40 [importing.py:53] Triton module has been replaced with a placeholder.\n"
        "Found existing installation: triton 3.3.1\n"
        "Uninstalling triton-3.3.1:\n"
        "  Successfully uninstalled triton-3.3.1\n"
        '  File "/usr/lib/python3.11/site-packages/triton/backends/amd/compiler.py", line 1, in <module>\n'
        "    from triton.backends.compiler import BaseBackend, GPUTarget, Language\n"
        "KeyboardInterrupt\n"
        "ImportError: cannot import name 'extra' from 'triton.language' (/usr/lib/python3.11/site-packages/triton/language/__init__.py)\n"
        "ModuleNotFoundError: No module named 'models.heads'; 'models' is not a package\n"
    )
    found = ids(diagnose_text(text))
    assert "triton-ascend-mainline-triton-clash" not in found
    assert found == ["module-not-found-project"]  # only the last line, a project packaging problem
    (m,) = diagnose_text("ModuleNotFoundError: No module named 'triton._C.libtriton.ascend'; 'triton._C.libtriton' is not a package\n")
    assert m.id == "triton-ascend-mainline-triton-clash"  # and not the generic project-module entry


def test_torchvision_mismatch_in_each_form_and_not_on_other_torchvision_lines():
    """The three ways a torchvision built for another torch fails at import or first op call
    (and transformers' re-raise of the first), then lines about torchvision that are not it: the
    NPU CPU-fallback warning for torchvision::nms, the harmless image extension warning, the
    meta-registration frame echoed in a traceback, pip output, a missing torchvision and
    another library's copy of the custom-ops message."""
    forms = [
        "RuntimeError: operator torchvision::nms does not exist",
        "operator torchvision::roi_align does not exist",
        "ValueError: Could not find the operator torchvision::nms. Please make sure you have already registered the operator and (if registered from C++) loaded it via torch.ops.load_library.",
        "AttributeError: partially initialized module 'torchvision' has no attribute 'extension' (most likely due to a circular import)",
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are incompatible, or if you had errors while compiling torchvision from source.",
    ]
    for line in forms:
        (m,) = diagnose_text(line + "\n")
        assert (m.id, m.confidence, m.family) == ("torchvision-torch-mismatch", "high", "versions"), line
    near = (
        "[W compiler_depend.ts:51] Warning: CAUTION: The operator 'torchvision::nms' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)\n"
        "/venv/lib/python3.11/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: libc10_cuda.so: cannot open shared object file: No such file or directory\n"
        '    @torch.library.register_fake("torchvision::nms")\n'
        "Requirement already satisfied: torch==2.13.0 in /venv/lib/python3.11/site-packages (from torchvision==0.28.0) (2.13.0+cpu)\n"
        "Successfully installed torchvision-0.28.0\n"
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and falkon versions are incompatible\n"
        "ModuleNotFoundError: No module named 'torchvision'\n"
    )
    found = ids(diagnose_text(near))
    assert "torchvision-torch-mismatch" not in found
    assert found == ["module-not-found-project", "op-fallback-to-cpu"]


def test_validator_failures_have_their_own_entries():
    cases = {
        "Error: entry file not found: /work/proj/train.py": "validate-entry-not-found",
        "FAIL output 'logits': cosine 0.8123 < 0.9 (hard limit)": "validate-golden-mismatch",
        "FAIL ddp: the entry did not initialise torch.distributed under torchrun (it should call init_process_group when WORLD_SIZE > 1)": "validate-ddp-no-init",
        "Error: golden file not found: golden.pt": "validate-golden-file",
    }
    for line, sig in cases.items():
        assert diagnose_text(line + "\n")[0].id == sig, line


def test_every_signature_has_a_family_and_a_confirm_command():
    from ascend_migrate.diagnose.kb import FAMILIES

    for sig in default_kb().signatures:
        assert sig.family in FAMILIES and sig.confirm.strip(), sig.id


def test_open_log_rejects_empty_and_binary(tmp_path):
    import pytest

    from ascend_migrate.diagnose.engine import InputError

    (tmp_path / "e.log").write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        open_log(tmp_path / "e.log")
    (tmp_path / "b.log").write_bytes(b"\x00\x01\x02" * 1000)
    with pytest.raises(InputError, match="binary"):
        open_log(tmp_path / "b.log")
    with pytest.raises(InputError, match="cannot read"):
        open_log(tmp_path / "nope.log")


def test_rank_matches_is_stable_for_one_log():
    ms = diagnose_text((LOGS / "ddp_hccl_timeout.log").read_text())
    assert rank_matches(ms) == ms
