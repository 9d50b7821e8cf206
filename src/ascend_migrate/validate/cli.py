"""`ascend-migrate validate`: the validation runner's command line.

    ascend-migrate validate run PATH [options]       the checklist + numbers -> one verdict
                                                     (`validate PATH` is the same command)
    ascend-migrate validate capture ENTRY [options]  golden outputs on the reference device
    ascend-migrate validate compare GOLDEN [options] compare a target run with a golden file
    ascend-migrate validate checklist                print the checklist

Exit codes: 0 pass, 1 fail, 2 usage error.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import click

from ascend_migrate.console import info
from ascend_migrate.printable import printable


def _echo(text: str, err: bool = False, nl: bool = True) -> None:
    """A line (or the tool's own few lines) of output. Exception texts, a command's output,
    evidence and names come from the project being validated: control characters in them are
    shown as escapes (`printable`), and a line break only where the message itself has one."""
    click.echo(printable(text, keep="\n"), err=err, nl=nl)

DEVICE_HELP = "cpu, cuda:N or npu:N"
AUTOCAST = click.Choice(["none", "fp16", "bf16"])
DTYPES = click.Choice(["fp32", "fp16", "bf16"])
PRECISION = click.Choice(["fp32", "reduced"])
PRECISION_HELP = ("Precision switches pinned for the run and recorded: fp32 turns TF32/HF32 off, reduced turns "
                  "them on (knowledge/precision_switches.yaml). Capture and validate must use the same mode.")


class _DefaultGroup(click.Group):
    """A group whose first argument, when it is not a subcommand, is the PATH of `run`."""

    default_command = "run"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default_command, *args]
        elif not args:
            args = [self.default_command, "--help"]
        return super().parse_args(ctx, args)


def _device(value: str) -> str:
    from ascend_migrate.validate.devices import parse_device

    try:
        return parse_device(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--device") from exc


def _thresholds(path: Optional[str]):
    from ascend_migrate.knowledge.loader import KnowledgeError
    from ascend_migrate.validate.thresholds import load_thresholds

    try:
        return load_thresholds(path) if path else load_thresholds()
    except KnowledgeError as exc:
        raise click.UsageError(f"bad thresholds file: {printable(exc)}") from exc


def _autocast(value: Optional[str]) -> Optional[str]:
    return None if value in (None, "none") else value


@click.group(name="validate", cls=_DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
def validate_command() -> None:
    """Validate a port: the checklist over the ported tree, golden-output comparison, loss
    curve and a two-process DDP smoke run, with one verdict.

    \b
      ascend-migrate validate run PATH --device npu:0 --golden golden.pt
      ascend-migrate validate capture train.py:validation_entry --device cuda:0 -o golden.pt
      ascend-migrate validate compare golden.pt --device npu:0
      ascend-migrate validate checklist

    `validate PATH` (without `run`) is the same as `validate run PATH`.
    Exit code: 0 pass, 1 fail, 2 usage error.
    """


COMMAND_OPTIONS_HELP = """
\b
The project's own command goes after `--`, unchanged: what a user launches.
  python train.py ARGS | python -m pkg.train ARGS | torchrun --nproc_per_node=2 train.py ARGS
`python` and `torchrun` run from this interpreter's environment. `{scratch}` in the command
becomes a fresh folder for what the run writes (checkpoints, logs).
"""


def _pass_env_option(f):
    return click.option("--pass-env", "pass_env", multiple=True, metavar="NAME",
                        help="Let the command see this credential-like variable (HF_TOKEN, ...); by default "
                             "variables that look like credentials are withheld. Repeatable.")(f)


def _loss_pattern_option(f):
    return click.option("--loss-pattern", metavar="REGEX",
                        help="Read the loss from printed lines (first group) when nothing calls backward.")(f)


@validate_command.command(name="run", epilog=COMMAND_OPTIONS_HELP)
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--device", default="cpu", show_default=True, help=f"Target device: {DEVICE_HELP}.")
@click.option("--golden", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Golden file from `validate capture` (enables output and loss comparison).")
@click.option("--entry", help="Entry to run (FILE.py:FUNCTION or module:FUNCTION); default: the golden file's.")
@click.option("--autocast", type=AUTOCAST, default="none", show_default=True, help="Run model entries under autocast.")
@click.option("--dtype", type=DTYPES, help="Thresholds to apply (default: the lower precision of golden and target).")
@click.option("--thresholds", "thresholds_file", type=click.Path(exists=True, dir_okay=False),
              help="Thresholds YAML replacing the defaults.")
@click.option("--precision", type=PRECISION, default="fp32", show_default=True, help=PRECISION_HELP)
@click.option("--ddp/--no-ddp", default=True, show_default=True,
              help="Run the two-process DDP smoke test when the project uses torch.distributed.")
@click.option("--ddp-entry", help="Train entry for the DDP smoke test (default: the golden file's train entry).")
@click.option("--ddp-steps", type=click.IntRange(1, 1000), help="Steps of the DDP smoke test.")
@click.option("--ddp-timeout", type=click.FloatRange(1, 7200), help="Seconds before the DDP smoke test is stopped.")
@click.option("--confirm", "confirm", multiple=True, metavar="ITEM",
              help="A person's decision on a manual item (only those; automatic items need evidence); "
                   "bound to this tree and host; repeatable.")
@click.option("--note", default="", help="The reason stored with --confirm (required with it).")
@click.option("--idle-timeout", "idle_s", type=click.FloatRange(1, 86400), default=600, show_default=True,
              help="Stop a run that prints nothing and makes no training step for this many seconds (a FAIL "
                   "that says so).")
@click.option("--time-limit", "cap_s", type=click.FloatRange(1, 7 * 86400), default=3600, show_default=True,
              help="Stop a run that takes longer than this many seconds in all (a FAIL that says so).")
@click.option("--ddp-command", metavar="'COMMAND'",
              help="The two-process command for the DDP check (default: the command under torchrun "
                   "--nproc_per_node=2).")
@_pass_env_option
@_loss_pattern_option
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where to write validation-report.json/.md (default: PATH/.ascend-migrate).")
@click.option("--environment", "environment_file", type=click.Path(exists=True, dir_okay=False),
              help="Use this `ascend-migrate check --json` output instead of running the check.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "md", "markdown"]), default="text",
              show_default=True, callback=lambda _c, _p, v: "markdown" if v == "md" else v,
              help="What to print on stdout (md and markdown are the same).")
@click.option("--torch-npu", "torch_npu", metavar="VERSION",
              help="On the emulated npu: the torch_npu release the NPU host runs, for the operators that will "
                   "fall back to the CPU there (default: the newest release with operator data).")
@click.option("--operators/--no-operators", "operators", default=True, show_default=True,
              help="On the emulated npu: record the operators that reach the device and say which torch_npu "
                   "will run on the CPU (`ascend-migrate ops` explains the answer).")
def run_command(path: Path, command: tuple[str, ...], device: str, golden: Optional[Path], entry: Optional[str],
                autocast: str,
                dtype: Optional[str], thresholds_file: Optional[str], precision: str, ddp: bool, ddp_entry: Optional[str],
                ddp_steps: Optional[int], ddp_timeout: Optional[float], confirm: tuple[str, ...], note: str,
                idle_s: float, cap_s: float, ddp_command: Optional[str], pass_env: tuple[str, ...],
                loss_pattern: Optional[str], report_dir: Optional[Path], environment_file: Optional[str],
                fmt: str, torch_npu: Optional[str], operators: bool) -> None:
    """Validate the ported tree at PATH and write the report.

    With `-- COMMAND`, the project's own command runs in PATH under the harness for the golden's
    steps and is compared with it (losses per step, parameters, edit sites that ran).
    """
    from ascend_migrate.validate.checklist import item_ids
    from ascend_migrate.validate.confirmations import ConfirmationRefused, check_confirmable
    from ascend_migrate.validate.report import to_json, to_markdown
    from ascend_migrate.validate.runner import ValidateOptions, project_dir, validate_project

    device = _device(device)
    thresholds = _thresholds(thresholds_file)
    from ascend_migrate.safe_paths import UnsafePathError, state_dir

    if confirm:
        try:
            check_confirmable(confirm)
        except KeyError as exc:
            raise click.BadParameter(f"unknown item {exc.args[0]}; known: {', '.join(item_ids())}",
                                     param_hint="--confirm") from exc
        except ConfirmationRefused as exc:
            _echo(f"error: --confirm refused: {printable(exc)}", err=True)
            sys.exit(2)
        if not note.strip():
            raise click.UsageError("--confirm needs a reason: add --note 'why this item is acceptable' "
                                   "(it is recorded in the report)")
    environment = None
    if environment_file:
        try:
            environment = json.loads(Path(environment_file).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise click.BadParameter(f"not JSON: {printable(exc)}", param_hint="--environment") from exc
    for spec, hint in ((entry, "--entry"), (ddp_entry, "--ddp-entry")):
        if spec is not None and ":" not in spec:
            raise click.BadParameter("use FILE.py:FUNCTION or module:FUNCTION", param_hint=hint)
    opts = ValidateOptions(
        device=device, golden=golden, entry=entry, autocast=_autocast(autocast), dtype=dtype,
        thresholds=thresholds, thresholds_file=str(Path(thresholds_file).resolve()) if thresholds_file else None, ddp=ddp, ddp_entry=ddp_entry, ddp_steps=ddp_steps,
        ddp_timeout_s=ddp_timeout, environment=environment, precision=precision,
        confirm=tuple(confirm), note=note, idle_s=idle_s, cap_s=cap_s,
        command=list(command) or None, pass_env=tuple(pass_env), loss_pattern=loss_pattern,
        ddp_command=_split(ddp_command, "--ddp-command") if ddp_command else None,
        torch_npu=torch_npu, operators=operators,
    )
    if command:
        _check_command(command, entry)
        opts.extra["on_line"] = _progress_echo()
    if report_dir is None:
        try:  # refused before the run: a linked .ascend-migrate would carry the report elsewhere
            state_dir(project_dir(path), create=False)
        except UnsafePathError as exc:
            _echo(f"error: {printable(exc)}", err=True)
            sys.exit(2)
    try:
        report = validate_project(path, opts)
    except UnsafePathError as exc:
        _echo(f"error: {printable(exc)}", err=True)
        sys.exit(2)
    except OSError as exc:
        _echo(f"error: cannot record the confirmation: {printable(exc.strerror or exc)} (is {path} read-only?)", err=True)
        sys.exit(2)
    out_dir = report_dir or (project_dir(path) / ".ascend-migrate")
    json_path = out_dir / "validation-report.json"
    md_path = out_dir / "validation-report.md"
    _write_reports({json_path: to_json(report), md_path: to_markdown(report)},
                   root=None if report_dir else project_dir(path))
    if fmt == "json":
        click.echo(to_json(report), nl=False)
    elif fmt == "markdown":
        _echo(to_markdown(report), nl=False)
    else:
        _print_text(report)
        _echo(f"report: {json_path}\n        {md_path}")
    sys.exit(0 if report["verdict"] == "pass" else 1)


def _split(text: str, hint: str) -> list[str]:
    from ascend_migrate.validate.command import CommandError, parse_command_option

    try:
        words = parse_command_option(text)
    except CommandError as exc:
        raise click.BadParameter(str(exc), param_hint=hint) from exc
    if not words:
        raise click.BadParameter("empty command", param_hint=hint)
    return words


def _check_command(command: tuple[str, ...], entry: Optional[str]) -> None:
    if entry:
        raise click.UsageError("give either --entry or a command after --, not both")
    from ascend_migrate.validate.command import CommandError, command_shape

    try:
        command_shape(command)
    except CommandError as exc:
        raise click.UsageError(str(exc)) from exc


def _progress_echo():
    """Show the command's output lines on stderr while it runs (long work shows progress)."""
    def echo(line: str) -> None:
        _echo(f"  | {printable(line)}", err=True)

    return echo


def _write_reports(files: dict[Path, str], root: Optional[Path] = None) -> None:
    """Write the report files together (both or neither); exit 2 with a message on failure."""
    from ascend_migrate.fix.commit import Transaction, WriteError

    txn = Transaction(root=root)  # under the tree: no folder on the way may be a link
    try:
        for dest, text in files.items():
            txn.stage_bytes(dest, text.encode("utf-8"))
        txn.commit()
    except WriteError as exc:
        txn.abort()
        _echo(f"error: {printable(exc)}; no report written (use --report-dir DIR for a read-only tree)", err=True)
        sys.exit(2)


def _print_text(report: dict[str, Any]) -> None:
    width = max(len(i["id"]) for i in report["items"])
    for item in report["items"]:
        status = item["status"].upper()
        _echo(printable(f"{status:>15}  {item['id']:<{width}}  {item['severity']:<7}  {item.get('summary', '')}"))
        if item["status"] in ("fail", "manual-pending"):
            for ev in item["evidence"][:8]:
                where = f"{ev['path']}:{ev['line']}: " if ev.get("path") and ev.get("line") else ""
                rule = f"[{ev['rule']}] " if ev.get("rule") else ""
                text = ev.get("message", "")
                if ev.get("output"):
                    text = f"output '{ev['output']}': {text}"
                if ev.get("note"):
                    text += f" ({ev['note']})"
                _echo(printable(f"{'':>17}{where}{rule}{text}"))
                for line in (ev.get("last_output") or [])[-10:]:
                    _echo(f"{'':>19}| {printable(line)}")
            if len(item["evidence"]) > 8:
                _echo(f"{'':>17}... {len(item['evidence']) - 8} more in the report")
    _echo(f"\nverdict: {report['verdict'].upper()}"
               + (f" ({report['provenance'].get('emulated')})" if report.get("provenance", {}).get("emulated") else ""))
    if report.get("edit_sites"):
        _echo(f"  edit sites: {report['edit_sites']}")
    for reason in report.get("reasons", []):
        _echo(f"  - {printable(reason)}")
    for warning in report.get("open_warnings", []):
        _echo(f"  warning: {printable(warning)}")
    for refused in report.get("confirmations_refused", []):
        _echo(f"  confirmation of {refused['id']} not applied: {refused['reason']}")
    undecided = [i["id"] for i in report["items"] if i.get("kind") == "manual" and i["status"] == "manual-pending"]
    if undecided:
        _echo(f"  manual items ({', '.join(undecided)}): a person who checked one records it with "
                   "--confirm ID --note REASON")
    prov = report.get("provenance") or {}
    golden = prov.get("golden") or {}
    if not golden.get("compared"):
        _echo(f"  note: no numerical comparison ({golden.get('why_not')}); a model skill needs one")
    from ascend_migrate.validate.operators import summary_lines

    for line in summary_lines(report.get("operators")):
        _echo(f"  {line}")
    if report.get("verdict_note"):
        _echo(f"  note: {report['verdict_note']}")
    elif prov.get("device_kind") not in (None, "npu"):
        _echo(f"  note: validated on {prov.get('device')}, not an NPU")


def _echo_tail(outcome: dict[str, Any], n: int = 15) -> None:
    lines = (outcome or {}).get("last_output") or []
    if lines:
        _echo(f"  last {min(n, len(lines))} line(s) of its output:", err=True)
        for line in lines[-n:]:
            _echo(f"    {printable(line)}", err=True)


def _where(exc: BaseException, root: Path) -> str:
    """' (at FILE:LINE)' for the innermost traceback frame inside the project, if any."""
    from ascend_migrate.validate.entry_worker import project_frame

    found = project_frame(exc, Path(root).resolve())
    return f" (at {found})" if found else ""


@validate_command.command(name="capture", epilog=COMMAND_OPTIONS_HELP)
@click.argument("args", nargs=-1, type=click.UNPROCESSED, required=True, metavar="ENTRY | -- COMMAND...")
@click.option("--device", default="cpu", show_default=True, help=f"Reference device: {DEVICE_HELP}.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Golden file to write.")
@click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=".",
              show_default=True, help="Project root (imports and relative entry paths resolve here).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--steps", type=click.IntRange(1, 100000), default=5, show_default=True,
              help="Training steps (train entries).")
