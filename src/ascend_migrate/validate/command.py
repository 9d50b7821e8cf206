"""Validating with the project's own command: run it under the harness, judge the run, compare.

`validate capture ... -- COMMAND` (in the original's root) and `validate run PORT ... -- COMMAND`
(in the port's root) run what the user launches - `python train.py ARGS`, `python -m pkg.train
ARGS`, `torchrun --nproc_per_node=2 train.py ARGS` - unchanged, under the harness
(`validate.harness`): N optimizer steps, the loss of every step from the code itself, a checksum
of the parameters after the last step, which edit sites of the change list ran. The child runs in
its own session with a no-progress limit and an overall cap (`validate.child`).

`{scratch}` in the command is replaced by a fresh folder for what the run writes (checkpoints,
logs), so both sides write outside the trees being compared.

Hosts: cpu, cuda:N and npu:N run as they are; `emulated-npu` (asked for explicitly) runs the
command with the emulated npu as its `torch_npu` (`ascend_migrate.emulated_npu`), and every
result obtained there is labelled emulated.
"""
from __future__ import annotations

import re
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from ascend_migrate.validate import child

SCRATCH = "{scratch}"
EMULATED_DEVICES = 2  # devices the emulated npu shows a command
PYTHON_NAMES = re.compile(r"^python(\d+(\.\d+)?)?$")
TORCHRUN_NAMES = ("torchrun",)


class CommandError(ValueError):
    """The command cannot be run as given (empty, unknown program, bad option)."""


# --- what the command is ------------------------------------------------------------------------

@dataclass
class CommandShape:
    """What a command line runs: the Python file or module it starts, and how many processes."""

    kind: str  # python-script | python-module | torchrun | other
    target: Optional[str] = None  # the script path or module name
    args: list[str] = field(default_factory=list)  # the program's own arguments
    nproc: int = 1
    interpreter: Optional[str] = None


def _torchrun_nproc(words: list[str]) -> tuple[int, int]:
    """(nproc, index of the first word after torchrun's own options)."""
    nproc, i = 1, 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            break
        name, eq, value = word.partition("=")
        takes_value = name not in ("--standalone", "--no-python", "--no_python", "-m", "--module", "--run-path",
                                   "--run_path")
        if name in ("-m", "--module"):
            return nproc, i
        if not eq and takes_value:
            value = words[i + 1] if i + 1 < len(words) else ""
            i += 1
        if name in ("--nproc-per-node", "--nproc_per_node"):
            try:
                nproc = int(value)
            except ValueError:
                nproc = 2 if value in ("auto", "gpu", "cpu") else 1
        i += 1
    return nproc, i


def command_shape(argv: Sequence[str]) -> CommandShape:
    words = list(argv)
    if not words:
        raise CommandError("no command given: write it after `--`, e.g. -- python train.py --epochs 1")
    program = Path(words[0]).name
    if PYTHON_NAMES.match(program):
        i = 1
        while i < len(words) and words[i].startswith("-") and words[i] not in ("-m", "-c", "-"):
            i += 2 if words[i] in ("-W", "-X") else 1
        if i < len(words) and words[i] == "-m" and i + 1 < len(words):
            return CommandShape("python-module", words[i + 1], words[i + 2:], interpreter=words[0])
        if i < len(words) and words[i] not in ("-c", "-"):
            return CommandShape("python-script", words[i], words[i + 1:], interpreter=words[0])
        return CommandShape("other", interpreter=words[0])
    if program in TORCHRUN_NAMES or (len(words) > 2 and PYTHON_NAMES.match(program) is None
                                     and words[:1] == ["torch.distributed.run"]):
        nproc, i = _torchrun_nproc(words[1:])
        rest = words[1 + i:]
        if rest[:1] in (["-m"], ["--module"]) and len(rest) > 1:
            return CommandShape("torchrun", rest[1], rest[2:], nproc=nproc)
        if rest:
            return CommandShape("torchrun", rest[0], rest[1:], nproc=nproc)
    return CommandShape("other")


def resolve_program(argv: list[str], cwd: Path) -> list[str]:
    """`python` and `torchrun` run from the interpreter validate runs in (its virtual
    environment holds torch); a program name is never looked up in the tree."""
    program = argv[0]
    if PYTHON_NAMES.match(Path(program).name) and "/" not in program:
        return [sys.executable, *argv[1:]]
    if Path(program).name in TORCHRUN_NAMES and "/" not in program:
        return [sys.executable, "-m", "torch.distributed.run", *argv[1:]]
    if "/" in program:
        return argv  # an explicit path (./run.sh): the user named it
    found = shutil.which(program)
    if found is None:
        raise CommandError(f"{program}: not found on PATH")
    return [found, *argv[1:]]


