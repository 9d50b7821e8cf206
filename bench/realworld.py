#!/usr/bin/env python3
"""Real code is the test: scan and migrate public repositories, then check the output.

For every repository directory under --repos (commit from COMMITS.txt when present):

  scan       files, findings by severity, runtime, crashes
  migrate    --style transfer and --style agnostic into copies under --work: changed files,
             edits, manual items, refused files (with reasons), dropped files, runtime, crashes
  idempotent a second migrate over each output; every file it would change is listed
  parse      every changed .py compiles (and every changed notebook's code cells), unless the
             original did not compile either
  names      names the edits introduce (`_device_type`, `torch_npu`, ...) are bound before
             module-level use and reachable from functions (static check, file:line listed)
  entries    transfer style: files that got the transfer_to_npu injection, compared with the
             files a user runs (by evidence: main guard, module-level argparse/training code,
             launch scripts, READMEs, console scripts) and the files another file imports
  loss       (--loss) run an original and its agnostic port on CPU for a few steps with tiny or
             synthetic data and compare every loss passed to backward() bit for bit
  standin    (--loss --standin) also run each recipe's transfer port on the emulated npu
             (ascend_migrate.emulated_npu) and compare its losses with the original's

The tool under test is run as `python -m ascend_migrate` (the interpreter running this file,
PYTHONPATH as given), one process per step, so a crash in one step is recorded and the run goes
on. Output is sorted and stable; timings are the only fields that vary between runs.

    PYTHONPATH=src python bench/realworld.py --repos /work/realrepos --out bench/realworld.json
    PYTHONPATH=src python bench/realworld.py --repos /work/realrepos --only nanoGPT --loss
    PYTHONPATH=src python bench/realworld.py --repos /work/realrepos --loss --standin
    PYTHONPATH=src python bench/realworld.py --repos DIR --out r.json --md bench/realworld.md

Only the standard library is used here. The loss runs need an interpreter with torch and numpy
(--loss-python, default /tmp/rwvenv/bin/python).
"""
from __future__ import annotations

import argparse
import ast
import builtins
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Optional

SCHEMA = "ascend-migrate/realworld/1"
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox", ".venv", "venv",
             "node_modules", ".ascend-migrate-cache", ".ipynb_checkpoints"}
CHANGES = "changes"  # stem of the change list written next to each output tree
INJECT_MODULE = "torch_npu.contrib.transfer_to_npu"
TORCH_FAMILY = {"torch", "torchvision", "torchaudio", "transformers", "timm", "accelerate", "deepspeed",
                "lightning", "pytorch_lightning", "diffusers", "peft", "apex", "xformers", "triton"}
BUILD_FILES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py"}
LAUNCHERS = re.compile(r"(?:^|[\s;&|(`'\"=])(?:python[0-9.]*|torchrun|deepspeed|accelerate\s+launch|"
                       r"torch\.distributed\.(?:launch|run)|mpirun|srun|pytest|coverage\s+run)(?=\s)")
PY_TOKEN = re.compile(r"(?<![\w/.-])((?:\.{0,2}/)?[\w./-]*\w\.py)\b")
MODULE_TOKEN = re.compile(r"\s-m\s+([A-Za-z_][\w.]*)")
CONSOLE_SCRIPT = re.compile(r"""['"]?[\w.-]+['"]?\s*=\s*['"]?([A-Za-z_][\w.]*)\s*:\s*[A-Za-z_]\w*""")
NAMES_OK = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__",
                                 "__builtins__", "__path__", "__cached__", "__annotations__", "__dict__",
                                 "__module__", "__qualname__", "__class__", "__debug__"}


# =========================================================================== small helpers
def is_own_record(rel: str) -> bool:
    """`.ascend-migrate/` (runs, pointer) and top-level change lists: written by migrate itself."""
    return rel.startswith(".ascend-migrate/") or rel.split("/")[-1].startswith("ascend-migrate-changes.")


def walk_files(root: Path) -> list[str]:
    """Every regular file under root (relative POSIX paths, sorted); symlinks listed too."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel = Path(dirpath).relative_to(root)
        for name in filenames:
            p = Path(dirpath) / name
            if p.is_symlink() or p.is_file():
                out.append((rel / name).as_posix())
    return sorted(out)


def read(path: Path) -> Optional[bytes]:
    try:
        if path.is_symlink():
            return b"symlink:" + os.readlink(path).encode("utf-8", "surrogateescape")
        return path.read_bytes()
    except OSError:
        return None


def parse_py(data: bytes, name: str = "<file>") -> tuple[Optional[ast.Module], str]:
    try:
        return ast.parse(data, filename=name), ""
    except (SyntaxError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {getattr(exc, 'msg', exc)} (line {getattr(exc, 'lineno', '?')})"


def compiles(data: bytes, name: str) -> str:
    """'' when the source compiles, else the error."""
    try:
        compile(data, name, "exec", dont_inherit=True)
        return ""
    except (SyntaxError, ValueError) as exc:
        return f"{type(exc).__name__}: {getattr(exc, 'msg', exc)} (line {getattr(exc, 'lineno', '?')})"


MAGIC = re.compile(r"^\s*[!%?]")


def notebook_cells(data: bytes) -> Optional[list[str]]:
    """Code cells of a notebook with IPython magics/shell lines blanked, or None if not JSON."""
    try:
        nb = json.loads(data.decode("utf-8", "surrogateescape"))
    except (ValueError, UnicodeDecodeError):
        return None
    cells = []
    for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else str(src)
            lines, cont = [], False
            for line in src.splitlines():
                magic = cont or bool(MAGIC.match(line))
                cont = magic and line.rstrip().endswith("\\")
                lines.append("" if magic else line)
            cells.append("\n".join(lines) + "\n")
    return cells


def run(cmd: list[str], *, cwd: Optional[Path] = None, env: Optional[dict] = None, timeout: float = 1800) -> dict:
    """Run a command; return exit code, seconds, the tail of stderr, and whether it crashed."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, timeout=timeout)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = "timeout", exc.stdout or b"", (exc.stderr or b"") + b"\n[timed out]"
    seconds = round(time.perf_counter() - start, 2)
    err_text = err.decode("utf-8", "replace")
    crashed = rc not in (0, 1) or "Traceback (most recent call last)" in err_text
    return {"rc": rc, "seconds": seconds, "crashed": crashed, "stdout": out.decode("utf-8", "replace"),
            "stderr": err_text}


def tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def tool(*args: str) -> list[str]:
    return [sys.executable, "-m", "ascend_migrate", *args]


def load_json(path: Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def commits(repos: Path) -> dict[str, str]:
    """name -> 'owner/name@sha' from COMMITS.txt lines `owner+name sha`."""
    found = {}
    try:
        text = (repos / "COMMITS.txt").read_text(encoding="utf-8")
    except OSError:
        return found
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and "+" in parts[0]:
            owner, name = parts[0].split("+", 1)
            found[name] = f"{owner}/{name}@{parts[1]}"
    return found


# =========================================================================== name binding check
def _pattern_names(node: ast.AST) -> Iterable[str]:
    for n in ast.walk(node):
        if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            yield n.name
        elif isinstance(n, ast.MatchMapping) and n.rest:
            yield n.rest


def _import_names(node: ast.AST) -> Iterable[str]:
    for alias in node.names:
        if alias.name == "*":
            yield "*"
        else:
            yield alias.asname or alias.name.split(".")[0]


def scope_bindings(body: list[ast.stmt], args: Optional[ast.arguments] = None) -> set[str]:
    """Names bound anywhere in one scope (nested function and class bodies excluded)."""
    bound: set[str] = set()
    if args is not None:
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None:
                bound.add(a.arg)
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(_import_names(node))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, ast.match_case):
            bound.update(_pattern_names(node.pattern))
        stack.extend(ast.iter_child_nodes(node))
    return bound