@click.option("--autocast", type=AUTOCAST, default="none", show_default=True)
@click.option("--precision", type=PRECISION, default="fp32", show_default=True, help=PRECISION_HELP)
@click.option("--idle-timeout", "idle_s", type=click.FloatRange(1, 86400), default=600, show_default=True,
              help="Stop a run that prints nothing and makes no training step for this many seconds (a FAIL "
                   "that says so).")
@click.option("--time-limit", "cap_s", type=click.FloatRange(1, 7 * 86400), default=3600, show_default=True,
              help="Stop a run that takes longer than this many seconds in all (a FAIL that says so).")
@click.option("--threads", type=click.IntRange(1, 1024), default=1, show_default=True,
              help="Intra-op threads of a command run (pinned and recorded; the port runs with the same).")
@click.option("--dtype", type=DTYPES, default="fp32", show_default=True,
              help="Precision the command trains in (selects the loss thresholds of the comparison).")
@_pass_env_option
@_loss_pattern_option
def capture_command(args: tuple[str, ...], device: str, output: Path, root: Path, seed: int, steps: int,
                    autocast: str, precision: str, idle_s: float, cap_s: float, threads: int, dtype: str,
                    pass_env: tuple[str, ...], loss_pattern: Optional[str]) -> None:
    """Run the project's command (after --) or an ENTRY on the reference host and save the golden
    file: per-step losses and the parameters after the last step (command), or outputs and
    losses (entry). Nothing is written unless every asked step ran."""
    if _is_entry(args):
        return _capture_entry(args[0], device, output, root, seed, steps, autocast, precision, idle_s, cap_s)
    _capture_command(list(args), device, output, root, seed, steps, idle_s, cap_s, threads, dtype, pass_env,
                     loss_pattern)


