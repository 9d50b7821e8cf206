"""What each torch_npu release covers: the coverage files and the queries over them.

One JSON file per torch_npu version (`torch_npu-<version>.json` beside this module), written
by `ascend-migrate kb sync` from the release's own sources. Releases a user synced live in the
user's data folder (`knowledge.user_data`), which is read first: a file there stands in for
the packaged one of the same version. Consumers ask questions through
`Coverage` rather than reading the JSON:

    cov = load_coverage("2.1.0")          # newest shipped 2.1.0 build; None = newest overall
    cov.cuda_overlaid("get_device_capability")
    cov.torch_fn_wrapped("randint")
    cov.distributed_patched("torch.distributed.new_group")

A malformed file raises KnowledgeError ("file: key: reason"), like every knowledge-base file.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from ascend_migrate.knowledge.loader import KnowledgeError, read_text

COVERAGE_DIR = Path(__file__).resolve().parent
SCHEMA_VERSION = 1

__all__ = [
    "COVERAGE_DIR",
    "Coverage",
    "KnowledgeError",
    "Overlay",
    "Patch",
    "available_versions",
    "build_key",
    "coverage_file",
    "diff_coverage",
    "is_user_file",
    "load_coverage",
    "newest_version",
    "parse_version",
    "resolve_version",
    "synced_file",
]

_VERSION_RE = re.compile(
    r"^v?(?P<release>\d+(?:\.\d+)*)(?:(?P<pre>rc|a|b)(?P<pre_n>\d+))?(?:\.?post(?P<post>\d+))?$"
)


def parse_version(text: str) -> tuple:
    """A sortable key for versions such as 2.1.0, 2.1.0.post10, 2.6.0rc1. ValueError if not one."""
    match = _VERSION_RE.match(text.strip())
    if not match:
        raise ValueError(f"not a torch_npu version: {text!r}")
    release = tuple(int(p) for p in match["release"].split("."))
    release = release + (0,) * (3 - len(release)) if len(release) < 3 else release
    pre = (0, match["pre"], int(match["pre_n"])) if match["pre"] else (1, "", 0)
    post = int(match["post"]) if match["post"] is not None else -1
    return release, pre, post


def build_key(text: str) -> tuple:
    """`parse_version` with `.post0` read as the release itself: the key two names of one build
    share ('v2.13.0', '2.13.0', '2.13.0.post0'), so neither can pass for a newer build of the
    other. ValueError if not a version."""
    release, pre, post = parse_version(text)
    return release, pre, -1 if post == 0 else post


@dataclass(frozen=True)
class Patch:
    """One attribute transfer_to_npu assigns while it is imported."""

    target: str
    kind: str  # "wrap" (original wrapped), "alias" (points at a torch/torch_npu object), "replace"
    value: str
    wrappers: tuple[str, ...] = ()
    condition: Optional[str] = None
    deferred: bool = False


@dataclass(frozen=True)
class Overlay:
    """A torch module that transfer_to_npu overlays with a torch_npu module."""

    target: str
    source: str
    mode: str  # "names": copies `names`; "module": replaces the module; "unknown"
    names: Optional[tuple[str, ...]] = None
    condition: Optional[str] = None
    note: Optional[str] = None


@dataclass(frozen=True, eq=False)
class Coverage:
    """One torch_npu release's transfer_to_npu coverage, with queries."""

    version: str
    path: Path
    data: Mapping[str, Any] = field(repr=False)

    # ---- raw sections
    @property
    def transfer(self) -> Mapping[str, Any]:
        return self.data["transfer_to_npu"]

    @property
    def source(self) -> Mapping[str, Any]:
        return self.data["source"]

    @property
    def missing(self) -> Mapping[str, str]:
        return self.data.get("missing") or {}

    @cached_property
    def npu_all(self) -> Optional[frozenset[str]]:
        names = self.data.get("npu_all")
        return frozenset(names) if names is not None else None

    @cached_property
    def overlays(self) -> tuple[Overlay, ...]:
        return tuple(
            Overlay(
                target=o["target"],
                source=o["source"],
                mode=o["mode"],
                names=tuple(o["names"]) if o.get("names") is not None else None,
                condition=o.get("condition"),
                note=o.get("note"),
            )
            for o in self.transfer.get("overlays") or []
        )

    @cached_property
    def patches(self) -> dict[str, Patch]:
        return {
            target: Patch(
                target=target,
                kind=p["kind"],
                value=p["value"],
                wrappers=tuple(p.get("wrappers") or ()),
                condition=p.get("condition"),
                deferred=bool(p.get("deferred")),
            )
            for target, p in (self.transfer.get("patches") or {}).items()
        }

    @cached_property
    def wrapped(self) -> dict[str, frozenset[str]]:
        """Wrap target (e.g. 'torch', 'torch.Tensor', 'torch.fft') -> names wrapped on it."""
        return {t: frozenset(n) for t, n in (self.transfer.get("wrapped") or {}).items()}

    def _section(self, key: str) -> Optional[frozenset[str]]:
        names = self.transfer.get(key)
        return frozenset(names) if names is not None else None

    @cached_property
    def torch_functions(self) -> Optional[frozenset[str]]:
        return self._section("torch_functions")

    @cached_property
    def tensor_methods(self) -> Optional[frozenset[str]]:
        return self._section("tensor_methods")

    @cached_property
    def module_methods(self) -> Optional[frozenset[str]]:
        return self._section("module_methods")

    @cached_property
    def cuda_functions(self) -> Optional[frozenset[str]]:
        return self._section("cuda_functions")

    @cached_property
    def distributed_patches(self) -> Optional[frozenset[str]]:
        return self._section("distributed_patches")

    @property
    def jit_script_disabled(self) -> Optional[bool]:
        return self.transfer.get("jit_script_disabled")

    @property
    def device_kwargs(self) -> Optional[tuple[str, ...]]:
        names = self.transfer.get("device_kwargs")
        return tuple(names) if names is not None else None

    @property
    def env_activation(self) -> bool:
        """Whether TORCH_TRANSFER_TO_NPU=1 enables transfer_to_npu in this release."""
        return bool(self.transfer.get("env_activation"))

    # ---- queries
    @staticmethod
    def _strip(name: str, prefix: str) -> str:
        return name[len(prefix) + 1:] if name.startswith(prefix + ".") else name

    def torch_fn_wrapped(self, name: str) -> bool:
        """torch.<name>(device="cuda") is rewritten to npu."""
        return self._strip(name, "torch") in (self.torch_functions or ())

    def tensor_fn_wrapped(self, name: str) -> bool:
        """torch.Tensor.<name>("cuda") is rewritten to npu."""
        return self._strip(name, "torch.Tensor") in (self.tensor_methods or ())

    def module_fn_wrapped(self, name: str) -> bool:
        """torch.nn.Module.<name>("cuda") is rewritten to npu."""
        return self._strip(name, "torch.nn.Module") in (self.module_methods or ())

    def cuda_fn_wrapped(self, name: str) -> bool:
        """torch.cuda.<name> gets its device arguments rewritten (after the overlay)."""
        return self._strip(name, "torch.cuda") in (self.cuda_functions or ())

    def is_wrapped(self, qualname: str) -> bool:
        """`qualname` (e.g. 'torch.fft.fftfreq') is wrapped through one of the name lists."""
        owner, _, name = qualname.rpartition(".")
        return name in self.wrapped.get(owner, ())

    def patch(self, qualname: str) -> Optional[Patch]:
        """The explicit assignment of `qualname` (e.g. 'torch.cuda.CUDAGraph'), if any."""
        return self.patches.get(qualname)

    def is_patched(self, qualname: str) -> bool:
        """`qualname` is assigned explicitly, wrapped through a list, lies in an overlaid module,
        or is a class whose `__init__` is wrapped (`torch.autocast` through
        `torch.amp.autocast_mode.autocast.__init__`)."""
        for name in (qualname, f"{qualname}.__init__", *_ROUTES.get(qualname, ())):
            if name in self.patches or self.is_wrapped(name):
                return True
        return self._overlay_covers(qualname) is not None

    def _overlay_covers(self, qualname: str) -> Optional[Overlay]:
        best: Optional[Overlay] = None
        for overlay in self.overlays:
            if overlay.mode == "module" and (
                qualname == overlay.target or qualname.startswith(overlay.target + ".")
            ):
                if best is None or len(overlay.target) > len(best.target):
                    best = overlay
            elif overlay.mode == "names" and overlay.names is not None:
                owner, _, name = qualname.rpartition(".")
                if owner == overlay.target and name in overlay.names:
                    if best is None or len(overlay.target) > len(best.target):
                        best = overlay
        return best

    def cuda_overlaid(self, name: str) -> bool:
        """torch.cuda.<name> is the NPU implementation once transfer_to_npu is imported.

        `name` may be 'synchronize', 'amp.GradScaler' or 'torch.cuda.amp.GradScaler'. True when
        an overlay copies the name (torch_npu.npu.__all__ or a submodule's __all__), when its
        module is replaced wholesale, or when the name is assigned explicitly to something
        other than a wrapper of the CUDA original.
        """
        qual = name if name.startswith("torch.cuda") else f"torch.cuda.{name}"
        patch = self.patches.get(qual)
        if patch is not None and patch.kind in ("alias", "replace"):
            return True
        return self._overlay_covers(qual) is not None

    def distributed_patched(self, qualname: str) -> bool:
        """e.g. 'torch.distributed.init_process_group', 'torch.distributed.device_mesh.init_device_mesh'.

        Also accepts the public name of a function that goes through a patched private one:
        'torch.distributed.new_group' is patched where `_new_group_with_tag` is.
        """
        qual = qualname if qualname.startswith("torch.") else f"torch.distributed.{qualname}"
        names = self.distributed_patches or frozenset()
        if qual in names:
            return True
        aliases = _ROUTES.get(qual, ())
        return any(a in names for a in aliases)

    def third_party(self, package: str) -> Optional[dict[str, Any]]:
        """{'min_version': str, 'apis': {qualname: 'method'|'function'}} or None if not wrapped."""
        section = self.data.get("third_party")
        if not section:
            return None
        entry = section["packages"].get(package)
        return dict(entry) if entry is not None else None

    @property
    def third_party_packages(self) -> Optional[tuple[str, ...]]:
        section = self.data.get("third_party")
        return tuple(sorted(section["packages"])) if section else None

    def summary(self) -> dict[str, Any]:
        def count(value: Any) -> Optional[int]:
            return len(value) if value is not None else None

        return {
            "torch_npu_version": self.version,
            "source": dict(self.source),
            "torch_functions": count(self.torch_functions),
            "tensor_methods": count(self.tensor_methods),
            "module_methods": count(self.module_methods),
            "cuda_functions": count(self.cuda_functions),
            "npu_all": count(self.npu_all),
            "overlays": [o.target for o in self.overlays],
            "distributed_patches": count(self.distributed_patches),
            "jit_script_disabled": self.jit_script_disabled,
            "env_activation": self.env_activation,
            "third_party": list(self.third_party_packages or ()),
            "missing": dict(self.missing),
        }


