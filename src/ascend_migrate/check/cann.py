"""Find a CANN install on disk and read its version. Reads files only; runs nothing.

Layouts seen on real hosts:
  /usr/local/Ascend/ascend-toolkit/set_env.sh
  /usr/local/Ascend/ascend-toolkit/latest -> 8.0.RC3            (symlink)
  /usr/local/Ascend/ascend-toolkit/8.0.RC3/version.cfg           (runtime_running_version=[...:8.0.RC3])
  /usr/local/Ascend/ascend-toolkit/8.0.RC3/<arch>-linux/ascend_toolkit_install.info
  /usr/local/Ascend/driver/version.info                          (Version=24.1.rc2)
  $HOME/Ascend/ascend-toolkit/...                                (non-root installs)
set_env.sh exports ASCEND_TOOLKIT_HOME and ASCEND_HOME_PATH (= .../latest), ASCEND_OPP_PATH
(= $ASCEND_HOME_PATH/opp) and prepends lib64 and driver/lib64 to LD_LIBRARY_PATH.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ascend_migrate.check.parsers import (
    cann_version_key,
    parse_install_info,
    parse_key_values,
    parse_version_cfg,
)

DEFAULT_ASCEND_ROOT = Path("/usr/local/Ascend")
MAX_INFO_FILE = 64 * 1024


@dataclass
class CannInstall:
    home: Optional[Path] = None  # the toolkit home (what ASCEND_HOME_PATH should be)
    found_via: str = ""  # "ASCEND_HOME_PATH" | "ASCEND_TOOLKIT_HOME" | "--cann-root" | "default path"
    version: str = ""
    version_source: str = ""  # file the version came from
    packages: dict[str, str] = field(default_factory=dict)  # package_name -> version
    set_env: Optional[Path] = None
    driver_version: str = ""
    driver_dir: Optional[Path] = None
    searched: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.home is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "home": str(self.home) if self.home else None,
            "found_via": self.found_via,
            "version": self.version,
            "version_source": self.version_source,
            "packages": dict(self.packages),
            "set_env": str(self.set_env) if self.set_env else None,
            "driver_version": self.driver_version,
            "driver_dir": str(self.driver_dir) if self.driver_dir else None,
            "searched": list(self.searched),
            "warnings": list(self.warnings),
        }


def _read_small(path: Path) -> Optional[str]:
    try:
        if path.stat().st_size > MAX_INFO_FILE:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _is_toolkit_home(p: Path) -> bool:
    """A toolkit home has a version.cfg, an install.info under <arch>-linux, or runtime/."""
    if not p.is_dir():
        return False
    if (p / "version.cfg").is_file() or (p / "runtime").is_dir() or (p / "opp").is_dir():
        return True
    return any(p.glob("*-linux/ascend_*_install.info"))


def _homes_under(root: Path) -> list[Path]:
    """Toolkit homes under an Ascend root: prefer <root>/ascend-toolkit/latest."""
    out = []
    for cand in (
        root / "ascend-toolkit" / "latest",
        root / "latest",
        root / "cann" / "latest",
        root,
    ):
        if _is_toolkit_home(cand):
            out.append(cand)
    tk = root / "ascend-toolkit"
    if tk.is_dir() and not out:
        # no "latest": take the highest versioned directory
        versions = [d for d in tk.iterdir() if d.is_dir() and cann_version_key(d.name)]
        versions.sort(key=lambda d: cann_version_key(d.name))
        out += [d for d in reversed(versions) if _is_toolkit_home(d)][:1]
    return out


def read_version(home: Path) -> tuple[str, str, dict[str, str], list[str]]:
    """(version, source file, {package: version}, warnings) for a toolkit home."""
    warnings: list[str] = []
    packages: dict[str, str] = {}
    version, source = "", ""
    infos = sorted(home.glob("*-linux/ascend_*_install.info")) + sorted(home.glob("ascend_*_install.info"))
    for info_path in infos:
        text = _read_small(info_path)
        if text is None:
            warnings.append(f"{info_path}: unreadable")
            continue
        info = parse_install_info(text)
        for err in info.errors:
            warnings.append(f"{info_path}: {err}")
        if info.version and not info.errors:
            packages[info.package or info_path.name] = info.version
            if not version and "toolkit" in (info.package.lower() + info_path.name):
                version, source = info.version, str(info_path)
    if not version and packages:
        source_pkg, version = next(iter(packages.items()))
        source = next(str(p) for p in infos)
    cfg = home / "version.cfg"
    if cfg.is_file():
        text = _read_small(cfg)
        parsed = parse_version_cfg(text or "")
        for err in parsed["errors"]:
            warnings.append(f"{cfg}: {err}")
        if parsed["version"] and not parsed["errors"]:
            if not version:
                version, source = parsed["version"], str(cfg)
            elif parsed["version"] != version:
                warnings.append(
                    f"{cfg} says {parsed['version']} but {source} says {version}: a partial upgrade?"
                )
    return version, source, packages, warnings


def _set_env_for(home: Path) -> Optional[Path]:
    for cand in (home.parent / "set_env.sh", home / "set_env.sh", home.parent.parent / "set_env.sh"):
        if cand.is_file():
            return cand
    return None


def _driver(ascend_root: Path) -> tuple[str, Optional[Path]]:
    d = ascend_root / "driver"
    if not d.is_dir():
        return "", None
    text = _read_small(d / "version.info") or ""
    kv = parse_key_values(text)
    return kv.get("Version", kv.get("version", "")), d


def find_cann(
    env: Mapping[str, str] = os.environ,
    cann_root: Optional[Path] = None,
    default_roots: Sequence[Path] = (DEFAULT_ASCEND_ROOT,),
) -> CannInstall:
    """Locate CANN: an explicit root, then ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, defaults."""
    inst = CannInstall()
    candidates: list[tuple[str, Path]] = []
    if cann_root is not None:
        candidates.append(("--cann-root", Path(cann_root)))
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        if env.get(var):
            candidates.append((var, Path(env[var])))
    home_dir = env.get("HOME")
    roots = list(default_roots) + ([Path(home_dir) / "Ascend"] if home_dir else [])
    candidates += [("default path", r) for r in roots]
    for via, path in candidates:
        inst.searched.append(str(path))
        homes = [path] if _is_toolkit_home(path) else _homes_under(path)
        if not homes:
            if via != "default path":
                inst.warnings.append(f"{via}={path} is not a CANN toolkit directory")
            continue
        home = homes[0]
        inst.home, inst.found_via = home, via
        inst.version, inst.version_source, inst.packages, warns = read_version(home)
        inst.warnings += warns
        inst.set_env = _set_env_for(home)
        break
    # the driver lives beside the toolkit (<root>/driver) or at the default root
    for root in ([inst.home.resolve().parents[1]] if inst.home and len(inst.home.resolve().parents) > 1 else []) + list(roots):
        ver, d = _driver(root)
        if d is not None:
            inst.driver_version, inst.driver_dir = ver, d
            break
    return inst
