"""Decode CANN and torch_npu error codes by family (knowledge/error_codes.yaml).

A log whose error no signature explains still names the layer that failed in its codes:
`EZ1001` is an operator parameter check, `E89999` an operator's tiling constraint, `507018` an
AI CPU fault, `HCCL ... error code is 15` a runtime call under HCCL. Answering with the family
(low confidence, and saying so) tells the user where to look instead of printing nothing.
Operator, dtype, shape and device id are pulled from the same line so the answer is concrete.

Every pattern here is linear on a crafted long line: fixed-width codes, bounded repeats, no
nested or adjacent unbounded repeats that can trade characters (tests/hostile checks them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.knowledge.loader import DATA_DIR, KnowledgeError, load_yaml

CODES_FILE = DATA_DIR / "error_codes.yaml"
_FAMILY_KEYS = ("family", "area", "meaning", "check", "confirm")

# `EZ1001:`, `E89999[PID`, `(EZ1001)`, `EZ9999: Inner Error!`: E, one component character and
# four digits, not inside a longer word, followed by what CANN prints after a code.
PREFIXED_RE = re.compile(r"(?<![\w.])(E[0-9A-Z])(\d{4})(?=[:\[)]| ?:)")
# The six-digit return codes, in the phrasings ACL, the runtime, torch_npu and aclnn use.
NUMERIC_RE = re.compile(
    r"(?:error code(?: is|:| =|=)|runtime result =|ErrCode=|errno:|ret(?:Code)?=|result = ) ?"
    r"(?P<num>[1-5]\d{5})(?!\d)", re.IGNORECASE)
# `HCCL function error: hcclCommInitRootInfoConfig(...), error code is 15`
HCCL_RESULT_RE = re.compile(r"HCCL function error: \w{1,80}\(.{0,300}?\), error code is (?P<num>\d{1,2})(?!\d)")

_OP_RES = (
    re.compile(r"\b(aclnn[A-Z]\w{1,80})"),
    re.compile(r"OPS function error: (\w{1,80})"),
    re.compile(r"\[FILE:(\w{1,80})_tiling\.cpp\]"),
    re.compile(r"fault kernel_name=(\w{1,120})"),
    re.compile(r"\bOp (\w{1,80}) does not"),
    re.compile(r"opType: \d{1,6}, (\w{1,80})"),
)
_DTYPE_RE = re.compile(r"\b(DT_[A-Z0-9]{2,12})\b")
_SHAPE_RE = re.compile(r"shape(?: is|:|=)? ?(\[[0-9, ]{1,80}\])")
_DEVICE_RES = (
    re.compile(r"\bDevice:(\d{1,3})\b"),
    re.compile(r"\bdevice_id=(\d{1,3})\b"),
    re.compile(r"\bchipId:(\d{1,3})\b"),
    re.compile(r"\bdrv devId=(\d{1,3})\b"),
    re.compile(r"\brealDeviceId:(\d{1,3})\b"),
    re.compile(r"\bphyid:(\d{1,3})\b"),
    re.compile(r"\(NPU (\d{1,3});"),
)


@dataclass(frozen=True)
class Family:
    """What a code family means and where to look."""

    family: str
    area: str
    meaning: str
    check: str
    confirm: str


@dataclass(frozen=True)
class CodeTable:
    prefixed: dict[str, Family]
    prefixed_codes: dict[str, dict[str, str]]
    numeric: tuple[tuple[int, int, Family, dict[int, dict[str, str]]], ...]
    hccl_results: dict[int, dict[str, str]] = field(default_factory=dict)


def _family(rec: Any, file: Path, where: str) -> Family:
    if not isinstance(rec, dict):
        raise KnowledgeError(file, where, "expected a mapping")
    missing = [k for k in _FAMILY_KEYS if not isinstance(rec.get(k), str) or not rec.get(k).strip()]
    if missing:
        raise KnowledgeError(file, where, f"missing or empty: {', '.join(missing)}")
    from ascend_migrate.diagnose.kb import FAMILIES

    if rec["family"] not in FAMILIES:
        raise KnowledgeError(file, f"{where}.family", f"unknown family {rec['family']!r}")
    return Family(*(" ".join(rec[k].split()) for k in _FAMILY_KEYS))


def _singles(rec: dict, file: Path, where: str) -> dict:
    out = {}
    for code, entry in (rec.get("codes") or {}).items():
        if not isinstance(entry, dict) or not entry.get("area") or not entry.get("meaning"):
            raise KnowledgeError(file, f"{where}.codes.{code}", "needs area and meaning")
        out[code] = {"area": str(entry["area"]), "meaning": str(entry["meaning"])}
    return out


def load_codes(path: Path | str = CODES_FILE) -> CodeTable:
    """Load and check the code table; a malformed file raises one KnowledgeError."""
    path = Path(path)
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise KnowledgeError(path, "<root>", "expected a mapping")
    prefixed, singles = {}, {}
    for key, rec in (data.get("prefixed") or {}).items():
        key = str(key)
        if not re.fullmatch(r"[0-9A-Z]", key):
            raise KnowledgeError(path, f"prefixed.{key}", "key must be one character, 0-9 or A-Z")
        prefixed[key] = _family(rec, path, f"prefixed.{key}")
        for code, entry in _singles(rec, path, f"prefixed.{key}").items():
            code = str(code)
            if not (len(code) == 6 and code[:2] == f"E{key}" and code[2:].isdigit()):
                raise KnowledgeError(path, f"prefixed.{key}.codes.{code}", f"expected E{key} and four digits")
            singles[str(code)] = entry
    numeric = []
    for i, rec in enumerate(data.get("numeric") or []):
        rng = rec.get("range") if isinstance(rec, dict) else None
        if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(n, int) for n in rng) and rng[0] <= rng[1]):
            raise KnowledgeError(path, f"numeric[{i}].range", "expected [low, high] integers")
        codes = {int(c): e for c, e in _singles(rec, path, f"numeric[{i}]").items()}
        if any(not rng[0] <= c <= rng[1] for c in codes):
            raise KnowledgeError(path, f"numeric[{i}].codes", "a code lies outside its range")
        numeric.append((rng[0], rng[1], _family(rec, path, f"numeric[{i}]"), codes))
    hccl = {}
    for num, rec in (data.get("hccl_results") or {}).items():
        if not isinstance(rec, dict) or not rec.get("name") or not rec.get("meaning"):
            raise KnowledgeError(path, f"hccl_results.{num}", "needs name and meaning")
        hccl[int(num)] = {"name": str(rec["name"]), "meaning": str(rec["meaning"])}
    return CodeTable(prefixed, singles, tuple(numeric), hccl)


@lru_cache(maxsize=1)
def default_codes() -> CodeTable:
    return load_codes(CODES_FILE)


def line_details(line: str) -> dict[str, str]:
    """Operator, dtype, shape and device id named on a log line (only those present)."""
    out: dict[str, str] = {}
    for rx in _OP_RES:
        m = rx.search(line)
        if m:
            out["operator"] = m.group(1)
            break
    m = _DTYPE_RE.search(line)
    if m:
        out["dtype"] = m.group(1)
    m = _SHAPE_RE.search(line)
    if m:
        out["shape"] = m.group(1)
    for rx in _DEVICE_RES:
        m = rx.search(line)
        if m:
            out["device"] = m.group(1)
            break
    return out


def decode_line(line: str, table: Optional[CodeTable] = None) -> list[dict[str, Any]]:
    """Every CANN / runtime / HCCL code on `line`, decoded: code, kind, family, area, meaning,
    check, confirm. Unknown component letters and numbers outside every range are skipped."""
    table = table or default_codes()
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for m in PREFIXED_RE.finditer(line):
        code = m.group(1) + m.group(2)
        fam = table.prefixed.get(code[1])
        if fam is None or code in seen:
            continue
        seen.add(code)
        single = table.prefixed_codes.get(code, {})
        out.append(_entry(code, "cann", fam, single))
    for m in NUMERIC_RE.finditer(line):
        code = m.group("num")
        if code in seen:
            continue
        num = int(code)
        for low, high, fam, singles in table.numeric:
            if low <= num <= high:
                seen.add(code)
                out.append(_entry(code, "runtime", fam, singles.get(num, {})))
                break
    m = HCCL_RESULT_RE.search(line)
    if m:
        num = int(m.group("num"))
        res = table.hccl_results.get(num)
        fam = table.prefixed.get("I")
        if res and fam:
            out.append(_entry(f"HCCL {num}", "hccl", fam, {"area": f"HCCL result {res['name']}", "meaning": res["meaning"]}))
    return out


def _entry(code: str, kind: str, fam: Family, single: dict[str, str]) -> dict[str, Any]:
    return {
        "code": code,
        "kind": kind,
        "family": fam.family,
        "area": single.get("area", fam.area),
        "family_area": fam.area,
        "meaning": single.get("meaning", fam.meaning),
        "check": fam.check,
        "confirm": fam.confirm,
    }


def quick_anchors() -> tuple[str, ...]:
    """Lowercase strings every line the numeric or HCCL patterns can match contains (for the
    streaming prefilter; prefixed codes are found by their own pass)."""
    return ("error code", "runtime result", "errcode=", "errno:", "ret=", "retcode=", "result = ")
