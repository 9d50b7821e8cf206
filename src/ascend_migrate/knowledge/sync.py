"""Read what a torch_npu release patches, statically, and write it as a coverage file.

`torch_npu` cannot be imported without CANN, so everything here reads the Python sources
(from a wheel or an installed tree) with `ast` and never executes them. What is read:

* `torch_npu/contrib/transfer_to_npu.py`: every list it wraps with its device-rewriting
  wrapper (`torch.*` factories, `torch.Tensor` / `torch.nn.Module` methods, `torch.cuda`
  functions, ...), the modules it overlays onto `torch.cuda` (and which names each overlay
  copies), and every attribute it assigns on `torch` while it is imported.
* `torch_npu/npu/__init__.py`: `__all__`, the names an overlay of `torch.cuda` copies.
* `torch_npu/contrib/apis_config.json`: the third-party functions it wraps, with minimum
  package versions.

Only code that runs when transfer_to_npu is imported counts: the module's top level and
the functions it calls from there (nested wrappers that patch temporarily at call time do
not). Anything that cannot be determined is recorded as missing with a reason, never guessed.
"""
from __future__ import annotations

import ast
import errno
import hashlib
import io
import json
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Optional

from ascend_migrate.printable import printable

SCHEMA_VERSION = 1
PACKAGE = "torch_npu"

# Where transfer_to_npu has lived; the first that exists wins, then any file of that name.
TRANSFER_CANDIDATES = (
    "torch_npu/contrib/transfer_to_npu.py",
    "torch_npu/contrib/transfer_to_npu/__init__.py",
    "torch_npu/utils/transfer_to_npu.py",
)
NPU_INIT = "torch_npu/npu/__init__.py"
APIS_CONFIG_NAME = "apis_config.json"

# Convenience sections: wrap target -> key in the coverage file.
WRAP_SECTIONS = {
    "torch": "torch_functions",
    "torch.Tensor": "tensor_methods",
    "torch.nn.Module": "module_methods",
    "torch.cuda": "cuda_functions",
}
DISTRIBUTED_PREFIXES = ("torch.distributed.", "torch.nn.parallel.")


class SyncError(Exception):
    """The input is not a torch_npu distribution that can be read at all."""


class RefusedInput(SyncError):
    """A wheel this tool will not inflate (encrypted or unknown-method members, a member or a
    total that inflates past the caps): exit status 2, one line saying why."""


# A torch_npu wheel's largest Python source is well under 1 MB; these caps only stop a small
# crafted zip from inflating to gigabytes (a zip bomb).
MAX_MEMBER_BYTES = 32 << 20
# A Python source is parsed whole (`ast`), which costs about 200 bytes of memory per byte of a
# crafted one (an 8 MB `__all__` of 2,000,000 names took 36 s and 2 GB): sources are read up to
# this size only. torch_npu's largest is well under 1 MB.
MAX_SOURCE_BYTES = 2 << 20
MAX_SOURCE_TOKENS = 300_000  # words and symbols of one source (`parse_source`)
MAX_PARSED_BYTES = 8 << 20  # source text parsed in one sync, all files together (`parse_in`)
# names a module's lists may hold together as they are evaluated (`StaticLists`): `X += X`
# doubles a list, so thirty such lines would ask for a billion
MAX_LIST_NAMES = 1_000_000
_TOKEN = re.compile(r"\w+|\S")
MAX_TOTAL_BYTES = 256 << 20
_ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}

# The versions a sync accepts: what the coverage loader parses, written the one way it reads
# them (no `v`, no spaces, a dot before `post`), so a file's name is the version it holds and
# two names of one build cannot both be written.
SYNC_VERSION = re.compile(r"\d{1,6}(?:\.\d{1,6}){1,3}(?:(?:rc|a|b)\d{1,6})?(?:\.post\d{1,6})?")


# --------------------------------------------------------------------------------------
# Source trees: a wheel (zip) or an installed site-packages directory.


class SourceTree:
    """Read-only access to a torch_npu distribution by POSIX relative path."""

    kind = "abstract"

    def __init__(self) -> None:
        self.read_log: dict[str, bytes] = {}

    def names(self) -> list[str]:
        raise NotImplementedError

    def _read(self, path: str, limit: int) -> Optional[bytes]:
        raise NotImplementedError

    def _too_big(self, path: str, limit: int) -> RefusedInput:
        what = "any Python source" if limit == MAX_SOURCE_BYTES else "any file"
        grows = "inflates past" if self.kind == "wheel" else "is larger than"
        where = getattr(self, "path", None) or getattr(self, "root", "")
        return RefusedInput(f"{printable(where)}: {printable(repr(path))} {grows} {limit >> 20} MiB, "
                            f"more than {what} of torch_npu: refused")

    def exists(self, path: str) -> bool:
        return path in self._name_set()

    def _name_set(self) -> set[str]:
        cached = getattr(self, "_names_cache", None)
        if cached is None:
            cached = set(self.names())
            self._names_cache = cached
        return cached

    def read_bytes(self, path: str) -> Optional[bytes]:
        """The file's bytes (None when it is not there); RefusedInput past its size cap."""
        if not self.exists(path):
            return None
        data = self._read(path, MAX_SOURCE_BYTES if path.endswith(".py") else MAX_MEMBER_BYTES)
        if data is not None:
            self.read_log[path] = data
        return data

    def read_text(self, path: str) -> Optional[str]:
        data = self.read_bytes(path)
        if data is None:
            return None
        return data.decode("utf-8", errors="replace")

    def dist_info_metadata(self) -> Optional[str]:
        for name in sorted(self.names()):
            parts = name.split("/")
            if (
                len(parts) == 2
                and parts[0].startswith("torch_npu-")
                and parts[0].endswith(".dist-info")
                and parts[1] == "METADATA"
            ):
                return self.read_text(name)
        return None

    def sources_sha256(self) -> str:
        digest = hashlib.sha256()
        for path in sorted(self.read_log):
            digest.update(path.encode("utf-8") + b"\0")
            digest.update(self.read_log[path] + b"\0")
        return digest.hexdigest()


