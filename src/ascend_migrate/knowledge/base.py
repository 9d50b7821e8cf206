"""The knowledge base: rules, the torch.cuda name table and the package table, as typed data.

Everything the scanner, the migrator, `explain`, the reference docs and the synthetic tests
know about CUDA-to-Ascend migration is loaded here from YAML, checked against a schema.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.knowledge.loader import (
    DATA_DIR,
    Field,
    KnowledgeError,
    check_record,
    iter_records,
    load_yaml,
)

SEVERITIES = ("info", "warning", "error")
TRANSFER = ("auto", "partial", "none")
FIX_KINDS = ("safe", "unsafe", "manual", "none")
EFFORTS = ("none", "low", "medium", "high")
# What a finding of the rule becomes inside code that branches for npu: "info" when the branch
# makes it harmless, "keep" when it is broken on NPU whatever branch it sits in. Left out, it is
# derived: an error that no migration style fixes automatically is kept (see Rule.npu_branch_effect).
NPU_BRANCH = ("info", "keep")
STYLES = ("transfer", "agnostic")
MATCH_KINDS = (
    "cuda-table", "qualname", "call-attribute", "keyword", "dynamic", "device-string",
    "method-call", "attribute", "device-check", "keyword-value", "env-var", "nccl",
    "positional-count", "first-arg-device", "float64", "cuda-source", "decorator",
    "dependency", "package-import", "framework", "parse-error",
    "cuda-private", "guarded-capability", "cuda-version", "env-table", "tool-command",
    "dependency-index", "module-prefix", "framework-pin", "cli-flag", "config-value",
    "device-name", "resource-key", "device-ids", "path-argument",
)
RULE_ID = re.compile(r"^[A-Z]{2}[0-9]{3}$")

RULE_FIELDS = (
    Field("id"),
    Field("name"),
    Field("category"),
    Field("severity", choices=SEVERITIES),
    Field("confidence", required=False, default="high", choices=("low", "medium", "high")),
    Field("transfer", choices=TRANSFER),
    Field("npu"),
    Field("agnostic", required=False, default=""),
    Field("agnostic_min_torch", required=False, default=""),
    Field("fix", types=(dict,)),
    Field("effort", choices=EFFORTS),
    Field("npu_branch", required=False, default="", choices=("", *NPU_BRANCH)),
    Field("match", types=(dict,)),
    Field("message"),
    # the message in a device-agnostic port (a tree our agnostic rewrite produced, with no
    # transfer_to_npu import anywhere), where a message about transfer_to_npu would mislead
    Field("message_agnostic", required=False, default=""),
    Field("why"),
    Field("how"),
    Field("before"),
    Field("after"),
)

CUDA_NAME_FIELDS = (
    Field("transfer", choices=TRANSFER),
    Field("rule", required=False),
    Field("agnostic", required=False),
    Field("since", required=False),
    Field("npu", required=False),
    Field("idle", required=False),
)

PACKAGE_FIELDS = (
    Field("key"),
    Field("names", types=(list,)),
    Field("imports", types=(list,)),
    Field("effort", choices=EFFORTS),
    Field("guidance"),
    Field("patterns", types=(list,), required=False, default=[]),
)
FRAMEWORK_FIELDS = (
    Field("key"),
    Field("label"),
    Field("imports", types=(list,)),
    Field("names", types=(list,)),
    Field("guidance"),
    # the guidance in a device-agnostic port (see Rule.message_agnostic)
    Field("guidance_agnostic", required=False, default=""),
    # rule categories whose findings belong to this framework's plan, and the plan's steps
    Field("categories", types=(list,), required=False, default=[]),
    Field("plan", types=(list,), required=False, default=[]),
    # the plan's steps in a device-agnostic port (see Rule.message_agnostic)
    Field("plan_agnostic", types=(list,), required=False, default=[]),
)

# Minutes of manual work a finding of each effort level typically costs (for estimates).
EFFORT_MINUTES = {"none": 0, "low": 10, "medium": 60, "high": 240}


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    category: str
    severity: str
    confidence: str
    transfer: str
    npu: str
    agnostic: str
    agnostic_min_torch: str
    fix: dict  # style -> fix kind
    effort: str
    npu_branch: str  # "info" | "keep" | "" (derived, see npu_branch_effect)
    match: dict
    message: str
    message_agnostic: str
    why: str
    how: str
    before: str
    after: str
    source: str = ""

    def fix_kind(self, style: str) -> str:
        return self.fix.get(style, "manual")

    @property
    def npu_branch_effect(self) -> str:
        """What a finding becomes inside code that branches for npu: "info" or "keep".

        A branch test that mentions npu proves only that someone thought about npu, not that
        this code stays off the NPU (`device in ("cuda", "npu")` runs it there). So only what a
        branch can make harmless is downgraded; an error no style fixes automatically
        (DataParallel, CUDA extensions, CUDA-only packages) keeps its severity everywhere.
        """
        if self.npu_branch:
            return self.npu_branch
        automatic = any(self.fix_kind(style) in ("safe", "unsafe") for style in STYLES)
        return "keep" if self.severity == "error" and not automatic else "info"

    def help_uri(self) -> str:
        return f"references/rules.md#{self.id.lower()}"


@dataclass(frozen=True)
class CudaName:
    """One public torch.cuda name and what happens to it on Ascend."""

    name: str  # relative to torch.cuda, e.g. "amp.autocast"
    transfer: str
    rule: str
    agnostic: Optional[str] = None
    since: Optional[str] = None
    npu: Optional[str] = None
    idle: Optional[str] = None  # what the call gives on a host without an accelerator (agnostic guard)

    @property
    def qualname(self) -> str:
        return f"torch.cuda.{self.name}"


@dataclass(frozen=True)
class Package:
    key: str
    names: tuple[str, ...]
    imports: tuple[str, ...]
    effort: str
    guidance: str
    patterns: tuple[str, ...] = ()  # regexes over normalised distribution names (nvidia-.*-cu12)


@dataclass(frozen=True)
class Framework:
    key: str
    label: str
    imports: tuple[str, ...]
    names: tuple[str, ...]
    guidance: str
    guidance_agnostic: str = ""
    categories: tuple[str, ...] = ()
    plan: tuple[str, ...] = ()
    plan_agnostic: tuple[str, ...] = ()


@dataclass(frozen=True)
class KnowledgeBase:
    rules: dict[str, Rule]
    cuda_names: dict[str, CudaName]  # keyed by full qualname, e.g. "torch.cuda.amp.autocast"
    packages: tuple[Package, ...]
    frameworks: tuple[Framework, ...]
    by_kind: dict[str, tuple[Rule, ...]] = field(default_factory=dict)

    def rule(self, rule_id: str) -> Rule:
        try:
            return self.rules[rule_id.upper()]
        except KeyError:
            raise KeyError(f"unknown rule {rule_id!r}") from None

    def rules_of_kind(self, kind: str) -> tuple[Rule, ...]:
        return self.by_kind.get(kind, ())


def normalise_dist_name(name: str) -> str:
    """PEP 503 normalisation, keeping extras such as jax[cuda] distinct."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def _load_rules(data_dir: Path) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    files = sorted((data_dir / "rules").glob("*.yaml"))
    if not files:
        raise KnowledgeError(data_dir / "rules", "<dir>", "no rule files found")
    for path in files:
        for label, rec in iter_records(load_yaml(path), path, "rules", RULE_FIELDS):
            if not RULE_ID.match(rec["id"]):
                raise KnowledgeError(path, f"{label}.id", "must be two capital letters and three digits, e.g. CU101")
            if rec["id"] in rules:
                raise KnowledgeError(path, f"{label}.id", f"duplicate rule id (also in {rules[rec['id']].source})")
            for style, kind in rec["fix"].items():
                if style not in STYLES:
                    raise KnowledgeError(path, f"{label}.fix.{style}", f"unknown style; expected one of {', '.join(STYLES)}")
                if kind not in FIX_KINDS:
                    raise KnowledgeError(path, f"{label}.fix.{style}", f"{kind!r} is not one of: {', '.join(FIX_KINDS)}")
            kind = rec["match"].get("kind")
            if kind not in MATCH_KINDS:
                raise KnowledgeError(path, f"{label}.match.kind", f"{kind!r} is not a known match kind")
            rules[rec["id"]] = Rule(**rec, source=path.name)
    return rules


