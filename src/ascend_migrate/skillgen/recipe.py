"""The install-and-replay recipe of a model skill: what to install, in which order, from where.

The generated SKILL.md is followed by an agent on a fresh host that has nothing but the skill
folder and the package registries. The facts it needs are gathered here, at generation time,
and stored in replay.json:

* CUDA-only packages come from a scan of the ORIGINAL checkout: the validated tree no longer
  names what the manual patch removed (apex, flash-attn), and the fresh checkout still does;
* project dependencies come from the validated tree's requirement files (installed only after
  the replay has patched them) and from its third-party imports;
* torch_npu's undeclared runtime dependencies come from knowledge/compat.yaml, the list
  `ascend-migrate check` verifies, so the two never disagree.

Every name that ends up in a shell block is quoted with shlex.quote: file names and package
names are data from the project, and a name like `$(...)` must stay a name.
"""
from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path
from typing import Any, Iterable, Optional

from ascend_migrate.knowledge.loader import DATA_DIR, load_yaml

# import name -> distribution name, where they differ (the common cases in ML projects)
IMPORT_TO_DIST = {
    "PIL": "pillow", "cv2": "opencv-python", "sklearn": "scikit-learn", "skimage": "scikit-image",
    "yaml": "pyyaml", "attr": "attrs", "absl": "absl-py", "google": "protobuf", "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil", "dotenv": "python-dotenv", "jwt": "pyjwt", "Crypto": "pycryptodome",
    "sentencepiece": "sentencepiece", "tensorboardX": "tensorboardx", "wandb": "wandb", "fitz": "pymupdf",
    "lightning": "lightning", "pytorch_lightning": "pytorch-lightning", "ml_dtypes": "ml-dtypes",
}
# installed separately (pinned) or part of the tool: never from an import scan
NOT_FROM_IMPORTS = {"torch", "torch_npu", "ascend_migrate", "setuptools", "pkg_resources", "distutils", "__future__",
                    "triton", "numpy_pin"}
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
MAX_IMPORT_FILES = 5000


def q(value: Any) -> str:
    """Shell-quote one word for a bash block."""
    return shlex.quote(str(value))


def _cuda_package_table() -> tuple[dict[str, str], list[re.Pattern]]:
    """import name -> distribution name of CUDA-only packages (knowledge/packages.yaml)."""
    data = load_yaml(DATA_DIR / "packages.yaml") or {}
    imports: dict[str, str] = {}
    patterns: list[re.Pattern] = []
    for rec in data.get("packages") or []:
        names = rec.get("names") or []
        for module in rec.get("imports") or []:
            if names:
                imports[module] = names[0]
        patterns += [re.compile(p) for p in rec.get("patterns") or []]
    return imports, patterns


def cuda_only_packages(original: Path) -> list[str]:
    """Distribution names of CUDA-only packages the ORIGINAL checkout requires or imports."""
    from ascend_migrate.scan.api import scan

    result = scan(original)
    imports, _ = _cuda_package_table()
    names: set[str] = set()
    for f in result.findings:
        if not f.rule.upper().startswith("PK") or not f.symbol:
            continue
        symbol = f.symbol.strip()
        name = imports.get(symbol, symbol) if f.path.endswith(".py") else symbol
        name = re.split(r"[\s\[<>=!~;]", name, maxsplit=1)[0]
        if NAME_RE.match(name):
            names.add(name)
    return sorted(names, key=str.lower)


def _local_modules(root: Path, files: list[Path]) -> set[str]:
    """Names the project's own files and packages import as (any folder level: src layouts too)."""
    names: set[str] = set()
    for path in files:
        rel = path.relative_to(root)
        names.add(path.stem)
        names.update(rel.parts[:-1])
    return names


def project_imports(root: Path, files: Iterable[Path], cuda_imports: Iterable[str]) -> list[str]:
    """Distribution names of the third-party packages the validated tree's own code imports.

    Tests are left out (`import_sets` gives theirs): a test that imports a library to compare against
    (minGPT's `transformers`) would otherwise add a large install the training never needs."""
    return import_sets(root, files, cuda_imports)[0]