class WheelTree(SourceTree):
    kind = "wheel"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            raise SyncError(f"{self.path}: cannot read: {exc.strerror or exc}") from exc
        self.sha256 = hashlib.sha256(raw).hexdigest()
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(raw))
        except zipfile.BadZipFile as exc:
            raise SyncError(f"{self.path}: not a wheel (zip) file: {exc}") from exc
        for info in self._zip.infolist():
            if info.flag_bits & 0x1:
                raise RefusedInput(f"{self.path}: member {info.filename!r} is encrypted; wheels never are: refused")
            if info.compress_type not in _ZIP_METHODS:
                raise RefusedInput(f"{self.path}: member {info.filename!r} uses compression method "
                                   f"{info.compress_type}, not one a wheel uses (stored, deflate): refused")
        self._names = [n for n in self._zip.namelist() if not n.endswith("/")]
        self._inflated = 0

    def names(self) -> list[str]:
        return self._names

    def _read(self, path: str, limit: int) -> Optional[bytes]:
        """The member's bytes, inflated in chunks and never past `limit` or the total cap
        (whatever size the archive declares)."""
        try:
            info = self._zip.getinfo(path)
            if info.file_size > limit:
                raise self._too_big(path, limit)
            chunks, size = [], 0
            with self._zip.open(info) as fh:
                while True:
                    chunk = fh.read(1 << 20)
                    if not chunk:
                        break
                    size += len(chunk)
                    self._inflated += len(chunk)
                    if size > limit:
                        raise self._too_big(path, limit)
                    if self._inflated > MAX_TOTAL_BYTES:
                        raise self._too_big_total(path)
                    chunks.append(chunk)
            return b"".join(chunks)
        except (KeyError, zipfile.BadZipFile, OSError, ValueError, EOFError):
            return None

    def _too_big_total(self, path: str) -> RefusedInput:
        return RefusedInput(f"{printable(self.path)}: reading {printable(repr(path))}, the wheel inflates past "
                            f"{MAX_TOTAL_BYTES >> 20} MiB in all: refused")


class DirTree(SourceTree):
    """A site-packages directory holding torch_npu/ (or the torch_npu package dir itself)."""

    kind = "site-packages"

    def __init__(self, path: Path) -> None:
        super().__init__()
        path = Path(path)
        if (path / "torch_npu").is_dir():
            self.root = path
        elif path.name == "torch_npu" and path.is_dir():
            self.root = path.parent
        else:
            raise SyncError(f"{path}: no torch_npu package found in this directory")
        self._names = []
        pkg = self.root / "torch_npu"
        for file in sorted(pkg.rglob("*")):
            if file.is_file() and file.suffix in (".py", ".json"):
                self._names.append(file.relative_to(self.root).as_posix())
        for info in sorted(self.root.glob("torch_npu-*.dist-info")):
            meta = info / "METADATA"
            if meta.is_file():
                self._names.append(meta.relative_to(self.root).as_posix())

    def names(self) -> list[str]:
        return self._names

    def _read(self, path: str, limit: int) -> Optional[bytes]:
        try:
            with open(self.root / path, "rb") as handle:
                data = handle.read(limit + 1)
        except OSError:
            return None
        if len(data) > limit:
            raise self._too_big(path, limit)
        return data


def open_tree(wheel: Optional[Path] = None, site_packages: Optional[Path] = None) -> SourceTree:
    if (wheel is None) == (site_packages is None):
        raise SyncError("give exactly one of a wheel file or a site-packages directory")
    return WheelTree(wheel) if wheel is not None else DirTree(site_packages)


# --------------------------------------------------------------------------------------
# Small AST helpers.


def dotted(node: ast.AST) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def unparse(node: ast.AST) -> str:
    return ast.unparse(node)


def parse_source(text: str, path: str) -> tuple[Optional[ast.Module], Optional[str]]:
    """The module's tree, or (None, why it does not parse). RefusedInput for a source of more
    than MAX_SOURCE_TOKENS words and symbols, before it is parsed: its tree would take hundreds
    of megabytes (torch_npu's largest source has some tens of thousands)."""
    if len(text) > MAX_SOURCE_TOKENS:  # a shorter text cannot hold more tokens than that
        tokens = 0
        for _ in _TOKEN.finditer(text):
            tokens += 1
            if tokens > MAX_SOURCE_TOKENS:
                raise RefusedInput(f"{printable(repr(path))} holds more than {MAX_SOURCE_TOKENS:,} words and "
                                   "symbols, more than any Python source of torch_npu: refused")
    try:
        return ast.parse(text, filename=path), None
    except SyntaxError as exc:
        return None, f"{path} does not parse: {exc.msg} (line {exc.lineno})"
    except ValueError as exc:  # null bytes
        return None, f"{path} does not parse: {exc}"


