"""`validate run PATH`: decide every checklist item and produce the report."""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ascend_migrate import __version__
from ascend_migrate.scan.api import ScanResult
from ascend_migrate.validate.checklist import ChecklistItem, default_checklist
from ascend_migrate.validate.entry_worker import EntryFailed
from ascend_migrate.validate.project import Project, load_project
from ascend_migrate.validate import confirmations, provenance
from ascend_migrate.validate.confirmations import CONFIRM_FILE
from ascend_migrate.validate.report import SCHEMA, summary_counts
from ascend_migrate.validate.verdict import apply_confirmation, decide
from ascend_migrate.validate.static import CheckResult, StaticContext, run_static
from ascend_migrate.validate.thresholds import Thresholds, load_thresholds

_DIST_RE = re.compile(r"\btorch\.distributed\b|\bDistributedDataParallel\b|\binit_process_group\b")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def project_dir(path: Path) -> Path:
    path = Path(path).resolve()
    return path if path.is_dir() else path.parent


# --- confirmations (validate/confirmations.py) -------------------------------------------------

def confirmations_path(path: Path) -> Path:
    return project_dir(path) / CONFIRM_FILE


def load_confirmations(path: Path) -> dict[str, dict[str, Any]]:
    """The recorded confirmations; a record reached through a symlink is not ours and is ignored."""
    return confirmations.load_confirmations(project_dir(path))


# --- options --------------------------------------------------------------------------------

@dataclass
class ValidateOptions:
    device: str = "cpu"
    golden: Optional[Path] = None
    entry: Optional[str] = None
    autocast: Optional[str] = None
    dtype: Optional[str] = None
    thresholds: Optional[Thresholds] = None
    ddp: bool = True
    ddp_entry: Optional[str] = None
    ddp_steps: Optional[int] = None
    ddp_timeout_s: Optional[float] = None
    thresholds_file: Optional[str] = None  # recorded in the report so a replay can use it again
    precision: str = "fp32"  # validate.precision mode pinned for the target run
    environment: Optional[dict[str, Any]] = None  # None: run `ascend-migrate check --json`
    scan_result: Optional[ScanResult] = None  # None: scan PATH
    confirm: tuple[str, ...] = ()  # manual items a person decided in this run (with `note`)
    idle_s: Optional[float] = None  # no-progress limit of every child run (validate.child)
    command: Optional[list[str]] = None  # the project's own command (validate.command); else an entry
    pass_env: tuple[str, ...] = ()  # credential-like variables the command may see
    loss_pattern: Optional[str] = None  # printed-loss fallback of a command run
    ddp_command: Optional[list[str]] = None  # the command for the DDP check (default: derived)
    cap_s: Optional[float] = None  # overall limit of every child run
    torch_npu: Optional[str] = None  # the release the operator check predicts for (None: newest with data)
    operators: bool = True  # on the emulated npu: record the operators and predict torch_npu's fallbacks
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _scan(path: Path) -> tuple[Optional[ScanResult], Optional[str]]:
    try:
        from ascend_migrate.scan.api import scan
        result = scan(path)
    except Exception as exc:  # scanner missing or broken: static rule items cannot be decided
        return None, f"{type(exc).__name__}: {exc}"
    # our own reports live in .ascend-migrate/; they quote findings and must not be scanned
    result.findings = [f for f in result.findings if not f.path.startswith(".ascend-migrate/")]
    return result, None


def _uses_distributed(project: Project) -> list[dict[str, Any]]:
    hits = []
    for rel in project.python_files:
        text = project.text(rel) or ""
        for lineno, line in enumerate(text.splitlines(), 1):
            if _DIST_RE.search(line) and not line.lstrip().startswith("#"):
                hits.append({"path": rel, "line": lineno, "message": line.strip()[:120]})
                break
    return hits


def _item_dict(item: ChecklistItem, result: CheckResult) -> dict[str, Any]:
    return {
        "id": item.id,
        "title": item.title,
        "kind": item.kind,
        "severity": item.severity,
        "status": result.status,
        "summary": result.summary,
        "evidence": result.evidence,
        "how": item.how,
        "fix": item.fix,
    }