def _is_entry(args: tuple[str, ...]) -> bool:
    """One word of the form FILE.py:FUNCTION or module:FUNCTION is an entry; anything else a command."""
    import re

    return len(args) == 1 and re.match(r"^[^\s:]+:[A-Za-z_][A-Za-z0-9_]*$", args[0]) is not None


def _capture_command(command: list[str], device: str, output: Path, root: Path, seed: int, steps: int,
                     idle_s: float, cap_s: float, threads: int, dtype: str, pass_env: tuple[str, ...],
                     loss_pattern: Optional[str]) -> None:
    from ascend_migrate.validate import command as cmd
    from ascend_migrate.validate.golden import GoldenError, save_golden

    device = _device(device)
    _check_command(tuple(command), None)
    try:
        run = cmd.run_command(command, root, device=device, steps=steps, seed=seed, threads=threads,
                              idle_s=idle_s, cap_s=cap_s, pass_env=pass_env, loss_pattern=loss_pattern,
                              on_line=_progress_echo())
    except Exception as exc:  # the emulated npu cannot be built, the command cannot start
        _echo(f"error: {type(exc).__name__}: {printable(exc)}; no golden file written", err=True)
        sys.exit(1)
    label = f"{device} (emulated npu, CPU kernels)" if run.emulated else device
    if not run.ok:
        _echo(f"error: the command on {label} is not usable as a reference: " + "; ".join(run.problems)
                   + "; no golden file written", err=True)
        _echo_tail(run.outcome.to_dict())
        sys.exit(1)
    try:
        save_golden(output, cmd.golden_from_run(run, dtype))
    except GoldenError as exc:
        _echo(f"error: {printable(exc)}", err=True)
        sys.exit(2)
    rec = run.rank0 or {}
    losses = run.losses()
    _echo(f"captured {rec.get('steps')} step(s) of `{' '.join(command)}` on {label}: trained on "
               f"{rec.get('device')}, {len(run.records)} process(es), {threads} thread(s), seed {seed}")
    _echo(f"  losses: {len(losses)} value(s), first {losses[0]:.6g}, last {losses[-1]:.6g} "
               f"(from {run.loss_source})")
    if run.withheld_env:
        _echo(f"  withheld from the command: {', '.join(run.withheld_env)} (--pass-env NAME to pass one)")
    from ascend_migrate.validate.metrics import constant_losses

    constant = constant_losses(losses)
    if constant:
        _echo(f"warning: {constant}: the loss does not depend on the model, so the loss curve will compare "
                   "nothing", err=True)
    _echo(f"wrote {output}")