def parse_in(tree: SourceTree, text: str, path: str) -> tuple[Optional[ast.Module], Optional[str]]:
    """`parse_source` for a file of `tree`: the last few trees are kept, so the module every
    overlay asks about is parsed once, and the text parsed in one sync is bounded
    (MAX_PARSED_BYTES; RefusedInput past it), so a wheel of many large sources costs seconds."""
    cache = tree.__dict__.setdefault("_parsed", {})
    if path in cache:
        cache[path] = cache.pop(path)  # most recently used last
        return cache[path]
    tree.parsed_bytes = getattr(tree, "parsed_bytes", 0) + len(text)
    if tree.parsed_bytes > MAX_PARSED_BYTES:
        raise RefusedInput(f"{printable(repr(path))}: the Python sources read pass {MAX_PARSED_BYTES >> 20} MiB, "
                           "more than torch_npu's coverage needs: refused")
    cache[path] = parse_source(text, path)
    if len(cache) > 4:
        del cache[next(iter(cache))]
    return cache[path]


def module_path_candidates(module: str) -> list[str]:
    base = module.replace(".", "/")
    return [f"{base}.py", f"{base}/__init__.py"]


class Unresolved(Exception):
    """A list expression that cannot be evaluated statically; str() is the reason."""


class StaticLists:
    """Evaluate module-level lists of strings, in statement order, without running code.

    Follows `X = [...]`, `X = A + B`, `X += [...]`, `X.extend([...])`, `X.append('n')`,
    `X = other_module.__all__` (for modules in the same tree), through top-level if/try
    blocks (all branches are taken; `conditional` records the names so affected).
    """

    def __init__(self, tree: SourceTree, module: ast.Module, path: str, depth: int = 0) -> None:
        self.tree = tree
        self.path = path
        self.depth = depth
        self.values: dict[str, list[str]] = {}
        self.failed: dict[str, str] = {}
        self.conditional: set[str] = set()
        self.module_aliases: dict[str, str] = {}
        self._walk(module.body, conditional=False)

    # which package the file belongs to, for relative imports
    def _package(self) -> str:
        parts = PurePosixPath(self.path).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        else:
            parts = parts[:-1]
        return ".".join(parts)

    def _walk(self, body: Iterable[ast.stmt], conditional: bool) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.If, ast.Try)):
                blocks = [stmt.body, stmt.orelse]
                if isinstance(stmt, ast.Try):
                    blocks += [h.body for h in stmt.handlers] + [stmt.finalbody]
                for block in blocks:
                    self._walk(block, conditional=True)
                continue
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        self.module_aliases[alias.asname] = alias.name
            elif isinstance(stmt, ast.ImportFrom):
                base = self._import_base(stmt)
                for alias in stmt.names:
                    if base is not None and alias.name != "*":
                        self.module_aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self._set(target.id, stmt.value, conditional)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
                self._set(stmt.target.id, stmt.value, conditional)
            elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                if isinstance(stmt.op, ast.Add):
                    self._extend(stmt.target.id, stmt.value, conditional)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = stmt.value
                func = call.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                    name = func.value.id
                    if func.attr == "extend" and len(call.args) == 1:
                        self._extend(name, call.args[0], conditional)
                    elif func.attr == "append" and len(call.args) == 1:
                        self._extend(name, ast.List(elts=[call.args[0]], ctx=ast.Load()), conditional)

    def _import_base(self, stmt: ast.ImportFrom) -> Optional[str]:
        if stmt.level == 0:
            return stmt.module
        package = self._package().split(".")
        if stmt.level > 1:
            package = package[: len(package) - (stmt.level - 1)]
        base = ".".join(package)
        return f"{base}.{stmt.module}" if stmt.module else base

    def _count(self, items: list[str]) -> list[str]:
        """`items`, counted against MAX_LIST_NAMES for the module (RefusedInput past it)."""
        self.names_built = getattr(self, "names_built", 0) + len(items)
        if self.names_built > MAX_LIST_NAMES:
            raise RefusedInput(f"{printable(repr(self.path))}: its lists of names grow past {MAX_LIST_NAMES:,} "
                               "as they are evaluated, more than any torch_npu module's: refused")
        return items

    def _set(self, name: str, value: ast.expr, conditional: bool) -> None:
        try:
            self.values[name] = self._count(self.evaluate(value))
            self.failed.pop(name, None)
        except Unresolved as exc:
            self.values.pop(name, None)
            self.failed[name] = str(exc)
        if conditional:
            self.conditional.add(name)

    def _extend(self, name: str, value: ast.expr, conditional: bool) -> None:
        if name in self.failed:
            return
        if name not in self.values:
            if name == "__all__" or name.endswith("list"):
                self.failed[name] = f"'{name}' extended before it is assigned"
            return
        try:
            self.values[name] = self._count(self.values[name] + self.evaluate(value))
        except Unresolved as exc:
            self.values.pop(name, None)
            self.failed[name] = str(exc)
        if conditional:
            self.conditional.add(name)

    def evaluate(self, node: ast.expr) -> list[str]:
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[str] = []
            for elt in node.elts:
                if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                    out.append(elt.value)
                elif isinstance(elt, ast.Starred):
                    out.extend(self.evaluate(elt.value))
                else:
                    raise Unresolved(f"element `{unparse(elt)}` is not a string literal")
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._count(self.evaluate(node.left) + self.evaluate(node.right))
        if isinstance(node, ast.Name):
            if node.id in self.values:
                return self._count(list(self.values[node.id]))
            if node.id in self.failed:
                raise Unresolved(f"`{node.id}`: {self.failed[node.id]}")
            raise Unresolved(f"`{node.id}` is not a list assigned at module level")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple"):
            if len(node.args) == 1 and not node.keywords:
                return self.evaluate(node.args[0])
        if isinstance(node, ast.Attribute) and node.attr == "__all__":
            return self._foreign_all(node)
        raise Unresolved(f"`{unparse(node)}` cannot be evaluated statically")

    def _foreign_all(self, node: ast.Attribute) -> list[str]:
        ref = dotted(node.value)
        if ref is None:
            raise Unresolved(f"`{unparse(node)}` cannot be evaluated statically")
        head, _, rest = ref.partition(".")
        module = self.module_aliases.get(head, head) + (f".{rest}" if rest else "")
        if self.depth > 4:
            raise Unresolved(f"`{unparse(node)}`: too many nested __all__ references")
        for candidate in module_path_candidates(module):
            text = self.tree.read_text(candidate)
            if text is None:
                continue
            parsed, error = parse_in(self.tree, text, candidate)
            if parsed is None:
                raise Unresolved(error or "unparseable")
            other = StaticLists(self.tree, parsed, candidate, self.depth + 1)
            if "__all__" in other.values:
                return list(other.values["__all__"])
            raise Unresolved(other.failed.get("__all__", f"{candidate} defines no __all__"))
        raise Unresolved(f"`{unparse(node)}`: module {module} is not in the distribution")


def dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


# --------------------------------------------------------------------------------------
# transfer_to_npu reader.


@dataclass
class _Context:
    condition: Optional[str] = None
    deferred: bool = False
    scope: dict = field(default_factory=dict)  # local name -> last assigned expression

    def and_(self, cond: str) -> "_Context":
        joined = cond if self.condition is None else f"{self.condition} and {cond}"
        return _Context(joined, self.deferred, self.scope)

    def enter(self, deferred: Optional[bool] = None) -> "_Context":
        return _Context(self.condition, self.deferred if deferred is None else deferred, {})


@dataclass
class TransferReader:
    tree: SourceTree
    module: ast.Module
    path: str
    lists: StaticLists = field(init=False)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    classes: set[str] = field(default_factory=set)
    wrapped: dict[str, list[str]] = field(default_factory=dict)
    wrapped_by: dict[str, set[str]] = field(default_factory=dict)
    overlays: list[dict[str, Any]] = field(default_factory=list)
    patches: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # imports inside functions
    _visited: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.lists = StaticLists(self.tree, self.module, self.path)
        for stmt in self.module.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = stmt  # type: ignore[assignment]
            elif isinstance(stmt, ast.ClassDef):
                self.classes.add(stmt.name)

    # ---- entry
    def run(self) -> None:
        self._visit_body(self.module.body, _Context(), local_funcs={}, top=True)

    # ---- helpers about local functions
    def _loop_wrapper_spec(self, func: ast.FunctionDef) -> Optional[tuple[int, int, Optional[str]]]:
        """(target param index, list param index, wrapper) if `func` setattr-wraps a list."""
        params = [a.arg for a in func.args.args]
        for node in ast.walk(func):
            if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Name)):
                continue
            if node.iter.id not in params or not isinstance(node.target, ast.Name):
                continue
            loop_var = node.target.id
            for inner in ast.walk(node):
                spec = self._setattr_on(inner, loop_var)
                if spec is not None and spec[0] in params:
                    return params.index(spec[0]), params.index(node.iter.id), spec[1]
        return None

    def _setattr_on(self, node: ast.AST, loop_var: str) -> Optional[tuple[str, Optional[str]]]:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"):
            return None
        if len(node.args) != 3:
            return None
        obj, name, value = node.args
        if not (isinstance(name, ast.Name) and name.id == loop_var):
            return None
        target = dotted(obj)
        if target is None:
            return None
        wrapper = None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            wrapper = value.func.id
        return target, wrapper

    def _add_wrapped(self, target: str, names: list[str], wrapper: Optional[str]) -> None:
        current = self.wrapped.setdefault(target, [])
        for name in names:
            if name not in current:
                current.append(name)
        if wrapper:
            self.wrapped_by.setdefault(target, set()).add(wrapper)

    def _resolve_list(self, node: ast.expr, where: str) -> Optional[list[str]]:
        try:
            return self.lists.evaluate(node)
        except Unresolved as exc:
            self.problems.append(f"{where}: {exc}")
            return None

    # ---- statement walker
    def _visit_body(self, body: list[ast.stmt], ctx: _Context, local_funcs: dict, top: bool = False) -> None:
        nested = dict(local_funcs)
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not top:
                    nested[stmt.name] = stmt
                continue
            if isinstance(stmt, ast.ClassDef):
                continue
            self._visit_stmt(stmt, ctx, nested)

    def _visit_stmt(self, stmt: ast.stmt, ctx: _Context, local_funcs: dict) -> None:
        if isinstance(stmt, ast.If):
            cond = unparse(stmt.test)
            self._visit_body(stmt.body, ctx.and_(cond), local_funcs)
            if stmt.orelse:
                self._visit_body(stmt.orelse, ctx.and_(f"not ({cond})"), local_funcs)
            return
        if isinstance(stmt, ast.Try):
            for block in [stmt.body, stmt.orelse, stmt.finalbody] + [h.body for h in stmt.handlers]:
                self._visit_body(block, ctx, local_funcs)
            return
        if isinstance(stmt, ast.With):
            self._visit_body(stmt.body, ctx, local_funcs)
            return
        if isinstance(stmt, ast.For):
            self._visit_for(stmt, ctx, local_funcs)
            return
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
            for alias in stmt.names:
                if alias.name != "*":
                    self.aliases[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
            return
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
            return
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                name = dotted(target)
                if name is not None and "." in name:
                    self._record_patch(name, stmt.value, ctx)
                elif isinstance(target, ast.Name):
                    ctx.scope[target.id] = stmt.value
        self._visit_calls(stmt, ctx, local_funcs)

    def _visit_for(self, stmt: ast.For, ctx: _Context, local_funcs: dict) -> None:
        if isinstance(stmt.target, ast.Name):
            names = None
            for inner in ast.walk(stmt):
                spec = self._setattr_on(inner, stmt.target.id)
                if spec is None:
                    continue
                if names is None:
                    names = self._resolve_list(stmt.iter, f"loop over `{unparse(stmt.iter)}`")
                if names is not None:
                    self._add_wrapped(spec[0], names, spec[1])
        self._visit_body(stmt.body, ctx, local_funcs)

    def _visit_calls(self, stmt: ast.stmt, ctx: _Context, local_funcs: dict) -> None:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            fname = func.id if isinstance(func, ast.Name) else None
            if fname == "setattr" and len(node.args) == 3:
                obj = dotted(node.args[0])
                attr = node.args[1]
                if obj and isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                    self._record_patch(f"{obj}.{attr.value}", node.args[2], ctx)
                continue
            callee_name = fname or (func.attr if isinstance(func, ast.Attribute) else None)
            if callee_name is not None and callee_name.endswith("_apply_patches") and node.args:
                self._record_overlays(node.args[0], ctx)
                continue
            # nested functions handed to another call (e.g. a lazy-init queue) run later
            for arg in node.args:
                if isinstance(arg, ast.Name) and arg.id in local_funcs and arg.id != fname:
                    self._enter(local_funcs[arg.id], ctx.enter(deferred=True), local_funcs)
            if fname is None:
                continue
            target = local_funcs.get(fname) or self.functions.get(fname)
            if target is None:
                continue
            spec = self._loop_wrapper_spec(target)
            if spec is not None:
                t_idx, l_idx, wrapper = spec
                if len(node.args) > max(t_idx, l_idx):
                    obj = dotted(node.args[t_idx]) or unparse(node.args[t_idx])
                    names = self._resolve_list(node.args[l_idx], f"{fname}({unparse(node.args[t_idx])}, ...)")
                    if names is not None:
                        self._add_wrapped(obj, names, wrapper)
                continue
            self._enter(target, ctx.enter(), local_funcs)

    def _enter(self, func: ast.FunctionDef, ctx: _Context, local_funcs: dict) -> None:
        key = f"{id(func)}"
        if key in self._visited:
            return
        self._visited.add(key)
        self._visit_body(func.body, ctx, local_funcs)

    # ---- recording
    def _is_local_callable(self, name: str) -> bool:
        return name in self.functions or name in self.classes

    def _resolve_alias(self, name: str) -> str:
        head, dot, rest = name.partition(".")
        full = self.aliases.get(head) or self.lists.module_aliases.get(head)
        return f"{full}{dot}{rest}" if full else name

    def _record_patch(self, target: str, value: ast.expr, ctx: _Context) -> None:
        target = self._resolve_alias(target)
        root = target.split(".")[0]
        if root not in ("torch", "torch_npu"):
            return
        entry: dict[str, Any] = {"value": unparse(value), "wrappers": []}
        if isinstance(value, ast.Name) and not self._is_local_callable(value.id):
            resolved = self._resolve_alias(value.id)
            if resolved != value.id:
                value = _name_node(resolved)
                entry["value"] = resolved
        if isinstance(value, ast.Call):
            func = value.func
            wrappers: list[str] = []
            if isinstance(func, ast.Call):  # composed: compose(w1, w2)(fn)
                wrappers = [a.id for a in func.args if isinstance(a, ast.Name)]
            elif isinstance(func, ast.Name):
                wrappers = [func.id]
            if wrappers and all(self._is_local_callable(w) for w in wrappers):
                entry["kind"] = "wrap"
                entry["wrappers"] = wrappers
            else:
                entry["kind"] = "replace"
        elif isinstance(value, ast.Name) and self._is_local_callable(value.id):
            entry["kind"] = "replace"
        elif dotted(value) is not None and dotted(value).split(".")[0] in ("torch", "torch_npu"):
            entry["kind"] = "alias"
        else:
            entry["kind"] = "replace"
        entry["condition"] = ctx.condition
        entry["deferred"] = ctx.deferred
        previous = self.patches.get(target)
        if previous is not None and previous["kind"] == "wrap" and entry["kind"] == "wrap":
            entry["wrappers"] = previous["wrappers"] + entry["wrappers"]
        self.patches[target] = entry

    def _record_overlays(self, arg: ast.expr, ctx: _Context) -> None:
        pairs = self._pairs_from(arg, ctx.scope)
        if pairs is None:
            self.problems.append(f"_apply_patches(`{unparse(arg)}`): patch list cannot be read statically")
            return
        for dest, source in pairs:
            target = f"torch.{dest}"
            kind = classify_object(self.tree, source)
            if kind == "module":
                names, reason = module_all(self.tree, source)
                overlay = {
                    "target": target,
                    "source": source,
                    "mode": "names" if names is not None else "module",
                    "names": sorted(names) if names is not None else None,
                    "condition": ctx.condition,
                }
                if names is None:
                    overlay["note"] = reason
                self.overlays.append(overlay)
            elif kind == "object":
                self._record_patch(target, _name_node(source), ctx)
            else:
                self.overlays.append(
                    {
                        "target": target,
                        "source": source,
                        "mode": "unknown",
                        "names": None,
                        "condition": ctx.condition,
                        "note": kind,
                    }
                )

    def _pairs_from(self, arg: ast.expr, scope: dict) -> Optional[list[tuple[str, str]]]:
        node = arg
        if isinstance(arg, ast.Name):
            node = scope.get(arg.id)
            if node is None:
                return None
        if not isinstance(node, (ast.List, ast.Tuple)):
            return None
        out = []
        for elt in node.elts:
            if not (isinstance(elt, (ast.List, ast.Tuple)) and len(elt.elts) == 2):
                return None
            dest, src = elt.elts
            src_name = dotted(src)
            if not (isinstance(dest, ast.Constant) and isinstance(dest.value, str) and src_name):
                return None
            out.append((dest.value, src_name))
        return out


def _name_node(dotted_name: str) -> ast.expr:
    parts = dotted_name.split(".")
    node: ast.expr = ast.Name(id=parts[0], ctx=ast.Load())
    for part in parts[1:]:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return node


def classify_object(tree: SourceTree, name: str) -> str:
    """'module' if `name` is a module in the tree, 'object' if it is an attribute inside one,
    else a reason why it is neither."""
    parts = name.split(".")
    parent = ".".join(parts[:-1])
    if any(tree.exists(p) for p in module_path_candidates(name)):
        # a file of that name exists; the package may still rebind the name to an object
        if parent:
            for candidate in module_path_candidates(parent):
                text = tree.read_text(candidate)
                if text is None:
                    continue
                parsed, _ = parse_in(tree, text, candidate)
                if parsed is not None and _binding_kind(parsed, parts[-1], parent) == "object":
                    return "object"
                break
        return "module"
    for i in range(len(parts) - 1, 0, -1):
        if any(tree.exists(p) for p in module_path_candidates(".".join(parts[:i]))):
            return "object"
    return f"{name} is neither a module nor an attribute of a module in the distribution"


def _binding_kind(module: ast.Module, attr: str, package: str) -> Optional[str]:
    """How a package's top level binds `attr`: 'module' (import of a submodule), 'object' or None."""
    kind = None
    for stmt in module.body:
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if (alias.asname or alias.name) != attr:
                    continue
                is_sub = (stmt.level == 1 and not stmt.module) or (
                    stmt.level == 0 and stmt.module == package
                )
                kind = "module" if is_sub else "object"
        elif isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) and stmt.name == attr:
            kind = "object"
        elif isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
                kind = "object"
    return kind