def validate_project(path: Path | str, options: Optional[ValidateOptions] = None) -> dict[str, Any]:
    """Decide every checklist item for the ported tree at `path`; return the report dict."""
    opts = options or ValidateOptions()
    path = Path(path).resolve()
    thresholds = opts.thresholds or load_thresholds()
    project = load_project(path)
    root = project.root
    if opts.scan_result is not None:
        scan_result, scan_error = opts.scan_result, None
    else:
        scan_result, scan_error = _scan(path)
    # the tree as validated: hashed before any entry runs (runs may write logs, data, checkpoints)
    golden_rel = _rel_inside(opts.golden, root)
    # files earlier validation runs created in the tree (checkpoints, logs) are outputs, not the port
    prior_outputs = [_literal(rel) for rel in confirmations.run_outputs(root)]
    tree_before = provenance.tree_manifest(root, ([_literal(golden_rel)] if golden_rel else []) + prior_outputs)
    if opts.confirm:  # refused before anything runs when an id is not a manual item
        confirmations.record(root, list(opts.confirm), opts.note, tree_before)
    confirmed = confirmations.load_confirmations(root)
    bound = confirmations.binding_hash(tree_before, root)
    ctx = StaticContext(scan=scan_result or ScanResult(root=str(path)), project=project, thresholds=thresholds)
    dynamic = _Dynamic(opts, root, thresholds, project)
    items: list[dict[str, Any]] = []
    refused_confirmations: list[dict[str, str]] = []
    for item in default_checklist():
        if item.kind == "static":
            if scan_error is not None and item.rules:
                result = CheckResult("manual-pending", [{"message": f"the scanner could not run: {scan_error}"}],
                                     "not decided: scanner unavailable")
            else:
                result = run_static(item, ctx)
        elif item.kind == "dynamic":
            result = dynamic.run(item)
        elif item.check:  # a manual question that arises only in some trees: ask it only there
            result = run_static(item, ctx)
            if result.status != "skip":
                result = CheckResult("manual-pending", result.evidence, result.summary)
        else:
            result = CheckResult("manual-pending", [], "to be decided by a person")
            if item.id == "host-environment":
                result.evidence.append({"message": "see the environment section (ascend-migrate check --json)"})
        entry = _item_dict(item, result)
        if item.id in confirmed and entry["status"] in ("fail", "manual-pending"):
            if item.kind != "manual":
                refused = "only evidence clears an automatic item (a recorded confirmation is ignored)"
            else:
                refused = confirmations.why_stale(confirmed[item.id], bound)
            if refused:
                entry["evidence"].insert(0, {"message": f"confirmation not applied: {refused}"})
                refused_confirmations.append({"id": item.id, "reason": refused})
            else:
                apply_confirmation(entry, confirmed[item.id])
        items.append(entry)

    decision = decide(items)
    environment = opts.environment
    if environment is None:
        from ascend_migrate.validate.environment import collect_environment
        from ascend_migrate.validate.devices import on_device

        environment = collect_environment(on_device(opts.device))  # emulated-npu:N asks about npu:N
    used_dtype = dynamic.dtype_used or "fp32"
    emulated = is_emulated_run(opts.device)
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "verdict": decision.verdict,
        **({"verdict_note": f"{decision.verdict} on an {EMULATED_NPU}: not evidence that the port runs on "
                            "Ascend"} if emulated else {}),
        "project": str(path),
        "device": opts.device,
        "created": _now(),
        "tool": {"name": "ascend-migrate", "version": __version__},
        "summary": summary_counts(items),
        "reasons": decision.reasons,
        "open_warnings": decision.open_warnings,
        "confirmations_refused": refused_confirmations,
        "items": items,
        "thresholds": {
            **thresholds.to_dict(),
            "used": {
                "dtype": used_dtype,
                "outputs": thresholds.gate(used_dtype).to_dict(),
                "hard": thresholds.hard.to_dict(),
                "loss": thresholds.loss_tol(used_dtype).to_dict(),
                "ddp": thresholds.ddp.to_dict(),
                "dataloader": {"max_literal_workers": thresholds.dataloader_max_literal_workers},
            },
        },
        "comparison": dynamic.comparison.to_dict() if dynamic.comparison else None,
        **({"command": _command_section(opts, dynamic),
            "edit_sites": next(i["summary"] for i in items if i["id"] == "migrated-code-executed")}
           if opts.command else {}),
        "ddp": dynamic.ddp_summary,
        "operators": _operators_section(opts, dynamic, emulated),
        "scan": _scan_section(scan_result, scan_error, project),
        "environment": environment,
        "options": _options_record(opts, root),
        "provenance": _provenance(opts, root, environment, dynamic, items, tree_before, prior_outputs),
    }
    confirmations.remember_run_outputs(root, report["provenance"]["tree"]["created_by_run"])
    return provenance.sign(report)


def _operators_section(opts: ValidateOptions, dynamic: "_Dynamic", emulated: bool) -> dict[str, Any]:
    """Which operators of the port's run torch_npu will run on the CPU on the NPU host (recorded
    on the emulated npu; `validate.operators`)."""
    from ascend_migrate.validate import operators

    why = operators.why_not_checked(opts.device, emulated, opts.operators)
    if why is None and device_kind(opts.device) != EMULATED_KIND:
        why = (f"the run used an emulated npu as {opts.device}; validate with --device emulated-npu to record "
               "its operators")
    if why is not None:
        return operators.not_checked(why)
    if dynamic.operators is None:
        return operators.not_checked("nothing was recorded: " + (
            "no golden file given, so the port did not run" if opts.golden is None else
            f"the port's run failed ({dynamic.compare_error})" if dynamic.compare_error else "the port did not run"))
    found = operators.section(dynamic.operators, opts.torch_npu)
    if dynamic.compare_error:
        found["notes"].append("the port's run failed: operators it would dispatch after the failure are not known")
    return found


