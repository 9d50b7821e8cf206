"""After the per-file results: the scan's findings in one list (the rules selected, the
unpinned framework findings and the wording of an agnostic port), and the framework pins of
the tree's dependency files."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Optional

from ascend_migrate.knowledge.base import KnowledgeBase, format_message
from ascend_migrate.scan import config_kinds
from ascend_migrate.scan.finding import Finding
from ascend_migrate.scan.result import FileNote, ScanResult
from ascend_migrate.scan.jobs import FileResult


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