def ddp_variant(argv: Sequence[str], nproc: int = 2) -> Optional[list[str]]:
    """The command under torchrun with `nproc` processes, when it is a plain Python command."""
    shape = command_shape(argv)
    if shape.kind == "python-script":
        return ["torchrun", "--standalone", f"--nproc_per_node={nproc}", shape.target or "", *shape.args]
    if shape.kind == "python-module":
        return ["torchrun", "--standalone", f"--nproc_per_node={nproc}", "-m", shape.target or "", *shape.args]
    return None


# --- edit sites ---------------------------------------------------------------------------------

@dataclass
class EditSites:
    change_list: Optional[str]
    python: dict[str, list[int]]  # relative path -> lines in the port
    other_files: list[str]  # shell scripts and configs the migration edited
    rows: dict[tuple[str, int], str]  # (file, line) -> what the edit did
    gone: list[str] = field(default_factory=list)  # sites whose line was edited away by hand after the migration


def edit_sites(root: Path) -> Optional[EditSites]:
    """The edit sites of the last migration of the tree, from its change list (None without one)."""
    from ascend_migrate.fix.runs import read_change_list
    from ascend_migrate.validate.executed import change_list_path

    path = change_list_path(root)
    data = read_change_list(path) if path is not None else None
    rows = data.get("changes") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return None
    python: dict[str, set[int]] = {}
    other: set[str] = set()
    what: dict[tuple[str, int], str] = {}
    texts: dict[str, Optional[list[str]]] = {}
    gone: list[str] = []
    for r in rows:
        if not isinstance(r, dict) or r.get("operation") in ("manual", "annotate") or not r.get("file"):
            continue
        rel = str(r["file"])
        if rel.endswith(".py"):
            line = r.get("new_line") or 0
            if isinstance(line, int) and line > 0 and isinstance(r.get("site"), str) and r["site"]:
                if rel not in texts:
                    texts[rel] = _lines_of(Path(root), rel)
                line = relocate(texts[rel], line, r["site"])
                if not line:
                    gone.append(f"{rel}:{r.get('new_line')}: {r['site'][:80]}")
                    continue
            if isinstance(line, int) and line > 0:
                python.setdefault(rel, set()).add(line)
                what[(rel, line)] = f"{r.get('operation')}{' ' + r['rule'] if r.get('rule') else ''}: {r.get('message', '')}"
            else:
                other.add(rel)  # a change list without port lines: the file counts as a whole
        elif not rel.endswith(".ipynb"):
            other.add(rel)
    try:
        shown = str(Path(path).resolve().relative_to(Path(root).resolve()))
    except ValueError:
        shown = str(path)
    return EditSites(shown, {k: sorted(v) for k, v in python.items()}, sorted(other), what, gone)


def _lines_of(root: Path, rel: str) -> Optional[list[str]]:
    from ascend_migrate.safe_paths import UnsafePathError, inside

    try:
        path = inside(root, rel, "edit site")
        return path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else None
    except (OSError, UnsafePathError):
        return None


def relocate(lines: Optional[list[str]], line: int, site: str) -> int:
    """The edit site's line now: where it was when the migration wrote it, or, after hand edits
    moved it, the nearest line with the same text; 0 when no line has that text any more."""
    if lines is None:
        return line
    if 0 < line <= len(lines) and lines[line - 1].strip()[:200] == site:
        return line
    found = [i for i, text in enumerate(lines, 1) if text.strip()[:200] == site]
    return min(found, key=lambda i: abs(i - line)) if found else 0


# --- running ------------------------------------------------------------------------------------

