"""Start-up shared by the scripts in this folder.

A script here runs from a checkout or an installed plugin copy without installing the package:
it puts the `src/` folder beside it on the import path. Its third-party dependencies are
declared once, in the script's own inline metadata block (PEP 723), which `uv run` and
`pipx run` read to build an environment. Run with a plain `python3`, a missing dependency
ends in one message naming it and the command that installs it, not in an ImportError deep
inside the package. Standard library only: this must work before anything is installed.
"""
from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import sys
from typing import List

# The block format of PEP 723: `# /// script` ... `# ///`, every line commented.
_BLOCK = re.compile(r"^# /// script$\s(?P<content>(?:^#(?:| .*)$\s)+)^# ///$", re.MULTILINE)
_DEPENDENCIES = re.compile(r"^dependencies\s*=\s*(\[[^\]]*\])", re.MULTILINE)
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_PY_MARKER = re.compile(r"""^\s*python_version\s*(<=|>=|<|>|==|!=)\s*['"](\d+)\.(\d+)['"]\s*$""")
VENV_HINT = "~/.venvs/ascend-migrate"


def declared_dependencies(script: str) -> List[str]:
    """The `dependencies` list of the script's PEP 723 block (requirement strings)."""
    with open(script, encoding="utf-8") as handle:
        match = _BLOCK.search(handle.read())
    if match is None:
        return []
    content = "".join(line[2:] if line.startswith("# ") else line[1:]
                      for line in match.group("content").splitlines(keepends=True))
    found = _DEPENDENCIES.search(content)
    # A TOML array of plain strings is also a Python literal.
    return list(ast.literal_eval(found.group(1))) if found else []


def _applies(requirement: str) -> bool:
    """Evaluate the only environment markers these scripts use: python_version comparisons."""
    if ";" not in requirement:
        return True
    marker = _PY_MARKER.match(requirement.split(";", 1)[1])
    if marker is None:
        return True
    op, wanted = marker.group(1), (int(marker.group(2)), int(marker.group(3)))
    have = sys.version_info[:2]
    return {"<": have < wanted, "<=": have <= wanted, ">": have > wanted, ">=": have >= wanted,
            "==": have == wanted, "!=": have != wanted}[op]


def missing_dependencies(requirements: List[str]) -> List[str]:
    """The requirements whose distribution is not installed for this interpreter."""
    missing = []
    for requirement in requirements:
        name = _NAME.match(requirement)
        if name is None or not _applies(requirement):
            continue
        try:
            importlib.metadata.version(name.group(1))
        except importlib.metadata.PackageNotFoundError:
            missing.append(requirement.split(";", 1)[0].strip())
    return missing


def require_dependencies(script: str) -> None:
    """Exit with status 2 and an install command when a declared dependency is missing;
    otherwise make the package beside this folder importable."""
    missing = missing_dependencies(declared_dependencies(script))
    name = os.path.basename(script)
    if missing:
        quoted = " ".join(f"'{req}'" for req in missing)
        sys.stderr.write(
            f"{name}: missing Python packages: {', '.join(missing)}\n"
            f"  install them into a virtual environment and run the script with its Python:\n"
            f"    python3 -m venv {VENV_HINT}\n"
            f"    {VENV_HINT}/bin/python -m pip install {quoted}\n"
            f"    {VENV_HINT}/bin/python {script} ...\n"
            f"  or let a runner read the script's dependency block: uv run {script} ... "
            f"(or pipx run)\n")
        raise SystemExit(2)
    src = os.path.join(os.path.dirname(os.path.abspath(script)), os.pardir, "src")
    if os.path.isdir(src):
        sys.path.insert(0, os.path.abspath(src))
