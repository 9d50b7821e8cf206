"""Which aten operators a torch_npu release runs on the NPU: reading Ascend's registry, and the data.

torch_npu registers its NPU kernels of aten operators through op-plugin, whose
`op_plugin/config/` lists every function schema with the torch versions in which it has an
`op_api` (aclnn) or an `acl_op` kernel. The layout of that listing changed over time; this
module reads all of them:

* one folder per torch version, `v1r11/`, `v2r0/`, `v2r1/` ... each with its own
  `op_plugin_functions.yaml`, an entry naming its kernel paths as `impl_ns: acl_op, op_api`
  (or as `acl_op:` / `op_api:` keys);
* one file whose entries pair `impl_ns:` with `version:` lists (`1.11, 2.0, 2.1, ...`);
* one file whose first key `all_version:` lists the torch versions it covers, each entry with
  `acl_op:` / `op_api:` keys whose value is `all_version`, a range `[v2.1, v2.12]`, an open
  range `[v2.1, newest]`, or a plain list `v2.1, v2.2`.

Sections: `official` (aten), `autograd`, `symint` and `quant` hold aten schemas; `custom` holds
torch_npu's own operators (npu_*). A schema may be listed more than once (different ranges); the
kernel paths of all its entries are joined. An aten overload with no path for a torch version
has no NPU kernel there: torch_npu runs it on the CPU and warns once (`FALLBACK_WARNING`).

`build_ops` turns a checkout (a work tree, or a git directory at a commit) into the per-release
data `kb ops-sync` writes: overload names and kernel paths only, never the registry's text.
`load_ops(version)` reads the data (the user's data folder first, then the packaged files).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

import yaml

OPS_DIR = Path(__file__).resolve().parent / "coverage" / "npu_ops"
SCHEMA_VERSION = 1
CONFIG = "op_plugin/config"
FUNCTIONS = "op_plugin_functions.yaml"
NATIVE_FUNCTIONS = "torch_npu/csrc/aten/npu_native_functions.yaml"
PATHS = ("acl_op", "op_api")
ATEN_SECTIONS = ("official", "autograd", "symint", "quant")

FALLBACK_WARNING = (
    "Warning: CAUTION: The operator '{op}' is not currently supported on the NPU backend and will "
    "fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)"
)
DTYPES_NOT_CHECKED = ("the registry lists operators, not the dtypes each kernel accepts: "
                      "dtype support per operator is not checked")

__all__ = [
    "FALLBACK_WARNING",
    "NpuOps",
    "RegistryError",
    "build_ops",
    "load_ops",
    "ops_versions",
    "overload_name",
    "parse_functions",
    "torch_line",
]


class RegistryError(Exception):
    """The registry could not be read (missing file, not YAML, unknown layout)."""


# ------------------------------------------------------------------------------------------
# Versions.

_TV_RE = re.compile(r"^v?(\d+)[.,](\d+)$")
_FOLDER_RE = re.compile(r"^v(\d+)r(\d+)$")
NEWEST = (10 ** 6, 0)


def torch_key(text: Any) -> tuple[int, int]:
    """'v2.1', '2.1', '1,11' (a spelling the registry has), 'newest' -> a sortable (major, minor)."""
    s = str(text).strip()
    if s == "newest":
        return NEWEST
    m = _TV_RE.match(s)
    if not m:
        raise ValueError(f"not a torch version: {text!r}")
    return int(m[1]), int(m[2])


def torch_line(torch_npu_version: str) -> tuple[int, int]:
    """The torch major.minor a torch_npu release is built for (its version starts with it)."""
    m = re.match(r"^v?(\d+)\.(\d+)", torch_npu_version.strip())
    if not m:
        raise ValueError(f"not a torch_npu version: {torch_npu_version!r}")
    return int(m[1]), int(m[2])


def _fmt(key: tuple[int, int]) -> str:
    return f"{key[0]}.{key[1]}"


def _split(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value]
    return [p.strip() for p in re.split(r",\s+|,(?=\s*v)|\s+", str(value).strip()) if p.strip()]


def covers(value: Any, version: tuple[int, int], declared: Iterable[tuple[int, int]]) -> bool:
    """Whether a kernel-path value names torch `version`: `all_version` (the versions the file
    declares), `[a, b]` (b may be `newest`), or a plain list ('v2.1, v2.2', or a longer YAML list)."""
    if value is None or value is False:
        return False
    if value is True or (isinstance(value, str) and value.strip() == "all_version"):
        return version in set(declared)
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return torch_key(value[0]) <= version <= torch_key(value[1])
    return version in {torch_key(v) for v in _split(value) if v}


def overload_name(func: str) -> str:
    """'isin.Tensor_Tensor_out(Tensor elements, ...) -> Tensor(a!)' -> 'isin.Tensor_Tensor_out'."""
    return func.split("(", 1)[0].strip()


# ------------------------------------------------------------------------------------------
# One file.


def _load_yaml(text: str, where: str) -> Mapping[str, Any]:
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise RegistryError(f"{where}: not YAML: {exc}") from exc
    if not isinstance(doc, Mapping):
        raise RegistryError(f"{where}: not a mapping of sections")
    return doc


def parse_functions(text: str, torch_version: tuple[int, int], *, folder: bool = False,
                    where: str = FUNCTIONS) -> dict[str, dict[str, Any]]:
    """{overload: {"paths": set of 'acl_op'/'op_api', "sections": set}} for one torch version.

    `folder`: the file is a per-version folder's (every listed path applies to that version).
    Overloads listed with no path for the version are left out; custom entries are kept, with
    their section, so a caller can tell them from aten ones.
    """
    doc = _load_yaml(text, where)
    declared = doc.get("all_version")
    all_versions = {torch_key(v) for v in _split(declared)} if declared else {torch_version}
    out: dict[str, dict[str, Any]] = {}
    for section, entries in doc.items():
        if section == "all_version" or not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("func"), str):
                continue  # torch_npu's own yaml lists bare names; see `parse_native`
            paths: set[str] = set()
            if "impl_ns" in entry:
                kinds = _split(entry["impl_ns"])
                if folder or "version" not in entry:
                    paths.update(k for k in kinds if k in PATHS)
                else:
                    tvs = _split(entry["version"])
                    if len(tvs) != len(kinds):
                        raise RegistryError(f"{where}: {overload_name(entry['func'])}: "
                                            f"{len(kinds)} impl_ns for {len(tvs)} versions")
                    paths.update(k for k, tv in zip(kinds, tvs) if k in PATHS and torch_key(tv) == torch_version)
            for kind in PATHS:
                if kind in entry:
                    if folder or covers(entry[kind], torch_version, all_versions):
                        paths.add(kind)
            if not paths:
                continue
            name = overload_name(entry["func"])
            slot = out.setdefault(name, {"paths": set(), "sections": set()})
            slot["paths"] |= paths
            slot["sections"].add(str(section))
    return out


def parse_native(text: str, where: str = NATIVE_FUNCTIONS) -> set[str]:
    """The aten overloads torch_npu registers itself (its `supported` and `symint` lists)."""
    doc = _load_yaml(text, where)
    names: set[str] = set()
    for section in ("supported", "symint", "autograd"):
        for entry in doc.get(section) or []:
            func = entry.get("func") if isinstance(entry, Mapping) else entry
            if isinstance(func, str):
                names.add(overload_name(func))
    return names


# ------------------------------------------------------------------------------------------
# A checkout: a work tree, or a git directory read at a commit.


@dataclass
class Tree:
    """Files of a repository: `root` a work tree, or a git directory with `rev`."""

    root: Path
    rev: Optional[str] = None

    def _git(self, *args: str) -> str:
        try:
            done = subprocess.run(["git", f"--git-dir={self.root}", *args], capture_output=True,
                                  text=True, timeout=120, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise RegistryError(f"{self.root}: git failed: {exc}") from exc
        if done.returncode != 0:
            raise RegistryError(f"{self.root}: git {' '.join(args)}: {done.stderr.strip()[:300]}")
        return done.stdout

    def commit(self) -> Optional[str]:
        if self.rev is None:
            head = self.root / ".git"
            if not head.exists():
                return None
            try:
                return subprocess.run(["git", "-C", str(self.root), "rev-parse", "HEAD"], capture_output=True,
                                      text=True, timeout=60, check=True).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                return None
        return self._git("rev-parse", f"{self.rev}^{{commit}}").strip()

    def read(self, rel: str) -> Optional[str]:
        if self.rev is None:
            path = self.root / rel
            return path.read_text(encoding="utf-8") if path.is_file() else None
        try:
            return self._git("show", f"{self.rev}:{rel}")
        except RegistryError:
            return None

    def listdir(self, rel: str) -> list[str]:
        if self.rev is None:
            path = self.root / rel
            return sorted(p.name for p in path.iterdir()) if path.is_dir() else []
        try:
            out = self._git("ls-tree", "--name-only", f"{self.rev}:{rel}")
        except RegistryError:
            return []
        return sorted(line for line in out.splitlines() if line)

    def submodule(self, rel: str) -> Optional[str]:
        """The commit a submodule is pinned at (git directories only)."""
        if self.rev is None:
            return None
        out = self._git("ls-tree", self.rev, rel).split()
        return out[2] if len(out) >= 3 and out[1] == "commit" else None


def open_tree(path: Path, rev: Optional[str] = None) -> Tree:
    path = Path(path)
    if rev is not None and (path / ".git").exists():
        path = path / ".git"
    return Tree(path, rev)


def read_registry(tree: Tree, torch_version: tuple[int, int]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The registry entries for `torch_version` and how they were found (layout, file)."""
    folder = f"v{torch_version[0]}r{torch_version[1]}"
    folders = [n for n in tree.listdir(CONFIG) if _FOLDER_RE.match(n)]
    if folder in folders:
        rel = f"{CONFIG}/{folder}/{FUNCTIONS}"
        text = tree.read(rel)
        if text is None:
            raise RegistryError(f"{rel}: missing")
        return parse_functions(text, torch_version, folder=True, where=rel), {"layout": "per-version folder", "file": rel}
    rel = f"{CONFIG}/{FUNCTIONS}"
    text = tree.read(rel)
    if text is None:
        raise RegistryError(f"{tree.root}: no {rel} and no folder {folder}/ (folders: {', '.join(folders) or 'none'})")
    head = _load_yaml(text, rel)
    if "all_version" in head:
        declared = sorted({torch_key(v) for v in _split(head["all_version"])})
        if torch_version not in declared:
            raise RegistryError(f"{rel}: torch {_fmt(torch_version)} is not among its versions "
                                f"({', '.join(_fmt(v) for v in declared)})")
        layout = "all_version"
    else:
        layout = "impl_ns with versions"
    return parse_functions(text, torch_version, where=rel), {"layout": layout, "file": rel}


