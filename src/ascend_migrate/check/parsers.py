"""Parsers for what an Ascend host shows: npu-smi tables, CANN version files, env values.

All pure: text in, data out. Malformed input never raises; it comes back with `errors`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

# --------------------------------------------------------------------------- npu-smi info


@dataclass
class NpuChip:
    npu: int
    chip: int
    name: str
    health: str
    bus_id: str = ""
    phy_id: Optional[int] = None
    power_w: Optional[float] = None
    temp_c: Optional[int] = None
    aicore_pct: Optional[float] = None
    memory_used_mb: Optional[int] = None
    memory_total_mb: Optional[int] = None
    hbm_used_mb: Optional[int] = None
    hbm_total_mb: Optional[int] = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class NpuProcess:
    npu: int
    chip: int
    pid: int
    name: str
    memory_mb: Optional[int]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class NpuSmiInfo:
    version: str = ""
    chips: list[NpuChip] = field(default_factory=list)
    processes: list[NpuProcess] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def npu_ids(self) -> list[int]:
        return sorted({c.npu for c in self.chips})

    @property
    def ok(self) -> bool:
        return bool(self.chips) and not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "npus": self.npu_ids,
            "chips": [c.to_dict() for c in self.chips],
            "processes": [p.to_dict() for p in self.processes],
            "errors": list(self.errors),
        }


_BORDER_RE = re.compile(r"^\s*\+[-=+]*\+?\s*$")
_VERSION_RE = re.compile(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)", re.I)
_PAIR_RE = re.compile(r"(?<!\d)(\d+)\s*/\s*(\d+)")
_TOKEN_RE = re.compile(r"\d+\s*/\s*\d+|\S+")
_NO_PROC_RE = re.compile(r"No running processes found in NPU\s+(\d+)", re.I)


def _cells(line: str) -> list[str]:
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|")):
        return []
    return [c.strip() for c in s[1:-1].split("|")]


def _num(tok: str, kind=float):
    try:
        return kind(tok)
    except (TypeError, ValueError):
        return None


def _metrics(names: list[str], cell: str) -> dict[str, str]:
    return dict(zip(names, _TOKEN_RE.findall(cell)))


def parse_npu_smi(text: str) -> NpuSmiInfo:
    """Parse `npu-smi info` (the boxed table) into chips and processes.

    Handles the 910 (Chip/Phy-ID, two chips per NPU), 910B (HBM) and 310P (no HBM column)
    layouts by reading the column names from the two header rows.
    """
    info = NpuSmiInfo()
    if not text or not text.strip():
        info.errors.append("empty output")
        return info
    m = _VERSION_RE.search(text)
    if m:
        info.version = m.group(2)
    head1: list[str] = []
    head2: list[str] = []
    section = None  # "chips" | "procs"
    pending: Optional[tuple[int, str, str, dict[str, str]]] = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or _BORDER_RE.match(raw):
            continue
        cells = _cells(raw)
        if not cells:
            # Text outside the table (warnings, dcmi errors) is kept as an error only if
            # it looks like one; plain banners are ignored.
            if re.search(r"(?i)error|failed|not found|denied", raw):
                info.errors.append(raw.strip())
            continue
        first = cells[0]
        if first.startswith("NPU") and len(cells) >= 3 and "Name" in first:
            head1 = cells[2].split()
            section = "chips"
            continue
        if first.startswith("Chip") and section == "chips" and len(cells) >= 3:
            head2 = cells[2].split()
            continue
        if first.startswith("NPU") and len(cells) >= 3 and "Process" in cells[1]:
            section = "procs"
            continue
        if first.startswith("npu-smi"):
            continue
        if section == "procs":
            nm = _NO_PROC_RE.search(raw)
            if nm:
                continue
            if len(cells) >= 4:
                ids = first.split()
                pid = _num(cells[1], int)
                if len(ids) >= 2 and pid is not None and ids[0].isdigit() and ids[1].isdigit():
                    info.processes.append(
                        NpuProcess(int(ids[0]), int(ids[1]), pid, cells[2], _num(cells[3].split()[0] if cells[3] else "", int))
                    )
                    continue
            info.errors.append(f"line {lineno}: unrecognised process row: {raw.strip()}")
            continue
        if section != "chips" or len(cells) < 3:
            info.errors.append(f"line {lineno}: unrecognised row: {raw.strip()}")
            continue
        ids = first.split()
        if pending is None:
            # first row of a pair: "<npu> <name> | <health> | power temp hugepages"
            if len(ids) >= 2 and ids[0].isdigit():
                pending = (int(ids[0]), " ".join(ids[1:]), cells[1], _metrics(head1, cells[2]))
            else:
                info.errors.append(f"line {lineno}: expected '<npu> <name>' row: {raw.strip()}")
            continue
        # second row: "<chip> [<phy-id>] | <bus-id> | aicore memory hbm"
        npu, name, health, m1 = pending
        pending = None
        if not ids or not ids[0].isdigit():
            info.errors.append(f"line {lineno}: expected '<chip>' row: {raw.strip()}")
            continue
        m2 = _metrics(head2, cells[2])
        chip = NpuChip(npu=npu, chip=int(ids[0]), name=name, health=health, bus_id=cells[1])
        if len(ids) > 1 and ids[1].isdigit():
            chip.phy_id = int(ids[1])
        chip.power_w = _num(m1.get("Power(W)", ""))
        chip.temp_c = _num(m1.get("Temp(C)", ""), int)
        chip.aicore_pct = _num(m2.get("AICore(%)", ""))
        for key, attr in (("Memory-Usage(MB)", "memory"), ("HBM-Usage(MB)", "hbm")):
            if key not in head2:
                continue
            pm = _PAIR_RE.fullmatch(m2.get(key, ""))
            if pm:
                setattr(chip, f"{attr}_used_mb", int(pm.group(1)))
                setattr(chip, f"{attr}_total_mb", int(pm.group(2)))
            else:
                info.errors.append(f"line {lineno}: NPU {npu} chip {chip.chip}: unreadable {key} {m2.get(key, '')!r}")
        info.chips.append(chip)
    if pending is not None:
        info.errors.append(f"NPU {pending[0]}: second row missing (truncated output?)")
    if not head1 and not info.chips:
        info.errors.append("no device table found in npu-smi output")
    return info


# ---------------------------------------------------------------------- CANN version files


def parse_key_values(text: str) -> dict[str, str]:
    """`key=value` lines (ascend_*_install.info, version.info); comments and junk skipped."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if key and re.match(r"^[A-Za-z_][\w.-]*$", key):
            out[key] = value.strip()
    return out