@dataclass
class CommandRun:
    """One run of the command under the harness, and what it proved."""

    argv: list[str]  # as the user wrote it ({scratch} in place)
    cwd: str
    device: str
    steps_asked: int
    outcome: child.ChildOutcome
    records: list[dict[str, Any]]
    problems: list[str]  # why the run is not usable as evidence (empty: it is)
    withheld_env: list[str]
    threads: Optional[int]
    seed: Optional[int]
    emulated: bool = False
    printed_losses: list[float] = field(default_factory=list)
    loss_source: str = "backward"
    notes: list[str] = field(default_factory=list)
    # what the emulated npu recorded (validate.operators.collect), when asked to record
    operators: Optional[dict[str, Any]] = None

    @property
    def rank0(self) -> Optional[dict[str, Any]]:
        ranked = [r for r in self.records if r.get("rank") in (0, None)]
        return ranked[0] if ranked else (self.records[0] if self.records else None)

    @property
    def ok(self) -> bool:
        return not self.problems

    def step_losses(self) -> list[list[Optional[float]]]:
        rec = self.rank0
        if rec and any(rec.get("losses") or []):
            return [list(step) for step in rec.get("losses") or []]
        return [[x] for x in self.printed_losses]

    def losses(self) -> list[float]:
        """Every loss of rank 0 in order (a step with k backward calls gives k values)."""
        return [float("nan") if x is None else float(x) for step in self.step_losses() for x in step]

    def to_dict(self) -> dict[str, Any]:
        rec = self.rank0 or {}
        return {
            "command": list(self.argv), "cwd": self.cwd, "device": self.device,
            **({"emulated": True} if self.emulated else {}),
            "steps_asked": self.steps_asked, "steps": rec.get("steps"), "status": rec.get("status"),
            "world_size": rec.get("world_size"), "processes": len(self.records),
            "trained_on": rec.get("device"), "optimizer": rec.get("optimizer"),
            "loss_source": self.loss_source, "threads": self.threads, "seed": self.seed,
            "params": rec.get("params"), "ranks": [
                {"rank": r.get("rank"), "pid": r.get("pid"), "status": r.get("status"), "steps": r.get("steps"),
                 "params": (r.get("params") or {}).get("digest")} for r in self.records],
            "torch": rec.get("torch"), "python": rec.get("python"),
            "outcome": self.outcome.to_dict(), "problems": list(self.problems),
            "withheld_env": list(self.withheld_env), "notes": list(self.notes),
        }


def _progress_probe(out_dir: Path):
    from ascend_migrate.validate.harness import progress

    def probe() -> Optional[float]:
        _steps, wall = progress(out_dir)
        if not wall:
            return None
        return time.monotonic() - max(0.0, time.time() - wall)

    return probe


