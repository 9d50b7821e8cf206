"""The scan engine: discover files, prefilter, analyse in parallel, cache, aggregate.

Nothing in the scanned tree is imported or executed. Per-file results are kept in one cache
index per tree, keyed by path, size, modification and inode-change time and inode (the content
hash is checked only when those change) and tied to the rule set, so re-scanning an unchanged tree reads no file.
Files are read and hashed where they are analysed (in the workers), so the tree's bytes are
never all held at once. JSON/YAML data files (no known config kind) are not scanned unless a
launch script names them.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from ascend_migrate import __version__
from ascend_migrate.knowledge.base import KnowledgeBase, format_message, load_knowledge
from ascend_migrate.knowledge.loader import DATA_DIR
from ascend_migrate.knowledge.user_data import user_coverage_files
from ascend_migrate.scan import config_kinds, entries, prefilter
from ascend_migrate.scan import text_scanners as ts
from ascend_migrate.scan.api import EntryPoint, FileNote, ScanResult
from ascend_migrate.scan.bounds import (MAX_FILE_CANDIDATES, MAX_FILE_FINDINGS, MAX_FINDINGS_PER_RULE, MAX_SCAN_FINDINGS,
                                        MAX_SCAN_SECONDS, capped_summary, summary_count)
from ascend_migrate.scan.cache_codec import Codec, CacheFormatError
from ascend_migrate.scan.finding import Finding
from ascend_migrate.scan.own_outputs import own_output_kind
from ascend_migrate.scan.project_config import ConfigError, ProjectConfig, load_project_config
from ascend_migrate.scan.cache_location import cache_dir
from ascend_migrate.scan.python_ast import AGNOSTIC_PRELUDE, PythonAnalyzer
from ascend_migrate.scan.stray_bytes import decode_with_stray_bytes
from ascend_migrate.scan.walk import excluded, walk_tree

MAX_FILE_BYTES = 4 * 1024 * 1024
INTERNAL_PREFIX = "internal error while analysing"
DEPENDENCY_FILES = {"setup.py", "setup.cfg", "pyproject.toml", "environment.yml", "environment.yaml"}
# Job-scheduler scripts (Slurm, PBS, LSF) are shell scripts under other names.
CONFIG_SUFFIXES = {".sh": "sh", ".bash": "sh", ".zsh": "sh", ".slurm": "sh", ".sbatch": "sh", ".pbs": "sh",
                   ".qsub": "sh", ".lsf": "sh", ".yaml": "yaml", ".yml": "yaml", ".json": "json"}
SUPPRESS = re.compile(r"#\s*ascend-migrate:\s*ignore(?:\[([A-Za-z0-9,\s]+)\])?")



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


# --------------------------------------------------------------------------- discovery
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


def discover(root: Path, exclude: Iterable[str], notes: list[FileNote]) -> list[Job]:
    """Walk the tree (never following links out of it, never opening special files) and
    classify files. Every skipped folder and file is recorded in `notes`."""
    if not root.is_dir():
        if not root.is_file():  # a FIFO, socket or device: never opened
            notes.append(FileNote(root.name, "not a regular file: skipped"))
            return []
        job = classify(root.name)
        return [job] if job else []
    tree = walk_tree(root, exclude)
    for rel, reason in tree.skipped:
        notes.append(FileNote(rel, reason))
    for rel in tree.excluded_dirs:
        notes.append(FileNote(rel + "/", "folder skipped: excluded by configuration"))
    jobs: list[Job] = []
    for item in tree.items:
        if item.is_dir:
            continue  # its target is inside the tree and walked there
        job = classify(item.rel)
        if job is not None:
            jobs.append(job)
    return jobs


_excluded = excluded


# --------------------------------------------------------------------------- per-file analysis
def _decode(data: bytes) -> tuple[Optional[str], str]:
    """Decode source bytes honouring a BOM or PEP 263 declaration; (None, reason) on failure."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return None, f"bad encoding declaration: {exc}"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        if encoding in ("utf-8", "utf-8-sig"):
            stray = decode_with_stray_bytes(data)  # bad bytes in comments only: Python accepts it
            if stray is not None:
                return stray, ""
        return data.decode("utf-8", errors="replace"), f"cannot decode as {encoding}: {exc}"
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, ""


def cap_findings(result: FileResult, limit: int = MAX_FINDINGS_PER_RULE) -> FileResult:
    """Keep the first `limit` findings of each rule in the file; the rest become one info
    finding of that rule saying how many were left out, and the file's note says so too
    (the migrator then rewrites only the findings listed). Text scanners stop building
    findings at the cap themselves (`bounds.RuleCap`) and leave such a summary: it is counted
    with whatever is trimmed here."""
    counts: dict[str, int] = {}
    made: dict[str, tuple[Finding, int]] = {}  # rule -> (summary a scanner left, how many it stands for)
    for f in result.findings:
        more = summary_count(f)
        if more is not None:
            made[f.rule] = (f, made[f.rule][1] + more if f.rule in made else more)
        else:
            counts[f.rule] = counts.get(f.rule, 0) + 1
    over = {rule: n - limit for rule, n in counts.items() if n > limit}
    for rule, (_, more) in made.items():
        over[rule] = over.get(rule, 0) + more
    if not over:
        return result
    kept: list[Finding] = []
    seen: dict[str, int] = {}
    placed: set[str] = set()
    for f in sorted(result.findings, key=Finding.sort_key):
        if summary_count(f) is not None:
            continue
        seen[f.rule] = seen.get(f.rule, 0) + 1
        if seen[f.rule] <= limit:
            kept.append(f)
        elif f.rule not in placed:
            placed.add(f.rule)
            kept.append(capped_summary(f.rule, f.path, f.line, f.col, over[f.rule], limit))
    for rule, (summary, _) in made.items():
        if rule not in placed:
            kept.append(capped_summary(rule, summary.path, summary.line, summary.col, over[rule], limit))
    kept.sort(key=Finding.sort_key)
    result.findings = kept
    result.analysed = False  # no longer what an analysis of the file gives
    capped = ", ".join(f"{rule} ({n} more)" for rule, n in sorted(over.items()))
    note = f"findings capped at {limit} per rule: {capped}"
    result.note = f"{result.note}; {note}" if result.note else note
    return result


