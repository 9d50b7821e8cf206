"""`migrate --output DIR --force` over an earlier port: the earlier validation report and
confirmations are moved into `.ascend-migrate/stale-<time>/` (never deleted), so nothing reads a
stale pass as the state of the tree written now."""
import json
from pathlib import Path

import pytest

from ascend_migrate.fix import commit
from ascend_migrate.fix.api import migrate
from ascend_migrate.fix.commit import WriteError
from ascend_migrate.fix.runs import last_change_list
from ascend_migrate.skillgen.inputs import DEFAULT_REPORT
from ascend_migrate.validate.runner import CONFIRM_FILE, load_confirmations

STATE = {
    DEFAULT_REPORT.as_posix(): json.dumps({"schema": "ascend-migrate/validation-report/1", "verdict": "pass"}),
    ".ascend-migrate/validation-report.md": "# verdict: PASS\n",
    CONFIRM_FILE.as_posix(): json.dumps({"schema": "ascend-migrate/validation-confirmations/1",
                                         "confirmed": {"amp-dtype": {"note": "checked"}}}),
    ".ascend-migrate/my-notes.txt": "kept by the user\n",
}


def _source(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    return src


def _earlier_port(tmp_path):
    src = _source(tmp_path)
    out = tmp_path / "port"
    migrate(src, style="agnostic", output=out)
    for rel, text in STATE.items():
        (out / rel).write_text(text)
    return src, out


def test_force_moves_the_old_validation_state_aside(tmp_path):
    src, out = _earlier_port(tmp_path)
    first_run = last_change_list(out)
    result = migrate(src, style="agnostic", output=out, force=True)
    assert not result.errors
    state = out / ".ascend-migrate"
    stale = [d for d in state.iterdir() if d.name.startswith("stale-")]
    assert len(stale) == 1
    for rel, text in STATE.items():
        assert not (out / rel).exists(), rel  # nothing stale left where it is read
        assert (stale[0] / Path(rel).name).read_text() == text  # nothing deleted
    assert load_confirmations(out) == {}
    assert first_run is not None and first_run.is_file()  # the run history stays
    assert last_change_list(out) != first_run
    assert any("stale-" in n and "validate this tree again" in n for n in result.notes)


def test_second_force_keeps_both_generations(tmp_path):
    src, out = _earlier_port(tmp_path)
    migrate(src, style="agnostic", output=out, force=True)
    (out / DEFAULT_REPORT).write_text(STATE[DEFAULT_REPORT.as_posix()])
    migrate(src, style="agnostic", output=out, force=True)
    stale = sorted(d for d in (out / ".ascend-migrate").iterdir() if d.name.startswith("stale-"))
    assert len(stale) == 2 and not (out / DEFAULT_REPORT).exists()
    assert (stale[1] / "validation-report.json").is_file()


def test_failed_write_puts_the_state_back(tmp_path, monkeypatch):
    src, out = _earlier_port(tmp_path)

    def fail(self):
        raise WriteError("disk full")

    monkeypatch.setattr(commit.Transaction, "commit", fail)
    with pytest.raises(WriteError):
        migrate(src, style="agnostic", output=out, force=True)
    for rel, text in STATE.items():
        assert (out / rel).read_text() == text
    assert not [d for d in (out / ".ascend-migrate").iterdir() if d.name.startswith("stale-")]


def test_without_force_nothing_moves(tmp_path):
    src, out = _earlier_port(tmp_path)
    with pytest.raises(Exception, match="not empty"):
        migrate(src, style="agnostic", output=out)
    for rel, text in STATE.items():
        assert (out / rel).read_text() == text