def import_sets(root: Path, files: Iterable[Path], cuda_imports: Iterable[str]) -> tuple[list[str], list[str]]:
    """(packages the code imports, packages only its tests import), each sorted case-insensitively.

    The second list is an optional install in the recipe: only needed to run the project's tests."""
    py = [p for p in files if p.suffix == ".py" and p.name != "setup.py"][:MAX_IMPORT_FILES]
    local = _local_modules(root, py)
    from ascend_migrate.scan.entries import _is_test, _stdlib_names

    stdlib = set(_stdlib_names())  # read off the interpreter on Pythons older than 3.10
    skip = stdlib | local | NOT_FROM_IMPORTS | set(cuda_imports)
    code: set[str] = set()
    tests: set[str] = set()
    for path in py:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError, OSError):
            continue
        into = tests if _is_test(path.relative_to(root).as_posix()) else code
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                if top and top not in skip and not top.startswith("_"):
                    into.add(IMPORT_TO_DIST.get(top, top))

    def names(found: set[str]) -> list[str]:
        return sorted((n for n in found if NAME_RE.match(n)), key=str.lower)

    return names(code), names(tests - code)


def runtime_dep_specs() -> list[str]:
    """torch_npu's undeclared runtime dependencies, as `ascend-migrate check` verifies them."""
    from ascend_migrate.check.compat import default_compat

    return [d.spec for d in default_compat().runtime_deps]


def public_version(version: str) -> str:
    """'2.13.0+cpu' -> '2.13.0': the local label names a build of one index, not a release."""
    return (version or "").split("+", 1)[0]


def project_name(original: Path, fallback: str) -> str:
    """The project's declared name (pyproject.toml, setup.py), else `fallback`: never a temporary folder's name."""
    pyproject = original / "pyproject.toml"
    try:
        if pyproject.is_file():
            m = re.search(r'(?ms)^\[project\].*?^name\s*=\s*["\']([^"\']+)["\']', pyproject.read_text(encoding="utf-8"))
            if m:
                return m.group(1)
        setup = original / "setup.py"
        if setup.is_file():
            m = re.search(r'\bname\s*=\s*["\']([^"\']+)["\']', setup.read_text(encoding="utf-8"))
            if m:
                return m.group(1)
    except (OSError, UnicodeDecodeError):
        pass
    return fallback


def validate_command(tool: str, device: str, vopts: dict[str, Any], golden: Optional[str],
                     thresholds_file: Optional[str], confirmed: list[dict[str, str]], skill_var: str) -> str:
    """The `validate` command with the recorded options, every value quoted.

    No confirmation travels with it: a person's decision holds for the tree and host it was
    made on, so the NPU host earns every item again.
    """
    words = [tool, "validate", ".", "--device", q(device)]
    if golden:
        words += ["--golden", f'"{skill_var}"/{q(golden)}']
    for key, flag in (("entry", "--entry"), ("autocast", "--autocast"), ("dtype", "--dtype"),
                      ("ddp_entry", "--ddp-entry"), ("ddp_steps", "--ddp-steps")):
        if vopts.get(key):
            words += [flag, q(vopts[key])]
    words += ["--precision", q(vopts.get("precision") or "fp32")]
    if vopts.get("ddp") is False:
        words.append("--no-ddp")
    if thresholds_file:
        words += ["--thresholds", f'"{skill_var}"/{q(thresholds_file)}']
    if vopts.get("ddp_command"):
        words += ["--ddp-command", q(" ".join(q(w) for w in vopts["ddp_command"]))]
    if vopts.get("loss_pattern"):
        words += ["--loss-pattern", q(vopts["loss_pattern"])]
    if vopts.get("command"):
        words += ["--", *(q(w) for w in vopts["command"])]
    return " ".join(words)