def build_ops(torch_npu_version: str, op_plugin: Tree, torch_npu: Optional[Tree] = None) -> dict[str, Any]:
    """The per-release data: aten overloads with an NPU kernel and their paths."""
    tv = torch_line(torch_npu_version)
    entries, found = read_registry(op_plugin, tv)
    custom = {n for n, e in entries.items() if "custom" in e["sections"]}
    aten = {n: sorted(e["paths"]) for n, e in entries.items()
            if n not in custom and e["sections"] & set(ATEN_SECTIONS)}
    own: list[str] = []
    native_commit = None
    if torch_npu is not None:
        text = torch_npu.read(NATIVE_FUNCTIONS)
        if text is not None:
            own = sorted(parse_native(text) - set(custom))
        native_commit = torch_npu.commit()
    return {
        "schema_version": SCHEMA_VERSION,
        "torch_npu_version": torch_npu_version,
        "torch_version": _fmt(tv),
        "source": {
            "op_plugin_commit": op_plugin.commit(),
            "torch_npu_commit": native_commit,
            "layout": found["layout"],
            "file": found["file"],
        },
        "aten": {name: aten[name] for name in sorted(aten)},
        "torch_npu_own": own,
        "custom_count": len(custom),
    }


def render(doc: Mapping[str, Any]) -> str:
    """JSON with one line per overload (a release's diff reads as the operators that changed)."""
    head = {k: v for k, v in doc.items() if k != "aten"}
    lines = json.dumps(head, indent=1, sort_keys=True).splitlines()
    body = [f" {json.dumps(name)}: {json.dumps(paths)}" for name, paths in sorted(doc["aten"].items())]
    aten = [' "aten": {', ",\n".join(" " + b for b in body), " },"] if body else [' "aten": {},']
    return "\n".join([lines[0], *aten, *lines[1:]]) + "\n"


