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

import ast
import os
import posixpath
import re
import shlex
import sys
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from ascend_migrate.scan import config_kinds

# Packages whose import brings torch in (a script that imports only these still runs torch code).
TORCH_PACKAGES = frozenset({
    "torch", "torchvision", "torchaudio", "torchtext", "torchdata", "torchmetrics", "torch_geometric",
    "transformers", "accelerate", "diffusers", "peft", "trl", "timm", "lightning", "pytorch_lightning",
    "deepspeed", "apex", "fairseq", "detectron2", "mmcv", "mmengine", "mmdet", "mmseg", "ultralytics",
    "sentence_transformers", "x_transformers", "megatron", "xformers", "flash_attn", "vllm", "torch_npu",
    "open_clip", "clip", "segment_anything", "bitsandbytes", "einops_exts", "denoising_diffusion_pytorch",
})
# Frameworks besides torch whose scripts are entry points of a port (they get the TF Adapter
# initialisation instead of the transfer_to_npu imports).
OTHER_FRAMEWORK_PACKAGES = frozenset({"tensorflow"})
LAUNCHER_MODULES = frozenset({"torch.distributed.launch", "torch.distributed.run", "deepspeed", "accelerate",
                              "accelerate.commands.launch", "torchrun"})
TOOL_MODULES = frozenset({"pip", "pytest", "venv", "build", "unittest", "twine", "coverage", "http", "json"})
_BUILD_NAME = re.compile(
    r"^(?:setup|install|installer|bootstrap|configure)(?:[_.-].*)?$|[_.-](?:setup|install|installer)$"
    r"|^build(?:[_.-](?:ext|extensions?|wheels?|docker|image|package|pkg|kernels?|ops|cuda|cpp|all|deps|env|"
    r"conda|pip|release))?$|^(?:package|packaging|release|wheel|make_wheel|bdist)$", re.IGNORECASE)
_LAUNCH_WORD = re.compile(
    r"(?<![\w.-])(?:python[0-9.]*|pythonw|\$[({]?PYTHON[)}]?|torchrun|deepspeed|accelerate\s+launch|uv\s+run|"
    r"colossalai\s+run|lightning\s+run\s+model|mpirun|srun)(?![\w.-])")
# Top-level folders that hold scripts, tests or examples next to a package, not the package itself.
_NOT_LIBRARY_DIRS = frozenset({"tests", "test", "testing", "tools", "examples", "example", "scripts", "docs", "doc",
                               "benchmarks", "benchmark", "bench", "experiments", "demo", "demos", "projects",
                               "recipes", "configs", "notebooks", "apps", "applications", "tutorials"})
_PY_NOTEBOOK_LANGS = frozenset({"python", "py", "python3", "pycon", "ipython", "ipython3", "jupyter", "pytb"})
TRAINING_CALLS = frozenset({"backward", "zero_grad"})
_SHEBANG = re.compile(r"^#!(?:(?!\bpython).)*\bpython")  # matched at the line start only


# --------------------------------------------------------------------------- per-file facts
@dataclass(frozen=True)
class ImportRef:
    level: int  # 0 absolute, 1 for `from .`, ...
    module: str  # dotted module ('' for `from . import x`)
    names: tuple[str, ...] = ()  # names of a from-import (may be submodules)
    line: int = 0


@dataclass(frozen=True)
class EntryFacts:
    """What a Python file or notebook tells about being run: kept in the per-file scan result."""

    imports: tuple[ImportRef, ...] = ()
    torch: bool = False  # imports torch or a package built on it
    main_guard: int = 0
    evidence: tuple[tuple[str, int, str], ...] = ()  # (kind, line, what) executable module-level code
    execs: tuple[tuple[int, str], ...] = ()  # (line, path) of exec(open(path).read())
    launches: tuple[tuple[int, str, str], ...] = ()  # notebooks' !python lines: (line, target, cwd)
    notebook: bool = False
    transfer: bool = False  # imports torch_npu.contrib.transfer_to_npu
    torch_npu: bool = False  # imports torch_npu


