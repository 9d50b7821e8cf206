"""The compatibility data (knowledge/compat.yaml) and the version rules built on it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

from ascend_migrate.check.parsers import base_version, cann_version_key, version_tuple
from ascend_migrate.knowledge.loader import (
    DATA_DIR,
    Field,
    KnowledgeError,
    check_record,
    expect_list,
    load_yaml,
)

COMPAT_FILE = DATA_DIR / "compat.yaml"


@dataclass(frozen=True)
class Dep:
    name: str
    module: str
    spec: str


@dataclass(frozen=True)
class Compat:
    matrix: tuple[dict[str, str], ...]
    python_support: dict[str, tuple[str, ...]]
    runtime_deps: tuple[Dep, ...]
    numpy_spec: str
    numpy_torch_below: str
    numpy_cann_below: str

    # ---- queries
    def rows_for_torch_npu(self, torch_npu: str) -> list[dict[str, str]]:
        return [r for r in self.matrix if r["torch_npu"] == torch_npu]

    def rows_for_cann(self, cann: str) -> list[dict[str, str]]:
        key = cann_version_key(cann)
        return [r for r in self.matrix if cann_version_key(r["cann"]) == key]

    def torch_for_torch_npu(self, torch_npu: str) -> Optional[str]:
        rows = self.rows_for_torch_npu(torch_npu)
        return rows[0]["torch"] if rows else None

    def python_ok(self, torch_version: str, py: str) -> Optional[bool]:
        mm = ".".join(base_version(torch_version).split(".")[:2])
        allowed = self.python_support.get(mm)
        if allowed is None:
            return None
        return ".".join(py.split(".")[:2]) in allowed

    def numpy_pin_needed(self, torch_version: str = "", cann_version: str = "") -> Optional[str]:
        """The reason numpy must stay below 2, or None."""
        if torch_version and version_tuple(torch_version) and version_tuple(torch_version) < version_tuple(self.numpy_torch_below):
            return f"torch {base_version(torch_version)} is older than {self.numpy_torch_below} (built against numpy 1.x)"
        ck, limit = cann_version_key(cann_version or ""), cann_version_key(self.numpy_cann_below)
        if ck is not None and limit is not None and ck < limit:
            return f"CANN {cann_version} is older than {self.numpy_cann_below}"
        return None


_ROW_FIELDS = (Field("cann"), Field("torch"), Field("torch_npu"))
_PY_FIELDS = (Field("torch"), Field("python", (list,)))
_DEP_FIELDS = (Field("name"), Field("module"), Field("spec"))
_NUMPY_FIELDS = (Field("spec"), Field("torch_below"), Field("cann_below"))


def load_compat(path: Path | str = COMPAT_FILE) -> Compat:
    path = Path(path)
    data = load_yaml(path)
    rows = []
    for i, rec in enumerate(expect_list(data, path, "cann_matrix")):
        r = check_record(rec, _ROW_FIELDS, path, f"cann_matrix[{i}]")
        if cann_version_key(r["cann"]) is None:
            raise KnowledgeError(path, f"cann_matrix[{i}].cann", f"not a CANN version: {r['cann']!r}")
        if not base_version(r["torch"]) or not base_version(r["torch_npu"]):
            raise KnowledgeError(path, f"cann_matrix[{i}]", "torch / torch_npu must be versions")
        rows.append(r)
    py: dict[str, tuple[str, ...]] = {}
    for i, rec in enumerate(expect_list(data, path, "python_support")):
        r = check_record(rec, _PY_FIELDS, path, f"python_support[{i}]")
        if not all(isinstance(v, str) and re.match(r"^3\.\d+$", v) for v in r["python"]):
            raise KnowledgeError(path, f"python_support[{i}].python", "expected strings like '3.10'")
        py[r["torch"]] = tuple(r["python"])
    deps = tuple(
        Dep(**check_record(rec, _DEP_FIELDS, path, f"runtime_deps[{i}]"))
        for i, rec in enumerate(expect_list(data, path, "runtime_deps"))
    )
    numpy = check_record(data.get("numpy_pin"), _NUMPY_FIELDS, path, "numpy_pin")
    return Compat(tuple(rows), py, deps, numpy["spec"], numpy["torch_below"], numpy["cann_below"])


@lru_cache(maxsize=1)
def default_compat() -> Compat:
    return load_compat(COMPAT_FILE)


def torch_pin_from_requires(requires: list[str]) -> Optional[str]:
    """'torch==2.13.0.*' in torch_npu's Requires-Dist -> '2.13.0'."""
    for req in requires or []:
        m = re.match(r"^\s*torch\s*==\s*([\d.]+?)(\.\*)?\s*(;.*)?$", req)
        if m:
            return m.group(1)
    return None


def torch_matches_pin(torch_version: str, pin: str) -> bool:
    tv = version_tuple(torch_version)
    pv = tuple(int(x) for x in pin.split(".") if x.isdigit())
    return bool(tv) and tv[: len(pv)] == pv
