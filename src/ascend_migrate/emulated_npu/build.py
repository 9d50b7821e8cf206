"""Build, cache and load the emulated npu's C++ half.

Standard library only at import time (torch is imported when needed), because the emulated
`torch_npu` loads this file by its path in every process it runs in, without importing the rest
of ascend_migrate.

The extension is compiled once per (torch version, Python version, source) into
`${XDG_CACHE_HOME:-~/.cache}/ascend-migrate/emulated-npu/<key>/` and loaded from there
afterwards. The compile runs in a child interpreter, so the process that asks for a build never
has the device's kernels registered in it; a file lock in the build folder makes concurrent
callers (the ranks of a distributed run, parallel tests) wait for one build instead of racing.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
import warnings
from collections import deque
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Mapping, Optional

from ascend_migrate.file_lock import exclusive

HERE = Path(__file__).resolve().parent
CSRC = HERE / "csrc"
#: The C++ sources of the device, in build order.
SOURCES = (CSRC / "npu_device.cpp",)
#: The folder holding the emulated `torch_npu` package; only `emulated_env` puts it on a path.
SITE = HERE / "site"
#: The extension reaches into PyTorch internals (dispatcher, device hooks, allocator); it is
#: written and checked against exactly this release.
SUPPORTED_TORCH = "2.13.0"
EXTENSION_NAME = "ascend_migrate_emulated_npu"
CFLAGS = ("-O1",)

#: A build folder to use instead of the cache folder (read by every process that loads the device).
BUILD_DIR_ENV = "NPU_STANDIN_BUILD_DIR"
#: How many npu devices the emulated torch_npu reports (default 1).
DEVICE_COUNT_ENV = "NPU_STANDIN_DEVICE_COUNT"
#: The torch_npu release whose coverage data drives the emulated transfer_to_npu (default 2.13.0).
RELEASE_ENV = "NPU_STANDIN_RELEASE"
#: "0" leaves autocast regions at full precision (for bit-for-bit comparisons with CPU).
AUTOCAST_ENV = "NPU_STANDIN_AUTOCAST"
#: "1" in every process that runs on the emulated npu: results made there are labelled emulated.
EMULATED_ENV = "ASCEND_MIGRATE_EMULATED_NPU"

MARKER = "built.json"
LOCK = "build.lock"
BUILD_LOG = "build.log"
_TORCH_BATON = "lock"  # torch.utils.cpp_extension's own lock file; left behind if a build is killed
_COMPILERS = ("c++", "g++", "clang++")
_TAIL_LINES = 40


class EmulatedNpuError(RuntimeError):
    """The emulated npu cannot be built or loaded here; the message says what is missing."""


# ------------------------------------------------------------------------------ identities
def torch_release(version: str) -> str:
    """'2.13.0+cpu' -> '2.13.0'."""
    return version.split("+", 1)[0]


def source_sha256() -> str:
    """Digest of the C++ sources (names and contents): a change of source is a new build."""
    digest = hashlib.sha256()
    for path in SOURCES:
        digest.update(path.name.encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def python_tag() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def cache_root() -> Path:
    """`${XDG_CACHE_HOME:-~/.cache}/ascend-migrate/emulated-npu` (a relative XDG_CACHE_HOME is
    ignored, as the XDG specification asks)."""
    configured = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(configured) if configured and os.path.isabs(configured) else Path.home() / ".cache"
    return base / "ascend-migrate" / "emulated-npu"


def build_key(torch_version: str) -> str:
    return f"torch-{torch_version}-py{python_tag()}-{source_sha256()[:12]}"


def _import_torch() -> Any:
    try:
        with warnings.catch_warnings():  # what torch says while importing (no NumPy, ...) is not ours to show
            warnings.simplefilter("ignore")
            import torch
    except Exception as exc:  # ImportError, or a broken install failing inside its own import
        raise EmulatedNpuError(_torch_missing(exc)) from exc
    return torch


def build_dir(torch_version: Optional[str] = None) -> Path:
    """The build folder in use: $NPU_STANDIN_BUILD_DIR when set, else the cache folder for this
    torch, Python and source."""
    configured = os.environ.get(BUILD_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    if torch_version is None:
        torch_version = _import_torch().__version__
    return cache_root() / build_key(torch_version)


def library_path(directory: Path) -> Path:
    suffix = ".pyd" if sys.platform == "win32" else ".so"
    return directory / f"{EXTENSION_NAME}{suffix}"


def read_marker(directory: Path) -> Optional[Dict[str, Any]]:
    try:
        data = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_built(directory: Path, torch_version: str) -> bool:
    """A finished build of these sources for this torch and Python sits in `directory`."""
    marker = read_marker(directory)
    return bool(marker) and library_path(directory).is_file() and marker.get("torch") == torch_version \
        and marker.get("python") == python_tag() and marker.get("source_sha256") == source_sha256()


# ---------------------------------------------------------------------------- prerequisites
def _torch_missing(exc: BaseException) -> str:
    return (f"torch is not importable by {sys.executable} ({type(exc).__name__}: {exc}); the emulated npu "
            f"runs on torch {SUPPORTED_TORCH}: pip install torch=={SUPPORTED_TORCH}")


def _torch_version_problem(version: str) -> Optional[str]:
    if torch_release(version) == SUPPORTED_TORCH:
        return None
    return (f"torch {version} is installed, but the emulated npu is written against torch {SUPPORTED_TORCH}'s "
            f"internals (dispatcher, device hooks, allocator) and builds with that release only: "
            f"pip install torch=={SUPPORTED_TORCH} (in an environment of its own if this one needs {version})")


def find_compiler() -> "tuple[Optional[str], Optional[str]]":
    """(compiler path, None) or (None, what is wrong). $CXX when set, else c++, g++ or clang++."""
    configured = os.environ.get("CXX", "").strip()
    if configured:
        words = shlex.split(configured)
        found = shutil.which(words[0]) if words else None
        if found is None:
            return None, (f"no C++ compiler: CXX={configured} names no program that can be run; set CXX to a "
                          f"C++ compiler or unset it to use c++, g++ or clang++ from PATH")
        return found, None
    for name in _COMPILERS:
        found = shutil.which(name)
        if found:
            return found, None
    return None, ("no C++ compiler: CXX is unset and none of c++, g++, clang++ is on PATH; install one "
                  "(Debian/Ubuntu: apt-get install g++; Fedora/RHEL: dnf install gcc-c++) or set CXX")


def python_header() -> Path:
    return Path(sysconfig.get_paths()["include"]) / "Python.h"


def _headers_problem() -> Optional[str]:
    header = python_header()
    if header.is_file():
        return None
    tag = python_tag()
    return (f"no Python headers: {header} is missing; install this Python's development files "
            f"(Debian/Ubuntu: apt-get install python3-dev, or python{tag}-dev for a non-default {tag}; "
            f"Fedora/RHEL: dnf install python3-devel)")


def find_ninja() -> Optional[Path]:
    """The folder holding `ninja`: on PATH, beside this interpreter (a venv's ninja wheel when
    the venv is not activated), or the ninja package's own bin folder."""
    found = shutil.which("ninja")
    if found:
        return Path(found).resolve().parent
    beside = Path(sys.executable).parent
    for name in ("ninja", "ninja.exe"):
        if (beside / name).is_file():
            return beside
    try:
        import ninja  # type: ignore[import-not-found]

        bin_dir = Path(getattr(ninja, "BIN_DIR", ""))
        if any((bin_dir / name).is_file() for name in ("ninja", "ninja.exe")):
            return bin_dir
    except Exception:
        pass
    return None


