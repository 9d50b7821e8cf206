"""Dependency files (requirements*.txt, setup.py, setup.cfg, pyproject.toml, environment.yml):
CUDA-only packages, CUDA wheel indexes and local versions, framework pins the NPU stack lacks."""
from __future__ import annotations

import re
from typing import Callable, Iterable, Optional

from ascend_migrate.knowledge.base import KnowledgeBase, Rule, format_message, normalise_dist_name
from ascend_migrate.scan.bounds import RuleCap, clip
from ascend_migrate.scan.finding import Finding

_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9_,.\s-]+\])?)")


def _package_index(kb: KnowledgeBase) -> dict[str, tuple[str, str]]:
    """normalised distribution name -> (kind, guidance)."""
    index: dict[str, tuple[str, str]] = {}
    for fw in kb.frameworks:
        for name in fw.names:
            index[normalise_dist_name(name)] = ("framework:" + fw.key, fw.guidance)
    for pkg in kb.packages:
        for name in pkg.names:
            index[normalise_dist_name(name)] = ("package:" + pkg.key, pkg.guidance)
    return index


def _package_patterns(kb: KnowledgeBase) -> list[tuple["re.Pattern[str]", str, str]]:
    """(regex over normalised names, kind, guidance) for package families named by pattern."""
    return [(re.compile(pat), "package:" + pkg.key, pkg.guidance) for pkg in kb.packages for pat in pkg.patterns]


def _match_requirement(spec: str, index: dict[str, tuple[str, str]],
                       patterns: Iterable[tuple["re.Pattern[str]", str, str]] = ()) -> Optional[tuple[str, str, str]]:
    m = _REQ_NAME.match(spec)
    if not m:
        return None
    raw = m.group(1)
    full = normalise_dist_name(raw.replace(" ", ""))
    base = normalise_dist_name(raw.split("[")[0])
    for key in (full, base):
        if key in index:
            kind, guidance = index[key]
            return raw, kind, guidance
    for regex, kind, guidance in patterns:
        if regex.match(base):
            return raw, kind, guidance
    return None


# Where CUDA builds of wheels come from: PyTorch's per-CUDA indexes (/whl/cu121), NVIDIA's index,
# PyG wheel pages for +cuXXX builds. A `+cuXXX` local version pins a CUDA build by name.
CUDA_WHEEL_URL = re.compile(
    r"(?i)https?://[^\s'\"]*?(?:[/+]cu\d{2,3}(?![\w])|pypi(?:\.ngc)?\.nvidia\.com)[^\s'\"]*")
CUDA_LOCAL_VERSION = re.compile(r"(?<=[\d*])\+cu\d{2,3}\b")
_INDEX_OPTION = re.compile(r"^\s*(--extra-index-url|--index-url|-i|--find-links|-f)\b")


def _cuda_wheel_sources(kb: KnowledgeBase, path: str, lines: list[str], pip_options: bool) -> list[Finding]:
    """PK003: CUDA wheel indexes (in pip option lines, or anywhere for scripts) and +cuXXX pins."""
    rules = kb.rules_of_kind("dependency-index")
    if not rules:
        return []
    rule = rules[0]
    keep = RuleCap(path)
    for lineno, line in enumerate(lines, 1):
        code = line.split("#", 1)[0] if pip_options else line[: _comment_start(line, "sh")]
        hits: list[tuple[int, int, str]] = []
        if not pip_options or _INDEX_OPTION.match(code):
            for m in CUDA_WHEEL_URL.finditer(code):
                hits.append((m.start(), m.end(), "a wheel index of CUDA builds"))
        urls = len(hits)
        k = 0  # both runs are in order: one pass tells which pins lie inside a URL
        for m in CUDA_LOCAL_VERSION.finditer(code):
            while k < urls and hits[k][1] <= m.start():
                k += 1
            if not (k < urls and hits[k][0] <= m.start()):
                hits.append((m.start(), m.end(), "a CUDA build pinned by its local version"))
        snippet = _snippet(line) if hits else ""
        for start, end, detail in hits:
            def build(start: int = start, end: int = end, detail: str = detail) -> Finding:
                symbol = clip(code[start:end])
                return Finding(
                    rule=rule.id, path=path, line=lineno, col=start, end_line=lineno, end_col=end,
                    message=format_message(rule, symbol=symbol, detail=detail), severity=rule.severity,
                    confidence="high", snippet=snippet, symbol=symbol)
            keep.offer(rule.id, lineno, start, build)
    return keep.findings()


def _snippet(line: str) -> str:
    """The snippet a finding of `line` shows: computed once per line, not once per finding
    (`line.strip()` copies the whole line, so per finding it was quadratic on a long line)."""
    return line.strip()[:200]