# Public names that reach a (private or differently named) target transfer_to_npu patches.
_ROUTES: dict[str, tuple[str, ...]] = {
    "torch.autocast": ("torch.amp.autocast_mode.autocast.__init__",),
    "torch.amp.autocast": ("torch.amp.autocast_mode.autocast.__init__",),
    "torch.distributed.new_group": ("torch.distributed.distributed_c10d._new_group_with_tag",),
    "torch.distributed.distributed_c10d.new_group": (
        "torch.distributed.distributed_c10d._new_group_with_tag",
    ),
    "torch.distributed.init_device_mesh": ("torch.distributed.device_mesh.init_device_mesh",),
    "torch.distributed.device_mesh.DeviceMesh": ("torch.distributed.device_mesh.DeviceMesh.__init__",),
    "torch.distributed.fsdp.FullyShardedDataParallel": (
        "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel.__init__",
    ),
    "torch.nn.parallel.DistributedDataParallel": (
        "torch.nn.parallel.DistributedDataParallel.__init__",
    ),
}


# ------------------------------------------------------------------------------------------
# Files and versions.


def _files(directory: Optional[Path]) -> dict[str, Path]:
    """{version: file}; with no `directory`, the packaged files overlaid by the user's own
    (`knowledge.user_data`), so a release the user synced is the one used."""
    from ascend_migrate.knowledge.user_data import user_coverage_files

    base = Path(directory) if directory is not None else COVERAGE_DIR
    paths = sorted(base.glob("torch_npu-*.json"))
    if directory is None:
        paths += user_coverage_files()
    out: dict[str, Path] = {}
    for path in paths:
        out[path.name[len("torch_npu-"):-len(".json")]] = path
    return out