def _ninja_problem() -> Optional[str]:
    if find_ninja() is not None:
        return None
    return ("no ninja: torch's extension builder (torch.utils.cpp_extension) runs it; pip install ninja "
            "(ascend-migrate's `test` extra installs it)")


def missing() -> List[str]:
    """What stops a build here, one sentence each naming what to install (empty: nothing)."""
    problems: List[str] = []
    try:
        torch = _import_torch()
    except EmulatedNpuError as exc:
        problems.append(str(exc))
    else:
        version_problem = _torch_version_problem(torch.__version__)
        if version_problem:
            problems.append(version_problem)
    _, compiler_problem = find_compiler()
    for problem in (compiler_problem, _headers_problem(), _ninja_problem()):
        if problem:
            problems.append(problem)
    return problems


def _refusal(problems: List[str]) -> EmulatedNpuError:
    lines = "\n".join(f"  - {p}" for p in problems)
    return EmulatedNpuError(f"the emulated npu cannot be built here:\n{lines}")


# ----------------------------------------------------------------------------------- build

def _build_environment(compiler: str) -> Dict[str, str]:
    env = dict(os.environ)
    ninja_dir = find_ninja()
    if ninja_dir is not None:
        env["PATH"] = os.pathsep.join([str(ninja_dir), env.get("PATH", "")])
    if not env.get("CXX", "").strip():
        env["CXX"] = compiler  # torch runs $CXX or `c++`; a host with only g++ or clang++ needs it named
    return env


