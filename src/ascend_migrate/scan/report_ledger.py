"""The last report of a tree kept file by file, so a re-scan after a few edits patches it.

An agent edits one file and scans again. The stored report (report_snapshot.py) no longer
matches, and a full scan then reads the whole per-file cache and builds and encodes the
whole report again, although one file's part of it changed. So for the JSON and text
formats `scan` also keeps, next to the stored report, a ledger of what the report was made
from, file by file:

- each file's stats as the tree fingerprint saw them, its content hash, whether it counts
  and its line count, its note, and a digest of everything other files' parts of the report
  depend on (`_cross_digest`: the frameworks it imports and where, the evidence the
  entry-point decisions read, whether it is a data file or names one, its transfer imports),
  and the same without line numbers (`_shape_digest`: lines moved in a module that is no entry
  candidate change nothing outside it);
- each file's findings in their summary form (what counts, effort, files, rules, plans and
  the terminal summary read: json_report.SUMMARY_FIELDS) and, for JSON, the exact text of
  its part of the `findings` array;
- the parts of the report that come from the whole tree: the notes of the walk and the
  reader, the entry points, the frameworks' FW001 findings, and the device-agnostic wording.

A re-scan whose tree differs from the ledger's only in the contents of a few files (the same
files, the same project table, the same skips) re-analyses just those files. When none of
them changed what other files' parts depend on, the report is assembled again from the
stored summaries (json_report.assemble: the same code as a full scan) and, for JSON, the
stored texts with the changed files' texts put in their place. Anything else (a file added
or removed, a changed import graph, lines moved in an entry candidate, a launch script or a
framework's first import, a data file, an internal error, more than `MAX_CHANGED` files) is
a miss, and the full scan runs and writes a new ledger.

The patched report is the report a full scan would write: `tests/scan/test_report_ledger.py`
compares both byte for byte after edits of every kind, and falls back where it must.

A ledger is read as data (JSON, CRC-checked); a damaged or foreign one is a miss.
"""
from __future__ import annotations

import hashlib
import json
import os
import zlib
from pathlib import Path
from typing import Any, NamedTuple, Optional

from ascend_migrate.scan.cache_location import cache_dir
from ascend_migrate.scan import report_snapshot as snapshots
from ascend_migrate.scan.report_snapshot import STAND_IN_SECONDS, Fingerprint

LEDGER_FORMAT = 2  # 2: each file's shape digest (lines left out)
MAGIC = b"ascend-migrate report ledger\n"
FORMATS = ("json", "text")  # the formats a report is patched for
MAX_CHANGED = 16  # more changed files than this: the full scan (it analyses in parallel)


class Patched(NamedTuple):
    """A patched report: its text with the stand-in scan time, and the CLI's facts about it."""

    template: str
    facts: dict[str, Any]


def ledger_file(key: str) -> Path:
    return cache_dir() / "report" / f"{key}.ledger"


# --------------------------------------------------------------------------- what a file exports
def _cross_digest(res: Any) -> str:
    """Digest of what other files' parts of the report depend on in one file's result."""
    from ascend_migrate.scan.engine import _view_digest

    material = (sorted(res.frameworks.items()), res.agnostic_prelude, res.has_transfer_import,
                res.imports_torch_npu, res.data_file, res.deferred, tuple(res.config_refs), res.build,
                res.counted, _view_digest(res))
    return _digest(material)


def _shape_digest(res: Any) -> str:
    """`_cross_digest` without line numbers. An edit that moves lines of a module changes the
    lines its imports (and first framework import) are on, which only that module's own entry
    decision and the framework's FW001 finding show: for a module that is neither an entry
    candidate nor a framework's first sighting, the same shape means the same report elsewhere."""
    facts = res.entry
    shape = None if facts is None else (
        tuple((ref.level, ref.module, ref.names) for ref in facts.imports), facts.torch, bool(facts.main_guard),
        tuple((kind, what) for kind, _, what in facts.evidence), tuple(path for _, path in facts.execs),
        tuple(launch[1:] for launch in facts.launches), facts.notebook, facts.transfer, facts.torch_npu)
    material = (sorted(res.frameworks), res.agnostic_prelude, res.has_transfer_import, res.imports_torch_npu,
                res.data_file, res.deferred, tuple(res.config_refs), res.build, res.counted, shape,
                tuple(launch[1:] for launch in res.launches), tuple(res.console_scripts))
    return _digest(material)


