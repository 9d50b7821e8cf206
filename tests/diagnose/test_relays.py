"""Logs where a failure is reported by several layers and several ranks: the specific cause
comes first, the layers that relayed it are folded into it, and the ranks that only waited
for the failed one rank after it.

`relays/<case>/` holds the logs of one failure (one file per rank, or one torchrun log with
every rank in it), written in our own words in the shapes torch_npu, CANN, HCCL and torchrun
print. Every case names the cause a reader of all its lines would name.
"""
from pathlib import Path

import pytest

from ascend_migrate.diagnose.engine import Diagnoser, chain, open_log, report_dict
from ascend_migrate.diagnose.render import render_text

RELAYS = Path(__file__).resolve().parent / "relays"
RELAY_IDS = {"torch-npu-err-code", "cann-code", "hccl-call-failed", "hccl-timeout-generic"}

# case: (the cause, what follows from it in the order it happened, what the cause folds in)
CASES = {
    # rank 3 runs out of device memory; rank 0 waits for it in an all-reduce until the watchdog fires
    "oom-rank3-timeouts": ("npu-out-of-memory", ["hccl-exec-timeout"], ["torch-npu-err-code"]),
    # rank 1 has no kernel for an operator (EZ3003); ranks 0 and 2 time out waiting for it
    "missing-op-interleaved": ("op-kernel-binary-missing", ["hccl-exec-timeout", "worker-exited-first"],
                               ["cann-code", "torch-npu-err-code"]),
    # the first worker was SIGKILLed from outside (the host's OOM killer); rank 0 times out
    "sigkill-first-worker": ("worker-killed-sigkill", ["hccl-connect-timeout", "worker-exited-first"], []),
    # the plog names the port HCCL could not listen on; the link timeout follows
    "ei0006-port-bound": ("hccl-port-in-use", ["hccl-connect-timeout"], ["hccl-timeout-generic"]),
    # EJ0001: HCCP cannot start because the previous run still holds the card
    "ej0001-previous-run": ("device-busy", [], ["hccl-call-failed", "torch-npu-err-code"]),
    # no signature explains rank 2's operator failure: its own code still outranks rank 0's wait
    "unknown-op-fault-rank2": ("cann-code", ["hccl-exec-timeout", "torch-npu-err-code", "cann-code"], []),
    # every rank only timed out: the timeout is the answer, its ERR suffix folded into it
    "timeouts-only": ("hccl-connect-timeout", [], ["hccl-call-failed", "torch-npu-err-code"]),
}


def diagnose(case: str) -> Diagnoser:
    d = Diagnoser()
    for p in sorted((RELAYS / case).glob("*.log")):
        with open_log(p) as stream:
            d.feed_stream(stream, str(p))
    return d


def test_every_case_folder_is_in_the_table():
    assert sorted(p.name for p in RELAYS.iterdir() if p.is_dir()) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_specific_cause_first_relays_folded_waiting_ranks_after(case):
    cause_id, consequences, folded = CASES[case]
    d = diagnose(case)
    cause, rest = chain(d.matches())
    assert cause.id == cause_id, [m.id for m in d.matches()]
    assert [m.id for m in rest] == consequences
    assert sorted(r["id"] for r in cause.relayed) == sorted(folded)
    # a relay is reported beside the cause only when nothing specific explains it
    if cause.id not in RELAY_IDS:
        assert not [m.id for m in d.matches() if m.id in RELAY_IDS]
    report = report_dict(d.matches(), d.sources, d.lines)
    assert report["chain"]["cause"]["id"] == cause_id
    assert sorted(r["id"] for r in next(m for m in report["matches"] if m["id"] == cause_id).get("relayed", [])) == \
        sorted(folded)


def test_a_relay_seen_away_from_any_specific_error_stays():
    """The same ERR code far from the out-of-memory error (another failure, later) is not
    folded into it."""
    text = ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 29.50 GiB total capacity)\n"
            "[ERROR] 2026-01-02-10:00:00 (PID:7, Device:0, RankID:-1) ERR00006 PTA memory error\n"
            + "step 10 loss=1.0\n" * 30
            + "[ERROR] 2026-01-02-10:09:00 (PID:7, Device:0, RankID:-1) ERR00006 PTA memory error\n")
    d = Diagnoser()
    d.feed_text(text)
    ms = d.matches()
    assert [m.id for m in ms] == ["npu-out-of-memory", "torch-npu-err-code"]
    assert ms[0].relayed == [] and ms[1].count == 2


def test_a_relay_of_another_rank_is_not_folded():
    text = ("[rank1]: RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 1; 29.50 GiB total capacity)\n"
            "[rank0]: [ERROR] 2026-01-02-10:00:00 (PID:7, Device:0, RankID:0) ERR01100 OPS call acl api failed\n")
    d = Diagnoser()
    d.feed_text(text)
    assert [m.id for m in d.matches()] == ["npu-out-of-memory", "torch-npu-err-code"]


def test_timeout_alone_ranks_first_and_a_peer_error_code_outranks_it():
    """A collective timeout is the answer when it is all there is; an error code of another
    rank that no signature explains still ranks above it (that rank failed, this one waited)."""
    wait = "[rank0]: EI0002: [PID: 1] 2026-01-02-10:30:00.000.001 The wait execution of the Notify register times out.\n"
    d = Diagnoser()
    d.feed_text(wait)
    assert d.matches()[0].id == "hccl-exec-timeout"
    d = Diagnoser()
    d.feed_text("[rank2]: EZ9999: [PID: 3] 2026-01-02-10:00:00.000.001 Kernel launch aborted on core 3\n" + wait)
    assert [m.id for m in d.matches()] == ["cann-code", "hccl-exec-timeout"]
    d = Diagnoser()  # the same code on the waiting rank itself is its own relay, not another rank's failure
    d.feed_text(wait + "[rank0]: EZ9999: [PID: 1] 2026-01-02-10:30:00.000.002 Kernel launch aborted on core 3\n")
    assert d.matches()[0].id == "hccl-exec-timeout"


def test_text_report_lists_what_was_folded():
    d = diagnose("oom-rank3-timeouts")
    out = render_text(d.matches(), d.sources)
    assert "relayed: the same failure as the layers around it reported it" in out
    assert "line 9 [torch-npu-err-code] ERR02200" in out and "line 8 [torch-npu-err-code] ERR00006" in out


def test_asking_twice_gives_the_same_answer():
    d = diagnose("missing-op-interleaved")
    first = [(m.id, [r["id"] for r in m.relayed]) for m in d.matches()]
    assert [(m.id, [r["id"] for r in m.relayed]) for m in d.matches()] == first