def _imports(nodes: Iterable[ast.AST]) -> list[ImportRef]:
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out.extend(ImportRef(0, a.name, (), node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(a.name for a in node.names if a.name != "*")
            out.append(ImportRef(node.level or 0, node.module or "", names, node.lineno))
    return out


def _statements(body: Sequence[ast.stmt], into_defs: bool = True) -> Iterable[ast.stmt]:
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if not into_defs and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            child = getattr(node, name, None)
            if isinstance(child, list):
                stack.extend(reversed(child))


def is_main_guard(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    test = stmt.test
    names = [test.left, *test.comparators]
    return (len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and any(isinstance(n, ast.Name) and n.id == "__name__" for n in names)
            and any(isinstance(n, ast.Constant) and n.value == "__main__" for n in names))


def _module_level(body: Sequence[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements that run on import: module body, descending into if/with/try/loops but not into
    function or class bodies, nor into the main block (that is evidence of its own)."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or is_main_guard(node):
            continue
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            child = getattr(node, name, None)
            if isinstance(child, list):
                stack.extend(reversed(child))


def _expressions(stmt: ast.stmt) -> Iterable[ast.AST]:
    """Nodes of one statement's own expressions (not of nested statements, defs or lambdas)."""
    stack: list[ast.AST] = []
    for name, value in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        if isinstance(value, ast.AST):
            stack.append(value)
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, ast.AST) and not isinstance(v, ast.stmt))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Lambda, ast.stmt)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _opens_for_writing(call: ast.Call) -> bool:
    """open(path, "w"...) / open(path, mode="wb"): the module writes a file."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "open"):
        return False
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(c in mode.value for c in "wax")


def _exec_target(call: ast.Call) -> Optional[str]:
    """'x.py' for exec(open('x.py').read()) (also with a with-less file handle), else None."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "exec" and call.args):
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "read":
        opener = arg.func.value
        if isinstance(opener, ast.Call) and _call_name(opener) == "open" and opener.args:
            first = opener.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                return first.value
            return ""  # a computed path (a config file named on the command line)
    return None


def _is_sys_argv(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "argv" and isinstance(node.value, ast.Name)
            and node.value.id == "sys")


def module_facts(tree: ast.Module, text: str = "", notebook: bool = False) -> EntryFacts:
    """Entry-point evidence of one parsed module (or one notebook cell)."""
    imports = _imports(_statements(tree.body))
    top = {r.module.split(".")[0] for r in imports if r.level == 0}
    torch = bool(top & (TORCH_PACKAGES | OTHER_FRAMEWORK_PACKAGES))
    npu = any(r.level == 0 and (r.module == "torch_npu" or r.module.startswith("torch_npu.")) for r in imports)
    transfer = any(r.level == 0 and (r.module == "torch_npu.contrib.transfer_to_npu"
                                     or (r.module == "torch_npu.contrib" and "transfer_to_npu" in r.names))
                   for r in imports)
    guard_stmt = next((s for s in tree.body if is_main_guard(s)), None)
    guard = guard_stmt.lineno if guard_stmt is not None else 0
    functions = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    evidence: list[tuple[str, int, str]] = []
    execs: list[tuple[int, str]] = []
    seen: set[str] = set()

    def note(what: str, line: int) -> None:
        if what not in seen:
            seen.add(what)
            evidence.append(("module-code", line, what))

    top_level = {id(s) for s in tree.body}
    for stmt in _module_level(tree.body):
        if isinstance(stmt, (ast.For, ast.While, ast.AsyncFor)):
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr in TRAINING_CALLS:
                    note("a training loop at module level", stmt.lineno)
                    break
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                ctx = item.context_expr
                if isinstance(ctx, ast.Call) and _call_name(ctx) in ("no_grad", "inference_mode"):
                    note(f"model code under {_call_name(ctx)}() at module level", stmt.lineno)
        if id(stmt) in top_level and isinstance(stmt, (ast.Expr, ast.For, ast.While, ast.AsyncFor, ast.With)):
            # a script's results: printed or saved by the module body itself (not from a def or
            # class, nor from an if/try branch such as `except ImportError: print(...)`)
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and (
                        (isinstance(node.func, ast.Name) and node.func.id == "print")
                        or (_call_name(node) == "save" and isinstance(node.func, ast.Attribute)
                            and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch")
                        or _opens_for_writing(node)):
                    note("prints or saves results at module level", node.lineno)
                    break
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            name = _call_name(stmt.value)
            if isinstance(stmt.value.func, ast.Name) and name in functions and not name.startswith("_"):
                note(f"calls {name}() at module level", stmt.lineno)
            elif name == "Fire":
                note("fire.Fire(...) at module level", stmt.lineno)
        for node in _expressions(stmt):
            if isinstance(node, ast.Call):
                name = _call_name(node)
                if _parses_arguments(name):
                    note("parses command-line arguments at module level", node.lineno)
                target = _exec_target(node)
                if target is not None:
                    if target:
                        execs.append((node.lineno, target))
                        note(f"runs {target} with exec(open(...)) at module level", node.lineno)
                    else:
                        note("runs a file with exec(open(...)) at module level", node.lineno)
            elif _is_sys_argv(node):
                note("reads sys.argv at module level", node.lineno)
    if guard_stmt is not None:
        cli_line = _main_block_cli(guard_stmt, functions)
        if cli_line:
            evidence.append(("main-cli", cli_line, f"its main block parses command-line arguments (line {cli_line})"))
    if text.startswith("#!") and _SHEBANG.match(text.split("\n", 1)[0]):
        evidence.append(("module-code", 1, "a #! python line"))
    return EntryFacts(tuple(imports), torch, guard, tuple(evidence), tuple(execs), (), notebook, transfer, npu)


_CLI_CALLS = {"parse_args", "parse_known_args", "parse_args_into_dataclasses", "Fire", "CLI", "LightningCLI",
              "docopt"}
_CLI_RUNNERS = {"typer", "app"}  # typer.run(main), absl's app.run(main)
_CLI_DECORATORS = {"command", "group", "main"}  # click.command / click.group, hydra.main


def _parses_arguments(name: str) -> bool:
    """argparse's parse_args / parse_known_args and the parser subclasses' extensions of them
    (`parse_args_into_dataclasses`, `parse_args_and_config`, `parse_known_args_with_yaml`, ...):
    an argparse subclass names its command-line reading after the method it extends."""
    return name.startswith(("parse_args", "parse_known_args"))


def _reads_command_line(call: ast.Call) -> bool:
    name = _call_name(call)
    if _parses_arguments(name) and call.args and isinstance(call.args[0], (ast.List, ast.Tuple)):
        return False  # parses a fixed list, as demos and tests do
    if name in _CLI_CALLS or _parses_arguments(name):
        return True
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    return (isinstance(receiver, ast.Name)
            and ((name == "cli" and receiver.id == "tyro") or (name == "run" and receiver.id in _CLI_RUNNERS)))


def _is_cli_function(fn: ast.AST) -> bool:
    """A function made a command-line entry by its decorator (click, hydra)."""
    for dec in getattr(fn, "decorator_list", ()):
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute) and target.attr in _CLI_DECORATORS:
            return True
    return False


def _main_block_cli(guard: ast.If, functions: Mapping[str, ast.AST]) -> int:
    """Line where the main block (or a function of this module it calls) reads the command line
    (argparse, sys.argv, fire, tyro, typer, absl, jsonargparse, LightningCLI, docopt, or a click /
    hydra decorated function): a command-line tool, not a demo. 0 when it does not."""
    todo: list[ast.AST] = [guard]
    seen: set[str] = set()
    while todo:
        for node in ast.walk(todo.pop()):
            if _is_sys_argv(node):
                return node.lineno  # type: ignore[attr-defined]
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            if _reads_command_line(node):
                return node.lineno
            if isinstance(node.func, ast.Name) and name in functions and name not in seen:
                if _is_cli_function(functions[name]):
                    return node.lineno
                seen.add(name)
                todo.append(functions[name])
    return 0


def notebook_facts(cells: Iterable[tuple[Optional[ast.Module], str]]) -> EntryFacts:
    """Merge the facts of a notebook's code cells ((tree or None, raw source) each)."""
    imports: list[ImportRef] = []
    torch = transfer = npu = False
    launched: list[tuple[int, str, str]] = []
    for tree, source in cells:
        if tree is not None:
            facts = module_facts(tree, notebook=True)
            imports.extend(facts.imports)
            torch, transfer, npu = torch or facts.torch, transfer or facts.transfer, npu or facts.torch_npu
        shell = "\n".join(line.lstrip()[1:] for line in source.splitlines() if line.lstrip().startswith("!"))
        launched.extend((0, target, cwd) for _, target, cwd in launches(shell, "sh"))  # cell lines: no file line
        for line in source.splitlines():
            m = re.match(r"^\s*%run\s+(?:-\S+\s+)*([\w./-]+\.py)\b", line)
            if m:
                launched.append((0, m.group(1), ""))
    return EntryFacts(tuple(imports), torch, 0, (), (), tuple(launched), True, transfer, npu)


# --------------------------------------------------------------------------- launch lines
def _logical_lines(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not buf:
            start = number
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        out.append((start, buf + line))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


def _markdown_shell(text: str) -> str:
    """The shell lines of a Markdown file (non-Python fenced blocks and inline code), line numbers kept."""
    out: list[str] = []
    fence: Optional[str] = None
    shell = False
    for line in text.splitlines():
        stripped = line.strip()
        m = re.match(r"(`{3,}|~{3,})\s*([\w+-]*)", stripped)
        if fence is None and m:
            fence, shell = m.group(1), m.group(2).lower() not in _PY_NOTEBOOK_LANGS
            out.append("")
            continue
        if fence is not None and stripped.startswith(fence):
            fence = None
            out.append("")
            continue
        if fence is not None:
            out.append(re.sub(r"^\s*(?:\$|#|>)\s+", "", line) if shell else "")
            continue
        spans = re.findall(r"`([^`\n]+)`", line)
        out.append(" ; ".join(spans))
    return "\n".join(out)


def _strip_comment(line: str) -> str:
    m = re.search(r"(?:^|\s)#", line)
    return line[:m.start()] if m else line


def launches(text: str, kind: str = "sh") -> list[tuple[int, str, str]]:
    """(line, target, cwd) of each launch in a shell script, Makefile or Markdown file.

    target is a path ending in .py or a dotted module name (`python -m`); cwd is the directory
    the command runs in relative to the file's own directory ('' there; None-like '?' when a
    `cd` went somewhere that cannot be known statically)."""
    if kind == "md":
        text = _markdown_shell(text)
    out: list[tuple[int, str, str]] = []
    cwd = ""
    for number, line in _logical_lines(text):
        code = _strip_comment(line)
        for part in re.split(r"&&|\|\||;|\|", code):
            part = part.strip().strip("()` ")
            words = part
            m = re.match(r"(?:cd|pushd)\s+(\S+)\s*$", words)
            if m:
                cwd = _change_dir(cwd, m.group(1))
                continue
            if re.match(r"popd\b", words):
                cwd = ""
                continue
            launch = _LAUNCH_WORD.search(part)
            if launch is None:
                continue
            target = _launch_target(part[launch.end():])
            if target:
                out.append((number, target, cwd))
    return out


def _change_dir(cwd: str, arg: str) -> str:
    arg = arg.strip("'\"")
    if "$" in arg or arg.startswith(("~", "/")) or cwd == "?":
        return "?"
    return posixpath.normpath(posixpath.join(cwd, arg))


_LAUNCH_WINDOW = 4_096  # characters after the launcher read for its script


def _launch_target(rest: str) -> str:
    """The script (or `-m` module) the launcher run on `rest` starts, or "".

    Only the first _LAUNCH_WINDOW characters are split, ending at a space: shlex builds a
    token a character at a time, so one generated word of a megabyte took tens of seconds,
    and no script path or option before it is that long."""
    if len(rest) > _LAUNCH_WINDOW:
        end = max(rest.rfind(" ", 0, _LAUNCH_WINDOW), rest.rfind("\t", 0, _LAUNCH_WINDOW))
        rest = rest[:end] if end > 0 else ""
    try:
        words = shlex.split(rest, comments=False, posix=True)
    except ValueError:
        words = rest.split()
    i = 0
    while i < len(words):
        word = words[i]
        if word in (">", ">>", "<", "2>", "&>") or word.startswith((">", "2>")):
            break
        if word in ("-c",):
            return ""
        if word == "-m" and i + 1 < len(words):
            module = words[i + 1]
            if module.split(".")[0] in TOOL_MODULES:
                return ""
            if module in LAUNCHER_MODULES:  # the script follows the launcher's own options
                i += 2
                continue
            return module if re.fullmatch(r"[A-Za-z_][\w.]*", module) else ""
        if word.endswith(".py") and not word.startswith("-"):
            if "=" in word and not word.startswith("$"):  # --config=x.py: an argument, not the script
                i += 1
                continue
            return word
        i += 1
    return ""


# --------------------------------------------------------------------------- build scripts
def is_setup_script(rel: str) -> bool:
    return rel.rsplit("/", 1)[-1].lower() == "setup.py"


def is_build_script(rel: str) -> bool:
    """setup.py, and Python scripts that build, install or package the project (by name, or by
    a CI or build folder: the folder table is config_kinds', shared with the config rewriter).
    The name pattern is narrower than the shell scripts' one on purpose: a Python file named
    `compile_model.py` or `ci_eval.py` is as likely to be the program as a build step."""
    stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return is_setup_script(rel) or bool(_BUILD_NAME.search(stem)) or config_kinds.in_build_folder(rel)


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