def is_user_file(path: Path | str) -> bool:
    """Whether a coverage file comes from the user's data folder rather than the package."""
    from ascend_migrate.knowledge.user_data import user_coverage_dir

    return Path(path).parent == user_coverage_dir()


def synced_file(version: str) -> Optional[Path]:
    """The file `kb sync` wrote that the coverage of `version` is read from, or None when it is
    the packaged one (reports name it: its content came from a wheel, not from the package)."""
    path = _files(None).get(version) if version else None
    return path if path is not None and is_user_file(path) else None


def coverage_file(version: str, directory: Optional[Path] = None) -> Optional[Path]:
    """The file the loader reads for exactly `version` (no resolving), or None."""
    return _files(directory).get(version)


def available_versions(directory: Optional[Path] = None) -> list[str]:
    """Versions with a coverage file, oldest first. Two names of one build (`build_key`: a
    synced 'v2.13.0' or '2.13.0.post0' beside the packaged '2.13.0') sort packaged last, so
    the packaged one is the newest of the two and the one a release or a line resolves to: a
    file synced from a wheel of unknown origin is the default only for a build the package
    does not have (and the scan report then names it)."""
    files = _files(directory)

    def key(v: str) -> tuple:
        try:
            return (1, build_key(v), not is_user_file(files[v]), parse_version(v))
        except ValueError:
            return (0, v)

    return sorted(files, key=key)