def _command_section(opts: ValidateOptions, dynamic: "_Dynamic") -> dict[str, Any]:
    """What ran on each side: the command lines, the hosts, and how the port's run ended."""
    meta = dynamic.golden_meta or {}
    run = dynamic.command_run
    section: dict[str, Any] = {
        "run": opts.command,
        "golden": {"command": meta.get("command"), "device": meta.get("device"),
                   "emulated": bool(meta.get("emulated")), "trained_on": meta.get("trained_on"),
                   "steps": meta.get("steps"), "threads": meta.get("threads"), "seed": meta.get("seed"),
                   "created": meta.get("created")},
        "same_command_line": meta.get("command") == opts.command,
        "target": run.to_dict() if run is not None else None,
    }
    return section


def _literal(rel: str) -> str:
    """A path as an exclusion pattern that matches only itself (a file a run created may be named
    `*` or `[a-z]*`: as a glob it would leave other files out of the tree hash)."""
    return re.sub(r"([*?\[])", r"[\1]", rel)


def _rel_inside(path: Optional[Path], root: Path) -> Optional[str]:
    if path is None:
        return None
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def _options_record(opts: ValidateOptions, root: Path) -> dict[str, Any]:
    """The options that decide the numbers, so a replay can run the same validation."""
    return {
        "device": opts.device,
        "entry": opts.entry,
        "autocast": opts.autocast,
        "dtype": opts.dtype,
        "precision": opts.precision,
        "thresholds_file": opts.thresholds_file,
        "ddp": opts.ddp,
        "ddp_entry": opts.ddp_entry,
        "ddp_steps": opts.ddp_steps,
        "ddp_timeout_s": opts.ddp_timeout_s,
        "command": opts.command,
        "ddp_command": opts.ddp_command,
        "loss_pattern": opts.loss_pattern,
        "idle_timeout_s": opts.idle_s,
        "time_limit_s": opts.cap_s,
        "torch_npu": opts.torch_npu,
        "operators": opts.operators,
    }


def device_kind(device: str) -> str:
    return (device or "cpu").split(":", 1)[0]


# A run on the test suite's CPU-backed npu device (tests/npu_standin) shows that a port places
# everything on a device named npu, not that it runs on Ascend: its reports say so everywhere.
EMULATED_NPU = "emulated npu (CPU kernels)"
EMULATED_KIND = "emulated-npu"


def is_emulated_run(device: str) -> bool:
    """Results on this device come from the emulated npu (asked for, or the test stand-in)."""
    kind = device_kind(device)
    return kind == EMULATED_KIND or (kind == "npu" and emulated_npu())


def emulated_npu() -> bool:
    """True when this process's torch_npu is the stand-in: it marks itself `__emulated__`, and
    the tests that launch it set ASCEND_MIGRATE_EMULATED_NPU=1 before any import."""
    module = sys.modules.get("torch_npu")
    return bool(getattr(module, "__emulated__", False)) or os.environ.get("ASCEND_MIGRATE_EMULATED_NPU") == "1"


def _provenance(opts: ValidateOptions, root: Path, environment: dict[str, Any], dynamic: "_Dynamic",
                items: list[dict[str, Any]], before: dict[str, str], prior_outputs: list[str]) -> dict[str, Any]:
    statuses = {i["id"]: i["status"] for i in items}
    compared = opts.golden is not None and dynamic.comparison is not None and (
        statuses.get("golden-outputs") in ("pass", "fail") or statuses.get("loss-curve") in ("pass", "fail"))
    golden_rel = _rel_inside(opts.golden, root)
    # as patterns that match only the file they name (a replay accepts nothing else)
    excluded = ([_literal(golden_rel)] if golden_rel else []) + list(prior_outputs)
    # files the validation run itself wrote or changed are outputs of the run, not the port
    after = provenance.tree_manifest(root, excluded)
    written = sorted(rel for rel in after if before.get(rel) != after[rel])
    created = [rel for rel in written if rel not in before]
    excluded += [_literal(rel) for rel in written]
    manifest = {rel: digest for rel, digest in before.items() if rel not in written}
    golden: dict[str, Any] = {"given": opts.golden is not None, "compared": bool(compared)}
    if opts.golden is not None:
        golden.update({
            "path": str(Path(opts.golden).resolve()),
            "sha256": provenance.file_sha256(Path(opts.golden)) if Path(opts.golden).is_file() else None,
            "entry": dynamic.golden_meta.get("entry"),
            "kind": dynamic.golden_meta.get("kind"),
            "captured_on": dynamic.golden_meta.get("device"),
            "seed": dynamic.golden_meta.get("seed"),
            "steps": dynamic.golden_meta.get("steps"),
            "dtype": dynamic.golden_meta.get("dtype"),
            "autocast": dynamic.golden_meta.get("autocast"),
            "precision": dynamic.golden_meta.get("precision"),
            "command": dynamic.golden_meta.get("command"),
            "emulated": bool(dynamic.golden_meta.get("emulated")),
        })
    if not compared:
        golden["why_not"] = ("no golden file given (--golden)" if opts.golden is None
                             else dynamic.compare_error or "the golden file holds nothing to compare")
    kind = device_kind(opts.device)
    emulated = is_emulated_run(opts.device)
    return {
        "device": opts.device + (f" ({EMULATED_NPU})" if emulated else ""),
        "device_kind": EMULATED_KIND if emulated else kind,
        **({"emulated": EMULATED_NPU} if emulated else {}),
        "host": provenance.host_record(environment or {}),
        "golden": golden,
        # the precision switches pinned for the run and recorded with the golden (validate.precision)
        "precision": dynamic.precision_record(),
        "tree": {
            "algorithm": provenance.TREE_HASH_ALGO,
            "sha256": provenance.manifest_hash(manifest),
            "files": len(manifest),
            "manifest": manifest,
            "excluded": excluded,
            "written_by_run": written,
            "created_by_run": created,
            "earlier_run_outputs": list(prior_outputs),
            "own_outputs_excluded": "`.ascend-migrate/`, `ascend-migrate-*` change lists, reports with an "
                                    "ascend-migrate schema id; list them with `ascend-migrate validate own-files PATH`",
        },
    }