def _compile_in_child(directory: Path, compiler: str, verbose: bool) -> None:
    """Run this file as a script in a fresh interpreter to compile into `directory`; raise with
    the tail of the compiler's output when it fails."""
    # -W ignore: what torch warns about while importing (no NumPy, ...) would only bury the compiler's lines
    command = [sys.executable, "-W", "ignore", str(Path(__file__).resolve()), "--compile", str(directory)]
    if verbose:
        command.append("--verbose")
    tail: deque = deque(maxlen=_TAIL_LINES)
    with subprocess.Popen(command, env=_build_environment(compiler), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail.append(line.rstrip("\n"))
            if verbose:
                sys.stderr.write(line)
                sys.stderr.flush()
    if proc.returncode != 0:
        said = "\n".join(tail).strip() or "(no output)"
        raise EmulatedNpuError(f"building the emulated npu in {directory} failed (exit {proc.returncode}); "
                               f"the last lines of the build's output:\n{said}")
    if not library_path(directory).is_file():
        raise EmulatedNpuError(f"building the emulated npu in {directory} produced no {library_path(directory).name}")


def _compile_here(directory: Path, verbose: bool) -> None:
    """The child's side: torch.utils.cpp_extension at -O1 (ninja skips what is up to date)."""
    from torch.utils import cpp_extension

    cpp_extension.load(name=EXTENSION_NAME, sources=[str(s) for s in SOURCES], build_directory=str(directory),
                       extra_cflags=list(CFLAGS), verbose=verbose)


def _write_marker(directory: Path, data: Dict[str, Any]) -> None:
    scratch = directory / f".{MARKER}.{os.getpid()}"
    scratch.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(scratch, directory / MARKER)


def ensure_built(verbose: bool = False) -> Path:
    """The build folder of the emulated npu, compiling it first if this torch, Python and source
    have no finished build yet (tens of seconds once; later calls only read a marker file).

    Concurrent callers wait on a lock in the folder while one of them builds. Raises
    EmulatedNpuError naming what is missing (torch 2.13.0, a C++ compiler, Python headers,
    ninja) before any compile is tried, or with the compiler's last lines if the compile fails."""
    try:
        torch = _import_torch()
    except EmulatedNpuError:
        raise _refusal(missing()) from None
    version = torch.__version__
    directory = build_dir(version)
    if is_built(directory, version):
        return directory
    problems = missing()
    if problems:
        raise _refusal(problems)
    compiler, _ = find_compiler()
    assert compiler is not None
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmulatedNpuError(f"cannot create the build folder {directory} ({exc.strerror or exc}); point "
                               f"XDG_CACHE_HOME or {BUILD_DIR_ENV} at a writable folder") from exc
    with exclusive(directory / LOCK):
        if is_built(directory, version):  # another process built it while this one waited
            return directory
        # Under the lock nobody else is inside torch's builder here: a baton it left is stale.
        with contextlib.suppress(FileNotFoundError):
            (directory / _TORCH_BATON).unlink()
        (directory / MARKER).unlink(missing_ok=True)
        started = time.monotonic()
        _compile_in_child(directory, compiler, verbose)
        marker = {
            "torch": version, "python": python_tag(), "source_sha256": source_sha256(),
            "compiler": compiler, "cflags": list(CFLAGS), "seconds": round(time.monotonic() - started, 1),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "pid": os.getpid(),
            "library": library_path(directory).name,
        }
        _write_marker(directory, marker)
        with open(directory / BUILD_LOG, "a", encoding="utf-8") as log:  # one line per compile made here
            log.write(f"{marker['built_at']} pid {marker['pid']} compiled source {marker['source_sha256'][:12]} "
                      f"for torch {version} in {marker['seconds']} s\n")
    return directory


# ------------------------------------------------------------------------------------ load
def load_extension(verbose: bool = False) -> ModuleType:
    """Build if needed, then import the extension into this process (registers the device's
    kernels: only the emulated torch_npu calls this)."""
    loaded = sys.modules.get(EXTENSION_NAME)
    if loaded is not None:
        return loaded
    torch = _import_torch()
    problem = _torch_version_problem(torch.__version__)
    if problem:
        raise EmulatedNpuError(problem)
    directory = ensure_built(verbose=verbose)
    path = library_path(directory)
    spec = importlib.util.spec_from_file_location(EXTENSION_NAME, path)
    if spec is None or spec.loader is None:
        raise EmulatedNpuError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        raise EmulatedNpuError(f"the emulated npu built in {directory} does not load ({exc}); "
                               f"`ascend-migrate emulated-npu clean` and build again") from exc
    sys.modules[EXTENSION_NAME] = module
    return module


# ------------------------------------------------------------------------- status and clean
def status() -> Dict[str, Any]:
    """What is built where, for which torch and source, and what a build would still need."""
    info: Dict[str, Any] = {
        "supported_torch": SUPPORTED_TORCH,
        "python": python_tag(),
        "source_sha256": source_sha256()[:12],
        "cache_root": str(cache_root()),
        "build_dir_override": os.environ.get(BUILD_DIR_ENV, "").strip() or None,
    }
    try:
        version: Optional[str] = _import_torch().__version__
    except EmulatedNpuError:
        version = None
    info["torch"] = version
    directory = build_dir(version) if version is not None or info["build_dir_override"] else None
    info["build_dir"] = str(directory) if directory is not None else None
    info["built"] = bool(directory is not None and version is not None and is_built(directory, version))
    info["build"] = read_marker(directory) if info["built"] and directory is not None else None
    info["missing"] = missing()
    info["cached"] = [{"path": str(p), "built": read_marker(p) is not None and library_path(p).is_file()}
                      for p in cached_builds()]
    return info


def cached_builds() -> List[Path]:
    root = cache_root()
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())