def newest_version(directory: Optional[Path] = None) -> Optional[str]:
    versions = available_versions(directory)
    return versions[-1] if versions else None


def resolve_version(requested: Optional[str], directory: Optional[Path] = None) -> str:
    """Map what a user asked for onto a shipped version.

    Exact match first; then the newest build of the same release ('2.1.0' -> '2.1.0.post10');
    then the newest build of the same major.minor line ('2.6' or '2.6.1' -> '2.6.0.post5').
    KnowledgeError when nothing matches.
    """
    versions = available_versions(directory)
    base = Path(directory) if directory is not None else COVERAGE_DIR
    if not versions:
        raise KnowledgeError(base, "<versions>", "no coverage files; run `ascend-migrate kb sync`")
    if requested is None:
        return versions[-1]
    requested = requested.strip()
    if requested in versions:
        return requested
    try:
        want = parse_version(requested)
    except ValueError as exc:
        raise KnowledgeError(base, requested, str(exc)) from exc
    parsed = []
    for rank, v in enumerate(versions):  # oldest first, packaged after a synced name of the same build
        try:
            parsed.append((parse_version(v), rank, v))
        except ValueError:
            continue
    same_release = [p for p in parsed if p[0][0] == want[0] and (want[1] == (1, "", 0) or p[0][1] == want[1])]
    if want[2] >= 0:
        same_release = [p for p in same_release if p[0][2] == want[2]]
    if same_release:
        return max(same_release, key=lambda p: p[1])[2]
    same_line = [p for p in parsed if p[0][0][:2] == want[0][:2]]
    if same_line:
        return max(same_line, key=lambda p: p[1])[2]
    shipped = ", ".join(versions)
    raise KnowledgeError(
        base,
        requested,
        f"no coverage for torch_npu {requested} (have: {shipped}); "
        "run `ascend-migrate kb sync --wheel torch_npu-<version>-*.whl`",
    )


def load_coverage(version: Optional[str] = None, directory: Optional[Path] = None) -> Coverage:
    """The coverage of `version` (resolved with `resolve_version`; None = newest shipped)."""
    resolved = resolve_version(version, directory)
    path = _files(directory)[resolved]
    return _load_path(str(path), path.stat().st_mtime_ns)


def load_coverage_file(path: Path | str) -> Coverage:
    """Load and check one coverage file."""
    path = Path(path)
    try:
        mtime = path.stat().st_mtime_ns
    except OSError as exc:
        raise KnowledgeError(path, "<file>", f"cannot read: {exc.strerror or exc}") from exc
    return _load_path(str(path), mtime)