def module_all(tree: SourceTree, module: str) -> tuple[Optional[list[str]], Optional[str]]:
    """`__all__` of a module in the tree, or (None, reason). Read once per tree: every overlay
    of the module asks again."""
    cache: dict[str, tuple[Optional[list[str]], Optional[str]]] = tree.__dict__.setdefault("_module_all", {})
    if module not in cache:
        cache[module] = _module_all(tree, module)
    names, reason = cache[module]
    return (list(names) if names is not None else None), reason


def _module_all(tree: SourceTree, module: str) -> tuple[Optional[list[str]], Optional[str]]:
    for candidate in module_path_candidates(module):
        text = tree.read_text(candidate)
        if text is None:
            continue
        parsed, error = parse_in(tree, text, candidate)
        if parsed is None:
            return None, error
        lists = StaticLists(tree, parsed, candidate)
        if "__all__" in lists.values:
            return dedupe(lists.values["__all__"]), None
        if "__all__" in lists.failed:
            return None, f"{candidate}: __all__: {lists.failed['__all__']}"
        return None, f"{candidate} defines no __all__, so the whole module is replaced"
    return None, f"module {module} is not in the distribution"


# --------------------------------------------------------------------------------------
# Top-level sync.


def _find_transfer(tree: SourceTree) -> Optional[str]:
    for candidate in TRANSFER_CANDIDATES:
        if tree.exists(candidate):
            return candidate
    hits = sorted(
        n
        for n in tree.names()
        if n.startswith("torch_npu/")
        and (n.endswith("/transfer_to_npu.py") or n.endswith("/transfer_to_npu/__init__.py"))
    )
    return hits[0] if hits else None


