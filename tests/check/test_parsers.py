"""npu-smi, CANN version file and env-value parsers, on fixtures in real shapes."""
from pathlib import Path

import pytest

from ascend_migrate.check.parsers import (
    base_version,
    cann_version_key,
    parse_device,
    parse_install_info,
    parse_key_values,
    parse_npu_smi,
    parse_version_cfg,
    parse_visible_devices,
)

SMI = Path(__file__).resolve().parents[1] / "fixtures" / "check" / "npu_smi"


def smi(name):
    return parse_npu_smi((SMI / name).read_text())


def test_910b_idle_two_cards():
    info = smi("910b3_idle.txt")
    assert info.version == "24.1.rc2"
    assert info.npu_ids == [0, 1]
    assert [c.name for c in info.chips] == ["910B3", "910B3"]
    c0 = info.chips[0]
    assert (c0.health, c0.bus_id, c0.power_w, c0.temp_c) == ("OK", "0000:C1:00.0", 91.3, 36)
    assert (c0.hbm_used_mb, c0.hbm_total_mb) == (3465, 65536)
    assert info.processes == [] and info.errors == [] and info.ok


def test_busy_card_processes_and_health():
    info = smi("910b4_busy.txt")
    assert [(c.npu, c.health) for c in info.chips] == [(0, "OK"), (1, "Warning")]
    assert info.chips[0].aicore_pct == 87
    assert (info.chips[0].memory_used_mb, info.chips[0].memory_total_mb) == (1024, 2048)
    procs = [(p.npu, p.pid, p.name, p.memory_mb) for p in info.processes]
    assert procs == [(0, 4321, "python3", 27400), (0, 4388, "", 120)]


def test_910_two_chips_per_npu_with_phy_ids():
    info = smi("910_two_chips.txt")
    assert info.npu_ids == [0, 1]
    assert [(c.npu, c.chip, c.phy_id) for c in info.chips] == [(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]
    assert info.chips[1].power_w is None  # "-" in the power column
    assert info.errors == []


def test_310p_has_no_hbm_column():
    info = smi("310p3.txt")
    (c,) = info.chips
    assert c.name == "310P3" and c.power_w is None
    assert (c.memory_used_mb, c.memory_total_mb, c.hbm_total_mb) == (1782, 21527, None)
    assert info.errors == []


@pytest.mark.parametrize(
    "name, needle",
    [
        ("truncated.txt", "second row missing"),
        ("device_used.txt", "device is used"),
        ("garbage.txt", "no device table"),
        ("bad_rows.txt", "expected '<chip>' row"),
        ("bad_rows.txt", "unreadable HBM-Usage(MB)"),
    ],
)
def test_malformed_outputs_report_errors_without_raising(name, needle):
    info = smi(name)
    assert not info.ok
    assert any(needle in e for e in info.errors), info.errors


def test_empty_output():
    assert parse_npu_smi("").errors == ["empty output"]


def test_install_info():
    text = (
        "package_name=Ascend-cann-toolkit\nversion=8.3.RC2\ninnerversion=V100R001C23SPC002B210\n"
        "compatible_version=[V100R001C15],[V100R001C18]\narch=aarch64\nos=linux\n"
        "path=/usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux\n"
    )
    info = parse_install_info(text)
    assert (info.package, info.version, info.arch, info.errors) == ("Ascend-cann-toolkit", "8.3.RC2", "aarch64", [])
    assert parse_install_info("package_name=x\n").errors == ["no 'version=' line"]
    assert "unrecognised version" in parse_install_info("version=banana\n").errors[0]


def test_version_cfg():
    text = "# version: 1.0\nruntime_running_version=[7.6.0.1.220:8.0.0]\ntoolkit_running_version=[7.6.0.1.220:8.0.0]\nruntime_upgrade_version=[7.6.0.1.220:8.0.0]\n"
    parsed = parse_version_cfg(text)
    assert parsed["version"] == "8.0.0" and parsed["components"] == {"runtime": "8.0.0", "toolkit": "8.0.0"}
    assert parsed["inner"]["runtime"] == "7.6.0.1.220" and parsed["errors"] == []
    bad = parse_version_cfg("runtime_running_version=[7.5.0\nfoo\n")
    assert bad["version"] == "" and bad["errors"]


def test_key_values_skip_junk():
    assert parse_key_values("# c\nVersion=24.1.rc2\n=x\nno equals\n bad key=1\n") == {"Version": "24.1.rc2"}


@pytest.mark.parametrize(
    "lower, higher",
    [("8.0.RC1", "8.0.RC3"), ("8.0.RC3", "8.0.0"), ("8.0.0", "8.1.RC1"), ("8.1.RC1", "8.5.0"),
     ("8.0.T6", "8.0.RC1"), ("8.0.RC2.alpha002", "8.0.RC2"), ("7.0.0", "8.0.RC1"), ("9.2.0-beta.2", "9.2.0")],
)
def test_cann_version_order(lower, higher):
    assert cann_version_key(lower) < cann_version_key(higher)


def test_cann_version_rejects_junk():
    assert cann_version_key("latest") is None and cann_version_key("") is None


@pytest.mark.parametrize(
    "value, ids, err",
    [(None, None, None), ("0,1,3", [0, 1, 3], None), ("", [], "empty"), ("0,x", None, "not a device number"), ("1,0", [1, 0], "ascending")],
)
def test_visible_devices(value, ids, err):
    got_ids, got_err = parse_visible_devices(value)
    assert got_ids == ids
    assert (got_err is None) == (err is None) and (err is None or err in got_err)


def test_devices_and_versions():
    assert parse_device("npu:3") == ("npu", 3) and parse_device("cpu") == ("cpu", 0) and parse_device("cuda") == ("cuda", 0)
    for bad in ("gpu:0", "npu:-1", "cpu:1", "npu:a"):
        with pytest.raises(ValueError):
            parse_device(bad)
    assert base_version("2.13.0+cpu") == "2.13.0" and base_version("2.1.0.post12") == "2.1.0" and base_version("2.12.0rc1") == "2.12.0"
