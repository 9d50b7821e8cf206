"""Start-up hook of the validation harness.

Python imports `sitecustomize` at start-up from the first sys.path entry that has one; this
folder is put first on PYTHONPATH for a project's command. With the switch variable set the
harness is started; in every case the `sitecustomize` this file shadows (the next one on
sys.path) still runs, as it would have without this folder.
"""
import os as _os
import sys as _sys

_SWITCH = "ASCEND_MIGRATE_HARNESS_DIR"


def _start_harness():
    try:
        from _ascend_migrate_harness import boot
        boot.start()
    except Exception as exc:  # the program must run even when the harness cannot
        try:
            _sys.stderr.write("ascend-migrate harness: not started: %s: %s\n"
                              % (type(exc).__name__, exc))
        except Exception:
            pass


def _shadowed_spec():
    """The spec of the `sitecustomize` that comes after this folder on sys.path, or None."""
    import importlib.machinery

    here = _os.path.dirname(_os.path.realpath(__file__))
    after, found = [], False
    for entry in list(_sys.path):
        if not isinstance(entry, str):
            continue
        try:
            same = _os.path.realpath(entry or _os.getcwd()) == here
        except (OSError, ValueError):
            same = False
        if same:
            found = True
        elif found:
            after.append(entry)
    if not found:
        return None
    return importlib.machinery.PathFinder.find_spec("sitecustomize", after)


def _chain():
    spec = _shadowed_spec()
    if spec is None or spec.loader is None:
        return
    import importlib.util

    module = importlib.util.module_from_spec(spec)
    # The shadowed module takes the name, as if this folder were not there.
    _sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # what site.execsitecustomize does with a failing sitecustomize
        if _sys.flags.verbose:
            _sys.excepthook(*_sys.exc_info())
        else:
            _sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                              "%s: %s\n" % (err.__class__.__name__, err))


if __name__ == "sitecustomize":  # imported under its package name it does nothing
    if _os.environ.get(_SWITCH):
        _start_harness()
    _chain()