def _capture_entry(entry: str, device: str, output: Path, root: Path, seed: int, steps: int, autocast: str,
                   precision: str, idle_s: float, cap_s: float) -> None:
    from ascend_migrate.validate.devices import DeviceError
    from ascend_migrate.validate.dynamic import capture
    from ascend_migrate.validate.entry import EntryError
    from ascend_migrate.validate.entry_worker import EntryFailed
    from ascend_migrate.validate.golden import GoldenError

    device = _device(device)
    if ":" not in entry:
        raise click.BadParameter("use FILE.py:FUNCTION or module:FUNCTION", param_hint="ENTRY")
    try:
        golden = capture(entry, root, device, output, seed=seed, steps=steps, autocast=_autocast(autocast),
                         precision=precision, idle_s=idle_s, cap_s=cap_s)
    except GoldenError as exc:  # a NaN/inf reference: refused, nothing written
        _echo(f"error: {printable(exc)}", err=True)
        sys.exit(2)
    except (EntryError, DeviceError) as exc:
        _echo(f"error: {printable(exc)}", err=True)
        sys.exit(1)
    except EntryFailed as exc:
        _echo(f"error: {printable(exc)}; no golden file written", err=True)
        _echo_tail(exc.outcome)
        sys.exit(1)
    except Exception as exc:  # the entry itself raised: say where, without a wall of traceback
        _echo(f"error: running {entry} on {device} raised {type(exc).__name__}: {printable(exc)}{_where(exc, root)}", err=True)
        _echo("  the entry must run on the reference device as it is; see references/entry-contract.md", err=True)
        sys.exit(1)
    meta = golden.meta
    _echo(f"captured {meta['kind']} entry {entry} on {device} ({meta['device_name']}), dtype {meta['dtype']}, seed {seed}")
    for name, info in meta["outputs"].items():
        _echo(f"  output {name}: shape {info['shape']} {info['dtype']}")
    if golden.losses:
        _echo(f"  losses: {len(golden.losses)} step(s), first {golden.losses[0]:.6g}, last {golden.losses[-1]:.6g}")
        from ascend_migrate.validate.metrics import constant_losses

        constant = constant_losses(golden.losses)
        if constant:
            _echo(f"warning: {constant}: the loss does not depend on the model, so the loss curve will "
                       "compare nothing (validate leaves loss-curve unconfirmed); fix the entry's loss and "
                       "capture again", err=True)
    _echo(f"wrote {output}")