def _version_info(tree: SourceTree) -> tuple[Optional[str], Optional[str], Optional[str], Optional[str]]:
    """(version, git_version, requires_torch, metadata_version)."""
    version = git = None
    text = tree.read_text("torch_npu/version.py")
    if text is not None:
        parsed, _ = parse_in(tree, text, "torch_npu/version.py")
        if parsed is not None:
            for stmt in parsed.body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                        if stmt.targets[0].id == "__version__":
                            version = stmt.value.value
                        elif stmt.targets[0].id == "git_version":
                            git = stmt.value.value
    requires = meta_version = None
    meta = tree.dist_info_metadata()
    if meta is not None:
        headers = HeaderParser().parsestr(meta, headersonly=True)
        meta_version = headers.get("Version")
        for req in headers.get_all("Requires-Dist") or []:
            if re.match(r"^torch\b(?![-_])", req.strip()):
                requires = " ".join(req.split())
                break
    return version, git, requires, meta_version


def _third_party(tree: SourceTree, transfer_path: str, transfer_text: str, missing: dict) -> Optional[dict]:
    config_path = str(PurePosixPath(transfer_path).parent / APIS_CONFIG_NAME)
    if APIS_CONFIG_NAME not in transfer_text:
        missing["third_party"] = f"{transfer_path} does not load {APIS_CONFIG_NAME}"
        return None
    raw = tree.read_bytes(config_path)
    if raw is None:
        missing["third_party"] = f"{config_path} is not in the distribution"
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        missing["third_party"] = f"{config_path} is not valid JSON: {exc}"
        return None
    if not isinstance(data, dict):
        missing["third_party"] = f"{config_path}: top level is not an object"
        return None
    packages: dict[str, Any] = {}
    for package, entry in data.items():
        where = f"{config_path}: {package}"
        if not isinstance(entry, dict):
            missing["third_party"] = f"{where}: entry is not an object"
            return None
        version = entry.get("version")
        apis = entry.get("apis")
        if not isinstance(version, str) or not version:
            missing["third_party"] = f"{where}: 'version' is missing or not a string"
            return None
        if not isinstance(apis, dict) or not all(
            isinstance(k, str) and v in ("method", "function") for k, v in apis.items()
        ):
            missing["third_party"] = f"{where}: 'apis' must map names to 'method' or 'function'"
            return None
        packages[package] = {"min_version": version, "apis": dict(apis)}
    return {"path": config_path, "packages": packages}


