"""Edit sites: which target line gets which probe, and the rewritten code running.

In-process tests of the planner, then child processes that never import torch: a probed
`__main__` script is re-launched once and must see what the interpreter would have set up."""
from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_migrate.validate.harness import ENV_DIR, SITE_DIR, harness_env
from ascend_migrate.validate.harness.inject._ascend_migrate_harness import PROBE_NAME, probes
from harness_runs import PROJECTS, oldest_python

SOURCE = '''"""Module doc."""
from __future__ import annotations
import os

@staticmethod
def build(a,
          b=1):
    """Function doc."""
    x = (a +
         b)
    if x:
        y = 1
    else:
        y = 2
    try:
        z = 1 / 0
    except ZeroDivisionError:
        z = 0
    finally:
        pass
    # a comment

    return x + y + z

if os.sep: w = 1
elif os.sep == "?":
    w = 2


def never_called():
    return 3
'''
LAST = len(SOURCE.splitlines())


def _plan(lines):
    return probes.Plan(SOURCE.encode(), lines, 0)


def test_every_kind_of_line_is_planned():
    plan = _plan(range(1, LAST + 2))
    why = {line: entry[2] for line, entry in plan.lines.items()}
    mapped = {line: entry[1] for line, entry in plan.lines.items()}
    unprobeable = {line for line, entry in plan.lines.items() if entry[0] is None}
    assert unprobeable == {4, 13, 15, 19, 21, 22, 24, 28, 29, LAST + 1}
    assert why[4] == why[22] == "blank line" and why[21] == "comment"
    assert (why[13], why[15], why[19]) == ("'else:' line", "'try:' line", "'finally:' line")
    assert why[LAST + 1] == "no such line"
    assert mapped[5] == 6 and "decorator" in why[5]  # a decorator line: the def statement
    assert mapped[7] == 6 and mapped[10] == 9  # continuation lines: their statement
    assert mapped[17] == 17 and why[17].startswith("except clause")
    assert mapped[1] == 1 and why[1].startswith("docstring")
    for line in (3, 6, 9, 11, 12, 14, 16, 18, 20, 23, 25, 26, 27, 30, 31):
        assert plan.lines[line][1:] == (None, None), line  # the statement starts there


def _run_plan(plan, call=False):
    seen = set()
    setattr(builtins, PROBE_NAME, seen.add)
    try:
        namespace = {"__name__": "probed"}
        exec(plan.code("probed.py"), namespace)
        if call:
            namespace["build"].__func__(1)
    finally:
        delattr(builtins, PROBE_NAME)
    return {line for line, (key, _s, _w) in plan.lines.items() if key in seen}


def test_rewritten_module_keeps_docstring_and_future_import_first():
    plan = _plan([1, 2, 3, 9])
    namespace = {"__name__": "probed"}
    setattr(builtins, PROBE_NAME, lambda key: None)
    try:
        exec(plan.code("probed.py"), namespace)
    finally:
        delattr(builtins, PROBE_NAME)
    assert namespace["__doc__"] == "Module doc."
    assert namespace["annotations"].compiler_flag  # the __future__ import is still a future
    assert namespace["build"].__func__.__doc__ == "Function doc."


def test_probes_tell_what_ran():
    targets = [3, 6, 9, 12, 14, 16, 17, 18, 20, 23, 25, 26, 27, 31]
    ran = _run_plan(_plan(targets))
    assert ran == {3, 6, 25}  # import time: the function bodies and the elif did not run
    ran = _run_plan(_plan(targets), call=True)
    assert ran == {3, 6, 25, 9, 12, 16, 17, 18, 20, 23}
    assert 14 not in ran and 26 not in ran and 27 not in ran and 31 not in ran


def test_line_numbers_are_unchanged_in_tracebacks():
    source = "x = 1\n\ndef f():\n    return 1 / 0\n"
    plan = probes.Plan(source.encode(), [1, 4], 0)
    setattr(builtins, PROBE_NAME, lambda key: None)
    try:
        namespace = {}
        exec(plan.code("m.py"), namespace)
        with pytest.raises(ZeroDivisionError) as info:
            namespace["f"]()
    finally:
        delattr(builtins, PROBE_NAME)
    assert info.traceback[-1].lineno + 1 == 4


def test_a_file_that_does_not_parse_is_unprobeable():
    plan = probes.Plan(b"def broken(:\n    pass\n", [1, 2], 0)
    assert plan.code("bad.py") is None
    assert all(entry[0] is None and "does not parse" in entry[2] for entry in plan.lines.values())


# ------------------------------------------------------------------- child processes without torch