@lru_cache(maxsize=32)
def _load_path(path_str: str, _mtime: int) -> Coverage:
    path = Path(path_str)
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KnowledgeError(path, f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from exc
    validate(data, path)
    return Coverage(version=data["torch_npu_version"], path=path, data=data)


# ------------------------------------------------------------------------------------------
# Schema check.

_STR_LIST_OR_NULL = "list of strings or null"


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _need(cond: bool, path: Path, key: str, reason: str) -> None:
    if not cond:
        raise KnowledgeError(path, key, reason)


def validate(data: Any, path: Path | str) -> None:
    """Raise KnowledgeError ('file: key: reason') unless `data` is a well-formed coverage document."""
    path = Path(path)
    _need(isinstance(data, dict), path, "<top>", f"expected an object, got {type(data).__name__}")
    for key in ("schema_version", "torch_npu_version", "source", "transfer_to_npu", "npu_all", "missing"):
        _need(key in data, path, key, "missing required key")
    _need(
        data["schema_version"] == SCHEMA_VERSION,
        path,
        "schema_version",
        f"expected {SCHEMA_VERSION}, got {data['schema_version']!r}",
    )
    _need(isinstance(data["torch_npu_version"], str), path, "torch_npu_version", "expected a string")
    expected_name = f"torch_npu-{data['torch_npu_version']}.json"
    _need(
        path.name == expected_name or not path.name.startswith("torch_npu-"),
        path,
        "torch_npu_version",
        f"{data['torch_npu_version']!r} does not match the file name (expected {expected_name})",
    )
    source = data["source"]
    _need(isinstance(source, dict), path, "source", "expected an object")
    _need(source.get("kind") in ("wheel", "site-packages"), path, "source.kind", "expected 'wheel' or 'site-packages'")
    if source["kind"] == "wheel":
        _need(isinstance(source.get("filename"), str), path, "source.filename", "expected the wheel file name")
        sha = source.get("sha256")
        _need(
            isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha) is not None,
            path,
            "source.sha256",
            "expected 64 lowercase hex digits",
        )
    _need(data["npu_all"] is None or _is_str_list(data["npu_all"]), path, "npu_all", _STR_LIST_OR_NULL)
    missing = data["missing"]
    _need(
        isinstance(missing, dict) and all(isinstance(v, str) for v in missing.values()),
        path,
        "missing",
        "expected an object of reasons",
    )
    if data["npu_all"] is None:
        _need("npu_all" in missing, path, "npu_all", "null without a reason in 'missing'")

    t = data["transfer_to_npu"]
    _need(isinstance(t, dict), path, "transfer_to_npu", "expected an object")
    for key in ("torch_functions", "tensor_methods", "module_methods", "cuda_functions", "distributed_patches", "device_kwargs"):
        _need(key in t, path, f"transfer_to_npu.{key}", "missing required key")
        _need(t[key] is None or _is_str_list(t[key]), path, f"transfer_to_npu.{key}", _STR_LIST_OR_NULL)
        if t[key] is None:
            _need(
                f"transfer_to_npu.{key}" in missing,
                path,
                f"transfer_to_npu.{key}",
                "null without a reason in 'missing'",
            )
    _need(
        t.get("jit_script_disabled") is None or isinstance(t.get("jit_script_disabled"), bool),
        path,
        "transfer_to_npu.jit_script_disabled",
        "expected true, false or null",
    )
    wrapped = t.get("wrapped", {})
    _need(
        isinstance(wrapped, dict) and all(_is_str_list(v) for v in wrapped.values()),
        path,
        "transfer_to_npu.wrapped",
        "expected an object of string lists",
    )
    overlays = t.get("overlays", [])
    _need(isinstance(overlays, list), path, "transfer_to_npu.overlays", "expected a list")
    for i, o in enumerate(overlays):
        where = f"transfer_to_npu.overlays[{i}]"
        _need(isinstance(o, dict), path, where, "expected an object")
        for key in ("target", "source", "mode"):
            _need(isinstance(o.get(key), str), path, f"{where}.{key}", "expected a string")
        _need(o["mode"] in ("names", "module", "unknown"), path, f"{where}.mode", "expected names, module or unknown")
        if o["mode"] == "names":
            _need(_is_str_list(o.get("names")), path, f"{where}.names", "expected a list of strings")
    patches = t.get("patches", {})
    _need(isinstance(patches, dict), path, "transfer_to_npu.patches", "expected an object")
    for target, p in patches.items():
        where = f"transfer_to_npu.patches.{target}"
        _need(isinstance(p, dict), path, where, "expected an object")
        _need(p.get("kind") in ("wrap", "alias", "replace"), path, f"{where}.kind", "expected wrap, alias or replace")
        _need(isinstance(p.get("value"), str), path, f"{where}.value", "expected a string")
        _need(_is_str_list(p.get("wrappers", [])), path, f"{where}.wrappers", "expected a list of strings")
    third = data.get("third_party")
    if third is not None:
        _need(isinstance(third, dict) and isinstance(third.get("packages"), dict), path, "third_party.packages", "expected an object")
        for package, entry in third["packages"].items():
            where = f"third_party.packages.{package}"
            _need(isinstance(entry, dict), path, where, "expected an object")
            _need(isinstance(entry.get("min_version"), str), path, f"{where}.min_version", "expected a string")
            apis = entry.get("apis")
            _need(
                isinstance(apis, dict) and all(v in ("method", "function") for v in apis.values()),
                path,
                f"{where}.apis",
                "expected an object of 'method'/'function'",
            )
    else:
        _need("third_party" in missing, path, "third_party", "null without a reason in 'missing'")


