"""Text renderings of the knowledge base: `explain` output and references/rules.md."""
from __future__ import annotations

from ascend_migrate.knowledge.base import KnowledgeBase, Rule, load_knowledge

_TRANSFER_WORDS = {"auto": "handled automatically", "partial": "mapped, but behaves differently",
                   "none": "not handled"}
# How a finding of the rule is reported inside code that branches for npu (Rule.npu_branch_effect).
_NPU_BRANCH_WORDS = {"info": "info, once per branch (the branch makes it harmless)",
                     "keep": "as anywhere else (broken on NPU whatever branch it sits in)"}


def explain_text(rule: Rule, kb: KnowledgeBase) -> str:
    lines = [
        f"{rule.id} {rule.name}  [{rule.category}, {rule.severity}, effort {rule.effort}]",
        "",
        f"transfer_to_npu: {_TRANSFER_WORDS[rule.transfer]}",
        f"NPU equivalent:  {rule.npu}",
    ]
    if rule.agnostic:
        lines.append(f"device-agnostic: {rule.agnostic}" + (f" (torch >= {rule.agnostic_min_torch})" if rule.agnostic_min_torch else ""))
    lines += [f"fix:             transfer {rule.fix_kind('transfer')}, agnostic {rule.fix_kind('agnostic')}",
              f"in an npu branch: {_NPU_BRANCH_WORDS[rule.npu_branch_effect]}",
              "", "Why", "  " + rule.why.strip(), "", "How to fix", "  " + rule.how.strip(), "",
              "Before", _indent(rule.before), "After", _indent(rule.after)]
    names = sorted(q for q, e in kb.cuda_names.items() if e.rule == rule.id)
    if names and rule.id not in ("CU001", "CU002"):
        lines += ["", "Applies to: " + ", ".join(names)]
    return "\n".join(lines).rstrip() + "\n"


def _indent(text: str) -> str:
    return "\n".join("    " + ln for ln in text.rstrip().splitlines())


def render_rules_reference() -> str:
    """references/rules.md: one section per rule plus the torch.cuda coverage table."""
    kb = load_knowledge()
    out = ["# Rule reference", "",
           "Generated from `src/ascend_migrate/knowledge/` by `ascend-migrate docs --write`; do not edit by hand.",
           "", "| id | name | category | severity | transfer_to_npu | fix (transfer / agnostic) | effort |",
           "|---|---|---|---|---|---|---|"]
    for r in kb.rules.values():
        out.append(f"| [{r.id}](#{r.id.lower()}) | {r.name} | {r.category} | {r.severity} | {r.transfer} | "
                   f"{r.fix_kind('transfer')} / {r.fix_kind('agnostic')} | {r.effort} |")
    for r in kb.rules.values():
        out += ["", f"## {r.id}", "", f"**{r.name}** ({r.category}, {r.severity}). "
                f"transfer_to_npu: {_TRANSFER_WORDS[r.transfer]}. NPU: {r.npu}."]
        if r.agnostic:
            out.append(f"Device-agnostic: {r.agnostic}" + (f" (torch >= {r.agnostic_min_torch})." if r.agnostic_min_torch else "."))
        out.append(f"Inside code that branches for npu: reported {_NPU_BRANCH_WORDS[r.npu_branch_effect]}.")
        out += ["", f"Message: {r.message.replace('{', '').replace('}', '')}", "", "**Why.** " + r.why.strip(), "",
                "**How to fix.** " + r.how.strip(), "", "Before:", "", "```python", r.before.rstrip(), "```", "",
                "After:", "", "```python", r.after.rstrip(), "```"]
    out += ["", "## torch.cuda coverage", "",
            "Every public name of `torch.cuda` and its public submodules (torch 2.13).", "",
            "| name | transfer_to_npu | rule | device-agnostic |", "|---|---|---|---|"]
    for qual, e in kb.cuda_names.items():
        agn = f"`{e.agnostic}` ({e.since})" if e.agnostic else (e.npu or "")
        out.append(f"| `{qual}` | {e.transfer} | {e.rule} | {agn} |")
    out += ["", "## Packages", "", "| package | requirement names | guidance |", "|---|---|---|"]
    for p in kb.packages:
        out.append(f"| {p.key} | {', '.join(p.names)} | {p.guidance} |")
    out += ["", "## Frameworks", "", "| framework | guidance |", "|---|---|"]
    for f in kb.frameworks:
        out.append(f"| {f.label} | {f.guidance} |")
    return "\n".join(out) + "\n"