@dataclass
class InstallInfo:
    package: str = ""
    version: str = ""
    arch: str = ""
    path: str = ""
    errors: list[str] = field(default_factory=list)


def parse_install_info(text: str) -> InstallInfo:
    """ascend_toolkit_install.info / ascend_ops_install.info / ... ."""
    kv = parse_key_values(text)
    info = InstallInfo(
        package=kv.get("package_name", ""),
        version=kv.get("version", ""),
        arch=kv.get("arch", ""),
        path=kv.get("path", ""),
    )
    if not info.version:
        info.errors.append("no 'version=' line")
    elif not looks_like_cann_version(info.version):
        info.errors.append(f"unrecognised version {info.version!r}")
    return info


_CFG_RE = re.compile(r"^\s*(\w+?)_(running|upgrade|installed)_version\s*=\s*\[([^\]:]*)(?::([^\]]*))?\]\s*$")


def parse_version_cfg(text: str) -> dict[str, Any]:
    """`latest/version.cfg`: `runtime_running_version=[7.6.0.1.220:8.0.0]` lines.

    Returns {"components": {name: cann_version}, "inner": {name: inner}, "version": the
    toolkit (or runtime) running version, "errors": [...]}.
    """
    comps: dict[str, str] = {}
    inner: dict[str, str] = {}
    errors: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _CFG_RE.match(line)
        if not m:
            if "_version" in line:
                errors.append(f"unrecognised line: {line.strip()}")
            continue
        name, kind, inner_v, cann_v = m.groups()
        if kind != "running":
            continue
        comps[name] = (cann_v or "").strip()
        inner[name] = inner_v.strip()
    version = comps.get("toolkit") or comps.get("runtime") or next(iter(comps.values()), "")
    if not comps:
        errors.append("no *_running_version lines")
    elif version and not looks_like_cann_version(version):
        errors.append(f"unrecognised version {version!r}")
    return {"components": comps, "inner": inner, "version": version, "errors": errors}