@validate_command.command(name="compare")
@click.argument("golden", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--device", default="cpu", show_default=True, help=f"Target device: {DEVICE_HELP}.")
@click.option("--entry", help="Entry to run (default: the golden file's).")
@click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=".", show_default=True)
@click.option("--autocast", type=AUTOCAST, default="none", show_default=True)
@click.option("--dtype", type=DTYPES, help="Thresholds to apply (default: the lower precision of golden and target).")
@click.option("--thresholds", "thresholds_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--precision", type=PRECISION, default="fp32", show_default=True, help=PRECISION_HELP)
@click.option("--idle-timeout", "idle_s", type=click.FloatRange(1, 86400), default=600, show_default=True,
              help="Stop a run that prints nothing and makes no training step for this many seconds (a FAIL "
                   "that says so).")
@click.option("--time-limit", "cap_s", type=click.FloatRange(1, 7 * 86400), default=3600, show_default=True,
              help="Stop a run that takes longer than this many seconds in all (a FAIL that says so).")
@click.option("--json-out", type=click.Path(dir_okay=False, path_type=Path), help="Write the comparison as JSON.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def compare_command(golden: Path, device: str, entry: Optional[str], root: Path, autocast: str,
                    dtype: Optional[str], thresholds_file: Optional[str], precision: str, idle_s: float, cap_s: float,
                    json_out: Optional[Path], fmt: str) -> None:
    """Run the golden file's entry on the target device and compare (0 pass, 1 fail)."""
    from ascend_migrate.validate.devices import DeviceError
    from ascend_migrate.validate.dynamic import compare
    from ascend_migrate.validate.entry import EntryError
    from ascend_migrate.validate.entry_worker import EntryFailed
    from ascend_migrate.validate.golden import GoldenError

    device = _device(device)
    thresholds = _thresholds(thresholds_file)
    try:
        result = compare(golden, root, device, thresholds, spec=entry, autocast=_autocast(autocast), dtype=dtype,
                         precision_mode=precision, idle_s=idle_s, cap_s=cap_s)
    except GoldenError as exc:
        raise click.BadParameter(str(exc), param_hint="GOLDEN") from exc
    except (EntryError, DeviceError) as exc:
        _echo(f"error: {printable(exc)}", err=True)
        sys.exit(1)
    except EntryFailed as exc:
        _echo(f"error: {printable(exc)}", err=True)
        _echo_tail(exc.outcome)
        sys.exit(1)
    except Exception as exc:  # the entry itself raised
        _echo(f"error: running the entry on {device} raised {type(exc).__name__}: {printable(exc)}{_where(exc, root)}", err=True)
        sys.exit(1)
    data = {"schema": "ascend-migrate/comparison-report/1", "verdict": result.status,
            "thresholds": {"dtype": result.dtype, "outputs": thresholds.gate(result.dtype).to_dict(),
                           "hard": thresholds.hard.to_dict(), "loss": thresholds.loss_tol(result.dtype).to_dict(),
                           "source": thresholds.source},
            **result.to_dict()}
    text = json.dumps(data, indent=2, default=str) + "\n"
    if json_out:
        json_out.write_text(text, encoding="utf-8")
    if fmt == "json":
        _echo(text, nl=False)
    else:
        gate = thresholds.gate(result.dtype)
        _echo(f"thresholds ({result.dtype}): " + ", ".join(f"{k}={v}" for k, v in gate.to_dict().items())
                   + f"; hard: {thresholds.hard.to_dict()}; loss: {thresholds.loss_tol(result.dtype).to_dict()}")
        for r in result.outputs:
            m = r.metrics
            metrics = (f"cosine={m.cosine:.6g} max_abs={m.max_abs:.3g} rel_err={m.rel_err:.3g} "
                       f"max_rel={m.max_rel:.3g} mean_rel={m.mean_rel:.3g} rmse={m.rmse:.3g} nan_inf={m.target_nan_inf}"
                       if m else "")
            _echo(f"{r.status.upper():>10}  {r.name}  {metrics}")
            for msg in r.failures:
                _echo(f"{'':>12}{printable(msg)}")
        if result.loss is not None:
            _echo(f"{result.loss.status.upper():>10}  loss  {result.loss.message}")
        _echo(f"verdict: {result.status.upper()}")
    sys.exit(0 if result.passed else 1)