def analyse(job: Job, data: bytes, kb: KnowledgeBase, coverage: Any = None, defer_data: bool = False) -> FileResult:
    """Analyse one file's bytes. Pure: no I/O, no imports of the scanned code. At most
    MAX_FINDINGS_PER_RULE findings of each rule are kept per file (cap_findings).

    `defer_data`: a JSON/YAML file of no known config kind is only counted (marked `deferred`);
    the scan analyses it later only if a launch script names it."""
    return cap_findings(_analyse_bytes(job, data, kb, coverage, defer_data))


def _analyse_bytes(job: Job, data: bytes, kb: KnowledgeBase, coverage: Any, defer_data: bool) -> FileResult:
    result = FileResult(lines=data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0))
    if defer_data and job.kind == "config" and job.config_kind in ("json", "yaml") and not _maybe_config(job, data):
        result.data_file = result.deferred = True
        return result
    if job.kind == "python":
        text, problem = _decode(data)
        if text is None or problem:
            result.note = problem
            result.findings = ts.scan_tokens(kb, job.rel, text or "", problem)
            return result
        name = job.rel.rsplit("/", 1)[-1]
        if name == "__main__.py" or name.lower() == "setup.py" or prefilter.needs_analysis(text, kb):
            cut = _analysis_cut(text, kb)
            if cut is not None:
                return _analyse_head(job, text, kb, coverage, result, *cut)
            result = analyse_python_text(job, text, kb, coverage, result)
            result.analysed = True
            return result
        if b"import" in data:
            return _imports_only(job, text, kb, result)
        return result
    return _analyse_other(job, data, kb, coverage, result)


def _analysis_cut(text: str, kb: KnowledgeBase) -> Optional[tuple[int, str]]:
    """Where the analysis of a Python file stops, and why: the offset of the line holding its
    (MAX_FILE_FINDINGS + 1)-th line with a candidate finding (a prefilter match), or its
    (MAX_FILE_CANDIDATES + 1)-th candidate when lines hold many (one generated line of 100,000
    CUDA calls); None when it has no more than that. A generated module of 160,000 CUDA calls is
    analysed for its first lines only: the time and memory of one file stay bounded, whatever
    the file holds."""
    lines = matches = 0
    line_end = -1
    for m in prefilter.pattern(kb).finditer(text):
        matches += 1
        if matches > MAX_FILE_CANDIDATES:
            return text.rfind("\n", 0, m.start()) + 1, f"more than {MAX_FILE_CANDIDATES:,} candidate findings"
        if m.start() <= line_end:
            continue  # another candidate on a line already counted
        lines += 1
        if lines > MAX_FILE_FINDINGS:
            return (text.rfind("\n", 0, m.start()) + 1,
                    f"more than {MAX_FILE_FINDINGS:,} lines with candidate findings")
        line_end = text.find("\n", m.start())
        if line_end == -1:
            line_end = len(text)
    return None


_TOP_LEVEL = re.compile(r"^[^\s#)\]}]", re.M)  # a line that can start a top-level statement


def _analyse_head(job: Job, text: str, kb: KnowledgeBase, coverage: Any, result: FileResult,
                  cut: int, why: str) -> FileResult:
    """Analyse the file up to offset `cut` (`_analysis_cut`) and say so in its note. The head is
    taken up to the next line that starts a top-level statement and parsed alone (a parse of the
    whole 4 MB file costs seconds and most of a gigabyte); when that head does not parse (the
    cut fell in a string or a block reaching the end), the whole file is parsed and every
    statement starting after the cut is left out of the tree."""
    cut_line = text.count("\n", 0, cut) + 1
    boundary = _TOP_LEVEL.search(text, cut)
    head = text[: boundary.start()] if boundary else text
    tree: Optional[ast.Module] = None
    if boundary is not None:
        try:
            tree = ast.parse(head, filename=job.rel)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
    if tree is None:
        head = text
        try:
            tree = ast.parse(text, filename=job.rel)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None  # analyse_python_text reports it and falls back to token matching
        else:
            _drop_statements_after(tree, cut_line - 1)
    result = analyse_python_text(job, head, kb, coverage, result, tree=tree)
    result.lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    note = f"analysis cut short at line {cut_line:,} of {result.lines:,}: {why}; the lines from there on were not analysed"
    result.note = f"{result.note}; {note}" if result.note else note
    result.analysed = False  # not what an analysis of the whole file gives
    return result