def _dependency_lines(path: str, text: str) -> Iterable[tuple[int, int, str]]:
    """(line, col, requirement string) for each dependency declared in the file."""
    name = path.rsplit("/", 1)[-1].lower()
    lines = text.splitlines()
    if name.endswith(".txt") or name.endswith(".in"):
        for i, line in enumerate(lines, 1):
            stripped = line.split("#", 1)[0].strip()
            if stripped and not stripped.startswith(("-", "git+", "http")):
                yield i, len(line) - len(line.lstrip()), stripped
    elif name in ("environment.yml", "environment.yaml", "conda.yml", "conda.yaml"):
        for i, line in enumerate(lines, 1):
            m = re.match(r"^(\s*-\s+)([A-Za-z0-9][^\s#=<>!]*)", line)
            if m:  # the item up to a comment, cut with str methods (a lazy regex was quadratic)
                item = (m.group(2) + line[m.end(2):].split("#", 1)[0]).rstrip()
                yield i, len(m.group(1)), item.strip().strip("'\"").replace("=", "==", 1) if "==" not in item else item
    elif name == "pyproject.toml":
        section = ""
        for i, line in enumerate(lines, 1):
            header = re.match(r"^\s*\[([^\]]+)\]", line)
            if header:
                section = header.group(1).strip()
                continue
            if section.startswith("tool.poetry") and "dependencies" in section:
                m = re.match(r'^\s*"?([A-Za-z0-9][A-Za-z0-9._-]*)"?\s*=', line)
                if m and m.group(1).lower() != "python":
                    yield i, line.index(m.group(1)), m.group(1)
                continue
            for q in re.finditer(r'["\']([A-Za-z0-9][^"\']*)["\']', line):
                if section in ("project", "project.optional-dependencies", "build-system") or section.startswith("dependency-groups"):
                    if section == "project" and not _inside_array(lines, i, ("dependencies",)):
                        continue
                    yield i, q.start(1), q.group(1)
    elif name in ("setup.py", "setup.cfg"):
        in_requires = False
        for i, line in enumerate(lines, 1):
            if re.search(r"(install_requires|extras_require|setup_requires|requires)\s*[=:]", line):
                in_requires = True
            if in_requires:
                for q in re.finditer(r'["\']([A-Za-z0-9][^"\']*)["\']', line):
                    yield i, q.start(1), q.group(1)
                if name == "setup.cfg":
                    m = re.match(r"^\s+([A-Za-z0-9][^\s#;]*)", line)
                    if m and not re.search(r"[=:]\s*$", line):
                        yield i, m.start(1), m.group(1)
                if (name == "setup.py" and "]" in line) or (name == "setup.cfg" and line.strip() == ""):
                    in_requires = False


def _inside_array(lines: list[str], lineno: int, keys: tuple[str, ...]) -> bool:
    """Is line `lineno` inside a `key = [ ... ]` array (TOML) for one of keys?"""
    depth = 0
    for j in range(lineno - 1, -1, -1):
        line = lines[j]
        depth += line.count("]") - line.count("[") if j != lineno - 1 else 0
        m = re.match(r"^\s*([A-Za-z0-9_-]+)\s*=", line)
        if m:
            return m.group(1) in keys and "[" in line
    return False


_PIN_SPEC = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9_,.\s-]+\])?)\s*(.*)$")


def _framework_pin_rules(kb: KnowledgeBase) -> list[tuple[Rule, set[str]]]:
    return [(rule, {normalise_dist_name(n) for n in rule.match["packages"]}) for rule in kb.rules_of_kind("framework-pin")]


def _version_spec(rest: str) -> str:
    """The version specifier of a requirement (`==2.6.5`, `>=2.4,<2.7`, poetry `"^2.6"` is left out)."""
    rest = rest.split(";", 1)[0].strip().strip("'\"")
    rest = re.sub(r"^\s*=\s*[\"']?", "", rest) if rest.startswith("=") and not rest.startswith("==") else rest
    return rest.replace(" ", "")