def _printed_losses(log: Optional[str], pattern: Optional[str]) -> list[float]:
    if not pattern or not log:
        return []
    regex = re.compile(pattern)
    values: list[float] = []
    try:
        with open(log, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = regex.search(line[:2000])
                if m:
                    try:
                        values.append(float(m.group(1) if m.groups() else m.group(0)))
                    except ValueError:
                        continue
    except OSError:
        return []
    return values


def is_emulated(device: str) -> bool:
    return device.startswith("emulated-npu")


def _environment(device: str, pass_env: Sequence[str], nproc: int) -> tuple[dict[str, str], list[str], list[str]]:
    """(environment, withheld credential names, notes) for the device the command runs on."""
    env, withheld = child.child_env(None, pass_env)
    notes: list[str] = []
    if is_emulated(device):
        from ascend_migrate.emulated_npu import emulated_env, ensure_built

        ensure_built()  # EmulatedNpuError says what is missing
        index = int(device.split(":", 1)[1]) if ":" in device else 0
        # an Ascend server has several NPUs: code behind `device_count() > 1` runs as it would there
        env = emulated_env(env, device_count=max(EMULATED_DEVICES, nproc, index + 1))
        notes.append("ran on the emulated npu (CPU kernels): not evidence that the port runs on Ascend")
    return env, withheld, notes


def _recording_env(ops_release: Optional[str]) -> dict[str, str]:
    """The variables that make the port's own `import torch_npu` (the emulated npu) record the
    operators reaching it, and the harness write them, without importing anything itself."""
    from ascend_migrate.validate.harness.inject import _ascend_migrate_harness as names
    from ascend_migrate.validate.operators import choose_release

    chosen, _how = choose_release(ops_release)
    env = {names.ENV_OPS: chosen or "-", names.ENV_OPS_MODE: "record", "NPU_STANDIN_RECORD_OPS": "1"}
    if chosen:
        env["NPU_STANDIN_OPS_RELEASE"] = chosen  # the fallback warnings of the target release
    return env


def copy_tree(root: Path, dest: Path) -> int:
    """Copy the project's files (what the scanner walks: no version control, virtual
    environments or caches) to `dest`, links inside the tree as links; returns the file count.
    The command runs in the copy, so what it writes (checkpoints, logs, caches) never lands in
    the user's tree or the port."""
    import os

    from ascend_migrate.scan.walk import walk_tree

    count = 0
    for item in walk_tree(root, own_files=False).items:
        target = dest / item.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if item.kind == "link":
            os.symlink(item.link, target)
        else:
            shutil.copy2(root / item.rel, target)
            count += 1
    return count


def _link_siblings(root: Path, parent: Path) -> None:
    """The tree's sibling folders, linked beside the copy: `--data ../data` reaches what it
    reaches from the tree itself."""
    import os

    try:
        entries = list(root.parent.iterdir())
    except OSError:
        return
    for entry in entries[:10000]:
        if entry.name != root.name and not (parent / entry.name).exists():
            try:
                os.symlink(entry, parent / entry.name)
            except OSError:
                continue


def _rebase(records: list[dict[str, Any]], copy: Path, root: Path) -> None:
    """Edit-site paths of the copy, given back as paths of the tree."""
    prefix = str(copy) + "/"
    for rec in records:
        for key in ("sites", "site_details"):
            value = rec.get(key)
            if isinstance(value, dict):
                rec[key] = {str(root) + "/" + path[len(prefix):] if path.startswith(prefix) else path: lines
                            for path, lines in value.items()}
        exc = rec.get("exit")
        if isinstance(exc, dict) and isinstance(exc.get("traceback"), list):
            exc["traceback"] = [line.replace(prefix, str(root) + "/") for line in exc["traceback"]]


def run_command(argv: Sequence[str], root: Path, *, device: str = "cpu", steps: int = 5, seed: Optional[int] = 0,
                threads: Optional[int] = 1, sites: Optional[dict[str, list[int]]] = None,
                idle_s: float = child.DEFAULT_IDLE_S, cap_s: float = child.DEFAULT_CAP_S,
                pass_env: Sequence[str] = (), loss_pattern: Optional[str] = None,
                log_dir: Optional[Path] = None, on_line=None, record_ops: bool = False,
                ops_release: Optional[str] = None) -> CommandRun:
    """Run the command in `root` under the harness for `steps` optimizer steps and judge the run.

    `record_ops` (on the emulated npu only): the device records the operators that reach it and
    prints torch_npu's fallback warning for `ops_release` (default: the newest with data); the
    counts are in `CommandRun.operators`."""
    from ascend_migrate.validate.harness import STOP_EXIT_CODE, harness_env, read_records

    root = Path(root).resolve()
    words = list(argv)
    shape = command_shape(words)
    work = Path(tempfile.mkdtemp(prefix="ascend-migrate-run-"))
    try:
        scratch = work / "scratch"
        scratch.mkdir()
        tree = work / "tree" / root.name  # the folder keeps its name: some scripts look at it
        copy_tree(root, tree)
        _link_siblings(root, tree.parent)
        concrete = [w.replace(SCRATCH, str(scratch)) for w in words]
        try:
            launch = resolve_program(concrete, root)
        except CommandError as exc:
            outcome = child.ChildOutcome("launch-error", None, 0.0, [], None, str(exc))
            return CommandRun(words, str(root), device, steps, outcome, [], [str(exc)], [], threads, seed,
                              is_emulated(device))
        env, withheld, notes = _environment(device, pass_env, shape.nproc)
        abs_sites = {str(tree / rel): lines for rel, lines in (sites or {}).items()}
        out = work / "records"
        env = harness_env(out, steps=steps, seed=seed, threads=threads, sites=abs_sites or None, base=env)
        recording = record_ops and is_emulated(device)
        if recording:
            env.update(_recording_env(ops_release))
        log = (Path(log_dir) if log_dir else work) / "command-output.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        outcome = child.run_child(launch, cwd=tree, env=env, idle_s=idle_s, cap_s=cap_s, log_path=log,
                                  progress=_progress_probe(out), on_line=on_line)
        records = read_records(out)
        _rebase(records, tree, root)
        outcome.tail = [line.replace(str(tree) + "/", str(root) + "/") for line in outcome.tail]
        run = CommandRun(words, str(root), device, steps, outcome, list(records), [], withheld, threads, seed,
                         is_emulated(device), notes=notes + list(records.problems))
        if not any(r.get("losses") for r in records) and loss_pattern:
            run.printed_losses = _printed_losses(outcome.log, loss_pattern)
            run.loss_source = "printed"
        run.problems = judge(run, shape, STOP_EXIT_CODE)
        if recording:
            from ascend_migrate.validate.operators import collect

            run.operators = collect(out, tree)
        if log_dir is None:
            outcome.log = None  # the folder goes away with the run
        return run
    finally:
        shutil.rmtree(work, ignore_errors=True)


