"""Ascend error codes decoded by family, the chain reading of a log, and the near misses of the
signatures written for the families that used to get no answer."""
from __future__ import annotations

import pytest

from ascend_migrate.diagnose.codes import decode_line, line_details, load_codes
from ascend_migrate.diagnose.engine import Diagnoser, chain, report_dict
from ascend_migrate.diagnose.render import render_text
from ascend_migrate.knowledge.loader import KnowledgeError


def _top(text: str):
    d = Diagnoser()
    d.feed_text(text)
    errors = [m for m in d.matches() if m.severity == "error"]
    return errors[0] if errors else None, d


@pytest.mark.parametrize("line,code,family", [
    ("EZ1001: [PID: 1] 2026-01-01-00:00:00.000.000 The dim of self should be in range", "EZ1001", "operators"),
    ("E89999[PID: 9] 2026-01-21-05:41:35.799.239 (E89999):  some tiling rule", "E89999", "operators"),
    ("[rank1]: EE9999: Inner Error!", "EE9999", "devices"),
    ("EI0009: Transport init error.", "EI0009", "distributed"),
    ("EL0004: [PID: 553] Failed to allocate memory.", "EL0004", "memory"),
    ("RuntimeError: ... call aclnnFoo failed, error code is 561002", "561002", "operators"),
    ("synchronize stream failed, runtime result = 507049", "507049", "kernel-faults"),
    ("rtGetDeviceCount:ErrCode=507899, desc=[driver error:internal error]", "507899", "devices"),
    ("alloc device memory failed, runtime result = 207001", "207001", "memory"),
])
def test_codes_decode_to_their_family(line, code, family):
    got = {e["code"]: e for e in decode_line(line)}
    assert code in got and got[code]["family"] == family


def test_hccl_result_code_is_decoded():
    line = ("RuntimeError: create_config:x.ts:102 HCCL function error: hcclCommInitRootInfoConfig(numRanks, "
            "&rootInfo, rank, config, &(comm->hcclComm_)), error code is 15")
    (entry,) = decode_line(line)
    assert entry["kind"] == "hccl" and "HCCL_E_RUNTIME" in entry["area"]


@pytest.mark.parametrize("line", [
    "[rank0]:[E1106 01:17:59.109644239 compiler_depend.ts:62] Warning: something",  # glog severity + date
    "loss 0.123 at step E12 epoch",
    "sha256:EE12345deadbeef",
    "exit code is 137",
    "HTTP error code: 404",
])
def test_lines_without_an_ascend_code_decode_to_nothing(line):
    assert decode_line(line) == []


def test_line_details_name_operator_dtype_shape_device():
    d = line_details("[ERROR] 2026 (PID:1, Device:3, RankID:-1) call aclnnCast failed, detail: self not implemented "
                     "for DT_BFLOAT16, the shape is [1, 6902]")
    assert d == {"operator": "aclnnCast", "dtype": "DT_BFLOAT16", "shape": "[1, 6902]", "device": "3"}
    assert line_details("E89999 ... [FILE:prompt_flash_attention_tiling.cpp][LINE:1]")["operator"] == "prompt_flash_attention"


def test_unexplained_code_gets_a_low_confidence_family_answer_not_silence():
    top, _ = _top("something happened\nEK9999: [PID: 1] 2026-01-01-00:00:00.000.000 Failed to drvGetPlatformInfo, ret=4\n")
    assert top is not None and top.id == "cann-code" and top.confidence == "low" and top.family == "devices"
    assert "only the code's family" in top.cause


def test_signature_outranks_the_code_family_and_the_err_suffix():
    text = ("RuntimeError: call aclnnFusedInferAttentionScoreV3 failed, error code is 561002\n"
            "[ERROR] 2026-01-21-05:41:35 (PID:1, Device:1, RankID:-1) ERR00100 PTA call acl api failed.\n"
            "E89999: Inner Error!\n"
            "E89999[PID: 1] 2026 (E89999): When layout is TND, queryT(8) must be equal to the last element"
            "[FUNC:Check][FILE:fused_infer_attention_score_tiling.cpp][LINE:904]\n")
    top, d = _top(text)
    assert top.id == "op-input-constraint"
    cause, rest = chain(d.matches())
    # the aclnn return code, the ERR suffix and the bare "E89999: Inner Error!" are the same
    # failure seen from three layers: folded into the cause
    assert cause is top and rest == []
    assert [(r["id"], r["line_no"]) for r in top.relayed] == [("cann-code", 1), ("torch-npu-err-code", 2), ("cann-code", 3)]
    report = report_dict(d.matches(), "x.log", d.lines)
    assert report["chain"]["cause"]["id"] == "op-input-constraint"
    assert report["chain"]["cause"]["details"]["operator"] == "fused_infer_attention_score"
    out = render_text(d.matches(), "x.log")
    assert "Chain (cause first" in out and "confirm the cause before changing anything:" in out


