"""The evidence for the entry-point decision that each file gives on its own (`scan/entries.py`
decides from all of it): its imports, a main block, command-line parsing, a training loop at
module level, the launch lines of shell scripts, Makefiles and Markdown, build scripts."""
from __future__ import annotations

import ast
import posixpath
import re
import shlex
import sys
from dataclasses import dataclass
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