_RANK_PREFIX = re.compile(r"^\s*\[(?:rank|default)\d*\]:\s?")  # torchrun's per-rank output prefix
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning))(?::\s.*)?$")


def error_line(tail: Sequence[str]) -> Optional[str]:
    """The exception line a Python traceback ends with, from the last lines of output."""
    lines = list(tail)
    # a rank's own exception first: under torchrun the launcher's ChildFailedError comes last
    for ranked in (True, False):
        for line in reversed(lines):
            if ranked and not _RANK_PREFIX.match(line):
                continue
            text = _RANK_PREFIX.sub("", line).strip()
            if _EXCEPTION_LINE.match(text) and not text.endswith("Warning"):
                return text[:300]
    return None


_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in ')


def failure_site(tail: Sequence[str], root: str) -> Optional[str]:
    """'FILE:LINE: source' of the innermost traceback frame inside the project."""
    lines = [_RANK_PREFIX.sub("", line) for line in tail]
    found = None
    base = Path(root).resolve()
    for i, line in enumerate(lines):
        m = _FRAME.match(line)
        if not m or m.group(1).startswith("<"):  # <frozen runpy>, <string>: no file of the project
            continue
        path = Path(m.group(1))
        try:
            rel = (path if path.is_absolute() else base / path).resolve().relative_to(base)
        except (ValueError, OSError):
            continue
        source = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]) else ""
        found = f"{rel.as_posix()}:{m.group(2)}" + (f": {source[:160]}" if source else "")
    return found


def _raised(tail: Sequence[str], root: str) -> Optional[str]:
    raised = error_line(tail)
    if raised is None:
        return None
    site = failure_site(tail, root)
    return f"{raised} (at {site})" if site else raised


def judge(run: CommandRun, shape: CommandShape, stop_code: int) -> list[str]:
    """Why this run is not evidence (empty when it is): it must have made every asked step and
    stopped there, in every process, or ended by itself right after the last one."""
    problems: list[str] = []
    outcome = run.outcome
    records = run.records
    if outcome.kind != "exited":
        problems.append(outcome.describe())
    if not records:
        raised = _raised(outcome.tail, run.cwd)
        if outcome.kind == "exited" and raised:
            problems.append(f"{outcome.describe()} before its first optimizer step: {raised}")
        elif outcome.kind == "exited":
            problems.append(f"{outcome.describe()} without a single optimizer step (no process called backward "
                            "or an optimizer's step): check the command line, its data paths and flags")
        return problems
    expected = shape.nproc if shape.kind == "torchrun" else None
    if expected and len(records) < expected:
        problems.append(f"{len(records)} of {expected} processes recorded a training step")
    for rec in records:
        who = f"rank {rec.get('rank')}" if len(records) > 1 else "the command"
        status, steps = rec.get("status"), int(rec.get("steps") or 0)
        if status == "exception":
            exc = rec.get("exit") or {}
            site = failure_site(exc.get("traceback") or [], run.cwd)
            problems.append(f"{who} raised {exc.get('type')}: {exc.get('message')} after {steps} step(s)"
                            + (f" (at {site})" if site else ""))
        elif steps < run.steps_asked:
            how = {"finished": "ended", "exit": f"exited with code {(rec.get('exit') or {}).get('code')}"}.get(
                str(status), str(status))
            problems.append(f"{who} {how} after {steps} of {run.steps_asked} asked step(s): ask for fewer steps "
                            "(--steps) or give it more data or epochs")
    if outcome.kind == "exited" and outcome.returncode not in (0, stop_code) and not problems:
        problems.append(outcome.describe())
    wanted = "npu" if run.device.startswith(("npu", "emulated-npu")) else "cuda" if run.device.startswith("cuda") else None
    trained = str((run.rank0 or {}).get("device") or "")
    if wanted and trained and not trained.startswith(wanted):
        hint = ("; on a host without an NPU, validate an agnostic port with --device cpu and a transfer port "
                "with --device emulated-npu" if run.device.startswith("npu") else "")
        problems.append(f"the command trained on {trained}, not on {wanted}: the run proves nothing about the "
                        f"{wanted} device; give the port's command the switch that puts the model there (a "
                        "transfer port keeps the original's cuda device strings, e.g. --device cuda)" + hint)
    if not run.losses():
        problems.append("no loss was recorded: nothing called backward on a scalar"
                        + (", and --loss-pattern matched no output line" if run.loss_source == "printed" else
                           "; pass --loss-pattern REGEX to read the printed loss instead"))
    return problems