def _drop_statements_after(tree: ast.AST, last_line: int) -> None:
    """Remove from every statement list of `tree` the statements starting after `last_line`
    (a block left empty keeps a `pass`); only what is kept is walked."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            body = getattr(node, name, None)
            if not (isinstance(body, list) and body and getattr(body[-1], "lineno", 0) > last_line):
                continue
            kept = [s for s in body if getattr(s, "lineno", 0) <= last_line]
            if not kept and name == "body" and not isinstance(node, ast.Module):
                kept = [ast.copy_location(ast.Pass(), body[0])]
            setattr(node, name, kept)
        stack.extend(ast.iter_child_nodes(node))


# every key that can make a JSON/YAML file a known config kind (config_kinds.known_config_kind)
_CONFIG_KEYS = sorted({key for _, any_of, all_of in config_kinds._KINDS for key in any_of | all_of}
                      | set(config_kinds._YAML_TRAINING_KEYS), key=len, reverse=True)
_CONFIG_KEY_BYTES = re.compile(("|".join(re.escape(k) for k in _CONFIG_KEYS)).encode())




def _maybe_config(job: Job, data: bytes) -> bool:
    """Could this JSON/YAML file be a config of a known kind? Raw bytes first: a file that spells
    none of the keys of any kind is data; otherwise the (line-matching) kind check decides."""
    head = data[:262144]
    if not _CONFIG_KEY_BYTES.search(head) and not config_kinds.FLAG_MAP_BYTES.search(head):
        return False
    text = head.decode("utf-8", errors="surrogateescape")
    return bool(config_kinds.known_config_kind(text, job.config_kind))


def _parse(job: Job, text: str, kb: KnowledgeBase, result: FileResult) -> Optional[ast.Module]:
    """The module's tree, or None with SC001 and token-level findings recorded in `result`."""
    try:
        return ast.parse(text, filename=job.rel)
    except (SyntaxError, ValueError) as exc:
        result.note = f"syntax error line {getattr(exc, 'lineno', '?')}: {getattr(exc, 'msg', exc)}"
    except (RecursionError, MemoryError):  # CPython's parser gives up on deep nesting with either
        result.note = "too deeply nested to parse"
    result.findings = ts.scan_tokens(kb, job.rel, text, result.note)
    return None


def _imports_only(job: Job, text: str, kb: KnowledgeBase, result: FileResult) -> FileResult:
    """A file the prefilter rules out: it can only contribute the frameworks it imports."""
    tree = _parse(job, text, kb, result)
    if tree is not None:
        result.frameworks = prefilter.framework_imports(tree, kb)
        result.entry = entries.module_facts(tree, text)
    return result


def analyse_python_text(job: Job, text: str, kb: KnowledgeBase, coverage: Any = None,
                        result: Optional[FileResult] = None,
                        outer: Optional[dict[str, Optional[str]]] = None,
                        tree: Optional[ast.Module] = None) -> FileResult:
    """Analyse already-decoded Python source (the migrator re-analyses its own output this way).
    `outer`: bindings of earlier notebook cells. `tree`: `ast.parse(text)` when the caller has
    it already (the analysis only reads it), so the source is not parsed twice."""
    if result is None:
        result = FileResult(lines=text.count("\n"))
    if tree is None:
        tree = _parse(job, text, kb, result)
    if tree is None:
        return result
    try:
        analyzer = PythonAnalyzer(kb, job.rel, text, tree, coverage=coverage, outer=outer)
        result.findings = analyzer.run()
        entry = entries.module_facts(tree, text)
    except (RecursionError, MemoryError):  # parsed, but too deep to walk: as if it did not parse
        result.note = "too deeply nested to analyse"
        result.findings = ts.scan_tokens(kb, job.rel, text, result.note)
        return result
    facts = analyzer.facts
    result.main_guard = facts.main_guard_line
    result.has_transfer_import = facts.has_transfer_import
    result.imports_torch_npu = facts.imports_torch_npu
    result.agnostic_prelude = AGNOSTIC_PRELUDE.search(text) is not None
    result.frameworks = dict(facts.frameworks)
    result.entry = entry
    name = job.rel.rsplit("/", 1)[-1]
    if name == "__main__.py" and not result.main_guard:
        result.main_guard = 1
    if name.lower() == "setup.py":
        deps, fws = ts.scan_dependencies(kb, job.rel, text)
        result.findings.extend(deps)
        for fw in fws:
            result.frameworks.setdefault(fw, 1)
        result.console_scripts = _console_scripts(text)
    _apply_suppressions(result, text)
    return result


