"""Entry points: the files a user runs, decided from evidence, each with its reason.

Transfer-style migration puts `import torch_npu` and `transfer_to_npu` into the entry points
and nowhere else, so the decision matters both ways: a training script without the imports
runs on CUDA assumptions, and a library module with them makes every `import` of the package
require torch_npu.

Evidence that a file is run (per file, from its syntax tree or text; nothing is executed):
- an `if __name__ == "__main__":` block, or the file is a package's `__main__.py`;
- executable code at module level: command-line parsing (`parse_args()`, `sys.argv`),
  a training loop, `exec(open(...).read())` configurators, a bare call of its own `main()`,
  `fire.Fire(...)`;
- it is named by a launch line (`python x.py`, `python -m pkg.mod`, `torchrun`, `deepspeed`,
  `accelerate launch`, `uv run`) in a shell script, a Makefile, a Markdown code block or a
  notebook's `!python` line, or by a console script in pyproject.toml / setup.py / setup.cfg;
- it is a notebook.

Evidence against:
- other files of the tree import it (or run it with `exec(open(...))`): it is a library, even
  with a demo main block, unless a launch line or console script names it explicitly;
- it never reaches torch, neither directly nor through the tree modules it imports;
- it is `setup.py` or a build / install / packaging script (their launch lines do not count).

The user overrules any decision with `--entry FILE` / `--no-entry FILE`.
"""
from __future__ import annotations

import os
import posixpath
import re
import sys
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from ascend_migrate.scan.entry_facts import _NOT_LIBRARY_DIRS, EntryFacts, ImportRef, is_build_script, is_setup_script
# What each file tells on its own lives a floor below; the scan and the migrator reach it here too.
from ascend_migrate.scan.entry_facts import (TORCH_PACKAGES, is_main_guard, launches, module_facts,  # noqa: F401
                                             notebook_facts)

# --------------------------------------------------------------------------- the decision
@dataclass
class Decision:
    path: str
    line: int
    kind: str
    reason: str
    selected: bool
    has_transfer_import: bool = False
    imports_torch_npu: bool = False
    # selected, but other files of the tree import it too (or it is a module of an installable
    # package): the transfer imports go under a `__name__` test
    guarded: bool = False
    # a console script's module that a library module imports: the imports go into this function
    # (the one the command calls), so importing the library loads no torch_npu (guarded is True)
    inject_function: str = ""


@dataclass
class FileView:
    """What the decision needs from one scanned file."""

    facts: Optional[EntryFacts] = None
    launches: Sequence[tuple] = ()
    console_scripts: Sequence[str] = ()  # `module:function` of each console script it declares


class _Tree:
    """The Python files of the scanned tree, and the directories that hold them."""

    def __init__(self, python: set[str]) -> None:
        self.python = python
        self.dirs: set[str] = set()
        for p in python:
            d = _dirname(p)
            while d and d not in self.dirs:
                self.dirs.add(d)
                d = _dirname(d)
        # Every name an absolute import could start with and find in the tree (fast rejection of
        # the standard library and third-party imports, most imports of a tree).
        self.names: dict[str, set[str]] = {}  # name -> folders holding a package or module of that name
        for d in self.dirs:
            self.names.setdefault(d.rsplit("/", 1)[-1], set()).add(_dirname(d))
        for p in python:
            self.names.setdefault(p.rsplit("/", 1)[-1].rsplit(".", 1)[0], set()).add(_dirname(p))
        self._cache: dict[tuple, frozenset[str]] = {}

    def module(self, root: str, dotted: str) -> Optional[list[str]]:
        """Files that `import dotted` loads from search root `root` (the package __init__ files on the
        way, then the module), or None when it does not resolve there."""
        files: list[str] = []
        base = root
        parts = dotted.split(".")
        for i, part in enumerate(parts):
            base = f"{base}/{part}" if base else part
            last = i == len(parts) - 1
            if last and base + ".py" in self.python:
                return files + [base + ".py"]
            init = base + "/__init__.py"
            if init in self.python:
                files.append(init)
            elif base not in self.dirs:  # neither a package nor a namespace package
                return None
        return files

    def resolve(self, importer: str, ref: ImportRef) -> set[str]:
        if not ref.level and ref.module.split(".", 1)[0] not in self.names:
            return set()
        key = (_dirname(importer), ref.level, ref.module, ref.names)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = frozenset(self._resolve(importer, ref))
        return set(found) - {importer}

    def _resolve(self, importer: str, ref: ImportRef) -> set[str]:
        if ref.level:
            base = _dirname(importer)
            for _ in range(ref.level - 1):
                base = _dirname(base)
            roots = [base]
        else:
            where = self.names.get(ref.module.split(".", 1)[0], set())
            roots = [r for r in _search_roots(importer) if r in where]
        for root in roots:
            if ref.module:
                files = self.module(root, ref.module)
                if files is None:
                    continue
            else:
                init = _join(root, "__init__.py")
                files = [init] if init in self.python else []
            package = _join(root, *ref.module.split(".")) if ref.module else root
            for name in ref.names:  # `from pkg import mod` loads pkg/mod.py
                sub = self.module(package, name)
                if sub:
                    files.append(sub[-1])
            return set(files)
        return set()


