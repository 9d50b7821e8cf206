"""Recording which operators a command sends to the (emulated) npu, for `ascend-migrate ops`.

Switched on by ENV_OPS (a torch_npu release, or "-" for none): once the program has imported
torch, the npu (`torch_npu`, and `torch_npu.contrib.transfer_to_npu` so that a CUDA program's
device calls land on it) is imported in memory, and the device records every operator that
reaches it. With ENV_OPS_MODE=record (validating a port) nothing is imported: the port imports
the npu itself, which starts recording when NPU_STANDIN_RECORD_OPS=1. The counts, and where
each operator was first dispatched, are written to `ops-<pid>.json` in the harness folder when
the process stops after its counted steps, ends by itself, or reaches ENV_OPS_SECONDS.
"""
import atexit
import json
import os
import sys
import threading

from . import ENV_DIR, ENV_OPS, ENV_OPS_MODE, ENV_OPS_SECONDS, OPS_PREFIX, STOP_EXIT_CODE

_state = {"on": False, "written": False, "error": None, "steps": None}
_lock = threading.Lock()


def start_if_asked(steps_done):
    """Called by the training module once torch has been imported. `steps_done()` gives its
    count of optimizer steps so far, for the record (this module does not import that one)."""
    if not os.environ.get(ENV_OPS) or _state["on"]:
        return
    _state["on"] = True
    _state["steps"] = steps_done
    if os.environ.get(ENV_OPS_MODE) == "record":
        atexit.register(write, "finished")
        return
    try:
        import importlib
        # the emulated npu (its site folder is on the child's PYTHONPATH), imported by name: this
        # package imports nothing outside the standard library by itself
        npu = importlib.import_module("torch_npu")
        importlib.import_module("torch_npu.contrib.transfer_to_npu")
        npu._C.record_ops(True)
        npu._C.record_sites(True)
    except Exception as exc:  # the program still runs; the report says why nothing was counted
        _state["error"] = "%s: %s" % (type(exc).__name__, exc)
    atexit.register(write, "finished")
    seconds = os.environ.get(ENV_OPS_SECONDS)
    if seconds:
        timer = threading.Timer(float(seconds), _time_up)
        timer.daemon = True
        timer.start()


def _time_up():
    write("time")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(STOP_EXIT_CODE)


def write(status):
    """Write the counts once (the first of: stop after the steps, time up, exit)."""
    if not _state["on"]:
        return
    with _lock:
        if _state["written"]:
            return
        _state["written"] = True
        counts, sites, torch_npu = {}, {}, None
        try:
            torch_npu = sys.modules.get("torch_npu")
            if torch_npu is not None and _state["error"] is None:
                counts = torch_npu._C.record_ops(False)
                record_sites = getattr(torch_npu._C, "record_sites", None)
                if record_sites is not None:
                    sites = record_sites(False)
        except Exception as exc:
            _state["error"] = "%s: %s" % (type(exc).__name__, exc)
        steps = None
        try:
            steps = _state["steps"]() if _state["steps"] is not None else None
        except Exception:
            pass
        record = {"pid": os.getpid(), "rank": os.environ.get("RANK"), "status": status, "steps": steps,
                  "error": _state["error"], "npu": torch_npu is not None,
                  "ops": {op: dict(by_dtype) for op, by_dtype in counts.items()},
                  "sites": {op: [line.split("\t") for line in text.splitlines()] for op, text in sites.items()}}
        path = os.path.join(os.environ.get(ENV_DIR, "."), "%s%d.json" % (OPS_PREFIX, os.getpid()))
        try:
            with open(path + ".tmp", "w", encoding="utf-8") as fh:
                json.dump(record, fh)
            os.replace(path + ".tmp", path)
        except OSError:
            pass
