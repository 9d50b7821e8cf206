"""Runs a probed script as `__main__` after the one re-launch (see boot._maybe_relaunch).

Started as `python [options] -c "import _ascend_migrate_harness.runner as r; r.main()" SCRIPT
ARGS...`; it puts back what the interpreter would have set for `python [options] SCRIPT ARGS...`:
sys.argv, sys.orig_argv, sys.path[0] (the script's folder) and a fresh `__main__` module.
"""
import builtins
import json
import os
import sys
import types

from . import ENV_ORIG_ARGV, ENV_RELAUNCHED


def _script_folder(script):
    """As the interpreter does it: the script's own symbolic links followed, then its folder."""
    path = script
    for _ in range(40):
        if not os.path.islink(path):
            break
        target = os.readlink(path)
        path = target if os.path.isabs(target) else os.path.join(os.path.dirname(path), target)
    return os.path.dirname(os.path.abspath(path))


def main():
    from . import probes, training
    os.environ.pop(ENV_RELAUNCHED, None)
    orig = os.environ.pop(ENV_ORIG_ARGV, None)
    if orig and hasattr(sys, "orig_argv"):
        try:
            sys.orig_argv = json.loads(orig)
        except ValueError:
            pass
    argv = sys.argv[1:]
    script = argv[0]
    path = os.path.abspath(script)
    sys.argv = argv
    if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] == "":
        sys.path[0] = _script_folder(script)
    code = probes.SITES.code_for(path) if probes.SITES is not None else None
    if code is None:
        with open(path, "rb") as fh:
            code = compile(fh.read(), path, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__cached__ = None
    module.__loader__ = probes.ProbeLoader("__main__", path)
    module.__spec__ = None
    module.__package__ = None
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    try:
        exec(code, module.__dict__)
    except SystemExit as exc:
        training.note_exit(exc.code)
        raise