def _scan_section(scan_result: Optional[ScanResult], error: Optional[str], project: Project) -> dict[str, Any]:
    section: dict[str, Any] = {"available": scan_result is not None and error is None}
    if error:
        section["error"] = error
    if scan_result is not None:
        section.update({
            "files_scanned": scan_result.files_scanned,
            "findings": len(scan_result.findings),
            "rules": sorted(scan_result.rules_fired()),
            "entry_points": [{"path": e.path, "line": e.line, "kind": e.kind,
                              "has_transfer_import": e.has_transfer_import} for e in scan_result.entry_points],
            "notes": [{"path": n.path, "reason": n.reason} for n in scan_result.notes],
        })
    section["validator_skipped"] = [{"path": p, "reason": r} for p, r in project.skipped]
    return section


class _Dynamic:
    """Runs the numbers once and answers the three dynamic items."""

    def __init__(self, opts: ValidateOptions, root: Path, thresholds: Thresholds, project: Project) -> None:
        self.opts = opts
        self.root = root
        self.thresholds = thresholds
        self.project = project
        self.comparison = None
        self.compare_error: Optional[str] = None
        self.golden_meta: dict[str, Any] = {}
        self.dtype_used: Optional[str] = None
        self.ddp_summary: Optional[dict[str, Any]] = None
        self.run_outcome: Optional[dict[str, Any]] = None  # how a failed child run ended (validate.child)
        self.command_run = None  # validate.command.CommandRun of a command validation
        self.ddp_run = None  # the CommandRun of the two-process run, when it was a run of its own
        self._ddp_result: Optional[CheckResult] = None  # decided once: the edit-site item reads its records
        self.sites = None  # validate.command.EditSites of the tree
        self.operators: Optional[dict[str, Any]] = None  # recorded on the emulated npu (validate.operators)
        self._compared = False

    def run(self, item: ChecklistItem) -> CheckResult:
        if item.check == "precision_modes":
            self._compare()
            return self._precision_item()
        if item.check in ("golden_outputs", "loss_curve"):
            self._compare()
            return self._mismatched() or (self._golden_item() if item.check == "golden_outputs" else self._loss_item())
        if item.check == "ddp_smoke":
            return self._ddp_item()
        if item.check == "migrated_code":
            return self._migrated_code_item()
        raise KeyError(f"checklist item {item.id}: no dynamic check named {item.check!r}")

    def _compare(self) -> None:
        if self._compared or self.opts.golden is None:
            return
        self._compared = True
        if self.opts.command:
            return self._compare_command()
        from ascend_migrate.validate.dynamic import compare
        from ascend_migrate.validate.golden import load_golden

        try:
            self.golden_meta = load_golden(self.opts.golden).meta
            self.comparison = compare(self.opts.golden, self.root, self.opts.device, self.thresholds,
                                      spec=self.opts.entry, autocast=self.opts.autocast, dtype=self.opts.dtype,
                                      precision_mode=self.opts.precision, idle_s=self.opts.idle_s,
                                      cap_s=self.opts.cap_s, record_ops=self.opts.operators,
                                      ops_release=self.opts.torch_npu)
            self.operators = self.comparison.target_meta.pop("operators", None)
            self.dtype_used = self.comparison.dtype
        except EntryFailed as exc:
            self.compare_error = str(exc)
            self.run_outcome = exc.outcome
        except Exception as exc:
            self.compare_error = f"{type(exc).__name__}: {exc}"

    def _compare_command(self) -> None:
        """Run the project's command in the port under the harness and compare with the golden."""
        from ascend_migrate.validate import command as cmd
        from ascend_migrate.validate.golden import load_golden

        try:
            golden = load_golden(self.opts.golden)
        except Exception as exc:
            self.compare_error = f"{type(exc).__name__}: {exc}"
            return
        self.golden_meta = golden.meta
        if golden.meta.get("mode") != "command":
            self.compare_error = ("the golden file was captured from an entry, not from a command: capture it with "
                                  "`validate capture ... -o GOLDEN -- COMMAND` on the original")
            return
        self.sites = cmd.edit_sites(self.root)
        steps = int(golden.meta.get("steps") or max(len(golden.meta.get("step_losses") or []), 1))
        seed = golden.meta.get("seed")
        threads = golden.meta.get("threads")
        try:
            run = cmd.run_command(self.opts.command, self.root, device=self.opts.device, steps=steps, seed=seed,
                                  threads=threads, sites=self.sites.python if self.sites else None,
                                  idle_s=self.opts.idle_s or 600.0, cap_s=self.opts.cap_s or 3600.0,
                                  pass_env=self.opts.pass_env, loss_pattern=self.opts.loss_pattern,
                                  on_line=self.opts.extra.get("on_line"), record_ops=self.opts.operators,
                                  ops_release=self.opts.torch_npu)
        except Exception as exc:  # the emulated npu cannot be built, the command cannot start
            self.compare_error = f"{type(exc).__name__}: {exc}"
            return
        self.command_run = run
        self.operators = run.operators
        if not run.ok:
            self.compare_error = "; ".join(run.problems)
            self.run_outcome = run.outcome.to_dict()
            return
        self.comparison = cmd.compare_command_run(golden, run, self.thresholds, self.opts.dtype)
        self.dtype_used = self.comparison.dtype

    def _no_golden(self) -> Optional[CheckResult]:
        if self.opts.golden is None:
            return CheckResult("skip", [{"message": "no golden file given (--golden); capture one on the "
                                                    "reference device with `ascend-migrate validate capture`"}],
                               "not run: no golden file")
        if self.compare_error:
            evidence: list[dict[str, Any]] = [{"message": f"the target run failed: {self.compare_error}"}]
            if self.run_outcome:
                evidence.append({"message": "how the run ended: " + str(self.run_outcome.get("summary")),
                                 "last_output": self.run_outcome.get("last_output") or []})
            return CheckResult("fail", evidence, f"the target run failed: {self.compare_error}")
        return None

    def precision_record(self) -> dict[str, Any]:
        """The precision provenance: mode, both sides' switches, and what differs."""
        from ascend_migrate.validate.precision import thresholds_mismatch

        comp = self.comparison
        record: dict[str, Any] = {"mode": self.opts.precision, "thresholds_assume": self.thresholds.precision}
        if comp is not None:
            record.update(golden=self.golden_meta.get("precision"), run=comp.target_meta.get("precision"),
                          mismatch=list(comp.precision_mismatch))
        problem = thresholds_mismatch(self.thresholds.precision, self.opts.precision)
        if problem:
            record.setdefault("mismatch", []).append(problem)
        return record

    def _mismatched(self) -> Optional[CheckResult]:
        """Outputs from runs under different precision switches are not judged by number."""
        if self.comparison is not None and self.precision_record().get("mismatch"):
            return CheckResult("skip", [{"message": "not judged: the golden and this run used different precision "
                                                    "switches (see precision-modes)"}],
                               "not judged: precision provenance differs")
        return None

    def _precision_item(self) -> CheckResult:
        early = self._no_golden()
        if early:
            return early
        if self.opts.command:
            return CheckResult("skip", [{"message": "the project's command sets its own precision switches; both "
                                                    "sides ran the same command line, and the run's threads and "
                                                    "seed are pinned and recorded"}],
                               "not pinned: the command's own settings apply to both sides")
        record = self.precision_record()
        mismatch = record.get("mismatch") or []
        if mismatch:
            return CheckResult("fail", [{"message": f"provenance mismatch: {m}"} for m in mismatch],
                               "provenance mismatch: " + "; ".join(mismatch))
        return CheckResult("pass", [{"message": f"golden and run both in {record['mode']} mode", "run": record.get("run")}],
                           f"golden and run used the same precision switches ({record['mode']} mode)")

    def _golden_item(self) -> CheckResult:
        early = self._no_golden()
        if early:
            return early
        if self.opts.command:
            check = self.comparison.target_meta.get("params_check") or {}
            ev = [{"message": check.get("message", ""), "bit_identical": check.get("bit_identical")}]
            status = check.get("status", "skip")
            return CheckResult(status, ev, "parameters after the last step: " + check.get("message", "not compared"))
        comp = self.comparison
        if not comp.outputs:
            return CheckResult("skip", [{"message": "the golden file holds no outputs"}], "no outputs to compare")
        evidence = []
        for r in comp.outputs:
            ev = {"output": r.name, "status": r.status, "dtype": r.dtype, "shape": r.shape,
                  # the evidence names the output in its own field; the summary keeps the full text
                  "message": "; ".join(f.removeprefix(f"output '{r.name}': ") for f in r.failures)
                  if r.failures else "within thresholds",
                  "metrics": r.metrics.to_dict() if r.metrics else None}
            evidence.append(ev)
        evidence.sort(key=lambda e: e["status"] == "pass")
        bad = [r for r in comp.outputs if not r.passed]
        if bad:
            first = bad[0].failures[0] if bad[0].failures else bad[0].name
            return CheckResult("fail", evidence, f"{len(bad)} of {len(comp.outputs)} output(s) fail ({comp.dtype}); {first}")
        return CheckResult("pass", evidence, f"{len(comp.outputs)} output(s) within {comp.dtype} thresholds")

    def _loss_item(self) -> CheckResult:
        early = self._no_golden()
        if early:
            return early
        loss = self.comparison.loss
        if loss is None:
            return CheckResult("skip", [{"message": "the golden file holds no loss trajectory"}], "no losses to compare")
        evidence = [{"message": loss.message, "first_bad_step": loss.first_bad_step, "rtol": loss.rtol,
                     "atol": loss.atol, "dtype": loss.dtype, "steps": loss.per_step}]
        if not loss.passed:
            return CheckResult("fail", evidence, loss.message)
        from ascend_migrate.validate.metrics import constant_losses

        constant = constant_losses([s["golden"] for s in loss.per_step])
        if constant:  # agent-walk D11: a flat reference compares nothing
            summary = (f"not confirmed: {constant}, so matching it checks nothing; make the entry's loss "
                       "depend on the model (real targets, more than one class, parameters that get gradients) "
                       "and capture again")
            return CheckResult("manual-pending", [{"message": summary}] + evidence, summary)
        return CheckResult("pass", evidence, loss.message)

    def _entry_files(self) -> set[str]:
        """The entry module's possible paths (it is the harness, not ported project code)."""
        from ascend_migrate.validate.entry import EntryError, _is_file_target, split_spec

        spec = self.opts.entry or self.golden_meta.get("entry") or ""
        try:
            target, _ = split_spec(spec)
        except EntryError:
            return set()
        if _is_file_target(target):
            path = Path(target)
            if path.is_absolute():
                rel = _rel_inside(path, self.root)
                return {rel} if rel else set()
            return {path.as_posix().removeprefix("./")}
        base = target.replace(".", "/")
        return {base + ".py", base + "/__init__.py"}

    def _migrated_code_item(self) -> CheckResult:
        """Did the entry run go through any file the migration changed? (agent-walk D10)"""
        from ascend_migrate.validate.executed import changed_files

        if self.opts.command and self.opts.golden is not None:
            return self._edit_sites_item()
        if self.opts.golden is None:
            return CheckResult("skip", [{"message": "no entry ran: no golden file given (--golden)"}],
                               "not run: no golden file")
        self._compare()
        if self.compare_error or self.comparison is None:
            return CheckResult("skip", [{"message": "the target run failed (see golden-outputs)"}],
                               "not decided: the target run failed")
        executed = list(self.comparison.target_meta.get("executed_files") or [])
        ran = {"message": "files the entry executed: " + (", ".join(executed[:20]) if executed else "none")
               + (f" and {len(executed) - 20} more" if len(executed) > 20 else "")}
        found = changed_files(self.root)
        if found is None:
            return CheckResult("skip", [{"message": "no change list in this tree (ascend-migrate-changes.json or "
                                                    ".ascend-migrate/runs/): which files the migration changed is "
                                                    "unknown"}, ran],
                               "not decided: no change list")
        change_list, files = found
        entry_files = self._entry_files()
        changed_py = [f for f in files if f.endswith(".py") and f not in entry_files]
        source = {"message": f"change list: {_rel_inside(change_list, self.root) or change_list}"}
        if not changed_py:
            others = ", ".join(files[:10]) or "none"
            return CheckResult("skip", [{"message": "the migration changed no Python module the entry could run "
                                                    f"(changed: {others}); check those on the NPU host"}, ran, source],
                               "not needed: no changed Python module")
        hit = [f for f in changed_py if f in set(executed)]
        missed = [f for f in changed_py if f not in hit]
        evidence = ([{"path": f, "message": "changed by the migration and executed by the entry"} for f in hit]
                    + [{"path": f, "message": "changed by the migration, never executed by the entry"} for f in missed]
                    + [ran, source])
        if hit:
            return CheckResult("pass", evidence,
                               f"the entry executed {len(hit)} of {len(changed_py)} changed Python file(s)"
                               + (f"; not executed: {', '.join(missed[:5])}" if missed else ""))
        listed = ", ".join(changed_py[:5]) + (f" and {len(changed_py) - 5} more" if len(changed_py) > 5 else "")
        return CheckResult("manual-pending", evidence,
                           f"the entry executed none of the {len(changed_py)} changed Python file(s) ({listed}): "
                           "the numbers compared code that was not migrated; validate with the project's own "
                           "command (validate run PORT --golden G -- COMMAND) or make the entry import the "
                           "migrated code")

    def _command_ddp_item(self, uses: list[dict[str, Any]]) -> CheckResult:
        """Two processes of the project's command under torchrun: every rank makes the steps, the
        ranks form one process group, and their parameters agree after the last step."""
        from ascend_migrate.validate import command as cmd

        shape = cmd.command_shape(self.opts.command)
        if shape.kind == "torchrun" and shape.nproc >= 2 and not self.opts.ddp_command:
            self._compare()
            run, argv = self.command_run, self.opts.command
            if run is None:
                return CheckResult("fail", [{"message": "the command's run failed (see loss-curve)"}] + uses,
                                   "the distributed run failed")
        else:
            argv = self.opts.ddp_command or cmd.ddp_variant(self.opts.command)
            if argv is None:
                return CheckResult("manual-pending", [{"message": "the command is not a plain Python command, so no "
                                                                  "two-process variant can be derived: give one with "
                                                                  "--ddp-command 'torchrun --nproc_per_node=2 ...'"}]
                                   + uses, "not run: no two-process command")
            self._compare()
            steps = self.opts.ddp_steps or int(self.golden_meta.get("steps") or 0) or self.thresholds.ddp.steps
            timeout = self.opts.ddp_timeout_s or self.thresholds.ddp.timeout_s
            try:
                run = cmd.run_command(argv, self.root, device=self.opts.device, steps=steps,
                                      seed=self.golden_meta.get("seed", 0), threads=self.golden_meta.get("threads", 1),
                                      sites=self.sites.python if self.sites else None,
                                      idle_s=min(self.opts.idle_s or 600.0, timeout), cap_s=timeout,
                                      pass_env=self.opts.pass_env)
                self.ddp_run = run
            except Exception as exc:
                return CheckResult("fail", [{"message": f"could not run {' '.join(argv)}: {type(exc).__name__}: {exc}"}]
                                   + uses, "the distributed run could not start")
        command_text = " ".join(argv)
        self.ddp_summary = {"command": list(argv), "status": None, "ranks": run.to_dict()["ranks"],
                            "duration_s": round(run.outcome.duration_s, 2)}
        evidence = [{"message": f"command: {command_text}"}]
        problems = list(run.problems)
        sizes = {r.get("world_size") for r in run.records}
        if not problems and (len(run.records) < 2 or sizes != {len(run.records)}):
            problems.append(f"{len(run.records)} process(es) trained with world size(s) {sorted(map(str, sizes))}: the "
                            "processes did not form one process group; give --ddp-command with the flags that start "
                            "the project's distributed training")
        digests = {(r.get("params") or {}).get("digest") for r in run.records}
        if not problems and len(digests) != 1:
            problems.append("the ranks hold different parameters after the last step: gradients are not reduced")
        if problems:
            self.ddp_summary["status"] = "fail"
            return CheckResult("fail", evidence + [{"message": p} for p in problems]
                               + [{"message": "last output", "last_output": run.outcome.tail[-15:]}],
                               "; ".join(problems))
        self.ddp_summary["status"] = "pass"
        return CheckResult("pass", evidence + [{"message": f"rank {r.get('rank')}: {r.get('steps')} step(s), parameters "
                                                           f"{str((r.get('params') or {}).get('digest'))[:16]}"}
                                               for r in run.records],
                           f"{len(run.records)} ranks made every step in one process group and hold identical parameters")

    def _edit_sites_item(self) -> CheckResult:
        """Which edit sites of the change list the command ran (probes in the changed modules)."""
        from ascend_migrate.validate import command as cmd

        self._compare()
        run = self.command_run
        if run is not None and not run.ok:  # a crash before the first step loads nothing it can report
            return CheckResult("skip", [{"message": "the target run failed (see loss-curve): which edit sites "
                                                    "run is decided by a run that makes its steps"}],
                               "not decided: the target run failed")
        if run is None or self.sites is None:
            if self.sites is None and run is not None:
                return CheckResult("skip", [{"message": "no change list in this tree (ascend-migrate-changes.json or "
                                                        ".ascend-migrate/runs/): which lines the migration changed "
                                                        "is unknown"}], "not decided: no change list")
            return CheckResult("skip", [{"message": "the target run failed (see loss-curve)"}],
                               "not decided: the target run failed")
        ran, missed, unprobed, unloaded = [], [], [], []
        seen: dict[str, dict[int, str]] = {}
        details: dict[str, dict[int, Any]] = {}
        for rec in run.records:  # a site ran when it ran in any process
            for path, lines in (rec.get("sites") or {}).items():
                mine = seen.setdefault(path, {})
                for line, status in lines.items():
                    if status == "ran" or line not in mine:
                        mine[line] = status
            for path, lines in (rec.get("site_details") or {}).items():
                details.setdefault(path, {}).update(lines)
        # The two-process run reaches what only distributed training runs (process-group set-up,
        # the DDP wrapper); it runs the same tree, so a site it ran, ran. Decided here if not yet.
        under_ddp: dict[str, set[int]] = {}
        if self.opts.command and self.opts.ddp and _uses_distributed(self.project):
            self._ddp_item()
            for rec in (self.ddp_run.records if self.ddp_run is not None else []):
                for path, lines in (rec.get("sites") or {}).items():
                    under_ddp.setdefault(path, set()).update(n for n, status in lines.items() if status == "ran")
        for rel, lines in sorted(self.sites.python.items()):
            statuses = seen.get(str(self.root / rel))
            reasons = details.get(str(self.root / rel)) or {}
            never = statuses is not None and not any(statuses.get(n) == "ran" for n in lines) and any(
                (reasons.get(n) or {}).get("reason") == "the file was never imported" for n in lines)
            for line in lines:
                what = self.sites.rows.get((rel, line), "")
                ev = {"path": rel, "line": line, "message": what}
                if (statuses is None or statuses.get(line) != "ran") and line in under_ddp.get(str(self.root / rel), ()):
                    ran.append(dict(ev, message=f"ran in the two-process run: {what}"))
                elif statuses is None or never:
                    unloaded.append(dict(ev, message=f"module not loaded by the command: {what}"))
                elif statuses.get(line) == "ran":
                    ran.append(dict(ev, message=f"ran: {what}"))
                elif statuses.get(line) == "unprobeable":
                    reason = (details.get(str(self.root / rel)) or {}).get(line, {}).get("reason", "")
                    unprobed.append(dict(ev, message=f"cannot be probed ({reason}): {what}"))
                else:
                    missed.append(dict(ev, message=f"did not run: {what}"))
        argv_text = " ".join(run.argv)
        others = [{"path": f, "message": "edited; named on the command line, counted as run"} for f in
                  self.sites.other_files if f in argv_text or Path(f).name in argv_text]
        total_loaded = len(ran) + len(missed) + len(unprobed)
        if not total_loaded and not unloaded and not others:
            return CheckResult("skip", [{"path": f, "message": "edited launcher or config, not used by this command; "
                                                               "checked by the static items"}
                                        for f in self.sites.other_files]
                               + [{"message": f"change list: {self.sites.change_list}"}],
                               "not needed: the migration changed no Python code (its launcher and config edits "
                               "are checked statically)")
        launched = cmd.command_shape(run.argv).target or ""
        missed.sort(key=lambda e: (e["path"] != launched and e["path"] != launched.replace(".", "/") + ".py",
                                   e["path"], e["line"]))
        summary = f"{len(ran)} of {total_loaded} edit site(s) in the modules the command loaded ran"
        if missed:
            summary += f"; {len(missed)} did not run: " + ", ".join(f"{e['path']}:{e['line']}" for e in missed[:8]) \
                + (" ..." if len(missed) > 8 else "")
        if unloaded:
            summary += f"; {len(unloaded)} site(s) in modules the command never loaded"
        gone = [{"message": f"edit site changed by hand after the migration (its line is gone): {g}"}
                for g in self.sites.gone]
        evidence = ran + missed + unprobed + others + unloaded + gone + [
            {"message": f"change list: {self.sites.change_list}"}]
        if ran or others:
            return CheckResult("pass", evidence, summary)
        if not total_loaded and not unloaded and not self.sites.other_files:
            return CheckResult("skip", evidence, "not needed: the migration changed no code")
        return CheckResult("fail", evidence, summary + ": the numbers compared code the migration did not "
                                                      "touch; run the command that reaches the changed code")

    def _ddp_item(self) -> CheckResult:
        if self._ddp_result is None:
            self._ddp_result = self._decide_ddp()
        return self._ddp_result

    def _decide_ddp(self) -> CheckResult:
        hits = _uses_distributed(self.project)
        if not hits:
            return CheckResult("skip", [{"message": "the project does not use torch.distributed"}],
                               "not needed: no torch.distributed")
        uses = [dict(h, message=f"uses torch.distributed: {h['message']}") for h in hits[:5]]
        if not self.opts.ddp:
            return CheckResult("skip", [{"message": "disabled with --no-ddp"}] + uses, "not run: --no-ddp")
        if self.opts.command:
            return self._command_ddp_item(uses)
        entry = self.opts.ddp_entry
        if entry is None and self.opts.golden is not None:
            self._compare()
            if self.golden_meta.get("kind") == "train":
                entry = self.opts.entry or self.golden_meta.get("entry")
        if entry is None:
            return CheckResult("manual-pending",
                               [{"message": "give a train entry with --ddp-entry FILE.py:FUNCTION to run the "
                                            "two-process smoke test, or confirm a multi-device run by hand"}] + uses,
                               "not run: no train entry")
        from ascend_migrate.validate.ddp import run_ddp_smoke

        seed = int(self.golden_meta.get("seed") or 0)
        try:
            result = run_ddp_smoke(entry, self.root, self.opts.device, self.thresholds.ddp, seed=seed,
                                   steps=self.opts.ddp_steps, timeout_s=self.opts.ddp_timeout_s)
        except Exception as exc:
            return CheckResult("fail", [{"message": f"could not launch torchrun: {type(exc).__name__}: {exc}"}],
                               "launch failed")
        self.ddp_summary = {"status": result.status, "summary": result.summary,
                            "duration_s": round(result.duration_s, 2), "entry": entry}
        return CheckResult(result.status, result.evidence, result.summary)
