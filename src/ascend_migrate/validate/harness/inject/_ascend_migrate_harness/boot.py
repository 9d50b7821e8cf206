"""Switching the harness on: read the parent's settings, re-launch a probed `__main__` script
once, and put the import hook in place that patches torch when the program imports it."""
import json
import os
import sys

from . import (ENV_DIR, ENV_ORIG_ARGV, ENV_RELAUNCHED, ENV_SEED, ENV_SITES, ENV_STEPS,
               ENV_THREADS)

_WATCHED = ("torch", "torch_npu")
_started = False
finder = None  # the meta-path finder, once started
sites = None  # probes.Sites when edit sites were given


def _warn(message):
    try:
        sys.stderr.write("ascend-migrate harness: %s\n" % message)
    except Exception:
        pass


def _int_env(name, default=None):
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        _warn("%s=%r is not an integer; ignored" % (name, raw))
        return default


def _read_sites():
    path = os.environ.get(ENV_SITES, "").strip()
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        files = data["files"]
        return {str(k): [int(n) for n in v] for k, v in files.items()}
    except Exception as exc:
        _warn("edit sites not read from %s: %s: %s" % (path, type(exc).__name__, exc))
        return None


def start():
    """Called by sitecustomize when the switch variable is set."""
    global _started, finder, sites
    if _started:
        return
    _started = True
    out_dir = os.environ.get(ENV_DIR, "").strip()
    if not out_dir:
        return
    files = _read_sites()
    if files:
        from . import probes
        sites = probes.Sites(files)
        _maybe_relaunch(sites)  # replaces this process image when __main__ is a site file
        probes.patch_runpy(sites)
    from . import training
    training.configure(out_dir=os.path.abspath(out_dir), limit=max(0, _int_env(ENV_STEPS, 0)),
                       seed=_int_env(ENV_SEED), threads=_int_env(ENV_THREADS), sites=sites)
    finder = HarnessFinder(sites)
    sys.meta_path.insert(0, finder)
    for name in _WATCHED:  # imported before us (by a .pth file): patch now
        module = sys.modules.get(name)
        if module is not None:
            training.on_import(name, module)


# ---------------------------------------------------------------------------------------- finder

class HarnessFinder:
    """First on sys.meta_path. Asks the finders after it, then (a) arranges for the patches once
    `torch` / `torch_npu` has finished importing and (b) gives edit-site files the probing loader.
    Without edit sites it answers None at once for every other name."""

    def __init__(self, site_set):
        self.sites = site_set
        self._busy = set()

    def find_spec(self, fullname, path=None, target=None):
        watched = fullname in _WATCHED
        if not watched and self.sites is None:
            return None
        if fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = self._others(fullname, path, target)
        finally:
            self._busy.discard(fullname)
        if spec is None:
            return None
        if watched:
            _watch(spec, fullname)
        elif self.sites is not None:
            self.sites.adopt(spec)
        return spec

    def _others(self, fullname, path, target):
        for other in list(sys.meta_path):
            if other is self:
                continue
            find = getattr(other, "find_spec", None)
            if find is None:
                continue
            try:
                spec = find(fullname, path, target)
            except TypeError:
                spec = find(fullname, path)
            if spec is not None:
                return spec
        return None

    def invalidate_caches(self):
        pass


class _LoaderProxy:
    """Used only when a loader does not accept an instance attribute."""

    def __init__(self, loader, after):
        self._loader = loader
        self._after = after

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._after(module)


def _watch(spec, name):
    loader = spec.loader
    if loader is None or not hasattr(loader, "exec_module"):
        return

    def after(module):
        from . import training
        training.on_import(name, module)

    original = loader.exec_module

    def exec_module(module):
        try:
            del loader.exec_module
        except AttributeError:
            pass
        original(module)
        after(module)

    try:
        loader.exec_module = exec_module
    except (AttributeError, TypeError):
        spec.loader = _LoaderProxy(loader, after)


# -------------------------------------------------------------------------------------- relaunch

def _interpreter_flags():
    """The interpreter options before the script name, or None when they cannot be told."""
    argv = list(sys.argv)
    orig = getattr(sys, "orig_argv", None)
    if orig is not None:
        n = len(argv)
        if n and len(orig) > n and list(orig[len(orig) - n:]) == argv:
            return list(orig[1:len(orig) - n])
        return None
    import subprocess  # Python 3.9: rebuilt from sys.flags, -W and -X options
    flags = list(subprocess._args_from_interpreter_flags())
    stdout = sys.stdout
    if stdout is not None and type(getattr(stdout, "buffer", None)).__name__ == "FileIO":
        flags.insert(0, "-u")  # -u is not in sys.flags: seen as an unbuffered stdout
    return flags


def _maybe_relaunch(site_set):
    """`python script.py` where script.py is an edit-site file: the interpreter compiled it
    itself, so no import hook can probe it. Run the same interpreter again (same pid, through
    os.execv) on the runner module, which executes the probed code as `__main__`."""
    if os.environ.get(ENV_RELAUNCHED) == str(os.getpid()):
        return  # this is the re-launched image
    if not sys.argv or os.name != "posix":  # os.execv keeps the process only on POSIX
        return
    script = sys.argv[0]
    if not script or script in ("-c", "-m", "-") or not os.path.isfile(script):
        return
    if site_set.match(script) is None:
        return
    flags = _interpreter_flags()
    if flags is None or "-x" in flags:
        _warn("cannot re-launch %s with its interpreter options; its edit sites are not probed"
              % script)
        return
    orig = getattr(sys, "orig_argv", None) or [sys.executable] + flags + list(sys.argv)
    os.environ[ENV_RELAUNCHED] = str(os.getpid())
    os.environ[ENV_ORIG_ARGV] = json.dumps(list(orig))
    code = "import _ascend_migrate_harness.runner as r; r.main()"
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        os.execv(sys.executable, [sys.executable] + flags + ["-c", code] + list(sys.argv))
    except OSError as exc:
        os.environ.pop(ENV_RELAUNCHED, None)
        os.environ.pop(ENV_ORIG_ARGV, None)
        _warn("re-launch failed (%s); the edit sites of %s are not probed" % (exc, script))