VIEW = '''"""Prints what the interpreter set up for this script."""
import json
import os
import sys

def unused():
    return "never"

view = {"argv": sys.argv, "path0": sys.path[0], "file": __file__, "name": __name__,
        "spec": repr(__spec__), "package": __package__, "doc": __doc__,
        "orig_argv": getattr(sys, "orig_argv", None), "pid": os.getpid(),
        "main": sys.modules["__main__"].__dict__ is globals()}
probes = sys.modules.get("_ascend_migrate_harness.probes")
if probes is not None and probes.SITES is not None:
    view["sites"] = probes.SITES.report()[0]
print(json.dumps(view))
'''


def _view(cmd, cwd, env):
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr
    view = json.loads(stdout.strip().splitlines()[-1])
    if "pid" in view:
        assert view.pop("pid") == proc.pid  # a re-launch keeps the process
    return view


def _interpreters():
    old = oldest_python()
    return [sys.executable] + ([old] if old and sys.version_info[:2] != (3, 9) else [])


@pytest.mark.parametrize("python", _interpreters(), ids=lambda p: Path(p).name)
def test_relaunched_main_script_sees_what_the_interpreter_gives(tmp_path, python):
    """`python -u -W ignore tools/view.py a b`: the probed re-launch keeps argv, the script's
    folder as sys.path[0], __file__, __name__, __doc__, the interpreter options and the pid."""
    (tmp_path / "tools").mkdir()
    script = tmp_path / "tools" / "view.py"
    script.write_text(VIEW)
    cmd = [python, "-u", "-W", "ignore", "tools/view.py", "a", "b"]
    plain = _view(cmd, tmp_path, {k: v for k, v in os.environ.items() if k != ENV_DIR})
    env = harness_env(tmp_path / "out", steps=1, sites={str(script): [1, 7, 9]})
    probed = _view(cmd, tmp_path, env)
    sites = probed.pop("sites")
    assert probed == plain
    assert plain["argv"] == ["tools/view.py", "a", "b"]
    assert plain["path0"] == str(tmp_path / "tools")
    assert sites == {str(script): {"1": "ran", "7": "not-run", "9": "ran"}}


def test_module_form_is_probed_without_relaunch(tmp_path):
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "cli.py").write_text(VIEW)
    env = harness_env(tmp_path / "out", steps=1, sites={str(pkg / "cli.py"): [7, 9]})
    view = _view([sys.executable, "-m", "app.cli", "x"], tmp_path, env)
    assert view["argv"] == [str(pkg / "cli.py"), "x"] and view["name"] == "__main__"
    assert view["sites"] == {str(pkg / "cli.py"): {"7": "not-run", "9": "ran"}}
    assert not list(pkg.glob("__pycache__/*"))  # no byte code of the probed file


CHAIN = '''import os
with open(os.environ["CHAIN_MARKER"], "a") as fh:
    fh.write("chained %s\\n" % __name__)
'''


@pytest.mark.parametrize("switch", [True, False], ids=["harness-on", "harness-off"])
def test_shadowed_sitecustomize_still_runs_and_torch_is_not_imported(tmp_path, switch):
    own = tmp_path / "site-own"
    own.mkdir()
    (own / "sitecustomize.py").write_text(CHAIN)
    marker = tmp_path / "marker.txt"
    base = dict(os.environ, PYTHONPATH=str(own), CHAIN_MARKER=str(marker))
    env = harness_env(tmp_path / "out", steps=3, base=base)
    if not switch:
        env.pop(ENV_DIR)
    assert env["PYTHONPATH"].split(os.pathsep)[:2] == [str(SITE_DIR), str(own)]
    proc = subprocess.run([sys.executable, "main.py"], cwd=PROJECTS / "no_torch", env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"most": "the", "torch_loaded": False}
    assert marker.read_text() == "chained sitecustomize\n"
    assert not list((tmp_path / "out").glob("rank-*"))  # nothing trained: no record


SPAWN = '''import json, multiprocessing as mp, sys

def child(queue):
    started = "_ascend_migrate_harness.boot" in sys.modules
    probes = sys.modules["_ascend_migrate_harness.probes"]
    queue.put({"started": started, "sites": probes.SITES.report()[0]})

if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=child, args=(queue,))
    proc.start()
    child_view = queue.get(timeout=60)
    proc.join(60)
    parent = "_ascend_migrate_harness.boot" in sys.modules
    print(json.dumps({"child": child_view, "parent": parent}))
'''


def test_spawned_children_start_the_harness_and_probe_the_main_script(tmp_path):
    """A spawn child runs the parent's main script again as __mp_main__ (runpy.run_path)."""
    script = tmp_path / "spawner.py"
    script.write_text(SPAWN)
    env = harness_env(tmp_path / "out", steps=2, sites={str(script): [4, 9]})
    view = _view([sys.executable, "spawner.py"], tmp_path, env)
    assert view == {"parent": True, "child": {"started": True,
                                              "sites": {str(script): {"4": "ran", "9": "not-run"}}}}
