"""The validation checklist (knowledge/checklist.yaml) and its generated reference page."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

from ascend_migrate.knowledge.loader import (
    DATA_DIR,
    Field,
    KnowledgeError,
    iter_records,
    load_yaml,
)

CHECKLIST_FILE = DATA_DIR / "checklist.yaml"
KINDS = ("static", "dynamic", "manual")
SEVERITIES = ("error", "warning")

_FIELDS = (
    Field("id"),
    Field("title"),
    Field("kind", choices=KINDS),
    Field("severity", choices=SEVERITIES),
    Field("check", required=False),
    Field("rules", (list,), required=False, default=()),
    Field("how"),
    Field("fix"),
)


@dataclass(frozen=True)
class ChecklistItem:
    id: str
    title: str
    kind: str
    severity: str
    check: Optional[str]
    rules: tuple[str, ...]
    how: str
    fix: str

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "severity": self.severity,
            "check": self.check,
            "rules": list(self.rules),
            "how": self.how,
            "fix": self.fix,
        }


def load_checklist(path: Path | str = CHECKLIST_FILE) -> list[ChecklistItem]:
    """Load and check the checklist; a malformed file raises one KnowledgeError."""
    path = Path(path)
    data = load_yaml(path)
    items: list[ChecklistItem] = []
    for where, rec in iter_records(data, path, "items", _FIELDS):
        if rec["kind"] != "manual" and not rec["check"]:
            raise KnowledgeError(path, f"{where}.check", f"{rec['kind']} items need a check")
        rules = rec["rules"] or ()
        for rule in rules:
            if not isinstance(rule, str):
                raise KnowledgeError(path, f"{where}.rules", "rule ids must be strings")
        items.append(
            ChecklistItem(
                id=rec["id"],
                title=rec["title"].strip(),
                kind=rec["kind"],
                severity=rec["severity"],
                check=rec["check"],
                rules=tuple(rules),
                how=" ".join(rec["how"].split()),
                fix=" ".join(rec["fix"].split()),
            )
        )
    return items


@lru_cache(maxsize=1)
def default_checklist() -> tuple[ChecklistItem, ...]:
    return tuple(load_checklist())


def item_ids() -> list[str]:
    return [item.id for item in default_checklist()]


def render_checklist_reference() -> str:
    """The full text of references/validation-checklist.md."""
    items = list(default_checklist())
    lines = [
        "# Validation checklist",
        "",
        "<!-- Generated from src/ascend_migrate/knowledge/checklist.yaml; do not edit by hand. -->",
        "",
        "`ascend-migrate validate run PATH` decides every item below and writes one verdict.",
        "Static items are decided by scanning the ported tree, dynamic items by running the",
        "project's own command (or a validation entry) under the harness, and manual items are",
        "questions no tool can answer, decided by a person with `--confirm ID --note REASON`.",
        "A failing or undecided item of severity `error` makes the verdict `fail`;",
        "`warning` items are reported with their evidence and do not change the verdict.",
        "Only evidence clears an automatic (static or dynamic) item: `--confirm` is refused for",
        "them, whatever their state. A confirmation is bound to the hash of the validated tree and",
        "to the host it was made on, and is dropped when either differs; a per-model skill carries",
        "none, so the NPU host earns every item again.",
        "",
        "| ID | Item | Kind | Severity |",
        "|---|---|---|---|",
    ]
    for item in items:
        lines.append(f"| [`{item.id}`](#{item.id}) | {item.title} | {item.kind} | {item.severity} |")
    lines.append("")
    for kind, heading in (
        ("static", "Static items"),
        ("dynamic", "Dynamic items"),
        ("manual", "Manual items"),
    ):
        lines += [f"## {heading}", ""]
        for item in items:
            if item.kind != kind:
                continue
            lines += [f"### {item.id}", "", f"**{item.title}** ({item.kind}, {item.severity})", ""]
            lines.append(f"- How it is checked: {item.how}")
            if item.rules:
                rules = ", ".join(f"`{r}`" for r in item.rules)
                lines.append(f"- Scanner rules used as evidence: {rules}")
            lines.append(f"- How to fix: {item.fix}")
            lines.append("")
    lines += _thresholds_section()
    return "\n".join(lines).rstrip("\n") + "\n"


def _fmt(value: object) -> str:
    if value is None:
        return "not applied"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _thresholds_section() -> list[str]:
    from ascend_migrate.validate.thresholds import load_thresholds

    th = load_thresholds()
    lines = [
        "## Default thresholds",
        "",
        "From `src/ascend_migrate/knowledge/thresholds.yaml`; override with `--thresholds FILE`.",
        "Each output is compared in float64 after the run. `rel_err` is normwise",
        "(max |target - golden| / max |golden|); `max_rel` and `mean_rel` are elementwise with",
        "the small-value floor as the smallest denominator.",
        "",
        "| dtype | cosine >= | max abs <= | rel_err <= | max_rel <= | mean_rel <= | rmse <= | small value |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dtype, gate in th.outputs.items():
        lines.append(
            f"| {dtype} | {_fmt(gate.cosine_min)} | {_fmt(gate.max_abs)} | {_fmt(gate.rel_err)} | "
            f"{_fmt(gate.max_rel)} | {_fmt(gate.mean_rel)} | {_fmt(gate.rmse)} | {_fmt(gate.small_value)} |"
        )
    lines += [
        "",
        f"Hard failures, whatever the dtype: cosine < {_fmt(th.hard.cosine_min)}, "
        f"max abs error > {_fmt(th.hard.max_abs)}"
        + (", or any NaN/Inf in the target." if th.hard.nan_inf else "."),
        "",
        "| dtype | loss rtol | loss atol |",
        "|---|---|---|",
    ]
    for dtype, tol in th.loss.items():
        lines.append(f"| {dtype} | {_fmt(tol.rtol)} | {_fmt(tol.atol)} |")
    lines += [
        "",
        f"DDP smoke run: {th.ddp.nproc} processes, {th.ddp.steps} steps, timeout "
        f"{_fmt(th.ddp.timeout_s)} s; ranks agree when parameters are bit-identical or every "
        f"parameter sum agrees within rtol {_fmt(th.ddp.param_rtol)}.",
        "",
        f"DataLoader: at most {th.dataloader_max_literal_workers} hard-coded workers.",
        "",
    ]
    return lines + _precision_section(th.precision)


def _precision_section(assumed: str) -> list[str]:
    """The precision switches from knowledge/precision_switches.yaml, for the reference page."""
    from ascend_migrate.validate.precision import load_switches

    lines = [
        "## Precision modes",
        "",
        f"The default thresholds assume precision mode `{assumed}`. CUDA computes cuDNN convolutions",
        "in TF32 by default and torch_npu computes convolutions in HF32 by default; both differ from",
        "fp32 by more than the fp32 relative limit. `validate capture` and `validate run` therefore pin",
        "these switches to one mode (`--precision fp32`, the default: every reduced format off;",
        "`--precision reduced`: TF32/HF32 on) and record them in the golden file and the report. A",
        "switch that differs between golden and run is a provenance mismatch (`precision-modes`), and",
        "the outputs are not judged by number. Switches missing from a torch build (torch.npu without",
        "torch_npu) are recorded as absent and not compared. From",
        "`src/ascend_migrate/knowledge/precision_switches.yaml`:",
        "",
        "| switch | device | default | fp32 mode | reduced mode | affects | source |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in load_switches():
        lines.append(f"| `torch.{s.path}` | {s.device} | {_fmt(s.default)} | {_fmt(s.fp32)} | {_fmt(s.reduced)} | "
                     f"{s.affects} | {s.source} |")
    return lines
