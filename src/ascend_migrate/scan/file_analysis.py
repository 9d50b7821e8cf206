"""The analysis of one file's bytes: decode, prefilter, parse, run the Python analyser or the
text scanners, cap the findings per rule, apply the ignore comments. Pure: no I/O, and nothing
of the scanned code is imported or run."""
from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from typing import Any, Optional

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.scan import config_kinds, dependencies, entries, notebook_cells, prefilter
from ascend_migrate.scan import text_scanners as ts
from ascend_migrate.scan.bounds import (MAX_FILE_CANDIDATES, MAX_FILE_FINDINGS, MAX_FINDINGS_PER_RULE, capped_summary,
                                        summary_count)
from ascend_migrate.scan.finding import Finding
from ascend_migrate.scan.pyast.context import AGNOSTIC_PRELUDE
from ascend_migrate.scan.python_ast import PythonAnalyzer
from ascend_migrate.scan.jobs import FileResult, Job
from ascend_migrate.scan.stray_bytes import decode_with_stray_bytes
from ascend_migrate.scan.suppress import SUPPRESS


def decode_source(data: bytes) -> tuple[Optional[str], str]:
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
        text, problem = decode_source(data)
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
        deps, fws = dependencies.scan_dependencies(kb, job.rel, text)
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
            cells = notebook_cells.notebook_code_cells(text)
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
        result.findings, fws = dependencies.scan_dependencies(kb, job.rel, text)
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