def _framework_pin_findings(pins: list[tuple[Rule, set[str]]], path: str, line: int, col: int, spec: str,
                            snippet_of: "Callable[[int], str]") -> list[tuple[str, Finding]]:
    """framework-pin rules: a framework's GPU wheel (no `supported` table), or a version pin outside
    the versions Ascend supports (`supported`: specifier -> what runs it there)."""
    m = _PIN_SPEC.match(spec)
    if not m:
        return []
    raw = m.group(1)
    names = {normalise_dist_name(raw.replace(" ", "")), normalise_dist_name(raw.split("[")[0])}
    version = _version_spec(m.group(2))
    out: list[tuple[str, Finding]] = []
    for rule, packages in pins:
        if not names & packages:
            continue
        supported = rule.match.get("supported")
        if supported is None:
            detail = rule.npu
            symbol = raw
        else:
            detail = _unsupported_version(version, supported)
            if detail is None:
                continue
            symbol = f"{raw}{version}"
        symbol = clip(symbol)
        finding = Finding(
            rule=rule.id, path=path, line=line, col=col, end_line=line, end_col=col + len(spec),
            message=format_message(rule, symbol=symbol, detail=detail), severity=rule.severity,
            confidence="high", snippet=snippet_of(line), symbol=symbol)
        out.append((rule.match["framework"], finding))
    return out


def _unsupported_version(version: str, supported: dict) -> Optional[str]:
    """Why a version specifier misses every supported version, or None when one fits."""
    if len(supported) > 3:  # a long matrix: the versions, then the newest row in full
        first = next(iter(supported.items()))
        wanted = (", ".join(spec.lstrip("=") for spec in supported)
                  + f" (newest: {first[0].lstrip('=')} with {first[1]})")
    else:
        wanted = ", ".join(f"{spec.lstrip('=')} ({what})" for spec, what in supported.items())
    if not version:
        return f"unpinned, so pip installs the newest release; Ascend supports only {wanted}"
    try:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.version import Version
    except ImportError:  # pragma: no cover - packaging ships with pip
        return None
    try:
        allowed = SpecifierSet(version)
    except InvalidSpecifier:
        return None
    exact = re.fullmatch(r"===?([0-9][0-9A-Za-z.*+!-]*)", version)
    for spec in supported:
        target = SpecifierSet(spec)
        if exact and "*" not in exact.group(1):
            if target.contains(Version(exact.group(1)), prereleases=True):
                return None
            continue
        base = spec.lstrip("=")
        probes = [base.replace("*", str(i)) for i in range(10)] if "*" in base else [base]
        if any(allowed.contains(Version(p), prereleases=True) for p in probes):
            return None
    return f"{clip(version)} is outside what Ascend supports: {wanted}"  # the file's text, clipped


def scan_dependencies(kb: KnowledgeBase, path: str, text: str) -> tuple[list[Finding], set[str]]:
    """PK001 findings for CUDA-only packages; returns also the frameworks declared."""
    index = _package_index(kb)
    patterns = _package_patterns(kb)
    rule = kb.rule("PK001")
    findings: list[Finding] = []
    frameworks: set[str] = set()
    lines = text.splitlines()
    name = path.rsplit("/", 1)[-1].lower()
    findings.extend(_cuda_wheel_sources(kb, path, lines, pip_options=name.endswith((".txt", ".in"))))
    seen: set[tuple[int, str]] = set()
    pins = _framework_pin_rules(kb)
    snippets: dict[int, str] = {}

    def snippet_of(line: int) -> str:  # once per line: a long line holds many requirements
        if line not in snippets:
            snippets[line] = _snippet(lines[line - 1]) if 0 < line <= len(lines) else ""
        return snippets[line]

    keep = RuleCap(path)
    keep.extend(findings)
    for line, col, spec in _dependency_lines(path, text):
        for framework, finding in _framework_pin_findings(pins, path, line, col, spec, snippet_of):
            frameworks.add(framework)
            keep.add(finding)
        hit = _match_requirement(spec, index, patterns)
        if hit is None:
            continue
        raw, kind, guidance = hit
        if kind.startswith("framework:"):
            frameworks.add(kind.split(":", 1)[1])
            if kind != "framework:vllm":
                continue
        if (line, raw) in seen:
            continue
        seen.add((line, raw))
        keep.offer(rule.id, line, col, lambda line=line, col=col, raw=raw, guidance=guidance: Finding(
            rule=rule.id, path=path, line=line, col=col, end_line=line, end_col=col + len(raw),
            message=format_message(rule, symbol=clip(raw), detail=guidance), severity=rule.severity,
            confidence="high", snippet=snippet_of(line), symbol=clip(raw)))
    return keep.findings(), frameworks


def _comment_start(line: str, kind: str) -> int:
    """Index where a comment starts (len(line) if none), for shell and YAML lines."""
    if kind == "json":
        return len(line)
    in_single = in_double = False
    for i, ch in enumerate(line):
        if ch == "'" and not in_double:
            in_single = not in_single
        elif ch == '"' and not in_single:
            in_double = not in_double
        elif ch == "#" and not in_single and not in_double and (i == 0 or line[i - 1] in " \t"):
            return i
    return len(line)