def _load_cuda_names(data_dir: Path, rules: dict[str, Rule]) -> dict[str, CudaName]:
    path = data_dir / "torch_cuda.yaml"
    data = load_yaml(path)
    names = data.get("names") if isinstance(data, dict) else None
    if not isinstance(names, dict):
        raise KnowledgeError(path, "names", "missing or not a mapping")
    table: dict[str, CudaName] = {}
    for name, raw in names.items():
        rec = check_record(raw, CUDA_NAME_FIELDS, path, f"names.{name}")
        rule = rec["rule"] or ("CU001" if rec["transfer"] == "auto" else "CU002")
        if rule not in rules:
            raise KnowledgeError(path, f"names.{name}.rule", f"unknown rule {rule}")
        table[f"torch.cuda.{name}"] = CudaName(
            name=name, transfer=rec["transfer"], rule=rule,
            agnostic=rec["agnostic"], since=rec["since"], npu=rec["npu"], idle=rec["idle"],
        )
    return table


def _load_packages(data_dir: Path) -> tuple[tuple[Package, ...], tuple[Framework, ...]]:
    path = data_dir / "packages.yaml"
    data = load_yaml(path)
    def tupled(rec: dict) -> dict:
        return {k: tuple(v) if isinstance(v, list) else v for k, v in rec.items()}

    packages = tuple(Package(**tupled(rec)) for _, rec in iter_records(data, path, "packages", PACKAGE_FIELDS, "key"))
    for pkg in packages:
        for pat in pkg.patterns:
            try:
                re.compile(pat)
            except re.error as exc:
                raise KnowledgeError(path, f"packages.{pkg.key}.patterns", f"invalid regex {pat!r}: {exc}") from exc
    frameworks = tuple(Framework(**tupled(rec)) for _, rec in iter_records(data, path, "frameworks", FRAMEWORK_FIELDS, "key"))
    return packages, frameworks


def load_knowledge_from(data_dir: Path) -> KnowledgeBase:
    """Load and check every knowledge file under data_dir (uncached; tests use this)."""
    rules = _load_rules(data_dir)
    cuda_names = _load_cuda_names(data_dir, rules)
    packages, frameworks = _load_packages(data_dir)
    by_kind: dict[str, list[Rule]] = {}
    for rule in rules.values():
        by_kind.setdefault(rule.match["kind"], []).append(rule)
    return KnowledgeBase(
        rules=dict(sorted(rules.items())),
        cuda_names=cuda_names,
        packages=packages,
        frameworks=frameworks,
        by_kind={k: tuple(v) for k, v in by_kind.items()},
    )


@functools.lru_cache(maxsize=None)
def load_knowledge() -> KnowledgeBase:
    """The packaged knowledge base (cached per process)."""
    return load_knowledge_from(DATA_DIR)


def format_message(rule: Rule, **values: Any) -> str:
    """Fill a rule's message template; unknown placeholders are left as they are."""
    class _Keep(dict):
        def __missing__(self, key: str) -> str:
            return "{" + key + "}"

    return rule.message.format_map(_Keep(values))