# --- golden and comparison ----------------------------------------------------------------------

def golden_from_run(run: CommandRun, dtype: str = "fp32"):
    """The golden file's content for a command run (losses of rank 0; the rest in meta)."""
    import datetime as _dt

    from ascend_migrate.validate.golden import Golden

    rec = run.rank0 or {}
    meta = {"mode": "command", "kind": "train", "entry": None, "command": list(run.argv), "cwd": Path(run.cwd).name,
            "device": run.device, "emulated": run.emulated, "steps": run.steps_asked, "seed": run.seed,
            "threads": run.threads, "dtype": dtype, "autocast": None, "precision": None,
            "device_name": rec.get("device"), "trained_on": rec.get("device"), "world_size": rec.get("world_size"),
            "step_losses": run.step_losses(), "loss_source": run.loss_source, "params": rec.get("params"),
            "ranks": run.to_dict()["ranks"], "optimizer": rec.get("optimizer"),
            "versions": {"torch": rec.get("torch"), "python": rec.get("python")},
            "created": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
            "outputs": {}, "loss_steps": len(run.losses())}
    return Golden(meta=meta, outputs={}, losses=run.losses())


def params_comparison(golden_meta: dict[str, Any], run: CommandRun, rtol: float) -> dict[str, Any]:
    """The parameters after the last step: bit-identical (same digest), or their float64 sums
    within `rtol`."""
    g = golden_meta.get("params") or {}
    t = (run.rank0 or {}).get("params") or {}
    if not g or not t:
        return {"status": "skip", "message": "no parameter checksum on one side"}
    if g.get("count") != t.get("count") or g.get("numel") != t.get("numel"):
        return {"status": "fail", "message": f"the parameters differ in shape: golden {g.get('count')} tensors / "
                                             f"{g.get('numel')} values, run {t.get('count')} / {t.get('numel')}"}
    if g.get("digest") == t.get("digest"):
        return {"status": "pass", "message": "parameters after the last step are bit-identical to the golden",
                "bit_identical": True}
    gs, ts = float(g.get("sum") or 0.0), float(t.get("sum") or 0.0)
    diff = abs(gs - ts)
    allowed = rtol * max(abs(gs), 1e-12)
    status = "pass" if diff <= allowed else "fail"
    return {"status": status, "bit_identical": False,
            "message": f"parameter sum {ts:.10g} vs golden {gs:.10g} (|diff| {diff:.3g}, allowed {allowed:.3g})"}


def compare_command_run(golden, run: CommandRun, thresholds, dtype: Optional[str] = None):
    """Compare a finished port run with a command golden: per-step losses (every backward of a
    step, in order) and the parameters after the last step."""
    from ascend_migrate.validate.dynamic import Comparison
    from ascend_migrate.validate.metrics import compare_losses
    from ascend_migrate.validate.thresholds import normalize_dtype

    key = normalize_dtype(dtype) or normalize_dtype(golden.meta.get("dtype")) or "fp32"
    loss = compare_losses(run.losses(), golden.losses, thresholds.loss_tol(key), key)
    shape_g = [len(s) for s in golden.meta.get("step_losses") or []]
    shape_t = [len(s) for s in run.step_losses()]
    if loss.passed and shape_g and shape_g != shape_t:
        first = next((i for i, (a, b) in enumerate(zip(shape_g, shape_t)) if a != b), min(len(shape_g), len(shape_t)))
        loss.status = "fail"
        loss.message = (f"step {first} has {shape_t[first] if first < len(shape_t) else 0} backward call(s), "
                        f"the golden {shape_g[first] if first < len(shape_g) else 0}")
    target = run.to_dict()
    target["params_check"] = params_comparison(golden.meta, run, thresholds.loss_tol(key).rtol or 1e-6)
    ok = loss.passed and target["params_check"]["status"] != "fail"
    return Comparison("pass" if ok else "fail", key, golden.meta, target, [], loss)


def parse_command_option(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise CommandError(f"cannot split {text!r}: {exc}") from exc


__all__ = ["CommandError", "CommandRun", "CommandShape", "EditSites", "command_shape", "ddp_variant", "edit_sites",
           "is_emulated", "run_command"]