def _env_activation(tree: SourceTree) -> list[str]:
    hits = []
    for name in sorted(tree.names()):
        if not (name.startswith("torch_npu/") and name.endswith(".py")):
            continue
        if "/contrib/transfer_to_npu" in name or "/testing/" in name:
            continue
        data = tree._read(name, MAX_MEMBER_BYTES)  # a text search only; not part of the parsed sources
        if data and b"TORCH_TRANSFER_TO_NPU" in data:
            hits.append(name)
    return hits


def build_coverage(tree: SourceTree) -> dict[str, Any]:
    """Read a torch_npu distribution into the coverage document (a plain dict)."""
    missing: dict[str, str] = {}
    version, git, requires, meta_version = _version_info(tree)
    if version is None:
        version = meta_version
    if version is None:
        raise SyncError("no torch_npu version found (neither torch_npu/version.py nor dist-info METADATA)")
    if not SYNC_VERSION.fullmatch(version):
        shown = printable(version if len(version) <= 60 else version[:60] + "...")
        raise RefusedInput(f"torch_npu version {shown!r} is not a release version (such as 2.1.0, "
                           "2.1.0.post10 or 2.6.0rc1): refused")
    if meta_version is not None and meta_version != version:
        shown = printable(meta_version if len(meta_version) <= 60 else meta_version[:60] + "...")
        missing["version_check"] = f"torch_npu/version.py says {version}, METADATA says {shown}"

    source: dict[str, Any] = {"kind": tree.kind}
    if isinstance(tree, WheelTree):
        source["filename"] = tree.path.name
        source["sha256"] = tree.sha256
    else:
        source["filename"] = None
        source["sha256"] = None

    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "torch_npu_version": version,
        "git_version": git,
        "requires_torch": requires,
        "source": source,
    }

    names, reason = module_all(tree, "torch_npu.npu")
    doc["npu_all"] = names
    if names is None:
        missing["npu_all"] = reason or "unknown"

    transfer: dict[str, Any] = {key: None for key in WRAP_SECTIONS.values()}
    transfer.update(
        {
            "path": None,
            "env_activation": [],
            "lists": {},
            "wrapped": {},
            "overlays": [],
            "patches": {},
            "distributed_patches": None,
            "jit_script_disabled": None,
            "device_kwargs": None,
            "problems": [],
        }
    )
    doc["transfer_to_npu"] = transfer
    doc["third_party"] = None

    path = _find_transfer(tree)
    if path is None:
        for key in list(WRAP_SECTIONS.values()) + ["distributed_patches", "jit_script_disabled", "device_kwargs"]:
            missing[f"transfer_to_npu.{key}"] = "no transfer_to_npu module in the distribution"
        missing["third_party"] = "no transfer_to_npu module in the distribution"
    else:
        transfer["path"] = path
        text = tree.read_text(path) or ""
        parsed, error = parse_in(tree, text, path)
        if parsed is None:
            for key in list(WRAP_SECTIONS.values()) + ["distributed_patches", "jit_script_disabled", "device_kwargs"]:
                missing[f"transfer_to_npu.{key}"] = error or "unparseable"
        else:
            _fill_transfer(tree, parsed, path, transfer, missing)
        doc["third_party"] = _third_party(tree, path, text, missing)
        transfer["env_activation"] = _env_activation(tree)

    doc["missing"] = missing
    doc["sources_sha256"] = tree.sources_sha256()
    return doc