def _globals_declared(tree: ast.Module) -> set[str]:
    return {name for n in ast.walk(tree) if isinstance(n, ast.Global) for name in n.names}


class BindingCheck:
    """Uses of `names` that can raise NameError: at module level before any binding (in source
    order; a binding in any branch counts), or inside a function where no enclosing scope and
    no module-level statement binds the name."""

    def __init__(self, tree: ast.Module, names: set[str]):
        self.names = names
        self.problems: list[tuple[int, str, str]] = []  # (line, name, where)
        self.module_bound = scope_bindings(tree.body) | _globals_declared(tree)
        self.star = "*" in self.module_bound
        self.bound: set[str] = set()
        self._body(tree.body)

    # --- module level, in order
    def _body(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self._stmt(stmt)

    def _stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for expr in stmt.decorator_list + _arg_defaults(stmt.args):
                self._now(expr)
            self._later(stmt, [])
            self.bound.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            for expr in stmt.decorator_list + stmt.bases + [k.value for k in stmt.keywords]:
                self._now(expr)
            self._body(stmt.body)  # class bodies run at once; their names are close enough to globals
            self.bound.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = set(_import_names(stmt))
            if "*" in names:
                self.star = True
            self.bound |= names
        elif isinstance(stmt, (ast.If, ast.While)):
            self._now(stmt.test)
            self._body(stmt.body)
            self._body(stmt.orelse)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._now(stmt.iter)
            self.bound |= _store_names(stmt.target)
            self._body(stmt.body)
            self._body(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self._now(item.context_expr)
                if item.optional_vars is not None:
                    self.bound |= _store_names(item.optional_vars)
            self._body(stmt.body)
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self._body(stmt.body)
            for handler in stmt.handlers:
                if handler.type is not None:
                    self._now(handler.type)
                if handler.name:
                    self.bound.add(handler.name)
                self._body(handler.body)
            self._body(stmt.orelse)
            self._body(stmt.finalbody)
        elif isinstance(stmt, ast.Match):
            self._now(stmt.subject)
            for case in stmt.cases:
                self.bound |= set(_pattern_names(case.pattern))
                if case.guard is not None:
                    self._now(case.guard)
                self._body(case.body)
        else:  # simple statements: the value runs before the targets are bound
            self._now(stmt)
            self.bound |= scope_bindings([stmt])

    def _now(self, node: ast.AST) -> None:
        """Expressions that run immediately at module level."""
        local: set[str] = set()  # comprehension variables
        for n in ast.walk(node):
            if isinstance(n, ast.comprehension):
                local |= _store_names(n.target)
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for expr in n.decorator_list + _arg_defaults(n.args):
                    stack.append(expr)
                self._later(n, [])
                continue
            if isinstance(n, ast.Lambda):
                stack.extend(_arg_defaults(n.args))
                self._later(n, [])
                continue
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in self.names:
                if n.id not in self.bound and n.id not in local and not self.star and n.id not in NAMES_OK:
                    self.problems.append((n.lineno, n.id, "module level, before it is bound"))
            if isinstance(n, ast.NamedExpr):
                self.bound |= _store_names(n.target)
            stack.extend(ast.iter_child_nodes(n))

    # --- function bodies (run later): the name must be bound in some enclosing scope
    def _later(self, func: ast.AST, enclosing: list[set[str]]) -> None:
        if isinstance(func, ast.Lambda):
            scopes = enclosing + [scope_bindings([ast.Expr(func.body)], func.args)]
            body: list[ast.AST] = [func.body]
        else:
            scopes = enclosing + [scope_bindings(func.body, func.args)]
            body = list(func.body)
        stack = body
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if not isinstance(n, ast.Lambda):
                    stack.extend(n.decorator_list)
                stack.extend(_arg_defaults(n.args))
                self._later(n, scopes)
                continue
            if isinstance(n, ast.ClassDef):
                stack.extend(n.decorator_list + n.bases)
                stack.extend(n.body)
                continue
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in self.names:
                if (n.id not in NAMES_OK and not self.star and n.id not in self.module_bound
                        and not any(n.id in s for s in scopes) and not _comp_bound(n, body)):
                    self.problems.append((n.lineno, n.id, "in a function, bound nowhere it can see"))
            stack.extend(ast.iter_child_nodes(n))


def _comp_bound(name: ast.Name, body: list[ast.AST]) -> bool:
    for root in body:
        for n in ast.walk(root):
            if isinstance(n, ast.comprehension) and name.id in _store_names(n.target):
                return True
    return False


def _arg_defaults(args: ast.arguments) -> list[ast.expr]:
    return [d for d in args.defaults + args.kw_defaults if d is not None]


def _store_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _loads(tree: ast.AST) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def introduced_names(old: Optional[ast.Module], new: ast.Module) -> set[str]:
    """Names loaded more often after the edits than before (builtins aside)."""
    before = _loads(old) if old is not None else {}
    return {k for k, v in _loads(new).items() if v > before.get(k, 0) and k not in NAMES_OK}


def binding_problems(old_src: bytes, new_src: bytes, rel: str) -> list[dict]:
    """New NameError risks for the names the edits introduce (problems the original had are not counted)."""
    new, _ = parse_py(new_src, rel)
    old, _ = parse_py(old_src, rel)
    if new is None:
        return []
    names = introduced_names(old, new)
    if not names:
        return []
    new_lines = new_src.decode("utf-8", "replace").splitlines()
    old_lines = old_src.decode("utf-8", "replace").splitlines()

    def keyed(tree, lines):
        out = []
        for line, name, where in BindingCheck(tree, names).problems:
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            out.append((line, name, where, text))
        return out

    before: dict[tuple, int] = {}
    if old is not None:
        for _, name, where, text in keyed(old, old_lines):
            before[(name, where, text)] = before.get((name, where, text), 0) + 1
    found = []
    for line, name, where, text in sorted(set(keyed(new, new_lines))):
        key = (name, where, text)
        if before.get(key, 0) > 0:
            before[key] -= 1
            continue
        found.append({"file": rel, "line": line, "name": name, "where": where, "text": text[:160]})
    return found


# =========================================================================== entry points by evidence
def _module_level(tree: ast.Module) -> list[ast.AST]:
    """Module-level code that runs on import (function and class bodies excluded)."""
    out, stack = [], list(tree.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not isinstance(n, ast.Lambda):
                stack.extend(n.decorator_list)
            continue
        if isinstance(n, ast.ClassDef):
            stack.extend(n.decorator_list + n.bases)
            continue
        out.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return out


def _is_main_guard(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    parts = [stmt.test.left, *stmt.test.comparators]
    return (any(isinstance(p, ast.Name) and p.id == "__name__" for p in parts)
            and any(isinstance(p, ast.Constant) and p.value == "__main__" for p in parts))


def code_evidence(tree: ast.Module) -> list[str]:
    """Why this module looks like a script a user runs (empty: it looks like a library)."""
    reasons = []
    if any(_is_main_guard(s) for s in tree.body):
        reasons.append("main guard")
    defined = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    nodes = _module_level(ast.Module(body=[s for s in tree.body if not _is_main_guard(s)], type_ignores=[]))
    calls = [n for n in nodes if isinstance(n, ast.Call)]
    attr = {n.func.attr for n in calls if isinstance(n.func, ast.Attribute)}
    plain = {n.func.id for n in calls if isinstance(n.func, ast.Name)}
    if "parse_args" in attr or "parse_known_args" in attr:
        reasons.append("module-level argument parsing")
    if "backward" in attr or "step" in attr:
        reasons.append("module-level training loop")
    if "exec" in plain:
        reasons.append("module-level exec (configurator)")
    if any(isinstance(n, ast.Attribute) and n.attr == "argv" and isinstance(n.value, ast.Name) and n.value.id == "sys"
           for n in nodes):
        reasons.append("module-level sys.argv")
    top_calls = {s.value.func.id for s in tree.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                 and isinstance(s.value.func, ast.Name)}
    if top_calls & defined:
        reasons.append(f"module-level call of {sorted(top_calls & defined)[0]}()")
    loops = [s for s in tree.body if isinstance(s, (ast.For, ast.While, ast.With))
             and any(isinstance(n, ast.Call) for n in ast.walk(s))]
    if loops and not any(r.startswith("module-level training") for r in reasons):
        reasons.append("module-level loop or with-block running code")
    return reasons


def launch_mentions(root: Path, files: list[str], py_files: set[str]) -> dict[str, set[str]]:
    """Python files named on a launcher line (python/torchrun/...) of a shell script, Makefile,
    README or other doc/config text in the tree; file -> set of 'launched by X' reasons."""
    found: dict[str, set[str]] = {}
    by_name: dict[str, list[str]] = {}
    for p in py_files:
        by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    docs = [f for f in files if f.endswith((".sh", ".bash", ".md", ".rst", ".txt", ".yaml", ".yml", ".cfg", ".toml",
                                            ".slurm", ".sbatch", ".ipynb")) or f.rsplit("/", 1)[-1] in ("Makefile", "Dockerfile")]
    for doc in docs:
        if doc.rsplit("/", 1)[-1] in ("requirements.txt", "CMakeLists.txt"):
            continue
        data = read(root / doc)
        if data is None or len(data) > 2_000_000:
            continue
        text = data.decode("utf-8", "replace").replace("\\\n", " ")
        doc_dir = doc.rsplit("/", 1)[0] if "/" in doc else ""
        for line in text.splitlines():
            m = LAUNCHERS.search(line)
            if not m:
                continue
            rest = line[m.end():]
            tok = PY_TOKEN.search(rest)
            mod = MODULE_TOKEN.search(" " + rest)
            hit = None
            if mod and (not tok or mod.start() < tok.start() + 1):
                # `python -m pkg.mod`: a module of the tree, or a launcher such as
                # torch.distributed.launch followed by the script
                name = mod.group(1).replace(".", "/")
                for target in (name + ".py", name + "/__main__.py"):
                    hit = hit or _resolve_mention(target, doc_dir, py_files, by_name)
            if hit is None and tok:
                hit = _resolve_mention(tok.group(1), doc_dir, py_files, by_name)
            if hit:
                found.setdefault(hit, set()).add(f"launched by {doc}")
    return found


def _resolve_mention(target: str, doc_dir: str, py_files: set[str], by_name: dict[str, list[str]]) -> Optional[str]:
    target = target.lstrip("./") if target.startswith("./") else target
    for base in (doc_dir, ""):
        cand = os.path.normpath(os.path.join(base, target)).replace(os.sep, "/")
        if cand in py_files:
            return cand
    same = [p for p in by_name.get(target.rsplit("/", 1)[-1], []) if p.endswith("/" + target) or p == target]
    return same[0] if len(same) == 1 else None


def console_scripts(root: Path, py_files: set[str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for cfg in ("setup.py", "pyproject.toml", "setup.cfg"):
        data = read(root / cfg)
        if not data:
            continue
        text = data.decode("utf-8", "replace")
        if not re.search(r"console_scripts|gui_scripts|^\s*\[project\.(gui-)?scripts\]|^\s*(gui-)?scripts\s*[.=]",
                         text, re.M):
            continue
        for m in CONSOLE_SCRIPT.finditer(text):
            path = m.group(1).replace(".", "/")
            for cand in (path + ".py", path + "/__init__.py", "src/" + path + ".py", "src/" + path + "/__init__.py"):
                if cand in py_files:
                    found.setdefault(cand, set()).add(f"console script in {cfg}")
    return found


def import_graph(root: Path, py_files: set[str], trees: dict[str, Optional[ast.Module]]) -> dict[str, set[str]]:
    """file -> files of the tree that it imports (resolved from the importer's directory, its
    ancestors and their src/ folders, as a script or package run from there would see them)."""
    graph: dict[str, set[str]] = {}
    for rel, tree in trees.items():
        if tree is None:
            continue
        parts = rel.split("/")
        ancestors = ["/".join(parts[:i]) for i in range(len(parts) - 1, -1, -1)]
        targets: set[str] = set()
        for n in ast.walk(tree):
            mods: list[str] = []
            if isinstance(n, ast.Import):
                mods = [a.name for a in n.names]
                bases = ancestors
            elif isinstance(n, ast.ImportFrom):
                if n.level:
                    pkg = parts[:-1]
                    if n.level - 1 > len(pkg):
                        continue
                    pkg = pkg[:len(pkg) - (n.level - 1)]
                    base = "/".join(pkg)
                    mod = (n.module or "")
                    prefix = (mod + ".") if mod else ""
                    mods = ([mod] if mod else []) + [prefix + a.name for a in n.names if a.name != "*"]
                    bases = [base]
                else:
                    mods = [n.module] + [n.module + "." + a.name for a in n.names if a.name != "*"]
                    bases = ancestors
            else:
                continue
            for mod in mods:
                path = mod.replace(".", "/")
                for base in bases:
                    for b in (base, (base + "/src") if base else "src"):
                        prefix = (b + "/") if b else ""
                        for cand in (prefix + path + ".py", prefix + path + "/__init__.py"):
                            if cand in py_files and cand != rel:
                                targets.add(cand)
                        # importing a.b.c also runs a/__init__.py and a/b/__init__.py
                        bits = path.split("/")
                        for i in range(1, len(bits)):
                            cand = prefix + "/".join(bits[:i]) + "/__init__.py"
                            if cand in py_files and cand != rel:
                                targets.add(cand)
        graph[rel] = targets
    return graph


def torch_users(trees: dict[str, Optional[ast.Module]], graph: dict[str, set[str]]) -> set[str]:
    """Files that import torch (or a torch-based library), directly or through files of the tree."""
    direct = set()
    for rel, tree in trees.items():
        if tree is None:
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Import) and any(a.name.split(".")[0] in TORCH_FAMILY for a in n.names):
                direct.add(rel)
                break
            if isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").split(".")[0] in TORCH_FAMILY:
                direct.add(rel)
                break
    users = set(direct)
    changed = True
    while changed:
        changed = False
        for rel, deps in graph.items():
            if rel not in users and deps & users:
                users.add(rel)
                changed = True
    return users


def has_injection(data: bytes, rel: str) -> str:
    """'plain' when the file imports transfer_to_npu on import, 'guarded' when every such import
    sits under a module-level `if` that tests `__name__` (it runs only when started as a program)
    or inside a module-level function (a console script's function: it runs when the command
    calls it), '' when it has none."""
    if rel.endswith(".ipynb"):
        cells = notebook_cells(data) or []
        return "plain" if any(INJECT_MODULE in c or "transfer_to_npu" in c for c in cells) else ""
    tree, _ = parse_py(data, rel)
    if tree is None:
        return "plain" if b"transfer_to_npu" in data else ""

    def is_transfer(n: ast.AST) -> bool:
        if isinstance(n, ast.ImportFrom) and n.module and (
                n.module == INJECT_MODULE or (n.module == "torch_npu.contrib" and any(a.name == "transfer_to_npu" for a in n.names))):
            return True
        return isinstance(n, ast.Import) and any(a.name == INJECT_MODULE for a in n.names)

    def tests_name(test: ast.AST) -> bool:
        return any(isinstance(x, ast.Name) and x.id == "__name__" for x in ast.walk(test))

    found = ""
    for n in ast.walk(tree):
        if is_transfer(n):
            found = "plain"
            break
    if not found:
        return ""
    # under a `__name__` test, or inside a module-level function (a console script's command
    # function): neither runs when the module is imported
    guarded = [n for s in tree.body
               if (isinstance(s, ast.If) and tests_name(s.test)) or isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
               for n in ast.walk(s) if is_transfer(n)]
    every = [n for n in ast.walk(tree) if is_transfer(n)]
    return "guarded" if len(guarded) == len(every) else "plain"


def entry_analysis(orig: Path, out: Path, files: list[str], injected: list[str],
                   guarded: Iterable[str] = ()) -> dict:
    """Which files got the transfer imports against which a user runs. `guarded`: the injected
    files whose imports run only when started as a program (a `__name__` test): in a module that
    other files import, that is the right form, not a defect."""
    py_files = {f for f in files if f.endswith(".py")}
    trees = {}
    for rel in sorted(py_files):
        data = read(orig / rel)
        trees[rel] = parse_py(data, rel)[0] if data is not None else None
    graph = import_graph(orig, py_files, trees)
    for nb in (f for f in files if f.endswith(".ipynb")):  # notebooks import modules of the tree too
        cells = notebook_cells(read(orig / nb) or b"") or []
        nb_tree = ast.Module(body=[s for c in cells for s in (parse_py(c.encode("utf-8", "surrogateescape"))[0] or
                                                               ast.Module(body=[], type_ignores=[])).body],
                             type_ignores=[])
        nb_path = nb[:-len(".ipynb")] + ".py"
        deps = import_graph(orig, py_files | {nb_path}, {nb_path: nb_tree}).get(nb_path, set())
        graph[nb] = deps - {nb_path}
    importers: dict[str, set[str]] = {}
    for src, deps in graph.items():
        for d in deps:
            importers.setdefault(d, set()).add(src)
    users = torch_users(trees, graph)
    evidence: dict[str, set[str]] = {}
    for rel, tree in trees.items():
        if tree is not None:
            for r in code_evidence(tree):
                evidence.setdefault(rel, set()).add(r)
    for rel in py_files:
        if rel.rsplit("/", 1)[-1] == "__main__.py":
            evidence.setdefault(rel, set()).add("package __main__ (python -m)")
    for extra in (launch_mentions(orig, files, py_files), console_scripts(orig, py_files)):
        for rel, reasons in extra.items():
            evidence.setdefault(rel, set()).update(reasons)
    notebooks = [f for f in files if f.endswith(".ipynb")]

    def is_test(rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return (name.startswith("test_") or name.endswith("_test.py") or "/tests/" in "/" + rel
                or "/test/" in "/" + rel)

    expected = sorted(rel for rel in evidence if rel in users and rel not in importers
                      and rel.rsplit("/", 1)[-1] not in BUILD_FILES and not is_test(rel))
    inj = set(injected)
    on_import = inj - set(guarded)
    rows = {
        "injected": sorted(inj),
        "expected_entries": [{"file": r, "reasons": sorted(evidence[r])} for r in expected],
        "missed_entries": [{"file": r, "reasons": sorted(evidence[r])} for r in expected if r not in inj],
        "injected_imported": [{"file": r, "imported_by": sorted(importers[r])[:3], "importers": len(importers[r]),
                               "also_run_by_users": sorted(evidence.get(r, set()) - {"main guard"})}
                              for r in sorted(on_import) if r in importers],
        "injected_guarded": [{"file": r, "imported_by": sorted(importers.get(r, ()))[:3],
                              "importers": len(importers.get(r, ()))} for r in sorted(inj - on_import)],
        "injected_other": [],
        "notebooks": len(notebooks),
    }
    for r in sorted(inj - set(expected) - set(importers)):
        why = []
        if r.endswith(".ipynb"):
            why.append("notebook")
        elif r.rsplit("/", 1)[-1] in BUILD_FILES:
            why.append("build or test-support file")
        elif is_test(r):
            why.append("test file")
        if r.endswith(".py") and r not in users:
            why.append("does not use torch")
        if r.endswith(".py") and r not in evidence:
            why.append("no evidence that a user runs it")
        rows["injected_other"].append({"file": r, "why": why or ["unclassified"]})
    return rows


# =========================================================================== per-repository measurement
def scan_step(repo: Path, work: Path, jobs: int) -> dict:
    report = work / "scan.json"
    res = run(tool("scan", str(repo), "--format", "json", "-o", str(report), "--no-cache", "--fail-on", "never",
                   "-j", str(jobs)))
    data = load_json(report) if not res["crashed"] else None
    row = {"seconds": res["seconds"], "rc": res["rc"], "crashed": res["crashed"] or data is None}
    if row["crashed"]:
        row["error"] = tail(res["stderr"])
        return row
    counts = data.get("counts", {})
    row.update({
        "files": data.get("files_scanned"),
        "lines": data.get("lines_scanned"),
        "findings": counts.get("findings", len(data.get("findings", []))),
        "by_severity": dict(sorted(counts.get("by_severity", {}).items())),
        "by_rule": dict(sorted(counts.get("by_rule", {}).items())),
        "entry_points": sorted({e.get("path", "") for e in data.get("entry_points", [])}),
        "notes": len(data.get("notes", [])),
    })
    return row


def migrate_step(repo: Path, work: Path, style: str, orig_files: list[str]) -> dict:
    out, again = work / style / "out", work / style / "again"
    for d in (out, again):
        shutil.rmtree(d, ignore_errors=True)
    (work / style).mkdir(parents=True, exist_ok=True)
    changes = work / style / CHANGES
    res = run(tool("migrate", str(repo), "--style", style, "-o", str(out), "-q", "--changes", str(changes)))
    data = load_json(changes.with_suffix(".json"))
    row: dict = {"seconds": res["seconds"], "rc": res["rc"], "crashed": res["crashed"] or data is None}
    if row["crashed"]:
        row["error"] = tail(res["stderr"])
    if data is None or not out.is_dir():
        return row
    rows = data.get("changes", [])
    row["edits"] = sum(1 for r in rows if r.get("operation") != "manual")
    row["manual"] = sum(1 for r in rows if r.get("operation") == "manual")
    row["operations"] = dict(sorted(_count(r.get("operation", "?") for r in rows).items()))
    row["manual_by_rule"] = dict(sorted(_count(r.get("rule") or "-" for r in rows if r.get("operation") == "manual").items()))
    row["refused"] = sorted(({"file": e.get("file"), "reason": str(e.get("error"))[:300]} for e in data.get("errors", [])),
                            key=lambda e: e["file"])
    row["notes"] = len(data.get("notes", []))
    # the tool's own records (per-run change lists) are not part of the migrated project
    out_files = [rel for rel in walk_files(out) if not is_own_record(rel)]
    changed, dropped = [], []
    out_set = set(out_files)
    dropped_links = []
    for rel in orig_files:
        if rel not in out_set:
            (dropped_links if (repo / rel).is_symlink() else dropped).append(rel)
        elif read(repo / rel) != read(out / rel):
            changed.append(rel)
    added = sorted(out_set - set(orig_files))
    row["changed_files"] = changed
    row["dropped_files"] = dropped
    row["dropped_symlinks"] = dropped_links
    row["added_files"] = added
    # every changed Python file compiles (unless the original did not compile either)
    parse_fail, parse_pre = [], []
    binding: list[dict] = []
    for rel in changed:
        new = read(out / rel) or b""
        old = read(repo / rel) or b""
        if rel.endswith(".py"):
            err = compiles(new, rel)
            if err:
                (parse_pre if compiles(old, rel) else parse_fail).append({"file": rel, "error": err})
            else:
                binding.extend(binding_problems(old, new, rel))
        elif rel.endswith(".ipynb"):
            new_cells, old_cells = notebook_cells(new), notebook_cells(old) or []
            if new_cells is None:
                parse_fail.append({"file": rel, "error": "not valid notebook JSON"})
                continue
            for i, cell in enumerate(new_cells):
                err = compiles(cell.encode("utf-8", "surrogateescape"), f"{rel}[{i}]")
                if err:
                    was_ok = i < len(old_cells) and not compiles(old_cells[i].encode("utf-8", "surrogateescape"), rel)
                    (parse_fail if was_ok else parse_pre).append({"file": f"{rel} cell {i}", "error": err})
    row["parse_checked"] = sum(1 for r in changed if r.endswith((".py", ".ipynb")))
    row["parse_failures"] = parse_fail
    row["parse_failures_preexisting"] = parse_pre
    row["name_binding"] = binding
    # second pass: migrating the output again must change nothing
    res2 = run(tool("migrate", str(out), "--style", style, "-o", str(again), "-q", "--changes", str(changes) + "-again"))
    data2 = load_json(Path(str(changes) + "-again.json"))
    if res2["crashed"] or data2 is None or not again.is_dir():
        row["idempotency"] = {"crashed": True, "error": tail(res2["stderr"])}
    else:
        second = [rel for rel in out_files if read(out / rel) != read(again / rel)]
        edits2 = [r for r in data2.get("changes", []) if r.get("operation") != "manual"]
        row["idempotency"] = {
            "changed_files": second,
            "edits": len(edits2),
            "edited_files": sorted({r.get("file") for r in edits2}),
            "refused": sorted(e.get("file") for e in data2.get("errors", [])),
            "seconds": res2["seconds"],
        }
    if style == "transfer":
        kinds = {rel: has_injection(read(out / rel) or b"", rel) for rel in changed if rel.endswith((".py", ".ipynb"))
                 and not has_injection(read(repo / rel) or b"", rel)}
        injected = [rel for rel, kind in kinds.items() if kind]
        row["entries"] = entry_analysis(repo, out, orig_files, injected,
                                        guarded=[rel for rel, kind in kinds.items() if kind == "guarded"])
    return row


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def measure(repo: Path, work: Path, jobs: int, commit: str = "") -> dict:
    work.mkdir(parents=True, exist_ok=True)
    files = walk_files(repo)
    row: dict = {"name": repo.name, "commit": commit, "files": len(files),
                 "python_files": sum(1 for f in files if f.endswith(".py"))}
    row["scan"] = scan_step(repo, work, jobs)
    for style in ("transfer", "agnostic"):
        row[style] = migrate_step(repo, work, style, files)
    return row


# =========================================================================== loss recipes
WRAPPER = r'''
import json, os, runpy, sys
out_path, limit, script = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.argv = [script] + sys.argv[4:]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
import torch
torch.set_num_threads(1)
losses = []
class Enough(BaseException):
    pass
_backward = torch.Tensor.backward
def backward(self, *a, **k):
    if self.numel() == 1:
        losses.append(float(self.detach().float()).hex())
    _backward(self, *a, **k)
    if len(losses) >= limit:
        raise Enough()
torch.Tensor.backward = backward
forced = json.loads(os.environ.get("REALWORLD_LOADER_ARGS") or "{}")
if forced:  # the recipe's DataLoader arguments, the same on every side
    import inspect
    import torch.utils.data
    _loader_init = torch.utils.data.DataLoader.__init__
    _loader_sig = inspect.signature(_loader_init)
    def loader_init(self, *a, **k):
        bound = _loader_sig.bind(self, *a, **k)
        bound.arguments.update(forced)
        _loader_init(*bound.args, **bound.kwargs)
    torch.utils.data.DataLoader.__init__ = loader_init
status = "finished"
try:
    runpy.run_path(script, run_name="__main__")
except Enough:
    status = "stopped after %d losses" % limit
except SystemExit as exc:
    status = "exit %s" % (exc.code,)
except BaseException as exc:
    status = "error %s: %s" % (type(exc).__name__, str(exc)[:200])
    raise
finally:
    with open(out_path, "w") as fh:
        json.dump({"losses": losses, "status": status}, fh)
'''


def _nanogpt_data(tree: Path) -> None:
    import pickle
    import random
    from array import array

    data = tree / "data" / "shakespeare_char"
    data.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    for split, n in (("train", 20000), ("val", 4000)):
        (data / f"{split}.bin").write_bytes(array("H", (rng.randrange(65) for _ in range(n))).tobytes())
    with open(data / "meta.pkl", "wb") as fh:
        pickle.dump({"vocab_size": 65, "itos": {i: chr(32 + i) for i in range(65)},
                     "stoi": {chr(32 + i): i for i in range(65)}}, fh)


def _word_corpus(tree: Path) -> None:
    """Seeded random sentences over a 50-word vocabulary, in the layout data.Corpus reads."""
    import random

    data = tree / "word_language_model" / "data" / "synthetic"
    data.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    words = [f"w{i}" for i in range(50)]
    for split, n in (("train", 400), ("valid", 60), ("test", 60)):
        lines = (" ".join(rng.choice(words) for _ in range(rng.randrange(4, 12))) for _ in range(n))
        (data / f"{split}.txt").write_text("\n".join(lines) + "\n")


def _mnist_shim(tree: Path) -> None:
    """A torchvision stand-in with synthetic MNIST-shaped data (same for original and port)."""
    pkg = tree / "_synthetic_site" / "torchvision"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("from . import datasets, transforms\n")
    (pkg / "transforms.py").write_text(
        "class Compose:\n    def __init__(self, fs): self.fs = fs\n"
        "    def __call__(self, x):\n        for f in self.fs: x = f(x)\n        return x\n"
        "class ToTensor:\n    def __call__(self, x): return x\n"
        "class Normalize:\n    def __init__(self, m, s): self.m, self.s = m[0], s[0]\n"
        "    def __call__(self, x): return (x - self.m) / self.s\n")
    (pkg / "datasets.py").write_text(
        "import torch\nclass MNIST(torch.utils.data.Dataset):\n"
        "    def __init__(self, root, train=True, download=False, transform=None):\n"
        "        g = torch.Generator().manual_seed(0 if train else 1)\n"
        "        n = 256 if train else 64\n"
        "        self.x = torch.rand(n, 1, 28, 28, generator=g)\n"
        "        self.y = torch.randint(0, 10, (n,), generator=g)\n"
        "        self.transform = transform\n"
        "    def __len__(self): return len(self.y)\n"
        "    def __getitem__(self, i):\n"
        "        x = self.x[i]\n        return (self.transform(x) if self.transform else x), int(self.y[i])\n")


# name: (repository, working dir in the tree, script, args, PYTHONPATH entries in the tree, setup, losses;
#        optional: the accelerator switch for the stand-in run, DataLoader arguments forced on every side)
RECIPES: dict[str, dict] = {
    "nanoGPT-train": {
        "repo": "nanoGPT", "cwd": ".", "script": "train.py", "pythonpath": ["."], "setup": _nanogpt_data, "steps": 6,
        "standin": {"replace": {"--device=cpu": "--device=cuda"}},
        "args": ["--dataset=shakespeare_char", "--device=cpu", "--compile=False", "--n_layer=2", "--n_head=2",
                 "--n_embd=32", "--block_size=32", "--batch_size=4", "--gradient_accumulation_steps=2",
                 "--max_iters=3", "--lr_decay_iters=3", "--warmup_iters=1", "--eval_interval=2", "--eval_iters=2",
                 "--log_interval=1", "--always_save_checkpoint=False", "--out_dir={tmp}/out"]},
    "minGPT-adder": {
        "repo": "minGPT", "cwd": "projects/adder", "script": "projects/adder/adder.py", "pythonpath": ["."],
        "setup": None, "steps": 4, "standin": {},  # trainer.device 'auto' picks cuda when it is available
        "args": ["--system.work_dir='{tmp}/adder'", "--trainer.num_workers=0", "--trainer.batch_size=8",
                 "--trainer.max_iters=4", "--model.model_type=gpt-nano", "--data.ndigit=1"]},
    "examples-word_language_model": {
        "repo": "examples", "cwd": "word_language_model", "script": "word_language_model/main.py", "pythonpath": [],
        "setup": _word_corpus, "steps": 5, "standin": {"add": ["--accel"]},
        "args": ["--data=./data/synthetic", "--epochs=1", "--emsize=16", "--nhid=16", "--nlayers=1", "--bptt=8", "--batch_size=4",
                 "--save={tmp}/model.pt", "--log-interval=1"]},
    "makemore-names": {
        "repo": "makemore", "cwd": ".", "script": "makemore.py", "pythonpath": [], "setup": None, "steps": 5,
        "standin": {"replace": {"--device=cpu": "--device=cuda"}},
        # the tree's own names.txt; a 2-layer, 16-wide transformer; no loader workers (its sampler
        # draws from the seeded generator); needs tensorboard (SummaryWriter in the work dir)
        "args": ["--input-file=names.txt", "--work-dir={tmp}/out", "--num-workers=0", "--max-steps=10",
                 "--device=cpu", "--n-layer=2", "--n-head=2", "--n-embd=16", "--n-embd2=16",
                 "--batch-size=8", "--seed=3407"]},
    "examples-mnist": {
        "repo": "examples", "cwd": "mnist", "script": "mnist/main.py", "pythonpath": ["_synthetic_site"],
        "setup": _mnist_shim, "steps": 4, "standin": {},  # uses the accelerator unless --no-accel
        # The script gives its loaders these only on an accelerator; every side gets them, so the
        # CPU runs see the batches (and draw the random numbers) the accelerator run does.
        "loader": {"shuffle": True, "num_workers": 1, "pin_memory": True, "persistent_workers": True},
        "args": ["--epochs=1", "--batch-size=32", "--test-batch-size=64", "--log-interval=1"]},
}


def run_recipe(name: str, recipe: dict, repos: Path, work: Path, python: str, timeout: float,
               standin: Optional[Path] = None) -> dict:
    orig_tree = repos / recipe["repo"]
    port_tree = work / recipe["repo"] / "agnostic" / "out"
    row: dict = {"recipe": name, "repo": recipe["repo"], "script": recipe["script"], "steps": recipe["steps"]}
    if not orig_tree.is_dir():
        return {**row, "status": "skipped: repository missing"}
    if not port_tree.is_dir():
        return {**row, "status": "skipped: no agnostic output (run without --only or after the migrate step)"}
    if not Path(python).exists():
        return {**row, "status": f"skipped: {python} not found (python -m venv /tmp/rwvenv; pip install torch==2.13.0 numpy)"}
    base = work / "loss" / name
    shutil.rmtree(base, ignore_errors=True)
    results = {}
    sides = [("original", orig_tree), ("agnostic", port_tree)]
    if standin is not None:
        sides.append(("transfer-npu", work / recipe["repo"] / "transfer" / "out"))
    for side, tree in sides:
        if not tree.is_dir():
            results[side] = {"losses": [], "status": "no transfer output", "rc": None, "seconds": 0}
            continue
        copy = base / side / "tree"
        shutil.copytree(tree, copy, symlinks=True, ignore=shutil.ignore_patterns(*SKIP_DIRS))
        for dirpath, dirnames, filenames in os.walk(copy):  # read-only sources give read-only copies
            for name in [*dirnames, *filenames]:
                p = os.path.join(dirpath, name)
                if not os.path.islink(p):
                    os.chmod(p, os.stat(p).st_mode | 0o200)
        os.chmod(copy, os.stat(copy).st_mode | 0o200)
        if recipe["setup"]:
            recipe["setup"](copy)
        tmp = base / side / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        wrapper = base / "wrapper.py"
        wrapper.write_text(WRAPPER)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA", "ASCEND", "PYTHON"))}
        env.update({"PYTHONPATH": os.pathsep.join(str(copy / p) for p in recipe["pythonpath"]),
                    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "",
                    "PYTHONHASHSEED": "0", "WANDB_MODE": "disabled"})
        env.pop("REALWORLD_LOADER_ARGS", None)
        if recipe.get("loader"):
            env["REALWORLD_LOADER_ARGS"] = json.dumps(recipe["loader"], sort_keys=True)
        out_json = base / side / "losses.json"
        args = [a.replace("{tmp}", str(tmp)) for a in recipe["args"]]
        if side == "transfer-npu":
            env.update(standin_env(standin))
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [env["PYTHONPATH"], *[str(copy / p) for p in recipe["pythonpath"]]]))
            args = standin_args(recipe, args)
        res = run([python, str(wrapper), str(out_json), str(recipe["steps"]), str(copy / recipe["script"]), *args],
                  cwd=copy / recipe["cwd"], env=env, timeout=timeout)
        got = load_json(out_json) or {}
        results[side] = {"losses": got.get("losses", []), "status": got.get("status", "no result"),
                         "rc": res["rc"], "seconds": res["seconds"]}
        if res["rc"] != 0:
            results[side]["error"] = tail(res["stderr"], 4)
    o, a = results["original"], results["agnostic"]
    row.update({"original": o, "agnostic": a})
    if standin is not None:
        n = results["transfer-npu"]
        row["transfer-npu"] = n
        row["standin_status"] = compare_losses(o, n)
    row["status"] = compare_losses(o, a)
    return row


def compare_losses(o: dict, a: dict) -> str:
    """'identical' when every recorded loss is bit-identical, else where and how they differ."""
    if not o["losses"]:
        return "original produced no loss"
    if o["losses"] == a["losses"] and o["status"] == a["status"]:
        return "identical"
    if not a["losses"]:
        return "port produced no loss"
    first = next((i for i, (x, y) in enumerate(zip(o["losses"], a["losses"])) if x != y),
                 min(len(o["losses"]), len(a["losses"])))
    status = f"differs from step {first}"
    ratios = {_pow2_ratio(x, y) for x, y in zip(o["losses"], a["losses"])}
    if len(ratios) == 1 and None not in ratios and len(o["losses"]) == len(a["losses"]):
        status += f" (every port loss is the original's x 2^{ratios.pop()}: a loss scaler is on)"
    return status


# ---------------------------------------------------------------------------- emulated npu
SRC_DIR = Path(__file__).resolve().parents[1] / "src"


def standin_env(build_dir: Path) -> dict:
    """What a loss run needs to see the emulated npu as torch_npu: its site folder and this
    package (transfer_to_npu reads our coverage data) on PYTHONPATH, the build, one npu, and
    autocast regions left at full precision so that losses can match the original on CPU."""
    from ascend_migrate.emulated_npu import AUTOCAST_ENV, BUILD_DIR_ENV, SITE, emulated_env

    env = emulated_env({BUILD_DIR_ENV: str(build_dir), "PATH": os.environ.get("PATH", "")}, device_count=1)
    # the loss interpreter may not have this checkout installed: name the package folder too
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([str(SITE), str(SRC_DIR), *env["PYTHONPATH"].split(os.pathsep)]))
    env[AUTOCAST_ENV] = "0"
    return env


def standin_args(recipe: dict, args: list) -> list:
    """The recipe's arguments with its CPU switch turned to the accelerator path."""
    spec = recipe.get("standin") or {}
    args = [spec.get("replace", {}).get(a, a) for a in args]
    return args + list(spec.get("add", []))


def build_standin(python: str, build_dir: Path, timeout: float) -> Optional[str]:
    """Build (or find cached) the emulated npu with the loss interpreter; None or the error text."""
    from ascend_migrate.emulated_npu import BUILD_DIR_ENV

    code = "import sys; sys.path.insert(0, sys.argv[1]); from ascend_migrate.emulated_npu import ensure_built; ensure_built()"
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", "")])
    env[BUILD_DIR_ENV] = str(build_dir)
    res = run([python, "-c", code, str(SRC_DIR)], env=env, timeout=timeout)
    return None if res["rc"] == 0 else tail(res["stderr"], 8)


def _pow2_ratio(x: str, y: str) -> Optional[int]:
    """k when float y == float x * 2**k exactly (k != 0), else None."""
    import math

    a, b = float.fromhex(x), float.fromhex(y)
    if a == 0 or b == 0 or math.isnan(a) or math.isnan(b):
        return None
    ma, ea = math.frexp(a)
    mb, eb = math.frexp(b)
    return (eb - ea) if ma == mb and eb != ea else None


# =========================================================================== report
def summary_row(r: dict) -> dict:
    s, t, a = r["scan"], r["transfer"], r["agnostic"]

    def n(step, key):
        v = step.get(key)
        return len(v) if isinstance(v, list) else (v if v is not None else "-")

    def idem(step):
        i = step.get("idempotency") or {}
        return "crash" if i.get("crashed") else len(i.get("changed_files", []))

    ent = t.get("entries") or {}
    return {
        "repo": r["name"], "files": r["files"], "py": r["python_files"],
        "findings": s.get("findings", "crash"),
        "sev": "/".join(str(s.get("by_severity", {}).get(k, 0)) for k in ("error", "warning", "info")),
        "scan_s": s.get("seconds"),
        "t_changed": n(t, "changed_files"), "t_edits": n(t, "edits"), "t_manual": n(t, "manual"),
        "t_refused": n(t, "refused"), "t_s": t.get("seconds"),
        "a_changed": n(a, "changed_files"), "a_edits": n(a, "edits"), "a_manual": n(a, "manual"),
        "a_refused": n(a, "refused"), "a_s": a.get("seconds"),
        "crashes": sum(1 for step in (s, t, a) if step.get("crashed"))
        + sum(1 for step in (t, a) if (step.get("idempotency") or {}).get("crashed")),
        "parse": f"{n(t, 'parse_failures')}+{n(a, 'parse_failures')} of {n(t, 'parse_checked')}+{n(a, 'parse_checked')}",
        "names": f"{n(t, 'name_binding')}/{n(a, 'name_binding')}",
        "idem": f"{idem(t)}/{idem(a)}",
        "inject": (f"{len(ent.get('injected', []))} ({len(ent.get('injected_guarded', []))} guarded, "
                   f"{len(ent.get('injected_imported', []))} imported)"),
        "missed": len(ent.get("missed_entries", [])),
        "dropped": f"{n(t, 'dropped_files')}+{n(t, 'dropped_symlinks')}/{n(a, 'dropped_files')}+{n(a, 'dropped_symlinks')}",
    }


TABLE_HEAD = ("| repository | files (py) | findings (E/W/I) | scan s | transfer: changed / edits / manual / refused | s "
              "| agnostic: changed / edits / manual / refused | s | crashes | parse failures (t+a of checked) "
              "| name errors t/a | 2nd pass changes t/a | injected (guarded, unguarded into imported) | entries missed | dropped files+symlinks t/a |")


def markdown_table(rows: list[dict]) -> str:
    lines = [TABLE_HEAD, "|" + "---|" * TABLE_HEAD.count(" | ") + "---|"]
    for r in rows:
        x = summary_row(r)
        lines.append(f"| {x['repo']} | {x['files']} ({x['py']}) | {x['findings']} ({x['sev']}) | {x['scan_s']} "
                     f"| {x['t_changed']} / {x['t_edits']} / {x['t_manual']} / {x['t_refused']} | {x['t_s']} "
                     f"| {x['a_changed']} / {x['a_edits']} / {x['a_manual']} / {x['a_refused']} | {x['a_s']} "
                     f"| {x['crashes']} | {x['parse']} | {x['names']} | {x['idem']} | {x['inject']} | {x['missed']} "
                     f"| {x['dropped']} |")
    return "\n".join(lines)


def loss_table(rows: list[dict]) -> str:
    standin = any("transfer-npu" in r for r in rows)
    head = "| recipe | script | steps | original | agnostic port | result |"
    if standin:
        head += " transfer port on the npu stand-in | result |"
    lines = [head, "|---|---|---:|---|---|---|" + ("---|---|" if standin else "")]
    for r in rows:
        o, a = r.get("original", {}), r.get("agnostic", {})

        def side(s):
            if not s:
                return "-"
            first = float.fromhex(s["losses"][0]) if s.get("losses") else None
            return f"{len(s.get('losses', []))} losses, first {first!r}, {s.get('status')}"
        line = f"| {r['recipe']} | {r['repo']}/{r['script']} | {r['steps']} | {side(o)} | {side(a)} | {r['status']} |"
        if standin:
            line += f" {side(r.get('transfer-npu', {}))} | {r.get('standin_status', '-')} |"
        lines.append(line)
    return "\n".join(lines)


def defects(rows: list[dict]) -> list[tuple[str, str, str]]:
    """Every defect the checks found, as (kind, repository, text with file:line), sorted."""
    out = []
    for r in rows:
        name = r["name"]
        for style in ("transfer", "agnostic"):
            step = r[style]
            if step.get("crashed"):
                out.append(("crash", name, f"{style}: migrate crashed: {tail(step.get('error', ''), 1)}"))
            for e in step.get("refused", []):
                out.append(("refused", name, f"{style}: {e['file']}: {e['reason']}"))
            for e in step.get("parse_failures", []):
                out.append(("does not compile", name, f"{style}: {e['file']}: {e['error']}"))
            for e in step.get("name_binding", []):
                out.append(("name error", name, f"{style}: {e['file']}:{e['line']} `{e['name']}` {e['where']}: `{e['text']}`"))
            i = step.get("idempotency") or {}
            if i.get("crashed"):
                out.append(("crash", name, f"{style}: second migrate crashed: {tail(i.get('error', ''), 1)}"))
            for f in i.get("changed_files", []):
                out.append(("not idempotent", name, f"{style}: a second migrate changes {f}"))
            for f in step.get("dropped_files", []):
                out.append(("dropped", name, f"{style}: missing from the output: {f}"))
            for f in step.get("dropped_symlinks", []):
                out.append(("dropped", name, f"{style}: symlink missing from the output: {f}"))
        ent = r["transfer"].get("entries") or {}
        for e in ent.get("injected_imported", []):
            also = f"; also run by users: {', '.join(e['also_run_by_users'])}" if e.get("also_run_by_users") else ""
            out.append(("injected into an imported module", name,
                        f"{e['file']} (imported by {', '.join(e['imported_by'])}{' ...' if e['importers'] > 3 else ''}{also})"))
        for e in ent.get("missed_entries", []):
            out.append(("entry point not injected", name, f"{e['file']} ({'; '.join(e['reasons'])})"))
        for e in ent.get("injected_other", []):
            if "does not use torch" in e["why"] or "no evidence that a user runs it" in e["why"] or \
                    "build or test-support file" in e["why"]:
                out.append(("injected where not needed", name, f"{e['file']} ({'; '.join(e['why'])})"))
    return sorted(out)


def details(rows: list[dict], cap: int = 12) -> str:
    """The defect list for the markdown: grouped by kind and repository, at most `cap` lines each."""
    groups: dict[tuple[str, str], list[str]] = {}
    for kind, repo, text in defects(rows):
        groups.setdefault((kind, repo), []).append(text)
    out = []
    for (kind, repo), items in sorted(groups.items()):
        out.append(f"- **{kind}**, {repo} ({len(items)}):")
        out.extend(f"  - {t}" for t in items[:cap])
        if len(items) > cap:
            out.append(f"  - ... {len(items) - cap} more in the JSON")
    return "\n".join(out)


def update_markdown(path: Path, payload: dict) -> None:
    """Replace the generated part of PATH (between the markers) with the tables of this run."""
    begin, end = "<!-- realworld:begin -->", "<!-- realworld:end -->"
    body = [begin, "", markdown_table(payload["repositories"]), ""]
    if payload.get("loss"):
        body += ["Loss comparison (CPU, losses passed to `backward()`, compared as exact float hex):", "",
                 loss_table(payload["loss"]), ""]
    body += ["Every defect found by the checks:", "", details(payload["repositories"]) or "- none", "", end]
    text = path.read_text(encoding="utf-8") if path.exists() else f"# Real repositories\n\n{begin}\n{end}\n"
    if begin not in text or end not in text:
        text = text.rstrip("\n") + f"\n\n{begin}\n{end}\n"
    head, rest = text.split(begin, 1)
    _, after = rest.split(end, 1)
    path.write_text(head + "\n".join(body) + after, encoding="utf-8")


# =========================================================================== main
def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos", type=Path, required=True, help="folder of repositories (one per subfolder)")
    ap.add_argument("--out", type=Path, help="write the JSON results here")
    ap.add_argument("--md", type=Path, help="update the generated tables in this markdown file")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "realworld-bench",
                    help="scratch folder for outputs (default: %(default)s)")
    ap.add_argument("--only", action="append", default=[], help="only this repository (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, help="scan worker processes (default 1, for stable timings)")
    ap.add_argument("--loss", action="store_true", help="also run the loss recipes")
    ap.add_argument("--loss-only", action="store_true", help="run only the loss recipes (reuses --work outputs)")
    ap.add_argument("--loss-python", default="/tmp/rwvenv/bin/python", help="interpreter with torch and numpy")
    ap.add_argument("--loss-timeout", type=float, default=600)
    ap.add_argument("--standin", action="store_true",
                    help="with --loss: also run each recipe's transfer port on the emulated npu "
                         "(built with --loss-python, which needs torch 2.13.0, a C++ compiler and ninja)")
    ap.add_argument("--standin-build", type=Path, default=Path(__file__).resolve().parents[1] / ".test-cache" / "emulated-npu" / "bench",
                    help="build directory of the emulated npu (default: %(default)s)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    repos = args.repos.resolve()
    if not repos.is_dir():
        ap.error(f"--repos {repos}: not a directory")
    shas = commits(repos)
    names = sorted(p.name for p in repos.iterdir() if p.is_dir() and not p.name.startswith("."))
    if args.only:
        missing = sorted(set(args.only) - set(names))
        if missing:
            ap.error(f"--only: no such repository: {', '.join(missing)}")
        names = [n for n in names if n in args.only]
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    results = []
    if not args.loss_only:
        for name in names:
            log(f"[{name}] scan + migrate ...")
            row = measure(repos / name, work / name, args.jobs, shas.get(name, ""))
            x = summary_row(row)
            log(f"[{name}] findings {x['findings']}, transfer {x['t_edits']} edits, agnostic {x['a_edits']} edits, "
                f"crashes {x['crashes']}, parse {x['parse']}, names {x['names']}, 2nd pass {x['idem']}")
            results.append(row)
    loss = []
    standin: Optional[Path] = None
    if args.standin and (args.loss or args.loss_only):
        standin = args.standin_build.resolve()
        error = build_standin(args.loss_python, standin, args.loss_timeout)
        if error:
            log(f"[standin] not built, transfer ports not run:\n{error}")
            standin = None
    if args.loss or args.loss_only:
        for rname, recipe in sorted(RECIPES.items()):
            if recipe["repo"] in names:
                log(f"[loss] {rname} ...")
                r = run_recipe(rname, recipe, repos, work, args.loss_python, args.loss_timeout, standin)
                log(f"[loss] {rname}: {r['status']}" + (f"; on the npu stand-in: {r['standin_status']}"
                                                       if "standin_status" in r else ""))
                loss.append(r)
    import platform

    payload = {
        "schema": SCHEMA,
        "tool": _tool_version(),
        "python": platform.python_version(),
        "repositories": results,
        "loss": loss,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if args.md:
        update_markdown(args.md, payload)
    if not args.quiet:
        if results:
            print(markdown_table(results))
        if loss:
            print(loss_table(loss))
    return 0


def _tool_version() -> str:
    try:
        from ascend_migrate import __version__
    except ImportError:
        res = run(tool("--version"), timeout=120)
        return res["stdout"].strip() or tail(res["stderr"], 1)
    return f"ascend-migrate {__version__}"


if __name__ == "__main__":
    sys.exit(main())
