"""Read and check the three inputs of the model-skill generator.

* the validation report (`ascend-migrate validate`): must carry the exact schema id and a
  `pass` verdict, otherwise the generator refuses;
* the scan result (`ascend-migrate scan --format json`): findings, entry points, packages,
  frameworks;
* the migration change list (`ascend-migrate migrate`): one entry per edit.

Everything here is data from files the user points at, so every field is checked for type
and every problem is reported as "<file>: <reason>" through SkillGenError (exit code 2).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.skillgen.errors import SkillGenError

REPORT_SCHEMA = "ascend-migrate/validation-report/1"
MAX_INPUT_BYTES = 64 * 1024 * 1024
DEFAULT_REPORT = Path(".ascend-migrate") / "validation-report.json"  # where `validate` writes it
DEFAULT_CHANGES = Path("ascend-migrate-changes.json")  # where `migrate --write` writes it


def load_json(path: Path, what: str) -> Any:
    """Parse a JSON file, turning every failure into a one-line error naming the file."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise SkillGenError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise SkillGenError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    if not path.is_file():
        raise SkillGenError(f"{path}: {what} is not a regular file")
    if size > MAX_INPUT_BYTES:
        raise SkillGenError(f"{path}: {what} is {size} bytes; the limit is {MAX_INPUT_BYTES}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SkillGenError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillGenError(f"{path}: {what} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SkillGenError(
            f"{path}: {what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise SkillGenError(f"{path}: {what} is nested too deeply to read") from None


# --------------------------------------------------------------------------- report


@dataclass
class ReportItem:
    id: str
    title: str
    status: str
    detail: str


@dataclass
class ValidationReport:
    path: str
    verdict: str
    items: list[ReportItem]
    thresholds: list[tuple[str, str]]
    environment: list[tuple[str, str]]
    raw_environment: dict[str, Any]
    results: list[tuple[str, str]] = field(default_factory=list)
    device: str = ""
    raw: dict[str, Any] = field(default_factory=dict)


def _scalar_text(value: Any, limit: int = 160) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "-"
    elif isinstance(value, (int, float, str)):
        text = str(value)
    elif isinstance(value, (list, tuple)) and all(isinstance(v, (int, float, str, bool)) or v is None for v in value):
        text = ", ".join(_scalar_text(v, limit) for v in value) or "-"
    else:
        # never cut a JSON text in the middle: a table cell says what is there instead
        return f"({len(value)} entries; see replay.json)" if isinstance(value, (list, tuple, dict)) else "-"
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def flatten(
    mapping: dict[str, Any], prefix: str = "", depth: int = 0, skip_empty: bool = False
) -> list[tuple[str, str]]:
    """Nested dicts become dotted keys (three levels deep); values become short text."""
    rows: list[tuple[str, str]] = []
    for key in sorted(mapping, key=str):
        value = mapping[key]
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value and depth < 2:
            rows.extend(flatten(value, name + ".", depth + 1, skip_empty))
        elif not (skip_empty and (value is None or value == [] or value == {})):
            rows.append((name, _scalar_text(value)))
    return rows


def environment_rows(env: dict[str, Any]) -> list[tuple[str, str]]:
    """Rows for the environment table: one per stage of a host-check report, else flattened."""
    stages = env.get("stages")
    if isinstance(stages, list) and all(isinstance(s, dict) for s in stages):
        rows = []
        for stage in stages:
            label = _first_str(stage, "title", "id") or "?"
            status = _first_str(stage, "status")
            found = _first_str(stage, "found")
            rows.append((label, f"{status}: {found}" if status and found else status or found or "-"))
        return rows
    return flatten(env, skip_empty=True)


def threshold_rows(thresholds: dict[str, Any]) -> list[tuple[str, str]]:
    """The thresholds actually applied when the report says so (`used`), else all of them."""
    used = thresholds.get("used")
    chosen = used if isinstance(used, dict) and used else thresholds
    return flatten(chosen, skip_empty=True)


def _comparison_rows(comp: dict[str, Any]) -> list[tuple[str, str]]:
    """The comparison's verdict and each output's metrics, one row each (not the run metadata)."""
    # scalar headline values (status, dtype, any summary metric); the run metadata stays in replay.json
    rows = [(f"comparison.{k}", _scalar_text(v)) for k, v in comp.items()
            if isinstance(v, (str, int, float, bool)) and v is not None]
    for out in comp.get("outputs") or []:
        if not isinstance(out, dict):
            continue
        metrics = out.get("metrics") if isinstance(out.get("metrics"), dict) else {}
        shown = ", ".join(f"{k} {_scalar_text(metrics[k])}" for k in ("cosine", "max_abs", "rel_err") if k in metrics)
        rows.append((f"output {_scalar_text(out.get('output') or out.get('name') or '?', 80)}",
                     _scalar_text(out.get("status") or "-") + (f" ({shown})" if shown else "")))
    loss = comp.get("loss")
    if isinstance(loss, dict):
        rows.append(("loss", _scalar_text(loss.get("status") or loss.get("message") or "-")))
    return rows


def result_rows(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Headline numbers: the item summary, the comparison, the precision mode and DDP results."""
    rows: list[tuple[str, str]] = []
    comp = data.get("comparison")
    if isinstance(comp, dict):
        rows.extend(_comparison_rows(comp))
    prov = data.get("provenance") if isinstance(data.get("provenance"), dict) else {}
    prec = prov.get("precision")
    if isinstance(prec, dict) and prec.get("mode"):
        on = sorted(k for k, v in ((prec.get("run") or {}).get("switches") or {}).items() if v)
        rows.append(("precision mode", f"{_scalar_text(prec['mode'])} (thresholds assume "
                                       f"{_scalar_text(prec.get('thresholds_assume'))}; on: {', '.join(on) or 'none'})"))
    for key in ("summary", "ddp"):
        value = data.get(key)
        if isinstance(value, dict):
            rows.extend(flatten(value, f"{key}.", 1, skip_empty=True))
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            rows.append((key, _scalar_text(value)))
    return rows[:40]


def _first_str(item: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = item.get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            return _scalar_text(value)
    return ""


def load_report(path: Optional[Path]) -> ValidationReport:
    """Load a well-formed validation report; `replaykit.gate_report` decides whether it proves a port."""
    if path is None:
        raise SkillGenError(
            "refusing to write a model skill without a passing validation report: run "
            "`ascend-migrate validate run PATH` on the ported project (it writes "
            f"PATH/{DEFAULT_REPORT.as_posix()}) or pass the report with --report FILE"
        )
    data = load_json(path, "validation report")
    if not isinstance(data, dict):
        raise SkillGenError(f"{path}: validation report must be a JSON object, found {type(data).__name__}")
    schema = data.get("schema")
    if schema != REPORT_SCHEMA:
        raise SkillGenError(
            f"{path}: not an ascend-migrate validation report (schema is {schema!r}, "
            f"expected {REPORT_SCHEMA!r}); refusing to write a model skill"
        )
    for key, kind in (("verdict", str), ("items", list), ("thresholds", dict), ("environment", dict)):
        if key not in data:
            raise SkillGenError(f"{path}: validation report has no {key!r} field")
        if not isinstance(data[key], kind):
            raise SkillGenError(
                f"{path}: validation report field {key!r} must be a {kind.__name__}, "
                f"found {type(data[key]).__name__}"
            )
    verdict = data["verdict"]
    items: list[ReportItem] = []
    for index, item in enumerate(data["items"]):
        if not isinstance(item, dict):
            raise SkillGenError(f"{path}: items[{index}] must be an object, found {type(item).__name__}")
        status = _first_str(item, "status", "result", "outcome", "verdict").lower() or "-"
        entry = ReportItem(
            id=_first_str(item, "id", "name", "key") or f"item-{index + 1}",
            title=_first_str(item, "title", "check", "description", "name"),
            status=status,
            detail=_first_str(item, "detail", "message", "summary", "reason"),
        )
        items.append(entry)
    return ValidationReport(
        path=str(path),
        verdict=verdict,
        items=items,
        thresholds=threshold_rows(data["thresholds"]),
        environment=environment_rows(data["environment"]),
        raw_environment=data["environment"],
        results=result_rows(data),
        device=_first_str(data, "device"),
        raw=data,
    )


# --------------------------------------------------------------------------- scan


@dataclass
class ScanFinding:
    rule: str
    path: str
    line: int
    severity: str
    message: str
    symbol: str
    styles_with_fix: tuple[str, ...]


@dataclass
class ScanSummary:
    findings: list[ScanFinding] = field(default_factory=list)
    entry_points: list[tuple[str, int, str]] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    frameworks: list[str] = field(default_factory=list)
    torch_npu_version: str = ""
    available: bool = False


def _int(value: Any, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return default


def _names(value: Any) -> list[str]:
    """A list of names from ["a", "b"], [{"name": "a"}, ...] or {"a": ..., "b": ...}."""
    names: list[str] = []
    if isinstance(value, dict):
        names = [str(k) for k in value]
    elif isinstance(value, list):
        for entry in value:
            if isinstance(entry, str):
                names.append(entry)
            elif isinstance(entry, dict):
                name = _first_str(entry, "name", "package", "framework", "id")
                if name:
                    names.append(name)
    return sorted({_scalar_text(n, 80) for n in names if str(n).strip()})


def scan_from_dict(data: Any, source: str) -> ScanSummary:
    if not isinstance(data, dict):
        raise SkillGenError(f"{source}: scan result must be a JSON object, found {type(data).__name__}")
    raw_findings = data.get("findings", [])
    if not isinstance(raw_findings, list):
        raise SkillGenError(f"{source}: scan field 'findings' must be a list")
    findings: list[ScanFinding] = []
    for index, item in enumerate(raw_findings):
        if not isinstance(item, dict):
            raise SkillGenError(f"{source}: findings[{index}] must be an object")
        rule = _first_str(item, "rule", "rule_id", "id")
        if not rule:
            raise SkillGenError(f"{source}: findings[{index}] has no 'rule'")
        fixes = item.get("fixes") or []
        styles = tuple(
            sorted({str(f.get("style")) for f in fixes if isinstance(f, dict) and f.get("style")})
        ) if isinstance(fixes, list) else ()
        findings.append(
            ScanFinding(
                rule=rule,
                path=_first_str(item, "path", "file") or "?",
                line=_int(item.get("line")),
                severity=_first_str(item, "severity").lower() or "info",
                message=_first_str(item, "message"),
                symbol=_first_str(item, "symbol", "snippet"),
                styles_with_fix=styles,
            )
        )
    entry_points: list[tuple[str, int, str]] = []
    raw_entries = data.get("entry_points", [])
    if not isinstance(raw_entries, list):
        raise SkillGenError(f"{source}: scan field 'entry_points' must be a list")
    for index, item in enumerate(raw_entries):
        if isinstance(item, str):
            entry_points.append((item, 0, ""))
        elif isinstance(item, dict):
            if item.get("selected") is False:  # a rejected candidate: not where the port starts
                continue
            entry_points.append(
                (_first_str(item, "path", "file") or "?", _int(item.get("line")), _first_str(item, "kind"))
            )
        else:
            raise SkillGenError(f"{source}: entry_points[{index}] must be an object or a path")
    packages = _names(data.get("packages") or data.get("third_party") or [])
    frameworks = _names(data.get("frameworks") or [])
    findings.sort(key=lambda f: (f.path, f.line, f.rule))
    return ScanSummary(
        findings=findings,
        entry_points=sorted(set(entry_points)),
        packages=packages,
        frameworks=frameworks,
        torch_npu_version=_first_str(data, "torch_npu_version"),
        available=True,
    )


def load_scan(path: Path) -> ScanSummary:
    return scan_from_dict(load_json(path, "scan result"), str(path))


# --------------------------------------------------------------------------- change list


@dataclass
class Change:
    file: str
    start_line: int
    end_line: int
    rule: str
    operation: str
    message: str
    before: str = ""
    after: str = ""


@dataclass
class ChangeList:
    changes: list[Change]
    style: str = ""


def load_changes(path: Path) -> ChangeList:
    data = load_json(path, "change list")
    style = ""
    if isinstance(data, dict):
        style = _first_str(data, "style")
        entries = data.get("changes")
        if not isinstance(entries, list):
            raise SkillGenError(f"{path}: change list object must have a 'changes' list")
    elif isinstance(data, list):
        entries = data
    else:
        raise SkillGenError(f"{path}: change list must be a JSON list or an object with 'changes'")
    changes: list[Change] = []
    for index, item in enumerate(entries):
        if not isinstance(item, dict):
            raise SkillGenError(f"{path}: changes[{index}] must be an object, found {type(item).__name__}")
        file = _first_str(item, "file", "path")
        if not file:
            raise SkillGenError(f"{path}: changes[{index}] has no 'file'")
        start = _int(item.get("start_line", item.get("line", item.get("start"))), -1)
        end = _int(item.get("end_line", item.get("end")), start)
        if start < 0 or end < start:
            raise SkillGenError(
                f"{path}: changes[{index}] needs integer 'start_line' and 'end_line' "
                "with start_line <= end_line"
            )
        before = item.get("before", item.get("old", ""))
        after = item.get("after", item.get("new", item.get("replacement", "")))
        changes.append(
            Change(
                file=file,
                start_line=start,
                end_line=end,
                rule=_first_str(item, "rule", "rule_id") or "-",
                operation=_first_str(item, "operation", "op", "kind") or "-",
                message=_first_str(item, "message", "description"),
                before=before if isinstance(before, str) else "",
                after=after if isinstance(after, str) else "",
            )
        )
    changes.sort(key=lambda c: (c.file, c.start_line, c.end_line, c.rule))
    if style and style not in ("transfer", "agnostic"):
        raise SkillGenError(f"{path}: unknown migration style {style!r} (expected transfer or agnostic)")
    return ChangeList(changes=changes, style=style)