@dataclass
class _Graph:
    tree: _Tree
    imports: dict[str, set[str]] = field(default_factory=dict)
    imported_by: dict[str, set[str]] = field(default_factory=dict)
    executed_by: dict[str, set[str]] = field(default_factory=dict)


def _dirname(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _join(*parts: str) -> str:
    joined = "/".join(p for p in parts if p)
    return posixpath.normpath(joined) if joined else ""


def _search_roots(importer: str) -> list[str]:
    """Where an absolute import may resolve: the importer's folder (a script's sys.path[0]), each
    folder above it up to the root, then src/."""
    roots = []
    d = _dirname(importer)
    while True:
        roots.append(d)
        if not d:
            break
        d = _dirname(d)
    roots.append("src")
    return roots


def _graph(files: Mapping[str, FileView]) -> _Graph:
    tree = _Tree({p for p in files if p.endswith((".py", ".pyi"))})
    g = _Graph(tree)
    for rel, view in files.items():
        if view.facts is None:
            continue
        targets: set[str] = set()
        for ref in view.facts.imports:
            targets |= tree.resolve(rel, ref)
        g.imports[rel] = targets
        for t in targets:
            g.imported_by.setdefault(t, set()).add(rel)
        for _, path in view.facts.execs:
            for candidate in (_join(_dirname(rel), path), _join(path)):
                if candidate in tree.python and candidate != rel:
                    g.executed_by.setdefault(candidate, set()).add(rel)
                    break
    return g


def _reaches_torch(files: Mapping[str, FileView], g: _Graph) -> set[str]:
    reached = {rel for rel, v in files.items() if v.facts is not None and v.facts.torch}
    stack = list(reached)
    while stack:
        rel = stack.pop()
        for importer in g.imported_by.get(rel, ()):
            if importer not in reached:
                reached.add(importer)
                stack.append(importer)
    return reached


def _resolve_launch(script: str, target: str, cwd: str, tree: _Tree, by_suffix: dict[str, list[str]]) -> str:
    python = tree.python
    base = _dirname(script)
    if target.endswith(".py"):
        clean = target.strip("'\"")
        loose = "$" in clean
        if loose:
            clean = re.sub(r"^.*[}$)]/", "", clean).lstrip("/")
            if "$" in clean:
                clean = clean.rsplit("/", 1)[-1]
        if not loose and not clean.startswith("/"):
            candidates = [_join(base, cwd, clean)] if cwd != "?" else []
            candidates += [_join(base, clean), _join(clean)]
            for c in candidates:
                if c in python:
                    return c
        tail = clean.lstrip("./")
        hits = by_suffix.get(tail.rsplit("/", 1)[-1], [])
        matches = [h for h in hits if h == tail or h.endswith("/" + tail)]
        near = [h for h in matches if h.startswith(_join(base, cwd if cwd != "?" else "") + "/" if base else "")]
        if len(matches) == 1:
            return matches[0]
        if len(near) == 1:
            return near[0]
        return ""
    for root in ([_join(base, cwd)] if cwd != "?" else []) + [base, "", "src"]:
        main = _join(root, *target.split("."), "__main__.py")
        if main in python:
            return main
        files = tree.module(root, target)
        if files and files[-1].endswith(target.rsplit(".", 1)[-1] + ".py"):
            return files[-1]
    return ""


def _installed_package(rel: str, files: Mapping[str, object]) -> str:
    """The top-level package `rel` belongs to when the project installs it (setup.py or pyproject.toml
    at the root, `pkg/__init__.py` at the root or under src/), else ''."""
    if "setup.py" not in files and "pyproject.toml" not in files:
        return ""
    parts = rel.split("/")
    if parts[0] == "src":
        parts = parts[1:]
        prefix = "src/"
    else:
        prefix = ""
    if len(parts) < 2 or parts[0].lower() in _NOT_LIBRARY_DIRS or f"{prefix}{parts[0]}/__init__.py" not in files \
            or _join(_dirname(rel), "__init__.py") not in files or rel.endswith("__main__.py"):
        return ""
    return parts[0]


def _stdlib_names() -> frozenset:
    """Top-level names of the standard library. Python 3.10+ lists them; on older Pythons they
    are read off the interpreter's own library folder (and its compiled modules)."""
    global _STDLIB
    if _STDLIB is None:
        names = set(getattr(sys, "stdlib_module_names", ()))
        if not names:
            import sysconfig

            names.update(sys.builtin_module_names)
            stdlib = sysconfig.get_paths()["stdlib"]
            for folder in (stdlib, os.path.join(stdlib, "lib-dynload")):
                try:
                    entries = os.listdir(folder)
                except OSError:
                    continue
                for name in entries:
                    if name != "site-packages" and not name.startswith("."):
                        names.add(name.split(".", 1)[0])
        _STDLIB = frozenset(names)
    return _STDLIB


_STDLIB: Optional[frozenset] = None


def _may_reach_torch(facts: EntryFacts) -> bool:
    stdlib = _stdlib_names()
    return any(ref.level or ref.module.split(".", 1)[0] not in stdlib for ref in facts.imports)


def _names(paths: Iterable[str], limit: int = 3) -> str:
    items = sorted(paths)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def decide(files: Mapping[str, FileView], entry: Iterable[str] = (), no_entry: Iterable[str] = (),
           whole_tree: bool = True) -> list[Decision]:
    """Every candidate entry point with its decision and reason (selected first, then by path).

    whole_tree=False (one file scanned on its own): the modules it imports are not there to
    follow, so only a file whose imports are all standard library counts as never reaching torch."""
    g = _graph(files)
    python = g.tree.python
    torch = _reaches_torch(files, g)
    if not whole_tree:
        torch |= {rel for rel, v in files.items() if v.facts is not None and _may_reach_torch(v.facts)}
    by_suffix: dict[str, list[str]] = {}
    for p in python:
        by_suffix.setdefault(p.rsplit("/", 1)[-1], []).append(p)

    launched: dict[str, list[str]] = {}
    for rel, view in sorted(files.items()):
        launch_list = list(view.launches) + list(view.facts.launches if view.facts else ())
        if not launch_list or (is_build_script(rel) and not rel.endswith(".md")):
            continue
        for item in launch_list:
            line, target = item[0], item[1]
            cwd = item[2] if len(item) > 2 else ""
            resolved = _resolve_launch(rel, target, cwd, g.tree, by_suffix)
            if resolved and resolved != rel:
                launched.setdefault(resolved, []).append(f"{rel}:{line}" if line else rel)
    console: dict[str, list[str]] = {}
    console_functions: dict[str, set[str]] = {}
    for rel, view in sorted(files.items()):
        for spec in view.console_scripts:
            module, _, function = spec.partition(":")
            for root in ("", "src"):
                found = g.tree.module(root, module)
                if found and found[-1].endswith(".py"):
                    console.setdefault(found[-1], []).append(rel)
                    console_functions.setdefault(found[-1], set()).add(function)
                    break

    forced = {_norm(p) for p in entry}
    refused = {_norm(p) for p in no_entry}
    decisions: list[Decision] = []
    candidates = set(launched) | set(console) | forced | refused
    for rel, view in files.items():
        f = view.facts
        if f is not None and (f.main_guard or f.evidence or f.notebook):
            candidates.add(rel)
        if rel.endswith("/__main__.py") or rel == "__main__.py":
            candidates.add(rel)
    for rel in sorted(candidates):
        view = files.get(rel)
        f = view.facts if view else None
        evidence: list[tuple[str, int, str]] = []
        if f is not None and f.main_guard:
            evidence.append(("main-guard", f.main_guard, f"`if __name__ == \"__main__\"` block at line {f.main_guard}"))
        if rel.endswith("__main__.py"):
            evidence.append(("main-guard", 1, "a package __main__ (python -m)"))
        if f is not None:
            evidence.extend(f.evidence)
        if rel in console:
            evidence.append(("console-script", 1, f"console script in {_names(set(console[rel]))}"))
        if rel in launched:
            evidence.append(("launch-script", 1, f"launched by {_names(set(launched[rel]))}"))
        if f is not None and f.notebook:
            evidence.append(("notebook", 1, "a notebook"))
        transfer = bool(f and f.transfer)
        npu = bool(f and f.torch_npu)
        kind, line = (evidence[0][0], evidence[0][1]) if evidence else ("override", 1)
        because = "; ".join(e[2] if e[0] != "module-code" else f"{e[2]} (line {e[1]})" for e in evidence[:4])
        users = g.imported_by.get(rel, set())
        runners = g.executed_by.get(rel, set())
        # Imports under a `__name__` test can run only where the file itself is started: never in
        # a console script's module (the generated wrapper imports it, so its `__name__` is never
        # "__main__"), a package __init__ (always run under the package's name) or a notebook.
        guardable = rel not in console and not (f and f.notebook) and posixpath.basename(rel) != "__init__.py"

        def add(selected: bool, reason: str, guarded: bool = False) -> None:
            decisions.append(Decision(rel, line, kind, reason, selected, transfer, npu, guarded=guarded))

        if rel in refused:
            add(False, "excluded by --no-entry")
            continue
        if rel in forced:
            add(True, "chosen by --entry" + (f" ({because})" if because else ""),
                guarded=bool(users or runners) and guardable)
            continue
        if rel not in files:
            continue
        if is_setup_script(rel):
            add(False, "setup.py: a build script, never an entry point")
            continue
        if is_build_script(rel):
            add(False, f"a build, install or CI script, not an entry point ({because})")
            continue
        explicit = rel in launched or rel in console
        # A script whose main block reads the command line, imported only by tests or by the
        # validation entry module a port adds (`validate_entries.py`), is still the program users
        # launch: those importers must not turn it into a library that gets no imports.
        checked_only = bool(users or runners) and all(_is_test(u) or _is_validation_entry(u) for u in users | runners)
        if checked_only and any(e[0] == "main-cli" for e in evidence):
            explicit = True
        if not explicit and not (f is not None and f.notebook) and (users or runners):
            who = []
            if users:
                who.append(f"imported by {_names(users)}")
            if runners:
                who.append(f"run by exec(open(...)) in {_names(runners)}")
            add(False, f"a library: {' and '.join(who)}" + (f" (its own evidence: {because})" if because else ""))
            continue
        package = _installed_package(rel, files)
        if package and not explicit and all(e[0] == "main-guard" or "#!" in e[2] for e in evidence):
            # Demo blocks of package modules (a shape check on random input) are not how the package
            # is used: a port of every such module would be noise (one package had 26 of them).
            add(False, f"a module of the installable package `{package}` (users import it; "
                       f"its main block is a demo): {because}")
            continue
        if rel not in torch:
            add(False, f"never reaches torch (no torch import, directly or through tree modules): {because}")
            continue
        also = []
        if users:
            also.append(f"also imported by {_names(users)}")
        if runners:
            also.append(f"also run by exec() in {_names(runners)}")
        # Imported by other files, or a module of an installable package (its users import it):
        # a candidate for imports that run only when it is started as a program (settled below).
        add(True, because + (f" ({'; '.join(also)})" if also else ""),
            guarded=bool(users or runners or package) and guardable)
    _settle_guards(decisions, g)
    _defer_console_modules(decisions, g, console_functions)
    decisions.sort(key=lambda d: (not d.selected, d.path))
    return decisions


def _defer_console_modules(decisions: list[Decision], g: _Graph, functions: Mapping[str, set[str]]) -> None:
    """A console script's module gets its imports unconditionally (the command's generated wrapper
    imports it, so its `__name__` is never "__main__"), unless a library module of the tree
    imports it too (`whisper/__init__.py` importing the module behind the `whisper` command): then
    every `import pkg` would load torch_npu. There the imports go into the function the console
    script calls, the first thing the command runs. Only for a plain function name that every
    console script naming the module agrees on; otherwise the imports stay unconditional."""
    entries = {d.path for d in decisions if d.selected}
    for d in decisions:
        names = functions.get(d.path)
        if not d.selected or not names or len(names) != 1:
            continue
        function = next(iter(names))
        if not function.isidentifier():
            continue
        importers = g.imported_by.get(d.path, set()) | g.executed_by.get(d.path, set())
        libraries = {i for i in importers
                     if (i not in entries or posixpath.basename(i) == "__init__.py") and not _runs_as_program(i, g)}
        if libraries:
            d.guarded = True
            d.inject_function = function
            d.reason += (f"; imports go into {function}() (what the command calls): library module(s) "
                         f"{_names(libraries)} import it")


def _settle_guards(decisions: list[Decision], g: _Graph) -> None:
    """Decide on the whole import graph whether an entry point's imports go under its `__name__`
    test. Importing a library never loads torch_npu (only --inject-init puts the imports into
    package __init__ files): an entry point that a library module imports keeps the guard, and the
    programs that use the library load transfer_to_npu themselves. Otherwise the guard stays only
    where it provably loses nothing: every file that imports (or exec's) it is an entry point
    that gets the imports. A test or a validation entry among its importers would run the port's
    CUDA calls without them, and so would the spawned workers of a `python -m pkg` program
    (multiprocessing does not re-run a package __main__ in them): those make the imports
    unconditional, and the reason says why."""
    entries = {d.path for d in decisions if d.selected}
    for d in decisions:
        if not (d.selected and d.guarded):
            continue
        importers = g.imported_by.get(d.path, set()) | g.executed_by.get(d.path, set())
        outside = {i for i in importers if i not in entries or posixpath.basename(i) == "__main__.py"}
        libraries = {i for i in outside if i not in entries and not _runs_as_program(i, g)}
        losing = outside - libraries
        if libraries:
            d.reason += f"; imports stay under the `__name__` test: library module(s) {_names(libraries)} import it"
            if losing:
                d.reason += (f" (so {_names(losing)} load(s) transfer_to_npu only through an entry point or "
                             f"--inject-init)")
        elif losing:
            d.guarded = False
            d.reason += f"; imports unconditional: {_names(losing)} import it and get none of their own"


def _runs_as_program(rel: str, g: _Graph) -> bool:
    """Is this importer of an entry point something users run rather than a library module: a
    test, a package __main__, or a file that no other file (tests aside) imports and that is not a
    package __init__ (a validation entry, an ad-hoc script)? A package __init__, or a file other
    files import, is a library: importing it must load no torch_npu."""
    if _is_test(rel) or posixpath.basename(rel) == "__main__.py":
        return True
    if posixpath.basename(rel) == "__init__.py":
        return False
    users = g.imported_by.get(rel, set()) | g.executed_by.get(rel, set())
    return all(_is_test(u) for u in users)


VALIDATION_ENTRY_NAMES = ("validate_entries.py", "validation_entries.py", "validate_entry.py",
                          "validation_entry.py")


def _is_validation_entry(rel: str) -> bool:
    """The module a port adds for `ascend-migrate validate` (the entry contract's name for it)."""
    return posixpath.basename(rel) in VALIDATION_ENTRY_NAMES


def _is_test(rel: str) -> bool:
    parts = rel.split("/")
    base = parts[-1]
    return base == "conftest.py" or base.startswith("test_") or base.endswith("_test.py") \
        or any(p in ("tests", "test", "testing") for p in parts[:-1])


def _norm(path: str) -> str:
    return posixpath.normpath(str(path).replace(os.sep, "/"))