def _analyse_other(job: Job, data: bytes, kb: KnowledgeBase, coverage: Any, result: FileResult) -> FileResult:
    # surrogate escapes keep one character per undecodable byte: columns match the migrator's
    text = data.decode("utf-8", errors="replace" if job.kind == "notebook" else "surrogateescape")
    if job.kind == "notebook":
        text = text.removeprefix("\ufeff")  # a byte order mark some editors save: still a notebook
        try:
            cells = ts.notebook_code_cells(text)
        except (ValueError, json.JSONDecodeError) as exc:
            result.note = f"not a readable notebook: {exc}"
            return result
        names: dict[str, Optional[str]] = {}  # cells share one namespace
        parsed: list[tuple[Optional[ast.Module], str]] = []
        for cell in cells:
            number, source = cell.number, cell.masked
            try:
                tree = ast.parse(source, filename=job.rel)
                parsed.append((tree, cell.source))
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                parsed.append((None, cell.source))
                why = (f"syntax error line {getattr(exc, 'lineno', '?')}" if isinstance(exc, (SyntaxError, ValueError))
                       else "too deeply nested to parse")
                for f in ts.scan_tokens(kb, job.rel, source, f"cell {number}: {why}"):
                    result.findings.append(f)
                continue
            analyzer = PythonAnalyzer(kb, job.rel, source, tree, coverage=coverage, cell=number, outer=names)
            result.findings.extend(analyzer.run())
            if cell.in_kernel:  # a %%writefile body binds nothing in the notebook
                names = analyzer.exported_names()
            for fw, line in analyzer.facts.frameworks.items():
                result.frameworks.setdefault(fw, line)
        result.entry = entries.notebook_facts(parsed)
        return result
    if job.kind == "cuda":
        result.findings = ts.scan_cuda_source(kb, job.rel, text)
        return result
    if job.kind == "dependency":
        result.findings, fws = ts.scan_dependencies(kb, job.rel, text)
        result.frameworks = {fw: 1 for fw in fws}
        if job.rel.rsplit("/", 1)[-1].lower() in ("pyproject.toml", "setup.cfg"):
            result.console_scripts = _console_scripts(text)
        _apply_suppressions(result, text)
        return result
    if job.kind == "config":
        result.findings = ts.scan_config(kb, job.rel, text, job.config_kind)
        launches = entries.launches(text, "sh") if job.config_kind == "sh" else []
        if config_kinds.is_build_config(job.rel, job.config_kind, text, [(n, t) for n, t, _ in launches]):
            # describes the build or CI host: reported for review, never rewritten, launches nothing
            result.findings = [replace(f, fixes=(), severity="info") for f in result.findings]
            result.build = True
        elif job.config_kind == "sh":
            result.launches = [launch for launch in launches if not config_kinds.is_build_target(launch[1])]
        if job.config_kind == "sh":
            result.config_refs = config_kinds.config_references(text)
        else:
            result.data_file = result.findings != [] and not config_kinds.known_config_kind(text, job.config_kind)
        _apply_suppressions(result, text)
        return result
    if job.kind == "launcher":
        result.launches = entries.launches(text, job.config_kind)
        result.counted = False
        if job.config_kind == "md":
            result.findings = ts.scan_docs(kb, job.rel, text)
            _apply_suppressions(result, text)
    return result


def _apply_suppressions(result: FileResult, text: str) -> None:
    if "ascend-migrate" not in text:
        return
    lines = text.splitlines()
    kept = []
    for f in result.findings:
        line = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        m = SUPPRESS.search(line)
        if m and (m.group(1) is None or f.rule in {r.strip().upper() for r in m.group(1).split(",")}):
            continue
        kept.append(f)
    result.findings = kept


_SCRIPT_SPEC = re.compile(r"""["']?(?<![\w.-])[\w.-]+["']?\s*=\s*["']?([A-Za-z_][\w.]*)\s*:\s*([A-Za-z_][\w.]*)""")


# `scripts.NAME = "pkg.mod:func"` (a dotted key in [project], or `project.scripts.NAME` at the
# top level) and `scripts = { NAME = "..." }`
_SCRIPTS_KEY = r"""^\s*(?:project\s*\.\s*)?(?:gui-)?scripts\s*"""
_DOTTED_SCRIPT = re.compile(_SCRIPTS_KEY + r"""\.\s*["']?[\w.-]+["']?\s*=\s*["']([A-Za-z_][\w.]*)\s*:\s*([A-Za-z_][\w.]*)""")
_INLINE_SCRIPTS = re.compile(_SCRIPTS_KEY + r"""=\s*\{([^}]*)\}""")


def _console_scripts(text: str) -> list[str]:
    """`module:function` behind each console_scripts / [project.scripts] / poetry scripts entry
    (the function is what the generated command calls after importing the module)."""
    modules = []
    in_section = False
    for line in text.splitlines():
        dotted = _DOTTED_SCRIPT.match(line)
        if dotted:
            modules.append(f"{dotted.group(1)}:{dotted.group(2)}")
            continue
        inline = _INLINE_SCRIPTS.match(line)
        if inline:
            modules.extend(f"{m.group(1)}:{m.group(2)}" for m in _SCRIPT_SPEC.finditer(inline.group(1)))
            continue
        header = re.search(r"console_scripts|\[project\.scripts\]|\[tool\.poetry\.scripts\]|\[project\.gui-scripts\]"
                           r"|\[tool\.flit\.scripts\]", line)
        if header:
            in_section = True
            line = line[header.end():]  # setup.py often lists the scripts on the same line
        if in_section and re.match(r"^\s*\[", line) and "scripts" not in line:
            in_section = False
        if in_section:
            for m in _SCRIPT_SPEC.finditer(line):
                modules.append(f"{m.group(1)}:{m.group(2)}")
    return modules


# --------------------------------------------------------------------------- cache
CACHE_FORMAT = 7  # 5: JSON (cache_codec) instead of a pickle, which would run code on load; 6: console
# scripts as `module:function`, entry decisions with the function that gets the imports; 7: entries
# keep the inode-change time and inode
RACY_NS = 2_000_000_000  # a file modified this close to the index's writing is re-hashed


@dataclass
class CacheEntry:
    """A file's result, trusted while its stats stay the same. A rewrite that keeps the size and
    puts the old modification time back still changes the inode-change time (or the inode, when
    the file is replaced by a rename), so all four are compared."""

    size: int
    mtime_ns: int
    key: bytes  # content hash
    result: FileResult
    view: bytes = b""  # digest of what the entry-point decision reads from this file
    ctime_ns: int = 0
    ino: int = 0


@dataclass
class CacheIndex:
    """One file per scanned tree: every file's (size, mtime, hash, result), for one rule set."""
    digest: str = ""
    saved_ns: int = 0  # when the scan that wrote it started: files changed since are never trusted
    files: dict[str, CacheEntry] = field(default_factory=dict)
    # The entry-point decisions of the last scan and the key of their inputs (every file's
    # view digest and the overrides): an edit that changes no import or evidence keeps them.
    entries_key: bytes = b""
    entries: tuple = ()