# ------------------------------------------------------------------------------------------
# Comparing two releases.


def _set_diff(a: Optional[Iterable[str]], b: Optional[Iterable[str]]) -> dict[str, Any]:
    if a is None or b is None:
        return {"a": None if a is None else sorted(a), "b": None if b is None else sorted(b)}
    sa, sb = set(a), set(b)
    return {"only_a": sorted(sa - sb), "only_b": sorted(sb - sa)}


def diff_coverage(a: Coverage, b: Coverage) -> dict[str, Any]:
    """What differs between two releases, section by section (empty sections left out)."""
    out: dict[str, Any] = {"a": a.version, "b": b.version}
    sections = {
        "torch_functions": (a.torch_functions, b.torch_functions),
        "tensor_methods": (a.tensor_methods, b.tensor_methods),
        "module_methods": (a.module_methods, b.module_methods),
        "cuda_functions": (a.cuda_functions, b.cuda_functions),
        "npu_all": (a.npu_all, b.npu_all),
        "distributed_patches": (a.distributed_patches, b.distributed_patches),
        "patches": (a.patches.keys(), b.patches.keys()),
        "overlays": ({o.target for o in a.overlays}, {o.target for o in b.overlays}),
        "wrapped": (
            {f"{t}.{n}" for t, ns in a.wrapped.items() for n in ns},
            {f"{t}.{n}" for t, ns in b.wrapped.items() for n in ns},
        ),
        "third_party": (
            {f"{p}:{api}" for p in a.third_party_packages or () for api in a.third_party(p)["apis"]}
            if a.third_party_packages is not None else None,
            {f"{p}:{api}" for p in b.third_party_packages or () for api in b.third_party(p)["apis"]}
            if b.third_party_packages is not None else None,
        ),
    }
    for name, (x, y) in sections.items():
        d = _set_diff(x, y)
        if any(d.values()):
            out[name] = d
    overlay_names = {}
    for oa in a.overlays:
        for ob in b.overlays:
            if oa.target == ob.target and (oa.mode, oa.names) != (ob.mode, ob.names):
                overlay_names[oa.target] = {
                    "a_mode": oa.mode,
                    "b_mode": ob.mode,
                    **_set_diff(oa.names or (), ob.names or ()),
                }
    if overlay_names:
        out["overlay_changes"] = overlay_names
    flags = {}
    for flag in ("jit_script_disabled", "env_activation"):
        if getattr(a, flag) != getattr(b, flag):
            flags[flag] = {"a": getattr(a, flag), "b": getattr(b, flag)}
    if flags:
        out["flags"] = flags
    return out