def test_code_family_answer_beats_the_err_suffix_when_both_are_all_there_is():
    top, _ = _top("[ERROR] 2026-01-01-00:00:00 (PID:1, Device:0, RankID:-1) ERR00100 PTA call acl api failed.\n"
                  "E89999: Inner Error!\n")
    assert top.id == "cann-code" and top.decoded["code"] == "E89999"


def test_root_line_under_an_hccl_init_failure_is_the_cause():
    text = ("RuntimeError: HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, "
            "&(comm->hcclComm_)), error code is 15\n"
            "[ERROR] 2025-04-27-03:11:08 (PID:5, Device:0, RankID:1) ERR02200 DIST call hccl api failed.\n"
            "EE9999: Inner Error!\n"
            "        rtGetDeviceIndexByPhyId execute failed, reason=[device id error][FUNC:FuncErrorReason]\n")
    top, _ = _top(text)
    assert top.id == "runtime-device-id-error"


def test_host_memory_exhausted_is_a_consequence_after_a_device_fault_and_the_cause_alone():
    fault = "PrintAicpuErrorInfo: Aicpu kernel execute failed, device_id=2, errorCode=0x2a\n"
    oom = "rtKernelLaunchWithHandleV2: ErrCode=207001, desc=[Failed to create the module object. The host memory has been exhausted.]\n"
    assert _top(fault + oom)[0].id == "aicpu-exception"
    assert _top(oom)[0].id == "host-memory-exhausted-after-fault"


@pytest.mark.parametrize("text,expect", [
    ("loc(\"k.mlir\":2:3): error: ub overflow, requires 2097152 bits while 1572864 bits available!", "triton-ascend-ub-overflow"),
    ("[ERROR] the socversion Ascend910B1 of bin package does not match the current device socverison Ascend310P3.", "soc-version-mismatch"),
    ("Failed to import torch_npu.", "torch-npu-import-failed"),
    ("exception during AICPU execution, stream_id:2", "aicpu-exception"),
    ("AclNN_Parameter_Error(EZ1001): Tensor scale not implemented for DT_FLOAT16, should be in dtype support list [DT_BFLOAT16,].", "unsupported-dtype"),
])
def test_new_family_signatures(text, expect):
    assert _top(text + "\n")[0].id == expect


@pytest.mark.parametrize("text", [
    "INFO: tile sizes chosen to avoid ub overflow on A2",                   # a notice, not an error... still named
])
def test_ub_overflow_word_in_prose_is_still_the_family(text):
    # the bare phrase is rare outside the compiler's error; naming the family is the useful answer
    assert _top(text + "\n")[0].id == "triton-ascend-ub-overflow"


@pytest.mark.parametrize("text", [
    "Failed to import torch_npu._inductor: no module",         # a submodule, not torch_npu itself
    "WARNING: Failed to import torch_npu.contrib, skipping",   # same
    "the socversion parameter of run.sh selects the chip",    # docs text, no mismatch
    "When layout is BSND the kernel is faster",                # no constraint broken
    "E89999 is the code CANN uses for tiling messages",        # prose about the code, no rule broken
    "Aicpu kernel execute succeeded, device_id=0",
])
def test_near_misses_of_the_new_signatures_stay_quiet(text):
    top, d = _top(text + "\n")
    assert top is None or top.id == "cann-code", (text, top.id if top else None)


def test_malformed_code_table_fails_with_one_error(tmp_path):
    bad = tmp_path / "codes.yaml"
    bad.write_text("prefixed:\n  Z: {family: nowhere, area: a, meaning: m, check: c, confirm: x}\n")
    with pytest.raises(KnowledgeError, match="unknown family"):
        load_codes(bad)
    bad.write_text("numeric:\n  - {range: [5, 1], family: memory, area: a, meaning: m, check: c, confirm: x}\n")
    with pytest.raises(KnowledgeError, match="range"):
        load_codes(bad)
