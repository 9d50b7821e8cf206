"""Finding CANN on disk, on fixture trees in the real layouts."""
import os
import shutil
from pathlib import Path

from ascend_migrate.check.cann import find_cann

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "check" / "cann"


def test_default_root_with_install_info():
    root = FIX / "cann_8.0.RC3" / "Ascend"
    inst = find_cann({}, default_roots=[root])
    assert inst.found and inst.found_via == "default path"
    assert inst.home == root / "ascend-toolkit" / "latest"
    assert inst.version == "8.0.RC3" and inst.version_source.endswith("ascend_toolkit_install.info")
    assert inst.packages == {"Ascend-cann-toolkit": "8.0.RC3"}
    assert inst.set_env == root / "ascend-toolkit" / "set_env.sh"
    assert inst.driver_version == "24.1.rc2"
    assert inst.warnings == []


def test_ascend_home_path_wins_over_defaults():
    home = FIX / "cann_8.1.RC1_x86" / "Ascend" / "ascend-toolkit" / "latest"
    inst = find_cann({"ASCEND_HOME_PATH": str(home)}, default_roots=[FIX / "cann_8.0.RC3" / "Ascend"])
    assert inst.found_via == "ASCEND_HOME_PATH" and inst.version == "8.1.RC1"


def test_version_cfg_fallback():
    inst = find_cann({}, default_roots=[FIX / "cfg_only_8.0.0" / "Ascend"])
    assert inst.version == "8.0.0" and inst.version_source.endswith("version.cfg")


def test_malformed_files_give_warnings_not_errors():
    inst = find_cann({}, default_roots=[FIX / "malformed" / "Ascend"])
    assert inst.found and inst.version == ""
    joined = " | ".join(inst.warnings)
    assert "ascend_toolkit_install.info: no 'version=' line" in joined
    assert "version.cfg" in joined


def test_symlinked_latest_and_missing_latest(tmp_path):
    src = FIX / "cann_8.0.RC3" / "Ascend"
    root = tmp_path / "Ascend"
    shutil.copytree(src, root, symlinks=True)
    tk = root / "ascend-toolkit"
    (tk / "latest").rename(tk / "8.0.RC3")
    inst = find_cann({}, default_roots=[root])  # no 'latest': the highest versioned dir
    assert inst.home == tk / "8.0.RC3" and inst.version == "8.0.RC3"
    os.symlink("8.0.RC3", tk / "latest")
    inst = find_cann({}, default_roots=[root])
    assert inst.home == tk / "latest" and inst.version == "8.0.RC3"


def test_nothing_found_lists_searched_and_bad_env(tmp_path):
    inst = find_cann({"ASCEND_HOME_PATH": str(tmp_path / "gone"), "HOME": str(tmp_path)}, default_roots=[tmp_path / "none"])
    assert not inst.found
    assert str(tmp_path / "gone") in inst.searched and str(tmp_path / "Ascend") in inst.searched
    assert any("ASCEND_HOME_PATH" in w for w in inst.warnings)
