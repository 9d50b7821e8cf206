"""`ascend-migrate rules`, `explain RULE` and `docs`: the knowledge base from the shell."""
from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("rules")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable list.")
def rules_command(as_json: bool) -> None:
    """List every rule: id, name, severity, transfer_to_npu coverage, fix kinds."""
    import json

    from ascend_migrate.knowledge.base import load_knowledge

    kb = load_knowledge()
    if as_json:
        click.echo(json.dumps([{"id": r.id, "name": r.name, "category": r.category, "severity": r.severity,
                                "transfer": r.transfer, "fix": r.fix, "effort": r.effort}
                               for r in kb.rules.values()], indent=2))
        return
    click.echo(f"{'ID':6} {'NAME':32} {'CATEGORY':12} {'SEVERITY':8} {'TRANSFER':8} FIX (transfer/agnostic)")
    for r in kb.rules.values():
        click.echo(f"{r.id:6} {r.name:32} {r.category:12} {r.severity:8} {r.transfer:8} "
                   f"{r.fix_kind('transfer')}/{r.fix_kind('agnostic')}")


@click.command("explain")
@click.argument("rule")
def explain_command(rule: str) -> None:
    """Explain RULE (an id such as CU101, or a torch.cuda name such as torch.cuda.nvtx)."""
    from ascend_migrate.knowledge.base import load_knowledge
    from ascend_migrate.knowledge.render import explain_text

    kb = load_knowledge()
    key = rule.strip()
    if key.upper() in kb.rules:
        click.echo(explain_text(kb.rules[key.upper()], kb))
        return
    qual = key if key.startswith("torch.cuda") else f"torch.cuda.{key}"
    entry = kb.cuda_names.get(qual)
    if entry is not None:
        click.echo(f"{qual}: transfer_to_npu coverage {entry.transfer}; reported as {entry.rule}"
                   + (f"; device-agnostic: {entry.agnostic} (torch >= {entry.since})" if entry.agnostic else "")
                   + (f"; NPU analog: {entry.npu}" if entry.npu else "") + "\n")
        click.echo(explain_text(kb.rules[entry.rule], kb))
        return
    click.echo(f"error: unknown rule or torch.cuda name {rule!r} (see `ascend-migrate rules`)", err=True)
    sys.exit(2)


@click.command("docs")
@click.option("--write", is_flag=True, help="Write the files that are out of date.")
@click.option("--check", is_flag=True, help="Only report which files are out of date (the default).")
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=Path("."), show_default=True,
              help="The ascend-migrate checkout that holds references/.")
def docs_command(write: bool, check: bool, root: Path) -> None:
    """Regenerate the generated documentation (references/*.md) and the skills' toolkit wheels.

    \b
    Run it in (or point --root at) a checkout of ascend-migrate. Exit codes with --check
    (the default): 0 up to date, 1 files out of date (listed), 2 not a checkout or bad usage.
    """
    from ascend_migrate.knowledge.docs import stale_files, write_all

    if write and check:
        raise click.UsageError("use either --write or --check, not both")
    if not is_checkout(root):
        click.echo(f"error: {root.resolve()} is not an ascend-migrate checkout (no references/ folder next to "
                   "src/ascend_migrate/); run this in a clone of the repository or pass --root. The rule "
                   "documentation of an installed copy is available with `ascend-migrate explain RULE`.", err=True)
        sys.exit(2)
    if write:
        changed = write_all(root)
        click.echo("\n".join(f"wrote {c}" for c in changed) or "references are up to date")
        return
    stale = stale_files(root)
    click.echo("\n".join(f"out of date: {s}" for s in stale) or "references and skill wheels are up to date")
    sys.exit(1 if stale else 0)


def is_checkout(root: Path) -> bool:
    """A clone of this repository: its references/ folder and its package source side by side."""
    return (root / "references").is_dir() and (root / "src" / "ascend_migrate" / "knowledge").is_dir()