_CANN_RE = re.compile(
    r"^(?:CANN-)?(\d+)\.(\d+)(?:\.(RC\d+|T\d+|\d+))?(?:[.-]?(alpha|beta)[.-]?(\d+))?(?:\.\d+)*$", re.I
)


def looks_like_cann_version(v: str) -> bool:
    return bool(_CANN_RE.match(v.strip()))


def cann_version_key(v: str) -> Optional[tuple[int, int, int, int, int]]:
    """Order CANN versions: 8.0.RC1 < 8.0.RC3 < 8.0.0 < 8.1.RC1 < 8.5.0.

    Test builds (8.0.T6) and alpha/beta drops sort before the release candidates of the
    same minor. Returns None for text that is not a CANN version.
    """
    m = _CANN_RE.match(v.strip())
    if not m:
        return None
    major, minor, third, pre, pre_n = m.groups()
    third = (third or "0").upper()
    if third.startswith("RC"):
        stage, n = 1, int(third[2:])
    elif third.startswith("T"):
        stage, n = 0, int(third[1:])
    else:
        stage, n = 2, int(third)
    pre_rank = {"alpha": 0, "beta": 1}.get((pre or "").lower(), 2)
    if pre_rank < 2 and stage == 2:
        stage = 0
    return (int(major), int(minor), stage, n, pre_rank * 1000 + int(pre_n or 0))


# ---------------------------------------------------------------------- env values


def parse_visible_devices(value: Optional[str]) -> tuple[Optional[list[int]], Optional[str]]:
    """ASCEND_RT_VISIBLE_DEVICES: (device list or None when unset, error or None).

    torch_npu accepts comma-separated ascending integers; an empty value means no device.
    """
    if value is None:
        return None, None
    value = value.strip()
    if value == "":
        return [], "ASCEND_RT_VISIBLE_DEVICES is set but empty: no device is visible"
    ids: list[int] = []
    for part in value.split(","):
        part = part.strip()
        if not part.isdigit():
            return None, f"ASCEND_RT_VISIBLE_DEVICES={value!r}: {part!r} is not a device number"
        ids.append(int(part))
    if ids != sorted(set(ids)):
        return ids, f"ASCEND_RT_VISIBLE_DEVICES={value!r}: ids must be unique and ascending"
    return ids, None


def parse_device(spec: str) -> tuple[str, int]:
    """'npu:0' -> ('npu', 0); 'cpu' -> ('cpu', 0). Raises ValueError."""
    m = re.match(r"^(npu|cuda|cpu)(?::(\d+))?$", spec.strip())
    if not m:
        raise ValueError(f"unknown device {spec!r}: use npu[:N], cuda[:N] or cpu")
    kind, idx = m.group(1), int(m.group(2) or 0)
    if kind == "cpu" and m.group(2) not in (None, "0"):
        raise ValueError("cpu takes no index")
    return kind, idx


def base_version(v: str) -> str:
    """'2.13.0+cpu' -> '2.13.0'; '2.1.0.post12' -> '2.1.0'; '2.12.0rc1' -> '2.12.0'."""
    m = re.match(r"^(\d+(?:\.\d+)*)", v.strip())
    if not m:
        return ""
    parts = m.group(1).split(".")
    return ".".join(parts[:3])


def version_tuple(v: str) -> tuple[int, ...]:
    b = base_version(v)
    return tuple(int(x) for x in b.split(".")) if b else ()