def clean() -> List[Path]:
    """Remove every build folder under the cache root; a folder whose lock another process holds
    (a build in progress) is left. Returns the folders removed. An override folder
    ($NPU_STANDIN_BUILD_DIR) is the caller's and is never touched."""
    removed: List[Path] = []
    for folder in cached_builds():
        if is_busy(folder):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    return removed


def is_busy(folder: Path) -> bool:
    """Another process holds `folder`'s build lock (it is building there right now)."""
    lock = folder / LOCK
    if not lock.exists():
        return False
    try:
        import fcntl
    except ImportError:
        return False
    with open(lock, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return False


# ----------------------------------------------------------------------- child environment
def _package_root() -> Optional[Path]:
    """The folder holding `ascend_migrate` when a child needs it named on PYTHONPATH (a source
    checkout); None when it sits in an interpreter's site-packages, which children see anyway."""
    root = HERE.parents[1]
    installed = set()
    for key in ("purelib", "platlib"):
        with contextlib.suppress(KeyError):
            installed.add(Path(sysconfig.get_paths()[key]).resolve())
    with contextlib.suppress(Exception):
        import site

        installed.update(Path(p).resolve() for p in site.getsitepackages())
        installed.add(Path(site.getusersitepackages()).resolve())
    return None if root.resolve() in installed else root


def emulated_env(base: Optional[Mapping[str, str]] = None, device_count: int = 1,
                 release: str = SUPPORTED_TORCH) -> Dict[str, str]:
    """The environment of a child process that sees the emulated npu as `torch_npu`.

    `base` defaults to this process's environment. The site folder comes first on PYTHONPATH (so
    the child's `import torch_npu` finds the emulated one), then the folder holding ascend_migrate
    when it is a source checkout (the emulated transfer_to_npu reads its coverage data), then
    the base's own PYTHONPATH. The build folder is the base's $NPU_STANDIN_BUILD_DIR if it names
    one, else the cache folder `ensure_built()` fills; `release` picks the torch_npu release whose
    coverage drives transfer_to_npu. Nothing outside the returned mapping changes."""
    if isinstance(device_count, bool) or not isinstance(device_count, int) or device_count < 1:
        raise ValueError(f"device_count must be a positive integer, not {device_count!r}")
    env = dict(os.environ if base is None else base)
    given = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    parts = [str(SITE)]
    root = _package_root()
    if root is not None and str(root) not in given:
        parts.append(str(root))
    env["PYTHONPATH"] = os.pathsep.join(parts + [p for p in given if p != str(SITE)])
    ninja_dir = find_ninja()
    if ninja_dir is not None and str(ninja_dir) not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = os.pathsep.join(filter(None, [str(ninja_dir), env.get("PATH", "")]))
    configured = env.get(BUILD_DIR_ENV, "").strip()
    if configured:
        env[BUILD_DIR_ENV] = str(Path(configured).expanduser().resolve())
    else:
        env[BUILD_DIR_ENV] = str(build_dir())
    env[DEVICE_COUNT_ENV] = str(device_count)
    env[RELEASE_ENV] = release
    env[EMULATED_ENV] = "1"
    return env


if __name__ == "__main__":  # the compile step of ensure_built, in a child interpreter
    _args = sys.argv[1:]
    if len(_args) < 2 or _args[0] != "--compile":
        sys.exit("usage: build.py --compile DIRECTORY [--verbose]")
    try:
        _compile_here(Path(_args[1]), verbose="--verbose" in _args[2:])
    except Exception as _exc:  # the compiler's output is in the message; a traceback adds nothing
        print(f"{type(_exc).__name__}: {_exc}", file=sys.stderr)
        sys.exit(1)