def ops_filename(version: str) -> str:
    return f"torch_npu-{version}.json"


# ------------------------------------------------------------------------------------------
# Reading the data.


def user_ops_dir() -> Path:
    from ascend_migrate.knowledge.user_data import data_home

    return data_home() / "npu_ops"


def _files() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for base in (OPS_DIR, user_ops_dir()):  # the user's folder last: it stands in for the package
        try:
            paths = sorted(base.glob("torch_npu-*.json"))
        except OSError:
            continue
        for path in paths:
            out[path.name[len("torch_npu-"):-len(".json")]] = path
    return out


def ops_versions() -> list[str]:
    from ascend_migrate.knowledge.coverage import parse_version

    return sorted(_files(), key=parse_version)


@dataclass(frozen=True, eq=False)
class NpuOps:
    """One release's NPU operator data, with the question the rest asks of it."""

    version: str
    path: Path
    data: Mapping[str, Any] = field(repr=False)

    @property
    def torch_version(self) -> str:
        return self.data["torch_version"]

    @property
    def source(self) -> Mapping[str, Any]:
        return self.data["source"]

    @property
    def aten(self) -> Mapping[str, list]:
        return self.data["aten"]

    def paths(self, op: str) -> Optional[list[str]]:
        """Kernel paths of `op` ('aten::isin.Tensor_Tensor_out' or 'isin.Tensor_Tensor_out');
        ['torch_npu'] for torch_npu's own registrations; None when it has no NPU kernel."""
        name = op.split("::", 1)[1] if op.startswith("aten::") else op
        if "::" in name:
            return None  # another library's operator (torchvision::nms): falls back unless it registers one
        name = name[:-len(".default")] if name.endswith(".default") else name
        if name in self.aten:
            return list(self.aten[name])
        if name in self._own:
            return ["torch_npu"]
        return None

    def supported(self, op: str) -> bool:
        return self.paths(op) is not None

    def judge(self, op: str) -> tuple[str, bool]:
        """(the name torch_npu's warning gives `op`, whether it has an NPU kernel).

        A functional or in-place aten overload that torch computes through a structured `out`
        overload (`isin.Tensor_Tensor` -> `isin.Tensor_Tensor_out`) has a kernel when that `out`
        overload has one, and torch_npu names the `out` overload when neither has."""
        if self.supported(op):
            return op, True
        name = op.split("::", 1)[1] if op.startswith("aten::") else None
        delegate = structured_delegates().get(name) if name else None
        if delegate is not None:
            full = f"aten::{delegate}"
            return (op, True) if self.supported(full) else (full, False)
        return op, False

    def warning_table(self, names: Iterable[str]) -> tuple[list[str], dict[str, str]]:
        """For the emulated device: the supported ones among `names` (full operator names) and
        the warning name of each unsupported one named otherwise."""
        supported, renamed = [], {}
        for op in names:
            shown, ok = self.judge(op)
            if ok:
                supported.append(op)
            elif shown != op:
                renamed[op] = shown
        return supported, renamed

    @property
    def _own(self) -> frozenset[str]:
        return frozenset(self.data.get("torch_npu_own") or ())