def _digest(material: Any) -> str:
    return hashlib.blake2b(repr(material).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _row(finding: dict[str, Any]) -> list[Any]:
    return [finding["line"], finding["col"], finding["rule"], finding["symbol"], finding["severity"],
            finding["message"]]


def _summary(rel: str, row: list[Any], columns: "_RuleColumns", fields: tuple[str, ...]) -> dict[str, Any]:
    """A finding's summary record (`fields`: json_report.SUMMARY_FIELDS) from its stored row."""
    line, col, rule, symbol, severity, message = row
    category, transfer, effort = columns[rule]
    return dict(zip(fields, (rule, rel, line, col, severity, message, symbol, category, effort, transfer)))


class _RuleColumns(dict):
    """Rule id -> json_report.rule_columns, looked up once per rule."""

    def __init__(self, kb: Any) -> None:
        super().__init__()
        self.kb = kb

    def __missing__(self, rule: str) -> tuple[str, str, str]:
        from ascend_migrate.report.json_report import rule_columns

        self[rule] = value = rule_columns(self.kb, rule)
        return value


def _stat_entry(stat: tuple, settled_before: int) -> Optional[list]:
    """A file's stats as stored: None (never trusted again) when it was modified too close to
    the moment the stats were taken for a later identical stat to prove it unchanged."""
    if len(stat) != 6 or stat[1] == "error":
        return None
    _, mode, size, mtime, ctime, ino = stat
    if max(mtime, ctime) >= settled_before:
        return None
    return [mode, size, mtime, ctime, ino]


# --------------------------------------------------------------------------- storing
def store(key: str, fingerprint: Fingerprint, fmt: str, result: Any, report: dict[str, Any],
          items: Optional[list[str]]) -> None:
    """Keep the ledger of a full scan's report (`report`, made with the stand-in time; `items`:
    its findings' texts for JSON). Never for a report the ledger could not reproduce: a single
    file, a name that is not UTF-8, an internal error."""
    if fmt not in FORMATS or not fingerprint.frame or not result.file_results:
        return
    if not Path(result.root).is_dir():
        return
    try:
        ledger = _ledger(fingerprint, fmt, result, report, items)
    except (UnicodeEncodeError, ValueError, KeyError):
        return
    if ledger is not None:
        _write(key, *ledger)


def _ledger(fingerprint: Fingerprint, fmt: str, result: Any, report: dict[str, Any],
            items: Optional[list[str]]) -> Optional[tuple[dict[str, Any], bytes]]:
    from ascend_migrate.scan.engine import INTERNAL_PREFIX, is_agnostic_port

    for _, res in result.file_results.values():
        if res.note.startswith(INTERNAL_PREFIX):
            return None
    for stat in fingerprint.stats:
        stat[0].encode("utf-8")  # a name that is not UTF-8 is shown escaped: not kept here
    by_path: dict[str, list[int]] = {}
    for i, f in enumerate(report["findings"]):
        by_path.setdefault(f["path"], []).append(i)
    if any(path not in result.file_results for path in by_path):
        return None
    findings = report["findings"]
    blocks: list[str] = []
    at = 0
    files = []
    for rel in sorted(result.file_results):
        content_key, res = result.file_results[rel]
        indices = by_path.get(rel, [])
        block = ",\n    ".join(items[i] for i in indices) if items is not None else ""
        files.append({"path": rel, "key": content_key.hex(), "counted": res.counted, "lines": res.lines,
                      "note": res.note, "cross": _cross_digest(res), "shape": _shape_digest(res),
                      "rows": [_row(findings[i]) for i in indices],
                      "global": [findings[i] for i in indices if findings[i]["rule"] == "FW001"],
                      "at": at, "size": len(block)})
        blocks.append(block)
        at += len(block)
    lead = report["notes"][:result.lead_notes]
    head = {
        "format": LEDGER_FORMAT, "fmt": fmt, "frame": fingerprint.frame, "root": report["root"],
        "torch_npu_version": report["torch_npu_version"], "selection": [list(s) for s in result.selection],
        "agnostic": is_agnostic_port({rel: pair[1] for rel, pair in result.file_results.items()}),
        "stats": {stat[0]: _stat_entry(stat, fingerprint.taken_ns - snapshots.RACY_NS) for stat in fingerprint.stats},
        "lead_notes": lead, "entry_points": report["entry_points"],
        "rejected_entry_points": report["rejected_entry_points"], "files": files,
    }
    return head, "".join(blocks).encode("utf-8")


def _write(key: str, head: dict[str, Any], body: bytes) -> None:
    """Store a ledger: a JSON header line, then the findings' texts of every file one after
    another (`at` and `size` of each file count characters of the decoded text)."""
    data = json.dumps({**head, "length": len(body), "crc32": zlib.crc32(body)}, ensure_ascii=True,
                      separators=(",", ":")).encode("ascii")
    snapshots.write_cache_file(ledger_file(key), MAGIC + data + b"\n" + body)


def _read(key: str) -> Optional[tuple[dict[str, Any], bytes]]:
    try:
        with ledger_file(key).open("rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if not data.startswith(MAGIC):
        return None
    try:
        end = data.index(b"\n", len(MAGIC))
        head = json.loads(data[len(MAGIC):end])
    except ValueError:
        return None
    body = data[end + 1:]
    if (not isinstance(head, dict) or head.get("format") != LEDGER_FORMAT or head.get("length") != len(body)
            or head.get("crc32") != zlib.crc32(body)):
        return None
    return head, body


# --------------------------------------------------------------------------- patching
def patch(key: str, fingerprint: Fingerprint, root: Path, fmt: str, color: bool) -> Optional[Patched]:
    """The report of the tree as it is now, patched from the ledger under `key`, or None when
    the ledger cannot give exactly what a full scan would (the caller then runs one)."""
    if fmt not in FORMATS or not fingerprint.frame or not root.is_dir() or (key, fingerprint.digest) in _MISSED:
        return None
    stored = _read(key)
    patched = None
    if stored is not None:
        try:
            patched = _patch(key, *stored, fingerprint, root, fmt, color)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            patched = None  # a ledger of an unexpected shape: the full scan decides
    if patched is None:
        _MISSED.add((key, fingerprint.digest))
    return patched


def patch_stored(key: str, fingerprint: Fingerprint, root: Path, fmt: str, color: bool) -> Optional["snapshots.Snapshot"]:
    """`patch`, kept as the tree's stored report in its turn (report_snapshot.save: only when
    every file is settled); what both the click-free entry and the full CLI serve."""
    patched = patch(key, fingerprint, root, fmt, color)
    if patched is None:
        return None
    stored = snapshots.Snapshot(fmt, patched.template, patched.facts)
    snapshots.save(key, fingerprint, stored)
    return stored


# (key, tree digest) of the patches this process found impossible: the full CLI, which runs
# after the click-free entry in the same process, does not analyse the changed files twice
_MISSED: set[tuple[str, str]] = set()


def _changed(head: dict[str, Any], fingerprint: Fingerprint, files: dict[str, dict[str, Any]]) -> Optional[list[str]]:
    """The scanned files whose stats differ from the ledger's (or were never trusted), or None
    when the tree differs otherwise (a file added or removed that the scan would read)."""
    from ascend_migrate.scan.engine import classify

    old = head["stats"]
    changed = []
    seen = 0
    for stat in fingerprint.stats:
        rel = stat[0]
        if rel not in old:
            if classify(rel) is not None:
                return None
            continue
        seen += 1
        before = old[rel]
        if before is not None and len(stat) == 6 and before == list(stat[1:]):
            continue
        if rel in files:
            changed.append(rel)
        elif classify(rel) is not None:
            return None  # a file the scan skipped (too big, unreadable, binary) changed
    if seen != len(old):  # something was removed
        now = {stat[0] for stat in fingerprint.stats}
        if any(classify(rel) is not None for rel in old if rel not in now):
            return None
    return changed


def _patch(key: str, head: dict[str, Any], body: bytes, fingerprint: Fingerprint, root: Path, fmt: str,
           color: bool) -> Optional[Patched]:
    if head["fmt"] != fmt or head["frame"] != fingerprint.frame:
        return None
    files = {entry["path"]: entry for entry in head["files"]}
    changed = _changed(head, fingerprint, files)
    if changed is None or len(changed) > MAX_CHANGED:
        return None

    from ascend_migrate.knowledge.base import load_knowledge
    from ascend_migrate.report.json_report import finding_dicts, readable
    from ascend_migrate.scan import engine

    kb = load_knowledge()
    coverage = engine.load_coverage(head["torch_npu_version"]) if head["torch_npu_version"] else None
    select, ignore = (tuple(s) for s in head["selection"])
    now_stats = {stat[0]: stat for stat in fingerprint.stats}
    deciders = {point["path"] for point in (*head["entry_points"], *head["rejected_entry_points"])}
    texts: dict[str, str] = {}
    for rel in changed:
        entry = files[rel]
        stat = now_stats[rel]
        if len(stat) != 6 or stat[2] > engine.MAX_FILE_BYTES:
            return None
        job = engine.classify(rel)
        if job is None:
            return None
        out = engine._process(job, str(root) + os.sep + rel, bytes.fromhex(entry["key"]), kb, coverage)
        if out[0] == "note":
            return None
        if out[0] == "same":  # touched, not changed
            continue
        res = out[2]
        if res.note.startswith(engine.INTERNAL_PREFIX) or res.data_file:
            return None
        cross, shape = _cross_digest(res), _shape_digest(res)
        if cross != entry["cross"] and not (shape == entry["shape"] and job.kind == "python" and not res.launches
                                            and not entry["global"] and rel not in deciders):
            return None
        own = [engine._agnostic_wording(f, kb) if head["agnostic"] else f for f in res.findings]
        records = [readable(d) for d in finding_dicts([f for f in own if engine._selected(f.rule, select, ignore)], kb)]
        records = sorted(records + entry["global"], key=lambda d: (d["line"], d["col"], d["rule"], d["symbol"]))
        entry.update(key=out[1].hex(), lines=res.lines, note=res.note, rows=[_row(d) for d in records],
                     cross=cross, shape=shape)
        if fmt == "json":
            from ascend_migrate.report.json_report import finding_text

            texts[rel] = ",\n    ".join(finding_text(d) for d in records)

    # every file as it is now (a file re-read above was read after these stats were taken: a
    # later change shows in its stats, and one too close to them is never trusted)
    head["stats"] = {stat[0]: _stat_entry(stat, fingerprint.taken_ns - snapshots.RACY_NS) for stat in fingerprint.stats}
    return _assemble(key, head, body, texts, fmt, color, kb)


def _assemble(key: str, head: dict[str, Any], body: bytes, texts: dict[str, str], fmt: str, color: bool,
              kb: Any) -> Optional[Patched]:
    from ascend_migrate.report.json_report import SUMMARY_FIELDS, assemble, findings_array, skeleton_text
    from ascend_migrate.scan.finding import SEVERITIES

    columns = _RuleColumns(kb)
    summaries: list[dict[str, Any]] = []
    notes = list(head["lead_notes"])
    files_scanned = lines_scanned = 0
    stored = body.decode("utf-8") if fmt == "json" else ""
    blocks: list[str] = []
    at = 0
    for entry in head["files"]:
        rel = entry["path"]
        if entry["counted"]:
            files_scanned += 1
            lines_scanned += entry["lines"]
        if entry["note"]:
            notes.append({"path": rel, "reason": entry["note"]})
        summaries.extend(_summary(rel, row, columns, SUMMARY_FIELDS) for row in entry["rows"])
        if fmt == "json":
            block = texts[rel] if rel in texts else stored[entry["at"]:entry["at"] + entry["size"]]
            entry["at"], entry["size"] = at, len(block)
            at += len(block)
            blocks.append(block)
    report = assemble({"root": head["root"], "torch_npu_version": head["torch_npu_version"],
                       "files_scanned": files_scanned, "lines_scanned": lines_scanned,
                       "duration_s": STAND_IN_SECONDS},
                      summaries, head["entry_points"], head["rejected_entry_points"], notes, kb)
    if fmt == "json":
        template = skeleton_text(report, findings_array([block for block in blocks if block]))
    else:
        from ascend_migrate.report.terminal import summary

        template = summary(report, kb, color=color)
    if template is None or snapshots.make_template(fmt, template) is None:
        return None  # the stand-ins (findings array, scan time) are not where they must be
    facts = {"findings": len(summaries), "files_scanned": files_scanned, "lines_scanned": lines_scanned,
             "entry_points": len(head["entry_points"]), "rejected": len(head["rejected_entry_points"]),
             "notes": len(notes), "worst": max((SEVERITIES.index(f["severity"]) for f in summaries), default=-1)}
    _write(key, head, "".join(blocks).encode("utf-8"))
    return Patched(template, facts)