_DIGEST: dict[str, str] = {}


def _kb_digest() -> str:
    """The rule set's identity: tool version, knowledge base files and the analysers' sources."""
    h = hashlib.blake2b(digest_size=12)
    h.update(__version__.encode())
    for path in sorted(DATA_DIR.rglob("*")):
        if path.suffix in (".yaml", ".json") and path.is_file():
            h.update(path.name.encode())
            h.update(path.read_bytes())
    for path in user_coverage_files():  # releases the user synced stand in for packaged ones
        h.update(b"user:" + path.name.encode())
        h.update(path.read_bytes())
    for module in ("python_ast.py", "text_scanners.py", "engine.py", "config_kinds.py", "stray_bytes.py",
                   "entries.py", "prefilter.py"):
        h.update((Path(__file__).parent / module).read_bytes())
    return h.hexdigest()


def _cache_file(root: Path, npu_version: str) -> Path:
    key = hashlib.blake2b(f"{root.resolve()}|{npu_version}|{CACHE_FORMAT}".encode(), digest_size=12).hexdigest()
    return cache_dir() / "scan" / f"{key}.index"


_CODEC: Optional[Codec] = None


def _codec() -> Codec:
    """The cache's codec, built once: it may only ever construct these classes."""
    global _CODEC
    if _CODEC is None:
        from ascend_migrate.scan.finding import Edit, Fix, Position
        _CODEC = Codec((CacheIndex, CacheEntry, FileResult, Finding, Fix, Edit, Position,
                        entries.EntryFacts, entries.ImportRef, entries.Decision))
    return _CODEC


def _load_cache(path: Path, digest: str) -> CacheIndex:
    """The tree's index, read in one go; empty when missing, unreadable, not an index this
    version wrote (garbage, a planted pickle: never executed, only parsed as JSON and refused)
    or for another rule set."""
    try:
        with path.open("rb") as fh:
            data = _codec().loads(fh.read())
    except (OSError, CacheFormatError):
        return CacheIndex(digest)
    if (not isinstance(data, CacheIndex) or data.digest != digest
            or not all(type(k) is str and isinstance(v, CacheEntry) and isinstance(v.result, FileResult)
                       for k, v in data.files.items())):
        return CacheIndex(digest)
    return data


def _save_cache(path: Path, index: CacheIndex) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(_codec().dumps(index))
        os.replace(tmp, path)
    except OSError:
        pass  # caching is an optimisation; never fail a scan for it


# --------------------------------------------------------------------------- parallel workers
_WORKER_STATE: dict[str, Any] = {}


def _worker_init(npu_version: Optional[str]) -> None:
    _WORKER_STATE["kb"] = load_knowledge()
    _WORKER_STATE["coverage"] = _load_coverage(npu_version)
    worker_gc()


def worker_gc() -> None:
    """Collect garbage less often in a worker process (never in a caller's process).

    A worker builds and drops one syntax tree per file: millions of short-lived container
    objects. With the default thresholds the collector runs every 700 allocations and its
    older generations keep walking the knowledge base and coverage tables loaded at start.
    Those are frozen (never collected: they live as long as the worker) and young objects
    are collected every 100,000 allocations; on Megatron-LM a one-process cold scan took
    about 8% less CPU (bench/cold_breakdown.py, bench/README.md). What is found does not
    depend on when garbage is collected."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def _worker(batch: list[tuple[Job, str, Optional[bytes]]]) -> list[tuple]:
    kb = _WORKER_STATE["kb"]
    cov = _WORKER_STATE["coverage"]
    return [_process(job, full, old, kb, cov) for job, full, old in batch]


def content_key(data: bytes) -> bytes:
    """The hash a file's cached result is kept under (the migrator checks it before re-using one)."""
    return hashlib.blake2b(data, digest_size=16).digest()


