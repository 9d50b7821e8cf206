"""What the scan analyses: a file's job (its kind, from its name) and the result of analysing it."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from ascend_migrate.scan import config_kinds, entries
from ascend_migrate.scan.finding import Finding

MAX_FILE_BYTES = 4 * 1024 * 1024
DEPENDENCY_FILES = {"setup.py", "setup.cfg", "pyproject.toml", "environment.yml", "environment.yaml"}
# Job-scheduler scripts (Slurm, PBS, LSF) are shell scripts under other names.
CONFIG_SUFFIXES = {".sh": "sh", ".bash": "sh", ".zsh": "sh", ".slurm": "sh", ".sbatch": "sh", ".pbs": "sh",
                   ".qsub": "sh", ".lsf": "sh", ".yaml": "yaml", ".yml": "yaml", ".json": "json"}


@dataclass
class FileResult:
    findings: list[Finding] = field(default_factory=list)
    main_guard: int = 0
    has_transfer_import: bool = False
    imports_torch_npu: bool = False
    frameworks: dict[str, int] = field(default_factory=dict)
    launches: list[tuple[int, str, str]] = field(default_factory=list)  # (line, target, cwd)
    console_scripts: list[str] = field(default_factory=list)
    note: str = ""
    lines: int = 0
    data_file: bool = False  # JSON/YAML of no known config kind: a config only if a script names it
    config_refs: list[str] = field(default_factory=list)  # JSON/YAML files a shell script names
    entry: Optional[entries.EntryFacts] = None  # evidence for the entry-point decision
    counted: bool = True  # False for files read only for their launch lines (Markdown, Makefiles)
    deferred: bool = False  # a data file left unscanned: analysed only if a launch script names it
    build: bool = False  # a build, install or CI config: findings without fixes, never rewritten
    agnostic_prelude: bool = False  # binds `_accel_type` at module level, as the agnostic rewrite writes it
    analysed: bool = False  # Python analysed in full (analyse_python_text), findings not capped


@dataclass(frozen=True)
class Job:
    rel: str
    kind: str  # python | notebook | cuda | dependency | requirements | config | launcher
    config_kind: str = ""


def classify(rel: str) -> Optional[Job]:
    name = rel.rsplit("/", 1)[-1]
    lower = name.lower()
    suffix = os.path.splitext(lower)[1]
    if lower in DEPENDENCY_FILES:
        return Job(rel, "python" if lower == "setup.py" else "dependency")
    if lower.startswith("requirements") and suffix in (".txt", ".in"):
        return Job(rel, "dependency")
    if suffix in (".py", ".pyi"):
        return Job(rel, "python")
    if suffix == ".ipynb":
        return Job(rel, "notebook")
    if suffix in (".cu", ".cuh"):
        return Job(rel, "cuda")
    if suffix in CONFIG_SUFFIXES:
        return Job(rel, "config", CONFIG_SUFFIXES[suffix])
    if config_kinds.is_dockerfile(name):
        return Job(rel, "config", "docker")
    if suffix == ".md" or lower in ("makefile", "gnumakefile") or suffix == ".mk":
        return Job(rel, "launcher", "md" if suffix == ".md" else "sh")  # read for launch lines only
    return None
