"""The optional vLLM stages of `check`, on hand-written package metadata."""
from ascend_migrate.check.vllm_stage import pairing_table, release, vllm_stages
from ascend_migrate.knowledge.base import load_knowledge


def _by_id(stages):
    return {s.id: s for s in stages}


def test_release_numbers():
    assert release("0.23.0") == (0, 23, 0)
    assert release("0.23.0rc1") == (0, 23, 0)
    assert release("0.9.1+empty") == (0, 9, 1)
    assert release("v0.11.0") == (0, 11, 0)
    assert release("dev") is None


def test_the_pairing_table_is_the_one_the_scanner_reports():
    table = pairing_table()
    assert table[(0, 23, 0)] == load_knowledge().rule("VL008").match["supported"]["==0.23.0"]
    assert len(table) == len(load_knowledge().rule("VL008").match["supported"])


def test_healthy_pair_with_the_plugin():
    stages = _by_id(vllm_stages({"vllm": "0.23.0", "vllm-ascend": "0.23.0", "torch_npu": "2.10.0.post4"}, ["ascend"]))
    assert [s.status for s in stages.values()] == ["ok", "ok", "ok", "ok"]
    assert "CANN 9.1.0" in stages["vllm_pairing"].found


def test_release_candidate_pairs_with_the_final_of_its_line():
    stages = _by_id(vllm_stages({"vllm": "0.22.1", "vllm_ascend": "0.22.1rc1", "torch_npu": "2.10.0"}, ["ascend"]))
    assert stages["vllm_pairing"].status == "ok"


def test_mismatched_versions_fail_with_the_fix():
    stage = _by_id(vllm_stages({"vllm": "0.18.0", "vllm-ascend": "0.13.0"}, ["ascend"]))["vllm_pairing"]
    assert stage.status == "fail"
    assert "vllm-ascend==0.18.0" in stage.fix


def test_vllm_without_a_plugin_release_names_the_ones_that_exist():
    stage = _by_id(vllm_stages({"vllm": "0.6.3", "vllm-ascend": "0.23.0"}, ["ascend"]))["vllm_pairing"]
    assert stage.status == "fail" and "no vllm-ascend release" in stage.fix and "0.23.0" in stage.fix


def test_other_torch_npu_than_the_release_expects_is_a_warning():
    stage = _by_id(vllm_stages({"vllm": "0.23.0", "vllm-ascend": "0.23.0", "torch_npu": "2.9.0"}, ["ascend"]))["vllm_pairing"]
    assert stage.status == "warn" and "2.10.0.post4" in stage.fix


def test_editable_vllm_needs_vllm_version():
    stage = _by_id(vllm_stages({"vllm": "dev", "vllm-ascend": "0.23.0"}, ["ascend"]))["vllm_pairing"]
    assert stage.status == "fail" and "VLLM_VERSION" in stage.fix


def test_missing_packages_and_plugin():
    stages = _by_id(vllm_stages({"vllm": "0.23.0"}, []))
    assert stages["vllm_ascend"].status == "fail" and "vllm-ascend==0.23.0" in stages["vllm_ascend"].fix
    assert stages["vllm_pairing"].status == "skip"
    assert _by_id(vllm_stages({}, []))["vllm"].status == "fail"


def test_plugin_missing_or_competing():
    missing = _by_id(vllm_stages({"vllm": "0.23.0", "vllm-ascend": "0.23.0"}, []))["vllm_plugin"]
    assert missing.status == "fail" and "Failed to infer device type" in missing.cause
    two = _by_id(vllm_stages({"vllm": "0.23.0", "vllm-ascend": "0.23.0"}, ["ascend", "other"]))["vllm_plugin"]
    assert two.status == "fail" and "other" in two.fix


def test_run_check_appends_the_vllm_stages_and_says_so(monkeypatch):
    from types import SimpleNamespace

    from ascend_migrate.check import runner
    from ascend_migrate.check.model import Report, ok

    facts = SimpleNamespace(info={"dists": {"vllm": "0.23.0"}, "vllm_platform_plugins": []})
    monkeypatch.setattr(runner, "collect", lambda device, **kw: facts)
    monkeypatch.setattr(runner, "build_report", lambda f, elapsed=0.0: Report(
        device="cpu", python="py", stages=[ok("python", "Python", "3.10")], summary="cpu is ready: all checks passed."))
    report = runner.run_check("cpu", vllm=True)
    assert [s.id for s in report.stages] == ["python", "vllm", "vllm_ascend", "vllm_pairing", "vllm_plugin"]
    assert report.exit_code == 1
    assert "all checks passed" not in report.summary and "vllm_ascend" in report.summary
    assert [s.id for s in runner.run_check("cpu").stages] == ["python"]


def test_probe_reads_entry_point_groups_of_this_interpreter():
    import importlib.util
    from pathlib import Path

    import ascend_migrate.check.runner as runner

    spec = importlib.util.spec_from_file_location("_probe_for_test", Path(runner.PROBE))
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    assert probe._entry_point_names("no.such.group") == []
    assert "py.test" in probe._entry_point_names("console_scripts") or "pytest" in probe._entry_point_names("console_scripts")