def _process(job: Job, full: str, old_key: Optional[bytes], kb: KnowledgeBase, cov: Any) -> tuple:
    """Read, check, hash and analyse one file: ("note", reason), ("same", key) when the content
    hash equals `old_key` (the cached result stands), or ("new", key, FileResult)."""
    try:
        with open(full, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return ("note", f"unreadable: {exc.strerror or exc}")
    own = own_output_kind(job.rel, data)
    if own:
        return ("note", f"skipped: written by ascend-migrate ({own})")
    if b"\0" in data[:8192] and job.kind != "notebook":
        return ("note", "skipped: binary content")
    key = content_key(data)
    if key == old_key:
        return ("same", key)
    return ("new", key, _safe_analyse(job, data, kb, cov))


def _safe_analyse(job: Job, data: bytes, kb: KnowledgeBase, cov: Any, defer_data: bool = True) -> FileResult:
    try:
        return analyse(job, data, kb, cov, defer_data=defer_data)
    except RecursionError:
        return FileResult(note="too deeply nested to analyse")
    except Exception as exc:  # one odd file must not lose the whole scan
        return FileResult(note=f"{INTERNAL_PREFIX}: {type(exc).__name__}: {exc}")


def _load_coverage(version: Optional[str]) -> Any:
    try:
        from ascend_migrate.knowledge import coverage as cov_mod
    except ImportError:
        return None
    return cov_mod.load_coverage(version)


def resolve_npu_version(version: Optional[str]) -> str:
    """The torch_npu version whose coverage is used ('' when none is shipped)."""
    try:
        from ascend_migrate.knowledge import coverage as cov_mod
    except ImportError:
        if version:
            raise ConfigError("no torch_npu coverage data is available in this build")
        return ""
    from ascend_migrate.knowledge.loader import KnowledgeError

    if version is None and not cov_mod.available_versions():
        return ""
    try:
        return cov_mod.resolve_version(version)
    except KnowledgeError as exc:
        raise ConfigError(str(exc)) from exc


# --------------------------------------------------------------------------- the scan
def run_scan(root: Path, *, select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None,
             jobs: Optional[int] = None, use_cache: bool = True, torch_npu_version: Optional[str] = None,
             progress: Optional[Callable[[int, int], Any]] = None, entry: Iterable[str] = (),
             no_entry: Iterable[str] = (), exclude: Iterable[str] = ()) -> ScanResult:
    started = time.perf_counter()
    if not root.exists():
        raise ConfigError(f"{root}: no such file or directory")
    kb = load_knowledge()
    npu_version = resolve_npu_version(torch_npu_version)
    scan_root = root if root.is_dir() else root.parent
    config = load_project_config(scan_root) if root.is_dir() else ProjectConfig()
    select = tuple(s.upper() for s in (select or config.select))
    ignore = tuple(s.upper() for s in (ignore or config.ignore))
    for prefix in (*select, *ignore):
        if not any(rid.startswith(prefix) for rid in kb.rules):
            raise ConfigError(f"no rule matches {prefix!r} (see `ascend-migrate rules`)")

    result = ScanResult(root=str(root), torch_npu_version=npu_version)
    job_list = discover(root, (*config.exclude, *exclude), result.notes)
    cache_path = _cache_file(scan_root, npu_version)
    cache = _load_cache(cache_path, _kb_digest()) if use_cache else CacheIndex()
    trusted_before = cache.saved_ns - RACY_NS
    # stamped with the scan's start: a file changed while the scan ran is never trusted later
    fresh = CacheIndex(cache.digest, saved_ns=time.time_ns())

    results: dict[str, FileResult] = {}
    skipped: dict[str, str] = {}  # rel -> reason, reported in discovery order
    todo: list[tuple[Job, str, Optional[bytes]]] = []
    stats: dict[str, tuple[int, int]] = {}
    for job in job_list:
        full = scan_root / job.rel if root.is_dir() else root
        try:
            st = os.stat(full)
        except OSError as exc:
            skipped[job.rel] = f"unreadable: {exc.strerror or exc}"
            continue
        if st.st_size > MAX_FILE_BYTES:
            skipped[job.rel] = f"skipped: {st.st_size} bytes is over the {MAX_FILE_BYTES}-byte limit"
            continue
        hit = cache.files.get(job.rel)
        if hit is not None and (hit.size, hit.mtime_ns, hit.ctime_ns, hit.ino) == \
                (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) \
                and max(st.st_mtime_ns, st.st_ctime_ns) < trusted_before:
            results[job.rel] = hit.result
            fresh.files[job.rel] = hit
            continue
        stats[job.rel] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        todo.append((job, str(full), hit.key if hit is not None else None))

    total = len(results) + len(todo)
    done = len(results)
    if progress:
        progress(done, total)

    def take(job: Job, out: tuple) -> None:
        if out[0] == "note":
            skipped[job.rel] = out[1]
            return
        size, mtime, ctime, ino = stats[job.rel]
        if out[0] == "same":  # touched, not changed: the cached result stands
            entry = replace(cache.files[job.rel], size=size, mtime_ns=mtime, ctime_ns=ctime, ino=ino)
        else:
            entry = CacheEntry(size, mtime, out[1], out[2], ctime_ns=ctime, ino=ino)
        results[job.rel] = entry.result
        fresh.files[job.rel] = entry

    kept = [sum(len(r.findings) for r in results.values())]  # findings the scan holds so far

    def over_limit() -> str:
        """Why the scan analyses no more files ('' while it may): a bound on the findings one scan
        keeps and on its time, so a tree of generated files cannot take hours or gigabytes."""
        if kept[0] >= MAX_SCAN_FINDINGS:
            return f"not analysed: the scan keeps at most {MAX_SCAN_FINDINGS:,} findings and reached that"
        if time.perf_counter() - started > MAX_SCAN_SECONDS:
            return f"not analysed: the scan's time limit of {MAX_SCAN_SECONDS:g} s was reached"
        return ""

    def take_counted(job: Job, out: tuple) -> None:
        take(job, out)
        if job.rel in results:
            kept[0] += len(results[job.rel].findings)

    workers = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    if len(todo) < 64 or workers == 1:
        cov = _load_coverage(npu_version) if npu_version else None
        for job, full_path, old in todo:
            why = over_limit()
            if why:
                skipped[job.rel] = why
            else:
                take_counted(job, _process(job, full_path, old, kb, cov))
            done += 1
            if progress:
                progress(done, total)
    else:
        batches = _batches(todo, workers * 8)
        with ProcessPoolExecutor(max_workers=workers, initializer=_worker_init,
                                 initargs=(npu_version or None,)) as pool:
            for number, (batch, outs) in enumerate(zip(batches, pool.map(_worker, batches))):
                for (job, _, _), out in zip(batch, outs):
                    why = over_limit()
                    if why:
                        skipped[job.rel] = why
                    else:
                        take_counted(job, out)
                done += len(batch)
                if progress:
                    progress(done, total)
                if over_limit():  # the batches not started yet are not started at all
                    pool.shutdown(wait=False, cancel_futures=True)
                    for rest in batches[number + 1:]:
                        for job, _, _ in rest:
                            skipped[job.rel] = over_limit()
                    break
    for job in job_list:
        if job.rel in skipped:
            result.notes.append(FileNote(job.rel, skipped[job.rel]))
    result.lead_notes = len(result.notes)
    named = _named_data_files(results, scan_root, kb)
    for rel, res in named.items():  # kept analysed in the cache: a warm scan does not redo them
        results[rel] = res
        if rel in fresh.files:
            fresh.files[rel] = replace(fresh.files[rel], result=res, view=b"")  # a new result: a new view
    _aggregate(result, results, kb, scan_root)
    result.analyses = {rel: (entry.key, tuple(entry.result.findings)) for rel, entry in fresh.files.items()
                       if entry.result.analysed and entry.result is results.get(rel)}
    result.file_results = {rel: (entry.key, results[rel]) for rel, entry in fresh.files.items() if rel in results}
    fresh.entries_key, fresh.entries = cache.entries_key, cache.entries
    _decide_entries(result, results, root, entry, no_entry, fresh)
    if use_cache and (todo or named or len(fresh.files) != len(cache.files)
                      or fresh.entries_key != cache.entries_key):
        _save_cache(cache_path, fresh)
    result.selection = (select, ignore)
    result.findings = [f for f in result.findings if _selected(f.rule, select, ignore)]
    result.findings.sort(key=Finding.sort_key)
    result.duration_s = time.perf_counter() - started
    return result


def _batches(items: list, n: int) -> list[list]:
    size = max(1, -(-len(items) // n))
    return [items[i:i + size] for i in range(0, len(items), size)]


def _selected(rule: str, select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    if select and not any(rule.startswith(s) for s in select):
        return False
    return not any(rule.startswith(s) for s in ignore)


def _aggregate(result: ScanResult, results: dict[str, FileResult], kb: KnowledgeBase, root: Path) -> None:
    frameworks: dict[str, tuple[str, int]] = {}
    refs = _refs_by_name(results)
    for rel in sorted(results):
        res = results[rel]
        if res.counted:
            result.files_scanned += 1
            result.lines_scanned += res.lines
        # Data files no launch script names are left alone: their findings, and what their notes
        # and kind say of them, count only while a script names them (an analysis kept in the
        # cache from a scan that named the file then says no more than an unanalysed file).
        left_alone = res.data_file and not _named(refs, rel)
        if not left_alone:
            result.findings.extend(res.findings)
            if res.note:
                result.notes.append(FileNote(rel, res.note))
            if res.build:
                result.build_configs.append(rel)
        for fw, line in res.frameworks.items():
            frameworks.setdefault(fw, (rel, line))
    _drop_unpinned(result, results, kb, root)
    rule = kb.rule("FW001")
    labels = {fw.key: fw for fw in kb.frameworks}
    agnostic = is_agnostic_port(results)
    for key, (rel, line) in sorted(frameworks.items()):
        fw = labels[key]
        guidance = fw.guidance_agnostic if agnostic and fw.guidance_agnostic else fw.guidance
        result.findings.append(Finding(
            rule=rule.id, path=rel, line=line, col=0, end_line=line, end_col=0,
            message=format_message(rule, symbol=fw.label, detail=guidance), severity=rule.severity,
            confidence="high", symbol=fw.label))
    if agnostic:
        result.findings[:] = [_agnostic_wording(f, kb) for f in result.findings]


_PIN_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml")


def _version(text: str) -> tuple[int, ...]:
    """The first three numbers of a version, padded with zeros (`4.40` -> (4, 40, 0))."""
    parts = [int(p) for p in re.findall(r"\d+", text)[:3]]
    return tuple(parts + [0] * (3 - len(parts))) if parts else ()


# A pin line of one package: its name at the start of a line (after quotes, a list dash or
# indentation, never across lines), optional extras, then the version clauses. Each piece has one
# way to match, so a crafted line costs time linear in its length.
_PIN_HEAD = r"""(?im)^[ \t"'\-]*"""
_PIN_VERSIONS = r"""[ \t]*(?:\[[^\]\n]*\][ \t]*)?((?:[=<>~!]=?[ \t]*[\w.*]+[ \t]*(?:,[ \t]*)?)+)"""


def pinned_ceiling(texts: Iterable[str], package: str) -> Optional[tuple[int, ...]]:
    """The highest version of `package` the project's pins allow (`==4.40.0` -> 4.40.0,
    `<4.46` -> just under 4.46, `~=4.38.0` -> 4.38.x), or None when no pin bounds it from above
    (not listed, `>=` only, a URL): then pip takes the newest release."""
    spec = re.compile(_PIN_HEAD + re.escape(package) + _PIN_VERSIONS)
    ceiling: Optional[tuple[int, ...]] = None
    for text in texts:
        for m in spec.finditer(text):
            for op, ver in re.findall(r"([=<>~!]=?)\s*([\w.*]+)", m.group(1)):
                v = _version(ver)
                if not v:
                    continue
                if op in ("==", "<=", "==="):
                    top = v + (0,)
                elif op == "<":
                    top = v + (-1,)  # just under v
                elif op == "~=":
                    top = v[:-1] + (1 << 30,) * (4 - len(v[:-1]))
                else:
                    continue
                ceiling = top if ceiling is None else min(ceiling, top)
    return ceiling


def _drop_unpinned(result: ScanResult, results: dict[str, FileResult], kb: KnowledgeBase, root: Path) -> None:
    """Findings of rules that hold only under an old release of a library (`needs_pin`: the
    release that added the NPU path) are kept only where the project's requirements, pyproject
    or setup.py pin that library below it; an unpinned library is the newest release."""
    gated = {r.id: r.match["needs_pin"] for r in kb.rules.values() if r.match.get("needs_pin")}
    if not gated or not any(f.rule in gated for f in result.findings):
        return
    base = root if root.is_dir() else root.parent
    texts = []
    for rel in results:
        name = rel.rsplit("/", 1)[-1].lower()
        if name in _PIN_FILES or (name.startswith("requirements") and name.endswith((".txt", ".in"))):
            try:
                texts.append((base / rel).read_text(encoding="utf-8", errors="replace")[:262144])
            except OSError:
                continue
    keep = {}
    for rule_id, pin in gated.items():
        ceiling = pinned_ceiling(texts, pin["package"])
        keep[rule_id] = ceiling is not None and ceiling < _version(pin["below"]) + (0,)
    result.findings[:] = [f for f in result.findings if keep.get(f.rule, True)]


def is_agnostic_port(results: dict[str, FileResult]) -> bool:
    """A device-agnostic port: some module has the agnostic rewrite's `_accel_type` binding and
    no file imports transfer_to_npu. Messages that explain what transfer_to_npu would do are then
    about a mechanism the tree does not use."""
    values = results.values()
    return any(r.agnostic_prelude for r in values) and not any(r.has_transfer_import for r in values)


def _agnostic_wording(finding: Finding, kb: KnowledgeBase) -> Finding:
    """`finding` with its rule's agnostic message, keeping any prefix (notebook cell) and suffix
    (npu branch, partial behaviour) the analyser added around the rule's own words."""
    rule = kb.rules.get(finding.rule)
    if rule is None or not rule.message_agnostic:
        return finding
    plain = format_message(rule, symbol=finding.symbol)
    if plain not in finding.message:
        return finding
    agnostic = rule.message_agnostic.format_map(_KeepMissing(symbol=finding.symbol))
    return replace(finding, message=finding.message.replace(plain, agnostic, 1))


class _KeepMissing(dict):
    """Placeholders a message fills later stay as they are."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _refs_by_name(results: dict[str, FileResult]) -> dict[str, list[str]]:
    """The JSON/YAML paths launch scripts name, by file name."""
    refs: dict[str, list[str]] = {}
    for res in results.values():
        for ref in res.config_refs:
            refs.setdefault(ref.rsplit("/", 1)[-1], []).append(ref)
    return refs


def _named(refs: dict[str, list[str]], rel: str) -> bool:
    return any(config_kinds.reference_matches(ref, rel) for ref in refs.get(rel.rsplit("/", 1)[-1], ()))


def _named_data_files(results: dict[str, FileResult], root: Path, kb: KnowledgeBase) -> dict[str, FileResult]:
    """Data files left unscanned that a launch script names, now analysed as configs."""
    refs = _refs_by_name(results)
    out: dict[str, FileResult] = {}
    for rel, res in results.items():
        if not res.deferred or not _named(refs, rel):
            continue
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        full = _safe_analyse(classify(rel) or Job(rel, "config", "json"), data, kb, None, defer_data=False)
        out[rel] = replace(full, data_file=True)
    return out


def _view_digest(res: FileResult) -> bytes:
    view = (res.entry, tuple(res.launches), tuple(res.console_scripts))
    return hashlib.blake2b(repr(view).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _decide_entries(result: ScanResult, results: dict[str, FileResult], root: Path,
                    entry: Iterable[str], no_entry: Iterable[str], index: Optional[CacheIndex] = None) -> None:
    """Entry points from the evidence of every file (see scan/entries.py), with overrides.

    With an index, the decisions are re-used when no file's view and no override changed:
    deciding resolves every import of the tree, the largest fixed cost of a warm re-scan."""
    forced = [_override_path(root, p) for p in entry]
    refused = [_override_path(root, p) for p in no_entry]
    for given, rel in zip((*entry, *no_entry), (*forced, *refused)):
        if rel not in results or not rel.endswith((".py", ".ipynb")):
            raise ConfigError(f"{given}: not a Python file or notebook of the scanned tree (--entry/--no-entry)")
    decisions = None
    if index is not None:
        key = hashlib.blake2b(repr((sorted(forced), sorted(refused), root.is_dir())).encode(), digest_size=16)
        for rel in sorted(results):
            cached = index.files.get(rel)
            if cached is not None and cached.result is results[rel]:
                if not cached.view:
                    cached.view = _view_digest(results[rel])
                digest = cached.view
            else:
                digest = _view_digest(results[rel])
            key.update(rel.encode("utf-8", "surrogatepass") + b"\0" + digest)
        if index.entries_key == key.digest():
            decisions = list(index.entries)
        else:
            index.entries_key = key.digest()
    if decisions is None:
        views = {rel: entries.FileView(res.entry, res.launches, res.console_scripts) for rel, res in results.items()}
        decisions = entries.decide(views, entry=forced, no_entry=refused, whole_tree=root.is_dir())
        if index is not None:
            index.entries = tuple(decisions)
    for d in decisions:
        res = results.get(d.path)
        point = EntryPoint(d.path, d.line, d.kind, d.has_transfer_import or bool(res and res.has_transfer_import),
                           d.imports_torch_npu or bool(res and res.imports_torch_npu), d.reason, d.selected,
                           d.guarded, d.inject_function)
        (result.entry_points if d.selected else result.rejected_entry_points).append(point)


def _override_path(root: Path, path: str) -> str:
    """An --entry/--no-entry FILE as a path relative to the scan root (given relative to it, or to
    the current folder, or absolute)."""
    base = root if root.is_dir() else root.parent
    candidate = Path(path)
    for full in (candidate, Path.cwd() / candidate):
        try:
            return full.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return candidate.as_posix()
