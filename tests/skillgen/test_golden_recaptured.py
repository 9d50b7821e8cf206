"""`skill` bundles the golden file the port passed against, never one re-captured since."""
from __future__ import annotations

import hashlib

from click.testing import CliRunner

from ascend_migrate.skillgen.cli import skill_command


def _report_with_golden(inputs, golden_bytes: bytes):
    golden = inputs.base / "golden.pt"
    golden.write_bytes(golden_bytes)
    prov = inputs.provenance()
    prov["golden"].update(path=str(golden), sha256=hashlib.sha256(golden_bytes).hexdigest())
    return golden, inputs.report(provenance=prov)


def test_golden_recaptured_after_validation_is_refused_naming_both_hashes(inputs, snapshot):
    golden, report = _report_with_golden(inputs, b"golden as validated")
    golden.write_bytes(b"golden captured again later")
    result = CliRunner().invoke(skill_command, inputs.args(report=report), catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert hashlib.sha256(b"golden as validated").hexdigest() in result.output
    assert hashlib.sha256(b"golden captured again later").hexdigest() in result.output
    assert snapshot(inputs.out) == {}


def test_golden_unchanged_since_validation_is_bundled(inputs):
    _golden, report = _report_with_golden(inputs, b"golden as validated")
    result = CliRunner().invoke(skill_command, inputs.args(report=report), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (inputs.out / "resnet-50" / "golden" / "golden.pt").read_bytes() == b"golden as validated"


def test_replay_commands_quote_hostile_entry_names(inputs):
    import json
    import shlex

    from ascend_migrate.skillgen.replaykit import migrate_command

    hostile = "tools/eval $(touch PWNED).py:main"
    line = migrate_command({"style": "transfer", "entry": [hostile], "min_torch": "2.6; rm -rf ~"})
    assert shlex.split(line)[shlex.split(line).index("--entry") + 1] == hostile
    assert "2.6; rm -rf ~" in shlex.split(line)
    prov = inputs.provenance()
    prov["golden"]["entry"] = hostile
    report = inputs.report(provenance=prov, options={"entry": hostile, "dtype": "fp32`id`"})
    result = CliRunner().invoke(skill_command, inputs.args(report=report), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    record = json.loads((inputs.out / "resnet-50" / "replay.json").read_text())
    capture = shlex.split(record["golden"]["capture_command"])
    assert capture[3] == hostile
    validate = shlex.split(record["validation"]["command"])
    assert validate[validate.index("--entry") + 1] == hostile and "fp32`id`" in validate