_FUNC_RE = re.compile(r"^- func: ([A-Za-z0-9_.]+)\(")
_DELEGATE_RE = re.compile(r"^\s+structured_delegate: ([A-Za-z0-9_.]+)\s*$")


@lru_cache(maxsize=1)
def structured_delegates() -> dict[str, str]:
    """{overload: its structured out overload} from the native_functions.yaml torch ships (in
    torchgen); empty when that file is not installed."""
    try:
        import torchgen

        path = Path(torchgen.__file__).resolve().parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
        lines = path.read_text(encoding="utf-8").splitlines()
    except (ImportError, OSError):
        return {}
    out: dict[str, str] = {}
    current = None
    for line in lines:
        m = _FUNC_RE.match(line)
        if m:
            current = m[1]
            continue
        if current is not None:
            d = _DELEGATE_RE.match(line)
            if d:
                out[current] = d[1]
    return out


@lru_cache(maxsize=32)
def _load(path: str, mtime: int) -> Mapping[str, Any]:
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION or "aten" not in doc:
        raise RegistryError(f"{path}: not NPU operator data of schema {SCHEMA_VERSION}")
    return doc


def resolve_ops_version(requested: Optional[str]) -> Optional[str]:
    """Exact release, else the newest build of the same release, else of the same torch line;
    None when our data has nothing for it (an older or unknown release)."""
    from ascend_migrate.knowledge.coverage import parse_version

    versions = ops_versions()
    if not versions:
        return None
    if requested is None:
        return versions[-1]
    requested = requested.strip()
    if requested in versions:
        return requested
    try:
        want = parse_version(requested)
    except ValueError:
        return None
    same = [v for v in versions if parse_version(v)[0] == want[0]]
    if same:
        return same[-1]
    line = [v for v in versions if parse_version(v)[0][:2] == want[0][:2]]
    return line[-1] if line else None


def load_ops(requested: Optional[str] = None) -> Optional[NpuOps]:
    version = resolve_ops_version(requested)
    if version is None:
        return None
    path = _files()[version]
    return NpuOps(version, path, _load(str(path), os.stat(path).st_mtime_ns))


def older_than_data(requested: str) -> bool:
    """Whether `requested` is older than every release our data holds."""
    from ascend_migrate.knowledge.coverage import parse_version

    versions = ops_versions()
    try:
        return bool(versions) and parse_version(requested) < parse_version(versions[0])
    except ValueError:
        return False


def fallback_ops(ops: NpuOps, dispatched: Iterable[str]) -> list[str]:
    """The dispatched operators `ops` has no NPU kernel for."""
    return sorted(op for op in set(dispatched) if not ops.supported(op))


def parse_counts(lines: Iterable[str]) -> dict[str, int]:
    """Counts from 'count<TAB>op' lines (what the emulated device writes)."""
    out: dict[str, int] = {}
    for line in lines:
        parts = line.rstrip("\n").split("\t")
        if len(parts) >= 2 and parts[0].isdigit():
            out[parts[1]] = out.get(parts[1], 0) + int(parts[0])
    return out