@validate_command.command(name="own-files")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
def own_files_command(path: Path) -> None:
    """List the files under PATH that ascend-migrate wrote (left out of the tree hash)."""
    import os

    from ascend_migrate.scan.own_outputs import is_own_output
    from ascend_migrate.printable import printable as display  # names as a terminal can show them
    from ascend_migrate.scan.walk import walk_tree

    tree = walk_tree(path, own_files=False)
    listed = [i.rel for i in tree.items if i.kind == "file" and is_own_output(path / i.rel)]
    for rel, reason in tree.skipped:
        if rel.endswith("/") and reason.endswith("written by ascend-migrate"):
            for dirpath, _dirs, filenames in os.walk(path / rel, followlinks=False):
                listed.extend((Path(dirpath) / n).relative_to(path).as_posix() for n in filenames)
    for rel in sorted(listed):
        click.echo(display(rel))


@validate_command.command(name="checklist")
@click.option("--format", "fmt", type=click.Choice(["md", "markdown", "json"]), default="markdown", show_default=True,
              callback=lambda _c, _p, v: "markdown" if v == "md" else v)
def checklist_command(fmt: str) -> None:
    """Print the validation checklist."""
    from ascend_migrate.validate.checklist import default_checklist, render_checklist_reference

    if fmt == "json":
        click.echo(json.dumps([i.to_dict() for i in default_checklist()], indent=2))
    else:
        click.echo(render_checklist_reference(), nl=False)
