"""Options and terminal behaviour shared by every command: colour, quiet/verbose, broken pipes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from cli_commands import all_commands


def _runner() -> CliRunner:
    """A runner that keeps stderr apart: click 8.2+ always does; 8.1 (Python 3.9) needs asking."""
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


SRC = Path(__file__).resolve().parents[2] / "src"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


@pytest.mark.parametrize("name,cmd", list(all_commands()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_command_takes_no_color_quiet_and_verbose(name, cmd):
    names = {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", []))}
    assert {"--no-color", "-q", "--quiet", "-v", "--verbose"} <= names, name


@pytest.mark.parametrize("args,env,colored", [
    (["scan", "{tree}", "--color"], {}, True),
    (["scan", "{tree}", "--color"], {"NO_COLOR": "1"}, True),   # an explicit flag wins
    (["scan", "{tree}"], {"NO_COLOR": "1"}, False),
    (["--color", "scan", "{tree}", "--no-color"], {}, False),
    (["rules", "--color"], {}, None),
])
def test_color_follows_flag_and_no_color(tmp_path, args, env, colored):
    (tmp_path / "t.py").write_text("import torch\nx = torch.cuda.get_device_capability()\n", encoding="utf-8")
    argv = [a.replace("{tree}", str(tmp_path)) for a in args]
    if "scan" in argv:
        argv.append("--no-cache")
    out = _runner().invoke(cli, argv, env=env, color=True)
    assert out.exit_code in (0, 1), out.output
    if colored is not None:
        assert ("\x1b[" in out.output) is colored


def test_quiet_drops_the_wrote_line(tmp_path):
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n", encoding="utf-8")
    report = tmp_path / "r.json"
    loud = _runner().invoke(cli, ["scan", str(tmp_path), "--format", "json", "-o", str(report), "--no-cache"])
    quiet = _runner().invoke(cli, ["scan", str(tmp_path), "--format", "json", "-o", str(report), "--no-cache", "-q"])
    assert "wrote json report" in loud.stderr
    assert quiet.stderr == "" and report.exists()


@pytest.mark.parametrize("args", [["rules"], ["rules", "--json"], ["explain", "CU101"]])
def test_closed_pipe_exits_quietly(args):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write, like `| head` after one line
    try:
        proc = subprocess.run([sys.executable, "-m", "ascend_migrate", *args], stdout=write_end,
                              stderr=subprocess.PIPE, env=_env(), timeout=120)
    finally:
        os.close(write_end)
    assert proc.stderr.decode() == ""
    assert proc.returncode == 141


def _loud_and_quiet(argv):
    loud = _runner().invoke(cli, argv)
    quiet = _runner().invoke(cli, [*argv, "-q"])
    verbose = _runner().invoke(cli, [*argv, "-v"])
    return loud, quiet, verbose


def test_env_quiet_drops_the_wrote_line(tmp_path):
    loud, quiet, _ = _loud_and_quiet(["env", "-o", str(tmp_path / "npu_env.sh")])
    assert loud.exit_code == quiet.exit_code == 0, loud.output
    assert "wrote " in loud.stderr and "wrote " not in quiet.stderr
    assert (tmp_path / "npu_env.sh").is_file()


def test_scaffold_quiet_drops_the_next_step(tmp_path):
    loud = _runner().invoke(cli, ["scaffold", "training", str(tmp_path / "a")])
    quiet = _runner().invoke(cli, ["scaffold", "training", str(tmp_path / "b"), "-q"])
    assert loud.exit_code == quiet.exit_code == 0, loud.output
    assert "next: python" in loud.stdout and "next:" not in quiet.stdout
    assert (tmp_path / "b" / "train.py").is_file()


def test_scan_verbose_adds_a_summary_line(tmp_path):
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n", encoding="utf-8")
    loud, quiet, verbose = _loud_and_quiet(["scan", str(tmp_path), "--format", "json", "--no-cache"])
    assert "scanned 1 files" in verbose.stderr and "scanned" not in loud.stderr + quiet.stderr
    assert json.loads(verbose.stdout)["findings"] == json.loads(loud.stdout)["findings"]


def test_migrate_verbose_lists_every_manual_item_and_each_rewritten_file(tmp_path):
    lines = ["import torch", "from torch.nn import DataParallel", "x = torch.randn(2).cuda()"]
    lines += [f"m{i} = DataParallel(torch.nn.Linear(2, 2))" for i in range(60)]
    (tmp_path / "train.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    loud, quiet, verbose = _loud_and_quiet(["migrate", str(tmp_path), "--style", "agnostic"])
    assert loud.exit_code == verbose.exit_code == quiet.exit_code == 0, loud.output
    manual_lines = lambda out: [ln for ln in out.stderr.splitlines() if ln.startswith("  manual ")]  # noqa: E731
    assert len(manual_lines(loud)) == 50 and "more in the change list (all with -v)" in loud.stderr
    assert len(manual_lines(verbose)) == 60 and "more in the change list" not in verbose.stderr
    assert "  rewrote train.py: " in verbose.stderr and "rewrote train.py" not in loud.stderr
    assert quiet.stdout == "" and loud.stdout.startswith("---")


def test_report_to_a_device_or_a_pipe_is_written(tmp_path):
    """`-o /dev/null` (or a FIFO) cannot be replaced by a rename: it is written in place, not refused."""
    (tmp_path / "t.py").write_text("import torch\ntorch.cuda.synchronize()\n", encoding="utf-8")
    res = _runner().invoke(cli, ["scan", str(tmp_path), "--format", "json", "-o", os.devnull, "--no-cache"])
    assert res.exit_code in (0, 1), res.output
    assert "error" not in res.stderr and "wrote json report" in res.stderr
    if not hasattr(os, "mkfifo"):
        return
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen([sys.executable, "-c", f"import sys; sys.stdout.write(open({str(fifo)!r}).read())"],
                              stdout=subprocess.PIPE, text=True)
    res = _runner().invoke(cli, ["scan", str(tmp_path), "--format", "json", "-o", str(fifo), "--no-cache"])
    out, _ = reader.communicate(timeout=60)
    assert res.exit_code in (0, 1), res.output
    assert '"rule": "CU001"' in out or '"CU001"' in out