def _fill_transfer(tree: SourceTree, module: ast.Module, path: str, transfer: dict, missing: dict) -> None:
    reader = TransferReader(tree, module, path)
    reader.run()
    transfer["lists"] = {
        name: values
        for name, values in sorted(reader.lists.values.items())
        if not name.startswith("__") and values and name.endswith(("_list", "_lists"))
    }
    transfer["wrapped"] = {target: sorted(names) for target, names in sorted(reader.wrapped.items())}
    for target, key in WRAP_SECTIONS.items():
        if target in reader.wrapped:
            transfer[key] = sorted(reader.wrapped[target])
        else:
            missing[f"transfer_to_npu.{key}"] = f"{path} wraps no list of names on {target}"
    transfer["overlays"] = sorted(reader.overlays, key=lambda o: o["target"])
    transfer["patches"] = {k: reader.patches[k] for k in sorted(reader.patches)}
    dist = set()
    for target in reader.patches:
        if target.startswith(DISTRIBUTED_PREFIXES):
            dist.add(target)
    for target, names in reader.wrapped.items():
        if f"{target}.".startswith(DISTRIBUTED_PREFIXES):
            dist.update(f"{target}.{n}" for n in names)
    transfer["distributed_patches"] = sorted(dist)
    jit = reader.patches.get("torch.jit.script")
    transfer["jit_script_disabled"] = bool(jit and jit["kind"] == "replace")
    kwargs = reader.lists.values.get("device_kwargs_list")
    if kwargs is not None:
        transfer["device_kwargs"] = kwargs
    else:
        missing["transfer_to_npu.device_kwargs"] = reader.lists.failed.get(
            "device_kwargs_list", f"{path} assigns no device_kwargs_list"
        )
    if not any(o["target"] == "torch.cuda" for o in reader.overlays):
        missing["transfer_to_npu.overlays"] = f"{path} overlays nothing onto torch.cuda"
    transfer["problems"] = sorted(set(reader.problems))


def render(doc: dict[str, Any]) -> str:
    """The canonical text of a coverage document: sorted keys, 1-space indent, final newline."""
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def coverage_filename(version: str) -> str:
    safe = re.sub(r"[^0-9A-Za-z.+_-]", "_", version)
    return f"torch_npu-{safe}.json"


class ReleaseExists(SyncError):
    """The release has coverage already; replacing it needs `force` (`kb sync --force`)."""


def destination(version: str, out_dir: Optional[Path] = None, *, force: bool = False) -> Path:
    """Where the coverage of `version` is written: `out_dir`, else the user's data folder;
    never the installed package. Without `force`, ReleaseExists when a file of that build
    exists there or (for the user's folder, which the loader reads first) the package ships
    that build: a synced file would silently stand in for it in every later scan. Builds are
    compared by `coverage.build_key`, not by file name ('v2.13.0', '2.13.0.post0' and '2.13.0'
    are one build)."""
    from ascend_migrate.knowledge.coverage import COVERAGE_DIR, build_key
    from ascend_migrate.knowledge.user_data import user_coverage_dir

    name = coverage_filename(version)
    path = (Path(out_dir) if out_dir is not None else user_coverage_dir()) / name
    if force:
        return path
    try:
        key = build_key(version)
    except ValueError:
        key = None
    folders = [path.parent] if out_dir is not None else [path.parent, COVERAGE_DIR]
    existing = [p for p in (path, None if out_dir is not None else COVERAGE_DIR / name) if p and p.exists()]
    for folder in folders:
        for other in sorted(folder.glob("torch_npu-*.json")) if folder.is_dir() else ():
            try:
                same = key is not None and build_key(other.name[len("torch_npu-"):-len(".json")]) == key
            except ValueError:
                same = False
            if same and other not in existing:
                existing.append(other)
    if existing:
        where = "; ".join(f"{p} ({'packaged' if p.parent == COVERAGE_DIR else 'exists'})" for p in existing)
        raise ReleaseExists(f"torch_npu {version} has coverage already: {where}. Nothing was written; "
                            f"pass --force to write {path}" + (" (read before the packaged knowledge)"
                                                                  if out_dir is None else ""))
    return path


def write_atomic(path: Path, text: str, *, force: bool) -> None:
    """Write `text` to `path` whole or not at all: a temporary file in the same folder, synced,
    then renamed over (`force`) or hard-linked into place (fails if the file appeared meanwhile).
    A crash or a full disk leaves the previous file as it was, never a half-written one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise ReleaseExists(f"{path}: appeared meanwhile; nothing was written (pass --force to replace it)") \
                    from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                    raise
                try:  # no hard links on this file system: an exclusive create is race-free too
                    with open(path, "xb") as handle:
                        handle.write(text.encode("utf-8"))
                        handle.flush()
                        os.fsync(handle.fileno())
                except FileExistsError:
                    raise ReleaseExists(f"{path}: appeared meanwhile; nothing was written") from None
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass


def sync(
    wheel: Optional[Path] = None,
    site_packages: Optional[Path] = None,
    out_dir: Optional[Path] = None,
    force: bool = False,
) -> tuple[Path, dict[str, Any]]:
    """Read one distribution and write its coverage file into `out_dir` (default: the user's
    data folder, never the installed package); return (path, doc). ReleaseExists without
    `force` when the release has coverage already (see `destination`)."""
    tree = open_tree(wheel=wheel, site_packages=site_packages)
    doc = build_coverage(tree)
    path = destination(doc["torch_npu_version"], out_dir, force=force)
    write_atomic(path, render(doc), force=force)
    return path, doc
