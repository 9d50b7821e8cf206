"""The project's scan settings: [tool.ascend-migrate] in the nearest pyproject.toml.

Kept apart from the engine so that the CLI can find out cheaply (without importing the
analysers) which settings a scan of a folder would use.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Iterable, NamedTuple, Optional


class ProjectConfig(NamedTuple):
    """The table's settings (a light record: this module is read before the analysers load)."""

    exclude: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def find_project_config(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml at or above `start` that has a [tool.ascend-migrate] table
    (a pyproject.toml without one is passed over, as a subpackage's often is)."""
    here = start.resolve()
    for folder in (here, *here.parents):
        path = folder / "pyproject.toml"
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if re.search(r"^\s*\[\s*tool\s*\.\s*[\"']?ascend-migrate[\"']?\s*[\].]", text, re.M):
                return path
    return None


def _rebase(patterns: Iterable[str], prefix: str) -> tuple[str, ...]:
    """Exclude patterns written relative to the config's folder, made relative to a scan of
    its subfolder `prefix`: patterns under that subfolder lose the prefix, patterns that start
    with a wildcard apply anywhere, patterns for other folders do not apply."""
    if not prefix:
        return tuple(patterns)
    out = []
    for pat in patterns:
        if pat.startswith(prefix + "/"):
            out.append(pat[len(prefix) + 1:])
        elif pat.startswith(("*", "?", "[")):
            out.append(pat)
    return tuple(out)


def load_project_config(root: Path) -> ProjectConfig:
    """Read [tool.ascend-migrate] (exclude, select, ignore) from the nearest pyproject.toml at
    or above `root` that has that table. `exclude` patterns are relative to its folder."""
    path = find_project_config(root)
    if path is None:
        return ProjectConfig()
    try:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - exercised on older interpreters only
            import tomli as tomllib  # type: ignore[no-redef]
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except Exception as exc:  # a broken pyproject must not stop the scan
        raise ConfigError(f"{path}: cannot read [tool.ascend-migrate]: {exc}") from exc
    section = data.get("tool", {}).get("ascend-migrate", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [tool.ascend-migrate] must be a table")
    out = {}
    for key in ("exclude", "select", "ignore"):
        value = section.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: tool.ascend-migrate.{key} must be a list of strings")
        out[key] = tuple(value)
    unknown = set(section) - {"exclude", "select", "ignore"}
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) in [tool.ascend-migrate]: {', '.join(sorted(unknown))}")
    try:
        prefix = root.resolve().relative_to(path.parent).as_posix()
    except ValueError:  # pragma: no cover - found above root by construction
        prefix = ""
    out["exclude"] = _rebase(out["exclude"], "" if prefix == "." else prefix)
    return ProjectConfig(**out)


class ConfigError(ValueError):
    """Bad scan configuration (user error: exit code 2)."""
